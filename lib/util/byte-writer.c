// SPDX-License-Identifier: LGPL-2.1-or-later
#include "byte-writer.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Room for @need more bytes: the capacity doubled (not zeroed: every byte is written). */
static int grow(struct kp_byte_writer *w, size_t need)
{
	size_t ncap = w->cap ? w->cap : 256;
	unsigned char *p;

	if (need > SIZE_MAX - w->len)
		return -1;
	while (ncap - w->len < need) {
		if (ncap > SIZE_MAX / 2)
			return -1;
		ncap *= 2;
	}
	p = realloc(w->p, ncap);
	if (!p)
		return -1;
	w->p = p;
	w->cap = ncap;
	return 0;
}

void kp_bw_put(struct kp_byte_writer *w, const void *p, size_t len)
{
	if (w->failed || (len > w->cap - w->len && grow(w, len) < 0)) {
		w->failed = true;
		return;
	}
	if (len)
		memcpy(w->p + w->len, p, len);
	w->len += len;
}

unsigned char *kp_bw_room(struct kp_byte_writer *w, size_t len)
{
	unsigned char *q;

	if (w->failed || (len > w->cap - w->len && grow(w, len) < 0)) {
		w->failed = true;
		return NULL;
	}
	q = w->p + w->len;
	w->len += len;
	return q;
}

void kp_bw_str(struct kp_byte_writer *w, const char *s)
{
	size_t len;
	unsigned char *q;

	if (!s) {
		kp_bw_put32(w, KP_BW_NONE);
		return;
	}
	len = strlen(s);
	if (len >= KP_BW_NONE) {
		w->failed = true;
		return;
	}
	/* the length, the bytes and the NUL in one append: a store holds some 50,000 strings */
	q = kp_bw_room(w, 4 + len + 1);
	if (!q)
		return;
	q[0] = (unsigned char)len;
	q[1] = (unsigned char)(len >> 8);
	q[2] = (unsigned char)(len >> 16);
	q[3] = (unsigned char)(len >> 24);
	memcpy(q + 4, s, len + 1);
}
