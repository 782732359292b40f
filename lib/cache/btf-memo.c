// SPDX-License-Identifier: LGPL-2.1-or-later
/* Module BTF verdicts beside the facts cache (btf-memo.h). */
#include "btf-memo.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


#include "cache/memo-file.h"
#include "read/btf.h"
#include "util/io.h"
#include "util/util.h"
#include "util/crc32.h"

#define MAGIC	    "KPBTFV2\n"
#define SCOPE_OFF   KP_MEMO_HEADER_LEN
#define TEXT_LEN    (SCOPE_OFF + KP_BTF_MEMO_ID_LEN) /* u32: the reasons' length */
#define FANOUT_OFF  (TEXT_LEN + 8)
#define HEADER_LEN  (FANOUT_OFF + 256 * 4)
#define REC_LEN	    48 /* digest, errno, reason offset and length, 2 zero bytes, CRC-32 */
#define REC_CRC	    44
#define MAX_SCOPES  8 /* files kept: the oldest beyond go */
#define MAX_ENTRIES ((size_t)1 << 20)
#define BUCKET_READ 256 /* records of one first byte read at once; more: searched */

struct entry {
	unsigned char id[KP_BTF_MEMO_ID_LEN]; /* all zero: a free slot */
	int32_t err;
	char *why; /* NULL: no reason */
};

struct kp_btf_memo {
	int dirfd; /* the facts directory (borrowed); -1: nothing read or written */
	unsigned char scope[KP_BTF_MEMO_ID_LEN];
	pthread_mutex_t lock;
	struct entry *slots; /* open addressing, @cap a power of two */
	size_t n, cap;
	bool added;  /* a verdict not in the file: rewrite it */
	bool loaded; /* the file's verdicts are in @slots (or there is no file) */
	/* not loaded: the file, searched in place (search()) */
	int fd;		    /* -1: none, or it does not parse */
	size_t flen, nrec;  /* its length and record count */
	uint32_t text_len;  /* the reasons' length, after the records */
	uint32_t scope_crc; /* CRC-32 of @scope, where each record's CRC starts */
	unsigned char fanout[256 * 4];
	struct kp_btf_memo_counts counts;
};

_Static_assert(KP_BTF_MEMO_ID_LEN == KP_MEMO_ID_LEN, "a memo id (memo-file.h)");

static size_t find_slot(const struct kp_btf_memo *m, const unsigned char *id)
{
	size_t i = kp_memo_id_home(id, m->cap);

	while (!kp_memo_id_is_zero(m->slots[i].id) &&
	       memcmp(m->slots[i].id, id, KP_BTF_MEMO_ID_LEN))
		i = (i + 1) & (m->cap - 1);
	return i;
}

static int grow(struct kp_btf_memo *m)
{
	struct entry *old = m->slots;
	size_t ocap = m->cap;

	m->cap = ocap ? ocap * 2 : 1024;
	m->slots = calloc(m->cap, sizeof(*m->slots));
	if (!m->slots) {
		m->slots = old;
		m->cap = ocap;
		return -1;
	}
	for (size_t i = 0; i < ocap; i++)
		if (!kp_memo_id_is_zero(old[i].id))
			m->slots[find_slot(m, old[i].id)] = old[i];
	free(old);
	return 0;
}

/* Under @m->lock (or before other threads see @m): @id's verdict, @why taken. 0 or -1. */
static int insert(struct kp_btf_memo *m, const unsigned char *id, int32_t err, char *why)
{
	struct entry *e;

	if (kp_memo_id_is_zero(id) || m->n >= MAX_ENTRIES ||
	    ((m->n + 1) * 2 > m->cap && grow(m) < 0)) {
		free(why);
		return -1;
	}
	e = &m->slots[find_slot(m, id)];
	if (!kp_memo_id_is_zero(e->id)) { /* known already (the same inputs: the same verdict) */
		free(why);
		return -1;
	}
	memcpy(e->id, id, KP_BTF_MEMO_ID_LEN);
	e->err = err;
	e->why = why;
	m->n++;
	return 0;
}

static void file_name(const unsigned char *scope, char *name, size_t len)
{
	int at = snprintf(name, len, "btf-");

	for (size_t i = 0; i < KP_BTF_MEMO_ID_LEN; i++)
		at += snprintf(name + at, len - (size_t)at, "%02x", scope[i]);
	snprintf(name + at, len - (size_t)at, ".memo");
}

/*
 * The header of a file of @len bytes checked for @m's scope: magic, CRC, scope, a fanout
 * that only grows up to the count, and a length that is exactly the header, the records and
 * the reasons. 0 with the count and the reasons' length, or -1.
 */
static int check_header(const struct kp_btf_memo *m, const unsigned char *h, size_t len,
			size_t *nrec, uint32_t *text_len)
{
	uint32_t n = kp_load32(h + 8, false), prev = 0;

	if (memcmp(h, MAGIC, 8) ||
	    kp_load32(h + 12, false) != kp_memo_crc(h + SCOPE_OFF, HEADER_LEN - SCOPE_OFF) ||
	    memcmp(h + SCOPE_OFF, m->scope, KP_BTF_MEMO_ID_LEN) || n > MAX_ENTRIES)
		return -1;
	for (size_t b = 0; b < 256; b++) {
		uint32_t f = kp_load32(h + FANOUT_OFF + b * 4, false);

		if (f < prev || f > n)
			return -1;
		prev = f;
	}
	*text_len = kp_load32(h + TEXT_LEN, false);
	if (prev != n || len != HEADER_LEN + (uint64_t)n * REC_LEN + *text_len)
		return -1;
	*nrec = n;
	return 0;
}

/* Where record @r's reason lies in the reasons (@text_len bytes): 0, or -1 (out of them). */
static int reason_of(const unsigned char *r, uint32_t text_len, uint32_t *off, uint32_t *wl)
{
	*off = kp_load32(r + 36, false);
	*wl = (uint32_t)r[40] | (uint32_t)r[41] << 8;
	return r[42] || r[43] || *wl >= sizeof(((struct kp_btf_verdict *)0)->why) ||
			       *off > text_len || text_len - *off < *wl
		       ? -1
		       : 0;
}

/*
 * Record @r (REC_LEN bytes) and its reason (@wl bytes at @why) checked against the record's
 * CRC-32 (over the scope, its first REC_CRC bytes and the reason): 0 with its verdict in @v,
 * or -1 (damaged: a miss, never a verdict).
 */
static int take_record(const struct kp_btf_memo *m, const unsigned char *r,
		       const unsigned char *why, uint32_t wl, struct kp_btf_verdict *v)
{
	uint32_t crc = kp_crc32(m->scope_crc, r, REC_CRC);

	if (wl)
		crc = kp_crc32(crc, why, wl);
	if ((uint32_t)crc != kp_load32(r + REC_CRC, false))
		return -1;
	v->err = (int32_t)kp_load32(r + 32, false);
	memcpy(v->why, why, wl);
	v->why[wl] = 0;
	return 0;
}

/* Every record of @buf (a whole file, header checked) that is intact, into @m's table. */
static void parse(struct kp_btf_memo *m, const unsigned char *buf, size_t nrec, uint32_t text_len)
{
	const unsigned char *text = buf + HEADER_LEN + nrec * REC_LEN;

	for (size_t i = 0; i < nrec; i++) {
		const unsigned char *r = buf + HEADER_LEN + i * REC_LEN;
		struct kp_btf_verdict v;
		char *why = NULL;
		uint32_t off, wl;

		if (reason_of(r, text_len, &off, &wl) < 0 ||
		    take_record(m, r, text + off, wl, &v) < 0)
			continue;
		if (v.why[0] && !(why = strdup(v.why)))
			break;
		insert(m, r, v.err, why);
	}
}

/* The scope's file opened, -1 when there is none that can be believed. */
static int open_file(const struct kp_btf_memo *m, size_t *len)
{
	char name[96];
	int dfd = kp_memo_dir(m->dirfd, false), fd;

	if (dfd < 0)
		return -1;
	file_name(m->scope, name, sizeof(name));
	fd = kp_memo_open(dfd, name, len);
	close(dfd);
	return fd;
}

/* Under @m->lock (or before other threads see @m): the file's verdicts into the table. */
static void load(struct kp_btf_memo *m)
{
	unsigned char *buf = NULL;
	size_t len, nrec;
	uint32_t text_len;
	int fd = m->fd >= 0 ? m->fd : open_file(m, &len);

	if (m->fd >= 0)
		len = m->flen;
	m->loaded = true;
	if (fd < 0 || len < HEADER_LEN || !(buf = malloc(len)))
		goto out;
	if (kp_pread_all(fd, buf, len, 0) == (ssize_t)len &&
	    check_header(m, buf, len, &nrec, &text_len) == 0)
		parse(m, buf, nrec, text_len);
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	m->fd = -1;
}

static struct kp_btf_memo *memo_new(int dirfd, const unsigned char *scope)
{
	struct kp_btf_memo *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	if (pthread_mutex_init(&m->lock, NULL) != 0) {
		free(m);
		return NULL;
	}
	m->dirfd = dirfd;
	m->fd = -1;
	memcpy(m->scope, scope, KP_BTF_MEMO_ID_LEN);
	m->scope_crc = kp_crc32(0, scope, KP_BTF_MEMO_ID_LEN);
	return m;
}

struct kp_btf_memo *kp_btf_memo_new(int dirfd, const unsigned char *scope)
{
	struct kp_btf_memo *m = memo_new(dirfd, scope);

	if (m)
		load(m);
	return m;
}

struct kp_btf_memo *kp_btf_memo_open(int dirfd, const unsigned char *scope)
{
	struct kp_btf_memo *m = memo_new(dirfd, scope);
	unsigned char h[HEADER_LEN];

	if (!m)
		return NULL;
	m->counts.in_place = true;
	m->fd = open_file(m, &m->flen);
	if (m->fd < 0 || m->flen < HEADER_LEN ||
	    kp_pread_all(m->fd, h, HEADER_LEN, 0) != HEADER_LEN ||
	    check_header(m, h, m->flen, &m->nrec, &m->text_len) < 0) {
		if (m->fd >= 0)
			close(m->fd);
		m->fd = -1;
		m->loaded = true; /* nothing to load */
		return m;
	}
	memcpy(m->fanout, h + FANOUT_OFF, sizeof(m->fanout));
	return m;
}

/* Record @i of the file read into @r. */
static int read_record(const struct kp_btf_memo *m, size_t i, unsigned char *r)
{
	return kp_pread_all(m->fd, r, REC_LEN, HEADER_LEN + (uint64_t)i * REC_LEN) == REC_LEN ? 0
											      : -1;
}

/*
 * Under @m->lock, not loaded: @id searched in the file, the records whose digest starts with
 * @id's first byte (the fanout), read at once when there are few, else bisected record by
 * record. 0 with the verdict in @v, -1: not there, damaged or unreadable (a miss).
 */
static int search(struct kp_btf_memo *m, const unsigned char *id, struct kp_btf_verdict *v)
{
	size_t lo = id[0] ? kp_load32(m->fanout + (id[0] - 1) * 4, false) : 0,
	       hi = kp_load32(m->fanout + id[0] * 4, false);
	unsigned char bucket[BUCKET_READ * REC_LEN], text[sizeof(v->why)];
	const unsigned char *r = NULL;
	uint32_t off, wl;

	if (m->fd < 0 || lo >= hi)
		return -1;
	if (hi - lo <= BUCKET_READ) {
		size_t n = (hi - lo) * REC_LEN;

		if (kp_pread_all(m->fd, bucket, n, HEADER_LEN + (uint64_t)lo * REC_LEN) !=
		    (ssize_t)n)
			return -1;
		for (size_t i = 0; i < hi - lo && !r; i++)
			if (!memcmp(bucket + i * REC_LEN, id, KP_BTF_MEMO_ID_LEN))
				r = bucket + i * REC_LEN;
	} else {
		while (lo < hi && !r) {
			size_t mid = lo + (hi - lo) / 2;
			int c;

			if (read_record(m, mid, bucket) < 0)
				return -1;
			c = memcmp(id, bucket, KP_BTF_MEMO_ID_LEN);
			if (!c)
				r = bucket;
			else if (c < 0)
				hi = mid;
			else
				lo = mid + 1;
		}
	}
	if (!r)
		return -1;
	/* only the record's reason is read, where the header says the reasons lie */
	if (reason_of(r, m->text_len, &off, &wl) < 0 ||
	    (wl && kp_pread_all(m->fd, text, wl, HEADER_LEN + (uint64_t)m->nrec * REC_LEN + off) !=
			   (ssize_t)wl))
		return -1;
	return take_record(m, r, text, wl, v);
}

bool kp_btf_memo_has_scope(const struct kp_btf_memo *m, const unsigned char *scope)
{
	return !memcmp(m->scope, scope, KP_BTF_MEMO_ID_LEN);
}

int kp_btf_memo_get(struct kp_btf_memo *m, const unsigned char *id, struct kp_btf_verdict *v)
{
	int r = -1;

	if (!m || kp_memo_id_is_zero(id))
		return -1;
	pthread_mutex_lock(&m->lock);
	if (m->cap) {
		const struct entry *e = &m->slots[find_slot(m, id)];

		if (!kp_memo_id_is_zero(e->id)) {
			v->err = e->err;
			snprintf(v->why, sizeof(v->why), "%s", e->why ? e->why : "");
			m->counts.hits++;
			r = 0;
		}
	}
	if (r < 0 && !m->loaded && search(m, id, v) == 0) {
		m->counts.hits++;
		m->counts.searched++;
		r = 0;
	}
	pthread_mutex_unlock(&m->lock);
	return r;
}

void kp_btf_memo_put(struct kp_btf_memo *m, const unsigned char *id, const struct kp_btf_verdict *v)
{
	char *why;

	if (!m)
		return;
	why = v->why[0] ? strdup(v->why) : NULL;
	pthread_mutex_lock(&m->lock);
	m->counts.checked++;
	if ((!v->why[0] || why) && insert(m, id, v->err, why) == 0)
		m->added = true;
	pthread_mutex_unlock(&m->lock);
}

void kp_btf_memo_counts(const struct kp_btf_memo *m, struct kp_btf_memo_counts *out)
{
	pthread_mutex_lock((pthread_mutex_t *)&m->lock);
	*out = m->counts;
	pthread_mutex_unlock((pthread_mutex_t *)&m->lock);
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *const *x = a, *const *y = b;

	return memcmp((*x)->id, (*y)->id, KP_BTF_MEMO_ID_LEN);
}

/* @n verdicts, sorted by digest, as the file's bytes (*@len); NULL when out of memory. */
static unsigned char *encode(const struct kp_btf_memo *m, const struct entry **e, size_t n,
			     size_t *len)
{
	size_t text = 0, at = 0, count[256] = { 0 };
	unsigned char *buf, *rec, *why;

	for (size_t i = 0; i < n; i++)
		text += e[i]->why ? strlen(e[i]->why) : 0;
	*len = HEADER_LEN + n * REC_LEN + text;
	if (text > UINT32_MAX || *len > KP_MEMO_MAX_FILE || !(buf = calloc(1, *len)))
		return NULL;
	rec = buf + HEADER_LEN;
	why = rec + n * REC_LEN;
	for (size_t i = 0; i < n; i++, rec += REC_LEN) {
		size_t wl = e[i]->why ? strlen(e[i]->why) : 0;
		uint32_t crc;

		memcpy(rec, e[i]->id, KP_BTF_MEMO_ID_LEN);
		kp_store32(rec + 32, (uint32_t)e[i]->err);
		kp_store32(rec + 36, (uint32_t)at);
		rec[40] = (unsigned char)wl;
		rec[41] = (unsigned char)(wl >> 8);
		memcpy(why + at, e[i]->why ? e[i]->why : "", wl);
		crc = kp_crc32(kp_crc32(m->scope_crc, rec, REC_CRC), why + at, wl);
		kp_store32(rec + REC_CRC, (uint32_t)crc);
		at += wl;
		count[e[i]->id[0]]++;
	}
	/* fanout[b]: the records whose digest's first byte is at most b */
	for (size_t b = 0, sum = 0; b < 256; b++) {
		sum += count[b];
		kp_store32(buf + FANOUT_OFF + b * 4, (uint32_t)sum);
	}
	memcpy(buf, MAGIC, 8);
	kp_store32(buf + 8, (uint32_t)n);
	memcpy(buf + SCOPE_OFF, m->scope, KP_BTF_MEMO_ID_LEN);
	kp_store32(buf + TEXT_LEN, (uint32_t)text);
	kp_store32(buf + 12, kp_memo_crc(buf + SCOPE_OFF, HEADER_LEN - SCOPE_OFF));
	return buf;
}

/* Every verdict known into the scope's file, which replaces the one read. */
static void store(struct kp_btf_memo *m)
{
	const struct entry **e = malloc((m->n ? m->n : 1) * sizeof(*e));
	unsigned char *buf = NULL;
	size_t n = 0, len;
	char name[96];
	int dfd;

	if (!e)
		return;
	for (size_t i = 0; i < m->cap; i++)
		if (!kp_memo_id_is_zero(m->slots[i].id))
			e[n++] = &m->slots[i];
	qsort(e, n, sizeof(*e), cmp_entry);
	buf = encode(m, e, n, &len);
	free(e);
	if (!buf)
		return;
	dfd = kp_memo_dir(m->dirfd, true);
	file_name(m->scope, name, sizeof(name));
	if (dfd >= 0 && kp_memo_write(dfd, name, buf, len) < 0 && errno == EEXIST) {
		/* the file read (or a concurrent run's): this run's holds its verdicts too */
		unlinkat(dfd, name, 0);
		kp_memo_write(dfd, name, buf, len);
	}
	if (dfd >= 0) {
		kp_memo_prune(dfd, "btf-", MAX_SCOPES);
		close(dfd);
	}
	free(buf);
}

void kp_btf_memo_free(struct kp_btf_memo *m)
{
	if (!m)
		return;
	if (m->added && m->dirfd >= 0) {
		if (!m->loaded)
			load(m); /* the file's verdicts kept beside this run's */
		store(m);
	}
	if (m->fd >= 0)
		close(m->fd);
	for (size_t i = 0; i < m->cap; i++)
		free(m->slots[i].why);
	free(m->slots);
	pthread_mutex_destroy(&m->lock);
	free(m);
}
