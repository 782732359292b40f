/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading back what byte-writer.h wrote, trusting nothing: every read is bounds-checked, the
 * first one past the end sets @bad (what was being read) and every later read gives NULL or
 * zeros, so a decoder checks once at the end (sim/sim-store.c, the splice's report store).
 */
#ifndef KP_BYTE_READER_H
#define KP_BYTE_READER_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

struct kp_byte_reader {
	const unsigned char *p; /* borrowed */
	size_t len, off;
	const char *bad; /* NULL while every read was in bounds */
};

/*
 * The next @n bytes (borrowed), or NULL with @bad set to @what when fewer are left. Inline
 * with the fixed-size reads below: a stored graph is some 800,000 of them (graph-store.c).
 */
static inline const unsigned char *kp_br_take(struct kp_byte_reader *r, size_t n, const char *what)
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

static inline unsigned kp_br_get8(struct kp_byte_reader *r, const char *what)
{
	const unsigned char *q = kp_br_take(r, 1, what);

	return q ? *q : 0;
}

static inline uint32_t kp_br_get32(struct kp_byte_reader *r, const char *what)
{
	const unsigned char *q = kp_br_take(r, 4, what);

	return q ? kp_load32(q, false) : 0;
}

static inline uint64_t kp_br_get64(struct kp_byte_reader *r, const char *what)
{
	const unsigned char *q = kp_br_take(r, 8, what);

	return q ? kp_load64(q, false) : 0;
}
/* A counted byte string (its 32-bit length, then the bytes): borrowed, its length in *@len. */
const char *kp_br_bytes(struct kp_byte_reader *r, size_t *len, const char *what);

#endif
