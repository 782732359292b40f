// SPDX-License-Identifier: LGPL-2.1-or-later
#include "symbol-index.h"

#include <stdlib.h>
#include <string.h>

#include "util/util.h"

int kp_symbol_index_init(struct kp_symbol_index *idx, size_t expected)
{
	size_t nb = 64;

	memset(idx, 0, sizeof(*idx));
	while (nb < expected * 2 && nb < ((size_t)1 << 30))
		nb *= 2;
	idx->buckets = kp_calloc(nb, sizeof(*idx->buckets));
	if (!idx->buckets)
		return -1;
	idx->nbuckets = nb;
	/* Entries are chained through pointers into pool: grow it only before the first add. */
	idx->cap = expected ? expected : 16;
	idx->pool = kp_calloc(idx->cap, sizeof(*idx->pool));
	return idx->pool ? 0 : -1;
}

static int rehash_pool(struct kp_symbol_index *idx)
{
	struct kp_symbol_index_entry *old = idx->pool;
	size_t ncap = idx->cap * 2;
	struct kp_symbol_index_entry *np = kp_calloc(ncap, sizeof(*np));

	if (!np)
		return -1;
	memcpy(np, old, idx->n * sizeof(*np));
	memset(idx->buckets, 0, idx->nbuckets * sizeof(*idx->buckets));
	if (idx->tails)
		memset(idx->tails, 0, idx->nbuckets * sizeof(*idx->tails));
	idx->pool = np;
	idx->cap = ncap;
	/* Rebuild chains; inserting in reverse keeps per-key insertion order. */
	for (size_t i = idx->n; i-- > 0;) {
		size_t b = np[i].hash & (idx->nbuckets - 1);

		if (!idx->buckets[b] && idx->tails)
			idx->tails[b] = &np[i];
		np[i].next = idx->buckets[b];
		idx->buckets[b] = &np[i];
	}
	free(old);
	return 0;
}

/*
 * Buckets are short in practice: appends walk them. A bucket longer than this (a key
 * repeated thousands of times: duplicate lines in a hostile file) switches the index to
 * a tail pointer per bucket, so that n additions never cost n^2.
 */
#define TAILS_AFTER 32

static int build_tails(struct kp_symbol_index *idx)
{
	idx->tails = kp_calloc(idx->nbuckets, sizeof(*idx->tails));
	if (!idx->tails)
		return -1;
	for (size_t b = 0; b < idx->nbuckets; b++)
		for (struct kp_symbol_index_entry *x = idx->buckets[b]; x; x = x->next)
			idx->tails[b] = x;
	return 0;
}

int kp_symbol_index_add(struct kp_symbol_index *idx, const char *key, void *value)
{
	return kp_symbol_index_add_hashed(idx, key, kp_hash_string(key), value);
}

int kp_symbol_index_add_hashed(struct kp_symbol_index *idx, const char *key, uint32_t hash,
			       void *value)
{
	struct kp_symbol_index_entry *e;
	size_t b;

	if (idx->n == idx->cap && rehash_pool(idx) < 0)
		return -1;
	e = &idx->pool[idx->n++];
	e->key = key;
	e->value = value;
	e->next = NULL;
	e->hash = hash;
	b = e->hash & (idx->nbuckets - 1);
	/* Append at the tail of the bucket so entries of one key stay in insertion order. */
	if (!idx->tails) {
		struct kp_symbol_index_entry **pp = &idx->buckets[b];
		unsigned steps = 0;

		for (; *pp && steps < TAILS_AFTER; pp = &(*pp)->next)
			steps++;
		if (!*pp) {
			*pp = e;
			return 0;
		}
		/* a long chain (one key added many times): tails from now on, O(1) per add */
		if (build_tails(idx) < 0)
			return -1;
	}
	if (idx->tails[b])
		idx->tails[b]->next = e;
	else
		idx->buckets[b] = e;
	idx->tails[b] = e;
	return 0;
}

/* Names are mostly shared (the kernel base's copies): the same pointer is the same key. */
static bool same_key(const struct kp_symbol_index_entry *e, const char *key, uint32_t hash)
{
	return e->hash == hash && (e->key == key || !strcmp(e->key, key));
}

const struct kp_symbol_index_entry *kp_symbol_index_find_hashed(const struct kp_symbol_index *idx,
								const char *key, uint32_t hash)
{
	const struct kp_symbol_index_entry *e;

	if (!idx->nbuckets)
		return NULL;
	for (e = idx->buckets[hash & (idx->nbuckets - 1)]; e; e = e->next)
		if (same_key(e, key, hash))
			return e;
	return NULL;
}

const struct kp_symbol_index_entry *kp_symbol_index_find(const struct kp_symbol_index *idx,
							 const char *key)
{
	return idx->nbuckets ? kp_symbol_index_find_hashed(idx, key, kp_hash_string(key)) : NULL;
}

const struct kp_symbol_index_entry *kp_symbol_index_next(const struct kp_symbol_index_entry *e)
{
	for (const struct kp_symbol_index_entry *n = e->next; n; n = n->next)
		if (same_key(n, e->key, e->hash))
			return n;
	return NULL;
}

void kp_symbol_index_release(struct kp_symbol_index *idx)
{
	free(idx->buckets);
	free(idx->tails);
	free(idx->pool);
	memset(idx, 0, sizeof(*idx));
}
