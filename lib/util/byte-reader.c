// SPDX-License-Identifier: LGPL-2.1-or-later
/* Bounds-checked little-endian reads of the caches' stores (byte-reader.h). */
#include "byte-reader.h"
#include "util.h"

const char *kp_br_bytes(struct kp_byte_reader *r, size_t *len, const char *what)
{
	*len = kp_br_get32(r, what);
	return (const char *)kp_br_take(r, *len, what);
}
