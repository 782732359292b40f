// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The caches' trust model (lib/cache/trusted-dir.c): a directory path walked one checked
 * component at a time, made when missing with 0755 whatever the umask; directories writable
 * by group or others refused (a sticky one accepted above the cache directory only); a link
 * on the way followed when it is ours, one inside the cache never; files believed only when
 * regular, ours and not writable by others. The environmental failures that keep a run out of
 * the result cache (lib/util/util.c): their errnos and the "out of memory" messages.
 * Runs as any user: every directory involved is the test's own.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache/trusted-dir.h"
#include "tap.h"

static char top[64];

/* kp_trusted_dir_open() of TOP/@rel: 0 (opened), else the errnum, its message in @msg. */
static int try_open(const char *rel, bool create, char *msg, size_t len)
{
	struct kp_err err = { 0 };
	char p[256];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	fd = kp_trusted_dir_open(p, create, &err);
	snprintf(msg, len, "%s", err.msg);
	if (fd < 0)
		return err.errnum ? err.errnum : -1;
	close(fd);
	return 0;
}

static void at(char *p, size_t len, const char *rel)
{
	snprintf(p, len, "%s/%s", top, rel);
}

int main(void)
{
	struct tap t = { 0 };
	struct kp_err err = { 0 };
	struct stat st;
	char p[256], q[256], msg[600], want[600];
	mode_t old;
	int fd, sub;

	snprintf(top, sizeof(top), "/tmp/kp-trust-XXXXXX");
	if (!mkdtemp(top))
		return 1;

	/* made when missing: every component, 0755 even under umask 0002 */
	old = umask(0002);
	tap_ok(&t, try_open("a/b/c", true, msg, sizeof(msg)) == 0, "missing components made (%s)",
	       msg);
	umask(old);
	at(p, sizeof(p), "a/b/c");
	if (stat(p, &st) < 0)
		st.st_mode = 0;
	tap_ok(&t, (st.st_mode & 07777) == 0755, "made 0755 under umask 0002 (%o)",
	       (unsigned)(st.st_mode & 07777));
	tap_ok(&t, try_open("nowhere/x", false, msg, sizeof(msg)) == ENOENT,
	       "a missing directory without create: ENOENT");

	/* writable by group or others: refused, named */
	at(p, sizeof(p), "a/b");
	chmod(p, 0775);
	snprintf(want, sizeof(want), "%s/a/b is writable by its group", top);
	tap_ok(&t, try_open("a/b/c", false, msg, sizeof(msg)) == EPERM && !strcmp(msg, want),
	       "a group-writable component: EPERM, '%s'", msg);
	chmod(p, 0757);
	snprintf(want, sizeof(want), "%s/a/b is writable by others", top);
	tap_ok(&t, try_open("a/b/c", false, msg, sizeof(msg)) == EPERM && !strcmp(msg, want),
	       "an other-writable component: EPERM, '%s'", msg);
	chmod(p, 01777);
	tap_ok(&t, try_open("a/b/c", false, msg, sizeof(msg)) == 0,
	       "a sticky world-writable component above the cache: accepted (%s)", msg);
	tap_ok(&t, try_open("a/b", false, msg, sizeof(msg)) == EPERM,
	       "the same as the cache directory itself: EPERM (%s)", msg);
	chmod(p, 0755);

	/* a link on the way: ours, followed (relative and absolute, with ..) */
	at(p, sizeof(p), "rel");
	tap_ok(&t, symlink("a/b", p) == 0 && try_open("rel/c", false, msg, sizeof(msg)) == 0,
	       "a relative link of ours on the way: followed (%s)", msg);
	at(p, sizeof(p), "abs");
	at(q, sizeof(q), "a/b/c/../c");
	tap_ok(&t, symlink(q, p) == 0 && try_open("abs", false, msg, sizeof(msg)) == 0,
	       "an absolute link of ours as the cache directory: followed (%s)", msg);
	at(p, sizeof(p), "loop");
	tap_ok(&t, symlink("loop", p) == 0 && try_open("loop/x", false, msg, sizeof(msg)) == ELOOP,
	       "a link loop: ELOOP (%s)", msg);
	at(p, sizeof(p), "file");
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd >= 0)
		close(fd);
	tap_ok(&t, try_open("file/x", true, msg, sizeof(msg)) == ENOTDIR,
	       "a file on the way: ENOTDIR (%s)", msg);
	at(p, sizeof(p), "a");
	fd = chdir(p) == 0 ? kp_trusted_dir_open("b/c", false, &err) : -1;
	tap_ok(&t, fd >= 0, "a relative path: from the working directory");
	if (fd >= 0)
		close(fd);
	at(p, sizeof(p), "a/b");
	chmod(p, 0775);
	fd = kp_trusted_dir_open("b/c", false, &err);
	snprintf(want, sizeof(want), "%s/a/b is writable by its group", top);
	tap_ok(&t, fd < 0 && err.errnum == EPERM && !strcmp(err.msg, want),
	       "the working directory's components are tested too (%s)", err.msg);
	chmod(p, 0755);
	if (chdir("/") < 0)
		return 1;

	/* inside the cache: a link is never followed, a foreign subdirectory refused */
	at(p, sizeof(p), "a/b/c");
	fd = kp_trusted_dir_open(p, false, &err);
	at(q, sizeof(q), "a/b/c/runs");
	tap_ok(&t, fd >= 0 && symlink("../..", q) == 0, "a link planted in the cache");
	err.errnum = 0;
	sub = kp_trusted_subdir(fd, "runs", true, &err);
	tap_ok(&t, sub < 0 && err.errnum == EPERM, "kp_trusted_subdir() refuses it (%s)", err.msg);
	{
		uint64_t removed = 0;

		sub = kp_trusted_subdir_tidy(fd, "runs", true, &removed, &err);
		tap_ok(&t,
		       sub < 0 && err.errnum == ENOENT && removed == 1 && lstat(q, &st) < 0 &&
			       stat(p, &st) == 0,
		       "kp_trusted_subdir_tidy() removes the link as a link (its target stays)");
	}
	sub = kp_trusted_subdir(fd, "runs", true, &err);
	tap_ok(&t, sub >= 0, "then the directory is made in its place");
	if (sub >= 0)
		close(sub);
	if (fd >= 0)
		close(fd);

	/* files: regular, ours (or root's), not writable by group or others */
	at(p, sizeof(p), "file");
	chmod(p, 0644);
	tap_ok(&t, stat(p, &st) == 0 && kp_trusted_file(&st), "a 0644 file of ours: believed");
	chmod(p, 0664);
	tap_ok(&t, stat(p, &st) == 0 && !kp_trusted_file(&st), "a group-writable one: not");
	chmod(p, 0646);
	tap_ok(&t, stat(p, &st) == 0 && !kp_trusted_file(&st), "an other-writable one: not");
	st.st_mode = S_IFREG | 0644;
	st.st_uid = getuid() == 0 ? 65534 : getuid() + 1;
	tap_ok(&t, !kp_trusted_file(&st), "one owned by another user: not");
	st.st_uid = 0;
	tap_ok(&t, kp_trusted_file(&st), "one owned by root: believed");
	st.st_uid = geteuid();
	st.st_mode = S_IFLNK | 0777;
	tap_ok(&t, !kp_trusted_file(&st), "a link: not");
	/* a directory's mode (the hook's module paths too): sticky only where the caller allows */
	st.st_mode = S_IFDIR | 0755;
	tap_ok(&t, kp_trusted_dir_mode(&st, false), "a 0755 directory: trusted");
	st.st_mode = S_IFDIR | 0775;
	tap_ok(&t, !kp_trusted_dir_mode(&st, true), "a group-writable one: not, even sticky allowed");
	st.st_mode = S_IFDIR | 01777;
	tap_ok(&t, kp_trusted_dir_mode(&st, true) && !kp_trusted_dir_mode(&st, false),
	       "a sticky 1777 one: only where sticky is allowed");
	st.st_mode = S_IFDIR | 0777;
	tap_ok(&t, !kp_trusted_dir_mode(&st, true), "a 0777 one without the sticky bit: not");

	/* environmental failures: the errnos, a message, the first one kept */
	tap_ok(&t,
	       kp_errno_environmental(ENOMEM) && kp_errno_environmental(EMFILE) &&
		       kp_errno_environmental(ENFILE) && kp_errno_environmental(EAGAIN),
	       "ENOMEM, EMFILE, ENFILE, EAGAIN are environmental");
	tap_ok(&t,
	       !kp_errno_environmental(ENOENT) && !kp_errno_environmental(ENOEXEC) &&
		       !kp_errno_environmental(0),
	       "ENOENT, ENOEXEC, 0 are not");
	tap_ok(&t, kp_env_failure() == 0, "no environmental failure at first");
	kp_err_errno(&err, ENOENT, "x: absent");
	kp_err_set(&err, "a malformed module");
	tap_ok(&t, kp_env_failure() == 0, "an input's errors are not environmental");
	errno = EIO;
	kp_err_set(&err, "read error: %s (errno since changed)", strerror(ENOENT));
	tap_ok(&t, kp_env_failure() == 0, "another error's text while errno is EIO: not");
	{
		/* in a child: the first failure noted is kept for good */
		pid_t pid = fork();
		int status = -1;

		if (pid == 0) {
			errno = EIO;
			kp_err_set(&err, "read error: %s", strerror(EIO));
			_exit(kp_env_failure() == EIO ? 0 : 1);
		}
		tap_ok(&t, pid > 0 && waitpid(pid, &status, 0) == pid && status == 0,
		       "a message quoting strerror(EIO) while errno is EIO: EIO");
	}
	kp_err_set(&err, "xz: out of memory");
	tap_ok(&t, kp_env_failure() == ENOMEM, "an 'out of memory' message: ENOMEM");
	kp_err_errno(&err, EMFILE, "y: too many open files");
	tap_ok(&t, kp_env_failure() == ENOMEM, "the first failure is kept");

	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
		if (system(cmd) != 0)
			return 1;
	}
	return tap_done(&t);
}
