// SPDX-License-Identifier: LGPL-2.1-or-later
/* Whole reads and writes (io.h). */
#include "io.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

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
	const unsigned char *p = buf;
	int saved = errno;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			errno = EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
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
