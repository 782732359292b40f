// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Marks of the readers a hook left behind: see stuck-reader.h.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/base-cache.h"
#include "cache/trusted-dir.h"
#include "util/io.h"
#include "stuck-reader.h"

#define BOOT_ID_LEN 36 /* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" */

void kp_reader_marks_init(struct kp_reader_marks *m, const char *dir)
{
	m->dir = dir;
	m->dfd = -1;
	m->boot[0] = '\0';
}

void kp_reader_marks_release(struct kp_reader_marks *m)
{
	if (m->dfd >= 0)
		close(m->dfd);
	m->dfd = -1;
}

/*
 * Up to @size - 1 bytes of the file @name of @dfd (a link never followed), NUL-ended: its
 * length, or -1. @st: its fstat(), and -1 unless it is a regular file.
 */
static ssize_t read_small(int dfd, const char *name, char *buf, size_t size, struct stat *st)
{
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	ssize_t n;

	if (fd < 0)
		return -1;
	if (st && (fstat(fd, st) < 0 || !S_ISREG(st->st_mode))) {
		close(fd);
		return -1;
	}
	n = read(fd, buf, size - 1); /* a regular or proc file: no EINTR */
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* This boot's id (cache/base-cache.h kp_boot_id()) into @out; false if unknown. */
static bool boot_id(char out[BOOT_ID_LEN + 1])
{
	char buf[64];

	if (kp_boot_id(NULL, buf, sizeof(buf)) < 0 || strlen(buf) != BOOT_ID_LEN)
		return false;
	memcpy(out, buf, BOOT_ID_LEN + 1);
	return true;
}

/*
 * The start time of process @pid (field 22 of /proc/PID/stat, fs/proc/array.c do_task_stat(),
 * in clock ticks since boot), false when it does not exist or has ended (a zombie, state Z or
 * X, that nobody reaped). The fields after the last ')', which ends the command name, are 3
 * (state) onwards.
 */
static bool start_time(pid_t pid, unsigned long long *start)
{
	char path[64], buf[1024], *p, *end;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_small(AT_FDCWD, path, buf, sizeof(buf), NULL) < 0 || !(p = strrchr(buf, ')')))
		return false;
	p++;
	if (p[0] != ' ' || p[1] == 'Z' || p[1] == 'X')
		return false;
	for (int field = 3; field <= 22; field++) {
		while (*p == ' ')
			p++;
		if (!*p)
			return false;
		if (field == 22) {
			*start = strtoull(p, &end, 10);
			return end != p && (*end == ' ' || *end == '\n' || !*end);
		}
		p += strcspn(p, " ");
	}
	return false;
}

int kp_reader_marks_open(struct kp_reader_marks *m, struct kp_err *err)
{
	if (!m->dir || m->dfd >= 0)
		return 0;
	if (!boot_id(m->boot))
		return kp_err_errno(err, ENOENT, "no boot id in /proc/sys/kernel/random/boot_id");
	m->dfd = kp_trusted_dir_open(m->dir, true, err);
	return m->dfd < 0 ? -1 : 0;
}

static void mark_name(char *buf, size_t size, const char *kind, pid_t pid)
{
	snprintf(buf, size, "%s-reader.%d", kind, (int)pid);
}

/* True when process @pid started at @start (clock ticks since boot) still runs. */
static bool alive(pid_t pid, unsigned long long start)
{
	unsigned long long cur;

	return pid > 0 && start_time(pid, &cur) && cur == start;
}

enum mark_state {
	MARK_UNTRUSTED, /* not believed (nor removed) */
	MARK_STALE,	/* its reader ended, another boot's, or malformed: removed */
	MARK_WAITED,	/* its reader runs and its hook waits for it */
	MARK_LEFT,	/* its reader runs, its hook is gone: left behind */
};

/* The mark @name of @m's directory; its reader's pid in *@pid. */
static enum mark_state mark_state(const struct kp_reader_marks *m, const char *name, pid_t *pid)
{
	char buf[160], mboot[BOOT_ID_LEN + 1];
	unsigned long long rstart, hstart;
	struct stat st;
	int rpid, hpid, used = 0;

	if (read_small(m->dfd, name, buf, sizeof(buf), &st) < 0 || !kp_trusted_file(&st))
		return MARK_UNTRUSTED;
	if (sscanf(buf, "%36s %d %llu %d %llu%n", mboot, &rpid, &rstart, &hpid, &hstart, &used) !=
		    5 ||
	    buf[used] != '\n' || buf[used + 1])
		return MARK_STALE;
	if (strcmp(mboot, m->boot) || !alive((pid_t)rpid, rstart))
		return MARK_STALE;
	*pid = (pid_t)rpid;
	return alive((pid_t)hpid, hstart) ? MARK_WAITED : MARK_LEFT;
}

int kp_reader_marks_find(struct kp_reader_marks *m, const char *kind, pid_t *pid)
{
	char prefix[64];
	struct dirent *de;
	size_t plen;
	int found = 0;
	DIR *d;

	if (m->dfd < 0)
		return 0;
	d = kp_dir_list_at(m->dfd, ".");
	if (!d)
		return 0;
	snprintf(prefix, sizeof(prefix), "%s-reader.", kind);
	plen = strlen(prefix);
	while (!found && (de = readdir(d))) {
		enum mark_state st;

		if (strncmp(de->d_name, prefix, plen))
			continue;
		st = mark_state(m, de->d_name, pid);
		if (st == MARK_LEFT)
			found = 1;
		else if (st == MARK_STALE)
			(void)unlinkat(m->dfd, de->d_name, 0);
	}
	closedir(d);
	return found;
}

int kp_reader_marks_add(struct kp_reader_marks *m, const char *kind, pid_t pid)
{
	char name[96], line[160];
	unsigned long long start, hstart;
	pid_t self = getpid();
	int fd, len;
	ssize_t n;

	if (m->dfd < 0 || !start_time(pid, &start) || !start_time(self, &hstart))
		return -1;
	mark_name(name, sizeof(name), kind, pid);
	len = snprintf(line, sizeof(line), "%s %d %llu %d %llu\n", m->boot, (int)pid, start,
		       (int)self, hstart);
	/* a mark of an earlier boot's process with the same pid: replaced */
	(void)unlinkat(m->dfd, name, 0);
	fd = openat(m->dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	n = write(fd, line, (size_t)len);
	if (close(fd) < 0 || n != len) {
		(void)unlinkat(m->dfd, name, 0);
		return -1;
	}
	return 0;
}

void kp_reader_marks_remove(struct kp_reader_marks *m, const char *kind, pid_t pid)
{
	char name[96];

	if (m->dfd < 0)
		return;
	mark_name(name, sizeof(name), kind, pid);
	(void)unlinkat(m->dfd, name, 0);
}
