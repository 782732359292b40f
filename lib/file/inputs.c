// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The inputs a run read (inputs.h): the recorder and the recording wrappers (what a look-up
 * says: inputs-note.c; the records it makes: inputs-record.c).
 */
#include "inputs.h"
#include "inputs-internal.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "util/content-hash.h"
#include "util/fs-trust.h"
#include "util/io.h"
#include "util/util.h"

#define KEYED_MAX ((size_t)1 << 17) /* module digests kept (kp_in_note_bytes()) */

/*
 * The one process-wide recorder: set by main() before threads start, read by the wrappers
 * (lib/ reads files from many places; a pointer through every API would be the alternative).
 */
static struct kp_inputs *recorder;

static struct kp_inputs *rec(void)
{
	return __atomic_load_n(&recorder, __ATOMIC_ACQUIRE);
}

struct kp_inputs *kp_inputs_new(int spill_fd, size_t buf_size)
{
	struct kp_inputs *in = calloc(1, sizeof(*in));

	if (!in)
		return NULL;
	if (pthread_mutex_init(&in->lock, NULL) != 0) {
		free(in);
		return NULL;
	}
	in->spill = spill_fd;
	in->bufmax = buf_size ? buf_size : KP_INPUTS_BUF;
	in->euid = geteuid();
	kp_fs_devs_init(&in->devs);
	clock_gettime(CLOCK_REALTIME, &in->start);
	return in;
}

void kp_inputs_free(struct kp_inputs *in)
{
	if (!in)
		return;
	free(in->buf);
	free(in->tab);
	free(in->keyed);
	EVP_MD_free(in->md);
	pthread_mutex_destroy(&in->lock);
	free(in);
}

void kp_inputs_attach(struct kp_inputs *in)
{
	__atomic_store_n(&recorder, in, __ATOMIC_RELEASE);
}

void kp_in_uncacheable(const char *why)
{
	struct kp_inputs *in = rec();

	if (in)
		kp_inputs_mark(in, why);
}

void kp_in_note_bytes(const uint64_t *st, const unsigned char *sha256)
{
	struct kp_inputs *in = rec();
	size_t i;

	/* a regular file's state only (a free slot is a zero mode) */
	if (!in || !S_ISREG((mode_t)st[7]))
		return;
	pthread_mutex_lock(&in->lock);
	/* out of memory or past the bound: recorded by its state alone, as before */
	if (in->nkeyed >= KEYED_MAX ||
	    ((in->nkeyed + 1) * 4 > in->kcap * 3 && kp_inputs_keyed_grow(in) < 0))
		goto out;
	i = kp_inputs_keyed_slot(in->keyed, in->kcap, st);
	if (!in->keyed[i].st[7]) {
		memcpy(in->keyed[i].st, st, sizeof(in->keyed[i].st));
		in->nkeyed++;
	}
	memcpy(in->keyed[i].h, sha256, KP_CONTENT_HASH_LEN);
out:
	pthread_mutex_unlock(&in->lock);
}

/* Records the result of a stat() of @path: @r (0 or -1 with @errnum) and @st. */
static void note_stat(struct kp_inputs *in, const char *path, bool follow, int r, int errnum,
		      const struct stat *st)
{
	kp_inputs_note(in, path, follow, r, errnum, st, -1);
}

int kp_in_stat(const char *path, struct stat *st)
{
	struct kp_inputs *in = rec();
	int r = stat(path, st);

	if (in) {
		int e = errno;

		note_stat(in, path, true, r, e, st);
		errno = e;
	}
	return r;
}

int kp_in_lstat(const char *path, struct stat *st)
{
	struct kp_inputs *in = rec();
	int r = lstat(path, st);

	if (in) {
		int e = errno;

		note_stat(in, path, false, r, e, st);
		errno = e;
	}
	return r;
}

void kp_in_note_fd(const char *path, int fd)
{
	struct kp_inputs *in = rec();
	struct stat st;

	if (!in)
		return;
	if (fstat(fd, &st) < 0)
		kp_inputs_mark(in, "fstat failed");
	else
		kp_inputs_note(in, path, true, 0, 0, &st, fd);
}

/* @path could not be opened: absent, or there but unreadable: its state (a mode change is a
 * change). */
static void note_unopened(struct kp_inputs *in, const char *path)
{
	struct stat st;
	int r;

	/* too many open files, no memory: another run can open it (never stored) */
	kp_env_failure_note(errno);
	r = stat(path, &st);

	note_stat(in, path, true, r, r < 0 ? errno : 0, &st);
}

DIR *kp_in_opendir(const char *path)
{
	struct kp_inputs *in = rec();
	DIR *d = opendir(path);
	int e = errno;

	if (!in)
		return d;
	if (d) {
		kp_in_note_fd(path, dirfd(d));
	} else {
		note_unopened(in, path);
	}
	errno = e;
	return d;
}

DIR *kp_in_fdopendir(const char *path, int fd)
{
	struct kp_inputs *in = rec();
	DIR *d;
	int e;

	if (fd < 0) {
		e = errno;
		if (in)
			note_unopened(in, path);
		errno = e;
		return NULL;
	}
	if (in)
		kp_in_note_fd(path, fd);
	d = fdopendir(fd);
	if (!d) {
		e = errno;
		close(fd);
		errno = e;
	}
	return d;
}

int kp_in_open(const char *path, int flags)
{
	int fd = open(path, flags);
	int e = errno;

	if (!rec())
		return fd;
	if (fd >= 0) {
		kp_in_note_fd(path, fd);
	} else {
		note_unopened(rec(), path);
	}
	errno = e;
	return fd;
}

int kp_in_open_stat(const char *path, int flags, struct stat *st)
{
	struct kp_inputs *in = rec();
	int fd = open(path, flags);
	int e = errno;

	if (fd >= 0 && fstat(fd, st) < 0) {
		e = errno;
		close(fd);
		if (in)
			kp_inputs_mark(in, "fstat failed");
		errno = e;
		return -1;
	}
	if (!in)
		return fd;
	if (fd >= 0) {
		kp_inputs_note(in, path, true, 0, 0, st, fd);
	} else {
		note_unopened(in, path);
	}
	errno = e;
	return fd;
}

FILE *kp_in_fopen(const char *path, const char *mode)
{
	FILE *f = fopen(path, mode);
	int e = errno;

	if (!rec())
		return f;
	if (f) {
		kp_in_note_fd(path, fileno(f));
	} else {
		note_unopened(rec(), path);
	}
	errno = e;
	return f;
}

ssize_t kp_in_readlink(const char *path, char *buf, size_t len)
{
	ssize_t n = readlink(path, buf, len);
	int e = errno;

	if (rec()) {
		struct stat st;

		kp_in_lstat(path, &st);
	}
	errno = e;
	return n;
}

/*
 * A file another library reads (libkmod), stat()ed as @st: when its state does not name its
 * bytes, it is opened to record their SHA-256 too.
 */
static void note_read_elsewhere(struct kp_inputs *in, const char *path, const struct stat *st)
{
	int cls, fd;

	if (!S_ISREG(st->st_mode))
		return;
	cls = kp_inputs_fs_class(in, path, true, -1, st);
	if (cls < 0 || kp_state_trusted(st, (enum kp_fs_class)cls, in->euid))
		return; /* unknown: the stat() recorded it already, and marked the run */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		kp_inputs_mark(in, "an input whose state is not trusted could not be hashed");
		return;
	}
	kp_in_note_fd(path, fd);
	close(fd);
}

/*
 * Every entry of the directory @dir (its state too), each stat()ed as @prefix selects (and
 * hashed when its state is not trusted: libkmod reads them).
 */
static void note_dir(struct kp_inputs *in, const char *dir, const char *prefix)
{
	size_t plen = prefix ? strlen(prefix) : 0;
	struct dirent *de;
	DIR *d = kp_in_opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		char *p;
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    (plen && strncmp(de->d_name, prefix, plen)))
			continue;
		if (asprintf(&p, "%s/%s", dir, de->d_name) < 0) {
			kp_in_uncacheable("out of memory");
			continue;
		}
		if (kp_in_stat(p, &st) == 0)
			note_read_elsewhere(in, p, &st);
		free(p);
	}
	closedir(d);
}

void kp_in_note_kmod(const char *moddir, const char *const *config)
{
	struct kp_inputs *in = rec();
	struct entry e = { .path = "/proc/cmdline", .kind = K_CONTENT, .flags = F_FOLLOW };
	unsigned char buf[CONTENT_MAX];
	ssize_t n = -1;
	int fd;

	if (!in)
		return;
	if (moddir)
		note_dir(in, moddir, "modules.");
	for (size_t i = 0; config && config[i]; i++) {
		struct stat st;

		if (kp_in_stat(config[i], &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode))
			note_dir(in, config[i], NULL);
		else
			note_read_elsewhere(in, config[i], &st);
	}
	/* libkmod parses the kernel command line's modprobe options (constant per boot) */
	fd = open("/proc/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = kp_pread_all(fd, buf, sizeof(buf), 0);
		close(fd);
	}
	if (n < 0 || (size_t)n == sizeof(buf)) {
		e.kind = K_ABSENT;
		e.err = n < 0 ? ENOENT : E2BIG;
	} else {
		e.content = buf;
		e.clen = (size_t)n;
	}
	kp_inputs_add(in, &e);
}
