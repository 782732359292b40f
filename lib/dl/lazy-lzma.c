// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * liblzma loaded on first use (lazy-lib.h): the stubs of the functions the program calls, with
 * lzma.h's prototypes.
 */
#include "lazy-stubs-internal.h"

#include <lzma.h>

#define KP_LAZY_FNS(F, V, Z, VZ) \
	F(lzma_ret, lzma_code, (lzma_stream *a, lzma_action b), (a, b)) \
	F(lzma_ret, lzma_easy_buffer_encode, (uint32_t a, lzma_check b, const lzma_allocator *c, \
		const uint8_t *d, size_t e, uint8_t *f, size_t *g, size_t h), (a, b, c, d, e, f, \
		g, h)) \
	VZ(lzma_end, (lzma_stream *a), (a)) \
	F(lzma_ret, lzma_index_buffer_decode, (lzma_index **a, uint64_t *b, \
		const lzma_allocator *c, const uint8_t *d, size_t *e, size_t f), (a, b, c, d, e, \
		f)) \
	VZ(lzma_index_end, (lzma_index *a, const lzma_allocator *b), (a, b)) \
	F(lzma_vli, lzma_index_uncompressed_size, (const lzma_index *a), (a)) \
	F(size_t, lzma_stream_buffer_bound, (size_t a), (a)) \
	F(lzma_ret, lzma_stream_decoder, (lzma_stream *a, uint64_t b, uint32_t c), (a, b, c)) \
	F(lzma_ret, lzma_stream_footer_decode, (lzma_stream_flags *a, const uint8_t *b), (a, b))

KP_LAZY_TABLE;
KP_LAZY_LIB(liblzma, "liblzma", KP_LIBLZMA_SONAME, NULL)
KP_LAZY_STUBS
