// SPDX-License-Identifier: LGPL-2.1-or-later
#include "rootfs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool kp_root_is_host(const char *root)
{
	return !root || !root[0] || !strcmp(root, "/");
}

char *kp_root_path(const char *root, const char *rel)
{
	size_t rl, ll;
	char *p;

	if (kp_root_is_host(root))
		root = "";
	rl = strlen(root);
	while (rl > 1 && root[rl - 1] == '/')
		rl--;
	while (*rel == '/')
		rel++;
	ll = strlen(rel);
	p = malloc(rl + ll + 2);
	if (!p)
		return NULL;
	memcpy(p, root, rl);
	p[rl] = '/';
	memcpy(p + rl + 1, rel, ll + 1);
	return p;
}

char *kp_root_resolve_link(const char *root, const char *path)
{
	char target[PATH_MAX];
	ssize_t n = readlink(path, target, sizeof(target) - 1);
	const char *slash;
	char *p;

	if (n <= 0)
		return strdup(path);
	target[n] = '\0';
	if (target[0] == '/')
		return kp_root_path(root, target);
	slash = strrchr(path, '/');
	if (!slash)
		return strdup(target);
	p = malloc((size_t)(slash - path) + 1 + (size_t)n + 1);
	if (!p)
		return NULL;
	sprintf(p, "%.*s/%s", (int)(slash - path), path, target);
	return p;
}

bool kp_is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool kp_is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void prefix_err(struct kp_err *err, const char *path)
{
	char msg[sizeof(err->msg)];

	if (!err)
		return;
	snprintf(msg, sizeof(msg), "%s", err->msg);
	kp_err_set(err, "%s: %s", path, msg);
}

int kp_read_file(const char *path, size_t max, struct kp_bytes *out, struct kp_err *err)
{
	int r = kp_bytes_read_text(path, max, out, err);

	if (r < 0)
		prefix_err(err, path);
	return r;
}

int kp_read_first_line(const char *path, char *buf, size_t size, struct kp_err *err)
{
	struct kp_bytes b;
	size_t s = 0, e;
	int r;

	r = kp_read_file(path, (size_t)1 << 20, &b, err);
	if (r < 0)
		return r;
	e = b.len;
	for (size_t i = 0; i < b.len; i++) {
		if (b.data[i] == '\n' || b.data[i] == '\0') {
			e = i;
			break;
		}
	}
	while (s < e && (b.data[s] == ' ' || b.data[s] == '\t'))
		s++;
	while (e > s && (b.data[e - 1] == ' ' || b.data[e - 1] == '\t' || b.data[e - 1] == '\r'))
		e--;
	if (e - s >= size) {
		kp_bytes_release(&b);
		kp_err_set(err, "%s: first line is longer than %zu bytes", path, size - 1);
		return -EOVERFLOW;
	}
	memcpy(buf, b.data + s, e - s);
	buf[e - s] = '\0';
	kp_bytes_release(&b);
	return 0;
}
