/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Compressed inputs the unit tests build, one place for each format's settings: a gzip
 * member (zlib in gzip mode, level 6), as a .ko.gz or Debian's arm64 Image.gz.
 */
#ifndef KP_TEST_COMPRESS_H
#define KP_TEST_COMPRESS_H

#include <stddef.h>
#include <stdlib.h>
#include <zlib.h>

/* @raw (@len bytes) as one gzip member into @z (@cap bytes): its length; exits 99 on failure. */
static inline size_t tu_gzip(const unsigned char *raw, size_t len, unsigned char *z, size_t cap)
{
	z_stream zs = { 0 };
	size_t n;

	if (deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		exit(99);
	zs.next_in = (unsigned char *)raw;
	zs.avail_in = (uInt)len;
	zs.next_out = z;
	zs.avail_out = (uInt)cap;
	if (deflate(&zs, Z_FINISH) != Z_STREAM_END)
		exit(99);
	n = zs.total_out;
	deflateEnd(&zs);
	return n;
}

#endif
