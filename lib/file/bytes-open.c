// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bytes-open.c: the one file reader's files opened (bytes.h): regular files only (a FIFO
 * where the caller reads one), by path or inside a root through its descriptor (rootopen.c),
 * their state recorded for the result cache (inputs.h); a file's state inside a root.
 */
#include "bytes-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inputs.h"
#include "rootopen.h"

static const char *not_regular(mode_t mode)
{
	if (S_ISDIR(mode))
		return "is a directory";
	if (S_ISFIFO(mode))
		return "is a FIFO, not a regular file";
	if (S_ISSOCK(mode))
		return "is a socket, not a regular file";
	if (S_ISCHR(mode))
		return "is a character device, not a regular file";
	if (S_ISBLK(mode))
		return "is a block device, not a regular file";
	return "not a regular file";
}

int kp_open_regular(const char *path, struct stat *st, struct kp_err *err)
{
	struct stat pre;
	int fd, e;

	/*
	 * stat() before open(): opening a device can act (a tape rewinds, a watchdog arms)
	 * and opening a FIFO without a writer blocks. O_NONBLOCK covers a FIFO swapped in
	 * between the two; fstat() then refuses it.
	 */
	if (kp_in_stat(path, &pre) < 0) {
		e = errno;
		return kp_err_errno(err, e, "cannot open: %s", strerror(e));
	}
	if (!S_ISREG(pre.st_mode))
		return kp_err_errno(err, S_ISDIR(pre.st_mode) ? EISDIR : EINVAL, "%s",
				    not_regular(pre.st_mode));
	/* the state recorded is the fstat() of what was opened, the one returned in @st */
	fd = kp_in_open_stat(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, st);
	if (fd < 0) {
		e = errno;
		return kp_err_errno(err, e, "cannot open: %s", strerror(e));
	}
	if (!S_ISREG(st->st_mode)) {
		close(fd);
		return kp_err_errno(err, S_ISDIR(st->st_mode) ? EISDIR : EINVAL, "%s",
				    not_regular(st->st_mode));
	}
	return fd;
}

/*
 * @rel opened inside @rootfd: O_PATH first, so that only a regular file is ever opened for
 * reading (opening a device can act, a FIFO block), then that very file opened again for
 * reading through its descriptor (kp_fd_reopen()), so nothing swapped in at its name since
 * is opened. Without /proc the open fails (EACCES): by name again, a device swapped in
 * since would be opened before any check could refuse it.
 */
/* @fifo: a FIFO is accepted too (kp_open_readable_in()) */
static int open_in_root(int rootfd, const char *rel, bool fifo, struct stat *st, struct kp_err *err)
{
	const int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
	struct stat pre;
	int pfd, fd, e;

	pfd = kp_root_openat(rootfd, rel, O_PATH | O_CLOEXEC);
	if (pfd < 0 || fstat(pfd, &pre) < 0) {
		e = errno;
		if (pfd >= 0)
			close(pfd);
		return kp_err_errno(err, e, "cannot open: %s", strerror(e));
	}
	if (!S_ISREG(pre.st_mode) && !(fifo && S_ISFIFO(pre.st_mode))) {
		close(pfd);
		return kp_err_errno(err, S_ISDIR(pre.st_mode) ? EISDIR : EINVAL, "%s",
				    not_regular(pre.st_mode));
	}
	fd = kp_fd_reopen(pfd, flags);
	e = errno;
	close(pfd);
	/*
	 * No /proc: refused, never opened by name again. The name could lead by then to a
	 * device swapped in (whose open acts: a watchdog arms, a tape rewinds) that the fstat()
	 * below would only see once opened. EACCES, not ENOENT: not an absence. (EACCES or EPERM
	 * from the reopen is the file's own mode, or an LSM: said as any open's error.)
	 */
	if (fd < 0 && (e == ENOENT || e == ENOTDIR))
		return kp_err_errno(
			err, EACCES,
			"cannot open: /proc/self/fd cannot reopen the file checked (%s): "
			"refused, not opened by name (mount /proc)",
			strerror(e));
	if (fd < 0 || fstat(fd, st) < 0) {
		if (fd >= 0) {
			e = errno;
			close(fd);
		}
		return kp_err_errno(err, e, "cannot open: %s", strerror(e));
	}
	if (!S_ISREG(st->st_mode) && !(fifo && S_ISFIFO(st->st_mode))) {
		close(fd);
		return kp_err_errno(err, S_ISDIR(st->st_mode) ? EISDIR : EINVAL, "%s",
				    not_regular(st->st_mode));
	}
	if (st->st_dev != pre.st_dev || st->st_ino != pre.st_ino) {
		close(fd);
		return kp_err_errno(err, EAGAIN, "cannot open: replaced while being opened");
	}
	return fd;
}

/* @root's directory: pinned, or opened now (*@own: to be closed); -1 with errno */
static int root_fd(const struct kp_root_dir *root, bool *own)
{
	*own = root->fd < 0;
	return *own ? kp_root_dir_open(root->path) : root->fd;
}

static int open_in(const struct kp_root_dir *root, const char *path, bool fifo, struct stat *st,
		   struct kp_err *err)
{
	const char *rel = root ? kp_root_rel(root->path, path) : NULL;
	struct stat rec;
	bool own;
	int rootfd, fd, e;

	if (!rel)
		return -2; /* not under a root: the caller's own open */
	/* the manifest records @path as kp_open_regular() does: its state, then the fstat() */
	(void)kp_in_stat(path, &rec);
	rootfd = root_fd(root, &own);
	if (rootfd < 0) {
		e = errno;
		return kp_err_errno(err, e, "cannot open the root %s: %s", root->path, strerror(e));
	}
	fd = open_in_root(rootfd, rel, fifo, st, err);
	if (own)
		close(rootfd);
	if (fd >= 0)
		kp_in_note_fd(path, fd);
	return fd;
}

int kp_open_regular_in(const struct kp_root_dir *root, const char *path, struct stat *st,
		       struct kp_err *err)
{
	int fd = open_in(root, path, false, st, err);

	return fd == -2 ? kp_open_regular(path, st, err) : fd;
}

int kp_open_readable_in(const struct kp_root_dir *root, const char *path, struct stat *st,
			struct kp_err *err)
{
	int fd = open_in(root, path, true, st, err);

	if (fd == -2)
		return kp_err_errno(err, EINVAL, "not under the root %s",
				    root && root->path ? root->path : "/");
	return fd;
}

int kp_stat_in(const struct kp_root_dir *root, const char *path, struct stat *st)
{
	const char *rel = root ? kp_root_rel(root->path, path) : NULL;
	struct stat rec;
	bool own;
	int rootfd, fd, r = -1, e;

	if (!rel)
		return kp_in_stat(path, st);
	(void)kp_in_stat(path, &rec); /* recorded as kp_in_stat(): the path's state */
	rootfd = root_fd(root, &own);
	if (rootfd < 0)
		return -1;
	fd = kp_root_openat(rootfd, rel, O_PATH | O_CLOEXEC);
	e = errno;
	if (own)
		close(rootfd);
	if (fd >= 0) {
		r = fstat(fd, st);
		e = errno;
		close(fd);
	}
	errno = e;
	return r;
}
