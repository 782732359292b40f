// SPDX-License-Identifier: LGPL-2.1-or-later
/* The module files kmod opens by name after the hook's answer, tested (module-trust.h). */
#include "module-trust.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/trusted-dir.h"
#include "file/rootfs.h"

enum { WALK_REFUSED = 0, WALK_TRUSTED = 1, WALK_LINK = 2 };

int kp_module_trust_init(struct kp_module_trust *t, const struct kp_root_dir *root,
			 struct kp_err *err)
{
	t->root = root && !kp_root_is_host(root->path) ? root->path : NULL;
	t->depth = 0;
	t->dir[0] = '\0';
	t->own_root = !root || root->fd < 0;
	t->rootfd = t->own_root ? (t->root ? kp_root_dir_open(t->root)
					   : open("/", O_PATH | O_DIRECTORY | O_CLOEXEC))
				: root->fd;
	if (t->rootfd < 0)
		return kp_err_errno(err, errno, "%s: %s", t->root ? t->root : "/", strerror(errno));
	return 0;
}

/* The kept directories from @keep down closed. */
static void drop_from(struct kp_module_trust *t, size_t keep)
{
	while (t->depth > keep)
		close(t->fds[--t->depth]);
}

void kp_module_trust_release(struct kp_module_trust *t)
{
	drop_from(t, 0);
	if (t->own_root && t->rootfd >= 0)
		close(t->rootfd);
	t->rootfd = -1;
}

/* @rel's first @len bytes (under the root) refused for @st, into @bad. */
static int refuse(const struct kp_module_trust *t, const char *rel, size_t len,
		  const struct stat *st, struct kp_untrusted *bad)
{
	size_t rl = t->root ? strlen(t->root) : 0;

	while (rl > 1 && t->root[rl - 1] == '/')
		rl--;
	snprintf(bad->path, sizeof(bad->path), "%.*s/%.*s", (int)rl, t->root ? t->root : "",
		 (int)len, rel);
	bad->uid = (unsigned)st->st_uid;
	bad->mode = (unsigned)(st->st_mode & 07777);
	bad->owner_trusted = kp_trusted_owner(st);
	return WALK_REFUSED;
}

/* The name @name of @dfd is a link: one owned by root or us is followed (WALK_LINK). */
static int link_at(const struct kp_module_trust *t, int dfd, const char *name, const char *rel,
		   size_t len, struct kp_untrusted *bad, struct kp_err *err)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return kp_err_errno(err, errno, "%.*s: %s", (int)len, rel, strerror(errno));
	if (!S_ISLNK(st.st_mode))
		return kp_err_errno(err, ENOTDIR, "%.*s: not a directory", (int)len, rel);
	return kp_trusted_owner(&st) ? WALK_LINK : refuse(t, rel, len, &st, bad);
}

/*
 * The directories of @rel (under the root, no leading '/') up to its last '/' (@dlen bytes)
 * walked from the deepest kept one it shares, each checked and kept (KP_MODULE_TRUST_DEPTH
 * at most). WALK_TRUSTED with the last one in *@dirfd (closed by the caller when *@transient:
 * deeper than what is kept), another WALK_* or -1 with @err.
 */
static int walk_dirs(struct kp_module_trust *t, const char *rel, size_t dlen, int *dirfd,
		     bool *transient, struct kp_untrusted *bad, struct kp_err *err)
{
	char name[NAME_MAX + 1];
	size_t keep = 0, pos;
	int fd;

	if (dlen >= sizeof(t->dir))
		return kp_err_errno(err, ENAMETOOLONG, "%.*s: path too long", (int)dlen, rel);
	while (keep < t->depth) {
		size_t e = t->ends[keep];

		if (e > dlen || strncmp(t->dir, rel, e) || (e < dlen && rel[e] != '/'))
			break;
		keep++;
	}
	drop_from(t, keep);
	memcpy(t->dir, rel, dlen); /* the kept part is the same */
	t->dir[dlen] = '\0';
	fd = keep ? t->fds[keep - 1] : t->rootfd;
	pos = keep ? t->ends[keep - 1] + 1 : 0;
	*transient = false;
	while (pos < dlen) {
		size_t n = strcspn(rel + pos, "/");
		struct stat st;
		int next;

		if (pos + n > dlen)
			n = dlen - pos;
		if (!n || (n == 1 && rel[pos] == '.')) {
			pos += n + 1;
			continue;
		}
		if (n > NAME_MAX) {
			kp_err_errno(err, ENAMETOOLONG, "%.*s: a component is too long", (int)dlen,
				     rel);
			goto fail;
		}
		memcpy(name, rel + pos, n);
		name[n] = '\0';
		if (!strcmp(name, "..")) {
			/* never climbed from a descriptor: out of the root; resolved instead */
			if (*transient)
				close(fd);
			return WALK_LINK;
		}
		next = openat(fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && (errno == ELOOP || errno == ENOTDIR)) {
			int r = link_at(t, fd, name, rel, pos + n, bad, err);

			if (*transient)
				close(fd);
			return r;
		}
		if (next < 0) {
			kp_err_errno(err, errno, "%.*s: %s", (int)(pos + n), rel, strerror(errno));
			goto fail;
		}
		if (*transient)
			close(fd);
		fd = next;
		*transient = t->depth == KP_MODULE_TRUST_DEPTH;
		if (fstat(fd, &st) < 0) {
			kp_err_errno(err, errno, "%.*s: %s", (int)(pos + n), rel, strerror(errno));
			*transient = true;
			goto fail;
		}
		if (!kp_trusted_owner(&st) || !kp_trusted_dir_mode(&st, true)) {
			close(fd);
			return refuse(t, rel, pos + n, &st, bad);
		}
		if (!*transient) {
			t->fds[t->depth] = fd;
			t->ends[t->depth++] = pos + n;
		}
		pos += n + 1;
	}
	*dirfd = fd;
	return WALK_TRUSTED;
fail:
	if (*transient)
		close(fd);
	return -1;
}

/* @rel (under the root, no leading '/') walked whole: WALK_* or -1 with @err. */
static int walk(struct kp_module_trust *t, const char *rel, struct kp_untrusted *bad,
		struct kp_err *err)
{
	const char *slash = strrchr(rel, '/');
	size_t dlen = slash ? (size_t)(slash - rel) : 0;
	const char *base = slash ? slash + 1 : rel;
	bool transient = false;
	struct stat st;
	int r, dirfd = -1;

	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return kp_err_errno(err, EISDIR, "%s: not a module file", rel);
	r = walk_dirs(t, rel, dlen, &dirfd, &transient, bad, err);
	if (r != WALK_TRUSTED)
		return r;
	if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
		r = kp_err_errno(err, errno, "%s: %s", rel, strerror(errno));
	else if (S_ISLNK(st.st_mode))
		r = kp_trusted_owner(&st) ? WALK_LINK : refuse(t, rel, strlen(rel), &st, bad);
	else if (!kp_trusted_file(&st))
		r = refuse(t, rel, strlen(rel), &st, bad);
	if (transient)
		close(dirfd);
	return r;
}

int kp_module_trust_check(struct kp_module_trust *t, const char *path, struct kp_untrusted *bad,
			  struct kp_err *err)
{
	const char *rel = t->root ? kp_root_rel(t->root, path) : path;
	char *real;
	int r;

	if (!rel)
		return kp_err_errno(err, EXDEV, "%s: not under %s", path, t->root);
	while (*rel == '/')
		rel++;
	r = walk(t, rel, bad, err);
	if (r != WALK_LINK)
		return r;
	/* a link owned by root or us in a directory that passed: its target walked the same way */
	real = kp_root_resolve(t->root, rel);
	if (!real)
		return kp_err_errno(err, errno, "%s: %s", path, strerror(errno));
	rel = t->root ? kp_root_rel(t->root, real) : real;
	while (rel && *rel == '/')
		rel++;
	r = rel ? walk(t, rel, bad, err) : kp_err_errno(err, EXDEV, "%s: out of the root", path);
	if (r == WALK_LINK) /* resolved, a link again: changed while it was walked */
		r = kp_err_errno(err, EAGAIN, "%s: a link changed while it was checked", path);
	free(real);
	return r;
}
