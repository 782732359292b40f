/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel export base's own structures (kernel-base.h), shared by the files that make it:
 * kernel-base.c (the base, its index and lookups), kernel-base-table.c (an adopted table of
 * the base cache, its entries made on first use) and kernel-base-add.c (entries added and
 * merged, load by load). The chain of a name is the table's records of it, then the base's
 * own entries of it; the helpers that walk it are inline here, for the lookups.
 */
#ifndef KP_KERNEL_BASE_INDEX_H
#define KP_KERNEL_BASE_INDEX_H

#include <stdatomic.h>
#include <string.h>

#include "kernel-base-internal.h"

struct kp_bentry {
	struct kp_ksym k;	/* first: callers get &entry->k */
	struct kp_bentry *next; /* next entry of the same name */
	uint32_t hash;
	unsigned gen;	  /* load that added or last merged it */
	uint32_t repeats; /* the same name and owner seen again in the load that added it */
};

/* A hash slot keeps the hash and name beside the head: probing touches no entry. */
struct kp_bslot {
	const char *name;
	struct kp_bentry *head;
	struct kp_bentry *tail; /* last of the chain: appends in O(1) */
	uint32_t hash;
	uint32_t len; /* strlen(name), saturated */
};

/* The entry of an adopted table's record, made on first use (state: KP_BLAZY_*). */
struct kp_blazy {
	struct kp_bentry e; /* first: &lazy[i].e is entry i */
	atomic_uchar state;
};

enum { KP_BLAZY_EMPTY, KP_BLAZY_BUSY, KP_BLAZY_READY };

struct kp_kernel_base {
	struct kp_arena arena;
	/* an adopted table: entries 0 .. ntab - 1, before the base's own */
	struct kp_bsymtab tab;
	size_t ntab;
	struct kp_blazy *lazy; /* ntab of them, mmap()ed: zero pages until used */
	size_t lazylen;
	unsigned tab_gen;	    /* the load that adopted it */
	struct kp_base_map tab_map; /* where the table lies: mapped, or ... */
	void *tab_heap;		    /* ... malloc()ed */
	struct kp_bentry **entries; /* load order */
	size_t n;
	size_t cap;
	struct kp_bslot *slots; /* hash index: heads of same-name chains, head NULL = empty */
	size_t nslots;		/* power of two */
	size_t nnames;
	/*
	 * (name, owner) -> entry, built only once a name has more than PAIRS_AFTER owners (a
	 * hostile Module.symvers): then a name exported by thousands of owners stays O(1) per
	 * add. NULL before.
	 */
	struct kp_bentry **pairs; /* open addressing, power of two, NULL = empty */
	size_t npairs;
	size_t npaired;
	unsigned gen;
	unsigned source; /* KP_SRC_* of the current load */
	unsigned sources;
	const char *vmlinux_owner;
	const char *last_owner;	      /* interning cache: owners come in runs */
	const char *borrowed_vmlinux; /* "vmlinux" of kp_base_borrow_strings(): in the arena */
	bool borrow;		      /* kp_base_borrow_strings(): added strings are not copied */
	const char *release;
	size_t nduplicates;
	size_t nconflicts;
	const char *first_conflict;
};

static inline struct kp_bslot *kp_bslot_find(struct kp_bslot *slots, size_t nslots,
					     const char *name, uint32_t h)
{
	size_t mask = nslots - 1;

	for (size_t i = h & mask;; i = (i + 1) & mask) {
		struct kp_bslot *s = &slots[i];

		if (!s->head || (s->hash == h && (s->name == name || !strcmp(s->name, name))))
			return s;
	}
}

static inline struct kp_bentry *kp_base_own_head(const struct kp_kernel_base *b, const char *name,
						 uint32_t h)
{
	if (!b->nslots)
		return NULL;
	return kp_bslot_find(b->slots, b->nslots, name, h)->head;
}

/* Record @i of the adopted table as an entry in @e (kernel-base-table.c). */
void kp_base_tab_fill(const struct kp_kernel_base *b, size_t i, struct kp_bentry *e);
/* Entry @i of the adopted table, made now if no thread made it yet (kernel-base-table.c). */
struct kp_bentry *kp_base_tab_make(const struct kp_kernel_base *b, size_t i);
/* Entry @i (load order) as it is now, without making a table's entry: @tmp holds it then. */
const struct kp_ksym *kp_base_view(const struct kp_kernel_base *b, size_t i, struct kp_bentry *tmp);

/* Entry @i (< ntab) of the adopted table, made once (kp_base_tab_make()), then read. */
static inline struct kp_bentry *kp_base_tab_entry(const struct kp_kernel_base *b, size_t i)
{
	struct kp_blazy *l = &b->lazy[i];

	if (atomic_load_explicit(&l->state, memory_order_acquire) == KP_BLAZY_READY)
		return &l->e;
	return kp_base_tab_make(b, i);
}

/* True when @e is an entry of the adopted table. */
static inline bool kp_base_is_tab(const struct kp_kernel_base *b, const struct kp_bentry *e)
{
	uintptr_t p = (uintptr_t)e, lo = (uintptr_t)b->lazy;

	return b->ntab && p >= lo && p < lo + b->ntab * sizeof(struct kp_blazy);
}

/* The first entry of the name @name: the table's first record of it, else the base's own. */
static inline struct kp_bentry *kp_base_chain_head(const struct kp_kernel_base *b, const char *name,
						   uint32_t h)
{
	if (b->ntab) {
		uint32_t r = kp_bsymtab_head(&b->tab, name, h);

		if (r)
			return kp_base_tab_entry(b, r - 1);
	}
	return kp_base_own_head(b, name, h);
}

/* The next entry of @e's name: in the table's chain, then in the base's own. */
static inline struct kp_bentry *kp_base_chain_next(const struct kp_kernel_base *b,
						   const struct kp_bentry *e)
{
	if (kp_base_is_tab(b, e)) {
		size_t i = (size_t)((uintptr_t)e - (uintptr_t)b->lazy) / sizeof(struct kp_blazy);
		uint32_t r = kp_bsymtab_link(&b->tab, (uint32_t)i);

		return r ? kp_base_tab_entry(b, r - 1) : kp_base_own_head(b, e->k.name, e->hash);
	}
	return e->next;
}

#endif
