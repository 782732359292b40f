/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A string-keyed multimap (open hashing) used to find who exports a symbol. */
#ifndef KP_SYMBOL_INDEX_H
#define KP_SYMBOL_INDEX_H

#include <stddef.h>
#include <stdint.h>

struct kp_symbol_index_entry {
	const char *key; /* borrowed */
	void *value;
	struct kp_symbol_index_entry *next; /* next entry with the same key hash bucket */
	uint32_t hash;			    /* kp_hash_string(key): compared before the key */
};

struct kp_symbol_index {
	struct kp_symbol_index_entry **buckets;
	struct kp_symbol_index_entry **tails; /* NULL, or each bucket's last entry (long chains) */
	size_t nbuckets;
	struct kp_symbol_index_entry *pool;
	size_t n;
	size_t cap;
};

/* @expected: number of entries to size the table for. */
int kp_symbol_index_init(struct kp_symbol_index *idx, size_t expected);
/* Adds (@key, @value); @key must outlive the index. Entries keep insertion order per key. */
int kp_symbol_index_add(struct kp_symbol_index *idx, const char *key, void *value);
/* The same with @hash == kp_hash_string(@key), computed once by the caller. */
int kp_symbol_index_add_hashed(struct kp_symbol_index *idx, const char *key, uint32_t hash,
			       void *value);
/* First entry for @key (iterate with kp_symbol_index_next), or NULL. */
const struct kp_symbol_index_entry *kp_symbol_index_find(const struct kp_symbol_index *idx,
							 const char *key);
/* The same with @hash == kp_hash_string(@key), computed once by the caller. */
const struct kp_symbol_index_entry *kp_symbol_index_find_hashed(const struct kp_symbol_index *idx,
								const char *key, uint32_t hash);
const struct kp_symbol_index_entry *kp_symbol_index_next(const struct kp_symbol_index_entry *e);
void kp_symbol_index_release(struct kp_symbol_index *idx);

#endif
