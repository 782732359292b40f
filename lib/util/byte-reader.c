// SPDX-License-Identifier: LGPL-2.1-or-later
/* Bounds-checked little-endian reads of the caches' stores (byte-reader.h). */
#include "byte-reader.h"
#include "util.h"

const unsigned char *kp_br_take(struct kp_byte_reader *r, size_t n, const char *what)
{
	const unsigned char *q;

	if (r->bad)
		return NULL;
	if (r->len - r->off < n) {
		r->bad = what;
		return NULL;
	}
	q = r->p + r->off;
	r->off += n;
	return q;
}

unsigned kp_br_get8(struct kp_byte_reader *r, const char *what)
{
	const unsigned char *q = kp_br_take(r, 1, what);

	return q ? *q : 0;
}

uint32_t kp_br_get32(struct kp_byte_reader *r, const char *what)
{
	const unsigned char *q = kp_br_take(r, 4, what);

	return q ? kp_load32(q, false) : 0;
}

uint64_t kp_br_get64(struct kp_byte_reader *r, const char *what)
{
	const unsigned char *q = kp_br_take(r, 8, what);

	return q ? kp_load64(q, false) : 0;
}

const char *kp_br_bytes(struct kp_byte_reader *r, size_t *len, const char *what)
{
	*len = kp_br_get32(r, what);
	return (const char *)kp_br_take(r, *len, what);
}
