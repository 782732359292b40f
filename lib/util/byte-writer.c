// SPDX-License-Identifier: LGPL-2.1-or-later
#include "byte-writer.h"

#include <string.h>

#include "util.h"

void kp_bw_put(struct kp_byte_writer *w, const void *p, size_t len)
{
	/* kp_grow() only when full: a store is written a few bytes at a time */
	if (w->failed || (len > w->cap - w->len && kp_grow(&w->p, &w->cap, w->len + len, 1) < 0)) {
		w->failed = true;
		return;
	}
	if (len)
		memcpy(w->p + w->len, p, len);
	w->len += len;
}

void kp_bw_put8(struct kp_byte_writer *w, unsigned v)
{
	unsigned char b = (unsigned char)v;

	kp_bw_put(w, &b, 1);
}

void kp_bw_put32(struct kp_byte_writer *w, uint64_t v)
{
	unsigned char b[4];

	if (v > UINT32_MAX)
		w->failed = true;
	kp_store32(b, (uint32_t)v);
	kp_bw_put(w, b, 4);
}

void kp_bw_put64(struct kp_byte_writer *w, uint64_t v)
{
	unsigned char b[8];

	kp_store64(b, v);
	kp_bw_put(w, b, 8);
}

void kp_bw_str(struct kp_byte_writer *w, const char *s)
{
	size_t len = s ? strlen(s) : 0;

	if (!s) {
		kp_bw_put32(w, KP_BW_NONE);
		return;
	}
	kp_bw_put32(w, len >= KP_BW_NONE ? UINT64_MAX : len);
	kp_bw_put(w, s, len);
}
