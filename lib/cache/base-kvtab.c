// SPDX-License-Identifier: LGPL-2.1-or-later
/* The base cache's table of names and values (base-kvtab.h). */
#include "base-kvtab.h"

#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "util/crc32.h"

#define MAGIC	 "KPKVTAB1"
#define HEAD_LEN 24
#define PAIR_LEN 16
#define ATTR_LEN 8
#define NONE	 UINT32_MAX

/* CRC-32 of a pair's fields and its two strings; false when one does not fit @nstr. */
static bool pair_crc(const unsigned char *p, const char *str, size_t nstr, uint32_t *out)
{
	uint32_t crc = kp_crc32(0, p, PAIR_LEN - 4);

	for (int f = 0; f < 2; f++) {
		uint32_t off = kp_load32(p + 4 * f, false);

		if (off >= nstr)
			return false;
		crc = kp_crc32(crc, str + off, strlen(str + off) + 1);
	}
	*out = (uint32_t)crc;
	return true;
}

static int by_name(const void *a, const void *b)
{
	const struct kp_kv *x = *(const struct kp_kv *const *)a,
			   *y = *(const struct kp_kv *const *)b;

	return strcmp(x->name, y->name);
}

struct out {
	unsigned char *buf;
	size_t str, len; /* where the strings start, bytes written */
};

static uint32_t put_string(struct out *o, const char *s)
{
	size_t n = strlen(s) + 1, off = o->len - o->str;

	memcpy(o->buf + o->len, s, n);
	o->len += n;
	return (uint32_t)off;
}

int kp_kvtab_encode(const struct kp_kv *pairs, size_t n, const struct kp_kv *attrs, size_t nattrs,
		    unsigned char **out, size_t *len)
{
	const struct kp_kv **sorted;
	struct out o = { 0 };
	uint64_t total, strbytes = 1;

	*out = NULL;
	*len = 0;
	for (size_t i = 0; i < n; i++)
		strbytes += strlen(pairs[i].name) + strlen(pairs[i].value) + 2;
	for (size_t i = 0; i < nattrs; i++)
		strbytes +=
			strlen(attrs[i].name) + (attrs[i].value ? strlen(attrs[i].value) : 0) + 2;
	total = HEAD_LEN + (uint64_t)n * PAIR_LEN + (uint64_t)nattrs * ATTR_LEN + strbytes;
	if (strbytes > UINT32_MAX - 1 || total > SIZE_MAX || n >= UINT32_MAX / PAIR_LEN ||
	    nattrs >= 256)
		return -1;
	sorted = malloc((n ? n : 1) * sizeof(*sorted));
	o.buf = malloc((size_t)total);
	if (!sorted || !o.buf) {
		free(sorted);
		free(o.buf);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		sorted[i] = &pairs[i];
	qsort(sorted, n, sizeof(*sorted), by_name);
	for (size_t i = 1; i < n; i++)
		if (!strcmp(sorted[i - 1]->name, sorted[i]->name)) {
			free(sorted);
			free(o.buf);
			return -1;
		}
	memcpy(o.buf, MAGIC, 8);
	kp_store32(o.buf + 8, (uint32_t)n);
	kp_store32(o.buf + 12, (uint32_t)nattrs);
	kp_store32(o.buf + 16, (uint32_t)strbytes);
	o.str = o.len = HEAD_LEN + n * PAIR_LEN + nattrs * ATTR_LEN;
	for (size_t i = 0; i < n; i++) {
		unsigned char *p = o.buf + HEAD_LEN + i * PAIR_LEN;

		kp_store32(p, put_string(&o, sorted[i]->name));
		kp_store32(p + 4, put_string(&o, sorted[i]->value));
		kp_store32(p + 8, sorted[i]->line);
	}
	for (size_t i = 0; i < nattrs; i++) {
		unsigned char *p = o.buf + HEAD_LEN + n * PAIR_LEN + i * ATTR_LEN;

		kp_store32(p, put_string(&o, attrs[i].name));
		kp_store32(p + 4, attrs[i].value ? put_string(&o, attrs[i].value) : NONE);
	}
	o.buf[o.len++] = '\0';
	for (size_t i = 0; i < n; i++) {
		unsigned char *p = o.buf + HEAD_LEN + i * PAIR_LEN;
		uint32_t crc = 0;

		pair_crc(p, (const char *)o.buf + o.str, o.len - o.str, &crc);
		kp_store32(p + 12, crc);
	}
	kp_store32(o.buf + 20, kp_crc32(0, o.buf + HEAD_LEN + n * PAIR_LEN, (nattrs * ATTR_LEN)));
	free(sorted);
	*out = o.buf;
	*len = o.len;
	return 0;
}

int kp_kvtab_open(struct kp_kvtab *t, const void *p, size_t len)
{
	const unsigned char *b = p;
	uint64_t need;

	memset(t, 0, sizeof(*t));
	if (len < HEAD_LEN || memcmp(b, MAGIC, 8))
		return -1;
	t->n = kp_load32(b + 8, false);
	t->nattrs = kp_load32(b + 12, false);
	t->nstr = kp_load32(b + 16, false);
	need = HEAD_LEN + (uint64_t)t->n * PAIR_LEN + (uint64_t)t->nattrs * ATTR_LEN + t->nstr;
	if (need != len || !t->nstr)
		return -1;
	t->pairs = b + HEAD_LEN;
	t->attrs = t->pairs + (size_t)t->n * PAIR_LEN;
	t->str = (const char *)(t->attrs + (size_t)t->nattrs * ATTR_LEN);
	if (t->str[t->nstr - 1] != '\0' ||
	    kp_load32(b + 20, false) != kp_crc32(0, t->attrs, (t->nattrs * ATTR_LEN)))
		return -1;
	return 0;
}

static const char *string_at(const struct kp_kvtab *t, uint32_t off)
{
	return off < t->nstr ? t->str + off : NULL;
}

int kp_kvtab_find(const struct kp_kvtab *t, const char *name, struct kp_kv *out)
{
	uint32_t lo = 0, hi = t->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const unsigned char *p = t->pairs + (size_t)mid * PAIR_LEN;
		const char *s = string_at(t, kp_load32(p, false));
		uint32_t crc;
		int c;

		/* every pair the search compares is checked: a damaged one could misdirect it */
		if (!pair_crc(p, t->str, t->nstr, &crc) || crc != kp_load32(p + 12, false))
			return -1;
		c = strcmp(name, s);
		if (!c) {
			out->name = s;
			out->value = string_at(t, kp_load32(p + 4, false));
			out->line = kp_load32(p + 8, false);
			return out->value ? 1 : -1;
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return 0;
}

int kp_kvtab_attr(const struct kp_kvtab *t, const char *name, const char **value)
{
	*value = NULL;
	for (uint32_t i = 0; i < t->nattrs; i++) {
		const unsigned char *p = t->attrs + (size_t)i * ATTR_LEN;
		const char *s = string_at(t, kp_load32(p, false));
		uint32_t v = kp_load32(p + 4, false);

		if (!s)
			return -1;
		if (strcmp(s, name))
			continue;
		if (v == NONE)
			return 1;
		*value = string_at(t, v);
		return *value ? 1 : -1;
	}
	return 0;
}
