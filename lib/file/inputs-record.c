// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The inputs manifest's records (inputs-internal.h): an entry encoded, kept once (a table of
 * hashes drops exact duplicates), in a buffer written out to the spill file when full.
 */
#include "inputs-internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/io.h"
#include "util/util.h"

#define CMP_CHUNK 4096 /* bytes of a spilled record read back at a time to compare it */

void kp_inputs_mark(struct kp_inputs *in, const char *why)
{
	pthread_mutex_lock(&in->lock);
	if (!in->uncacheable)
		in->uncacheable = why;
	pthread_mutex_unlock(&in->lock);
}

static size_t entry_len(const struct entry *e)
{
	return REC_HEAD + strlen(e->path) + e->clen;
}

static void put_entry(unsigned char *p, const struct entry *e)
{
	size_t pl = strlen(e->path);

	p[0] = e->kind;
	p[1] = e->flags;
	kp_store64(p + 2, pl);
	kp_store64(p + 10, (uint64_t)(int64_t)e->err);
	for (int k = 0; k < 8; k++)
		kp_store64(p + 18 + 8 * k, e->st[k]);
	kp_store64(p + 82, e->clen);
	memcpy(p + REC_HEAD, e->path, pl);
	if (e->clen)
		memcpy(p + REC_HEAD + pl, e->content, e->clen);
}

/* A hash of a record, eight bytes at a time (only to find candidates: bytes are compared). */
static uint64_t hash_bytes(const unsigned char *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325u ^ len, w;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15u;
		h ^= h >> 32;
	}
	w = 0;
	memcpy(&w, p + i, len - i);
	h = (h ^ w) * 0x9e3779b97f4a7c15u;
	return h ^ h >> 29;
}

/* The slot of the state @v in @tab (@cap slots): its own, else the free one where it goes. */
size_t kp_inputs_keyed_slot(const struct keyed *tab, size_t cap, const uint64_t *v)
{
	size_t i = (size_t)hash_bytes((const unsigned char *)v, 8 * sizeof(*v)) & (cap - 1);

	while (tab[i].st[7] && memcmp(tab[i].st, v, sizeof(tab[i].st)))
		i = (i + 1) & (cap - 1);
	return i;
}

/* Twice the slots of the module digests (under @in->lock); 0 or -1. */
int kp_inputs_keyed_grow(struct kp_inputs *in)
{
	size_t cap = in->kcap ? in->kcap * 2 : 4096;
	struct keyed *tab = calloc(cap, sizeof(*tab));

	if (!tab)
		return -1;
	for (size_t i = 0; i < in->kcap; i++)
		if (in->keyed[i].st[7])
			tab[kp_inputs_keyed_slot(tab, cap, in->keyed[i].st)] = in->keyed[i];
	free(in->keyed);
	in->keyed = tab;
	in->kcap = cap;
	return 0;
}

/*
 * 1 when the record at @pos of the records is the @len bytes at @p, 0 when not, -1 when
 * the spill file cannot be read. The first REC_HEAD bytes hold the lengths: equal bytes are
 * an equal length, so a record found whole where it is kept is the whole record.
 */
static int same_record(const struct kp_inputs *in, uint64_t pos, const unsigned char *p, size_t len)
{
	unsigned char chunk[CMP_CHUNK];

	if (pos >= in->spilled) {
		size_t o = (size_t)(pos - in->spilled);

		return o <= in->len && in->len - o >= len && !memcmp(in->buf + o, p, len);
	}
	if (in->spilled - pos < len)
		return 0;
	for (size_t done = 0; done < len;) {
		size_t n = len - done < sizeof(chunk) ? len - done : sizeof(chunk);

		if (kp_pread_all(in->spill, chunk, n, pos + done) != (ssize_t)n)
			return -1;
		if (memcmp(chunk, p + done, n))
			return 0;
		done += n;
	}
	return 1;
}

/*
 * The table slot for the record @p (@len bytes, hash fragment @frag): the one holding the
 * same record, else the free one where it goes; -1 when the spill file cannot be read. The
 * fragment picks the slot and tells most other records apart without reading them.
 */
static ssize_t slot_of(const struct kp_inputs *in, uint32_t frag, const unsigned char *p,
		       size_t len)
{
	size_t i = frag & (in->tcap - 1);

	for (;; i = (i + 1) & (in->tcap - 1)) {
		uint32_t off = in->tab[2 * i + 1];
		int r;

		if (!off)
			return (ssize_t)i;
		if (in->tab[2 * i] != frag)
			continue;
		r = same_record(in, off - 1, p, len);
		if (r < 0)
			return -1;
		if (r)
			return (ssize_t)i;
	}
}

/* Twice the slots; 0 or -1. */
static int grow_table(struct kp_inputs *in)
{
	size_t cap = in->tcap ? in->tcap * 2 : 1024;
	uint32_t *tab = calloc(cap, 2 * sizeof(*tab));
	uint32_t *old = in->tab;
	size_t ocap = in->tcap;

	if (!tab)
		return -1;
	for (size_t i = 0; i < ocap; i++) {
		size_t j;

		if (!old[2 * i + 1])
			continue;
		for (j = old[2 * i] & (cap - 1); tab[2 * j + 1]; j = (j + 1) & (cap - 1))
			;
		tab[2 * j] = old[2 * i];
		tab[2 * j + 1] = old[2 * i + 1];
	}
	free(old);
	in->tab = tab;
	in->tcap = cap;
	return 0;
}

static bool too_new(const struct kp_inputs *in, const struct entry *e)
{
	return e->kind != K_ABSENT && e->kind != K_CONTENT &&
	       kp_inputs_state_too_new(e->st, &in->start);
}

/* Writes the buffer's records to the spill file; 0 or -1. */
static int flush(struct kp_inputs *in)
{
	if (!in->len)
		return 0;
	if (kp_write_all(in->spill, in->buf, in->len) < 0)
		return -1;
	in->spilled += in->len;
	in->len = 0;
	return 0;
}

/*
 * Appends the record @p (@len bytes) after the others: into the buffer, written out first
 * when it is full (a record larger than the buffer goes to the spill file directly). 0, or -1
 * with the reason.
 */
static int append(struct kp_inputs *in, const unsigned char *p, size_t len, const char **why)
{
	if (!in->buf) {
		in->buf = malloc(in->bufmax);
		if (!in->buf) {
			*why = "out of memory";
			return -1;
		}
		in->cap = in->bufmax;
	}
	*why = "the inputs' temporary file could not be written";
	if (in->cap - in->len < len && flush(in) < 0)
		return -1;
	if (len > in->cap) {
		if (kp_write_all(in->spill, p, len) < 0)
			return -1;
		in->spilled += len;
		return 0;
	}
	memcpy(in->buf + in->len, p, len);
	in->len += len;
	return 0;
}

/* Appends @e's encoding unless the very same entry is there already. */
void kp_inputs_add(struct kp_inputs *in, const struct entry *e)
{
	size_t len = entry_len(e);
	unsigned char small[REC_HEAD + 512], *p = len <= sizeof(small) ? small : malloc(len);
	const char *why = "out of memory";
	uint64_t h, pos;
	uint32_t frag;
	ssize_t i;

	if (!p) {
		kp_inputs_mark(in, why);
		return;
	}
	put_entry(p, e);
	h = hash_bytes(p, len);
	frag = (uint32_t)h ^ (uint32_t)(h >> 32);
	pthread_mutex_lock(&in->lock);
	if (too_new(in, e) && !in->uncacheable)
		in->uncacheable = "an input changed less than a second before the run";
	if (in->uncacheable)
		goto out; /* not stored: what is recorded no longer matters */
	if ((in->n + 1) * 4 > in->tcap * 3 && grow_table(in) < 0)
		goto fail;
	i = slot_of(in, frag, p, len);
	if (i < 0) {
		why = "the inputs' temporary file could not be read";
		goto fail;
	}
	if (in->tab[2 * i + 1])
		goto out; /* recorded already */
	pos = in->spilled + in->len;
	if (pos + len >= UINT32_MAX) {
		why = "too many inputs";
		goto fail;
	}
	if (append(in, p, len, &why) < 0)
		goto fail;
	in->tab[2 * i] = frag;
	in->tab[2 * i + 1] = (uint32_t)pos + 1;
	in->n++;
	goto out;
fail:
	in->uncacheable = why;
out:
	pthread_mutex_unlock(&in->lock);
	if (p != small)
		free(p);
}
