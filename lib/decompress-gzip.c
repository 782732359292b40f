// SPDX-License-Identifier: LGPL-2.1-or-later
/* .ko.gz and symvers-<ver>.gz: zlib inflate in gzip mode, members concatenated. */
#include <zlib.h>

#include "bytes.h"

size_t kp_gzip_size_hint(const unsigned char *in, size_t len)
{
	/* ISIZE: the last member's size modulo 2^32, little-endian. */
	if (len < 18)
		return 0;
	return (size_t)in[len - 4] | (size_t)in[len - 3] << 8 | (size_t)in[len - 2] << 16 |
	       (size_t)in[len - 1] << 24;
}

int kp_decompress_gzip(const unsigned char *in, size_t len, struct kp_outbuf *o, struct kp_err *err)
{
	z_stream s = { 0 };
	int r, ret = 0;

	if (inflateInit2(&s, 16 + MAX_WBITS) != Z_OK)
		return kp_err_set(err, "gzip: cannot initialise zlib");
	s.next_in = (unsigned char *)in;
	/* zlib counts in uInt: feed huge inputs in slices. */
	for (;;) {
		size_t consumed = (size_t)(s.next_in - in);
		size_t left = len - consumed;

		if (s.avail_in == 0)
			s.avail_in = left > 0x40000000u ? 0x40000000u : (uInt)left;
		if (o->cap == o->len && kp_outbuf_reserve(o, o->cap, err) < 0) {
			ret = -1;
			break;
		}
		s.next_out = o->data + o->len;
		s.avail_out =
			(o->cap - o->len) > 0x40000000u ? 0x40000000u : (uInt)(o->cap - o->len);
		{
			uInt before = s.avail_out;

			r = inflate(&s, Z_NO_FLUSH);
			o->len += before - s.avail_out;
		}
		if (r == Z_STREAM_END) {
			consumed = (size_t)(s.next_in - in);
			/* Another gzip member follows (as `cat a.gz b.gz`): keep going. */
			if (consumed + 2 <= len && in[consumed] == 0x1f &&
			    in[consumed + 1] == 0x8b) {
				if (inflateReset(&s) != Z_OK) {
					ret = kp_err_set(err, "gzip: zlib reset failed");
					break;
				}
				continue;
			}
			break;
		}
		if (r == Z_BUF_ERROR && s.avail_in == 0 && (size_t)(s.next_in - in) == len) {
			ret = kp_err_set(err, "gzip: truncated gzip stream");
			break;
		}
		if (r != Z_OK && r != Z_BUF_ERROR) {
			ret = kp_err_set(err, "gzip: %s", s.msg ? s.msg : "corrupt gzip data");
			break;
		}
	}
	inflateEnd(&s);
	return ret;
}
