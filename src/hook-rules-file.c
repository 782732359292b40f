// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The hook's install rules file (hook-rules.h, --update-install-rules and
 * --retire-install-rules): read through its trusted directory, recognised as kopolicy's own,
 * and replaced atomically when its rules changed or when they are retired, under a lock no
 * other user can hold (rules_lock(): a 0600 file of the hook's state directory); with it, under
 * the same lock, the softdep overrides beside it (hook-softdeps.c), written, removed when no
 * module needs one or when the rules are retired, and put back as they were when the rules
 * written after them fail (an override without its module's new line drops its soft
 * dependencies).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache/trusted-dir.h"
#include "cli.h"
#include "file/rootfs.h"
#include "hook-rules-internal.h"
#include "util/io.h"
#define MAX_RULES_FILE (16u << 20) /* a file kopolicy wrote is far smaller */

/* The rules file as it is: its bytes into *@old (NULL: absent). 0, 1 refused, -1 error. */
static int read_current(int dfd, const char *file, const char *base, char **old, size_t *len)
{
	int fd = openat(dfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	ssize_t got;

	*old = NULL;
	*len = 0;
	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0 && errno == ELOOP) {
		kp_cli_error(file, "a symbolic link: refused (kopolicy writes only a regular file "
				   "of its own)");
		return 1;
	}
	if (fd < 0) {
		kp_cli_error(file, "%s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		kp_cli_error(file, "%s", strerror(errno));
		close(fd);
		return -1;
	}
	if (!kp_trusted_file(&st)) {
		kp_cli_error(file, "%s: refused",
			     !S_ISREG(st.st_mode)     ? "not a regular file"
			     : !kp_trusted_owner(&st) ? "owned by another user"
			     : (st.st_mode & S_IWOTH) ? "writable by others"
						      : "writable by its group");
		close(fd);
		return 1;
	}
	if ((uint64_t)st.st_size > MAX_RULES_FILE) {
		kp_cli_error(file, "larger than kopolicy's rules can be (%u MiB): refused",
			     MAX_RULES_FILE >> 20);
		close(fd);
		return 1;
	}
	*old = malloc((size_t)st.st_size + 1);
	if (!*old) {
		kp_cli_error(file, "out of memory");
		close(fd);
		return -1;
	}
	got = kp_pread_all(fd, *old, (size_t)st.st_size, 0);
	close(fd);
	if (got != (ssize_t)st.st_size) {
		kp_cli_error(file, "read error%s", got < 0 ? "" : " (it changed while read)");
		free(*old);
		*old = NULL;
		return -1;
	}
	(*old)[got] = '\0';
	*len = (size_t)got;
	return 0;
}

/* Writes @text as @base of @dfd atomically: a new file beside it, synced, renamed. 0 or -1. */
static int replace(int dfd, int dirfd, const char *file, const char *base, const char *text,
		   size_t len)
{
	char tmp[NAME_MAX + 1];
	struct timespec ts;
	int fd = -1, n;

	for (int tries = 0; fd < 0 && tries < 16; tries++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		/* a dot file: modprobe reads only *.conf files not starting with '.' */
		n = snprintf(tmp, sizeof(tmp), ".%.200s.%ld.%lx", base, (long)getpid(),
			     (unsigned long)ts.tv_nsec + (unsigned long)tries);
		if (n < 0 || (size_t)n >= sizeof(tmp))
			break;
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		kp_cli_error(file, "cannot create a new file beside it: %s", strerror(errno));
		return -1;
	}
	if (fchmod(fd, 0644) < 0 || (geteuid() == 0 && fchown(fd, 0, 0) < 0) ||
	    kp_write_all(fd, text, len) < 0 || fsync(fd) < 0) {
		kp_cli_error(file, "cannot write the new rules: %s", strerror(errno));
		close(fd);
		unlinkat(dfd, tmp, 0);
		return -1;
	}
	if (close(fd) < 0 || renameat(dfd, tmp, dfd, base) < 0) {
		kp_cli_error(file, "cannot replace it: %s", strerror(errno));
		unlinkat(dfd, tmp, 0);
		return -1;
	}
	if (fsync(dirfd) < 0 && errno != EINVAL) {
		kp_cli_error(file, "cannot sync its directory: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* The options of the new rules: the command line's, else those of the file (@lo). */
static int new_options(const struct kp_rules_opts *o, const struct line_opts *lo, char **config,
		       const char **on_error)
{
	*config = NULL;
	*on_error = NULL;
	if (o->config) {
		*config = kp_rules_absolute(o->config);
		if (!*config) {
			kp_cli_error(o->config, "cannot make it absolute: %s", strerror(errno));
			return -1;
		}
	} else if (lo->config[0] && !(*config = strdup(lo->config))) {
		kp_cli_error(NULL, "out of memory");
		return -1;
	}
	if (o->on_error_given)
		*on_error = kp_hook_on_error_name(o->on_error);
	else if (lo->on_error[0])
		*on_error = lo->on_error;
	return 0;
}

/* The rules file opened in its trusted directory, locked, read and known as kopolicy's own. */
struct rules_file {
	const char *file; /* as named (or @path) */
	char *path;	  /* ROOT/etc/modprobe.d/zz-kopolicy.conf when none was named */
	char dir[PATH_MAX];
	const char *base;
	int dfd;    /* the directory, trusted (kp_trusted_dir_open()) */
	int dirfd;  /* the same, for reading (synced after a rename) */
	int lockfd; /* rules_lock()'s file, flock()ed until rules_file_close(); -1: @dirfd is */
	char *old;  /* its bytes, NULL when absent */
	size_t oldlen;
	struct line_opts lo; /* the options of its lines */
};

static void rules_file_close(struct rules_file *rf)
{
	if (rf->lockfd >= 0)
		close(rf->lockfd); /* releases the lock */
	if (rf->dirfd >= 0)
		close(rf->dirfd); /* releases the lock when it held it */
	if (rf->dfd >= 0)
		close(rf->dfd);
	free(rf->old);
	free(rf->path);
}

/*
 * The lock of every --update-install-rules and --retire-install-rules run of this machine, a
 * file of @dir (the hook's state directory, made when missing under the trust test:
 * cache/trusted-dir.h) that nobody but root or the user running can open. flock() needs no
 * more than a descriptor open for reading: a lock on the rules file's directory, readable by
 * every user as /etc/modprobe.d is, could be taken and held for ever by any of them, and the
 * run (dkms, apt, the kernel's postinst) waited for it for ever. The descriptor, or -1 (no
 * @dir, refused, or a file others could open).
 */
static int rules_lock(const char *dir)
{
	struct stat st;
	int dfd, fd;

	if (!dir)
		return -1;
	dfd = kp_trusted_dir_open(dir, true, NULL);
	if (dfd < 0)
		return -1;
	fd = openat(dfd, KP_RULES_LOCK,
		    O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0600);
	close(dfd);
	if (fd >= 0 && (fstat(fd, &st) < 0 || !kp_trusted_file(&st) || (st.st_mode & 077))) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Opens @file (NULL: the default under @o->root) into @rf: its directory trusted and locked,
 * its content read and recognised as kopolicy's (else left alone, @advice said). KP_EXIT_OK,
 * KP_EXIT_FINDINGS refused, KP_EXIT_ERROR; rules_file_close() in every case.
 */
static int rules_file_open(struct rules_file *rf, const struct kp_rules_opts *o, const char *file,
			   const char *advice)
{
	struct kp_err err = { 0 };
	char why[128];
	int r;

	memset(rf, 0, sizeof(*rf));
	rf->dfd = rf->dirfd = rf->lockfd = -1;
	if (!file) {
		rf->path = kp_root_path(o->root, KP_RULES_DEFAULT_FILE);
		if (!rf->path) {
			kp_cli_error(NULL, "out of memory");
			return KP_EXIT_ERROR;
		}
		file = rf->path;
	}
	rf->file = file;
	if (!strchr(file, '/')) {
		snprintf(rf->dir, sizeof(rf->dir), ".");
		rf->base = file;
	} else if (kp_trusted_split(file, rf->dir, sizeof(rf->dir), &rf->base) < 0) {
		kp_cli_error(file, "not a file name");
		return KP_EXIT_ERROR;
	}
	if (!strcmp(rf->base, ".") || !strcmp(rf->base, "..")) {
		kp_cli_error(file, "not a file name");
		return KP_EXIT_ERROR;
	}
	rf->dfd = kp_trusted_dir_open(rf->dir, false, &err);
	if (rf->dfd < 0) {
		kp_cli_error(file, "%s%s", err.msg,
			     kp_err_errnum(&err) == EPERM ? ": refused (an unsafe directory)" : "");
		return kp_err_errnum(&err) == EPERM ? KP_EXIT_FINDINGS : KP_EXIT_ERROR;
	}
	rf->dirfd = openat(rf->dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rf->dirfd < 0) {
		kp_cli_error(rf->dir, "cannot open the directory: %s", strerror(errno));
		return KP_EXIT_ERROR;
	}
	/* without a state directory of its own (a user's run, no /run to write): the directory */
	rf->lockfd = rules_lock(o->lock_dir);
	if (flock(rf->lockfd >= 0 ? rf->lockfd : rf->dirfd, LOCK_EX) < 0) {
		kp_cli_error(rf->dir, "cannot take the install rules' lock: %s", strerror(errno));
		return KP_EXIT_ERROR;
	}
	r = read_current(rf->dfd, file, rf->base, &rf->old, &rf->oldlen);
	if (r != 0)
		return r > 0 ? KP_EXIT_FINDINGS : KP_EXIT_ERROR;
	if (rf->old && !kp_rules_is_own(rf->old, rf->oldlen, &rf->lo, why, sizeof(why))) {
		kp_cli_error(file, "not written by kopolicy (%s): left alone; %s", why, advice);
		return KP_EXIT_FINDINGS;
	}
	if (!rf->old)
		memset(&rf->lo, 0, sizeof(rf->lo));
	return KP_EXIT_OK;
}

/* The softdep overrides' path beside the rules file of @rf, for messages, into @buf. */
static void softdeps_path(const struct rules_file *rf, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", rf->dir, KP_SOFTDEPS_BASE);
}

/*
 * The softdep overrides beside the rules file of @rf (hook-softdeps.c) read and known as
 * kopolicy's own: their bytes into *@old (NULL: absent). KP_EXIT_OK, KP_EXIT_FINDINGS
 * refused (not kopolicy's, unsafe; said), KP_EXIT_ERROR.
 */
static int softdeps_open(const struct rules_file *rf, char **old, size_t *len)
{
	char path[PATH_MAX + NAME_MAX + 2], why[128];
	int r;

	softdeps_path(rf, path, sizeof(path));
	r = read_current(rf->dfd, path, KP_SOFTDEPS_BASE, old, len);
	if (r != 0)
		return r > 0 ? KP_EXIT_FINDINGS : KP_EXIT_ERROR;
	if (*old && !kp_softdeps_is_own(*old, *len, why, sizeof(why))) {
		kp_cli_error(path, "not written by kopolicy (%s): left alone", why);
		free(*old);
		*old = NULL;
		return KP_EXIT_FINDINGS;
	}
	return KP_EXIT_OK;
}

/* What the softdep overrides were before softdeps_update() changed them. */
struct softdeps_prev {
	bool changed; /* they were written or removed */
	char *text;   /* their bytes before (malloc'ed), NULL: there was no file */
	size_t len;
};

/*
 * The softdep overrides of @g written beside the rules file of @rf, or removed when none is
 * needed, and @g's softdep fields read again when they changed (libkmod's answer with them);
 * what they were into @prev when they changed (softdeps_undo()). KP_EXIT_OK, KP_EXIT_FINDINGS
 * refused (left alone: those modules stay unjudged, their comments say), KP_EXIT_ERROR.
 */
static int softdeps_update(const struct rules_file *rf, const struct kp_rules_opts *o,
			   struct kp_gated *g, struct softdeps_prev *prev)
{
	char path[PATH_MAX + NAME_MAX + 2];
	char *old = NULL, *text = NULL;
	size_t oldlen = 0, len = 0, count = 0;
	struct kp_err err = { 0 };
	int rc;

	softdeps_path(rf, path, sizeof(path));
	rc = softdeps_open(rf, &old, &oldlen);
	if (rc != KP_EXIT_OK)
		return rc;
	rc = KP_EXIT_ERROR;
	if (kp_softdeps_render(g, &text, &len, &count) < 0)
		goto out;
	if ((!text && !old) || (text && old && len == oldlen && !memcmp(text, old, len))) {
		rc = KP_EXIT_OK;
		goto out;
	}
	if (text) {
		if (replace(rf->dfd, rf->dirfd, path, KP_SOFTDEPS_BASE, text, len) < 0)
			goto out;
		kp_escaped_fprintf(stdout, "kopolicy: %s: %s (%zu module%s)\n", path,
				   old ? "updated" : "written", count, count == 1 ? "" : "s");
	} else {
		if (unlinkat(rf->dfd, KP_SOFTDEPS_BASE, 0) < 0 && errno != ENOENT) {
			kp_cli_error(path, "cannot remove it: %s", strerror(errno));
			goto out;
		}
		kp_escaped_fprintf(stdout, "kopolicy: %s: removed (no module needs it)\n", path);
	}
	prev->changed = true;
	prev->text = old;
	prev->len = oldlen;
	old = NULL;
	/* libkmod's answer with the new overrides: which modules' lines modprobe now runs */
	if (kp_gated_softdeps(g, o->root, &err) < 0) {
		kp_cli_error(NULL, "%s", err.msg);
		goto out;
	}
	rc = KP_EXIT_OK;
out:
	free(old);
	free(text);
	return rc;
}

/*
 * The softdep overrides beside the rules file of @rf put back as @prev says they were, when the
 * rules that go with them could not be written: an override left without its module's new
 * install line (an old plain line, or none) would have modprobe load that module without its
 * soft dependencies. @prev's text freed.
 */
static void softdeps_undo(const struct rules_file *rf, struct softdeps_prev *prev)
{
	char path[PATH_MAX + NAME_MAX + 2];
	int r;

	if (!prev->changed)
		return;
	softdeps_path(rf, path, sizeof(path));
	if (prev->text)
		r = replace(rf->dfd, rf->dirfd, path, KP_SOFTDEPS_BASE, prev->text, prev->len);
	else
		r = unlinkat(rf->dfd, KP_SOFTDEPS_BASE, 0) < 0 && errno != ENOENT ? -1 : 0;
	if (r == 0)
		kp_cli_error(path, "%s (the rules were not written)",
			     prev->text ? "put back as it was" : "removed again");
	else
		kp_cli_error(path,
			     "cannot put it back as it was%s%s: modules it names may load without "
			     "their soft dependencies until an update succeeds",
			     prev->text ? "" : " (absent): ", prev->text ? "" : strerror(errno));
	free(prev->text);
	prev->text = NULL;
	prev->changed = false;
}

/* Removes the softdep overrides beside the rules file of @rf when they are kopolicy's. */
static int softdeps_retire(const struct rules_file *rf)
{
	char path[PATH_MAX + NAME_MAX + 2];
	char *old = NULL;
	size_t oldlen = 0;
	int rc;

	softdeps_path(rf, path, sizeof(path));
	rc = softdeps_open(rf, &old, &oldlen);
	if (rc != KP_EXIT_OK || !old)
		return rc;
	free(old);
	if (unlinkat(rf->dfd, KP_SOFTDEPS_BASE, 0) < 0 && errno != ENOENT) {
		kp_cli_error(path, "cannot remove it: %s", strerror(errno));
		return KP_EXIT_ERROR;
	}
	kp_escaped_fprintf(stdout,
			   "kopolicy: %s: removed (without kopolicy's install lines, its "
			   "overrides would drop those modules' soft dependencies)\n",
			   path);
	return KP_EXIT_OK;
}

/* The worse of two exit statuses: an error over a refusal over success. */
static int worse(int a, int b)
{
	return a == KP_EXIT_ERROR || b == KP_EXIT_ERROR ? KP_EXIT_ERROR : a > b ? a : b;
}

/* Standard output flushed: @rc, or KP_EXIT_ERROR having said why. */
static int flushed(int rc)
{
	if (fflush(stdout) != 0) {
		kp_cli_error(NULL, "write error on standard output");
		return KP_EXIT_ERROR;
	}
	return rc;
}

int kp_hook_update_rules(const struct kp_rules_opts *o, const char *file)
{
	char *config = NULL, *text = NULL;
	char self[PATH_MAX], why_self[PATH_MAX + 64];
	const char *on_error;
	struct rules_file rf;
	struct kp_gated g = { 0 };
	struct softdeps_prev prev = { 0 };
	bool collected = false;
	size_t len = 0;
	int rc, sd;

	rc = rules_file_open(&rf, o, file,
			     "remove or rename it to let kopolicy write its rules there");
	if (rc != KP_EXIT_OK)
		goto out;
	rc = KP_EXIT_ERROR;
	if (kp_rules_self(self, sizeof(self)) < 0)
		goto out;
	if (kp_rules_self_unsafe(o->root, self, why_self, sizeof(why_self))) {
		kp_cli_error(rf.file,
			     "refused: the lines would name %s, which %s: root would run it at "
			     "every load of a module they name (run the installed kopolicy, or "
			     "install this one where only root can write)",
			     self, why_self);
		rc = KP_EXIT_FINDINGS;
		goto out;
	}
	if (new_options(o, &rf.lo, &config, &on_error) < 0 || kp_rules_collect(o, &g) < 0)
		goto out;
	collected = true;
	/* the overrides first: the rules' comments say which lines modprobe runs with them */
	sd = softdeps_update(&rf, o, &g, &prev);
	if (sd == KP_EXIT_ERROR)
		goto out;
	if (kp_rules_render(&g, o->root, self, config, on_error, &text, &len) < 0)
		goto out;
	if (rf.old && len == rf.oldlen && !memcmp(text, rf.old, len)) {
		if (o->verbose) {
			kp_rules_say_softdeps(&g);
			kp_escaped_fprintf(stdout, "kopolicy: %s: up to date (%zu modules)\n",
					   rf.file, g.nnames);
		}
	} else {
		if (replace(rf.dfd, rf.dirfd, rf.file, rf.base, text, len) < 0)
			goto out;
		kp_rules_say_softdeps(&g); /* said when written: the file's comments keep it */
		kp_escaped_fprintf(stdout, "kopolicy: %s: %s (%zu module%s, %zu release%s)\n",
				   rf.file, rf.old ? "updated" : "written", g.nnames,
				   g.nnames == 1 ? "" : "s", g.nreleases,
				   g.nreleases == 1 ? "" : "s");
	}
	free(prev.text);
	prev = (struct softdeps_prev){ 0 };
	rc = flushed(worse(kp_rules_say_failed(&g) ? KP_EXIT_ERROR : KP_EXIT_OK, sd));
out:
	/* the rules not written: the overrides as they were, which their old lines go with */
	softdeps_undo(&rf, &prev);
	rules_file_close(&rf);
	if (collected)
		kp_gated_release(&g);
	free(text);
	free(config);
	return rc;
}

int kp_hook_retire_rules(const struct kp_rules_opts *o, const char *file)
{
	struct rules_file rf;
	char *text = NULL;
	size_t len = 0, dropped = 0;
	int rc;

	rc = rules_file_open(&rf, o, file,
			     "if its install lines run kopolicy, remove them: "
			     "modprobe cannot run them once kopolicy is removed");
	if (rc != KP_EXIT_OK)
		goto out;
	rc = KP_EXIT_ERROR;
	if (rf.old && kp_rules_retire(rf.old, rf.oldlen, &rf.lo, &text, &len, &dropped) < 0)
		goto out;
	if (!dropped) {
		if (o->verbose)
			kp_escaped_fprintf(stdout, "kopolicy: %s: %s\n", rf.file,
					   rf.old ? "no install line" : "absent");
	} else {
		if (replace(rf.dfd, rf.dirfd, rf.file, rf.base, text, len) < 0)
			goto out;
		kp_escaped_fprintf(stdout,
				   "kopolicy: %s: %zu install line%s dropped (%s kopolicy); the "
				   "file and its options are kept for a later "
				   "--update-install-rules\n",
				   rf.file, dropped, dropped == 1 ? "" : "s",
				   dropped == 1 ? "it runs" : "they run");
	}
	rc = flushed(softdeps_retire(&rf));
out:
	rules_file_close(&rf);
	free(text);
	return rc;
}
