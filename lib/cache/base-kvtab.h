/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A table of names and values in the form the base cache stores (base-cache.h), used where
 * it lies: a kernel configuration's last assignment of each CONFIG_ symbol (with its line),
 * sorted by name for a binary search, and a few named strings of the whole file (its
 * header's arch and version). So a run asks for the 40 symbols the loader rules read
 * without parsing 9,500 lines.
 *
 * Layout (host byte order, 32-bit fields):
 *   header   magic "KPKVTAB1", pair count, attribute count, string bytes, CRC-32 of attrs
 *   pairs    name, value (string offsets), line, CRC-32 of these and of both strings;
 *            sorted by name (strcmp), names unique
 *   attrs    name, value (string offsets; value UINT32_MAX: none)
 *   strings  NUL-terminated, the last byte NUL
 * The attributes are checked when the table is opened, each pair a search compares when it
 * compares it (a damaged one could misdirect the search: the search then says so, -1,
 * instead of answering); every offset is bounds-checked.
 */
#ifndef KP_BASE_KVTAB_H
#define KP_BASE_KVTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kp_kv {
	const char *name;
	const char *value; /* an attribute's may be NULL */
	uint32_t line;
};

/*
 * Encodes @n pairs (any order; names unique) and @nattrs attributes into a malloc'ed table
 * (*@out, *@len). 0, or -1 (memory, a repeated name).
 */
int kp_kvtab_encode(const struct kp_kv *pairs, size_t n, const struct kp_kv *attrs, size_t nattrs,
		    unsigned char **out, size_t *len);

struct kp_kvtab {
	const unsigned char *pairs, *attrs;
	const char *str;
	uint32_t n, nattrs, nstr;
};

/* Opens the table in @p (@len bytes): header, sizes, attributes checked. 0, or -1. */
int kp_kvtab_open(struct kp_kvtab *t, const void *p, size_t len);
/* The pair named @name into @out: 1, 0 when absent, -1 when the table is damaged. */
int kp_kvtab_find(const struct kp_kvtab *t, const char *name, struct kp_kv *out);
/* The attribute @name's value into *@value (NULL: none): 1, 0 absent, -1 damaged. */
int kp_kvtab_attr(const struct kp_kvtab *t, const char *name, const char **value);

#endif
