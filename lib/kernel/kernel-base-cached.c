// SPDX-License-Identifier: LGPL-2.1-or-later
/* Module.symvers through the base cache (kernel-base-cached.h). */
#include "kernel-base-cached.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "cache/base-symtab.h"
#include "file/bytes.h"
#include "util/io.h"
#include "kernel-base-internal.h"

/* The plain loaders, with their messages: what the cache does not serve. */
static int load_plain(struct kp_kernel_base *b, const struct kp_root_dir *root, const char *path,
		      const struct kp_symset *wanted, struct kp_err *err)
{
	if (wanted)
		return kp_base_load_filtered_in(b, root, path, false, wanted, err);
	return kp_base_load_symvers_in(b, root, path, err);
}

/*
 * The table of @raw (Module.symvers as on disk), parsed whole: 0, or -1 (it does not parse,
 * or, @sniff, kp_base_load() would not read it as Module.symvers).
 */
static int encode(const unsigned char *raw, size_t len, bool sniff, unsigned char **tab,
		  size_t *tlen)
{
	struct kp_kernel_base *full = NULL;
	struct kp_err why = { 0 };
	struct kp_bytes text;
	struct kp_bsym *recs = NULL;
	size_t n;
	int r = -1;

	/*
	 * kp_bytes_lines() (the hook's filtered read) refuses a line of 256 KiB or more in a
	 * plain file: such a file is left to it, with its message.
	 */
	if (kp_detect_compression(raw, len) == KP_COMP_NONE)
		for (const unsigned char *p = raw, *end = raw + len, *nl; p < end; p = nl + 1) {
			nl = memchr(p, '\n', (size_t)(end - p));
			if ((size_t)((nl ? nl : end) - p) >= ((size_t)256 << 10) - 1)
				return -1;
			if (!nl)
				break;
		}
	/* kp_base_load(): an ELF file (plain or compressed) is a vmlinux, other text is sniffed */
	if (sniff && len >= SELFMAG && !memcmp(raw, ELFMAG, SELFMAG))
		return -1;
	if (kp_bytes_from_text_buffer(raw, len, KP_FILTERED_MAX_SYMVERS, &text, &why) < 0)
		return -1;
	if (sniff && ((text.len >= SELFMAG && !memcmp(text.data, ELFMAG, SELFMAG)) ||
		      !kp_base_text_is_symvers(text.data, text.len)))
		goto out;
	if (kp_base_new(&full) < 0 ||
	    kp_base_load_symvers_buffer(full, "Module.symvers", text.data, text.len, &why) < 0)
		goto out;
	n = kp_base_count(full);
	recs = calloc(n ? n : 1, sizeof(*recs));
	if (!recs)
		goto out;
	for (size_t i = 0; i < n; i++) {
		const struct kp_ksym *k = kp_base_at(full, i);

		recs[i] = (struct kp_bsym){ .name = k->name,
					    .owner = k->owner,
					    .ns = k->ns,
					    .crc = k->crc,
					    .repeats = kp_base_repeats_at(full, i),
					    .table = (uint8_t)k->table,
					    .vmlinux = k->vmlinux,
					    .gpl_only = k->gpl_only,
					    .has_crc = k->has_crc,
					    .ns_known = k->ns_known };
	}
	r = kp_bsymtab_encode(recs, n, tab, tlen);
out:
	free(recs);
	kp_base_free(full);
	kp_bytes_release(&text);
	return r;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The records to add, in load order: all, or those of @wanted's names. 0 (*@sel malloc'ed),
 * 1 when the table is damaged, -1 out of memory.
 */
static int select_records(const struct kp_bsymtab *t, const struct kp_symset *wanted,
			  uint32_t **sel, size_t *nsel)
{
	size_t n = 0, cap = 0;
	uint32_t *s = NULL;

	*sel = NULL;
	*nsel = 0;
	if (!wanted) {
		s = malloc((t->nrec ? t->nrec : 1) * sizeof(*s));
		if (!s)
			return -1;
		for (uint32_t i = 0; i < t->nrec; i++)
			s[i] = i;
		*sel = s;
		*nsel = t->nrec;
		return 0;
	}
	for (size_t i = 0; i < wanted->cap; i++) {
		int64_t r;

		if (!wanted->keys[i])
			continue;
		for (r = kp_bsymtab_find(t, wanted->keys[i], wanted->lens[i]); r > 0;
		     r = kp_bsymtab_next(t, (uint32_t)r - 1)) {
			if (kp_grow(&s, &cap, n + 1, sizeof(*s)) < 0) {
				free(s);
				return -1;
			}
			s[n++] = (uint32_t)r - 1;
		}
		if (r < 0) {
			free(s);
			return 1;
		}
	}
	qsort(s, n, sizeof(*s), cmp_u32);
	*sel = s;
	*nsel = n;
	return 0;
}

/* @s (a string of @t, or NULL) in @copy, the copy of @t's strings; @copy NULL: @s itself. */
static const char *in_copy(const struct kp_bsymtab *t, const char *copy, const char *s)
{
	return copy && s ? copy + (s - t->str) : s;
}

/*
 * Adds the selected records of @t to @b as one Module.symvers load. 0, 1 when the table is
 * damaged (nothing added), -1 with @err.
 */
static int add_from(struct kp_kernel_base *b, const struct kp_bsymtab *t,
		    const struct kp_symset *wanted, struct kp_err *err)
{
	struct kp_bsym *recs;
	const char *str = NULL;
	uint32_t *sel;
	size_t nsel, dups = 0;
	int r = select_records(t, wanted, &sel, &nsel);

	if (r)
		return r < 0 ? kp_err_set(err, "out of memory") : 1;
	recs = malloc((nsel ? nsel : 1) * sizeof(*recs));
	if (!recs) {
		free(sel);
		return kp_err_set(err, "out of memory");
	}
	/*
	 * checked whole before anything is added: a damaged table adds nothing. A whole table by
	 * its one CRC (kp_bsymtab_check_all()), the records of @wanted's names by theirs, which
	 * kp_bsymtab_find() and kp_bsymtab_next() checked.
	 */
	if (!wanted && kp_bsymtab_check_all(t) < 0)
		r = 1;
	for (size_t i = 0; i < nsel && r == 0; i++)
		if (kp_bsymtab_get(t, sel[i], true, &recs[i]) < 0 ||
		    recs[i].table > KP_KSYMTAB_UNUSED_GPL)
			r = 1;
	/*
	 * A whole table into a base that holds entries already (add_whole() adopts it into an
	 * empty one): its strings copied into the base at once and used there, the base's index
	 * sized once, instead of a copy per string and a rehash per doubling.
	 */
	if (r == 0 && !wanted) {
		str = kp_base_arena_copy(b, t->str, t->nstr);
		if (!str || kp_base_reserve(b, nsel) < 0)
			r = kp_err_set(err, "out of memory");
	}
	if (r == 0 && (nsel || !wanted)) {
		kp_base_begin_load(b, KP_SRC_SYMVERS);
		kp_base_borrow_strings(b, str != NULL);
		for (size_t i = 0; i < nsel && r == 0; i++) {
			struct kp_ksym k = { .name = in_copy(t, str, recs[i].name),
					     .owner = in_copy(t, str, recs[i].owner),
					     .ns = in_copy(t, str, recs[i].ns),
					     .table = (enum kp_export_table)recs[i].table,
					     .gpl_only = recs[i].gpl_only,
					     .ns_known = recs[i].ns_known,
					     .has_crc = recs[i].has_crc,
					     .crc = recs[i].crc };

			r = kp_base_add_hashed(b, &k, recs[i].hash, err);
			dups += recs[i].repeats;
		}
		kp_base_borrow_strings(b, false);
		kp_base_note_duplicates(b, dups);
	}
	free(recs);
	free(sel);
	return r;
}

/*
 * The whole table @t (Module.symvers, lying in @map or in the malloc()ed @heap) into @b as
 * one load: taken as it lies when @b is empty (kp_base_adopt_table(): @b then owns @map or
 * @heap, *@taken set), else added record by record. 0, 1 when the table is damaged or
 * forged (nothing added), -1 with @err.
 */
static int add_whole(struct kp_kernel_base *b, const struct kp_bsymtab *t, struct kp_base_map *map,
		     void *heap, bool *taken, struct kp_err *err)
{
	uint64_t repeats;
	int r;

	*taken = false;
	if (kp_base_count(b))
		return add_from(b, t, NULL, err);
	if (kp_bsymtab_check_all(t) < 0 ||
	    kp_bsymtab_check_index(t, KP_KSYMTAB_UNUSED_GPL, &repeats) < 0)
		return 1;
	r = kp_base_adopt_table(b, t, repeats, map, heap);
	if (r < 0)
		return kp_err_set(err, "out of memory");
	if (r == 1) /* not empty after all (a load that added nothing is still one) */
		return add_from(b, t, NULL, err);
	*taken = true;
	return 0;
}

/*
 * False when the start of @in already says kp_base_load() does not read it as Module.symvers
 * (a vmlinux, a plain System.map or kallsyms): it goes to kp_base_load() without being read
 * and hashed for a key first (a vmlinux is tens of megabytes).
 */
static bool may_be_symvers(const struct kp_base_input *in)
{
	unsigned char head[4096];
	ssize_t n = kp_pread_all(in->fd, head, sizeof(head), 0);

	if (n < 0 || ((size_t)n >= SELFMAG && !memcmp(head, ELFMAG, SELFMAG)))
		return false;
	/* compressed: told after decompression (encode()) */
	return kp_detect_compression(head, (size_t)n) != KP_COMP_NONE ||
	       kp_base_text_is_symvers(head, (size_t)n) ||
	       ((size_t)n == sizeof(head) && kp_base_text_undecided(head, (size_t)n));
}

/*
 * Adds the Module.symvers @path through @cache under the entry kind @kind; @sniff: as
 * kp_base_load() (plain on whatever it would not read as Module.symvers), else as
 * load_plain().
 */
static int load_cached(struct kp_kernel_base *b, const struct kp_root_dir *root, const char *path,
		       struct kp_base_cache *cache, const struct kp_symset *wanted,
		       const char *kind, bool sniff, struct kp_err *err)
{
	struct kp_base_input in = { .fd = -1 }, *inp = &in;
	struct kp_err why = { 0 };
	struct kp_base_key key;
	struct kp_base_map map = { 0 };
	struct kp_bsymtab t;
	unsigned char *tab = NULL;
	size_t tlen = 0;
	bool taken = false;
	int r = 1;

	if (kp_base_input_open_in(&in, root, path, &why) < 0 || (sniff && !may_be_symvers(&in)) ||
	    kp_base_key_make(&key, kind, &inp, 1, KP_FILTERED_MAX_SYMVERS, &why) < 0) {
		kp_base_input_close(&in);
		return 1;
	}
	if (kp_base_cache_get(cache, &key, &map) == 1) {
		if (kp_bsymtab_open(&t, map.data, map.len) == 0)
			r = wanted ? add_from(b, &t, wanted, err)
				   : add_whole(b, &t, &map, NULL, &taken, err);
		/* unless the base took it (emptied then) */
		kp_base_map_release(&map);
		if (r == 1) /* damaged: parsed and stored again */
			kp_base_cache_drop(cache, &key);
	}
	if (r == 1) {
		kp_base_cache_note_miss(cache);
		if (kp_base_input_read(&in, KP_FILTERED_MAX_SYMVERS, &why) == 0 &&
		    encode(in.raw, in.len, sniff, &tab, &tlen) == 0 &&
		    kp_bsymtab_open(&t, tab, tlen) == 0) {
			key.storable = key.storable && !in.changed;
			kp_base_cache_put(cache, &key, tab, tlen);
			r = wanted ? add_from(b, &t, wanted, err)
				   : add_whole(b, &t, NULL, tab, &taken, err);
		}
		if (!taken)
			free(tab);
	}
	kp_base_input_close(&in);
	return r;
}

int kp_base_load_symvers_cached(struct kp_kernel_base *b, const struct kp_root_dir *root,
				const char *path, struct kp_base_cache *cache,
				const struct kp_symset *wanted, struct kp_err *err)
{
	int r = cache ? load_cached(b, root, path, cache, wanted, "symvers", false, err) : 1;

	return r == 1 ? load_plain(b, root, path, wanted, err) : r;
}

int kp_base_load_cached(struct kp_kernel_base *b, const char *path, struct kp_base_cache *cache,
			struct kp_err *err)
{
	/* its own kind: a "symvers" entry may hold a file kp_base_load() sniffs otherwise */
	int r = cache ? load_cached(b, NULL, path, cache, NULL, "symvers-any", true, err) : 1;

	return r == 1 ? kp_base_load(b, path, err) : r;
}
