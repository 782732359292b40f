// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Entries added to the kernel export base, load by load (kernel-base-internal.h): a name and
 * owner seen again in the same load is a duplicate, one added by an earlier load is merged
 * (table, CRC and namespace compared, the first disagreement kept for the report). A name's
 * entries of other owners are chained in load order; once a name has more than PAIRS_AFTER
 * owners (a hostile Module.symvers), a (name, owner) table keeps each add O(1).
 */
#include <stdio.h>

#include "kernel-base-index.h"

/* The name index moved into a table of @nslots slots (a power of two): 0, or -1 (no memory). */
static int resize_slots(struct kp_kernel_base *b, size_t nslots)
{
	struct kp_bslot *slots;

	if (nslots > SIZE_MAX / sizeof(*slots))
		return -1;
	slots = calloc(nslots, sizeof(*slots));
	if (!slots)
		return -1;
	for (size_t i = 0; i < b->nslots; i++)
		if (b->slots[i].head)
			*kp_bslot_find(slots, nslots, b->slots[i].name, b->slots[i].hash) =
				b->slots[i];
	free(b->slots);
	b->slots = slots;
	b->nslots = nslots;
	return 0;
}

/* The name index doubled (1024 slots to begin with). */
static int rehash(struct kp_kernel_base *b)
{
	return resize_slots(b, b->nslots ? b->nslots * 2 : 1024);
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

static void conflict(struct kp_kernel_base *b, const struct kp_bentry *e, const char *what,
		     const char *had, const char *got)
{
	char buf[512];

	if (b->nconflicts++)
		return;
	snprintf(buf, sizeof(buf), "%s (%s): %s says %s %s, %s says %s", e->k.name, e->k.owner,
		 first_source(e->k.sources), what, had, source_name(b->source), got);
	b->first_conflict = kp_arena_strdup(&b->arena, buf); /* NULL on OOM: count stays */
}

static int merge(struct kp_kernel_base *b, struct kp_bentry *e, const struct kp_ksym *in,
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
static struct kp_bentry **find_pair(struct kp_bentry **pairs, size_t npairs, const char *name,
				    const char *owner, uint32_t ph)
{
	size_t mask = npairs - 1;

	for (size_t i = ph & mask;; i = (i + 1) & mask) {
		struct kp_bentry *e = pairs[i];

		if (!e || ((e->k.owner == owner || !strcmp(e->k.owner, owner)) &&
			   !strcmp(e->k.name, name)))
			return &pairs[i];
	}
}

#define PAIRS_AFTER 16

static int grow_pairs(struct kp_kernel_base *b)
{
	size_t n = b->npairs ? b->npairs * 2 : 1024;
	struct kp_bentry **pairs;

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
		struct kp_bentry *e =
			i < b->ntab ? kp_base_tab_entry(b, i) : b->entries[i - b->ntab];

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
	struct kp_bentry **pair = NULL;
	/* the name's slot, found once: the chain walked for the owner, then the entry added */
	struct kp_bslot *slot = b->nslots ? kp_bslot_find(b->slots, b->nslots, in->name, h) : NULL;
	struct kp_bentry *e;

	if (!owner)
		return kp_err_set(err, "out of memory");
	if (!b->pairs) {
		unsigned steps = 0;

		e = b->ntab ? kp_base_chain_head(b, in->name, h) : slot ? slot->head : NULL;
		for (; e && steps < PAIRS_AFTER; e = kp_base_chain_next(b, e), steps++)
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
		slot = kp_bslot_find(b->slots, b->nslots, in->name, h);
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

	/* as many doublings as kp_base_add() would make for @n new names, at once */
	while ((b->nnames + n + 1) * 2 > nslots) {
		if (nslots > SIZE_MAX / 2 / sizeof(struct kp_bslot))
			return -1;
		nslots *= 2;
	}
	if (nslots != b->nslots && resize_slots(b, nslots) < 0)
		return -1;
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
