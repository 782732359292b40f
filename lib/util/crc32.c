// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * CRC-32 (crc32.h) by libdeflate: the same polynomial, values and chaining as zlib's crc32(),
 * folded with carry-less multiplication (x86 PCLMULQDQ/VPCLMULQDQ) or the CRC32 instructions
 * (arm64) where the processor has them, chosen once at run time, else table-driven.
 */
#include "crc32.h"

#include <libdeflate.h>

uint32_t kp_crc32(uint32_t crc, const void *buf, size_t len)
{
	return libdeflate_crc32(crc, buf, len);
}
