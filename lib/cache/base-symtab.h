/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A table of kernel exports in the form the base cache stores (base-cache.h): used where it
 * lies, in a mapped entry, without parsing. The records are the exports as a loader added
 * them to a kernel base (kernel/kernel-base.h), in load order, one per (name, owner), with
 * how many more times the source repeated that pair; a hash index on the name finds the
 * records of one name, in load order, without touching the others. So a caller that needs
 * a few hundred of 27,000 exports (the hook) reads a few pages, and a kernel base that takes
 * the whole table answers its lookups from it without building an index of its own
 * (kp_bsymtab_check_index(), kp_bsymtab_head()).
 *
 * Layout (host byte order, 32-bit fields):
 *   header   magic "KPSYMTB3", record count, slot count (a power of two, at least 16 and
 *            above the record count), string bytes, CRC-32 of the slots, CRC-32 of the
 *            records and the strings (one after the other)
 *   records  name, owner, namespace (UINT32_MAX: none) as string offsets, CRC, next
 *            record of the same name (index + 1, 0: last), repeats, table, flags (two bytes,
 *            then two zero bytes), kp_hash_string() of the name, and the CRC-32 of these
 *            fields and of the strings they name
 *   slots    first record of a name (index + 1, 0: empty), by kp_hash_string(name), linear
 *            probing
 *   strings  NUL-terminated, the last byte NUL
 * The slots are checked whole when the table is opened, and each record (with its strings)
 * when it is read or compared: whatever a lookup relies on is checked, and a damaged table
 * says so (-1) instead of answering; every offset and index is bounds-checked. A reader of
 * every record (check, graph) checks the records and strings by their one CRC instead
 * (kp_bsymtab_check_all()) and the index's structure once (kp_bsymtab_check_index()), then
 * reads without further checks.
 * KPSYMTB2 (no vmlinux flag, slots not checked whole before use) is refused: parsed again.
 */
#ifndef KP_BASE_SYMTAB_H
#define KP_BASE_SYMTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/util.h"

/* One export as a loader added it (the fields of struct kp_ksym it depends on). */
struct kp_bsym {
	const char *name;
	const char *owner;
	const char *ns; /* NULL: none */
	uint32_t crc;
	uint32_t repeats; /* further lines of the same name and owner in the same source */
	uint32_t hash;	  /* kp_hash_string(name) (kp_bsymtab_get(); ignored by the encoder) */
	uint8_t table;	  /* enum kp_export_table */
	bool vmlinux;	  /* owned by vmlinux */
	bool gpl_only;
	bool has_crc;
	bool ns_known;
};

/* Encodes @n records (load order) into a malloc'ed table (*@out, *@len). 0, or -1 (memory). */
int kp_bsymtab_encode(const struct kp_bsym *recs, size_t n, unsigned char **out, size_t *len);

struct kp_bsymtab {
	const unsigned char *recs;
	const uint32_t *slots;
	const char *str;
	uint32_t nrec, nslots, nstr;
	uint32_t body_crc; /* of the records and the strings, as stored */
};

/* Opens the table in @p (@len bytes): its header and region sizes checked. 0, or -1. */
int kp_bsymtab_open(struct kp_bsymtab *t, const void *p, size_t len);
/*
 * Record @i (< t->nrec) into @out, its strings pointing into the table. 0, or -1 (damaged).
 * @checked: kp_bsymtab_find() or kp_bsymtab_next() returned it, which checked its CRC, or
 * kp_bsymtab_check_all() held (the offsets are still bounds-checked).
 */
int kp_bsymtab_get(const struct kp_bsymtab *t, uint32_t i, bool checked, struct kp_bsym *out);
/*
 * 0 when the records and strings match their stored CRC (then every record may be read with
 * kp_bsymtab_get(@checked true)), -1 when the table is damaged.
 */
int kp_bsymtab_check_all(const struct kp_bsymtab *t);
/*
 * The first record of the @len-byte name @name (its index + 1; that record and every one
 * compared on the way checked), 0 when none, -1 when the index is damaged. Follow with
 * kp_bsymtab_next().
 */
int64_t kp_bsymtab_find(const struct kp_bsymtab *t, const char *name, size_t len);
/*
 * The next record of the same name after record @i (index + 1; record @i is checked, the one
 * returned by the next call), 0 at the end, -1 damaged.
 */
int64_t kp_bsymtab_next(const struct kp_bsymtab *t, uint32_t i);

/*
 * For a reader of the whole table, after kp_bsymtab_check_all(): checks the structure of
 * every record and of the index, so that the unchecked reads below stay in bounds and find
 * every record: offsets inside the strings (a namespace never empty), flags and table known
 * (at most @max_table), every chain going forward to a record of the same name, each record
 * reached once, each first record of a name from its own slot, found from its hash before an
 * empty slot and after no other first record of that name, and no other
 * slot full. One pass over the records (a probe for each first one) and one over the slots.
 * The names' hashes are not computed again: like every other field, they are what the
 * CRC-checked entry says. 0 with the sum of the records' repeats in *@repeats, or -1
 * (damaged or forged: refuse the table).
 */
int kp_bsymtab_check_index(const struct kp_bsymtab *t, unsigned max_table, uint64_t *repeats);

/*
 * Reads of a table that passed kp_bsymtab_check_index(): no check, no failure. Inline: a
 * kernel base answers every lookup and interning of a check with them (400,000 on a tree).
 */
#define KP_BSYMTAB_REC_LEN   36
#define KP_BSYMTAB_F_VMLINUX 8

/* Record @i (index) into @out, as kp_bsymtab_get() reads it. */
void kp_bsymtab_read(const struct kp_bsymtab *t, uint32_t i, struct kp_bsym *out);

static inline const unsigned char *kp_bsymtab_rec(const struct kp_bsymtab *t, uint32_t i)
{
	return t->recs + (size_t)i * KP_BSYMTAB_REC_LEN;
}

/*
 * The first record (index + 1) of the NUL-terminated @name whose hash is @hash, 0 when none
 * (a name interned by kp_bsymtab_find_bytes() is the table's own: no compare).
 */
static inline uint32_t kp_bsymtab_head(const struct kp_bsymtab *t, const char *name, uint32_t hash)
{
	const uint32_t mask = t->nslots - 1;

	for (uint32_t i = hash & mask;; i = (i + 1) & mask) {
		uint32_t rec = t->slots[i];
		const unsigned char *p;
		const char *s;

		if (!rec)
			return 0;
		p = kp_bsymtab_rec(t, rec - 1);
		if (kp_load32(p + 28, false) != hash)
			continue;
		s = t->str + kp_load32(p, false);
		if (s == name || !strcmp(s, name))
			return rec;
	}
}

/* The table's copy of the @len bytes at @name (not terminated) if a record has that name. */
static inline const char *kp_bsymtab_find_bytes(const struct kp_bsymtab *t, const char *name,
						size_t len, uint32_t hash)
{
	const uint32_t mask = t->nslots - 1;

	for (uint32_t i = hash & mask;; i = (i + 1) & mask) {
		uint32_t rec = t->slots[i], off;
		const unsigned char *p;

		if (!rec)
			return NULL;
		p = kp_bsymtab_rec(t, rec - 1);
		if (kp_load32(p + 28, false) != hash)
			continue;
		off = kp_load32(p, false);
		/* the name's end inside the strings: then its bytes are too */
		if (len < t->nstr - off && t->str[off + len] == '\0' &&
		    !memcmp(t->str + off, name, len))
			return t->str + off;
	}
}

/* Record @i's next record of the same name (index + 1, 0: the last). */
static inline uint32_t kp_bsymtab_link(const struct kp_bsymtab *t, uint32_t i)
{
	return kp_load32(kp_bsymtab_rec(t, i) + 16, false);
}

/* Record @i's name. */
static inline const char *kp_bsymtab_name(const struct kp_bsymtab *t, uint32_t i)
{
	return t->str + kp_load32(kp_bsymtab_rec(t, i), false);
}

/* Record @i's owner is vmlinux. */
static inline bool kp_bsymtab_vmlinux(const struct kp_bsymtab *t, uint32_t i)
{
	return kp_bsymtab_rec(t, i)[25] & KP_BSYMTAB_F_VMLINUX;
}

#endif
