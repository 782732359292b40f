// SPDX-License-Identifier: LGPL-2.1-or-later
/* Signature verdicts and kernel-image certificates beside the facts cache (sig-memo.h). */
#include "sig-memo.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "cache/kmod-memo.h"
#include "cache/memo-file.h"
#include "cache/trusted-dir.h"
#include "util/fs-trust.h"
#include "util/io.h"
#include "util/util.h"

#define VERDICT_MAGIC "KPSIGV1\n"
#define IMAGE_MAGIC   "KPIMGC4\n" /* 2: lists; 3: s390 zstd read; 4: cut images refused */
#define HEADER_LEN    KP_MEMO_HEADER_LEN
#define MAX_FILES     8 /* verdict files read (more are left to a later run's rewrite) */
#define MAX_FILE      KP_MEMO_MAX_FILE
#define MAX_IMAGES    16 /* image files kept: the oldest beyond go when one is stored */

typedef unsigned char id_t32[KP_SIG_MEMO_ID_LEN];

/* An open-addressing set of ids: @cap slots (a power of two), @n used; all-zero is free. */
struct idset {
	id_t32 *slots;
	size_t n, cap;
};

struct kp_sig_memo {
	int dirfd; /* the facts directory (borrowed); -1: nothing read or written */
	pthread_mutex_t lock;
	id_t32 *ids; /* read from the files: sorted, unique */
	size_t nids;
	unsigned char *used; /* per id of @ids: looked up this run (atomic bytes) */
	struct idset added;  /* verified this run (stored at the end) */
	struct idset bad;    /* did not verify this run (never stored) */
	char **files;	     /* the verdict files read, removed once their ids are rewritten */
	size_t nfiles;
	struct kp_sig_memo_counts n; /* atomic */
};

static void count(uint64_t *v)
{
	__atomic_fetch_add(v, 1, __ATOMIC_RELAXED);
}

static int cmp_id(const void *a, const void *b)
{
	return memcmp(a, b, KP_SIG_MEMO_ID_LEN);
}

static bool is_verdict_file(const char *name)
{
	size_t n = strlen(name);

	return !strncmp(name, "verdicts-", 9) && n > 14 && !strcmp(name + n - 5, ".memo");
}

/* Reads the verdict files of @dfd into @m (sorted, duplicates dropped). */
static void load(struct kp_sig_memo *m, int dfd)
{
	DIR *d = kp_dir_list_at(dfd, ".");
	struct dirent *de;
	size_t cap = 0;

	if (!d)
		return;
	while ((de = readdir(d)) && m->nfiles < MAX_FILES) {
		unsigned char *buf;
		char **files;
		size_t len, n;

		if (!is_verdict_file(de->d_name))
			continue;
		buf = kp_memo_read(dfd, de->d_name, VERDICT_MAGIC, &len);
		if (!buf)
			continue;
		n = kp_load32(buf + 8, false);
		files = realloc(m->files, (m->nfiles + 1) * sizeof(*files));
		if (files)
			m->files = files;
		if (n != (len - HEADER_LEN) / KP_SIG_MEMO_ID_LEN ||
		    (len - HEADER_LEN) % KP_SIG_MEMO_ID_LEN || !files ||
		    (m->nids + n > cap &&
		     kp_grow(&m->ids, &cap, m->nids + n, sizeof(*m->ids)) < 0) ||
		    !(m->files[m->nfiles] = strdup(de->d_name))) {
			free(buf);
			continue;
		}
		m->nfiles++;
		memcpy(m->ids + m->nids, buf + HEADER_LEN, n * KP_SIG_MEMO_ID_LEN);
		m->nids += n;
		free(buf);
	}
	closedir(d);
	if (m->nids > 1) {
		size_t w = 1;

		qsort(m->ids, m->nids, sizeof(*m->ids), cmp_id);
		for (size_t i = 1; i < m->nids; i++)
			if (memcmp(m->ids[i], m->ids[w - 1], KP_SIG_MEMO_ID_LEN))
				memcpy(m->ids[w++], m->ids[i], KP_SIG_MEMO_ID_LEN);
		m->nids = w;
	}
	m->used = m->nids ? calloc(m->nids, 1) : NULL;
	if (m->nids && !m->used)
		m->nids = 0; /* out of memory: verified again */
}

struct kp_sig_memo *kp_sig_memo_new(int dirfd)
{
	struct kp_sig_memo *m = calloc(1, sizeof(*m));
	int dfd;

	if (!m)
		return NULL;
	if (pthread_mutex_init(&m->lock, NULL) != 0) {
		free(m);
		return NULL;
	}
	m->dirfd = dirfd;
	dfd = kp_memo_dir(dirfd, false);
	if (dfd >= 0) {
		load(m, dfd);
		close(dfd);
	}
	return m;
}

_Static_assert(KP_SIG_MEMO_ID_LEN == KP_MEMO_ID_LEN, "a memo id (memo-file.h)");

/* Under @m->lock: the slot of @id in @set, or of the free slot it would take. */
static size_t find_slot(const struct idset *set, const unsigned char *id)
{
	size_t i = kp_memo_id_home(id, set->cap);

	while (!kp_memo_id_is_zero(set->slots[i]) && memcmp(set->slots[i], id, KP_SIG_MEMO_ID_LEN))
		i = (i + 1) & (set->cap - 1);
	return i;
}

static bool set_has(const struct idset *set, const unsigned char *id)
{
	return set->cap && !kp_memo_id_is_zero(set->slots[find_slot(set, id)]);
}

/* Under @m->lock: @set twice as large (rehashed); 0 or -1. */
static int set_grow(struct idset *set)
{
	struct idset old = *set;

	set->cap = old.cap ? old.cap * 2 : 1024;
	set->slots = calloc(set->cap, sizeof(*set->slots));
	if (!set->slots) {
		*set = old;
		return -1;
	}
	for (size_t i = 0; i < old.cap; i++)
		if (!kp_memo_id_is_zero(old.slots[i]))
			memcpy(set->slots[find_slot(set, old.slots[i])], old.slots[i],
			       KP_SIG_MEMO_ID_LEN);
	free(old.slots);
	return 0;
}

/* Under @m->lock: @id into @set (out of memory: left out, it is only verified again). */
static void set_add(struct idset *set, const unsigned char *id)
{
	size_t i;

	if ((set->n + 1) * 2 > set->cap && set_grow(set) < 0)
		return;
	i = find_slot(set, id);
	if (kp_memo_id_is_zero(set->slots[i])) {
		memcpy(set->slots[i], id, KP_SIG_MEMO_ID_LEN);
		set->n++;
	}
}

int kp_sig_memo_lookup(struct kp_sig_memo *m, const unsigned char *id)
{
	const id_t32 *hit;
	int r = -1;

	if (!m || kp_memo_id_is_zero(id))
		return -1;
	hit = m->nids ? bsearch(id, m->ids, m->nids, sizeof(*m->ids), cmp_id) : NULL;
	if (hit) {
		/* counted once per stored verdict used, however often it is looked up */
		if (!__atomic_exchange_n(&m->used[hit - m->ids], 1, __ATOMIC_RELAXED))
			count(&m->n.hits);
		return 1;
	}
	pthread_mutex_lock(&m->lock);
	r = set_has(&m->added, id) ? 1 : set_has(&m->bad, id) ? 0 : -1;
	pthread_mutex_unlock(&m->lock);
	return r;
}

bool kp_sig_memo_verified(struct kp_sig_memo *m, const unsigned char *id)
{
	return kp_sig_memo_lookup(m, id) == 1;
}

void kp_sig_memo_add(struct kp_sig_memo *m, const unsigned char *id)
{
	if (!m)
		return;
	count(&m->n.verified);
	if (kp_memo_id_is_zero(id))
		return;
	pthread_mutex_lock(&m->lock);
	set_add(&m->added, id);
	pthread_mutex_unlock(&m->lock);
}

void kp_sig_memo_failed(struct kp_sig_memo *m, const unsigned char *id)
{
	if (!m)
		return;
	count(&m->n.verified);
	if (!id || kp_memo_id_is_zero(id))
		return;
	pthread_mutex_lock(&m->lock);
	set_add(&m->bad, id);
	pthread_mutex_unlock(&m->lock);
}

void kp_sig_memo_counts(const struct kp_sig_memo *m, struct kp_sig_memo_counts *out)
{
	memset(out, 0, sizeof(*out));
	if (!m)
		return;
	out->hits = __atomic_load_n(&m->n.hits, __ATOMIC_RELAXED);
	out->verified = __atomic_load_n(&m->n.verified, __ATOMIC_RELAXED);
	out->images = __atomic_load_n(&m->n.images, __ATOMIC_RELAXED);
	pthread_mutex_lock((pthread_mutex_t *)&m->lock);
	out->stored = m->dirfd >= 0 ? m->added.n : 0;
	pthread_mutex_unlock((pthread_mutex_t *)&m->lock);
}

/* Every id known (or, past KP_SIG_MEMO_MAX_IDS, this run's) into one new file. */
static void store(struct kp_sig_memo *m)
{
	size_t n = 0;
	bool keep_all = m->nids + m->added.n <= KP_SIG_MEMO_MAX_IDS;
	unsigned char *buf;
	struct timespec now;
	char name[96];
	int dfd;

	buf = malloc(HEADER_LEN + (m->nids + m->added.n) * KP_SIG_MEMO_ID_LEN);
	if (!buf)
		return;
	for (size_t i = 0; i < m->nids; i++)
		if (keep_all || m->used[i])
			memcpy(buf + HEADER_LEN + KP_SIG_MEMO_ID_LEN * n++, m->ids[i],
			       KP_SIG_MEMO_ID_LEN);
	for (size_t i = 0; i < m->added.cap; i++)
		if (!kp_memo_id_is_zero(m->added.slots[i]))
			memcpy(buf + HEADER_LEN + KP_SIG_MEMO_ID_LEN * n++, m->added.slots[i],
			       KP_SIG_MEMO_ID_LEN);
	qsort(buf + HEADER_LEN, n, KP_SIG_MEMO_ID_LEN, cmp_id);
	memcpy(buf, VERDICT_MAGIC, 8);
	kp_store32(buf + 8, (uint32_t)n);
	kp_store32(buf + 12, kp_memo_crc(buf + HEADER_LEN, n * KP_SIG_MEMO_ID_LEN));
	dfd = kp_memo_dir(m->dirfd, true);
	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(name, sizeof(name), "verdicts-%lld%09ld-%ld.memo", (long long)now.tv_sec,
		 now.tv_nsec, (long)getpid());
	if (dfd >= 0 && kp_memo_write(dfd, name, buf, HEADER_LEN + n * KP_SIG_MEMO_ID_LEN) == 0) {
		/* their ids are in the new file: a concurrent run's new file is left alone */
		for (size_t i = 0; i < m->nfiles; i++)
			unlinkat(dfd, m->files[i], 0);
	}
	if (dfd >= 0)
		close(dfd);
	free(buf);
}

void kp_sig_memo_free(struct kp_sig_memo *m)
{
	if (!m)
		return;
	if (m->added.n && m->dirfd >= 0)
		store(m);
	for (size_t i = 0; i < m->nfiles; i++)
		free(m->files[i]);
	free(m->files);
	free(m->ids);
	free(m->used);
	free(m->added.slots);
	free(m->bad.slots);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

#define IMAGE_PREFIX "image-"
#define STATE_PREFIX "istate-"

static void image_name(enum kp_sig_memo_key by, const unsigned char *key, char *name, size_t len)
{
	int at =
		snprintf(name, len, "%s", by == KP_SIG_MEMO_BY_STATE ? STATE_PREFIX : IMAGE_PREFIX);

	for (size_t i = 0; i < KP_SIG_MEMO_ID_LEN; i++)
		at += snprintf(name + at, len - (size_t)at, "%02x", key[i]);
	snprintf(name + at, len - (size_t)at, ".certs");
}

int kp_sig_memo_image_get(struct kp_sig_memo *m, enum kp_sig_memo_key by, const unsigned char *key,
			  unsigned char **der, size_t *len, uint32_t *n)
{
	unsigned char *buf;
	char name[96];
	size_t blen, off = HEADER_LEN;
	uint32_t i, cnt;
	int dfd;

	if (!m || (dfd = kp_memo_dir(m->dirfd, false)) < 0)
		return -1;
	image_name(by, key, name, sizeof(name));
	buf = kp_memo_read(dfd, name, IMAGE_MAGIC, &blen);
	close(dfd);
	if (!buf)
		return -1;
	/* every certificate's length within the file, nothing left over */
	cnt = kp_load32(buf + 8, false);
	for (i = 0; i < cnt && blen - off >= 4 &&
		    (kp_load32(buf + off, false) & KP_SIG_MEMO_LEN_MASK) <= blen - off - 4;
	     i++)
		off += 4 + (kp_load32(buf + off, false) & KP_SIG_MEMO_LEN_MASK);
	if (i != cnt || off != blen) {
		free(buf);
		return -1;
	}
	memmove(buf, buf + HEADER_LEN, blen - HEADER_LEN);
	*der = buf;
	*len = blen - HEADER_LEN;
	*n = cnt;
	count(&m->n.images);
	return 0;
}

#define IMAGE_STATE_TAG "kopolicy image state 1" /* its NUL too: no SHA-256 input of a key */

int kp_sig_memo_image_state_key(int fd, const struct stat *st, uid_t euid,
				unsigned char key[KP_SIG_MEMO_ID_LEN])
{
	unsigned char buf[sizeof(IMAGE_STATE_TAG) + 8 * 8];
	unsigned int klen = 0;
	struct timespec now;
	uint64_t v[8];
	int cls = kp_fs_class_of_fd(fd);

	if (cls < 0 || !S_ISREG(st->st_mode) || !kp_state_trusted(st, (enum kp_fs_class)cls, euid))
		return -1;
	kp_file_state(st, v);
	/* the image is read after this (memo_get(), image-certs.c): now is before its read */
	clock_gettime(CLOCK_REALTIME, &now);
	if (!kp_state_settled(v, &now))
		return -1;
	memcpy(buf, IMAGE_STATE_TAG, sizeof(IMAGE_STATE_TAG));
	for (size_t i = 0; i < 8; i++)
		kp_store64(buf + sizeof(IMAGE_STATE_TAG) + 8 * i, v[i]);
	if (EVP_Digest(buf, sizeof(buf), key, &klen, EVP_sha256(), NULL) != 1 ||
	    klen != KP_SIG_MEMO_ID_LEN)
		return -1;
	return 0;
}

void kp_sig_memo_image_put(struct kp_sig_memo *m, enum kp_sig_memo_key by, const unsigned char *key,
			   const unsigned char *der, size_t len, uint32_t n)
{
	unsigned char *buf;
	char name[96];
	int dfd;

	if (!m || len > MAX_FILE - HEADER_LEN || (dfd = kp_memo_dir(m->dirfd, true)) < 0)
		return;
	buf = malloc(HEADER_LEN + len);
	if (buf) {
		memcpy(buf, IMAGE_MAGIC, 8);
		kp_store32(buf + 8, n);
		if (len)
			memcpy(buf + HEADER_LEN, der, len);
		kp_store32(buf + 12, kp_memo_crc(buf + HEADER_LEN, len));
		image_name(by, key, name, sizeof(name));
		if (kp_memo_write(dfd, name, buf, HEADER_LEN + len) < 0 && errno == EEXIST) {
			/* stored meanwhile, or refused: a fresh copy replaces it */
			unlinkat(dfd, name, 0);
			kp_memo_write(dfd, name, buf, HEADER_LEN + len);
		}
		free(buf);
		kp_memo_prune(dfd, by == KP_SIG_MEMO_BY_STATE ? STATE_PREFIX : IMAGE_PREFIX,
			      MAX_IMAGES);
	}
	close(dfd);
}

/*
 * Every entry of the directory @dfd removed and counted; with @subdirs, a directory among
 * them (kmod-memo.c's kmod/) emptied the same way, one level, then removed.
 */
static void empty_dir(int dfd, bool subdirs, uint64_t *removed)
{
	DIR *d = kp_dir_list_at(dfd, ".");
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		int sfd;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (unlinkat(dfd, de->d_name, 0) == 0) {
			(*removed)++;
		} else if (subdirs && errno == EISDIR &&
			   (sfd = kp_trusted_subdir(dfd, de->d_name, false, NULL)) >= 0) {
			empty_dir(sfd, false, removed);
			close(sfd);
			unlinkat(dfd, de->d_name, AT_REMOVEDIR);
		}
	}
	closedir(d);
}

void kp_sig_memo_clear_at(int dirfd, uint64_t *removed)
{
	int dfd = kp_trusted_subdir_tidy(dirfd, KP_SIG_MEMO_DIR, true, removed, NULL);

	if (dfd < 0)
		return;
	empty_dir(dfd, true, removed);
	close(dfd);
	unlinkat(dirfd, KP_SIG_MEMO_DIR, AT_REMOVEDIR);
}

/* ---- kopolicy cache show / prune: what sigs/ holds ---- */

/* The memo's files: verdicts, images' certificates, and any other *.memo kept in sigs/. */
static bool memo_file(int dfd, const char *name, const struct stat *st, void *arg)
{
	size_t n = strlen(name);

	(void)dfd;
	(void)st;
	(void)arg;
	return name[0] != '.' && (!strncmp(name, IMAGE_PREFIX, strlen(IMAGE_PREFIX)) ||
				  !strncmp(name, STATE_PREFIX, strlen(STATE_PREFIX)) ||
				  (n > 5 && !strcmp(name + n - 5, ".memo")));
}

/* Counts @files (the first @n) into @u: verdicts from each verdict file's header count. */
static void usage_of(int dfd, const struct kp_dir_file *files, size_t n,
		     struct kp_sig_memo_usage *u)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char h[HEADER_LEN];
		int fd;

		u->files++;
		u->bytes += files[i].bytes;
		if (!strncmp(files[i].name, IMAGE_PREFIX, strlen(IMAGE_PREFIX)))
			u->images++;
		else if (!strncmp(files[i].name, STATE_PREFIX, strlen(STATE_PREFIX)))
			u->states++;
		else if (!strncmp(files[i].name, "btf-", 4))
			u->btf++;
		else if (!strncmp(files[i].name, "index-", 6))
			u->indexes++;
		if (!is_verdict_file(files[i].name))
			continue;
		fd = openat(dfd, files[i].name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		if (fd >= 0 && kp_pread_all(fd, h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
		    !memcmp(h, VERDICT_MAGIC, 8))
			u->verdicts += kp_load32(h + 8, false);
		if (fd >= 0)
			close(fd);
	}
}

/*
 * The memo files of @dfd kept the most recently written first (a run rewrites every verdict
 * it knows) while they fit in @max_bytes, the others removed: into *@files (malloc'ed) and
 * *@n, the kept ones first, *@k of them; their bytes returned. 0 kept when none is listed.
 */
static uint64_t keep_newest(int dfd, uint64_t max_bytes, struct kp_dir_file **files, size_t *n,
			    size_t *k, struct kp_sig_memo_usage *u)
{
	uint64_t total = 0;

	*files = NULL;
	*n = *k = 0;
	if (kp_dir_newest(dfd, memo_file, NULL, files, n) < 0)
		return 0;
	while (*k < *n && total + (*files)[*k].bytes <= max_bytes)
		total += (*files)[(*k)++].bytes;
	for (size_t i = *k; i < *n; i++)
		if (unlinkat(dfd, (*files)[i].name, 0) == 0)
			u->removed++;
	return total;
}

/*
 * libkmod's answers (kmod-memo.c's KP_KMOD_MEMO_DIR): kept within @max_bytes (what sigs/'s
 * own files left), counted as files; the directory removed once empty.
 */
static void prune_kmod(int dfd, uint64_t max_bytes, struct kp_sig_memo_usage *u)
{
	int sfd = kp_trusted_subdir(dfd, KP_KMOD_MEMO_DIR, false, NULL);
	struct kp_dir_file *files;
	size_t n, k;

	if (sfd < 0)
		return;
	keep_newest(sfd, max_bytes, &files, &n, &k, u);
	for (size_t i = 0; i < k; i++) {
		u->files++;
		u->kmod++;
		u->bytes += files[i].bytes;
	}
	free(files);
	close(sfd);
	if (!k)
		unlinkat(dfd, KP_KMOD_MEMO_DIR, AT_REMOVEDIR);
}

void kp_sig_memo_prune_at(int dirfd, uint64_t max_bytes, struct kp_sig_memo_usage *u)
{
	struct kp_dir_file *files;
	uint64_t total;
	size_t n, k;
	int dfd = kp_trusted_subdir_tidy(dirfd, KP_SIG_MEMO_DIR, max_bytes != UINT64_MAX,
					 &u->removed, NULL);

	if (dfd < 0)
		return;
	total = keep_newest(dfd, max_bytes, &files, &n, &k, u);
	usage_of(dfd, files, k, u);
	prune_kmod(dfd, max_bytes - total, u);
	free(files);
	close(dfd);
}

void kp_sig_memo_usage_at(int dirfd, struct kp_sig_memo_usage *u)
{
	kp_sig_memo_prune_at(dirfd, UINT64_MAX, u);
}
