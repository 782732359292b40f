/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * CRC-32 (the gzip/zlib polynomial, zlib's crc32() values and chaining) by libdeflate, which
 * uses the processor's carry-less multiply or CRC instructions. The caches check every entry
 * they use by a CRC-32 (a facts pack entry: 3.4 KB, 13.6 MB for a tree): zlib's table-driven
 * crc32() spent 6 % of a warm check there.
 */
#ifndef KP_CRC32_H
#define KP_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* What zlib's crc32(@crc, @buf, @len) returns. */
uint32_t kp_crc32(uint32_t crc, const void *buf, size_t len);

#endif
