// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kp_read_kernel_file()'s child (lib/system/kernel-read.c) keeps none of the caller's
 * descriptors, one above 65535 included, whichever way it closes them: close_range(2), the
 * list in /proc/self/fd when close_range() fails (before 5.9, or a seccomp filter that does not
 * know it: denied here with ENOSYS), one close() each below RLIMIT_NOFILE when getdents64() fails
 * too (denied as well). The file is a FIFO whose writer holds it open: the child blocks in
 * read() as on a held module_mutex, and its /proc/PID/fd is looked at meanwhile; then the
 * writer writes and closes, and the caller must get those bytes.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "system/kernel-read.h"
#include "tap.h"

#define HIGH_FD	    70000 /* above the 65536 the loop stopped at before */
#define PAYLOAD	    "kp_prop_prov 16384 0 - Live 0xffffffffc0000000 (POE)\n"
#define EXIT_SKIP   77
#define EXIT_NOREAD 3

enum deny { DENY_NONE, DENY_CLOSE_RANGE, DENY_CLOSE_RANGE_GETDENTS };

/* ENOSYS for close_range() (and getdents64()): the calls of a kernel before 5.9 without procfs */
static int deny_syscalls(enum deny d)
{
#if defined(SYS_close_range) && defined(SYS_getdents64)
	struct sock_filter f[] = {
		/* the number only (no arch check): a test process, native calls only */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_close_range, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
			 d == DENY_CLOSE_RANGE_GETDENTS ? SYS_getdents64 : SYS_close_range, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (d == DENY_NONE)
		return 0;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
#else
	return d == DENY_NONE ? 0 : -1;
#endif
}

/* The caller: fd @high open (a pipe's write end), then the read; exit 0 if it got PAYLOAD. */
static void caller(const char *fifo, int ready, enum deny d, int high)
{
	struct kp_err err = { 0 };
	struct rlimit rl;
	struct kp_bytes b;
	int p[2];

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		_exit(EXIT_SKIP);
	rl.rlim_cur = (rlim_t)high + 1;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0 || pipe(p) < 0 || dup2(p[1], high) < 0)
		_exit(EXIT_SKIP);
	close(p[1]);
	if (deny_syscalls(d) < 0)
		_exit(EXIT_SKIP);
	if (write(ready, "r", 1) != 1)
		_exit(EXIT_SKIP);
	close(ready);
	if (kp_read_kernel_file(fifo, 1 << 20, &b, &err) < 0) {
		fprintf(stderr, "# %s\n", err.msg);
		_exit(EXIT_NOREAD);
	}
	_exit(b.len == strlen(PAYLOAD) && !memcmp(b.data, PAYLOAD, b.len) ? 0 : EXIT_NOREAD);
}

/* The pid whose parent is @ppid (/proc/PID/stat), or 0. */
static pid_t child_of(pid_t ppid)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = 0;

	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		char path[300], buf[512], *rp;
		int fd, pp;
		ssize_t n;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		rp = strrchr(buf, ')'); /* "pid (comm) S ppid ..." */
		if (rp && sscanf(rp + 1, " %*c %d", &pp) == 1 && pp == ppid)
			found = (pid_t)atoi(e->d_name);
	}
	closedir(d);
	return found;
}

/* The descriptors @pid holds: how many, and whether @high is one; -1 if gone. */
static int fds_of(pid_t pid, int high, int *has_high)
{
	char path[64];
	DIR *d;
	struct dirent *e;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return -1;
	*has_high = 0;
	while ((e = readdir(d)))
		if (e->d_name[0] >= '0' && e->d_name[0] <= '9') {
			int fd = atoi(e->d_name);

			n++;
			if (fd == high)
				*has_high = 1;
		}
	closedir(d);
	return n;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void one_case(struct tap *t, const char *dir, enum deny d, int high, const char *what)
{
	char fifo[4200];
	int ready[2], w, st, nfd = -1, has_high = 1;
	pid_t p, r = 0;
	ssize_t n;
	char c;

	snprintf(fifo, sizeof(fifo), "%s/modules.%d", dir, (int)d);
	if (mkfifo(fifo, 0600) < 0 || pipe(ready) < 0) {
		tap_ok(t, 0, "%s: set up (%s)", what, strerror(errno));
		return;
	}
	w = open(fifo, O_RDWR | O_CLOEXEC); /* a writer that writes nothing yet */
	p = fork();
	if (p == 0) {
		close(ready[0]);
		close(w);
		caller(fifo, ready[1], d, high);
	}
	close(ready[1]);
	n = read(ready[0], &c, 1);
	close(ready[0]);
	if (n != 1) {
		waitpid(p, &st, 0);
		close(w);
		unlink(fifo);
		printf("ok %d - %s # SKIP cannot raise RLIMIT_NOFILE to %d or deny syscalls\n",
		       ++t->n, what, high + 1);
		return;
	}
	/* the reader: the caller's child; then its table once it closed what it does not need */
	for (int i = 0; i < 500 && !r; i++, sleep_ms(10))
		r = child_of(p);
	for (int i = 0; r && i < 500; i++, sleep_ms(10)) {
		nfd = fds_of(r, high, &has_high);
		if (nfd == 2 && !has_high)
			break;
	}
	tap_ok(t, r && nfd == 2 && !has_high,
	       "%s: the reader holds the file and the pipe only (%d descriptors%s)", what, nfd,
	       has_high ? ", the caller's highest among them" : "");
	if (write(w, PAYLOAD, strlen(PAYLOAD)) != (ssize_t)strlen(PAYLOAD))
		tap_ok(t, 0, "%s: write the FIFO", what);
	close(w);
	waitpid(p, &st, 0);
	tap_ok(t, WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: ... and the caller gets the bytes",
	       what);
	unlink(fifo);
}

int main(void)
{
	struct tap t = { 0 };
	char dir[] = "/tmp/kp-kread.XXXXXX";
	struct rlimit rl;
	int high = HIGH_FD;

	/* fd 70000 where the hard limit allows it (root: raised), else the highest it allows */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY &&
	    rl.rlim_max < HIGH_FD + 1) {
		rl.rlim_max = HIGH_FD + 1;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0 && getrlimit(RLIMIT_NOFILE, &rl) == 0)
			high = (int)rl.rlim_max - 1;
	}
	printf("# the caller's descriptor %d open%s\n", high,
	       high < 65536 ? " (RLIMIT_NOFILE's hard limit is lower than 70001)" : "");

	if (!mkdtemp(dir)) {
		printf("1..0 # SKIP mkdtemp: %s\n", strerror(errno));
		return 0;
	}
	one_case(&t, dir, DENY_NONE, high, "close_range()");
	one_case(&t, dir, DENY_CLOSE_RANGE, high, "no close_range(): /proc/self/fd");
	one_case(&t, dir, DENY_CLOSE_RANGE_GETDENTS, high,
		 "no close_range(), no getdents64(): below RLIMIT_NOFILE");
	rmdir(dir);
	printf("1..%d\n", t.n);
	return t.failed ? 1 : 0;
}
