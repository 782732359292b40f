/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A growing byte string for the stores the caches keep (sim/sim-store.c, the splice's report
 * store): little-endian integers and counted strings appended; the first failure (no memory,
 * a value over 32 bits where 32 are written) sets @failed and every later append is dropped,
 * so a writer checks once at the end.
 */
#ifndef KP_BYTE_WRITER_H
#define KP_BYTE_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A string's length written for NULL by kp_bw_str() (and a 32-bit "none"). */
#define KP_BW_NONE UINT32_MAX

struct kp_byte_writer {
	unsigned char *p; /* malloc()ed, the owner's to free */
	size_t len, cap;
	bool failed;
};

void kp_bw_put(struct kp_byte_writer *w, const void *p, size_t len);
/*
 * @len bytes appended for the caller to fill (a record whose size is known before it is
 * written), or NULL when the writer failed or fails here (no memory).
 */
unsigned char *kp_bw_room(struct kp_byte_writer *w, size_t len);

/*
 * The small appends inline: a store is written a few bytes at a time (a graph's some 730,000
 * appends), so the room left is checked here and kp_bw_put() called only to grow.
 */
static inline void kp_bw_put8(struct kp_byte_writer *w, unsigned v)
{
	unsigned char b = (unsigned char)v;

	if (w->cap - w->len >= 1 && !w->failed)
		w->p[w->len++] = b;
	else
		kp_bw_put(w, &b, 1);
}

/* @v over UINT32_MAX (a count the store cannot hold) fails the writer. */
static inline void kp_bw_put32(struct kp_byte_writer *w, uint64_t v)
{
	unsigned char *q;

	if (v > UINT32_MAX)
		w->failed = true;
	if (w->cap - w->len < 4 || w->failed) {
		unsigned char b[4] = { (unsigned char)v, (unsigned char)(v >> 8),
				       (unsigned char)(v >> 16), (unsigned char)(v >> 24) };

		kp_bw_put(w, b, 4);
		return;
	}
	q = w->p + w->len;
	q[0] = (unsigned char)v;
	q[1] = (unsigned char)(v >> 8);
	q[2] = (unsigned char)(v >> 16);
	q[3] = (unsigned char)(v >> 24);
	w->len += 4;
}

static inline void kp_bw_put64(struct kp_byte_writer *w, uint64_t v)
{
	kp_bw_put32(w, v & UINT32_MAX);
	kp_bw_put32(w, v >> 32);
}

/*
 * Its length (32 bits), bytes and NUL (so that a decoder can lend the stored bytes as the
 * string: sim/sim-store.c), or KP_BW_NONE alone for NULL.
 */
void kp_bw_str(struct kp_byte_writer *w, const char *s);

#endif
