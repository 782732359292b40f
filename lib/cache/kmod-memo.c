// SPDX-License-Identifier: LGPL-2.1-or-later
/* libkmod's answers to the hook, beside the facts cache (kmod-memo.h). */
#include "config.h"

#include "kmod-memo.h"
#include "kmod-memo-internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache/memo-file.h"
#include "cache/trusted-dir.h"
#include "util/byte-reader.h"
#include "util/byte-writer.h"
#include "util/fs-trust.h"
#include "util/io.h"
#include "util/util.h"

/*
 * DIR/facts-vN/sigs/kmod/ (KP_KMOD_MEMO_DIR): a directory of their own, so that the thousands
 * of files a tree's worth of hooks leaves are not listed by what lists sigs/ on every run
 * (sig-memo.c's load()).
 */
#define MAGIC  "KPKMODA1"
#define PREFIX "kmod-"
/*
 * One file per name hooked: a whole tree's worth (Debian's 6.12 amd64 has 4,230 modules), so
 * that hooking every module keeps every answer; the oldest beyond go. The directory is listed
 * (each file stat()ed) on one store in PRUNE_EVERY, chosen by the clock, so that a tree's
 * first hooks do not list it thousands of times.
 */
#define MAX_FILES   8192
#define PRUNE_EVERY 32
/* bounds on what a memo file may hold: a hook asks a handful of questions */
#define MAX_RECORDS 4096
#define MAX_STRINGS 65536
/*
 * A hook's answers take a few KiB (amdgpu's on Debian's 6.12: 3,069 bytes): a file of the
 * shared memo bound (64 MiB) would be millions of strings to copy at every load it is read
 * for, so neither written nor read beyond this.
 */
#define MAX_FILE ((uint64_t)1 << 20)

struct kp_kmod_memo *kp_kmod_memo_new(int dirfd, const char *question)
{
	struct kp_kmod_memo *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->question = strdup(question);
	if (!m->question) {
		free(m);
		return NULL;
	}
	m->dirfd = dirfd;
	m->euid = geteuid();
	kp_fs_devs_init(&m->devs);
	return m;
}

bool kp_kmod_memo_is_for(const struct kp_kmod_memo *m, const char *question)
{
	return m && !strcmp(m->question, question);
}

static void free_records(struct kp_kmod_memo *m)
{
	for (size_t i = 0; i < m->nrecs; i++) {
		for (size_t j = 0; j < m->recs[i].n; j++)
			free(m->recs[i].s[j]);
		free(m->recs[i].s);
		free(m->recs[i].q);
	}
	free(m->recs);
	m->recs = NULL;
	m->nrecs = m->cap = 0;
}

static uint64_t fnv1a(const unsigned char *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/*
 * A string as kp_bw_str() wrote it, not NULL: its length, its bytes with no NUL among them,
 * then a NUL; borrowed, its length in *@len. NULL when damaged.
 */
static const char *get_str(struct kp_byte_reader *r, size_t *len)
{
	uint32_t n = kp_br_get32(r, "length");
	const char *s;

	if (r->bad || n == KP_BW_NONE)
		return NULL;
	s = (const char *)kp_br_take(r, (size_t)n + 1, "string");
	if (!s || memchr(s, 0, n) || s[n])
		return NULL;
	*len = n;
	return s;
}

/* The records of a memo file whose header was checked (@p, @len): false if damaged. */
static bool parse_records(struct kp_kmod_memo *m, struct kp_byte_reader *r, uint32_t count)
{
	if (count > MAX_RECORDS)
		return false;
	for (uint32_t i = 0; i < count; i++) {
		struct kp_kmod_rec rec = { 0 };
		size_t ql;
		const char *q;
		uint32_t n;

		rec.type = (char)kp_br_get8(r, "type");
		q = get_str(r, &ql);
		if (!q)
			return false;
		rec.code = (int32_t)kp_br_get32(r, "code");
		n = kp_br_get32(r, "count");
		if (r->bad || n > MAX_STRINGS || n > r->len - r->off)
			return false;
		rec.q = strndup(q, ql);
		rec.s = calloc(n ? n : 1, sizeof(*rec.s));
		if (kp_grow(&m->recs, &m->cap, m->nrecs + 1, sizeof(*m->recs)) < 0 || !rec.q ||
		    !rec.s) {
			free(rec.q);
			free(rec.s);
			return false;
		}
		m->recs[m->nrecs++] = rec; /* freed with the others from here on */
		for (uint32_t j = 0; j < n; j++) {
			size_t sl;
			const char *s;

			if (r->len - r->off >= 4 && kp_load32(r->p + r->off, false) == KP_BW_NONE) {
				kp_br_take(r, 4, "none");
				m->recs[m->nrecs - 1].n = j + 1; /* a NULL string */
				continue;
			}
			s = get_str(r, &sl);
			if (!s || !(m->recs[m->nrecs - 1].s[j] = strndup(s, sl)))
				return false;
			m->recs[m->nrecs - 1].n = j + 1;
		}
	}
	return r->off == r->len;
}

/* The memo files' directory (KP_KMOD_MEMO_DIR), made when missing and @create: O_PATH, or -1. */
static int kmod_dir(const struct kp_kmod_memo *m, bool create)
{
	int sfd = m->dirfd >= 0 ? kp_memo_dir(m->dirfd, create) : -1, dfd;

	if (sfd < 0)
		return -1;
	dfd = kp_trusted_subdir(sfd, KP_KMOD_MEMO_DIR, create, NULL);
	close(sfd);
	return dfd;
}

/* The stored records whose key is @m->key, read into @m; a damaged file counted, dropped. */
static void load(struct kp_kmod_memo *m)
{
	struct kp_byte_reader r = { 0 };
	unsigned char *buf = NULL;
	size_t len = 0, kl;
	const char *key;
	struct stat st;
	int dfd = kmod_dir(m, false);

	if (dfd < 0)
		return;
	buf = kp_memo_read_max(dfd, m->name, MAGIC, MAX_FILE, &len);
	if (!buf) {
		if (fstatat(dfd, m->name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			m->counts.refused++; /* not believed: damaged, another's, unsafe */
		close(dfd);
		return;
	}
	close(dfd);
	r.p = buf + KP_MEMO_HEADER_LEN;
	r.len = len - KP_MEMO_HEADER_LEN;
	key = kp_br_bytes(&r, &kl, "key");
	if (!key || kl != m->keylen || memcmp(key, m->key, kl)) {
		m->counts.refused++; /* another state of the same tag (or damaged) */
		free(buf);
		return;
	}
	if (!parse_records(m, &r, kp_load32(buf + 8, false))) {
		free_records(m);
		m->counts.refused++;
	}
	free(buf);
}

/* The state of the file @path as the library record holds it; false when not settled. */
static bool library_state(const struct kp_kmod_memo *m, const char *path, char *buf, size_t len)
{
	struct stat st;
	uint64_t v[8];

	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return false;
	kp_file_state(&st, v);
	if (!kp_state_settled(v, &m->before))
		return false; /* replaced just now: perhaps after it was loaded */
	snprintf(buf, len, "%llx:%llx:%llx:%llx:%llx:%llx:%llx:%llx", (unsigned long long)v[0],
		 (unsigned long long)v[1], (unsigned long long)v[2], (unsigned long long)v[3],
		 (unsigned long long)v[4], (unsigned long long)v[5], (unsigned long long)v[6],
		 (unsigned long long)v[7]);
	return true;
}

/*
 * The stored answers are libkmod's whose file is in the state recorded with them (an
 * upgraded libkmod may answer otherwise): else, or without that record, none is kept.
 */
static void check_library(struct kp_kmod_memo *m)
{
	struct kp_kmod_rec *rec = NULL;
	char now[200];

	for (size_t i = 0; i < m->nrecs && !rec; i++)
		if (m->recs[i].type == 'L')
			rec = &m->recs[i];
	if (rec && rec->n == 2 && rec->s[0] && rec->s[1] &&
	    library_state(m, rec->s[0], now, sizeof(now)) && !strcmp(now, rec->s[1]))
		return;
	free_records(m);
}

void kp_kmod_memo_library(struct kp_kmod_memo *m, const char *path)
{
	char state[200];
	const char *s[2] = { path, state };

	if (!m || !m->bound)
		return;
	if (!path || !library_state(m, path, state, sizeof(state))) {
		/* answers of a libkmod not known: nothing replayed, nothing stored */
		m->bound = false;
		m->gone = true;
		free_records(m);
		return;
	}
	kp_kmod_memo_put(m, 'L', "", 0, 2, s);
	m->counts.asked--; /* not a question */
}

bool kp_kmod_memo_bind(struct kp_kmod_memo *m, const char *moddir, const char *const *paths)
{
	struct kp_byte_writer w = { 0 };
	size_t np = 0;

	if (!m || m->gone)
		return false;
	/* libkmod's own log level: what kmod_new() prints (pointers at info) is not replayed */
	if (getenv("KMOD_LOG")) {
		m->gone = true;
		return false;
	}
	if (m->moddir) {
		bool same = !strcmp(m->moddir, moddir);

		for (np = 0; same && paths[np] && m->paths[np]; np++)
			same = !strcmp(paths[np], m->paths[np]);
		same = same && !paths[np] && !m->paths[np];
		if (!same) {
			m->bound = false;
			m->gone = true;
			free_records(m);
		}
		return m->bound;
	}
	while (paths[np])
		np++;
	m->moddir = strdup(moddir);
	m->paths = calloc(np + 1, sizeof(*m->paths));
	for (size_t i = 0; m->paths && i < np; i++)
		if (!(m->paths[i] = strdup(paths[i])))
			m->gone = true;
	if (!m->moddir || !m->paths)
		m->gone = true;
	if (m->gone)
		return false;
	/* before libkmod reads anything: what it reads after this is named by the states */
	clock_gettime(CLOCK_REALTIME, &m->before);
	if (!kp_kmod_memo_make_key(m, &w)) {
		free(w.p);
		m->gone = true;
		return false;
	}
	m->key = w.p;
	m->keylen = w.len;
	m->bound = true;
	{
		struct kp_byte_writer t = { 0 };

		kp_kmod_memo_put_tag(&t, m);
		if (t.failed) {
			free(t.p);
			free(m->key);
			m->key = NULL;
			m->bound = false;
			m->gone = true;
			return false;
		}
		snprintf(m->name, sizeof(m->name), PREFIX "%016llx.memo",
			 (unsigned long long)fnv1a(t.p, t.len));
		free(t.p);
	}
	load(m);
	check_library(m);
	return true;
}

static struct kp_kmod_rec *find(struct kp_kmod_memo *m, char type, const char *q)
{
	for (size_t i = 0; i < m->nrecs; i++)
		if (m->recs[i].type == type && !strcmp(m->recs[i].q, q))
			return &m->recs[i];
	return NULL;
}

bool kp_kmod_memo_get(struct kp_kmod_memo *m, char type, const char *q, struct kp_kmod_answer *a)
{
	const struct kp_kmod_rec *rec = m && m->bound ? find(m, type, q) : NULL;

	if (!rec)
		return false;
	a->code = rec->code;
	a->n = rec->n;
	a->s = (const char *const *)rec->s;
	m->counts.replayed++;
	return true;
}

void kp_kmod_memo_put(struct kp_kmod_memo *m, char type, const char *q, int32_t code, size_t n,
		      const char *const *s)
{
	struct kp_kmod_rec rec = { .type = type, .code = code }, *old;

	if (!m)
		return;
	m->counts.asked++;
	if (!m->bound)
		return;
	if (n > MAX_STRINGS || m->nrecs >= MAX_RECORDS)
		goto fail;
	rec.q = strdup(q);
	rec.s = calloc(n ? n : 1, sizeof(*rec.s));
	if (!rec.q || !rec.s)
		goto fail;
	for (rec.n = 0; rec.n < n; rec.n++)
		if (s[rec.n] && !(rec.s[rec.n] = strdup(s[rec.n])))
			goto fail;
	old = find(m, type, q);
	if (old) {
		/* asked again (the answer replayed did not go far enough): the new one stands */
		for (size_t i = 0; i < old->n; i++)
			free(old->s[i]);
		free(old->s);
		free(old->q);
		*old = rec;
	} else if (kp_grow(&m->recs, &m->cap, m->nrecs + 1, sizeof(*m->recs)) < 0) {
		goto fail;
	} else {
		m->recs[m->nrecs++] = rec;
	}
	m->added = true;
	return;
fail:
	/* an answer not kept: the memo would lack it, so nothing is stored or replayed */
	for (size_t i = 0; rec.s && i < rec.n; i++)
		free(rec.s[i]);
	free(rec.s);
	free(rec.q);
	m->bound = false;
	m->gone = true;
}

void kp_kmod_memo_opened(struct kp_kmod_memo *m)
{
	if (m)
		m->counts.opened++;
}

/* The records after the key, when the inputs are still in the state of the key. */
static void store(struct kp_kmod_memo *m)
{
	struct kp_byte_writer w = { 0 }, now = { 0 };
	unsigned char *hdr;
	struct timespec ts;
	int dfd, r;

	/* nothing changed while libkmod read it: the states taken again are the key's */
	if (!kp_kmod_memo_make_key(m, &now) || now.len != m->keylen ||
	    memcmp(now.p, m->key, m->keylen)) {
		free(now.p);
		return;
	}
	free(now.p);
	hdr = kp_bw_room(&w, KP_MEMO_HEADER_LEN);
	if (hdr)
		memset(hdr, 0, KP_MEMO_HEADER_LEN);
	kp_bw_put32(&w, m->keylen);
	kp_bw_put(&w, m->key, m->keylen);
	for (size_t i = 0; i < m->nrecs; i++) {
		kp_bw_put8(&w, (unsigned char)m->recs[i].type);
		kp_bw_str(&w, m->recs[i].q);
		kp_bw_put32(&w, (uint32_t)m->recs[i].code);
		kp_bw_put32(&w, m->recs[i].n);
		for (size_t j = 0; j < m->recs[i].n; j++)
			kp_bw_str(&w, m->recs[i].s[j]);
	}
	if (w.failed || w.len > MAX_FILE || (dfd = kmod_dir(m, true)) < 0) {
		free(w.p);
		return;
	}
	memcpy(w.p, MAGIC, 8);
	kp_store32(w.p + 8, (uint32_t)m->nrecs);
	kp_store32(w.p + 12, kp_memo_crc(w.p + KP_MEMO_HEADER_LEN, w.len - KP_MEMO_HEADER_LEN));
	r = kp_memo_write(dfd, m->name, w.p, w.len);
	if (r < 0 && errno == EEXIST) {
		/* another state's answers, one not believed, or a concurrent run's */
		unlinkat(dfd, m->name, 0);
		r = kp_memo_write(dfd, m->name, w.p, w.len);
	}
	if (r == 0)
		m->counts.stored++;
	if (clock_gettime(CLOCK_MONOTONIC, &ts) == 0 && (ts.tv_nsec >> 10) % PRUNE_EVERY == 0)
		kp_memo_prune(dfd, PREFIX, MAX_FILES);
	close(dfd);
	free(w.p);
}

void kp_kmod_memo_flush(struct kp_kmod_memo *m)
{
	if (m && m->bound && m->added && m->dirfd >= 0)
		store(m);
	if (m)
		m->added = false;
}

void kp_kmod_memo_free(struct kp_kmod_memo *m)
{
	if (!m)
		return;
	kp_kmod_memo_flush(m);
	free_records(m);
	for (size_t i = 0; m->paths && m->paths[i]; i++)
		free(m->paths[i]);
	free(m->paths);
	free(m->moddir);
	free(m->key);
	free(m->question);
	free(m);
}

void kp_kmod_memo_counts(const struct kp_kmod_memo *m, struct kp_kmod_memo_counts *out)
{
	memset(out, 0, sizeof(*out));
	if (m)
		*out = m->counts;
}
