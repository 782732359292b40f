// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * .ko.gz and symvers-<ver>.gz: zlib inflate in gzip mode, members concatenated (the first
 * only with kp_outbuf's @first); what follows the last member is ignored.
 */
#include <stdlib.h>
#include <zlib.h>

#include "decompress.h"

size_t kp_gzip_size_hint(const unsigned char *in, size_t len)
{
	/* ISIZE: the last member's size modulo 2^32, little-endian. */
	if (len < 18)
		return 0;
	return (size_t)in[len - 4] | (size_t)in[len - 3] << 8 | (size_t)in[len - 2] << 16 |
	       (size_t)in[len - 1] << 24;
}

void kp_gzip_state_free(void *state)
{
	if (state) {
		inflateEnd(state);
		free(state);
	}
}

int kp_decompress_gzip(const unsigned char *in, size_t len, struct kp_outbuf *o, void **state,
		       struct kp_err *err)
{
	z_stream one = { 0 }, *sp = &one;
	int r, ret = 0;

	if (state && *state) {
		/* Kept by the reading thread: reset keeps the window allocation. */
		sp = *state;
		if (inflateReset(sp) != Z_OK)
			return kp_err_set(err, "gzip: zlib reset failed");
	} else {
		if (state) {
			sp = calloc(1, sizeof(*sp));
			if (!sp)
				return kp_err_set(err, "gzip: out of memory");
		}
		if (inflateInit2(sp, 16 + MAX_WBITS) != Z_OK) {
			if (sp != &one)
				free(sp);
			return kp_err_set(err, "gzip: cannot initialise zlib");
		}
		if (state)
			*state = sp;
	}
	sp->next_in = (unsigned char *)in;
	sp->avail_in = 0; /* a kept stream may hold the last file's leftover count */
	/* zlib counts in uInt: feed huge inputs in slices. */
	for (;;) {
		size_t consumed = (size_t)(sp->next_in - in);
		size_t left = len - consumed;

		if (sp->avail_in == 0)
			sp->avail_in = left > 0x40000000u ? 0x40000000u : (uInt)left;
		if (o->cap == o->len && kp_outbuf_reserve(o, o->cap, err) < 0) {
			ret = -1;
			break;
		}
		sp->next_out = o->data + o->len;
		sp->avail_out =
			(o->cap - o->len) > 0x40000000u ? 0x40000000u : (uInt)(o->cap - o->len);
		{
			uInt before = sp->avail_out;

			r = inflate(sp, Z_NO_FLUSH);
			o->len += before - sp->avail_out;
		}
		if (r == Z_STREAM_END) {
			consumed = (size_t)(sp->next_in - in);
			/* Another gzip member follows (as `cat a.gz b.gz`): keep going. */
			if (!o->first && consumed + 2 <= len && in[consumed] == 0x1f &&
			    in[consumed + 1] == 0x8b) {
				if (inflateReset(sp) != Z_OK) {
					ret = kp_err_set(err, "gzip: zlib reset failed");
					break;
				}
				continue;
			}
			break;
		}
		if (r == Z_BUF_ERROR && sp->avail_in == 0 && (size_t)(sp->next_in - in) == len) {
			o->cut = true;
			ret = kp_err_set(err, "gzip: truncated gzip stream");
			break;
		}
		if (r != Z_OK && r != Z_BUF_ERROR) {
			ret = kp_err_set(err, "gzip: %s", sp->msg ? sp->msg : "corrupt gzip data");
			break;
		}
	}
	if (!state)
		inflateEnd(&one);
	return ret;
}
