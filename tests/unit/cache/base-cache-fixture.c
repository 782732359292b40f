// SPDX-License-Identifier: GPL-2.0-or-later
/* base-cache-fixture.c: files and cache entries for the cache tests (base-cache-fixture.h). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base-cache-fixture.h"
#include "cache/base-cache.h"

int copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
	char buf[65536];
	size_t n;
	int r = 0;

	if (!in || !out)
		r = -1;
	while (r == 0 && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			r = -1;
	if (in)
		fclose(in);
	if (out && fclose(out))
		r = -1;
	return r;
}

bool only_entry(const char *root, char *p, size_t len)
{
	char cmd[512];
	FILE *f;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "ls %s/" KP_BASE_CACHE_DIR "/*.base 2>/dev/null", root);
	f = popen(cmd, "r");
	if (!f)
		return false;
	while (fgets(p, (int)len, f))
		n++;
	pclose(f);
	p[strcspn(p, "\n")] = '\0';
	return n == 1;
}

int flip(const char *path, off_t off)
{
	int fd = open(path, O_RDWR);
	unsigned char c;
	int r = -1;

	if (fd >= 0 && pread(fd, &c, 1, off) == 1) {
		c ^= 0x5a;
		r = pwrite(fd, &c, 1, off) == 1 ? 0 : -1;
	}
	if (fd >= 0)
		close(fd);
	return r;
}
