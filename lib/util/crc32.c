// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * CRC-32 by folding (crc32.h): the buffer is folded 64 bytes at a time into four 128-bit
 * remainders with carry-less multiplications by x^(512+64) and x^512 mod P, those four into
 * one (x^(128+64), x^128), the 128 bits reduced to 64 and then to 32 bits (x^64, x^32) and a
 * Barrett reduction gives the remainder; all in the bit-reflected domain of zlib's CRC, with
 * the constants of that polynomial (Intel, "Fast CRC Computation for Generic Polynomials
 * Using PCLMULQDQ Instruction", 2009). The tail of fewer than 16 bytes, and buffers under
 * 64 bytes, go to zlib.
 */
#include "crc32.h"

#include <zlib.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define FOLD_MIN 64

/* x^(4*128+32) and x^(4*128-32) mod P, reflected: folding by four blocks */
#define K1 0x154442bd4ull
#define K2 0x1c6e41596ull
/* x^(128+32) and x^(128-32) mod P: folding by one block */
#define K3 0x1751997d0ull
#define K4 0x0ccaa009eull
/* x^64 mod P: 64 bits to 32 */
#define K5 0x163cd6124ull
/* P (reflected, with its x^32 term) and mu = floor(x^64 / P), reflected */
#define POLY 0x1db710641ull
#define MU   0x1f7011641ull

__attribute__((target("pclmul,sse4.1"))) static inline __m128i fold(__m128i x, __m128i k,
								    __m128i next)
{
	__m128i lo = _mm_clmulepi64_si128(x, k, 0x00), hi = _mm_clmulepi64_si128(x, k, 0x11);

	return _mm_xor_si128(_mm_xor_si128(lo, hi), next);
}

/* The raw (not inverted) CRC of @len bytes, @len >= 64 and a multiple of 16. */
__attribute__((target("pclmul,sse4.1"))) static uint32_t
fold_crc(uint32_t crc, const unsigned char *p, size_t len)
{
	const __m128i k12 = _mm_set_epi64x((long long)K2, (long long)K1);
	const __m128i k34 = _mm_set_epi64x((long long)K4, (long long)K3);
	const __m128i k5 = _mm_set_epi64x(0, (long long)K5);
	const __m128i pmu = _mm_set_epi64x((long long)MU, (long long)POLY);
	const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);
	__m128i x1 = _mm_loadu_si128((const __m128i *)p),
		x2 = _mm_loadu_si128((const __m128i *)(p + 16)),
		x3 = _mm_loadu_si128((const __m128i *)(p + 32)),
		x4 = _mm_loadu_si128((const __m128i *)(p + 48)), t;

	x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)crc));
	p += 64;
	len -= 64;
	for (; len >= 64; p += 64, len -= 64) {
		x1 = fold(x1, k12, _mm_loadu_si128((const __m128i *)p));
		x2 = fold(x2, k12, _mm_loadu_si128((const __m128i *)(p + 16)));
		x3 = fold(x3, k12, _mm_loadu_si128((const __m128i *)(p + 32)));
		x4 = fold(x4, k12, _mm_loadu_si128((const __m128i *)(p + 48)));
	}
	x1 = fold(x1, k34, x2);
	x1 = fold(x1, k34, x3);
	x1 = fold(x1, k34, x4);
	for (; len >= 16; p += 16, len -= 16)
		x1 = fold(x1, k34, _mm_loadu_si128((const __m128i *)p));
	/* 128 bits to 64 */
	t = _mm_srli_si128(x1, 8);
	x1 = _mm_xor_si128(_mm_clmulepi64_si128(x1, k34, 0x10), t);
	/* 64 bits to 32 */
	t = _mm_srli_si128(x1, 4);
	x1 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x1, mask32), k5, 0x00), t);
	/* Barrett reduction */
	t = x1;
	x1 = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), pmu, 0x10);
	x1 = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), pmu, 0x00);
	x1 = _mm_xor_si128(x1, t);
	return (uint32_t)_mm_extract_epi32(x1, 1);
}

static int have_fold(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}

uint32_t kp_crc32(uint32_t crc, const void *buf, size_t len)
{
	/* a constant of the machine: computed once, racing threads compute the same value */
	static int fast = -1;
	const unsigned char *p = buf;
	int f = __atomic_load_n(&fast, __ATOMIC_RELAXED);
	size_t n;

	if (f < 0) {
		f = have_fold();
		__atomic_store_n(&fast, f, __ATOMIC_RELAXED);
	}
	if (!f || len < FOLD_MIN)
		return (uint32_t)crc32_z(crc, p, len);
	n = len & ~(size_t)15;
	crc = ~fold_crc(~crc, p, n);
	return (uint32_t)crc32_z(crc, p + n, len - n);
}

#else

uint32_t kp_crc32(uint32_t crc, const void *buf, size_t len)
{
	return (uint32_t)crc32_z(crc, buf, len);
}

#endif
