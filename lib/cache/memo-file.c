// SPDX-License-Identifier: LGPL-2.1-or-later
/* The files of the verdict memos beside the facts cache (memo-file.h). */
#include "memo-file.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/trusted-dir.h"
#include "util/io.h"
#include "util/util.h"
#include "util/crc32.h"

uint32_t kp_memo_crc(const unsigned char *p, size_t len)
{
	return kp_crc32(0, p, len);
}

int kp_memo_dir(int dirfd, bool create)
{
	return dirfd < 0 ? -1 : kp_trusted_subdir(dirfd, KP_MEMO_DIR, create, NULL);
}

int kp_memo_open(int dfd, const char *name, size_t *len)
{
	struct stat st;
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !kp_trusted_file(&st) || st.st_size < KP_MEMO_HEADER_LEN ||
	    (uint64_t)st.st_size > KP_MEMO_MAX_FILE) {
		close(fd);
		return -1;
	}
	*len = (size_t)st.st_size;
	return fd;
}

unsigned char *kp_memo_read(int dfd, const char *name, const char *magic, size_t *len)
{
	return kp_memo_read_max(dfd, name, magic, KP_MEMO_MAX_FILE, len);
}

unsigned char *kp_memo_read_max(int dfd, const char *name, const char *magic, uint64_t max,
				size_t *len)
{
	unsigned char *buf = NULL;
	size_t n;
	int fd = kp_memo_open(dfd, name, &n);

	if (fd < 0)
		return NULL;
	if ((uint64_t)n > max)
		goto out;
	buf = malloc(n);
	if (!buf)
		goto out;
	if (kp_pread_all(fd, buf, n, 0) != (ssize_t)n || memcmp(buf, magic, 8) ||
	    kp_load32(buf + 12, false) !=
		    kp_memo_crc(buf + KP_MEMO_HEADER_LEN, n - KP_MEMO_HEADER_LEN)) {
		free(buf);
		buf = NULL;
		goto out;
	}
	*len = n;
out:
	close(fd);
	return buf;
}

int kp_memo_write(int dfd, const char *name, const unsigned char *p, size_t len)
{
	char tmp[96], proc[64];
	int fd, r = -1;
	bool named = false;

	fd = openat(dfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(tmp, sizeof(tmp), ".tmp-sig-%ld-%ld", (long)getpid(), (long)gettid());
		fd = openat(dfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
		named = fd >= 0;
	}
	if (fd < 0)
		return -1;
	if (fchmod(fd, 0644) == 0 && kp_write_all(fd, p, len) == 0) {
		if (named) {
			r = renameat(dfd, tmp, dfd, name);
		} else {
			snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
			r = linkat(AT_FDCWD, proc, dfd, name, AT_SYMLINK_FOLLOW);
		}
	}
	if (r < 0 && named)
		unlinkat(dfd, tmp, 0);
	close(fd);
	return r;
}

struct old_file {
	char name[96];
	struct timespec mtime;
};

static int cmp_age(const void *a, const void *b)
{
	const struct old_file *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	return (x->mtime.tv_nsec > y->mtime.tv_nsec) - (x->mtime.tv_nsec < y->mtime.tv_nsec);
}

void kp_memo_prune(int dfd, const char *prefix, size_t keep)
{
	size_t cap = 0, n = 0, pl = strlen(prefix);
	struct old_file *files = NULL;
	DIR *d = kp_dir_list_at(dfd, ".");
	struct dirent *de;

	if (!d)
		return;
	/* at most 4 * @keep looked at; the array grows with what is found */
	while ((de = readdir(d)) && n < 4 * keep) {
		struct stat st;

		if (strncmp(de->d_name, prefix, pl) ||
		    strlen(de->d_name) >= sizeof(files[0].name) ||
		    fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (kp_grow(&files, &cap, n + 1, sizeof(*files)) < 0)
			break;
		snprintf(files[n].name, sizeof(files[n].name), "%s", de->d_name);
		files[n++].mtime = st.st_mtim;
	}
	closedir(d);
	if (n > keep) {
		qsort(files, n, sizeof(*files), cmp_age);
		for (size_t i = 0; i < n - keep; i++)
			unlinkat(dfd, files[i].name, 0);
	}
	free(files);
}
