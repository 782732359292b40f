// SPDX-License-Identifier: LGPL-2.1-or-later
/* The result cache's files (run-cache.h): writing an entry into place, show, prune, clear. */
#include "run-cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "read/facts-cache.h"
#include "run-cache-internal.h"
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
	if (fd >= 0)
		return fd;
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

/* The entries of @dir newest first (@tidy: stale temporary files removed); -1 on error. */
static int list(const char *dir, bool tidy, bool all_tmp, struct kp_dir_file **out, size_t *n,
		uint64_t *removed, struct kp_err *err)
{
	struct tidy t = { .tidy = tidy, .all_tmp = all_tmp, .now = time(NULL), .removed = removed };
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r;

	*out = NULL;
	*n = 0;
	if (dfd < 0)
		return errno == ENOENT ? 0 : kp_err_set(err, "%s: %s", dir, strerror(errno));
	r = kp_dir_newest(dfd, keep_entry, &t, out, n);
	close(dfd);
	return r < 0 ? kp_err_set(err, "out of memory") : 0;
}

int kp_run_cache_prune(const char *root, uint64_t max_bytes, struct kp_run_usage *u,
		       struct kp_err *err)
{
	struct kp_dir_file *v;
	char dir[4096], p[4200];
	size_t n, keep = 0;

	memset(u, 0, sizeof(*u));
	if (kp_run_cache_dir(root, dir, sizeof(dir)) < 0)
		return kp_err_set(err, "%s: path too long", root);
	if (list(dir, true, false, &v, &n, &u->removed, err) < 0)
		return -1;
	while (keep < n && u->bytes + v[keep].bytes <= max_bytes)
		u->bytes += v[keep++].bytes;
	for (size_t i = keep; i < n; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, v[i].name);
		if (unlink(p) == 0)
			u->removed++;
	}
	u->entries = keep;
	free(v);
	return 0;
}

int kp_run_cache_usage(const char *root, struct kp_run_usage *u, struct kp_err *err)
{
	return kp_run_cache_prune(root, UINT64_MAX, u, err);
}

int kp_run_cache_clear(const char *root, struct kp_run_usage *u, struct kp_err *err)
{
	struct kp_dir_file *v;
	char dir[4096], p[4200];
	size_t n;

	memset(u, 0, sizeof(*u));
	if (kp_run_cache_dir(root, dir, sizeof(dir)) < 0)
		return kp_err_set(err, "%s: path too long", root);
	if (list(dir, true, true, &v, &n, &u->removed, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, v[i].name);
		if (unlink(p) == 0)
			u->removed++;
	}
	free(v);
	rmdir(dir);
	return 0;
}

uint64_t kp_rc_budget(void)
{
	return kp_facts_cache_max_size() / 4;
}

int kp_rc_publish(const char *dir, int fd, const char *tmp, const char *name, uint64_t size)
{
	char link[64], proc[64];
	struct kp_run_usage u;
	struct kp_err err;
	char root[4096];
	int dfd, r = -1;

	if (size > kp_rc_budget())
		return -1;
	dfd = open(dir, O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
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
	close(dfd);
	if (r < 0)
		return -1;
	/* @dir is ROOT/runs-vN */
	snprintf(root, sizeof(root), "%s", dir);
	if (strrchr(root, '/'))
		*strrchr(root, '/') = '\0';
	kp_run_cache_prune(root, kp_rc_budget(), &u, &err);
	return 0;
}

void kp_rc_tmp_drop(const char *dir, int fd, const char *tmp)
{
	char p[4200];

	if (fd < 0)
		return;
	close(fd);
	if (tmp[0]) {
		snprintf(p, sizeof(p), "%s/%s", dir, tmp);
		unlink(p);
	}
}
