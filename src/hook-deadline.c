// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kopolicy hook's deadline (cmd-hook.c): --timeout counts the time the hook ran or was
 * blocked, not the time it waited for a CPU; the undecided verdict written from a signal
 * handler when that time passes, when the wall-clock cap passes, or when a fatal signal comes;
 * libkmod's private copy removed before the hook dies of SIGTERM, SIGINT or SIGHUP.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "hook-internal.h"

#ifndef sigev_notify_thread_id /* glibc before 2.35 names it only through the union */
#define sigev_notify_thread_id _sigev_un._tid
#endif

#define NSEC_PER_SEC 1000000000ULL
#define MIN_REARM_NS 1000000ULL /* 1 ms: a nearly spent budget is not a signal storm */

/*
 * The wall-clock cap: ten times --timeout, at least a minute (--wall-cap may lower it, as a site
 * that wants the answer sooner, or a test, does). A hook that waited for a CPU
 * that long (spinning processes of any user can starve it: run_delay grows, its budget does
 * not) blocks the load whatever the on-error mode, since fail-open there is a pass that any
 * user can force. Below the cap a starved hook just answers late, with its policy's answer.
 */
#define CAP_TIMES_TIMEOUT 10
#define CAP_MIN_SECONDS	  60

/*
 * The deadline. Whatever a library does meanwhile (libkmod looping on an index it
 * trusts, a file system that stalls), the hook answers once it has run or been blocked
 * for --timeout seconds: a POSIX timer sends SIGALRM to the thread that armed it; the
 * handler charges the wall-clock time since arming minus the time that thread spent
 * runnable but waiting for a CPU (its sched_info run_delay: /proc/thread-self/schedstat,
 * second field; kernel/sched/stats.h sched_info_arrive() adds each wait when the thread is
 * switched in, so it is current whenever the thread runs its handler; the file exists with
 * CONFIG_SCHED_INFO, and since 5.14 ("sched: Simplify sched_info_on()") its fields are
 * kept whenever it exists, whatever the sched_schedstats sysctl or delay accounting say;
 * before, "0 0 0" when neither CONFIG_SCHEDSTATS nor delayacct_on; seen on a 6.18 kernel
 * without CONFIG_SCHEDSTATS). Short of the budget it re-arms for the rest and
 * returns (SA_RESTART: the blocking call it interrupted goes on); at the budget it writes the
 * verdict prepared when the timer was armed and exits with the on-error mode's status. When
 * run_delay cannot be read, starvation cannot be told from a stall: the wall-clock time is
 * all there is and reaching --timeout blocks the load (exit 2), as reaching the cap does.
 * The hook judges on the one thread that arms the timer (a signal for another thread would
 * find the arming thread's run_delay stale while it waits in a run queue; work handed to
 * other threads would need their waits counted too). Process-wide by nature (a signal
 * handler): written once before the timer is armed, only read afterwards.
 */
static struct {
	char msg[PATH_MAX + 512]; /* the budget spent: the on-error mode's answer */
	size_t len;
	char starved[PATH_MAX + 512]; /* the cap reached: blocked whatever the on-error mode */
	size_t starved_len;
	char fault[PATH_MAX + 512]; /* the same for a fatal signal (SIGBUS, SIGSEGV) */
	size_t fault_len;
	int code;
	int schedstat; /* the arming thread's schedstat (O_CLOEXEC), -1: run_delay unknown */
	bool armed;
	timer_t timer;
	struct timespec start;		 /* CLOCK_MONOTONIC when armed */
	uint64_t delay0;		 /* run_delay when armed, ns */
	uint64_t budget;		 /* --timeout, ns */
	uint64_t cap;			 /* wall-clock ns after which the load is blocked */
	const struct kp_kmod_copy *copy; /* libkmod's private copy: removed at the deadline */
	pid_t pid, tid;			 /* the hook and its arming thread (stop_signal()) */
	bool stops;			 /* stop_signal() installed, @stop_prev to put back */
	struct sigaction stop_prev[3];
} deadline = { .schedstat = -1 };

/* The signals that stop a hook, whose handler removes libkmod's copy first. */
static const int stop_signals[] = { SIGTERM, SIGINT, SIGHUP };

/*
 * libkmod's private copy removed by a child of its own after the answer (a raw fork, then
 * system calls only: async-signal-safe): a file system that stalls the removal stalls that
 * child, never the answer; the child closes the standard descriptors first, so a pipe
 * modprobe reads ends with the hook. No child (fork failed): the copy stays.
 */
static void remove_copy_detached(void)
{
	long pid;

	if (!deadline.copy || !deadline.copy->active)
		return;
#ifdef SYS_fork
	pid = syscall(SYS_fork);
#else /* arm64, riscv64: clone(flags, stack, ...) */
	pid = syscall(SYS_clone, (unsigned long)SIGCHLD, 0UL, 0UL, 0UL, 0UL);
#endif
	if (pid != 0)
		return;
	close(STDIN_FILENO);
	close(STDOUT_FILENO);
	close(STDERR_FILENO);
	kp_kmod_copy_unlink(deadline.copy);
	_exit(0);
}

/* @msg written, the copy removed with @clean, then the exit with @code. */
static void say_and_exit(const char *msg, size_t len, int code, bool clean)
{
	ssize_t n = write(STDERR_FILENO, msg, len);

	(void)n;
	if (clean)
		remove_copy_detached();
	_exit(code);
}

static void fatal_signal(int sig)
{
	(void)sig;
	/*
	 * async-signal-safe: write() and _exit() only; the copy is left (reading its state
	 * after a fault could fault again, and the kernel would then kill the hook: a blocked
	 * load whatever the on-error mode)
	 */
	say_and_exit(deadline.fault, deadline.fault_len, deadline.code, false);
}

/*
 * SIGTERM, SIGINT, SIGHUP: the hook dies of it as before, libkmod's copy removed first (by a
 * detached child, as at the deadline; a copy still left is removed by a later run's,
 * system/modprobe-snapshot.h). On the arming thread only, where the copy is made and freed
 * (kp_kmod_copy_remove() clears @active before it frees what the removal reads): another
 * thread of the hook hands the signal to it. A child forked by the hook dies of it at once.
 * Async-signal-safe: getpid(), gettid(), tgkill(), fork(), unlinkat() and sigaction() only.
 */
static void stop_signal(int sig)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	int saved = errno;
	pid_t pid = (pid_t)syscall(SYS_getpid);

	if (pid == deadline.pid && (pid_t)syscall(SYS_gettid) != deadline.tid) {
		syscall(SYS_tgkill, deadline.pid, deadline.tid, sig);
		errno = saved;
		return;
	}
	if (pid == deadline.pid)
		remove_copy_detached();
	/* blocked while this handler runs: delivered, with its default action, on return */
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	raise(sig);
	errno = saved;
}

/* stop_signal() for each stop signal the hook was not started ignoring. */
static void catch_stops(void)
{
	struct sigaction sa = { .sa_handler = stop_signal, .sa_flags = SA_RESTART };

	sigemptyset(&sa.sa_mask);
	deadline.pid = (pid_t)syscall(SYS_getpid);
	deadline.tid = (pid_t)syscall(SYS_gettid);
	for (size_t i = 0; i < KP_ARRAY_SIZE(stop_signals); i++) {
		/* ignored by whoever started the hook (nohup): left ignored */
		if (sigaction(stop_signals[i], NULL, &deadline.stop_prev[i]) < 0 ||
		    deadline.stop_prev[i].sa_handler == SIG_IGN)
			continue;
		sigaction(stop_signals[i], &sa, NULL);
	}
	deadline.stops = true;
}

/* Nanoseconds since deadline.start on CLOCK_MONOTONIC; async-signal-safe. */
static uint64_t wall_ns(void)
{
	struct timespec now;
	int64_t ns;

	if (clock_gettime(CLOCK_MONOTONIC, &now) < 0)
		return UINT64_MAX; /* cannot happen for CLOCK_MONOTONIC; the cap answers */
	ns = (int64_t)(now.tv_sec - deadline.start.tv_sec) * (int64_t)NSEC_PER_SEC +
	     (now.tv_nsec - deadline.start.tv_nsec);
	return ns > 0 ? (uint64_t)ns : 0;
}

/*
 * @fd's "SUM_EXEC_RUNTIME RUN_DELAY PCOUNT\n" (fs/proc/base.c proc_pid_schedstat()): the
 * run delay in ns. false when unreadable, malformed, or "0 0 0" (sched_info off; a thread
 * that ran has PCOUNT >= 1). Async-signal-safe: pread() and plain parsing.
 */
static bool read_run_delay(int fd, uint64_t *delay)
{
	char buf[96];
	uint64_t v[3] = { 0 };
	ssize_t n;
	size_t f = 0;
	bool digit = false;

	if (fd < 0)
		return false;
	do
		n = pread(fd, buf, sizeof(buf), 0);
	while (n < 0 && errno == EINTR);
	if (n <= 0 || (size_t)n == sizeof(buf))
		return false;
	for (ssize_t i = 0; i < n && f < 3; i++) {
		if (buf[i] >= '0' && buf[i] <= '9') {
			unsigned d = (unsigned)(buf[i] - '0');

			if (v[f] > (UINT64_MAX - d) / 10)
				return false;
			v[f] = v[f] * 10 + d;
			digit = true;
		} else if ((buf[i] == ' ' || buf[i] == '\n') && digit) {
			f++;
			digit = false;
		} else {
			return false;
		}
	}
	if (f != 3 || !v[2])
		return false;
	*delay = v[1];
	return true;
}

static void rearm(uint64_t ns)
{
	struct itimerspec its = { 0 };

	if (ns < MIN_REARM_NS)
		ns = MIN_REARM_NS;
	its.it_value.tv_sec = (time_t)(ns / NSEC_PER_SEC);
	its.it_value.tv_nsec = (long)(ns % NSEC_PER_SEC);
	if (timer_settime(deadline.timer, 0, &its, NULL) < 0) /* no timer left: blocked */
		say_and_exit(deadline.starved, deadline.starved_len, KP_EXIT_ERROR, true);
}

/* SIGALRM: the budget spent, the cap reached, or re-armed for the rest of the budget. */
static void deadline_alarm(int sig)
{
	int saved = errno;
	uint64_t wall = wall_ns(), delay, waited, charged, left;

	(void)sig;
	if (wall >= deadline.cap || !read_run_delay(deadline.schedstat, &delay))
		say_and_exit(deadline.starved, deadline.starved_len, KP_EXIT_ERROR, true);
	waited = delay > deadline.delay0 ? delay - deadline.delay0 : 0;
	charged = wall > waited ? wall - waited : 0;
	if (charged >= deadline.budget)
		say_and_exit(deadline.msg, deadline.len, deadline.code, true);
	left = deadline.budget - charged;
	if (left > deadline.cap - wall)
		left = deadline.cap - wall;
	rearm(left);
	errno = saved;
}

/* @buf: the undecided line for @why, escaped, ending in @answer; its length. */
static size_t prepare(const struct hook *h, char *buf, size_t size, const char *why,
		      const char *answer)
{
	FILE *m = fmemopen(buf, size - 1, "w");
	size_t len;

	if (!m)
		return 0;
	setvbuf(m, NULL, _IONBF, 0);
	kp_escaped_fprintf(m, "kopolicy: %s: cannot decide: %s; %s\n", h->asked, why, answer);
	len = (size_t)ftell(m);
	fclose(m);
	return len;
}

/* The armed thread's schedstat, open, and its run_delay now; -1 when unknown. */
static int open_schedstat(uint64_t *delay)
{
	static const char *const paths[] = { "/proc/thread-self/schedstat",
					     "/proc/self/schedstat" };

	for (size_t i = 0; i < KP_ARRAY_SIZE(paths); i++) {
		int fd = open(paths[i], O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

		if (fd < 0)
			continue;
		if (read_run_delay(fd, delay))
			return fd;
		close(fd);
	}
	return -1;
}

static bool start_timer(struct hook *h)
{
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGALRM };
	struct sigaction sa = { .sa_handler = deadline_alarm, .sa_flags = SA_RESTART };
	struct itimerspec its = { .it_value.tv_sec = (time_t)h->timeout };

	sev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) < 0 ||
	    timer_create(CLOCK_MONOTONIC, &sev, &deadline.timer) < 0)
		return false;
	deadline.armed = true;
	if (clock_gettime(CLOCK_MONOTONIC, &deadline.start) < 0 ||
	    timer_settime(deadline.timer, 0, &its, NULL) < 0) {
		hook_disarm_deadline(h);
		return false;
	}
	return true;
}

unsigned hook_wall_cap_max(unsigned timeout)
{
	return timeout * CAP_TIMES_TIMEOUT < CAP_MIN_SECONDS ? CAP_MIN_SECONDS
							     : timeout * CAP_TIMES_TIMEOUT;
}

void hook_arm_deadline(struct hook *h)
{
	char from[PATH_MAX + 32], why[160], answer[PATH_MAX + 96];
	enum kp_hook_on_error mode = hook_on_error_mode(h, from, sizeof(from));
	struct sigaction sa = { .sa_handler = fatal_signal };
	unsigned cap;
	bool known;

	deadline.code = mode == KP_HOOK_FAIL_CLOSED ? KP_EXIT_ERROR : KP_EXIT_OK;
	deadline.copy = &h->kmod_copy; /* made, if at all, while the timer runs */
	catch_stops();
	snprintf(answer, sizeof(answer), "%s (on-error %s, %s)",
		 mode == KP_HOOK_FAIL_CLOSED ? "blocking the load" : "letting the load go on",
		 kp_hook_on_error_name(mode), from);
	sigemptyset(&sa.sa_mask);
	/*
	 * A fatal signal (a file truncated under a mapping libkmod holds, a bug) is one more
	 * undecidable case, not a death that would block the load whatever the on-error mode.
	 */
	deadline.fault_len =
		prepare(h, deadline.fault, sizeof(deadline.fault),
			"kopolicy crashed or a file changed under it (fatal signal)", answer);
	if (deadline.fault_len) {
		sigaction(SIGBUS, &sa, NULL);
		sigaction(SIGSEGV, &sa, NULL);
	}
	if (!h->timeout)
		return;
	deadline.schedstat = open_schedstat(&deadline.delay0);
	known = deadline.schedstat >= 0;
	deadline.budget = (uint64_t)h->timeout * NSEC_PER_SEC;
	cap = hook_wall_cap_max(h->timeout);
	if (h->wall_cap && h->wall_cap < cap)
		cap = h->wall_cap;
	deadline.cap = known ? cap * NSEC_PER_SEC : deadline.budget;
	snprintf(why, sizeof(why), "no answer within %u s (timeout)", h->timeout);
	deadline.len = prepare(h, deadline.msg, sizeof(deadline.msg), why, answer);
	if (known)
		snprintf(why, sizeof(why),
			 "no answer within %u s of wall-clock time, most of it waiting for a "
			 "CPU (starved)",
			 cap);
	else
		snprintf(why, sizeof(why),
			 "no answer within %u s, and the time spent waiting for a CPU is "
			 "unknown (no run_delay in /proc/thread-self/schedstat)",
			 h->timeout);
	deadline.starved_len =
		prepare(h, deadline.starved, sizeof(deadline.starved), why,
			"blocking the load (whatever the on-error mode: any user can starve the "
			"hook)");
	if (!deadline.len || !deadline.starved_len || !start_timer(h)) {
		/* no timer: the hook answers when it is done, as with --timeout 0 */
		if (deadline.schedstat >= 0)
			close(deadline.schedstat);
		deadline.schedstat = -1;
	}
}

void hook_disarm_deadline(struct hook *h)
{
	(void)h;
	/* the copy is removed after this (cmd-hook.c hook_free()): a stop meanwhile leaves it */
	for (size_t i = 0; deadline.stops && i < KP_ARRAY_SIZE(stop_signals); i++)
		if (deadline.stop_prev[i].sa_handler != SIG_IGN)
			sigaction(stop_signals[i], &deadline.stop_prev[i], NULL);
	deadline.stops = false;
	if (deadline.armed) {
		/* discards an expiry still pending (kernel/time/posix-timers.c) */
		timer_delete(deadline.timer);
		deadline.armed = false;
	}
	if (deadline.schedstat >= 0) {
		close(deadline.schedstat);
		deadline.schedstat = -1;
	}
}
