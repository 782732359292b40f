// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * zlib loaded on first use (lazy-lib.h): the stubs of the functions the program calls, with
 * zlib.h's prototypes. inflateInit2() and deflateInit2() are inflateInit2_() and deflateInit2_().
 */
#include "lazy-stubs-internal.h"

#include <zlib.h>

#define KP_LAZY_FNS(F, V, Z, VZ) \
	F(uLong, crc32_combine, (uLong a, uLong b, off_t c), (a, b, c)) \
	F(uLong, crc32_z, (uLong a, const Bytef *b, z_size_t c), (a, b, c)) \
	F(int, deflate, (z_streamp a, int b), (a, b)) \
	F(int, deflateEnd, (z_streamp a), (a)) \
	F(int, deflateInit2_, (z_streamp a, int b, int c, int d, int e, int f, const char *g, \
		int h), (a, b, c, d, e, f, g, h)) \
	F(int, inflate, (z_streamp a, int b), (a, b)) \
	F(int, inflateEnd, (z_streamp a), (a)) \
	F(int, inflateInit2_, (z_streamp a, int b, const char *c, int d), (a, b, c, d)) \
	F(int, inflateReset, (z_streamp a), (a))

KP_LAZY_TABLE;
KP_LAZY_LIB(libz, "libz", KP_LIBZ_SONAME, NULL)
KP_LAZY_STUBS
