/* SPDX-License-Identifier: GPL-2.0-or-later
 *
 * loader: the guest-side half of the kopolicy oracle (tests/oracle/).
 *
 *   loader [-t SECONDS] [-f FLAGS] FILE [PARAMS]
 *
 * Loads FILE with finit_module(2) (raw syscall, flags 0 unless -f is given, so
 * a signature is honoured exactly as the kernel sees it) and prints exactly
 * one line on stdout:
 *
 *   KPLOAD <basename> rc=<0|-errno> <ERRNAME>
 *
 * ERRNAME is "OK" on success, otherwise the errno's symbolic name (ENOENT,
 * ENOEXEC, EKEYREJECTED, ...).  busybox/kmod insmod are not used because they
 * translate or hide the errno.  Built with gcc -static -O2 on the host and
 * copied into the initramfs; it has no other dependency.
 *
 * -f FLAGS passes finit_module() flags as kmod does for modprobe/insmod
 * --force-modversion (MODULE_INIT_IGNORE_MODVERSIONS = 1), --force-vermagic
 * (MODULE_INIT_IGNORE_VERMAGIC = 2) and --force (both, 3): kmod's
 * do_finit_module() passes exactly these for an uncompressed module.
 *
 * -t SECONDS makes the call in a child process and waits at most SECONDS for
 * it. A call that has not returned by then (a later load blocked in
 * mutex_lock(&module_mutex) after an oops left the lock held) is reported as
 *
 *   KPLOADBLOCKED <basename> state=<S> wchan=<W>
 *
 * followed by "KPSTACK <frame>" for each line of /proc/<child>/stack, and the
 * loader exits 0 leaving the child where it sleeps. A child killed by a signal
 * (an oops in finit_module()) makes the loader exit 128 + the signal, as the
 * shell reports a killed loader without -t.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef MODULE_INIT_IGNORE_MODVERSIONS
#define MODULE_INIT_IGNORE_MODVERSIONS 1
#endif
#ifndef MODULE_INIT_IGNORE_VERMAGIC
#define MODULE_INIT_IGNORE_VERMAGIC 2
#endif

#ifndef SYS_finit_module
#define SYS_finit_module 313 /* x86_64 */
#endif

static const char *errname(int e)
{
	switch (e) {
	case 0: return "OK";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EIO: return "EIO";
	case ENOEXEC: return "ENOEXEC";
	case EBADF: return "EBADF";
	case ENOMEM: return "ENOMEM";
	case EACCES: return "EACCES";
	case EFAULT: return "EFAULT";
	case EBUSY: return "EBUSY";
	case EEXIST: return "EEXIST";
	case ENODEV: return "ENODEV";
	case EINVAL: return "EINVAL";
	case ENOSPC: return "ENOSPC";
	case ERANGE: return "ERANGE";
	case ENOSYS: return "ENOSYS";
	case ENODATA: return "ENODATA";
	case ENOPKG: return "ENOPKG";
	case EBADMSG: return "EBADMSG";
	case EOVERFLOW: return "EOVERFLOW";
	case EMSGSIZE: return "EMSGSIZE";
	case ENXIO: return "ENXIO";
	case EAGAIN: return "EAGAIN";
	case ETXTBSY: return "ETXTBSY";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ETIMEDOUT: return "ETIMEDOUT";
	case ENOKEY: return "ENOKEY";
	case EKEYEXPIRED: return "EKEYEXPIRED";
	case EKEYREVOKED: return "EKEYREVOKED";
	case EKEYREJECTED: return "EKEYREJECTED";
	default: {
		const char *n = strerrorname_np(e);
		return n ? n : "EUNKNOWN";
	}
	}
}

/* /proc/<pid>/<what>'s first line into @buf ("?" when unreadable), without the newline */
static void proc_line(pid_t pid, const char *what, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
	f = fopen(path, "r");
	if (!f || !fgets(buf, (int)len, f))
		snprintf(buf, len, "?");
	if (f)
		fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

/* The child's state letter (the field after "(comm)" in /proc/<pid>/stat). */
static char proc_state(pid_t pid)
{
	char stat[512], *p;

	proc_line(pid, "stat", stat, sizeof(stat));
	p = strrchr(stat, ')');
	return p && p[1] == ' ' && p[2] ? p[2] : '?';
}

static void report_blocked(pid_t pid, const char *base)
{
	char wchan[128], path[64], line[256];
	FILE *f;

	proc_line(pid, "wchan", wchan, sizeof(wchan));
	printf("KPLOADBLOCKED %s state=%c wchan=%s\n", base, proc_state(pid), wchan);
	snprintf(path, sizeof(path), "/proc/%d/stack", (int)pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		printf("KPSTACK %s\n", line);
	}
	if (f)
		fclose(f);
	fflush(stdout);
}

/* The call in a child; waits @secs for it (see -t above). */
static int load_bounded(const char *file, const char *base, const char *params, long flags,
			long secs)
{
	const struct timespec tick = { 0, 20 * 1000 * 1000 };
	long ticks = secs * 50;
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("loader: fork");
		return 2;
	}
	if (pid == 0) {
		int fd = open(file, O_RDONLY | O_CLOEXEC), err = 0;

		if (fd < 0) {
			err = errno;
			printf("KPLOAD %s rc=%d %s open-failed\n", base, -err, errname(err));
			fflush(stdout);
			_exit(1);
		}
		if (syscall(SYS_finit_module, fd, params, flags) != 0)
			err = errno;
		printf("KPLOAD %s rc=%d %s\n", base, -err, errname(err));
		fflush(stdout);
		_exit(0);
	}
	for (long i = 0; i <= ticks; i++) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
		if (r < 0) {
			perror("loader: waitpid");
			return 2;
		}
		nanosleep(&tick, NULL);
	}
	report_blocked(pid, base);
	return 0;
}

int main(int argc, char **argv)
{
	long secs = 0;
	const char *params;
	const char *base;
	long flags = 0, known;
	long rc;
	int fd, err = 0;

	if (argc > 2 && strcmp(argv[1], "-t") == 0) {
		char *end;

		secs = strtol(argv[2], &end, 10);
		if (*argv[2] == '\0' || *end != '\0' || secs < 1 || secs > 3600) {
			fprintf(stderr, "loader: bad -t seconds '%s' (1..3600)\n", argv[2]);
			return 2;
		}
		argc -= 2;
		argv += 2;
	}
	if (argc > 2 && strcmp(argv[1], "-f") == 0) {
		char *end;

		flags = strtol(argv[2], &end, 0);
		known = MODULE_INIT_IGNORE_MODVERSIONS | MODULE_INIT_IGNORE_VERMAGIC;
		if (*argv[2] == '\0' || *end != '\0' || (flags & ~known)) {
			fprintf(stderr, "loader: bad -f flags '%s' (0..3)\n", argv[2]);
			return 2;
		}
		argc -= 2;
		argv += 2;
	}
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: loader [-t SECONDS] [-f FLAGS] FILE [PARAMS]\n");
		return 2;
	}
	params = argc > 2 ? argv[2] : "";
	base = strrchr(argv[1], '/');
	base = base ? base + 1 : argv[1];
	if (secs)
		return load_bounded(argv[1], base, params, flags, secs);

	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		printf("KPLOAD %s rc=%d %s open-failed\n", base, -err, errname(err));
		fflush(stdout);
		return 1;
	}
	rc = syscall(SYS_finit_module, fd, params, flags);
	if (rc != 0)
		err = errno;
	close(fd);
	printf("KPLOAD %s rc=%d %s\n", base, -err, errname(err));
	fflush(stdout);
	return 0;
}
