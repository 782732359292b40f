// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A whole table of the base cache adopted as the base's first load (kp_base_adopt_table(),
 * cache/base-symtab.h), kept where it lies: its records are the first entries, its index
 * answers their names, and an entry's struct kp_ksym is made from its record the first time
 * it is asked for (lazy[], zero pages until then), under a per-record atomic state, so that
 * lookups from several threads stay safe. Loading 27,000 exports so costs the table's checks,
 * not a copy and an insertion of each.
 */
#include <sched.h>
#include <sys/mman.h>

#include "kernel-base-index.h"

/* Record @i of the adopted table as an entry (its sources: the adopting load). */
void kp_base_tab_fill(const struct kp_kernel_base *b, size_t i, struct kp_bentry *e)
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
	e->next = NULL; /* unused: kp_base_chain_next() follows the table's links */
	e->hash = r.hash;
	e->gen = b->tab_gen;
	e->repeats = r.repeats;
}

/*
 * Entry @i of the adopted table not made yet (kp_base_tab_entry()): the first caller fills it,
 * a concurrent one waits for that (a few dozen instructions). Out of line: lookups inline the
 * check only.
 */
__attribute__((noinline)) struct kp_bentry *kp_base_tab_make(const struct kp_kernel_base *b,
							     size_t i)
{
	struct kp_blazy *l = &b->lazy[i];
	unsigned char st = KP_BLAZY_EMPTY;

	if (atomic_compare_exchange_strong_explicit(&l->state, &st, KP_BLAZY_BUSY,
						    memory_order_acquire, memory_order_acquire)) {
		kp_base_tab_fill(b, i, &l->e);
		atomic_store_explicit(&l->state, KP_BLAZY_READY, memory_order_release);
	} else {
		while (atomic_load_explicit(&l->state, memory_order_acquire) != KP_BLAZY_READY)
			sched_yield();
	}
	return &l->e;
}

/* Entry @i (load order) as it is now, without making a table's entry: @tmp holds it then. */
const struct kp_ksym *kp_base_view(const struct kp_kernel_base *b, size_t i, struct kp_bentry *tmp)
{
	if (i >= b->ntab)
		return &b->entries[i - b->ntab]->k;
	if (atomic_load_explicit(&b->lazy[i].state, memory_order_acquire) == KP_BLAZY_READY)
		return &b->lazy[i].e.k;
	kp_base_tab_fill(b, i, tmp);
	return &tmp->k;
}

int kp_base_adopt_table(struct kp_kernel_base *b, const struct kp_bsymtab *t, uint64_t repeats,
			struct kp_base_map *map, void *heap)
{
	size_t len;

	if (kp_base_count(b) || b->tab.recs)
		return 1;
	if (t->nrec) {
		len = (size_t)t->nrec * sizeof(struct kp_blazy); /* < 2^32 records of 72 bytes */
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
