// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kopolicy hook's deadline (cmd-hook.c): the undecided verdict written from a signal
 * handler when --timeout passes or a fatal signal comes.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "hook-internal.h"

/*
 * The deadline. Whatever a library does meanwhile (libkmod looping on an index it
 * trusts, a file system that stalls), the hook answers within --timeout seconds: the
 * SIGALRM handler writes the verdict prepared when the alarm was armed and exits with
 * the on-error mode's status. Process-wide by nature (a signal handler): written once
 * before the alarm is armed, only read afterwards.
 *
 * The seconds counted are those the hook could run: the time its threads spent runnable but
 * waiting for a CPU that other processes held (the scheduler's run_delay,
 * /proc/self/task/TID/schedstat) does not count. Otherwise a local user could flip a blocked
 * load into the on-error mode's answer (fail-open: the load goes on) by keeping the CPUs busy
 * until the deadline passed: a loaded machine delays the answer instead. Time blocked in
 * the kernel (a stalled file system) is not run_delay and still counts. Without procfs or
 * the kernel's schedstat files, every second counts.
 */
static struct {
	char msg[PATH_MAX + 512];
	size_t len;
	char fault[PATH_MAX + 512]; /* the same for a fatal signal (SIGBUS, SIGSEGV) */
	size_t fault_len;
	int code;
	uint64_t budget;    /* ns of the hook's own time */
	uint64_t start;	    /* CLOCK_MONOTONIC when armed, ns */
	uint64_t main_base; /* the main thread's run_delay when armed, ns */
	pid_t pid;
} deadline;

static uint64_t now_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The decimal number at @p (digits only), moving @p past it. Async-signal-safe. */
static uint64_t parse_u64(const char **p)
{
	uint64_t v = 0;

	while (**p >= '0' && **p <= '9')
		v = v * 10 + (uint64_t)(*(*p)++ - '0');
	return v;
}

/*
 * The run_delay of thread @tid (the second number of its schedstat), ns; 0 when unknown.
 * Async-signal-safe: open(), read(), close() and no allocation.
 */
static uint64_t run_delay(int taskdir, const char *tid)
{
	char path[64], buf[96];
	const char *p = buf;
	size_t n = 0;
	ssize_t r;
	int fd;

	while (tid[n] && n + sizeof("/schedstat") < sizeof(path)) {
		path[n] = tid[n];
		n++;
	}
	if (tid[n])
		return 0;
	memcpy(path + n, "/schedstat", sizeof("/schedstat"));
	fd = openat(taskdir, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return 0;
	buf[r] = '\0';
	parse_u64(&p);
	if (*p++ != ' ')
		return 0;
	return parse_u64(&p);
}

/* /proc/self/task (the hook's threads), or -1. Async-signal-safe. */
static int task_dir(void)
{
	return open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/*
 * The longest any thread of the hook has waited for a CPU since the deadline was armed (a
 * thread made later: since it was made), ns: the longest the thread the others wait for can
 * have been held back. Async-signal-safe (getdents64 on /proc/self/task, no allocation).
 */
static uint64_t starved(void)
{
	char buf[2048];
	uint64_t most = 0;
	long n;
	int dfd = task_dir();

	if (dfd < 0)
		return 0;
	while ((n = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			/* struct linux_dirent64: ino 8, off 8, reclen 2, type 1, name */
			unsigned short reclen;
			const char *name = buf + off + 19, *q = name;
			uint64_t d;

			memcpy(&reclen, buf + off + 16, sizeof(reclen));
			if (!reclen)
				break;
			off += reclen;
			if (*name < '0' || *name > '9')
				continue;
			d = run_delay(dfd, name);
			if ((pid_t)parse_u64(&q) == deadline.pid)
				d = d > deadline.main_base ? d - deadline.main_base : 0;
			if (d > most)
				most = d;
		}
	}
	close(dfd);
	return most;
}

static void deadline_hit(int sig)
{
	ssize_t n;

	/* async-signal-safe: clock_gettime(), open(), read(), alarm(), write() and _exit() only */
	if (sig == SIGALRM) {
		int saved = errno;
		uint64_t elapsed = now_ns() - deadline.start, waited = starved();
		uint64_t used = elapsed > waited ? elapsed - waited : 0;

		if (used < deadline.budget) {
			uint64_t left = deadline.budget - used;

			/* held back by other processes: the rest of the budget from now */
			alarm((unsigned)((left + 999999999u) / 1000000000u));
			errno = saved;
			return;
		}
		n = write(STDERR_FILENO, deadline.msg, deadline.len);
	} else {
		n = write(STDERR_FILENO, deadline.fault, deadline.fault_len);
	}
	(void)n;
	_exit(deadline.code);
}

/* @buf: the undecided line for @why, escaped; its length. */
static size_t prepare(const struct hook *h, char *buf, size_t size, const char *why,
		      enum kp_hook_on_error mode, const char *from)
{
	FILE *m = fmemopen(buf, size - 1, "w");
	size_t len;

	if (!m)
		return 0;
	setvbuf(m, NULL, _IONBF, 0);
	kp_escaped_fprintf(
		m, "kopolicy: %s: cannot decide: %s; %s (on-error %s, %s)\n", h->asked, why,
		mode == KP_HOOK_FAIL_CLOSED ? "blocking the load" : "letting the load go on",
		kp_hook_on_error_name(mode), from);
	len = (size_t)ftell(m);
	fclose(m);
	return len;
}

void hook_arm_deadline(struct hook *h)
{
	char from[PATH_MAX + 32], why[64], tid[24];
	enum kp_hook_on_error mode = hook_on_error_mode(h, from, sizeof(from));
	struct sigaction sa = { .sa_handler = deadline_hit };
	int dfd;

	deadline.code = mode == KP_HOOK_FAIL_CLOSED ? KP_EXIT_ERROR : KP_EXIT_OK;
	sigemptyset(&sa.sa_mask);
	/*
	 * A fatal signal (a file truncated under a mapping libkmod holds, a bug) is one more
	 * undecidable case, not a death that would block the load whatever the on-error mode.
	 */
	deadline.fault_len =
		prepare(h, deadline.fault, sizeof(deadline.fault),
			"kopolicy crashed or a file changed under it (fatal signal)", mode, from);
	if (deadline.fault_len) {
		sigaction(SIGBUS, &sa, NULL);
		sigaction(SIGSEGV, &sa, NULL);
	}
	if (!h->timeout)
		return;
	snprintf(why, sizeof(why), "no answer within %u s (timeout)", h->timeout);
	deadline.len = prepare(h, deadline.msg, sizeof(deadline.msg), why, mode, from);
	deadline.budget = (uint64_t)h->timeout * 1000000000u;
	deadline.pid = getpid();
	deadline.start = now_ns();
	snprintf(tid, sizeof(tid), "%d", (int)deadline.pid);
	dfd = task_dir();
	deadline.main_base = dfd >= 0 ? run_delay(dfd, tid) : 0;
	if (dfd >= 0)
		close(dfd);
	if (deadline.len && sigaction(SIGALRM, &sa, NULL) == 0)
		alarm(h->timeout);
}
