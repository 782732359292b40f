// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The facts cache's keys (facts-cache-keys.h): when a file's state names its bytes (trusted,
 * not racy, still the state the reader saw) and the SHA-256 content keys of its bytes; the
 * policy behind them is facts-cache.c's opening comment.
 */
#include "facts-cache.h"

#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "file/inputs.h"
#include "file/bytes.h"
#include "facts-cache-keys.h"
#include "facts-pack.h"
#include "util/content-hash.h"
#include "util/io.h"

bool kp_fc_same_state(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

static EVP_MD *sha256(struct kp_facts_cache *c)
{
	EVP_MD *md = __atomic_load_n(&c->sha256, __ATOMIC_ACQUIRE);

	if (md)
		return md;
	pthread_mutex_lock(&c->lock);
	if (!c->sha256)
		__atomic_store_n(&c->sha256, EVP_MD_fetch(NULL, "SHA256", NULL), __ATOMIC_RELEASE);
	md = c->sha256;
	pthread_mutex_unlock(&c->lock);
	return md;
}

/* SHA-256 of the @size bytes of @fd; 0, or -1 if they cannot be read (or there are more). */
static int hash_fd(struct kp_facts_cache *c, int fd, uint64_t size, unsigned char *key)
{
	_Static_assert(KP_FC_KEY_LEN == KP_CONTENT_HASH_LEN, "a content key is a content hash");
	return kp_content_hash_fd_md(fd, size, sha256(c), key);
}

/* SHA-256 of the file's bytes as they are on disk; -1 if it cannot be read or changed. */
int kp_fc_content_key(struct kp_facts_cache *c, const struct kp_root_dir *root, const char *path,
		      const struct stat *pre, unsigned char *key)
{
	struct kp_err err;
	struct stat st;
	int fd, r = -1;

	fd = kp_open_regular_in(root, path, &st, &err);
	if (fd < 0)
		return -1;
	if (kp_fc_same_state(pre, &st))
		r = hash_fd(c, fd, (uint64_t)st.st_size, key);
	close(fd);
	return r;
}

/* @st is the state @v a reader recorded (kp_file_state()). */
static bool in_state(const struct stat *st, const uint64_t *v)
{
	uint64_t now[8];

	kp_file_state(st, now);
	return !memcmp(now, v, sizeof(now));
}

/*
 * The file at @path is still in the state @v (a stat() not recorded: the reader recorded
 * it): what was read in that state was not written meanwhile, but within a timestamp tick.
 */
bool kp_fc_still_in_state(const char *path, const uint64_t *v)
{
	struct stat st;

	return stat(path, &st) == 0 && in_state(&st, v);
}

/*
 * The same for a deferred store, when the file may have changed since it was read: only
 * while it is still in the state @v the reader saw. Not through the recording wrappers
 * (file/inputs.h): the reader recorded this file in this state already.
 */
int kp_fc_content_key_at(struct kp_facts_cache *c, const char *path, const uint64_t *v,
			 unsigned char *key)
{
	struct stat st;
	int fd, r = -1;

	/* stat() first, as kp_open_regular(): opening what is no longer a file can act */
	if (!kp_fc_still_in_state(path, v))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0 && in_state(&st, v))
		r = hash_fd(c, fd, (uint64_t)st.st_size, key);
	/* written while it was hashed: the digest may be of no state's bytes */
	if (r == 0 && (fstat(fd, &st) < 0 || !in_state(&st, v)))
		r = -1;
	close(fd);
	return r;
}

/* The state @st of @path names its bytes (fs-trust.h): a stat() lookup or store is sound. */
bool kp_fc_trusted(struct kp_facts_cache *c, const char *path, const struct stat *st)
{
	int cls;

	pthread_mutex_lock(&c->lock);
	cls = kp_fs_devs_find(&c->devs, (uint64_t)st->st_dev);
	pthread_mutex_unlock(&c->lock);
	if (cls < 0) {
		cls = kp_fs_class_of_path(path, st, true);
		if (cls < 0)
			return false;
		pthread_mutex_lock(&c->lock);
		kp_fs_devs_add(&c->devs, (uint64_t)st->st_dev, (enum kp_fs_class)cls);
		pthread_mutex_unlock(&c->lock);
	}
	return kp_state_trusted(st, (enum kp_fs_class)cls, c->euid);
}

/*
 * The module in the state @st holds the bytes whose SHA-256 is @key: the result cache may
 * take it by its bytes when its state changes (file/inputs.h). Not when the run reads what
 * IMA appraisal looks at besides the bytes (its security.ima, owner and file system,
 * file/ima-xattr.h): a setxattr() or chown() changes only the state.
 */
void kp_fc_note_bytes(const struct kp_open_opts *opts, const uint64_t *st, const unsigned char *key)
{
	if (!opts->ima_xattr)
		kp_in_note_bytes(st, key);
}

/* Compressed by its name (.ko.xz, .ko.zst, .ko.gz): worth a content key. */
bool kp_fc_hashed_by_name(const char *path)
{
	size_t n = strlen(path);

	return !(n >= 3 && !strcmp(path + n - 3, ".ko"));
}
