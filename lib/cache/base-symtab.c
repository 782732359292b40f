// SPDX-License-Identifier: LGPL-2.1-or-later
/* The base cache's table of kernel exports (base-symtab.h). */
#include "base-symtab.h"

#include <stdlib.h>
#include <string.h>

#include "util/crc32.h"
#include "util/symbol-index.h"
#include "util/util.h"

#define MAGIC	   "KPSYMTB3"
#define HEAD_LEN   28
#define REC_LEN	   KP_BSYMTAB_REC_LEN
#define NO_NS	   UINT32_MAX
#define F_GPL	   1
#define F_HAS_CRC  2
#define F_NS_KNOWN 4
#define F_VMLINUX  KP_BSYMTAB_F_VMLINUX
#define F_ALL	   15

struct strings {
	char *buf;
	size_t len, cap;
	struct kp_symbol_index seen; /* owners and namespaces written once */
	char **keys;		     /* the index's keys (owned copies) */
	size_t nkeys, kcap;
};

/* The offset of @s in the string region; owners and namespaces (@share) are written once. */
static int64_t put_string(struct strings *st, const char *s, bool share)
{
	size_t n = strlen(s) + 1, off = st->len;
	const struct kp_symbol_index_entry *e;
	char *key;

	if (share && (e = kp_symbol_index_find(&st->seen, s)))
		return (int64_t)(uintptr_t)e->value;
	if (st->len + n > UINT32_MAX - 1 || kp_grow(&st->buf, &st->cap, st->len + n, 1) < 0)
		return -1;
	memcpy(st->buf + st->len, s, n);
	st->len += n;
	if (!share)
		return (int64_t)off;
	key = strdup(s);
	if (!key || kp_grow(&st->keys, &st->kcap, st->nkeys + 1, sizeof(*st->keys)) < 0) {
		free(key);
		return -1;
	}
	st->keys[st->nkeys++] = key;
	if (kp_symbol_index_add(&st->seen, key, (void *)(uintptr_t)off) < 0)
		return -1;
	return (int64_t)off;
}

/* CRC-32 of a record's fields and the strings it names (NULL: one does not fit @nstr). */
static bool rec_crc(const unsigned char *p, const char *str, size_t nstr, uint32_t *out)
{
	/*
	 * The CRC of the fields and strings one after the other: gathered into one buffer when
	 * they fit (one kp_crc32() call of ~80 bytes folds instead of four small ones), else
	 * chained: the same value either way.
	 */
	unsigned char buf[512];
	size_t len = REC_LEN - 4;
	uint32_t crc;

	memcpy(buf, p, len);
	crc = 0;
	for (int f = 0; f < 3; f++) {
		uint32_t off = kp_load32(p + 4 * f, false);
		size_t n;

		if (f == 2 && off == NO_NS)
			continue;
		if (off >= nstr)
			return false;
		n = strlen(str + off) + 1; /* the table's last byte is a NUL (kp_bsymtab_open()) */
		if (len + n > sizeof(buf)) {
			crc = kp_crc32(crc, buf, len);
			len = 0;
			if (n > sizeof(buf)) {
				crc = kp_crc32(crc, str + off, n);
				continue;
			}
		}
		memcpy(buf + len, str + off, n);
		len += n;
	}
	*out = kp_crc32(crc, buf, len);
	return true;
}

int kp_bsymtab_encode(const struct kp_bsym *recs, size_t n, unsigned char **out, size_t *len)
{
	struct strings st = { 0 };
	unsigned char *recbuf = NULL, *buf = NULL;
	uint32_t *slots = NULL, *last = NULL;
	size_t nslots = 16, total;
	int r = -1;

	*out = NULL;
	*len = 0;
	if (n >= UINT32_MAX / 4)
		return -1;
	while (nslots < 2 * n)
		nslots *= 2;
	recbuf = calloc(n ? n : 1, REC_LEN);
	slots = calloc(nslots, sizeof(*slots));
	last = calloc(nslots, sizeof(*last)); /* the last record of each slot's name */
	if (!recbuf || !slots || !last || kp_symbol_index_init(&st.seen, 4096) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		const struct kp_bsym *s = &recs[i];
		unsigned char *p = recbuf + i * REC_LEN;
		int64_t name = put_string(&st, s->name, false);
		int64_t owner = put_string(&st, s->owner, true);
		int64_t ns = s->ns ? put_string(&st, s->ns, true) : NO_NS;
		uint32_t hash = kp_hash_string(s->name);
		size_t mask = nslots - 1, j;

		if (name < 0 || owner < 0 || ns < 0)
			goto out;
		kp_store32(p, (uint32_t)name);
		kp_store32(p + 4, (uint32_t)owner);
		kp_store32(p + 8, (uint32_t)ns);
		kp_store32(p + 12, s->crc);
		kp_store32(p + 16, 0);
		kp_store32(p + 20, s->repeats);
		p[24] = s->table;
		p[25] = (uint8_t)((s->gpl_only ? F_GPL : 0) | (s->has_crc ? F_HAS_CRC : 0) |
				  (s->ns_known ? F_NS_KNOWN : 0) | (s->vmlinux ? F_VMLINUX : 0));
		kp_store32(p + 28, hash);
		for (j = hash & mask; slots[j]; j = (j + 1) & mask)
			if (!strcmp(st.buf + kp_load32(recbuf + (size_t)(slots[j] - 1) * REC_LEN,
						       false),
				    s->name))
				break;
		if (!slots[j])
			slots[j] = (uint32_t)i + 1;
		else /* chained after the name's last record: load order */
			kp_store32(recbuf + (size_t)(last[j] - 1) * REC_LEN + 16, (uint32_t)i + 1);
		last[j] = (uint32_t)i + 1;
	}
	if (kp_grow(&st.buf, &st.cap, st.len + 1, 1) < 0)
		goto out;
	st.buf[st.len++] = '\0'; /* the region ends with a NUL: every string is terminated */
	total = HEAD_LEN + n * REC_LEN + nslots * 4 + st.len;
	buf = malloc(total);
	if (!buf)
		goto out;
	for (size_t i = 0; i < n; i++) {
		unsigned char *p = recbuf + i * REC_LEN;
		uint32_t crc = 0;

		rec_crc(p, st.buf, st.len, &crc);
		kp_store32(p + REC_LEN - 4, crc);
	}
	memcpy(buf, MAGIC, 8);
	kp_store32(buf + 8, (uint32_t)n);
	kp_store32(buf + 12, (uint32_t)nslots);
	kp_store32(buf + 16, (uint32_t)st.len);
	kp_store32(buf + 20, kp_crc32(0, slots, nslots * 4));
	kp_store32(buf + 24, kp_crc32(kp_crc32(0, recbuf, n * REC_LEN), st.buf, st.len));
	memcpy(buf + HEAD_LEN, recbuf, n * REC_LEN);
	memcpy(buf + HEAD_LEN + n * REC_LEN, slots, nslots * 4);
	memcpy(buf + HEAD_LEN + n * REC_LEN + nslots * 4, st.buf, st.len);
	*out = buf;
	*len = total;
	r = 0;
out:
	for (size_t i = 0; i < st.nkeys; i++)
		free(st.keys[i]);
	free(st.keys);
	kp_symbol_index_release(&st.seen);
	free(st.buf);
	free(recbuf);
	free(slots);
	free(last);
	return r;
}

int kp_bsymtab_open(struct kp_bsymtab *t, const void *p, size_t len)
{
	const unsigned char *b = p;
	uint64_t need;

	memset(t, 0, sizeof(*t));
	if (len < HEAD_LEN || memcmp(b, MAGIC, 8))
		return -1;
	t->nrec = kp_load32(b + 8, false);
	t->nslots = kp_load32(b + 12, false);
	t->nstr = kp_load32(b + 16, false);
	t->body_crc = kp_load32(b + 24, false);
	need = HEAD_LEN + (uint64_t)t->nrec * REC_LEN + (uint64_t)t->nslots * 4 + t->nstr;
	/* more slots than records (an encoded table has empty ones), at least 16 */
	if (need != len || t->nslots < 16 || (t->nslots & (t->nslots - 1)) ||
	    t->nslots <= t->nrec || !t->nstr)
		return -1;
	t->recs = b + HEAD_LEN;
	/* HEAD_LEN and REC_LEN keep the slots 4-byte aligned in a page-aligned mapping */
	t->slots = (const uint32_t *)(const void *)(t->recs + (size_t)t->nrec * REC_LEN);
	t->str = (const char *)(t->slots + t->nslots);
	if (t->str[t->nstr - 1] != '\0')
		return -1;
	/* the index, whole (256 KiB for 27,000 exports): a damaged slot could hide a name */
	return kp_load32(b + 20, false) == kp_crc32(0, t->slots, (size_t)t->nslots * 4) ? 0 : -1;
}

/* Record @i (index) when its CRC holds, else NULL. */
static const unsigned char *record(const struct kp_bsymtab *t, uint32_t i)
{
	const unsigned char *p = t->recs + (size_t)i * REC_LEN;
	uint32_t crc;

	if (i >= t->nrec || !rec_crc(p, t->str, t->nstr, &crc) ||
	    crc != kp_load32(p + REC_LEN - 4, false))
		return NULL;
	return p;
}

static const char *string_at(const struct kp_bsymtab *t, uint32_t off)
{
	return off < t->nstr ? t->str + off : NULL;
}

int kp_bsymtab_get(const struct kp_bsymtab *t, uint32_t i, bool checked, struct kp_bsym *out)
{
	const unsigned char *p;
	uint32_t ns;

	memset(out, 0, sizeof(*out));
	if (i >= t->nrec)
		return -1;
	p = checked ? t->recs + (size_t)i * REC_LEN : record(t, i);
	if (!p)
		return -1;
	/* its string offsets and flags in bounds, it reads as kp_bsymtab_read() reads it */
	ns = kp_load32(p + 8, false);
	if (!string_at(t, kp_load32(p, false)) || !string_at(t, kp_load32(p + 4, false)) ||
	    (ns != NO_NS && !string_at(t, ns)) || p[25] & ~(unsigned)F_ALL || p[26] || p[27])
		return -1;
	kp_bsymtab_read(t, i, out);
	return 0;
}

int kp_bsymtab_check_all(const struct kp_bsymtab *t)
{
	uint32_t crc = kp_crc32(kp_crc32(0, t->recs, (size_t)t->nrec * REC_LEN), t->str, t->nstr);

	return crc == t->body_crc ? 0 : -1;
}

int64_t kp_bsymtab_find(const struct kp_bsymtab *t, const char *name, size_t len)
{
	uint32_t mask = t->nslots - 1, i = kp_hash_bytes(name, len) & mask;

	for (uint32_t probes = 0; probes < t->nslots; probes++, i = (i + 1) & mask) {
		uint32_t r = t->slots[i];
		const unsigned char *p;
		const char *s;

		if (!r)
			return 0;
		p = r <= t->nrec ? record(t, r - 1) : NULL;
		if (!p)
			return -1;
		s = t->str + kp_load32(p, false);
		if (!strncmp(s, name, len) && s[len] == '\0')
			return r;
	}
	return 0;
}

int64_t kp_bsymtab_next(const struct kp_bsymtab *t, uint32_t i)
{
	const unsigned char *p = record(t, i);
	uint32_t r;

	if (!p)
		return -1;
	r = kp_load32(p + 16, false);
	/* later in load order, so a damaged chain cannot loop */
	if (r > t->nrec || (r && r <= i + 1))
		return -1;
	return r;
}

/*
 * Whether the first record @i of a name (hash @h) is found from @h: its slot reached before an
 * empty one (there is one: fewer full slots than slots), no slot on the way holding another
 * first record of that name.
 */
static bool head_found(const struct kp_bsymtab *t, uint32_t i, uint32_t name, uint32_t h)
{
	const uint32_t mask = t->nslots - 1, nrec = t->nrec;

	for (uint32_t j = h & mask;; j = (j + 1) & mask) {
		uint32_t rec = t->slots[j];
		const unsigned char *p;

		if (rec == i + 1)
			return true;
		if (!rec || rec > nrec)
			return false;
		/* a record of the same hash: its name another (rare: the hash is 32 bits) */
		p = t->recs + (size_t)(rec - 1) * REC_LEN;
		if (kp_load32(p + 28, false) == h &&
		    (kp_load32(p, false) >= t->nstr || name >= t->nstr ||
		     !strcmp(t->str + kp_load32(p, false), t->str + name)))
			return false;
	}
}

/*
 * Whether record @i (name at @name) may chain to @next (index + 1): forward (no loop), to a
 * record of the same name, that no other record chains to (@linked counts them).
 */
static bool chain_ok(const struct kp_bsymtab *t, uint32_t i, uint32_t name, uint32_t next,
		     uint8_t *linked)
{
	uint32_t other;

	if (next <= i + 1 || next > t->nrec || linked[next - 1]++)
		return false;
	other = kp_load32(t->recs + (size_t)(next - 1) * REC_LEN, false);
	return name < t->nstr && other < t->nstr && !strcmp(t->str + name, t->str + other);
}

/*
 * The full slots (nslots a power of two, at least 16), four at a time: 65,536 slots for
 * 27,000 exports, the one pass over all of them a whole load makes.
 */
static uint32_t full_slots(const struct kp_bsymtab *t)
{
	typedef uint32_t v4 __attribute__((vector_size(16)));
	v4 acc = { 0 }, zero = { 0 };
	uint32_t full;

	for (uint32_t j = 0; j < t->nslots; j += 4) {
		v4 x;

		memcpy(&x, t->slots + j, sizeof(x)); /* 4-byte aligned only */
		acc -= (v4)(x != zero);		     /* a true lane is all ones: -1 */
	}
	full = acc[0] + acc[1] + acc[2] + acc[3];
	return full;
}

int kp_bsymtab_check_index(const struct kp_bsymtab *t, unsigned max_table, uint64_t *repeats)
{
	const uint32_t nstr = t->nstr, nrec = t->nrec;
	/* whether a chain reaches a record: final when the loop gets there (chains go forward) */
	uint8_t *linked = calloc(nrec ? nrec : 1, 1);
	uint32_t bad = 0, heads = 0, full = full_slots(t);
	uint64_t sum = 0;
	int r = -1;

	if (!linked)
		return -1;
	/* an empty slot ends every probe (kp_bsymtab_open(): more slots than records) */
	if (full > nrec)
		goto out;
	for (uint32_t i = 0; i < nrec; i++) {
		const unsigned char *p = t->recs + (size_t)i * REC_LEN;
		uint32_t name = kp_load32(p, false), ns = kp_load32(p + 8, false);
		uint32_t next = kp_load32(p + 16, false);
		uint32_t w = kp_load32(p + 24, false); /* table, flags, two zero bytes */

		/* told after the loop: what reads a name on the way checks its offset itself */
		bad |= (uint32_t)(name >= nstr) | (uint32_t)(kp_load32(p + 4, false) >= nstr) |
		       (uint32_t)((w & 0xff) > max_table) | ((w >> 8) & ~(uint32_t)F_ALL);
		if (ns != NO_NS && (ns >= nstr || !t->str[ns]))
			goto out;
		if (next && !chain_ok(t, i, name, next, linked))
			goto out;
		if (!linked[i]) {
			if (!head_found(t, i, name, kp_load32(p + 28, false)))
				goto out;
			heads++;
		}
		sum += kp_load32(p + 20, false);
	}
	if (bad)
		goto out;
	/*
	 * Each first record was found in a slot of its own: when no other slot is full, every
	 * slot holds one of them (no slot points elsewhere, none twice).
	 */
	if (full != heads)
		goto out;
	*repeats = sum;
	r = 0;
out:
	free(linked);
	return r;
}

void kp_bsymtab_read(const struct kp_bsymtab *t, uint32_t i, struct kp_bsym *out)
{
	const unsigned char *p = t->recs + (size_t)i * REC_LEN;
	uint32_t ns = kp_load32(p + 8, false);

	out->name = t->str + kp_load32(p, false);
	out->owner = t->str + kp_load32(p + 4, false);
	out->ns = ns == NO_NS ? NULL : t->str + ns;
	out->crc = kp_load32(p + 12, false);
	out->repeats = kp_load32(p + 20, false);
	out->hash = kp_load32(p + 28, false);
	out->table = p[24];
	out->gpl_only = p[25] & F_GPL;
	out->has_crc = p[25] & F_HAS_CRC;
	out->ns_known = p[25] & F_NS_KNOWN;
	out->vmlinux = p[25] & F_VMLINUX;
}
