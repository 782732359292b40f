// SPDX-License-Identifier: LGPL-2.1-or-later
/* The caches' trust model (trusted-dir.h): a directory opened one checked component at a time. */
#include "trusted-dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fs-trust.h"

#define MAX_LINKS 40 /* the kernel's own limit for one lookup */

bool kp_trusted_owner(const struct stat *st)
{
	return st->st_uid == geteuid() || st->st_uid == 0;
}

bool kp_trusted_file(const struct stat *st)
{
	return S_ISREG(st->st_mode) && kp_trusted_owner(st) && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

bool kp_trusted_dir_mode(const struct stat *st, bool sticky_ok)
{
	return !(st->st_mode & (S_IWGRP | S_IWOTH)) || (sticky_ok && (st->st_mode & S_ISVTX));
}

/*
 * The directory @fd (shown as @shown) passes the test: owned by us or root, not writable by
 * group or others (a sticky one above the cache directory, @last false, excepted), and on a
 * local file system when @local. 0 or -1.
 */
static int check_dir(int fd, const char *shown, bool last, bool local, struct kp_err *err)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return kp_err_errno(err, errno, "%s: %s", shown, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return kp_err_errno(err, ENOTDIR, "%s: not a directory", shown);
	if (!kp_trusted_owner(&st) && geteuid() == 0)
		return kp_err_errno(err, EPERM, "%s is owned by uid %u, not by root", shown,
				    (unsigned)st.st_uid);
	if (!kp_trusted_owner(&st))
		return kp_err_errno(err, EPERM, "%s is owned by uid %u, not by uid %u or root",
				    shown, (unsigned)st.st_uid, (unsigned)geteuid());
	if (!kp_trusted_dir_mode(&st, !last))
		return kp_err_errno(err, EPERM, "%s is writable by %s", shown,
				    st.st_mode & S_IWOTH ? "others" : "its group");
	if (local && kp_fs_class_of_fd(fd) != KP_FS_LOCAL)
		return kp_err_errno(err, EPERM, "%s is not on a local file system", shown);
	return 0;
}

/*
 * The component @name of @dfd as a directory: opened without following a link, created
 * first when missing and @create. The descriptor, or -1 with errno (ELOOP or ENOTDIR for a
 * link or another file).
 */
static int open_component(int dfd, const char *name, bool create)
{
	int fd = openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd >= 0 || errno != ENOENT || !create)
		return fd;
	if (mkdirat(dfd, name, 0755) == 0) {
		/* 0755 whatever the umask (a group-writable one fails the test) */
		fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0) {
			fchmod(fd, 0755);
			close(fd);
		}
	} else if (errno != EEXIST) {
		return errno == EPERM ? (errno = EACCES, -1) : -1;
	}
	return openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

int kp_trusted_subdir(int dfd, const char *name, bool create, struct kp_err *err)
{
	int fd = open_component(dfd, name, create);

	if (fd < 0) {
		if (errno == ELOOP || errno == ENOTDIR)
			return kp_err_errno(err, EPERM, "%s: a link or not a directory", name);
		return kp_err_errno(err, errno, "%s: %s", name, strerror(errno));
	}
	if (check_dir(fd, name, true, false, err) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The next component of *@p into @name (empty ones and "." skipped): 1, 0 at the end, -1 when
 * too long. */
static int next_component(const char **p, char *name)
{
	const char *s = *p;
	size_t n;

	for (;;) {
		while (*s == '/')
			s++;
		if (!*s) {
			*p = s;
			return 0;
		}
		n = strcspn(s, "/");
		if (n > NAME_MAX)
			return -1;
		if (!(n == 1 && s[0] == '.'))
			break;
		s += n;
	}
	memcpy(name, s, n);
	name[n] = '\0';
	*p = s + n;
	return 1;
}

/* Nothing but separators and "." left in @p: the component just read is the last one. */
static bool at_end(const char *p)
{
	char name[NAME_MAX + 1];

	return next_component(&p, name) == 0;
}

/* The walk's state: where it is, what it has shown so far, what is left to walk. */
struct walk {
	int fd;
	int links;
	bool local; /* every directory on a local file system */
	char shown[PATH_MAX];
	char rest[PATH_MAX];
};

/* Starts (again) at "/": 0 or -1. */
static int walk_root(struct walk *w, struct kp_err *err)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (w->fd < 0)
		return kp_err_errno(err, errno, "/: %s", strerror(errno));
	w->shown[0] = '\0';
	return check_dir(w->fd, "/", false, w->local, err);
}

/* Appends (or for "..", takes away) @name in @w->shown. */
static void show_step(struct walk *w, const char *name)
{
	size_t n = strlen(w->shown);

	if (!strcmp(name, "..")) {
		char *slash = strrchr(w->shown, '/');

		if (slash)
			*slash = '\0';
		return;
	}
	/* the walk's own buffers, no formatting: a truncated name only shortens a message */
	if (n + 1 < sizeof(w->shown)) {
		size_t len = strnlen(name, sizeof(w->shown) - n - 2);

		w->shown[n] = '/';
		memcpy(w->shown + n + 1, name, len);
		w->shown[n + 1 + len] = '\0';
	}
}

/*
 * @name of @w->fd is a link: followed when owned by us or root, its target put before what is
 * left (@left). 0 or -1.
 */
static int follow(struct walk *w, const char *name, const char *left, struct kp_err *err)
{
	char target[PATH_MAX], joined[PATH_MAX];
	struct stat st;
	ssize_t n;
	int len;

	if (fstatat(w->fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return kp_err_errno(err, errno, "%s/%s: %s", w->shown, name, strerror(errno));
	if (!S_ISLNK(st.st_mode))
		return kp_err_errno(err, ENOTDIR, "%s/%s: not a directory", w->shown, name);
	if (!kp_trusted_owner(&st))
		return kp_err_errno(err, EPERM, "%s/%s is a link owned by uid %u", w->shown, name,
				    (unsigned)st.st_uid);
	if (++w->links > MAX_LINKS)
		return kp_err_errno(err, ELOOP, "%s/%s: too many levels of links", w->shown, name);
	n = readlinkat(w->fd, name, target, sizeof(target) - 1);
	if (n <= 0)
		return kp_err_errno(err, n < 0 ? errno : ENOENT, "%s/%s: unreadable link", w->shown,
				    name);
	target[n] = '\0';
	len = snprintf(joined, sizeof(joined), "%s/%s", target, left);
	if (len < 0 || (size_t)len >= sizeof(joined))
		return kp_err_errno(err, ENAMETOOLONG, "%s/%s: path too long", w->shown, name);
	memcpy(w->rest, joined, (size_t)len + 1);
	return target[0] == '/' ? walk_root(w, err) : 0;
}

/*
 * The walk of @path (created when @create, every directory local when @local); its last
 * component may be a sticky one writable by others when @sticky_last. The descriptor, or -1.
 */
static int dir_open(const char *path, bool create, bool local, bool sticky_last, struct kp_err *err)
{
	struct walk w; /* not zeroed whole (8 KiB): rest is set below, shown by walk_root() */
	char name[NAME_MAX + 1], cwd[PATH_MAX];
	const char *p;
	int r, n;

	w.fd = -1;
	w.links = 0;
	w.local = local;

	/* relative: from the working directory, walked from / like the rest */
	if (path[0] != '/' && !getcwd(cwd, sizeof(cwd)))
		return kp_err_errno(err, errno, "%s: the working directory: %s", path,
				    strerror(errno));
	if (path[0] == '/') {
		size_t len = strlen(path);

		n = len < sizeof(w.rest) ? (int)len : -1;
		if (n >= 0)
			memcpy(w.rest, path, len + 1);
	} else {
		n = snprintf(w.rest, sizeof(w.rest), "%s/%s", cwd, path);
	}
	if (n < 0 || (size_t)n >= sizeof(w.rest))
		return kp_err_errno(err, ENAMETOOLONG, "%s: path too long", path);
	if (walk_root(&w, err) < 0)
		goto fail;
	p = w.rest;
	while ((r = next_component(&p, name)) > 0) {
		bool last = at_end(p);
		int fd = open_component(w.fd, name, create);

		if (fd < 0 && (errno == ELOOP || errno == ENOTDIR)) {
			char left[PATH_MAX];

			snprintf(left, sizeof(left), "%s", p);
			if (follow(&w, name, left, err) < 0)
				goto fail;
			p = w.rest;
			continue;
		}
		if (fd < 0) {
			kp_err_errno(err, errno, "%s/%s: %s", w.shown, name, strerror(errno));
			goto fail;
		}
		close(w.fd);
		w.fd = fd;
		show_step(&w, name);
		if (check_dir(w.fd, w.shown[0] ? w.shown : "/", last && !sticky_last, local, err) <
		    0)
			goto fail;
	}
	if (r < 0) {
		kp_err_errno(err, ENAMETOOLONG, "%s: a component is too long", path);
		goto fail;
	}
	return w.fd;
fail:
	if (w.fd >= 0)
		close(w.fd);
	return -1;
}

int kp_trusted_dir_open(const char *path, bool create, struct kp_err *err)
{
	return dir_open(path, create, false, false, err);
}

int kp_trusted_dir_open_local(const char *path, struct kp_err *err)
{
	return dir_open(path, false, true, false, err);
}

int kp_trusted_parent_open_local(const char *path, struct kp_err *err)
{
	return dir_open(path, false, true, true, err);
}

int kp_trusted_subdir_tidy(int dfd, const char *name, bool tidy, uint64_t *removed,
			   struct kp_err *err)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return kp_err_errno(err, errno, "%s: %s", name, strerror(errno));
	if (!S_ISDIR(st.st_mode)) {
		if (tidy && unlinkat(dfd, name, 0) == 0)
			(*removed)++;
		return kp_err_errno(err, ENOENT, "%s: not a directory", name);
	}
	return kp_trusted_subdir(dfd, name, false, err);
}

void kp_trusted_remove_links(int dfd, uint64_t *removed)
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *de;
	DIR *d;

	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d))) {
		struct stat st;

		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISLNK(st.st_mode) && unlinkat(dirfd(d), de->d_name, 0) == 0)
			(*removed)++;
	}
	closedir(d);
}

int kp_trusted_split(const char *path, char *dir, size_t len, const char **base)
{
	const char *slash = strrchr(path, '/');
	int n;

	if (!slash || !slash[1])
		return -1;
	n = snprintf(dir, len, "%.*s", (int)(slash - path), path);
	if (n < 0 || (size_t)n >= len)
		return -1;
	if (!*dir)
		snprintf(dir, len, "/");
	*base = slash + 1;
	return 0;
}

/*
 * One step of kp_trusted_entry(): @name of @dfd (shown as @dir) trusted (0), a link owned by
 * us or root whose target is now in @target (1), or refused (-1 with @err).
 */
static int entry_step(int dfd, const char *dir, const char *name, char *target, struct kp_err *err)
{
	struct stat st, fst;
	ssize_t n;
	int fd;
	bool ok;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT
			       ? 0 /* nobody else can create it */
			       : kp_err_errno(err, errno, "%s/%s: %s", dir, name, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return 0;
	if (S_ISLNK(st.st_mode)) {
		if (!kp_trusted_owner(&st))
			return kp_err_errno(err, EPERM, "%s/%s is a link owned by uid %u", dir,
					    name, (unsigned)st.st_uid);
		n = readlinkat(dfd, name, target, PATH_MAX - 1);
		if (n <= 0)
			return kp_err_errno(err, n < 0 ? errno : ENOENT, "%s/%s: unreadable link",
					    dir, name);
		target[n] = '\0';
		return 1;
	}
	if (!S_ISREG(st.st_mode))
		return kp_err_errno(err, EPERM, "%s/%s: not a regular file", dir, name);
	fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return kp_err_errno(err, errno, "%s/%s: %s", dir, name, strerror(errno));
	ok = fstat(fd, &fst) == 0 && fst.st_dev == st.st_dev && fst.st_ino == st.st_ino;
	ok = ok && kp_state_trusted(&fst, (enum kp_fs_class)kp_fs_class_of_fd(fd), geteuid());
	close(fd);
	if (!ok)
		return kp_err_errno(err, EPERM,
				    "%s/%s: not a file of root's or uid %u on a local file system, "
				    "writable by nobody else",
				    dir, name, (unsigned)geteuid());
	return 0;
}

int kp_trusted_entry(int dfd, const char *dir, const char *name, struct kp_err *err)
{
	char cdir[PATH_MAX], base[NAME_MAX + 1], target[PATH_MAX], path[PATH_MAX];
	size_t dlen = strlen(dir), nlen = strlen(name);
	const char *b;
	int fd = dfd, links = 0, r, n;

	if (dlen >= sizeof(cdir) || nlen >= sizeof(base))
		return kp_err_errno(err, ENAMETOOLONG, "%s/%s: path too long", dir, name);
	/* the common case, no link: checked where it is, nothing copied */
	r = entry_step(dfd, dir, name, target, err);
	if (r != 1)
		return r;
	memcpy(cdir, dir, dlen + 1);
	memcpy(base, name, nlen + 1);
	do {
		if (++links > MAX_LINKS) {
			r = kp_err_errno(err, ELOOP, "%s/%s: too many levels of links", cdir, base);
			break;
		}
		/* the target walked whole, its directory from / (kp_trusted_dir_open()) */
		n = target[0] == '/' ? snprintf(path, sizeof(path), "%s", target)
				     : snprintf(path, sizeof(path), "%s/%s", cdir, target);
		if (n < 0 || (size_t)n >= sizeof(path)) {
			r = kp_err_errno(err, ENAMETOOLONG, "%s/%s: path too long", cdir, base);
			break;
		}
		if (fd != dfd)
			close(fd);
		fd = -1;
		if (kp_trusted_split(path, cdir, sizeof(cdir), &b) < 0 ||
		    snprintf(base, sizeof(base), "%s", b) >= (int)sizeof(base)) {
			/* "DIR/": a directory, libkmod skips it */
			fd = kp_trusted_dir_open_local(path, err);
			r = fd < 0 ? -1 : 0;
			break;
		}
		fd = kp_trusted_dir_open_local(cdir, err);
		if (fd < 0) {
			r = -1;
			break;
		}
	} while ((r = entry_step(fd, cdir, base, target, err)) == 1);
	if (fd >= 0 && fd != dfd)
		close(fd);
	return r;
}
