// SPDX-License-Identifier: LGPL-2.1-or-later
/* The depmod indexes that passed the hook's check, beside the facts cache (index-memo.h). */
#include "index-memo.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache/memo-file.h"
#include "util/fs-trust.h"
#include "util/io.h"
#include "util/util.h"

#define MAGIC	    "KPIDXOK1"
#define PREFIX	    "index-"
#define FILE_LEN    (KP_MEMO_HEADER_LEN + KP_INDEX_MEMO_KEY_LEN)
#define MAX_FILES   64 /* the oldest beyond go when one is stored */
#define DIR_UNKNOWN (-2)
/* zero-padded to KP_INDEX_MEMO_TAG_LEN; the release: a new checker walks every index again */
#define STATE_TAG "kopolicy depmod index state 1 " PACKAGE_VERSION

_Static_assert(sizeof(STATE_TAG) <= KP_INDEX_MEMO_TAG_LEN, "the tag fits its field");

struct kp_index_memo {
	int dirfd;  /* the facts directory (borrowed); -1: nothing read or written */
	int memofd; /* its memo directory: DIR_UNKNOWN until looked for, -1 when none */
	uid_t euid;
	pthread_mutex_t lock;
	struct kp_index_memo_counts counts;
};

struct kp_index_memo *kp_index_memo_new(int dirfd)
{
	struct kp_index_memo *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	if (pthread_mutex_init(&m->lock, NULL) != 0) {
		free(m);
		return NULL;
	}
	m->dirfd = dirfd;
	m->memofd = DIR_UNKNOWN;
	m->euid = geteuid();
	return m;
}

void kp_index_memo_free(struct kp_index_memo *m)
{
	if (!m)
		return;
	if (m->memofd >= 0)
		close(m->memofd);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

int kp_index_memo_key(const struct kp_index_memo *m, int fd, const struct stat *st,
		      const struct timespec *before, unsigned char key[KP_INDEX_MEMO_KEY_LEN])
{
	uint64_t v[8];
	int cls;

	if (!m || m->dirfd < 0 || !S_ISREG(st->st_mode))
		return -1;
	cls = kp_fs_class_of_fd(fd);
	if (cls < 0 || !kp_state_trusted(st, (enum kp_fs_class)cls, m->euid))
		return -1;
	kp_file_state(st, v);
	if (!kp_state_settled(v, before))
		return -1;
	memset(key, 0, KP_INDEX_MEMO_TAG_LEN);
	memcpy(key, STATE_TAG, sizeof(STATE_TAG));
	for (size_t i = 0; i < 8; i++)
		kp_store64(key + KP_INDEX_MEMO_TAG_LEN + 8 * i, v[i]);
	return 0;
}

/* The file of @key: named by its device and inode (one file per index file). */
static void file_name(const unsigned char *key, char *name, size_t len)
{
	const unsigned char *v = key + KP_INDEX_MEMO_TAG_LEN;

	snprintf(name, len, PREFIX "%016llx-%016llx.memo", (unsigned long long)kp_load64(v, false),
		 (unsigned long long)kp_load64(v + 8, false));
}

/* Under @m->lock: the memo directory (made when @create), or -1. */
static int memo_dir(struct kp_index_memo *m, bool create)
{
	if (m->memofd == DIR_UNKNOWN || (m->memofd < 0 && create))
		m->memofd = kp_memo_dir(m->dirfd, create);
	return m->memofd;
}

bool kp_index_memo_passed(struct kp_index_memo *m, const unsigned char *key)
{
	unsigned char *buf = NULL;
	char name[96];
	size_t len = 0;
	bool ok;
	int dfd;

	if (!m || m->dirfd < 0)
		return false;
	file_name(key, name, sizeof(name));
	pthread_mutex_lock(&m->lock);
	dfd = memo_dir(m, false);
	if (dfd >= 0)
		buf = kp_memo_read(dfd, name, MAGIC, &len);
	/* exactly one key, the one asked for, whole: another state of the same inode is a miss */
	ok = buf && len == FILE_LEN && kp_load32(buf + 8, false) == 1 &&
	     !memcmp(buf + KP_MEMO_HEADER_LEN, key, KP_INDEX_MEMO_KEY_LEN);
	if (ok)
		m->counts.hits++;
	pthread_mutex_unlock(&m->lock);
	free(buf);
	return ok;
}

void kp_index_memo_put(struct kp_index_memo *m, const unsigned char *key)
{
	unsigned char buf[FILE_LEN];
	char name[96];
	int dfd, r;

	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->counts.checked++;
	if (!key || m->dirfd < 0 || (dfd = memo_dir(m, true)) < 0) {
		pthread_mutex_unlock(&m->lock);
		return;
	}
	memcpy(buf, MAGIC, 8);
	kp_store32(buf + 8, 1);
	memcpy(buf + KP_MEMO_HEADER_LEN, key, KP_INDEX_MEMO_KEY_LEN);
	kp_store32(buf + 12, kp_memo_crc(buf + KP_MEMO_HEADER_LEN, KP_INDEX_MEMO_KEY_LEN));
	file_name(key, name, sizeof(name));
	r = kp_memo_write(dfd, name, buf, sizeof(buf));
	if (r < 0 && errno == EEXIST) {
		/* one that was not believed (damaged, another's), or a concurrent run's */
		unlinkat(dfd, name, 0);
		r = kp_memo_write(dfd, name, buf, sizeof(buf));
	}
	if (r == 0)
		m->counts.stored++;
	kp_memo_prune(dfd, PREFIX, MAX_FILES);
	pthread_mutex_unlock(&m->lock);
}

void kp_index_memo_counts(const struct kp_index_memo *m, struct kp_index_memo_counts *out)
{
	pthread_mutex_lock((pthread_mutex_t *)&m->lock);
	*out = m->counts;
	pthread_mutex_unlock((pthread_mutex_t *)&m->lock);
}
