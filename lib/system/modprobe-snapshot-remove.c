// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libkmod's private copies removed (modprobe-snapshot.h): a run's own, with system calls only
 * (at its end, at the hook's deadline, on a signal that stops the hook), and those that runs
 * killed before they could remove theirs left beside it.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "modprobe-snapshot.h"
#include "util/io.h"

/*
 * The entries of the directory @fd (read from its start) removed, and those of its
 * subdirectories @depth levels down, with system calls only (getdents64(2), unlinkat(),
 * openat()): async-signal-safe. Two sweeps: a file system may skip entries past the ones
 * removed while it is read.
 */
static void clear_dir(int fd, int depth)
{
	struct dirent64_raw { /* getdents64(2)'s struct linux_dirent64 */
		uint64_t d_ino;
		int64_t d_off;
		unsigned short d_reclen;
		unsigned char d_type;
		char d_name[];
	};
	_Alignas(8) char buf[4096];

	for (int sweep = 0; sweep < 2; sweep++) {
		long n;

		if (lseek(fd, 0, SEEK_SET) < 0)
			return;
		while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
			for (long i = 0; i < n;) {
				const struct dirent64_raw *e = (const void *)(buf + i);
				const char *name = e->d_name;
				int sub;

				i += e->d_reclen;
				if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2])))
					continue;
				if (unlinkat(fd, name, 0) == 0 || errno != EISDIR || depth <= 0)
					continue;
				sub = openat(fd, name,
					     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				if (sub >= 0) {
					clear_dir(sub, depth - 1);
					close(sub);
				}
				unlinkat(fd, name, AT_REMOVEDIR);
			}
		}
	}
}

void kp_kmod_copy_unlink(const struct kp_kmod_copy *k)
{
	int fd;

	if (!k || !k->active)
		return;
	/* the copy holds "mod" and "conf.N", each only files and links */
	fd = k->snapfd < 0 ? -1 : openat(k->snapfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		clear_dir(fd, 1);
		close(fd);
	}
	rmdir(k->snapdir);
}

/*
 * How long a copy no run holds is left alone (seconds since its directory last changed):
 * the few instructions between its mkdtemp() and its lock, and a run of a kopolicy before
 * the lock that is still reading its copy (the hook's wall-clock cap is a minute or more).
 */
#define COPY_STALE_AFTER 600

/* A copy's name: mkdtemp()'s six letters or digits after the prefix. */
static bool copy_name(const char *name)
{
	size_t n = sizeof(KP_KMOD_COPY_PREFIX) - 1;

	if (strncmp(name, KP_KMOD_COPY_PREFIX, n))
		return false;
	for (size_t i = n; i < n + 6; i++)
		if (!isalnum((unsigned char)name[i]))
			return false;
	return name[n + 6] == '\0';
}

/*
 * The copies in the directory @parentfd that runs killed before they removed them left
 * (SIGKILL, a fault, a signal the run does not catch), @self's aside: each entry named as a
 * copy that is a directory of the caller's own (opened without following a link), mode 0700,
 * unchanged for COPY_STALE_AFTER seconds, whose lock no run holds. Its owner holds that lock
 * (flock(2) on its own descriptor of the copy) from the copy's first moments until it removed
 * it; the kernel drops it when the owner dies, however it dies, so a pid that was reused,
 * another pid namespace sharing the directory or a boot since cannot make a live copy look
 * dead. A child forked by the owner holds it too while it lives: its copy stays meanwhile.
 * Removed with what it holds ("mod", "conf.N": files and links), as the owner would have.
 */
void kp_kmod_copy_sweep(int parentfd, const char *self)
{
	uid_t uid = geteuid();
	struct timespec now;
	struct dirent *de;
	DIR *d;

	if (clock_gettime(CLOCK_REALTIME, &now) < 0 || !(d = kp_dir_list_at(parentfd, ".")))
		return;
	while ((de = readdir(d))) {
		struct stat st;
		int fd;

		if (!copy_name(de->d_name) || !strcmp(de->d_name, self))
			continue;
		fd = openat(parentfd, de->d_name,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == uid &&
		    (st.st_mode & 07777) == 0700 &&
		    now.tv_sec - st.st_mtim.tv_sec >= COPY_STALE_AFTER &&
		    flock(fd, LOCK_EX | LOCK_NB) == 0) {
			clear_dir(fd, 1);
			unlinkat(parentfd, de->d_name, AT_REMOVEDIR);
		}
		close(fd);
	}
	closedir(d);
}
