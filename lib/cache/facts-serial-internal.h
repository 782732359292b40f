/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The facts cache's payload: struct kp_module field by field, in struct order (module.h).
 * Integers little-endian (u8, u32, u64); a string is u32 length + 1 then its bytes (0: NULL;
 * 0xffffffff then a u32 index: the same string as the index-th one written, which the
 * module shared: a version's name is its import's, the license is a modinfo value); a blob
 * is u32 length then its bytes. Array counts come first so that decoding sizes the
 * arena once. Any change here, or in what a reader in lib/read/ puts into a struct
 * kp_module, bumps KP_FACTS_FORMAT (facts-cache.h).
 *
 * facts-serial-encode.c writes it, facts-serial-decode.c reads it back with the readers below
 * and facts-serial-arena.c's. Internal to lib/cache/facts-serial-*.c.
 */
#ifndef KP_FACTS_SERIAL_INTERNAL_H
#define KP_FACTS_SERIAL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "read/module.h"

#define NO_STRING  0u
#define STRING_REF 0xffffffffu

/* Decoding: any read past the end, or memory running out, sets @bad; callers check once. */
struct rd {
	struct kp_module *m;
	const struct kp_name_pool *names;
	const unsigned char *p;
	size_t len, off;
	int bad;
	const char **strs; /* the literal strings decoded so far, for references */
	uint64_t *hashes;  /* beside each: its kp_hash_string() | HASHED, or 0 when not computed */
	uint32_t nstrs, maxstrs;
};

#define HASHED ((uint64_t)1 << 32)

static inline const unsigned char *take(struct rd *r, size_t n)
{
	const unsigned char *p;

	if (r->bad || n > r->len - r->off) {
		r->bad = 1;
		return NULL;
	}
	p = r->p + r->off;
	r->off += n;
	return p;
}

static inline unsigned get_u8(struct rd *r)
{
	const unsigned char *p = take(r, 1);

	return p ? *p : 0;
}

static inline bool get_bool(struct rd *r)
{
	unsigned v = get_u8(r);

	if (v > 1)
		r->bad = 1;
	return v == 1;
}

static inline uint32_t get_u32(struct rd *r)
{
	const unsigned char *p = take(r, 4);

	return p ? kp_load32(p, false) : 0;
}

static inline uint64_t get_u64(struct rd *r)
{
	const unsigned char *p = take(r, 8);

	return p ? kp_load64(p, false) : 0;
}

/* An enum stored as u8, checked against its last value. */
static inline unsigned get_enum(struct rd *r, unsigned last)
{
	unsigned v = get_u8(r);

	if (v > last)
		r->bad = 1;
	return v;
}

/*
 * A string; @sym: a symbol name, shared with the name pool when it holds it; @hash (NULL: not
 * wanted): its kp_hash_string(), computed once for the pool and the caller.
 */
const char *kp_facts_get_string(struct rd *r, bool sym, uint32_t *hash);

static inline const char *get_str(struct rd *r)
{
	return kp_facts_get_string(r, false, NULL);
}

/* An import's or a version's name and its hash (struct kp_import.hash, kp_version.hash). */
static inline const char *get_hashed_sym(struct rd *r, uint32_t *hash)
{
	*hash = 0;
	return kp_facts_get_string(r, true, hash);
}

/* A blob copied into the arena, its length into @len (0: none, NULL returned). */
const unsigned char *kp_facts_get_blob(struct rd *r, size_t *len);

/* @n elements of @elem bytes in the arena; @n is bounded by what the bytes can hold. */
void *kp_facts_get_array(struct rd *r, size_t n, size_t elem);

#endif
