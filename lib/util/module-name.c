// SPDX-License-Identifier: LGPL-2.1-or-later
#include "module-name.h"

#include <stdint.h>
#include <string.h>

size_t kp_modname_copy(char *buf, size_t size, const char *name, size_t len)
{
	size_t i = 0;

	if (!size)
		return 0;
	for (; i < len && name[i] && i + 1 < size; i++)
		buf[i] = name[i] == '-' ? '_' : name[i];
	buf[i] = '\0';
	return i;
}

void kp_modname_from_path(char *buf, size_t size, const char *path, enum kp_modname_end end)
{
	const char *base = strrchr(path, '/');
	const char *ko;
	size_t len = SIZE_MAX;

	base = base ? base + 1 : path;
	switch (end) {
	case KP_MODNAME_WHOLE:
		break;
	case KP_MODNAME_KO:
		ko = strstr(base, ".ko");
		if (ko)
			len = (size_t)(ko - base);
		break;
	case KP_MODNAME_DOT:
		len = strcspn(base, ".");
		break;
	}
	kp_modname_copy(buf, size, base, len);
	/*
	 * A Module.symvers owner is a kbuild module path: its name is KBUILD_MODNAME, which
	 * scripts/Makefile.lib's name-fix-token makes with ',' as '_' too (sid 7.2 riscv64's
	 * drivers/firmware/thead,th1520-aon is the module thead_th1520_aon). kmod keeps the ','
	 * of a file name, so the depmod rules (KO, DOT) do too.
	 */
	if (end == KP_MODNAME_WHOLE)
		for (char *p = buf; size && *p; p++)
			if (*p == ',')
				*p = '_';
}

bool kp_modname_eq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (*a != *b && !((*a == '-' || *a == '_') && (*b == '-' || *b == '_')))
			return false;
	return !*a && !*b;
}
