// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The kernel export base: symbols in an arena, a pointer array in load order
 * and an open-addressing hash index on the name (one slot per distinct name;
 * entries of the same name from other owners are chained). Format detection for
 * kp_base_load() is kernel-base-load.c's; each format has its own file.
 *
 * A first load may instead be a whole table of the base cache (kp_base_adopt_table(),
 * cache/base-symtab.h), kept where it lies: its records are the first entries, its index
 * answers their names, and an entry's struct kp_ksym is made from its record the first time
 * it is asked for (lazy[], zero pages until then), under a per-record atomic state, so that
 * lookups from several threads stay safe. Loading 27,000 exports so costs the table's checks,
 * not a copy and an insertion of each. What later loads add goes to the base's own index;
 * a name's chain is the table's records of it, then the base's own entries of it: the order
 * in which they were loaded, as without the table.
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "kernel-base-internal.h"
#include "util/module-name.h"

struct entry {
	struct kp_ksym k;   /* first: callers get &entry->k */
	struct entry *next; /* next entry of the same name */
	uint32_t hash;
	unsigned gen;	  /* load that added or last merged it */
	uint32_t repeats; /* the same name and owner seen again in the load that added it */
};

/* A hash slot keeps the hash and name beside the head: probing touches no entry. */
struct slot {
	const char *name;
	struct entry *head;
	struct entry *tail; /* last of the chain: appends in O(1) */
	uint32_t hash;
	uint32_t len; /* strlen(name), saturated */
};

/* The entry of an adopted table's record, made on first use (state: LAZY_*). */
struct lazy {
	struct entry e; /* first: &lazy[i].e is entry i */
	atomic_uchar state;
};

enum { LAZY_EMPTY, LAZY_BUSY, LAZY_READY };

struct kp_kernel_base {
	struct kp_arena arena;
	/* an adopted table: entries 0 .. ntab - 1, before the base's own */
	struct kp_bsymtab tab;
	size_t ntab;
	struct lazy *lazy; /* ntab of them, mmap()ed: zero pages until used */
	size_t lazylen;
	unsigned tab_gen;	    /* the load that adopted it */
	struct kp_base_map tab_map; /* where the table lies: mapped, or ... */
	void *tab_heap;		    /* ... malloc()ed */
	struct entry **entries;	    /* load order */
	size_t n;
	size_t cap;
	struct slot *slots; /* hash index: heads of same-name chains, head NULL = empty */
	size_t nslots;	    /* power of two */
	size_t nnames;
	/*
	 * (name, owner) -> entry, built only once a name has more than PAIRS_AFTER owners (a
	 * hostile Module.symvers): then a name exported by thousands of owners stays O(1) per
	 * add. NULL before.
	 */
	struct entry **pairs; /* open addressing, power of two, NULL = empty */
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

int kp_base_new(struct kp_kernel_base **out)
{
	struct kp_kernel_base *b = calloc(1, sizeof(*b));

	*out = NULL;
	if (!b)
		return -1;
	b->vmlinux_owner = kp_arena_strdup(&b->arena, "vmlinux");
	if (!b->vmlinux_owner) {
		free(b);
		return -1;
	}
	*out = b;
	return 0;
}

void kp_base_free(struct kp_kernel_base *b)
{
	if (!b)
		return;
	free(b->entries);
	free(b->slots);
	free(b->pairs);
	if (b->lazy)
		munmap(b->lazy, b->lazylen);
	kp_base_map_release(&b->tab_map);
	free(b->tab_heap);
	kp_arena_release(&b->arena);
	free(b);
}

void kp_base_begin_load(struct kp_kernel_base *b, unsigned source)
{
	b->gen++;
	b->source = source;
	b->sources |= source;
}

static struct slot *find_slot(struct slot *slots, size_t nslots, const char *name, uint32_t h)
{
	size_t mask = nslots - 1;

	for (size_t i = h & mask;; i = (i + 1) & mask) {
		struct slot *s = &slots[i];

		if (!s->head || (s->hash == h && (s->name == name || !strcmp(s->name, name))))
			return s;
	}
}

static int rehash(struct kp_kernel_base *b)
{
	size_t nslots = b->nslots ? b->nslots * 2 : 1024;
	struct slot *slots;

	if (nslots > SIZE_MAX / sizeof(*slots))
		return -1;
	slots = calloc(nslots, sizeof(*slots));
	if (!slots)
		return -1;
	for (size_t i = 0; i < b->nslots; i++)
		if (b->slots[i].head)
			*find_slot(slots, nslots, b->slots[i].name, b->slots[i].hash) = b->slots[i];
	free(b->slots);
	b->slots = slots;
	b->nslots = nslots;
	return 0;
}

static struct entry *find_head(const struct kp_kernel_base *b, const char *name, uint32_t h)
{
	if (!b->nslots)
		return NULL;
	return find_slot(b->slots, b->nslots, name, h)->head;
}

/* Record @i of the adopted table as an entry (its sources: the adopting load). */
static void tab_fill(const struct kp_kernel_base *b, size_t i, struct entry *e)
{
	struct kp_bsym r;

	kp_bsymtab_read(&b->tab, (uint32_t)i, &r); /* kp_bsymtab_check_index() held */
	e->k.name = r.name;
	e->k.owner = r.vmlinux ? b->vmlinux_owner : r.owner;
	e->k.ns = r.ns;
	e->k.table = (enum kp_export_table)r.table;
	e->k.gpl_only = r.gpl_only;
	e->k.vmlinux = r.vmlinux;
	e->k.ns_known = r.ns_known;
	e->k.has_crc = r.has_crc;
	e->k.crc = r.has_crc ? r.crc : 0;
	e->k.sources = KP_SRC_SYMVERS;
	e->next = NULL; /* unused: chain_next() follows the table's links */
	e->hash = r.hash;
	e->gen = b->tab_gen;
	e->repeats = r.repeats;
}

/*
 * Entry @i of the adopted table not made yet (tab_entry()): the first caller fills it, a
 * concurrent one waits for that (a few dozen instructions). Out of line: lookups inline the
 * check only.
 */
static __attribute__((noinline)) struct entry *tab_make(const struct kp_kernel_base *b, size_t i)
{
	struct lazy *l = &b->lazy[i];
	unsigned char st = LAZY_EMPTY;

	if (atomic_compare_exchange_strong_explicit(&l->state, &st, LAZY_BUSY, memory_order_acquire,
						    memory_order_acquire)) {
		tab_fill(b, i, &l->e);
		atomic_store_explicit(&l->state, LAZY_READY, memory_order_release);
	} else {
		while (atomic_load_explicit(&l->state, memory_order_acquire) != LAZY_READY)
			sched_yield();
	}
	return &l->e;
}

/* Entry @i (< ntab) of the adopted table, made once (tab_make()), then read. */
static inline struct entry *tab_entry(const struct kp_kernel_base *b, size_t i)
{
	struct lazy *l = &b->lazy[i];

	if (atomic_load_explicit(&l->state, memory_order_acquire) == LAZY_READY)
		return &l->e;
	return tab_make(b, i);
}

/* True when @e is an entry of the adopted table. */
static bool is_tab(const struct kp_kernel_base *b, const struct entry *e)
{
	uintptr_t p = (uintptr_t)e, lo = (uintptr_t)b->lazy;

	return b->ntab && p >= lo && p < lo + b->ntab * sizeof(struct lazy);
}

/* The first entry of the name @name: the table's first record of it, else the base's own. */
static struct entry *chain_head(const struct kp_kernel_base *b, const char *name, uint32_t h)
{
	if (b->ntab) {
		uint32_t r = kp_bsymtab_head(&b->tab, name, h);

		if (r)
			return tab_entry(b, r - 1);
	}
	return find_head(b, name, h);
}

/* The next entry of @e's name: in the table's chain, then in the base's own. */
static struct entry *chain_next(const struct kp_kernel_base *b, const struct entry *e)
{
	if (is_tab(b, e)) {
		size_t i = (size_t)((uintptr_t)e - (uintptr_t)b->lazy) / sizeof(struct lazy);
		uint32_t r = kp_bsymtab_link(&b->tab, (uint32_t)i);

		return r ? tab_entry(b, r - 1) : find_head(b, e->k.name, e->hash);
	}
	return e->next;
}

/* Entry @i (load order) as it is now, without making a table's entry: @tmp holds it then. */
static const struct kp_ksym *view(const struct kp_kernel_base *b, size_t i, struct entry *tmp)
{
	if (i >= b->ntab)
		return &b->entries[i - b->ntab]->k;
	if (atomic_load_explicit(&b->lazy[i].state, memory_order_acquire) == LAZY_READY)
		return &b->lazy[i].e.k;
	tab_fill(b, i, tmp);
	return &tmp->k;
}

int kp_base_adopt_table(struct kp_kernel_base *b, const struct kp_bsymtab *t, uint64_t repeats,
			struct kp_base_map *map, void *heap)
{
	size_t len;

	if (kp_base_count(b) || b->tab.recs)
		return 1;
	if (t->nrec) {
		len = (size_t)t->nrec * sizeof(struct lazy); /* < 2^32 records of 72 bytes */
		/* anonymous pages read as zero (LAZY_EMPTY) and cost nothing until touched */
		b->lazy =
			mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (b->lazy == MAP_FAILED) {
			b->lazy = NULL;
			return -1;
		}
		b->lazylen = len;
	}
	kp_base_begin_load(b, KP_SRC_SYMVERS);
	b->tab = *t;
	b->ntab = t->nrec;
	b->tab_gen = b->gen;
	b->nduplicates += repeats;
	if (map) {
		b->tab_map = *map;
		memset(map, 0, sizeof(*map));
	}
	b->tab_heap = heap;
	return 0;
}

const char *kp_base_intern(const struct kp_kernel_base *b, const char *name, size_t len)
{
	return b->nslots || b->ntab ? kp_base_intern_hashed(b, name, len, kp_hash_bytes(name, len))
				    : NULL;
}

/* kp_base_intern_hashed() in the base's own index (out of line: the table's path stays lean). */
static __attribute__((noinline)) const char *own_intern(const struct kp_kernel_base *b,
							const char *name, size_t len, uint32_t h)
{
	size_t mask;

	if (!b->nslots)
		return NULL;
	mask = b->nslots - 1;
	for (size_t i = h & mask;; i = (i + 1) & mask) {
		const struct slot *s = &b->slots[i];

		if (!s->head)
			return NULL;
		if (s->hash == h && s->len == len && !memcmp(s->name, name, len))
			return s->name;
	}
}

const char *kp_base_intern_hashed(const struct kp_kernel_base *b, const char *name, size_t len,
				  uint32_t h)
{
	const char *s = b->ntab ? kp_bsymtab_find_bytes(&b->tab, name, len, h) : NULL;

	return s ? s : own_intern(b, name, len, h);
}

static const char *pool_find(const void *ctx, const char *name, size_t len)
{
	return kp_base_intern(ctx, name, len);
}

static const char *pool_find_hashed(const void *ctx, const char *name, size_t len, uint32_t hash)
{
	return kp_base_intern_hashed(ctx, name, len, hash);
}

struct kp_name_pool kp_base_name_pool(const struct kp_kernel_base *b)
{
	return (struct kp_name_pool){
		.find = pool_find,
		.find_hashed = pool_find_hashed,
		.ctx = b,
	};
}

static const char *source_name(unsigned src)
{
	switch (src) {
	case KP_SRC_SYMVERS:
		return "Module.symvers";
	case KP_SRC_VMLINUX:
		return "vmlinux";
	case KP_SRC_SYSTEM_MAP:
		return "System.map";
	case KP_SRC_KALLSYMS:
		return "kallsyms";
	default:
		return "an earlier source";
	}
}

/* Names the first source in @mask, for conflict messages. */
static const char *first_source(unsigned mask)
{
	for (unsigned s = 1; s <= KP_SRC_KALLSYMS; s <<= 1)
		if (mask & s)
			return source_name(s);
	return source_name(0);
}

static void conflict(struct kp_kernel_base *b, const struct entry *e, const char *what,
		     const char *had, const char *got)
{
	char buf[512];

	if (b->nconflicts++)
		return;
	snprintf(buf, sizeof(buf), "%s (%s): %s says %s %s, %s says %s", e->k.name, e->k.owner,
		 first_source(e->k.sources), what, had, source_name(b->source), got);
	b->first_conflict = kp_arena_strdup(&b->arena, buf); /* NULL on OOM: count stays */
}

static int merge(struct kp_kernel_base *b, struct entry *e, const struct kp_ksym *in,
		 struct kp_err *err)
{
	char had[32], got[32];

	if (e->gen == b->gen) {
		b->nduplicates++;
		if (e->repeats < UINT32_MAX)
			e->repeats++;
		return 0;
	}
	e->gen = b->gen;
	e->k.sources |= b->source;
	if (e->k.table != in->table)
		conflict(b, e, "table", kp_export_table_section(e->k.table),
			 kp_export_table_section(in->table));
	if (in->has_crc) {
		if (!e->k.has_crc) {
			e->k.has_crc = true;
			e->k.crc = in->crc;
		} else if (e->k.crc != in->crc) {
			snprintf(had, sizeof(had), "0x%08x", e->k.crc);
			snprintf(got, sizeof(got), "0x%08x", in->crc);
			conflict(b, e, "CRC", had, got);
		}
	}
	if (in->ns_known) {
		const char *ns = in->ns && *in->ns ? in->ns : NULL;

		if (!e->k.ns_known) {
			e->k.ns_known = true;
			if (ns) {
				e->k.ns = kp_arena_strdup(&b->arena, ns);
				if (!e->k.ns)
					return kp_err_set(err, "out of memory");
			}
		} else if ((ns == NULL) != (e->k.ns == NULL) || (ns && strcmp(ns, e->k.ns))) {
			conflict(b, e, "namespace", e->k.ns ? e->k.ns : "(none)",
				 ns ? ns : "(none)");
		}
	}
	return 0;
}

static const char *intern_owner(struct kp_kernel_base *b, const char *owner)
{
	/* the same string again (a cached table's owners are each stored once): no compare */
	if (owner && owner == b->last_owner)
		return owner;
	if (owner && owner == b->borrowed_vmlinux)
		return b->vmlinux_owner;
	if (!owner || !strcmp(owner, "vmlinux")) {
		if (owner && b->borrow)
			b->borrowed_vmlinux = owner;
		return b->vmlinux_owner;
	}
	if (b->last_owner && !strcmp(b->last_owner, owner))
		return b->last_owner;
	b->last_owner = b->borrow ? owner : kp_arena_strdup(&b->arena, owner);
	return b->last_owner;
}

static uint32_t pair_hash(uint32_t name_hash, const char *owner)
{
	return name_hash * 0x9e3779b1u ^ kp_hash_string(owner);
}

/* The pair slot of (@name, @owner): its entry, or the empty slot where it goes. */
static struct entry **find_pair(struct entry **pairs, size_t npairs, const char *name,
				const char *owner, uint32_t ph)
{
	size_t mask = npairs - 1;

	for (size_t i = ph & mask;; i = (i + 1) & mask) {
		struct entry *e = pairs[i];

		if (!e || ((e->k.owner == owner || !strcmp(e->k.owner, owner)) &&
			   !strcmp(e->k.name, name)))
			return &pairs[i];
	}
}

#define PAIRS_AFTER 16

static int grow_pairs(struct kp_kernel_base *b)
{
	size_t n = b->npairs ? b->npairs * 2 : 1024;
	struct entry **pairs;

	while (n < 2 * (b->ntab + b->n + 1))
		n *= 2;
	if (n > SIZE_MAX / sizeof(*pairs))
		return -1;
	pairs = calloc(n, sizeof(*pairs));
	if (!pairs)
		return -1;
	/*
	 * from the entries (load order), so that the first build takes in everything: an adopted
	 * table's too (each made now: a name of more than PAIRS_AFTER owners is a hostile file's)
	 */
	for (size_t i = 0; i < b->ntab + b->n; i++) {
		struct entry *e = i < b->ntab ? tab_entry(b, i) : b->entries[i - b->ntab];

		*find_pair(pairs, n, e->k.name, e->k.owner, pair_hash(e->hash, e->k.owner)) = e;
	}
	free(b->pairs);
	b->pairs = pairs;
	b->npairs = n;
	b->npaired = b->ntab + b->n;
	return 0;
}

int kp_base_add(struct kp_kernel_base *b, const struct kp_ksym *in, struct kp_err *err)
{
	return kp_base_add_hashed(b, in, kp_hash_string(in->name), err);
}

int kp_base_add_hashed(struct kp_kernel_base *b, const struct kp_ksym *in, uint32_t h,
		       struct kp_err *err)
{
	const char *owner = intern_owner(b, in->owner);
	struct entry **pair = NULL;
	/* the name's slot, found once: the chain walked for the owner, then the entry added */
	struct slot *slot = b->nslots ? find_slot(b->slots, b->nslots, in->name, h) : NULL;
	struct entry *e;

	if (!owner)
		return kp_err_set(err, "out of memory");
	if (!b->pairs) {
		unsigned steps = 0;

		e = b->ntab ? chain_head(b, in->name, h) : slot ? slot->head : NULL;
		for (; e && steps < PAIRS_AFTER; e = chain_next(b, e), steps++)
			if (e->k.owner == owner || !strcmp(e->k.owner, owner))
				return merge(b, e, in, err);
		if (e && grow_pairs(b) < 0) /* a long chain: the pair table from now on */
			return kp_err_set(err, "out of memory");
	}
	if (b->pairs) {
		uint32_t ph = pair_hash(h, owner);

		if ((b->npaired + 1) * 2 > b->npairs && grow_pairs(b) < 0)
			return kp_err_set(err, "out of memory");
		pair = find_pair(b->pairs, b->npairs, in->name, owner, ph);
		if (*pair)
			return merge(b, *pair, in, err);
	}

	if ((b->nnames + 1) * 2 > b->nslots) {
		if (rehash(b) < 0)
			return kp_err_set(err, "out of memory");
		slot = NULL; /* the slots moved */
	}
	if (kp_grow(&b->entries, &b->cap, b->n + 1, sizeof(*b->entries)) < 0)
		return kp_err_set(err, "out of memory");
	e = kp_arena_alloc(&b->arena, sizeof(*e));
	if (!e)
		return kp_err_set(err, "out of memory");
	memset(e, 0, sizeof(*e));
	e->k = *in;
	e->k.owner = owner;
	e->k.vmlinux = owner == b->vmlinux_owner;
	e->k.sources = b->source;
	e->k.name = b->borrow ? in->name : kp_arena_strdup(&b->arena, in->name);
	e->k.ns = NULL;
	if (in->ns && *in->ns) {
		e->k.ns = b->borrow ? in->ns : kp_arena_strdup(&b->arena, in->ns);
		if (!e->k.ns)
			return kp_err_set(err, "out of memory");
	}
	if (!e->k.name)
		return kp_err_set(err, "out of memory");
	if (!e->k.has_crc)
		e->k.crc = 0;
	e->hash = h;
	e->gen = b->gen;

	if (!slot)
		slot = find_slot(b->slots, b->nslots, in->name, h);
	if (!slot->head) {
		slot->head = e;
		slot->name = e->k.name;
		slot->hash = h;
		slot->len = (uint32_t)strnlen(e->k.name, UINT32_MAX);
		b->nnames++;
	} else {
		/* Append so that the first loaded owner stays the head. */
		slot->tail->next = e;
	}
	slot->tail = e;
	if (pair) {
		*pair = e;
		b->npaired++;
	}
	b->entries[b->n++] = e;
	return 0;
}

int kp_base_reserve(struct kp_kernel_base *b, size_t n)
{
	size_t nslots = b->nslots ? b->nslots : 1024;
	struct slot *slots;

	/* as many doublings as kp_base_add() would make for @n new names, at once */
	while ((b->nnames + n + 1) * 2 > nslots) {
		if (nslots > SIZE_MAX / 2 / sizeof(*slots))
			return -1;
		nslots *= 2;
	}
	if (nslots != b->nslots) {
		slots = calloc(nslots, sizeof(*slots));
		if (!slots)
			return -1;
		for (size_t i = 0; i < b->nslots; i++)
			if (b->slots[i].head)
				*find_slot(slots, nslots, b->slots[i].name, b->slots[i].hash) =
					b->slots[i];
		free(b->slots);
		b->slots = slots;
		b->nslots = nslots;
	}
	return kp_grow(&b->entries, &b->cap, b->n + n, sizeof(*b->entries));
}

void *kp_base_arena_copy(struct kp_kernel_base *b, const void *p, size_t len)
{
	void *q = kp_arena_alloc(&b->arena, len);

	if (q)
		memcpy(q, p, len);
	return q;
}

void kp_base_borrow_strings(struct kp_kernel_base *b, bool on)
{
	b->borrow = on;
}

struct kp_ksym *kp_base_find_mutable(struct kp_kernel_base *b, const char *name)
{
	for (struct entry *e = chain_head(b, name, kp_hash_string(name)); e; e = chain_next(b, e))
		if (e->k.vmlinux)
			return &e->k;
	return NULL;
}

const struct kp_ksym *kp_base_lookup(const struct kp_kernel_base *b, const char *name)
{
	return kp_base_lookup_hashed(b, name, kp_hash_string(name));
}

const struct kp_ksym *kp_base_lookup_hashed(const struct kp_kernel_base *b, const char *name,
					    uint32_t hash)
{
	/* the table's chain by its records' flags: only the entry answered is made */
	if (b->ntab)
		for (uint32_t r = kp_bsymtab_head(&b->tab, name, hash); r;
		     r = kp_bsymtab_link(&b->tab, r - 1))
			if (kp_bsymtab_vmlinux(&b->tab, r - 1))
				return &tab_entry(b, r - 1)->k;
	for (const struct entry *e = find_head(b, name, hash); e; e = e->next)
		if (e->k.vmlinux)
			return &e->k;
	return NULL;
}

const struct kp_ksym *kp_base_lookup_owner(const struct kp_kernel_base *b, const char *name,
					   const char *owner)
{
	return kp_base_lookup_owner_hashed(b, name, kp_hash_string(name), owner);
}

const struct kp_ksym *kp_base_lookup_owner_hashed(const struct kp_kernel_base *b, const char *name,
						  uint32_t hash, const char *owner)
{
	const struct entry *e = chain_head(b, name, hash);

	for (; e; e = chain_next(b, e))
		if (!owner || !strcmp(e->k.owner, owner))
			return &e->k;
	return NULL;
}

const struct kp_ksym *kp_base_next_same_name(const struct kp_kernel_base *b,
					     const struct kp_ksym *k)
{
	const struct entry *e = chain_next(b, (const struct entry *)k); /* k: the first member */

	return e ? &e->k : NULL;
}

uint32_t kp_base_repeats_at(const struct kp_kernel_base *b, size_t i)
{
	if (i < b->ntab)
		return tab_entry(b, i)->repeats;
	return i - b->ntab < b->n ? b->entries[i - b->ntab]->repeats : 0;
}

void kp_base_note_duplicates(struct kp_kernel_base *b, size_t n)
{
	b->nduplicates += n;
}

size_t kp_base_count(const struct kp_kernel_base *b)
{
	return b->ntab + b->n;
}

unsigned kp_base_sources(const struct kp_kernel_base *b)
{
	return b->sources;
}

const struct kp_ksym *kp_base_at(const struct kp_kernel_base *b, size_t i)
{
	if (i < b->ntab)
		return &tab_entry(b, i)->k;
	return i - b->ntab < b->n ? &b->entries[i - b->ntab]->k : NULL;
}

void kp_base_stats(const struct kp_kernel_base *b, struct kp_base_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->nsyms = kp_base_count(b);
	for (size_t i = 0; i < st->nsyms; i++) {
		struct entry tmp;
		const struct kp_ksym *k = view(b, i, &tmp);

		if (!k->vmlinux) {
			st->nmodule++;
			continue;
		}
		st->nvmlinux++;
		st->ngpl_only += k->gpl_only;
		st->nnamespaced += k->ns != NULL;
		st->ncrc += k->has_crc;
	}
	st->nduplicates = b->nduplicates;
	st->nconflicts = b->nconflicts;
	st->first_conflict = b->first_conflict;
	st->sources = b->sources;
}

const char *kp_base_release(const struct kp_kernel_base *b)
{
	return b->release;
}

int kp_base_set_kernel_release(struct kp_kernel_base *b, const char *release, struct kp_err *err)
{
	if (b->release) {
		if (strcmp(b->release, release))
			return kp_err_set(err, "kernel release %s does not match %s loaded before",
					  release, b->release);
		return 0;
	}
	b->release = kp_arena_strdup(&b->arena, release);
	return b->release ? 0 : kp_err_set(err, "out of memory");
}

bool kp_base_owner_matches(const char *owner, const char *path)
{
	static const char *const exts[] = { ".ko", ".ko.xz", ".ko.zst", ".ko.gz" };
	size_t olen = strlen(owner), plen = strlen(path), stem = 0;

	for (size_t i = 0; i < KP_ARRAY_SIZE(exts); i++) {
		size_t el = strlen(exts[i]);

		if (plen > el && !strcmp(path + plen - el, exts[i]))
			stem = plen - el;
	}
	if (!stem || olen > stem || strncmp(path + stem - olen, owner, olen))
		return false;
	return olen == stem || path[stem - olen - 1] == '/' || owner[0] == '/';
}

const char *kp_base_module_owner(const struct kp_kernel_base *b, const char *name)
{
	const size_t n = b ? kp_base_count(b) : 0;
	const char *last = NULL;

	for (size_t i = 0; i < n; i++) {
		struct entry tmp;
		const struct kp_ksym *k = view(b, i, &tmp);
		char mod[64]; /* a longer owner is cut, so no loaded name (< 56 bytes) equals it */

		if (k->vmlinux || (last && !strcmp(k->owner, last)))
			continue;
		last = k->owner;
		kp_modname_from_path(mod, sizeof(mod), k->owner, KP_MODNAME_WHOLE);
		if (!strcmp(mod, name))
			return k->owner;
	}
	return NULL;
}

int kp_base_err_prefix(struct kp_err *err, const char *path)
{
	char msg[sizeof(err->msg)];

	if (!err)
		return -1;
	snprintf(msg, sizeof(msg), "%s", err->msg);
	return kp_err_set(err, "%s: %s", path, msg);
}
