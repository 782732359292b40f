// SPDX-License-Identifier: LGPL-2.1-or-later
/* include/linux/license.h: license_is_gpl_compatible() (identical in v4.14 … v6.12). */
#include "license.h"

#include <string.h>

static const char *const gpl_compatible[] = {
	"GPL",		"GPL v2",	"GPL and additional rights",
	"Dual BSD/GPL", "Dual MIT/GPL", "Dual MPL/GPL",
};

bool kp_license_is_gpl_compatible(const char *license)
{
	if (!license)
		return false;
	for (size_t i = 0; i < sizeof(gpl_compatible) / sizeof(gpl_compatible[0]); i++)
		if (!strcmp(license, gpl_compatible[i]))
			return true;
	return false;
}
