/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A table of kernel exports in the form the base cache stores (base-cache.h): used where it
 * lies, in a mapped entry, without parsing. The records are the exports as a loader added
 * them to a kernel base (kernel/kernel-base.h), in load order, one per (name, owner), with
 * how many more times the source repeated that pair; a hash index on the name finds the
 * records of one name, in load order, without touching the others. So a caller that needs
 * a few hundred of 27,000 exports (the hook) reads a few pages.
 *
 * Layout (host byte order, 32-bit fields):
 *   header   magic "KPSYMTB2", record count, slot count (a power of two), string bytes,
 *            CRC-32 of the slots, CRC-32 of the records and the strings (one after the other)
 *   records  name, owner, namespace (UINT32_MAX: none) as string offsets, CRC, next
 *            record of the same name (index + 1, 0: last), repeats, table, flags (two bytes,
 *            then two zero bytes), kp_hash_string() of the name, and the CRC-32 of these
 *            fields and of the strings they name
 *   slots    first record of a name (index + 1, 0: empty), by kp_hash_string(name)
 *   strings  NUL-terminated, the last byte NUL
 * The slots are checked whole when the table is opened, and each record (with its strings)
 * when it is read or compared: whatever a lookup relies on is checked, and a damaged table
 * says so (-1) instead of answering; every offset and index is bounds-checked. A reader of
 * every record (check, graph) checks the records and strings by their one CRC instead
 * (kp_bsymtab_check_all()): one pass over 1.4 MB, not 27,000 record CRCs.
 */
#ifndef KP_BASE_SYMTAB_H
#define KP_BASE_SYMTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One export as a loader added it (the fields of struct kp_ksym it depends on). */
struct kp_bsym {
	const char *name;
	const char *owner;
	const char *ns; /* NULL: none */
	uint32_t crc;
	uint32_t repeats; /* further lines of the same name and owner in the same source */
	uint32_t hash;	  /* kp_hash_string(name) (kp_bsymtab_get(); ignored by the encoder) */
	uint8_t table;	  /* enum kp_export_table */
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

#endif
