// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hook-timer LOG COMMAND [ARG...] — the boot-storm guest's wrapper around `kopolicy hook`.
 *
 * Runs COMMAND, waits for it, appends one line to LOG and exits with COMMAND's status, so
 * that the modprobe.d install line keeps its meaning ("hook && modprobe --ignore-install"):
 *
 *     hook <module> start=<s> wall_ms=<ms> user_ms=<ms> sys_ms=<ms> status=<n>
 *
 * <module> is $MODPROBE_MODULE, start the CLOCK_MONOTONIC time of the fork (seconds since
 * boot, the clock of /proc/uptime and systemd's *Monotonic timestamps), wall the time until
 * COMMAND was reaped, user/sys its CPU time (wait4 rusage), status its exit status or
 * 128 + signal. The line is one write(2) to an O_APPEND file: lines of concurrent hooks
 * (udev's workers) do not interleave. A LOG that cannot be opened is not an error: the
 * load goes on and the missing line shows in the report.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double tv_ms(const struct timeval *tv)
{
	return (double)tv->tv_sec * 1e3 + (double)tv->tv_usec / 1e3;
}

int main(int argc, char **argv)
{
	struct rusage ru;
	const char *mod = getenv("MODPROBE_MODULE");
	double t0, t1;
	char line[512];
	int status, rc, fd, len;
	pid_t pid;

	if (argc < 3) {
		fprintf(stderr, "usage: hook-timer LOG COMMAND [ARG...]\n");
		return 2;
	}
	t0 = now();
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "hook-timer: fork: %s\n", strerror(errno));
		return 2;
	}
	if (pid == 0) {
		execv(argv[2], argv + 2);
		fprintf(stderr, "hook-timer: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "hook-timer: wait4: %s\n", strerror(errno));
			return 2;
		}
	}
	t1 = now();
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	len = snprintf(line, sizeof(line),
		       "hook %s start=%.6f wall_ms=%.3f user_ms=%.3f sys_ms=%.3f status=%d\n",
		       mod && *mod ? mod : "-", t0, (t1 - t0) * 1e3, tv_ms(&ru.ru_utime),
		       tv_ms(&ru.ru_stime), rc);
	if (len > 0 && (size_t)len < sizeof(line)) {
		fd = open(argv[1], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd >= 0) {
			if (write(fd, line, (size_t)len) != len)
				fprintf(stderr, "hook-timer: %s: short write\n", argv[1]);
			close(fd);
		}
	}
	return rc;
}
