/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the kernel-base loaders (symvers.c, vmlinux-exports.c, system-map.c) share. */
#ifndef KP_KERNEL_BASE_INTERNAL_H
#define KP_KERNEL_BASE_INTERNAL_H

#include "cache/base-cache.h"
#include "cache/base-symtab.h"
#include "kernel-base.h"

/* Largest text file (after decompression) a loader accepts: System.map is ~10 MiB. */
#define KP_BASE_MAX_TEXT ((size_t)256 << 20)

/*
 * Starts a load from one source: later kp_base_add() calls for a name and
 * owner already added by this same load count as duplicates, those added by
 * an earlier load are merged (and disagreements counted).
 */
void kp_base_begin_load(struct kp_kernel_base *b, unsigned source);

/*
 * Adds or merges @in (strings are copied into the base's arena; @in->owner
 * NULL means vmlinux). @in->sources is ignored: the current load's source is used.
 */
int kp_base_add(struct kp_kernel_base *b, const struct kp_ksym *in, struct kp_err *err);
/* The same with @hash == kp_hash_string(@in->name) (a cached table stores it). */
int kp_base_add_hashed(struct kp_kernel_base *b, const struct kp_ksym *in, uint32_t hash,
		       struct kp_err *err);

/*
 * Makes room for @n more entries and names (one rehash at most, not one per doubling):
 * nothing else changes. 0, or -1 when out of memory.
 */
int kp_base_reserve(struct kp_kernel_base *b, size_t n);
/*
 * The whole table @t (checked: kp_bsymtab_check_all() and kp_bsymtab_check_index(), which
 * gave @repeats) as one Module.symvers load into the empty base @b: its records become the
 * first entries, in their order, answered from the table where it lies (kernel-base.c). @b
 * takes the table's memory: the mapping @map (emptied; NULL: none) or the malloc()ed @heap
 * (NULL: none), both kept until kp_base_free(). 0; 1 when @b is not empty (nothing taken:
 * add the records one by one); -1 out of memory (nothing taken).
 */
int kp_base_adopt_table(struct kp_kernel_base *b, const struct kp_bsymtab *t, uint64_t repeats,
			struct kp_base_map *map, void *heap);
/* A copy of @len bytes at @p in the base's arena (lives as long as the base), or NULL. */
void *kp_base_arena_copy(struct kp_kernel_base *b, const void *p, size_t len);
/*
 * @on: kp_base_add() keeps the name, owner and namespace pointers it is given instead of
 * copying them (the caller put them in the base's arena: kp_base_arena_copy()). Off again
 * before the caller's strings go.
 */
void kp_base_borrow_strings(struct kp_kernel_base *b, bool on);

/* The vmlinux entry @name for the loader to complete (CRCs found after the export). */
struct kp_ksym *kp_base_find_mutable(struct kp_kernel_base *b, const char *name);

/*
 * How many more times the load that added entry @i (load order) saw its name and owner
 * (counted in kp_base_stats().nduplicates), for the base cache (kernel-base-cached.c).
 */
uint32_t kp_base_repeats_at(const struct kp_kernel_base *b, size_t i);
/* Counts @n duplicates of the current load that were not added one by one (a cached load). */
void kp_base_note_duplicates(struct kp_kernel_base *b, size_t n);

/*
 * True when kp_base_load() takes the decompressed text @p as Module.symvers (its first line
 * a hex CRC and a tab); the base cache stores such a load only (kernel-base-cached.c).
 */
bool kp_base_text_is_symvers(const unsigned char *p, size_t len);
/* True when the first @len bytes of a text are too few for kp_base_load() to tell its format. */
bool kp_base_text_undecided(const unsigned char *p, size_t len);

/* Prefixes @err's message with "@path: " (for errors of helpers that do not know it); -1. */
int kp_base_err_prefix(struct kp_err *err, const char *path);

#endif
