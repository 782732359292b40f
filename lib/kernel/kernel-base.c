// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The kernel export base: symbols in an arena, a pointer array in load order
 * and an open-addressing hash index on the name (one slot per distinct name;
 * entries of the same name from other owners are chained): made, looked up, counted.
 * Entries are added and merged by kernel-base-add.c; format detection for kp_base_load()
 * is kernel-base-load.c's; each format has its own file.
 *
 * A first load may instead be a whole table of the base cache (kp_base_adopt_table(),
 * cache/base-symtab.h), kept where it lies: its records are the first entries, its index
 * answers their names, and an entry's struct kp_ksym is made from its record the first time
 * it is asked for (lazy[], zero pages until then), under a per-record atomic state, so that
 * lookups from several threads stay safe (kernel-base-table.c). What later loads add goes to the
 * base's own index; a name's chain is the table's records of it, then the base's own entries of it:
 * the order in which they were loaded, as without the table.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "kernel-base-index.h"
#include "util/module-name.h"

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
		const struct kp_bslot *s = &b->slots[i];

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

struct kp_ksym *kp_base_find_mutable(struct kp_kernel_base *b, const char *name)
{
	for (struct kp_bentry *e = kp_base_chain_head(b, name, kp_hash_string(name)); e;
	     e = kp_base_chain_next(b, e))
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
				return &kp_base_tab_entry(b, r - 1)->k;
	for (const struct kp_bentry *e = kp_base_own_head(b, name, hash); e; e = e->next)
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
	const struct kp_bentry *e = kp_base_chain_head(b, name, hash);

	for (; e; e = kp_base_chain_next(b, e))
		if (!owner || !strcmp(e->k.owner, owner))
			return &e->k;
	return NULL;
}

const struct kp_ksym *kp_base_next_same_name(const struct kp_kernel_base *b,
					     const struct kp_ksym *k)
{
	const struct kp_bentry *e =
		kp_base_chain_next(b, (const struct kp_bentry *)k); /* k: the first member */

	return e ? &e->k : NULL;
}

uint32_t kp_base_repeats_at(const struct kp_kernel_base *b, size_t i)
{
	if (i < b->ntab)
		return kp_base_tab_entry(b, i)->repeats;
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
		return &kp_base_tab_entry(b, i)->k;
	return i - b->ntab < b->n ? &b->entries[i - b->ntab]->k : NULL;
}

void kp_base_stats(const struct kp_kernel_base *b, struct kp_base_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->nsyms = kp_base_count(b);
	for (size_t i = 0; i < st->nsyms; i++) {
		struct kp_bentry tmp;
		const struct kp_ksym *k = kp_base_view(b, i, &tmp);

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
		struct kp_bentry tmp;
		const struct kp_ksym *k = kp_base_view(b, i, &tmp);
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
