// SPDX-License-Identifier: LGPL-2.1-or-later
/* The inputs a run read (inputs.h): the recording wrappers and the manifest they make. */
#include "inputs.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/io.h"
#include "util/util.h"

#define CONTENT_MAX 65536 /* a pseudo-file recorded by its bytes (/proc/cmdline) */
#define NEW_MARGIN  1	  /* seconds: a file changed this close to the run's start is too new */

enum kind {
	K_STATE = 1,  /* stat() gave a state: dev, ino, size, mtime, ctime, mode */
	K_ABSENT = 2, /* stat() failed with errno @err */
	K_CONTENT = 3 /* the bytes of a pseudo-file */
};

/* One input as recorded (its encoding: see put_entry()). */
struct entry {
	const char *path;
	unsigned char kind, follow;
	int err;
	uint64_t st[8];
	const unsigned char *content;
	size_t clen;
};

#define REC_HEAD 90 /* kind, follow, path length, err, 8 state fields, content length */

/*
 * The manifest is encoded as it is recorded, into one buffer (no structure or string per
 * entry: a whole tree's run records ~5,000); a table of (hash, offset) drops exact
 * duplicates (a file stat()ed, then opened in the same state).
 */
struct kp_inputs {
	pthread_mutex_t lock;
	unsigned char *buf; /* "KPMANIF1", count, then the entries */
	size_t len, cap;
	uint64_t n;
	uint64_t *tab; /* pairs: hash, offset + 1 (0: free slot) */
	size_t tcap;   /* slots, a power of two */
	struct timespec start;
	const char *uncacheable; /* why, or NULL */
};

/*
 * The one process-wide recorder: set by main() before threads start, read by the wrappers
 * (lib/ reads files from many places; a pointer through every API would be the alternative).
 */
static struct kp_inputs *recorder;

static struct kp_inputs *rec(void)
{
	return __atomic_load_n(&recorder, __ATOMIC_ACQUIRE);
}

struct kp_inputs *kp_inputs_new(void)
{
	struct kp_inputs *in = calloc(1, sizeof(*in));

	if (!in)
		return NULL;
	if (pthread_mutex_init(&in->lock, NULL) != 0) {
		free(in);
		return NULL;
	}
	clock_gettime(CLOCK_REALTIME, &in->start);
	return in;
}

void kp_inputs_free(struct kp_inputs *in)
{
	if (!in)
		return;
	free(in->buf);
	free(in->tab);
	pthread_mutex_destroy(&in->lock);
	free(in);
}

void kp_inputs_attach(struct kp_inputs *in)
{
	__atomic_store_n(&recorder, in, __ATOMIC_RELEASE);
}

static void mark(struct kp_inputs *in, const char *why)
{
	pthread_mutex_lock(&in->lock);
	if (!in->uncacheable)
		in->uncacheable = why;
	pthread_mutex_unlock(&in->lock);
}

void kp_in_uncacheable(const char *why)
{
	struct kp_inputs *in = rec();

	if (in)
		mark(in, why);
}

/* The kernel's own state, not files: never replayed. */
static bool is_kernel_fs(const char *path)
{
	return !strncmp(path, "/proc", 5) || !strncmp(path, "/sys", 4) || !strncmp(path, "/dev", 4);
}

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static size_t entry_len(const struct entry *e)
{
	return REC_HEAD + strlen(e->path) + e->clen;
}

static void put_entry(unsigned char *p, const struct entry *e)
{
	size_t pl = strlen(e->path);

	p[0] = e->kind;
	p[1] = e->follow;
	put64(p + 2, pl);
	put64(p + 10, (uint64_t)(int64_t)e->err);
	for (int k = 0; k < 8; k++)
		put64(p + 18 + 8 * k, e->st[k]);
	put64(p + 82, e->clen);
	memcpy(p + REC_HEAD, e->path, pl);
	if (e->clen)
		memcpy(p + REC_HEAD + pl, e->content, e->clen);
}

static uint64_t hash_bytes(const unsigned char *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325u;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3u;
	}
	return h ^ h >> 29;
}

/* The table slot of @h for the record @p (@len bytes): its index, taken or free. */
static size_t slot_of(const struct kp_inputs *in, uint64_t h, const unsigned char *p, size_t len)
{
	size_t i = (size_t)h & (in->tcap - 1);

	for (;; i = (i + 1) & (in->tcap - 1)) {
		uint64_t off = in->tab[2 * i + 1];

		if (!off)
			return i;
		if (in->tab[2 * i] == h && in->len - (off - 1) >= len &&
		    !memcmp(in->buf + off - 1, p, len) &&
		    REC_HEAD + kp_load64(in->buf + off - 1 + 2, false) +
				    kp_load64(in->buf + off - 1 + 82, false) ==
			    len)
			return i;
	}
}

/* Twice the slots; 0 or -1. */
static int grow_table(struct kp_inputs *in)
{
	size_t cap = in->tcap ? in->tcap * 2 : 1024;
	uint64_t *tab = calloc(cap, 2 * sizeof(*tab));
	uint64_t *old = in->tab;
	size_t ocap = in->tcap;

	if (!tab)
		return -1;
	in->tab = tab;
	in->tcap = cap;
	for (size_t i = 0; i < ocap; i++) {
		size_t j;

		if (!old[2 * i + 1])
			continue;
		for (j = (size_t)old[2 * i] & (cap - 1); tab[2 * j + 1]; j = (j + 1) & (cap - 1))
			;
		tab[2 * j] = old[2 * i];
		tab[2 * j + 1] = old[2 * i + 1];
	}
	free(old);
	return 0;
}

static bool too_new(const struct kp_inputs *in, const struct entry *e)
{
	/* nanoseconds since the epoch: a second before the run's start */
	int64_t edge = ((int64_t)in->start.tv_sec - NEW_MARGIN) * 1000000000 + in->start.tv_nsec;

	if (e->kind != K_STATE)
		return false;
	/* mtime can be set back by hand, ctime cannot: ctime says when the file last changed */
	return (int64_t)e->st[5] * 1000000000 + (int64_t)e->st[6] >= edge ||
	       (int64_t)e->st[3] * 1000000000 + (int64_t)e->st[4] >= edge;
}

/* Appends @e's encoding unless the very same entry is there already. */
static void add(struct kp_inputs *in, const struct entry *e)
{
	size_t len = entry_len(e), i;
	unsigned char small[REC_HEAD + 512], *p = len <= sizeof(small) ? small : malloc(len);
	uint64_t h;

	if (!p) {
		mark(in, "out of memory");
		return;
	}
	put_entry(p, e);
	h = hash_bytes(p, len);
	pthread_mutex_lock(&in->lock);
	if (too_new(in, e) && !in->uncacheable)
		in->uncacheable = "an input changed less than a second before the run";
	if ((in->n + 1) * 2 > in->tcap && grow_table(in) < 0)
		goto oom;
	i = slot_of(in, h, p, len);
	if (in->tab[2 * i + 1])
		goto out; /* recorded already */
	if (!in->len) {
		if (kp_grow(&in->buf, &in->cap, 16, 1) < 0)
			goto oom;
		memcpy(in->buf, "KPMANIF1", 8);
		in->len = 16;
	}
	if (kp_grow(&in->buf, &in->cap, in->len + len, 1) < 0)
		goto oom;
	memcpy(in->buf + in->len, p, len);
	in->tab[2 * i] = h;
	in->tab[2 * i + 1] = in->len + 1;
	in->len += len;
	in->n++;
	goto out;
oom:
	if (!in->uncacheable)
		in->uncacheable = "out of memory";
out:
	pthread_mutex_unlock(&in->lock);
	if (p != small)
		free(p);
}

/* Records the result of a stat() of @path: @r (0 or -1 with @errnum) and @st. */
static void note_stat(struct kp_inputs *in, const char *path, bool follow, int r, int errnum,
		      const struct stat *st)
{
	struct entry e = { .path = path, .follow = follow };

	if (is_kernel_fs(path)) {
		mark(in, "it reads the running kernel's /proc, /sys or /dev");
		return;
	}
	if (r == 0) {
		if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode) && !S_ISLNK(st->st_mode)) {
			mark(in, "an input is not a regular file");
			return;
		}
		e.kind = K_STATE;
		kp_file_state(st, e.st);
	} else {
		e.kind = K_ABSENT;
		e.err = errnum;
	}
	add(in, &e);
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
		mark(in, "fstat failed");
	else
		note_stat(in, path, true, 0, 0, &st);
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
		struct stat st;
		int r = stat(path, &st);

		/* absent, or there but unreadable: its state (a change of mode is a change) */
		note_stat(in, path, true, r, r < 0 ? errno : 0, &st);
	}
	errno = e;
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
		struct stat st;
		int r = stat(path, &st);

		note_stat(rec(), path, true, r, r < 0 ? errno : 0, &st);
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
		struct stat st;
		int r = stat(path, &st);

		note_stat(rec(), path, true, r, r < 0 ? errno : 0, &st);
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

/* Every entry of the directory @dir (its state too), each stat()ed as @prefix selects. */
static void note_dir(const char *dir, const char *prefix)
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
		kp_in_stat(p, &st);
		free(p);
	}
	closedir(d);
}

void kp_in_note_kmod(const char *moddir, const char *const *config)
{
	struct kp_inputs *in = rec();
	struct entry e = { .path = "/proc/cmdline", .kind = K_CONTENT, .follow = true };
	unsigned char buf[CONTENT_MAX];
	ssize_t n = -1;
	int fd;

	if (!in)
		return;
	if (moddir)
		note_dir(moddir, "modules.");
	for (size_t i = 0; config && config[i]; i++) {
		struct stat st;

		if (kp_in_stat(config[i], &st) == 0 && S_ISDIR(st.st_mode))
			note_dir(config[i], NULL);
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
	add(in, &e);
}

const unsigned char *kp_inputs_manifest(struct kp_inputs *in, size_t *len, const char **why)
{
	*len = 0;
	*why = in->uncacheable;
	if (*why)
		return NULL;
	if (!in->len) {
		if (kp_grow(&in->buf, &in->cap, 16, 1) < 0) {
			*why = "out of memory";
			return NULL;
		}
		memcpy(in->buf, "KPMANIF1", 8);
		in->len = 16;
	}
	put64(in->buf + 8, in->n);
	*len = in->len;
	return in->buf;
}

/* Walks @m: calls @fn on each decoded entry; the number of entries, or -1 when malformed. */
static long walk(const unsigned char *m, size_t len, bool (*fn)(const struct entry *e))
{
	char path[4096];
	uint64_t n;
	size_t off = 16;

	if (len < 16 || memcmp(m, "KPMANIF1", 8))
		return -1;
	n = kp_load64(m + 8, false);
	if (n > len / 90)
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		struct entry e = { .path = path };
		uint64_t pl, cl;

		if (len - off < 90)
			return -1;
		e.kind = m[off];
		e.follow = m[off + 1];
		pl = kp_load64(m + off + 2, false);
		e.err = (int)(int64_t)kp_load64(m + off + 10, false);
		for (int k = 0; k < 8; k++)
			e.st[k] = kp_load64(m + off + 18 + 8 * k, false);
		cl = kp_load64(m + off + 82, false);
		if (pl == 0 || pl >= sizeof(path) || cl > CONTENT_MAX || len - off - 90 < pl + cl ||
		    e.kind < K_STATE || e.kind > K_CONTENT || e.follow > 1)
			return -1;
		memcpy(path, m + off + 90, pl);
		path[pl] = '\0';
		if (memchr(path, '\0', pl))
			return -1;
		e.content = (unsigned char *)m + off + 90 + pl;
		e.clen = cl;
		if (fn && !fn(&e))
			return -1;
		off += 90 + pl + cl;
	}
	return off == len ? (long)n : -1;
}

/* The entry still holds. */
static bool holds(const struct entry *e)
{
	struct stat st;
	uint64_t v[8];
	int r;

	if (e->kind == K_CONTENT) {
		unsigned char buf[CONTENT_MAX];
		int fd = open(e->path, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? kp_pread_all(fd, buf, sizeof(buf), 0) : -1;

		if (fd >= 0)
			close(fd);
		return n >= 0 && (size_t)n == e->clen && !memcmp(buf, e->content, e->clen);
	}
	r = e->follow ? stat(e->path, &st) : lstat(e->path, &st);
	if (e->kind == K_ABSENT)
		return r < 0 && errno == e->err;
	if (r < 0)
		return false;
	kp_file_state(&st, v);
	return !memcmp(v, e->st, sizeof(v));
}

int kp_inputs_unchanged(const unsigned char *m, size_t len)
{
	return walk(m, len, holds) >= 0;
}

size_t kp_inputs_count(const unsigned char *m, size_t len)
{
	long n = walk(m, len, NULL);

	return n < 0 ? 0 : (size_t)n;
}
