// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The result cache's files (run-cache.h): writing an entry into place, show, prune, clear.
 * Everything is done through descriptors of directories that passed the trust test
 * (trusted-dir.h): a name is never resolved through a link.
 */
#include "run-cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cache/facts-cache.h"
#include "run-cache-internal.h"
#include "trusted-dir.h"
#include "util/io.h"

#define TMP_MAX_AGE 3600 /* a temporary file older than this was left by a crash */

static void tmp_name(char *buf, size_t len)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(buf, len, ".tmp-%ld-%ld", (long)getpid(), now.tv_nsec);
}

int kp_rc_tmpfile(int dfd, char *tmp, size_t len)
{
	int fd = openat(dfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);

	tmp[0] = '\0';
	/* 0644 whatever the umask: a group-writable entry is never believed (trusted-dir.h) */
	if (fd >= 0)
		return fchmod(fd, 0644) == 0 ? fd : (close(fd), -1);
	/* a run takes two (its entry, its inputs' spill file): a name taken gets a suffix */
	for (int i = 0; fd < 0 && i < 8; i++) {
		size_t n;

		tmp_name(tmp, len);
		n = strlen(tmp);
		if (i)
			snprintf(tmp + n, len - n, "-%d", i);
		fd = openat(dfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd >= 0 && fchmod(fd, 0644) < 0) {
		unlinkat(dfd, tmp, 0);
		close(fd);
		fd = -1;
	}
	if (fd < 0)
		tmp[0] = '\0';
	return fd;
}

int kp_rc_finish_entry(int fd, const unsigned char *h, uint64_t size)
{
	struct stat st;

	if (pwrite(fd, h, 64, 0) != 64 || fstat(fd, &st) < 0 || (uint64_t)st.st_size != size)
		return -1;
	return 0;
}

static bool is_entry(const char *name)
{
	size_t n = strlen(name);

	return name[0] != '.' && n > 4 && n < 64 && !strcmp(name + n - 4, ".run");
}

struct tidy {
	bool tidy, all_tmp;
	time_t now;
	uint64_t *removed;
};

/* An entry; a temporary file is removed on the way when stale (@tidy) or always (@all_tmp). */
static bool keep_entry(int dfd, const char *name, const struct stat *st, void *arg)
{
	const struct tidy *t = arg;

	if (!strncmp(name, ".tmp-", 5)) {
		if ((t->all_tmp || (t->tidy && st->st_mtim.tv_sec + TMP_MAX_AGE < t->now)) &&
		    unlinkat(dfd, name, 0) == 0)
			(*t->removed)++;
		return false;
	}
	return is_entry(name);
}

/*
 * The result cache's directory under the cache root @root, for show, prune and clear: its
 * O_PATH descriptor in *@dfd, -1 when there is none (an empty cache); the root's in *@rootfd
 * (or -1). A link in the directory's place is removed as a link (@tidy), never followed.
 * 0, or -1 with @err.
 */
static int open_runs(const char *root, bool tidy, uint64_t *removed, int *rootfd, int *dfd,
		     struct kp_err *err)
{
	*dfd = -1;
	*rootfd = kp_trusted_dir_open(root, false, err);
	if (*rootfd < 0)
		return kp_err_errnum(err) == ENOENT ? 0 : -1;
	*dfd = kp_trusted_subdir_tidy(*rootfd, KP_RC_DIR_NAME, tidy, removed, err);
	if (*dfd < 0 && kp_err_errnum(err) == ENOENT)
		return 0;
	return *dfd < 0 ? kp_err_prefix(err, root) : 0;
}

/* What listing a directory of entries removes on the way. */
enum sweep {
	SWEEP_NONE,	 /* nothing (show) */
	SWEEP_STALE,	 /* stale temporary files (after storing an entry) */
	SWEEP_LINKS,	 /* and every link, as a link (prune) */
	SWEEP_ALL_LINKS, /* every temporary file and every link (clear) */
};

/* The entries of @dfd newest first, after removing what @sweep says; -1 when out of memory. */
static int list(int dfd, enum sweep sweep, struct kp_dir_file **out, size_t *n, uint64_t *removed,
		struct kp_err *err)
{
	struct tidy t = { .tidy = sweep != SWEEP_NONE,
			  .all_tmp = sweep == SWEEP_ALL_LINKS,
			  .now = time(NULL),
			  .removed = removed };

	if (sweep >= SWEEP_LINKS)
		kp_trusted_remove_links(dfd, removed);
	if (kp_dir_newest(dfd, keep_entry, &t, out, n) < 0)
		return kp_err_set(err, "out of memory");
	return 0;
}

/* Removes the entries of @dfd but the newest ones that fit @max_bytes; counts into @u. */
static int prune_fd(int dfd, uint64_t max_bytes, enum sweep sweep, struct kp_run_usage *u,
		    struct kp_err *err)
{
	struct kp_dir_file *v;
	size_t n, keep = 0;

	if (list(dfd, sweep, &v, &n, &u->removed, err) < 0)
		return -1;
	while (keep < n && u->bytes + v[keep].bytes <= max_bytes)
		u->bytes += v[keep++].bytes;
	for (size_t i = keep; i < n; i++)
		if (unlinkat(dfd, v[i].name, 0) == 0)
			u->removed++;
	u->entries = keep;
	free(v);
	return 0;
}

static int prune_root(const char *root, uint64_t max_bytes, bool tidy, struct kp_run_usage *u,
		      struct kp_err *err)
{
	int rootfd, dfd, r;

	memset(u, 0, sizeof(*u));
	r = open_runs(root, tidy, &u->removed, &rootfd, &dfd, err);
	if (r == 0 && dfd >= 0)
		r = prune_fd(dfd, max_bytes, tidy ? SWEEP_LINKS : SWEEP_NONE, u, err);
	if (dfd >= 0)
		close(dfd);
	if (rootfd >= 0)
		close(rootfd);
	return r;
}

int kp_run_cache_prune(const char *root, uint64_t max_bytes, struct kp_run_usage *u,
		       struct kp_err *err)
{
	return prune_root(root, max_bytes, true, u, err);
}

int kp_run_cache_usage(const char *root, struct kp_run_usage *u, struct kp_err *err)
{
	return prune_root(root, UINT64_MAX, false, u, err);
}

int kp_run_cache_clear(const char *root, struct kp_run_usage *u, struct kp_err *err)
{
	struct kp_dir_file *v;
	int rootfd, dfd, r;
	size_t n;

	memset(u, 0, sizeof(*u));
	r = open_runs(root, true, &u->removed, &rootfd, &dfd, err);
	if (r == 0 && dfd >= 0) {
		r = list(dfd, SWEEP_ALL_LINKS, &v, &n, &u->removed, err);
		for (size_t i = 0; r == 0 && i < n; i++)
			if (unlinkat(dfd, v[i].name, 0) == 0)
				u->removed++;
		if (r == 0)
			free(v);
		close(dfd);
		unlinkat(rootfd, KP_RC_DIR_NAME, AT_REMOVEDIR);
	}
	if (rootfd >= 0)
		close(rootfd);
	return r;
}

uint64_t kp_rc_budget(void)
{
	return kp_facts_cache_max_size() / 4;
}

int kp_rc_publish(int dfd, int fd, const char *tmp, const char *name, uint64_t size)
{
	char link[64], proc[64];
	struct kp_run_usage u = { 0 };
	struct kp_err err;
	int r = -1;

	if (size > kp_rc_budget())
		return -1;
	if (tmp[0]) {
		r = renameat(dfd, tmp, dfd, name);
	} else {
		/* the unnamed file gets a temporary name, then replaces the entry atomically */
		tmp_name(link, sizeof(link));
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		if (linkat(AT_FDCWD, proc, dfd, link, AT_SYMLINK_FOLLOW) == 0) {
			r = renameat(dfd, link, dfd, name);
			if (r < 0)
				unlinkat(dfd, link, 0);
		}
	}
	if (r < 0)
		return -1;
	/* links are for prune and clear: a store pays for no second pass over the directory */
	prune_fd(dfd, kp_rc_budget(), SWEEP_STALE, &u, &err);
	return 0;
}

void kp_rc_drop_pages(const unsigned char *p, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)p, hi = lo + len;

	if (page <= 0)
		return;
	lo = (lo + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
	hi &= ~((uintptr_t)page - 1);
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

void kp_rc_tmp_drop(int dfd, int fd, const char *tmp)
{
	if (fd < 0)
		return;
	close(fd);
	if (tmp[0] && dfd >= 0)
		unlinkat(dfd, tmp, 0);
}
