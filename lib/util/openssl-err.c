// SPDX-License-Identifier: LGPL-2.1-or-later
/* OpenSSL failing, told from OpenSSL saying no (openssl-err.h). */
#include "openssl-err.h"

#include <openssl/err.h>

bool kp_openssl_failed(void)
{
	bool fatal = false;
	unsigned long e;

	while ((e = ERR_get_error()))
		fatal = fatal || ERR_FATAL_ERROR(e);
	return fatal;
}
