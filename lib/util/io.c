// SPDX-License-Identifier: LGPL-2.1-or-later
/* Whole reads and writes (io.h). */
#include "io.h"

#include <errno.h>
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
