/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A growing byte string for the stores the caches keep (sim/sim-store.c, the splice's report
 * store): little-endian integers and counted strings appended; the first failure (no memory,
 * a value over 32 bits where 32 are written) sets @failed and every later append is dropped,
 * so a writer checks once at the end.
 */
#ifndef KP_BYTE_WRITER_H
#define KP_BYTE_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A string's length written for NULL by kp_bw_str() (and a 32-bit "none"). */
#define KP_BW_NONE UINT32_MAX

struct kp_byte_writer {
	unsigned char *p; /* malloc()ed, the owner's to free */
	size_t len, cap;
	bool failed;
};

void kp_bw_put(struct kp_byte_writer *w, const void *p, size_t len);
void kp_bw_put8(struct kp_byte_writer *w, unsigned v);
/* @v over UINT32_MAX (a count the store cannot hold) fails the writer. */
void kp_bw_put32(struct kp_byte_writer *w, uint64_t v);
void kp_bw_put64(struct kp_byte_writer *w, uint64_t v);
/* Its length (32 bits) and bytes, or KP_BW_NONE alone for NULL. */
void kp_bw_str(struct kp_byte_writer *w, const char *s);

#endif
