// SPDX-License-Identifier: LGPL-2.1-or-later
#include "rootfs.h"
#include "file/inputs.h"
#include "file/rootopen.h"

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
	ssize_t n = kp_in_readlink(path, target, sizeof(target) - 1);
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

/* Appends @n bytes of @s to the path @p (length *@len, capacity *@cap) after a '/'. */
static int push_component(char **p, size_t *len, size_t *cap, const char *s, size_t n)
{
	if (kp_grow(p, cap, *len + n + 2, 1) < 0)
		return -1;
	(*p)[(*len)++] = '/';
	memcpy(*p + *len, s, n);
	*len += n;
	(*p)[*len] = '\0';
	return 0;
}

char *kp_root_resolve(const char *root, const char *rel)
{
	char *todo = strdup(rel), *host = NULL, *out = NULL, *result = NULL;
	size_t olen = 0, ocap = 0, pos = 0;
	unsigned links = 0;
	bool missing = false;

	errno = ENOMEM;
	if (!todo || kp_grow(&out, &ocap, 1, 1) < 0)
		goto done;
	out[0] = '\0';
	while (todo[pos]) {
		size_t n, tl;
		char target[PATH_MAX], *next;
		ssize_t r;

		while (todo[pos] == '/')
			pos++;
		n = strcspn(todo + pos, "/");
		if (!n)
			break;
		if (n == 1 && todo[pos] == '.') {
			pos += n;
			continue;
		}
		if (!missing && n == 2 && todo[pos] == '.' && todo[pos + 1] == '.') {
			char *slash = strrchr(out, '/');

			olen = slash ? (size_t)(slash - out) : 0;
			out[olen] = '\0';
			pos += n;
			continue;
		}
		if (push_component(&out, &olen, &ocap, todo + pos, n) < 0) {
			errno = ENOMEM;
			goto done;
		}
		pos += n;
		if (missing)
			continue;
		free(host);
		host = kp_root_path(root, out);
		if (!host) {
			errno = ENOMEM;
			goto done;
		}
		r = kp_in_readlink(host, target, sizeof(target) - 1);
		if (r < 0) {
			/* not a symlink; a component that does not exist ends the resolution */
			missing = errno != EINVAL;
			continue;
		}
		if (++links > KP_ROOT_MAX_LINKS) {
			errno = ELOOP;
			goto done;
		}
		target[r] = '\0';
		/* the link's directory, or the root for an absolute target */
		olen = target[0] == '/' ? 0 : (size_t)(strrchr(out, '/') - out);
		out[olen] = '\0';
		tl = (size_t)r + 1 + strlen(todo + pos) + 1;
		next = malloc(tl);
		if (!next) {
			errno = ENOMEM;
			goto done;
		}
		snprintf(next, tl, "%s/%s", target, todo + pos);
		free(todo);
		todo = next;
		pos = 0;
	}
	result = kp_root_path(root, out);
	if (!result)
		errno = ENOMEM;
done:
	free(todo);
	free(host);
	free(out);
	return result;
}

char *kp_root_resolve_path(const char *root, const char *path)
{
	size_t rl = 0;
	char *p;

	if (!kp_root_is_host(root)) {
		rl = strlen(root);
		while (rl > 1 && root[rl - 1] == '/')
			rl--;
		if (!strncmp(path, root, rl) && (path[rl] == '/' || path[rl] == '\0'))
			return kp_root_resolve(root, path + rl);
	}
	p = strdup(path);
	if (!p)
		errno = ENOMEM;
	return p;
}

char *kp_root_resolve_dir(const char *root, const char *rel)
{
	char *p;

	if (!kp_root_is_host(root))
		return kp_root_resolve(root, rel);
	p = kp_root_path(root, rel);
	if (!p)
		errno = ENOMEM;
	return p;
}

int kp_root_same_on_host(const char *root, const char *path)
{
	char *real = kp_root_resolve_path(root, path);
	struct stat a, b;
	int ra, rb, same;

	if (!real)
		return errno == ELOOP ? 0 : -1;
	if (!strcmp(real, path)) {
		free(real);
		return 1; /* no link on the way */
	}
	ra = kp_in_stat(path, &a);
	rb = kp_in_stat(real, &b);
	same = ra < 0 && rb < 0
		       ? 1
		       : ra == 0 && rb == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
	free(real);
	return same;
}

DIR *kp_opendir_in(const struct kp_root_dir *root, const char *path)
{
	const char *rel = root ? kp_root_rel(root->path, path) : NULL;
	int rootfd, fd, e;

	if (!rel)
		return kp_in_opendir(path);
	rootfd = root->fd >= 0 ? root->fd : kp_root_dir_open(root->path);
	fd = rootfd < 0
		     ? -1
		     : kp_root_openat(rootfd, rel,
				      O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	e = errno;
	if (rootfd >= 0 && root->fd < 0)
		close(rootfd);
	errno = e;
	return kp_in_fdopendir(path, fd);
}

DIR *kp_opendir_root(const char *root, const char *path)
{
	const struct kp_root_dir rd = { .path = root, .fd = -1 };

	return kp_opendir_in(kp_root_is_host(root) ? NULL : &rd, path);
}

bool kp_is_file(const char *path)
{
	struct stat st;

	return kp_in_stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool kp_is_dir(const char *path)
{
	struct stat st;

	return kp_in_stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int kp_read_file(const char *path, size_t max, struct kp_bytes *out, struct kp_err *err)
{
	int r = kp_bytes_read_text(path, max, out, err);

	return r < 0 ? kp_err_prefix(err, path) : 0;
}

int kp_read_file_in(const struct kp_root_dir *root, const char *path, size_t max,
		    struct kp_bytes *out, struct kp_err *err)
{
	int r = kp_bytes_read_text_in(root, path, max, out, err);

	return r < 0 ? kp_err_prefix(err, path) : 0;
}

int kp_read_first_line(const char *path, char *buf, size_t size, struct kp_err *err)
{
	return kp_read_first_line_in(NULL, path, buf, size, err);
}

int kp_bytes_first_line(struct kp_bytes *b, const char *path, char *buf, size_t size,
			struct kp_err *err)
{
	size_t s = 0, e;

	e = b->len;
	for (size_t i = 0; i < b->len; i++) {
		if (b->data[i] == '\n' || b->data[i] == '\0') {
			e = i;
			break;
		}
	}
	while (s < e && (b->data[s] == ' ' || b->data[s] == '\t'))
		s++;
	while (e > s && (b->data[e - 1] == ' ' || b->data[e - 1] == '\t' || b->data[e - 1] == '\r'))
		e--;
	if (e - s >= size) {
		kp_bytes_release(b);
		return kp_err_errno(err, EOVERFLOW, "%s: first line is longer than %zu bytes", path,
				    size - 1);
	}
	memcpy(buf, b->data + s, e - s);
	buf[e - s] = '\0';
	kp_bytes_release(b);
	return 0;
}

int kp_read_first_line_in(const struct kp_root_dir *root, const char *path, char *buf, size_t size,
			  struct kp_err *err)
{
	struct kp_bytes b;

	if (kp_read_file_in(root, path, (size_t)1 << 20, &b, err) < 0)
		return -1;
	return kp_bytes_first_line(&b, path, buf, size, err);
}
