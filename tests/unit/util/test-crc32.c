// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * CRC-32 by libdeflate (lib/util/crc32.c): zlib's crc32() values for every length from 0 to
 * 1,199 bytes at each of 16 alignments, chained from another CRC, over 1 MiB, and the known
 * check value of "123456789".
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "tap.h"
#include "util/crc32.h"

int main(void)
{
	struct tap t = { 0 };
	size_t big = (size_t)1 << 20, wrong = 0, first = SIZE_MAX;
	unsigned char *b = malloc(big + 64);
	uint32_t seed = 0x12345678, z, k;

	if (!b)
		return 1;
	for (size_t i = 0; i < big + 64; i++) {
		seed = seed * 1103515245u + 12345u;
		b[i] = (unsigned char)(seed >> 16);
	}
	tap_is_int(&t, kp_crc32(0, "123456789", 9), 0xcbf43926u, "the check value");
	for (size_t len = 0; len < 1200; len++)
		for (size_t off = 0; off < 16; off++) {
			uint32_t from = (uint32_t)(len * 2654435761u);

			if (kp_crc32(from, b + off, len) != (uint32_t)crc32_z(from, b + off, len)) {
				wrong++;
				if (first == SIZE_MAX)
					first = len;
			}
		}
	tap_ok(&t, wrong == 0,
	       "0 to 1,199 bytes at 16 alignments, chained: zlib's (%zu wrong, first at %zu bytes)",
	       wrong, first == SIZE_MAX ? 0 : first);
	z = (uint32_t)crc32_z(0, b + 3, big);
	k = kp_crc32(0, b + 3, big);
	tap_ok(&t, z == k, "1 MiB: zlib's 0x%08x (got 0x%08x)", z, k);
	k = kp_crc32(kp_crc32(0, b, 1000), b + 1000, big - 1000);
	tap_ok(&t, k == (uint32_t)crc32_z(0, b, big), "1 MiB in two calls: the same");
	free(b);
	return tap_done(&t);
}
