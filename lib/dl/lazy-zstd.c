// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libzstd loaded on first use (lazy-lib.h): the stubs of the functions the program calls, with
 * zstd.h's and zstd_errors.h's prototypes (their default visibility taken off: a stub is hidden).
 */

/* zstd.h would declare its functions visible; the stubs are hidden */
#define ZSTDLIB_VISIBILITY
#define ZSTDERRORLIB_VISIBILITY
#include "lazy-stubs-internal.h"

#include <zstd.h>
#include <zstd_errors.h>

#define KP_LAZY_FNS(F, V, Z, VZ) \
	F(size_t, ZSTD_CCtx_reset, (ZSTD_CCtx *a, ZSTD_ResetDirective b), (a, b)) \
	F(size_t, ZSTD_CCtx_setParameter, (ZSTD_CCtx *a, ZSTD_cParameter b, int c), (a, b, c)) \
	F(size_t, ZSTD_compress, (void *a, size_t b, const void *c, size_t d, int e), (a, b, c, \
		d, e)) \
	F(size_t, ZSTD_compressBound, (size_t a), (a)) \
	F(size_t, ZSTD_compressStream2, (ZSTD_CCtx *a, ZSTD_outBuffer *b, ZSTD_inBuffer *c, \
		ZSTD_EndDirective d), (a, b, c, d)) \
	F(ZSTD_CCtx *, ZSTD_createCCtx, (void), ()) \
	F(ZSTD_DCtx *, ZSTD_createDCtx, (void), ()) \
	F(size_t, ZSTD_DCtx_reset, (ZSTD_DCtx *a, ZSTD_ResetDirective b), (a, b)) \
	F(size_t, ZSTD_DCtx_setParameter, (ZSTD_DCtx *a, ZSTD_dParameter b, int c), (a, b, c)) \
	F(size_t, ZSTD_decompressStream, (ZSTD_DStream *a, ZSTD_outBuffer *b, ZSTD_inBuffer *c), \
		(a, b, c)) \
	F(size_t, ZSTD_DStreamInSize, (void), ()) \
	Z(size_t, ZSTD_freeCCtx, (ZSTD_CCtx *a), (a), 0) \
	Z(size_t, ZSTD_freeDCtx, (ZSTD_DCtx *a), (a), 0) \
	F(ZSTD_ErrorCode, ZSTD_getErrorCode, (size_t a), (a)) \
	F(const char *, ZSTD_getErrorName, (size_t a), (a)) \
	F(unsigned long long, ZSTD_getFrameContentSize, (const void *a, size_t b), (a, b)) \
	F(unsigned int, ZSTD_isError, (size_t a), (a)) \
	F(unsigned int, ZSTD_versionNumber, (void), ())

KP_LAZY_TABLE;
KP_LAZY_LIB(libzstd, "libzstd", KP_LIBZSTD_SONAME, NULL)
KP_LAZY_STUBS
