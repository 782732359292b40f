/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A struct kp_module as bytes and back, for the facts cache (facts-cache.c): every field
 * the later stages read, little-endian whatever the host, no pointer or struct layout in
 * the bytes. The path, the arena and the name pool are the reader's, not the facts'.
 */
#ifndef KP_FACTS_SERIAL_H
#define KP_FACTS_SERIAL_H

#include <stddef.h>

#include "read/module.h"

/* A growing output buffer; @oom once an allocation failed (the bytes are then useless). */
struct kp_facts_buf {
	unsigned char *data;
	size_t len;
	size_t cap;
	int oom;
	size_t start;	    /* where this module's payload begins in @data */
	uint64_t arena;	    /* arena bytes the strings and blobs take (symbol names aside) */
	uint64_t sym_bytes; /* the same for symbol names, which a name pool may hold */
	/* strings already written, by address: a string shared in the module is shared again */
	const char **tab;
	uint32_t *tab_idx;
	size_t tab_cap;	  /* slots in use for this module (a power of two) */
	size_t tab_alloc; /* slots allocated: kept from module to module */
	uint32_t nstrings;
};

/* Appends @m's facts to @out (after what it holds); 0, or -1 when out of memory. */
int kp_facts_encode(const struct kp_module *m, struct kp_facts_buf *out);
/*
 * Fills the empty module @m (path set, arena empty) from @len bytes at @p written by
 * kp_facts_encode() of the same format version. Symbol names found in @names are pointed
 * to. 0, or -1 when the bytes do not decode exactly (truncated, trailing bytes, a count
 * past the end, a string without its NUL) or memory runs out: @m must then be freed.
 */
int kp_facts_decode(struct kp_module *m, const unsigned char *p, size_t len,
		    const struct kp_name_pool *names);

/* Empties @b (its buffers freed, @b zeroed); @b itself stays the caller's. */
void kp_facts_buf_release(struct kp_facts_buf *b);

#endif
