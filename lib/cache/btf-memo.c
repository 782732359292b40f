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
#include "util/util.h"

#define MAGIC	    "KPBTFV1\n"
#define HEADER_LEN  KP_MEMO_HEADER_LEN
#define REC_FIXED   (KP_BTF_MEMO_ID_LEN + 4 + 2) /* digest, errno, reason length */
#define MAX_SCOPES  8				 /* files kept: the oldest beyond go */
#define MAX_ENTRIES ((size_t)1 << 20)

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
	bool added; /* a verdict not in the file: rewrite it */
	struct kp_btf_memo_counts counts;
};

static bool is_zero(const unsigned char *id)
{
	for (size_t i = 0; i < KP_BTF_MEMO_ID_LEN; i++)
		if (id[i])
			return false;
	return true;
}

static size_t find_slot(const struct kp_btf_memo *m, const unsigned char *id)
{
	uint64_t h;
	size_t i;

	memcpy(&h, id, sizeof(h)); /* a SHA-256: any 8 bytes are uniform */
	i = (size_t)h & (m->cap - 1);
	while (!is_zero(m->slots[i].id) && memcmp(m->slots[i].id, id, KP_BTF_MEMO_ID_LEN))
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
		if (!is_zero(old[i].id))
			m->slots[find_slot(m, old[i].id)] = old[i];
	free(old);
	return 0;
}

/* Under @m->lock (or before other threads see @m): @id's verdict, @why taken. 0 or -1. */
static int insert(struct kp_btf_memo *m, const unsigned char *id, int32_t err, char *why)
{
	struct entry *e;

	if (is_zero(id) || m->n >= MAX_ENTRIES || ((m->n + 1) * 2 > m->cap && grow(m) < 0)) {
		free(why);
		return -1;
	}
	e = &m->slots[find_slot(m, id)];
	if (!is_zero(e->id)) { /* known already (the same inputs: the same verdict) */
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

/* The verdicts of @buf (a whole file, header checked): all of them, or none. */
static void parse(struct kp_btf_memo *m, const unsigned char *buf, size_t len)
{
	uint32_t cnt = kp_load32(buf + 8, false);
	size_t off = HEADER_LEN;

	for (uint32_t i = 0; i < cnt; i++) {
		size_t wl;
		char *why = NULL;

		if (len - off < REC_FIXED)
			break;
		wl = buf[off + 36] | (size_t)buf[off + 37] << 8;
		if (wl >= sizeof(((struct kp_btf_verdict *)0)->why) || len - off - REC_FIXED < wl)
			break;
		if (wl && !(why = strndup((const char *)buf + off + REC_FIXED, wl)))
			break;
		insert(m, buf + off, (int32_t)kp_load32(buf + off + 32, false), why);
		off += REC_FIXED + wl;
	}
}

struct kp_btf_memo *kp_btf_memo_new(int dirfd, const unsigned char *scope)
{
	struct kp_btf_memo *m = calloc(1, sizeof(*m));
	char name[96];
	unsigned char *buf;
	size_t len;
	int dfd;

	if (!m)
		return NULL;
	if (pthread_mutex_init(&m->lock, NULL) != 0) {
		free(m);
		return NULL;
	}
	m->dirfd = dirfd;
	memcpy(m->scope, scope, KP_BTF_MEMO_ID_LEN);
	dfd = kp_memo_dir(dirfd, false);
	if (dfd < 0)
		return m;
	file_name(scope, name, sizeof(name));
	buf = kp_memo_read(dfd, name, MAGIC, &len);
	close(dfd);
	if (buf)
		parse(m, buf, len);
	free(buf);
	return m;
}

bool kp_btf_memo_has_scope(const struct kp_btf_memo *m, const unsigned char *scope)
{
	return !memcmp(m->scope, scope, KP_BTF_MEMO_ID_LEN);
}

int kp_btf_memo_get(struct kp_btf_memo *m, const unsigned char *id, struct kp_btf_verdict *v)
{
	int r = -1;

	if (!m || is_zero(id))
		return -1;
	pthread_mutex_lock(&m->lock);
	if (m->cap) {
		const struct entry *e = &m->slots[find_slot(m, id)];

		if (!is_zero(e->id)) {
			v->err = e->err;
			snprintf(v->why, sizeof(v->why), "%s", e->why ? e->why : "");
			m->counts.hits++;
			r = 0;
		}
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

/* Every verdict known into the scope's file, which replaces the one read. */
static void store(struct kp_btf_memo *m)
{
	size_t len = HEADER_LEN, off = HEADER_LEN;
	unsigned char *buf;
	char name[96];
	int dfd;

	for (size_t i = 0; i < m->cap; i++)
		if (!is_zero(m->slots[i].id))
			len += REC_FIXED + (m->slots[i].why ? strlen(m->slots[i].why) : 0);
	if (len > KP_MEMO_MAX_FILE || !(buf = malloc(len)))
		return;
	for (size_t i = 0; i < m->cap; i++) {
		const struct entry *e = &m->slots[i];
		size_t wl = e->why ? strlen(e->why) : 0;

		if (is_zero(e->id))
			continue;
		memcpy(buf + off, e->id, KP_BTF_MEMO_ID_LEN);
		kp_store32(buf + off + 32, (uint32_t)e->err);
		buf[off + 36] = (unsigned char)wl;
		buf[off + 37] = (unsigned char)(wl >> 8);
		if (wl)
			memcpy(buf + off + REC_FIXED, e->why, wl);
		off += REC_FIXED + wl;
	}
	memcpy(buf, MAGIC, 8);
	kp_store32(buf + 8, (uint32_t)m->n);
	kp_store32(buf + 12, kp_memo_crc(buf + HEADER_LEN, len - HEADER_LEN));
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
	if (m->added && m->dirfd >= 0)
		store(m);
	for (size_t i = 0; i < m->cap; i++)
		free(m->slots[i].why);
	free(m->slots);
	pthread_mutex_destroy(&m->lock);
	free(m);
}
