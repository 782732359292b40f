// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A kernel file read by a child that can be abandoned. Some kernel reads sleep
 * uninterruptibly on a lock an oops can leave held for ever: /proc/modules' m_start() takes
 * mutex_lock(&module_mutex) (kernel/module.c in 5.10, kernel/module/procfs.c from 5.19 on,
 * 6.1 to 7.2 alike), and a task in state D gets no signal, so a deadline armed with a timer
 * never runs. A child (clone(CLONE_VM): the caller's memory shared, not copied) does the read
 * and copies it into a pipe; the caller waits in pipe_read(), an interruptible sleep its
 * signals reach. The child keeps only the file and the pipe's write end open: no descriptor of the
 * caller's (its stderr, say) stays open because of it, and a caller that gives up (a signal handler
 * that exits) leaves it to init.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "file/bytes.h"
#include "file/rootfs.h"
#include "file/rootopen.h"
#include "kernel-read.h"

#define CHUNK	       65536
#define CHILD_STACK    (CHUNK + 65536) /* its buffer and a few frames */
#define CLOSE_LOOP_MAX (1UL << 20)

/* getdents64(2)'s record (include/linux/dirent.h: struct linux_dirent64) */
struct dirent64_rec {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

/*
 * Every descriptor /proc/self/fd lists (the child's own table: a clone without CLONE_FILES)
 * from @first to @last on, or false when the directory cannot be read (no procfs). Raw
 * syscalls on the child's stack: no allocation. One pass: proc_readfd_common() lists the
 * table by descriptor number from the offset on, so closing those listed moves nothing.
 */
static bool close_listed(unsigned first, unsigned last)
{
	union {
		char b[4096];
		uint64_t align;
	} buf;
	int dir = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/fd",
			       O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	long n;

	if (dir < 0)
		return false;
	while ((n = syscall(SYS_getdents64, dir, buf.b, sizeof(buf.b))) > 0) {
		for (long off = 0; off < n;) {
			const struct dirent64_rec *d = (const void *)(buf.b + off);
			unsigned long fd = 0;
			const char *c = d->name;

			off += d->reclen;
			if (*c < '0' || *c > '9')
				continue; /* "." and ".." */
			for (; *c >= '0' && *c <= '9' && fd <= ~0U; c++)
				fd = fd * 10 + (unsigned long)(*c - '0');
			if (!*c && fd >= first && fd <= last && fd != (unsigned long)dir)
				close((int)fd);
		}
	}
	close(dir);
	return n == 0;
}

/*
 * Closes @first to @last. close_range(2) (5.9+); when it fails (an older kernel, or a seccomp
 * filter that does not know it), the descriptors /proc/self/fd lists; without procfs, one
 * close() each below the soft RLIMIT_NOFILE (no descriptor is opened at or above it, unless the
 * limit was lowered after), at most 2^20 of them (0.1 s of CPU, measured 2026-12-06).
 */
static void close_from_to(unsigned first, unsigned last)
{
	struct rlimit rl;
	unsigned long end;

	if (first > last)
		return;
#ifdef SYS_close_range
	if (syscall(SYS_close_range, first, last, 0) == 0)
		return;
#endif
	if (close_listed(first, last))
		return;
	end = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < CLOSE_LOOP_MAX
		      ? (unsigned long)rl.rlim_cur
		      : CLOSE_LOOP_MAX;
	for (unsigned long fd = first; fd <= last && fd < end; fd++)
		close((int)fd);
}

struct reader {
	int in, out;
};

/*
 * The child: @in copied to @out, then _exit(0), or _exit(EIO) on a read error. It shares
 * the caller's memory (CLONE_VM: no page tables copied, nothing copied on write after), so
 * it touches nothing but its own stack and @arg, and never reads errno (the caller's
 * thread's: the libc wrappers it calls set it on a failure, so the caller reads errno of no
 * call while the child lives; see copy_fd() and reap()): a failed call is just a negative return.
 * No signal can interrupt it: it has the caller's handlers but none of its timers.
 */
static int reader_child(void *arg)
{
	const struct reader rd = *(const struct reader *)arg;
	char buf[CHUNK];
	unsigned lo, hi;

	/* only the file and the pipe stay open */
	lo = (unsigned)(rd.in < rd.out ? rd.in : rd.out);
	hi = (unsigned)(rd.in < rd.out ? rd.out : rd.in);
	if (lo)
		close_from_to(0, lo - 1);
	close_from_to(lo + 1, hi - 1);
	close_from_to(hi + 1, ~0U);
	for (;;) {
		ssize_t n = read(rd.in, buf, sizeof(buf)), w;

		if (n < 0)
			_exit(EIO);
		if (n == 0)
			_exit(0);
		for (ssize_t off = 0; off < n; off += w) {
			w = write(rd.out, buf + off, (size_t)(n - off));
			if (w <= 0)
				_exit(0); /* the reader gave up */
		}
	}
}

/*
 * @fd (closed here) to its end into @out, at most @max bytes; 0, or -1 with @err. @pipe: @fd
 * is the child's pipe, whose read fails only when a signal interrupts it (pipe_read(): the
 * buffer is valid, the pipe blocking), so every failure is retried without looking at errno,
 * which the child shares and may set meanwhile.
 */
static int copy_fd(int fd, bool pipe, size_t max, struct kp_bytes *out, struct kp_err *err)
{
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0;

	for (;;) {
		ssize_t n;

		if (cap - len < CHUNK) {
			unsigned char *grown;

			cap = cap ? 2 * cap : 2 * CHUNK;
			grown = realloc(buf, cap);
			if (!grown) {
				free(buf);
				close(fd);
				return kp_err_errno(err, ENOMEM, "out of memory");
			}
			buf = grown;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && (pipe || errno == EINTR))
			continue;
		if (n < 0) {
			int e = errno;

			free(buf);
			close(fd);
			return kp_err_errno(err, e, "%s", strerror(e));
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > max) {
			free(buf);
			close(fd);
			return kp_err_errno(err, EFBIG, "larger than the limit of %zu bytes", max);
		}
	}
	close(fd);
	memset(out, 0, sizeof(*out));
	out->data = buf;
	out->len = out->file_len = len;
	out->cap = cap;
	return 0;
}

/* The child's end: 0 when it read the file to its end, else -1 with @err. */
static int reap(pid_t pid, struct kp_err *err)
{
	int st;

	/* EINTR, or errno set by the child meanwhile: only ECHILD (SIGCHLD ignored) ends it */
	while (waitpid(pid, &st, 0) < 0)
		if (errno == ECHILD)
			return 0;
	if (WIFEXITED(st) && !WEXITSTATUS(st))
		return 0;
	if (WIFEXITED(st))
		return kp_err_errno(err, WEXITSTATUS(st), "%s", strerror(WEXITSTATUS(st)));
	return kp_err_errno(err, EIO, "its reader was killed by signal %d",
			    WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* @fd (procfs, sysfs, a FIFO; closed here) read by a child; see kp_read_kernel_file(). */
static int read_by_child(int fd, size_t max, const struct kp_read_watch *w, struct kp_bytes *out,
			 struct kp_err *err)
{
	int p[2], flags = fcntl(fd, F_GETFL);
	struct reader rd;
	char *stack;
	pid_t pid;
	int r;

	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		int e = errno;

		close(fd);
		return kp_err_errno(err, e, "%s", strerror(e));
	}
	if (pipe2(p, O_CLOEXEC) < 0)
		return copy_fd(fd, false, max, out, err); /* no child: read here */
	rd.in = fd;
	rd.out = p[1];
	/* its stack: freed once it is reaped, never when it is left behind */
	stack = malloc(CHILD_STACK);
	pid = stack ? clone(reader_child, stack + CHILD_STACK, CLONE_VM | SIGCHLD, &rd) : -1;
	close(p[1]);
	if (pid < 0) {
		free(stack);
		close(p[0]);
		return copy_fd(fd, false, max, out, err);
	}
	close(fd);
	if (w)
		w->started(w->data, pid);
	r = copy_fd(p[0], true, max, out, err);
	if (r < 0) {
		/* past @max, or out of memory: the child is told to stop (EPIPE, or this) */
		kill(pid, SIGKILL);
		reap(pid, &(struct kp_err){ 0 });
		free(stack);
		if (w)
			w->ended(w->data, pid);
		return -1;
	}
	r = reap(pid, err);
	free(stack);
	if (w)
		w->ended(w->data, pid);
	if (r < 0) {
		kp_bytes_release(out);
		return -1;
	}
	return 0;
}

/*
 * procfs or sysfs: where a read can sleep on a kernel lock; efivarfs, whose read waits
 * uninterruptibly for the firmware (efivarfs_file_read() -> efivar_get_variable(), whose
 * runtime call efi_queue_work() waits for with wait_for_completion(): runtime-wrappers.c,
 * 5.10 to 7.2)
 */
static bool on_kernel_fs(int fd)
{
	struct statfs fs;

	return fstatfs(fd, &fs) == 0 && (fs.f_type == PROC_SUPER_MAGIC ||
					 fs.f_type == SYSFS_MAGIC || fs.f_type == EFIVARFS_MAGIC);
}

int kp_read_kernel_file(const char *path, size_t max, struct kp_bytes *out, struct kp_err *err)
{
	return kp_read_kernel_file_in(NULL, path, max, out, err);
}

int kp_read_kernel_file_in(const struct kp_root_dir *root, const char *path, size_t max,
			   struct kp_bytes *out, struct kp_err *err)
{
	return kp_read_kernel_file_watched(root, path, max, NULL, out, err);
}

int kp_read_kernel_file_watched(const struct kp_root_dir *root, const char *path, size_t max,
				const struct kp_read_watch *watch, struct kp_bytes *out,
				struct kp_err *err)
{
	struct stat st;
	int fd;

	memset(out, 0, sizeof(*out));
	if (!root || !kp_root_rel(root->path, path)) {
		/* O_NONBLOCK: a FIFO opens without waiting for a writer (cleared before reading) */
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd >= 0 && fstat(fd, &st) == 0 &&
		    (S_ISFIFO(st.st_mode) || (S_ISREG(st.st_mode) && on_kernel_fs(fd))))
			return read_by_child(fd, max, watch, out, err) < 0
				       ? kp_err_prefix(err, path)
				       : 0;
		if (fd >= 0)
			close(fd);
		/* any other file, or none: as everywhere else (its refusals and messages) */
		return kp_read_file(path, max, out, err);
	}
	/* under a root: opened inside it by descriptors */
	fd = kp_open_readable_in(root, path, &st, err);
	if (fd < 0)
		return kp_err_prefix(err, path);
	if (S_ISFIFO(st.st_mode) || on_kernel_fs(fd))
		return read_by_child(fd, max, watch, out, err) < 0 ? kp_err_prefix(err, path) : 0;
	close(fd);
	return kp_read_file_in(root, path, max, out, err);
}

int kp_read_kernel_first_line(const char *path, char *buf, size_t size, struct kp_err *err)
{
	return kp_read_kernel_first_line_in(NULL, path, buf, size, err);
}

int kp_read_kernel_first_line_in(const struct kp_root_dir *root, const char *path, char *buf,
				 size_t size, struct kp_err *err)
{
	struct kp_bytes b;

	if (kp_read_kernel_file_in(root, path, (size_t)1 << 20, &b, err) < 0)
		return -1;
	return kp_bytes_first_line(&b, path, buf, size, err);
}
