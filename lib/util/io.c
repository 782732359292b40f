// SPDX-License-Identifier: LGPL-2.1-or-later
/* Whole reads and writes (io.h). */
#include "io.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "util.h"

ssize_t kp_pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	unsigned char *p = buf;
	size_t done = 0;
	int saved = errno;

	while (done < len) {
		ssize_t n = pread(fd, p + done, len - done, (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	errno = saved;
	return (ssize_t)done;
}

int kp_write_all(int fd, const void *buf, size_t len)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return kp_writev_all(fd, &iov, 1);
}

int kp_writev_all(int fd, struct iovec *iov, int n)
{
	int saved = errno;

	while (n > 0) {
		ssize_t w;

		if (!iov->iov_len) { /* nothing to write: never a writev() that writes 0 */
			iov++;
			n--;
			continue;
		}
		w = writev(fd, iov, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		if (w == 0) {
			errno = EIO;
			return -1;
		}
		for (; n > 0 && (size_t)w >= iov->iov_len; iov++, n--)
			w -= (ssize_t)iov->iov_len;
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	errno = saved;
	return 0;
}

int kp_mkdir_p(const char *path)
{
	char p[4096];

	if ((size_t)snprintf(p, sizeof(p), "%s", path) >= sizeof(p))
		return -1;
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST) {
			*s = '/';
			return -1;
		}
		*s = '/';
	}
	return mkdir(p, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

void kp_file_state(const struct stat *st, uint64_t *v)
{
	v[0] = (uint64_t)st->st_dev;
	v[1] = (uint64_t)st->st_ino;
	v[2] = (uint64_t)st->st_size;
	v[3] = (uint64_t)st->st_mtim.tv_sec;
	v[4] = (uint64_t)st->st_mtim.tv_nsec;
	v[5] = (uint64_t)st->st_ctim.tv_sec;
	v[6] = (uint64_t)st->st_ctim.tv_nsec;
	v[7] = (uint64_t)st->st_mode;
}

static int cmp_newest(const void *a, const void *b)
{
	const struct kp_dir_file *x = a, *y = b;

	if (x->mtime != y->mtime)
		return x->mtime > y->mtime ? -1 : 1;
	return strcmp(x->name, y->name);
}

DIR *kp_dir_list_at(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d && fd >= 0) {
		int e = errno;

		close(fd);
		errno = e;
	}
	return d;
}

int kp_dir_newest(int dfd,
		  bool (*keep)(int dfd, const char *name, const struct stat *st, void *arg),
		  void *arg, struct kp_dir_file **out, size_t *n)
{
	struct kp_dir_file *v = NULL;
	size_t cap = 0;
	struct dirent *de;
	DIR *d = kp_dir_list_at(dfd, ".");

	*out = NULL;
	*n = 0;
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		struct stat st;

		if (strlen(de->d_name) >= sizeof(v->name) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode) || !keep(dirfd(d), de->d_name, &st, arg))
			continue;
		if (kp_grow(&v, &cap, *n + 1, sizeof(*v)) < 0) {
			closedir(d);
			free(v);
			*n = 0;
			return -1;
		}
		memcpy(v[*n].name, de->d_name, strlen(de->d_name) + 1);
		v[*n].mtime = st.st_mtim.tv_sec;
		v[*n].bytes = (uint64_t)st.st_blocks * 512;
		(*n)++;
	}
	closedir(d);
	if (*n > 1)
		qsort(v, *n, sizeof(*v), cmp_newest);
	*out = v;
	return 0;
}
