// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Opening a file inside a root on descriptors (file/rootopen.h, kp_open_regular_in()):
 * absolute, relative and chained links, ".." past the root, a directory link, a loop and
 * the 40-link budget (ELOOP), a link to a host path that stays inside the root, a procfs
 * magic link refused, each through openat2() and through the walk that stands in for it
 * without openat2 (called directly); then a directory swapped for a link after the path was
 * resolved (the race, made deterministic by swapping between the resolve and the open): the
 * open stays inside the root where a path open reads the host's file, and so does a listing
 * (kp_opendir_in() where kp_in_opendir() lists the host's directory); a FIFO refused; ROOT
 * itself swapped for a link: its pinned directory still read (kp_root_dir_pin()); a FIFO
 * swapped in between the O_PATH check and the read open: the open by name again (the old
 * code's second open) opens the FIFO, kp_fd_reopen() the regular file checked.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file/bytes.h"
#include "file/inputs.h"
#include "file/rootfs.h"
#include "file/rootopen.h"
#include "tap.h"

static char top[PATH_MAX], root[PATH_MAX + 8];

static void put(const char *rel, const char *text)
{
	char p[PATH_MAX * 2];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	f = fopen(p, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		perror(p);
		exit(99);
	}
}

static void dir(const char *rel)
{
	char p[PATH_MAX * 2];

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	if (mkdir(p, 0755) < 0) {
		perror(p);
		exit(99);
	}
}

static void link_to(const char *target, const char *rel)
{
	char p[PATH_MAX * 2];

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	unlink(p);
	if (symlink(target, p) < 0) {
		perror(p);
		exit(99);
	}
}

typedef int (*opener)(int rootfd, const char *rel, int flags);

/* The first line of what @open gives for @rel, or "errno:N". */
static const char *got(opener open_fn, int rootfd, const char *rel)
{
	static char buf[64];
	int fd = open_fn(rootfd, rel, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	ssize_t n;

	if (fd < 0) {
		snprintf(buf, sizeof(buf), "errno:%d", errno);
		return buf;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static void cases(struct tap *t, opener fn, const char *how, int rootfd)
{
	char msg[128], want[32], hostlink[PATH_MAX * 2];
	int procfd;

#define CASE(rel, expect, what)                                   \
	do {                                                      \
		snprintf(msg, sizeof(msg), "%s: %s", how, what);  \
		tap_is_str(t, got(fn, rootfd, rel), expect, msg); \
	} while (0)
	CASE("lib/modules/m.ko", "root", "a plain file");
	CASE("/lib/modules/m.ko", "root", "an absolute path starts at the root");
	CASE("abs", "root", "absolute link restarts at the root");
	CASE("lib/rel", "root", "relative link");
	CASE("c1", "root", "chained links (relative, then absolute)");
	CASE("lib/up", "root", "'..' past the root stops there");
	CASE("../../../../lib/modules/m.ko", "root", "'..' in the path itself");
	CASE("d/modules/m.ko", "root", "a directory that is a link");
	snprintf(hostlink, sizeof(hostlink), "%s/host.ko", top);
	(void)hostlink;
	CASE("esc", "errno:2", "a link to the host file's path stays inside (ENOENT)");
	snprintf(want, sizeof(want), "errno:%d", ELOOP);
	CASE("loop1", want, "a loop: ELOOP");
	CASE("n40", "root", "40 links followed");
	CASE("n41", want, "41 links: ELOOP");
	CASE("lib/modules/m.ko/x", "errno:20", "a file as a directory: ENOTDIR");
	CASE("deep/d1/d2/d3/d4/d5/d6/d7/d8/d9/d10/d11/d12/d13/d14/d15/d16/d17/d18/up", "root",
	     "20 directories deep, then a link climbing past the root");
	{
		struct stat a, b;
		int d = fn(rootfd, "lib/modules/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		int r0 = fn(rootfd, "", O_PATH | O_DIRECTORY | O_CLOEXEC);

		snprintf(msg, sizeof(msg), "%s: a trailing '/' opens the directory", how);
		tap_ok(t, d >= 0 && fstat(d, &a) == 0 && S_ISDIR(a.st_mode), "%s", msg);
		snprintf(msg, sizeof(msg), "%s: an empty path is the root itself", how);
		tap_ok(t,
		       r0 >= 0 && fstat(r0, &a) == 0 && fstat(rootfd, &b) == 0 &&
			       a.st_ino == b.st_ino && a.st_dev == b.st_dev,
		       "%s", msg);
		if (d >= 0)
			close(d);
		if (r0 >= 0)
			close(r0);
	}
#undef CASE
	/* /proc/self as the root: "root" and "cwd" are magic links (nd_jump_link()) */
	procfd = open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC);
	snprintf(msg, sizeof(msg), "%s: /proc/self/root magic link refused (ELOOP)", how);
	tap_is_str(t, got(fn, procfd, "root/etc/hostname"), want, msg);
	snprintf(msg, sizeof(msg), "%s: /proc/self/cwd magic link refused (ELOOP)", how);
	tap_is_str(t, got(fn, procfd, "cwd"), want, msg);
	close(procfd);
}

int main(void)
{
	struct tap t = { 0 };
	struct kp_bytes b;
	struct kp_err err = { 0 };
	struct stat st;
	char host[PATH_MAX * 2], path[PATH_MAX * 2], *resolved;
	struct kp_root_dir rd = { .path = NULL, .fd = -1 }, named;
	int rootfd, fd, r;

	snprintf(top, sizeof(top), "%s/kp-rootopen.XXXXXX", getenv("TMPDIR") ?: "/tmp");
	if (!mkdtemp(top))
		return 99;
	snprintf(root, sizeof(root), "%s/root", top);
	put("host.ko", "host\n");
	dir("hostlib");
	dir("hostlib/modules");
	put("hostlib/modules/m.ko", "host\n");
	dir("root");
	dir("root/lib");
	dir("root/lib/modules");
	put("root/lib/modules/m.ko", "root\n");
	link_to("/lib/modules/m.ko", "root/abs");
	link_to("modules/m.ko", "root/lib/rel");
	link_to("lib/c2", "root/c1");
	link_to("/abs", "root/lib/c2");
	link_to("../../../../../lib/modules/m.ko", "root/lib/up");
	link_to("/lib", "root/d");
	snprintf(host, sizeof(host), "%s/host.ko", top);
	link_to(host, "root/esc");
	link_to("loop2", "root/loop1");
	link_to("loop1", "root/loop2");
	/* 20 directories deep (the walk's stack grows past 16), a link climbing 25 levels */
	{
		char d[PATH_MAX] = "root/deep";

		dir(d);
		for (int i = 1; i <= 18; i++) {
			size_t l = strlen(d);

			snprintf(d + l, sizeof(d) - l, "/d%d", i);
			dir(d);
		}
		strncat(d, "/up", sizeof(d) - strlen(d) - 1);
		link_to("../../../../../../../../../../../../../../../../../../../../../../../../"
			"../"
			"lib/modules/m.ko",
			d);
	}
	/* n40 -> n39 -> ... -> n1 -> /lib/modules/m.ko: 40 links; n41 one more */
	for (int i = 1; i <= 41; i++) {
		char name[32], target[32];

		snprintf(name, sizeof(name), "root/n%d", i);
		if (i == 1)
			snprintf(target, sizeof(target), "/lib/modules/m.ko");
		else
			snprintf(target, sizeof(target), "n%d", i - 1);
		link_to(target, name);
	}

	rootfd = kp_root_dir_open(root);
	tap_ok(&t, rootfd >= 0, "the root opened O_PATH|O_DIRECTORY");
	cases(&t, kp_root_openat, "openat2", rootfd);
	cases(&t, kp_root_openat_walk, "walk", rootfd);

	/* kp_root_rel(): only paths under the root */
	tap_is_str(&t, kp_root_rel(root, root), "", "kp_root_rel: the root itself");
	snprintf(path, sizeof(path), "%s/lib", root);
	tap_is_str(&t, kp_root_rel(root, path), "/lib", "kp_root_rel: under the root");
	snprintf(path, sizeof(path), "%sx/lib", root);
	tap_ok(&t, kp_root_rel(root, path) == NULL, "kp_root_rel: a sibling is not under it");
	tap_ok(&t, kp_root_rel("/", "/lib") == NULL, "kp_root_rel: the host's root is no root");

	/*
	 * The race: "dir" resolved in user space while it is a directory, then swapped for an
	 * absolute link to the host's "hostlib" before the open. kp_open_regular() (by path)
	 * reads the host's file; kp_open_regular_in() resolves the link inside the root.
	 */
	dir("root/dir");
	dir("root/dir/modules");
	put("root/dir/modules/m.ko", "root\n");
	kp_root_dir_pin(&rd, root);
	named = (struct kp_root_dir){ .path = root, .fd = -1 };
	resolved = kp_root_resolve(root, "dir/modules/m.ko");
	snprintf(path, sizeof(path), "%s/dir/modules/m.ko", root);
	tap_ok(&t, resolved && !strcmp(resolved, path), "resolved while 'dir' is a directory");
	snprintf(path, sizeof(path), "%s/root/dir", top);
	snprintf(host, sizeof(host), "%s/root/dir.old", top);
	if (rename(path, host) < 0)
		return 99;
	snprintf(host, sizeof(host), "%s/hostlib", top);
	link_to(host, "root/dir");
	r = kp_bytes_read_text(resolved, (size_t)1 << 20, &b, &err);
	if (r < 0)
		printf("# %s\n", err.msg);
	tap_ok(&t, r == 0 && b.len == 5 && !memcmp(b.data, "host\n", 5),
	       "swapped: the path open reads the host's file");
	kp_bytes_release(&b);
	memset(&err, 0, sizeof(err));
	tap_is_int(&t, kp_bytes_read_text_in(&rd, resolved, (size_t)1 << 20, &b, &err), -1,
		   "swapped: the open inside the root fails");
	tap_is_int(&t, err.errnum, ENOENT, "swapped: ENOENT (the host path is not in the root)");
	tap_is_int(&t, kp_stat_in(&rd, resolved, &st), -1, "swapped: kp_stat_in() fails too");
	{
		/* the directory the file is in (resolved before the swap), listed: by path the
		 * host's, by descriptors none */
		char *rdir = resolved ? strdup(resolved) : NULL;

		if (rdir && strrchr(rdir, '/'))
			*strrchr(rdir, '/') = '\0';
		DIR *dh = rdir ? kp_in_opendir(rdir) : NULL;

		tap_ok(&t, dh != NULL, "swapped: the directory listed by path is the host's");
		if (dh)
			closedir(dh);
		errno = 0;
		dh = rdir ? kp_opendir_in(&rd, rdir) : NULL;
		tap_ok(&t, !dh && errno == ENOENT,
		       "swapped: listed by descriptors inside the root: ENOENT");
		if (dh)
			closedir(dh);
		errno = 0;
		dh = rdir ? kp_opendir_root(root, rdir) : NULL;
		tap_ok(&t, !dh && errno == ENOENT,
		       "swapped: kp_opendir_root() (the root opened at this use): ENOENT");
		if (dh)
			closedir(dh);
		free(rdir);
	}
	/* the same link relative, to the root's own copy: followed inside */
	link_to("dir.old", "root/dir");
	memset(&err, 0, sizeof(err));
	tap_ok(&t,
	       kp_bytes_read_text_in(&rd, resolved, (size_t)1 << 20, &b, &err) == 0 && b.len == 5 &&
		       !memcmp(b.data, "root\n", 5),
	       "re-pointed inside the root: the root's file read");
	kp_bytes_release(&b);
	{
		char *rdir = kp_root_resolve(root, "dir/modules");
		DIR *dh = rdir ? kp_opendir_in(&rd, rdir) : NULL;
		struct dirent *de;
		int names = 0;

		while (dh && (de = readdir(dh)))
			names += !strcmp(de->d_name, "m.ko");
		tap_ok(&t, dh && names == 1,
		       "re-pointed inside the root: the root's directory listed");
		if (dh)
			closedir(dh);
		free(rdir);
	}
	/* a path outside the root, or no root: opened by path as before */
	snprintf(path, sizeof(path), "%s/host.ko", top);
	fd = kp_open_regular_in(&rd, path, &st, &err);
	tap_ok(&t, fd >= 0 && st.st_size == 5, "a path outside the root: opened by path");
	if (fd >= 0)
		close(fd);

	/* a FIFO inside the root: refused without blocking, never opened for reading */
	snprintf(path, sizeof(path), "%s/fifo", root);
	if (mkfifo(path, 0600) < 0)
		return 99;
	memset(&err, 0, sizeof(err));
	fd = kp_open_regular_in(&rd, path, &st, &err);
	tap_is_int(&t, fd, -1, "a FIFO in the root: refused");
	tap_is_str(&t, err.msg, "is a FIFO, not a regular file", "a FIFO: the reason");
	/*
	 * The window between the O_PATH check and the read open: "swap" checked as a regular
	 * file, then replaced by a FIFO. Opened by name again (as before kp_fd_reopen()), the
	 * FIFO is what is opened; reopened through the O_PATH descriptor, the file checked.
	 */
	put("root/swap", "checked\n");
	{
		struct stat pre, got;
		int pfd = kp_root_openat(rootfd, "swap", O_PATH | O_CLOEXEC);
		const int rf = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
		char buf[16] = "";
		ssize_t n;

		tap_ok(&t, pfd >= 0 && fstat(pfd, &pre) == 0 && S_ISREG(pre.st_mode),
		       "swap: checked through O_PATH, a regular file");
		snprintf(path, sizeof(path), "%s/swap", root);
		if (unlink(path) < 0 || mkfifo(path, 0600) < 0)
			return 99;
		fd = kp_root_openat(rootfd, "swap", rf);
		tap_ok(&t, fd >= 0 && fstat(fd, &got) == 0 && S_ISFIFO(got.st_mode),
		       "swap: opened by name again, the FIFO swapped in is opened");
		if (fd >= 0)
			close(fd);
		fd = kp_fd_reopen(pfd, rf);
		n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
		tap_ok(&t,
		       fd >= 0 && fstat(fd, &got) == 0 && S_ISREG(got.st_mode) &&
			       got.st_ino == pre.st_ino && n == 8 && !memcmp(buf, "checked\n", 8),
		       "swap: kp_fd_reopen() opens the file checked, not the FIFO");
		if (fd >= 0)
			close(fd);
		tap_is_int(&t, kp_fd_reopen(pfd, O_RDONLY | O_CREAT), -1,
			   "kp_fd_reopen: no O_CREAT");
		if (pfd >= 0)
			close(pfd);
		memset(&err, 0, sizeof(err));
		tap_is_int(&t, kp_open_regular_in(&rd, path, &st, &err), -1,
			   "swap: the FIFO now there refused by kp_open_regular_in()");
	}

	/* a directory */
	snprintf(path, sizeof(path), "%s/lib", root);
	memset(&err, 0, sizeof(err));
	tap_is_int(&t, kp_open_regular_in(&rd, path, &st, &err), -1, "a directory: refused");
	tap_is_int(&t, err.errnum, EISDIR, "a directory: EISDIR");

	/*
	 * ROOT itself swapped (its parent is the user's): renamed away and replaced by a link
	 * to a directory holding the host's files. The pinned root still opens the first
	 * ROOT's file; a root opened at each use follows the new link.
	 */
	snprintf(path, sizeof(path), "%s/root.old", top);
	if (rename(root, path) < 0)
		return 99;
	link_to("hostlib/..", "root");
	snprintf(path, sizeof(path), "%s/lib/modules/m.ko", root);
	memset(&err, 0, sizeof(err));
	tap_ok(&t,
	       kp_bytes_read_text_in(&rd, path, (size_t)1 << 20, &b, &err) == 0 && b.len == 5 &&
		       !memcmp(b.data, "root\n", 5),
	       "ROOT swapped for a link: the pinned root's file read");
	kp_bytes_release(&b);
	snprintf(path, sizeof(path), "%s/hostlib/modules/m.ko", root);
	memset(&err, 0, sizeof(err));
	tap_ok(&t,
	       kp_bytes_read_text_in(&named, path, (size_t)1 << 20, &b, &err) == 0 && b.len == 5 &&
		       !memcmp(b.data, "host\n", 5),
	       "ROOT swapped for a link: opened at each use, the new target's file");
	kp_bytes_release(&b);
	memset(&err, 0, sizeof(err));
	tap_is_int(&t, kp_bytes_read_text_in(&rd, path, (size_t)1 << 20, &b, &err), -1,
		   "ROOT swapped: that file is not in the pinned root");
	kp_root_dir_unpin(&rd);
	tap_is_int(&t, rd.fd, -1, "unpinned");

	close(rootfd);
	free(resolved);
	{
		char cmd[PATH_MAX * 2 + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
		if (system(cmd) != 0)
			tap_ok(&t, 0, "temporary directory removed");
	}
	return tap_done(&t);
}
