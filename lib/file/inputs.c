// SPDX-License-Identifier: LGPL-2.1-or-later
/* The inputs a run read (inputs.h): the recording wrappers and the manifest they make. */
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

#include "util/content-hash.h"
#include "util/fs-trust.h"
#include "util/io.h"
#include "util/util.h"

#define CMP_CHUNK 4096 /* bytes of a spilled record read back at a time to compare it */
#define SUM_MAX	  ((uint64_t)16 << 20) /* bytes: a larger file is not summed (K_SUMMED) */
#define KEYED_MAX ((size_t)1 << 17)    /* module digests kept (kp_in_note_bytes()) */

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

static size_t entry_len(const struct entry *e)
{
	return REC_HEAD + strlen(e->path) + e->clen;
}

static void put_entry(unsigned char *p, const struct entry *e)
{
	size_t pl = strlen(e->path);

	p[0] = e->kind;
	p[1] = e->flags;
	kp_store64(p + 2, pl);
	kp_store64(p + 10, (uint64_t)(int64_t)e->err);
	for (int k = 0; k < 8; k++)
		kp_store64(p + 18 + 8 * k, e->st[k]);
	kp_store64(p + 82, e->clen);
	memcpy(p + REC_HEAD, e->path, pl);
	if (e->clen)
		memcpy(p + REC_HEAD + pl, e->content, e->clen);
}

/* A hash of a record, eight bytes at a time (only to find candidates: bytes are compared). */
static uint64_t hash_bytes(const unsigned char *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325u ^ len, w;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15u;
		h ^= h >> 32;
	}
	w = 0;
	memcpy(&w, p + i, len - i);
	h = (h ^ w) * 0x9e3779b97f4a7c15u;
	return h ^ h >> 29;
}

/* The slot of the state @v in @tab (@cap slots): its own, else the free one where it goes. */
size_t kp_inputs_keyed_slot(const struct keyed *tab, size_t cap, const uint64_t *v)
{
	size_t i = (size_t)hash_bytes((const unsigned char *)v, 8 * sizeof(*v)) & (cap - 1);

	while (tab[i].st[7] && memcmp(tab[i].st, v, sizeof(tab[i].st)))
		i = (i + 1) & (cap - 1);
	return i;
}

/* Twice the slots of the module digests (under @in->lock); 0 or -1. */
static int keyed_grow(struct kp_inputs *in)
{
	size_t cap = in->kcap ? in->kcap * 2 : 4096;
	struct keyed *tab = calloc(cap, sizeof(*tab));

	if (!tab)
		return -1;
	for (size_t i = 0; i < in->kcap; i++)
		if (in->keyed[i].st[7])
			tab[kp_inputs_keyed_slot(tab, cap, in->keyed[i].st)] = in->keyed[i];
	free(in->keyed);
	in->keyed = tab;
	in->kcap = cap;
	return 0;
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
	if (in->nkeyed >= KEYED_MAX || ((in->nkeyed + 1) * 4 > in->kcap * 3 && keyed_grow(in) < 0))
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

/*
 * 1 when the record at @pos of the records is the @len bytes at @p, 0 when not, -1 when
 * the spill file cannot be read. The first REC_HEAD bytes hold the lengths: equal bytes are
 * an equal length, so a record found whole where it is kept is the whole record.
 */
static int same_record(const struct kp_inputs *in, uint64_t pos, const unsigned char *p, size_t len)
{
	unsigned char chunk[CMP_CHUNK];

	if (pos >= in->spilled) {
		size_t o = (size_t)(pos - in->spilled);

		return o <= in->len && in->len - o >= len && !memcmp(in->buf + o, p, len);
	}
	if (in->spilled - pos < len)
		return 0;
	for (size_t done = 0; done < len;) {
		size_t n = len - done < sizeof(chunk) ? len - done : sizeof(chunk);

		if (kp_pread_all(in->spill, chunk, n, pos + done) != (ssize_t)n)
			return -1;
		if (memcmp(chunk, p + done, n))
			return 0;
		done += n;
	}
	return 1;
}

/*
 * The table slot for the record @p (@len bytes, hash fragment @frag): the one holding the
 * same record, else the free one where it goes; -1 when the spill file cannot be read. The
 * fragment picks the slot and tells most other records apart without reading them.
 */
static ssize_t slot_of(const struct kp_inputs *in, uint32_t frag, const unsigned char *p,
		       size_t len)
{
	size_t i = frag & (in->tcap - 1);

	for (;; i = (i + 1) & (in->tcap - 1)) {
		uint32_t off = in->tab[2 * i + 1];
		int r;

		if (!off)
			return (ssize_t)i;
		if (in->tab[2 * i] != frag)
			continue;
		r = same_record(in, off - 1, p, len);
		if (r < 0)
			return -1;
		if (r)
			return (ssize_t)i;
	}
}

/* Twice the slots; 0 or -1. */
static int grow_table(struct kp_inputs *in)
{
	size_t cap = in->tcap ? in->tcap * 2 : 1024;
	uint32_t *tab = calloc(cap, 2 * sizeof(*tab));
	uint32_t *old = in->tab;
	size_t ocap = in->tcap;

	if (!tab)
		return -1;
	for (size_t i = 0; i < ocap; i++) {
		size_t j;

		if (!old[2 * i + 1])
			continue;
		for (j = old[2 * i] & (cap - 1); tab[2 * j + 1]; j = (j + 1) & (cap - 1))
			;
		tab[2 * j] = old[2 * i];
		tab[2 * j + 1] = old[2 * i + 1];
	}
	free(old);
	in->tab = tab;
	in->tcap = cap;
	return 0;
}

static bool too_new(const struct kp_inputs *in, const struct entry *e)
{
	return e->kind != K_ABSENT && e->kind != K_CONTENT &&
	       kp_inputs_state_too_new(e->st, &in->start);
}

/* Writes the buffer's records to the spill file; 0 or -1. */
static int flush(struct kp_inputs *in)
{
	if (!in->len)
		return 0;
	if (kp_write_all(in->spill, in->buf, in->len) < 0)
		return -1;
	in->spilled += in->len;
	in->len = 0;
	return 0;
}

/*
 * Appends the record @p (@len bytes) after the others: into the buffer, written out first
 * when it is full (a record larger than the buffer goes to the spill file directly). 0, or -1
 * with the reason.
 */
static int append(struct kp_inputs *in, const unsigned char *p, size_t len, const char **why)
{
	if (!in->buf) {
		in->buf = malloc(in->bufmax);
		if (!in->buf) {
			*why = "out of memory";
			return -1;
		}
		in->cap = in->bufmax;
	}
	*why = "the inputs' temporary file could not be written";
	if (in->cap - in->len < len && flush(in) < 0)
		return -1;
	if (len > in->cap) {
		if (kp_write_all(in->spill, p, len) < 0)
			return -1;
		in->spilled += len;
		return 0;
	}
	memcpy(in->buf + in->len, p, len);
	in->len += len;
	return 0;
}

/* Appends @e's encoding unless the very same entry is there already. */
static void add(struct kp_inputs *in, const struct entry *e)
{
	size_t len = entry_len(e);
	unsigned char small[REC_HEAD + 512], *p = len <= sizeof(small) ? small : malloc(len);
	const char *why = "out of memory";
	uint64_t h, pos;
	uint32_t frag;
	ssize_t i;

	if (!p) {
		mark(in, why);
		return;
	}
	put_entry(p, e);
	h = hash_bytes(p, len);
	frag = (uint32_t)h ^ (uint32_t)(h >> 32);
	pthread_mutex_lock(&in->lock);
	if (too_new(in, e) && !in->uncacheable)
		in->uncacheable = "an input changed less than a second before the run";
	if (in->uncacheable)
		goto out; /* not stored: what is recorded no longer matters */
	if ((in->n + 1) * 4 > in->tcap * 3 && grow_table(in) < 0)
		goto fail;
	i = slot_of(in, frag, p, len);
	if (i < 0) {
		why = "the inputs' temporary file could not be read";
		goto fail;
	}
	if (in->tab[2 * i + 1])
		goto out; /* recorded already */
	pos = in->spilled + in->len;
	if (pos + len >= UINT32_MAX) {
		why = "too many inputs";
		goto fail;
	}
	if (append(in, p, len, &why) < 0)
		goto fail;
	in->tab[2 * i] = frag;
	in->tab[2 * i + 1] = (uint32_t)pos + 1;
	in->n++;
	goto out;
fail:
	in->uncacheable = why;
out:
	pthread_mutex_unlock(&in->lock);
	if (p != small)
		free(p);
}

/*
 * The class of the file system holding what @st describes (fs-trust.h): from the table of
 * file systems seen, else fstatfs(@fd) when it is open (>= 0), else statfs(@path); -1 when
 * that fails or @path changed meanwhile.
 */
static int fs_class(struct kp_inputs *in, const char *path, bool follow, int fd,
		    const struct stat *st)
{
	int c;

	pthread_mutex_lock(&in->lock);
	c = kp_fs_devs_find(&in->devs, (uint64_t)st->st_dev);
	pthread_mutex_unlock(&in->lock);
	if (c >= 0)
		return c;
	c = fd >= 0 ? kp_fs_class_of_fd(fd) : kp_fs_class_of_path(path, st, follow);
	if (c < 0)
		return -1;
	pthread_mutex_lock(&in->lock);
	kp_fs_devs_add(&in->devs, (uint64_t)st->st_dev, (enum kp_fs_class)c);
	pthread_mutex_unlock(&in->lock);
	return c;
}

/*
 * The class of the file system an absent @path would be on: its nearest ancestor that
 * exists, by the path's spelling ("x/../proc/y" asks "x/../proc", which exists only when x
 * does). -1 when none can be told.
 */
static int absent_class(struct kp_inputs *in, const char *path)
{
	char dir[4096];
	struct stat st;

	if (strlen(path) >= sizeof(dir))
		return -1;
	strcpy(dir, path);
	for (;;) {
		char up[4096];

		if (kp_fs_parent(dir, up, sizeof(up)) < 0)
			return -1;
		if (stat(up, &st) == 0)
			return fs_class(in, up, true, -1, &st);
		if (!strcmp(up, ".") || !strcmp(up, "/") || !strcmp(up, dir))
			return -1;
		strcpy(dir, up);
	}
}

/*
 * A module's or a kernel image's file name: the facts cache keys modules by their bytes, the
 * signature memo an image's certificates; hashing them again would cost a miss a pass over
 * the tree, or over an image a warm run does not read (not summed).
 */
static bool module_name(const char *path)
{
	static const char *const ext[] = { ".ko", ".ko.xz", ".ko.zst", ".ko.gz" };
	const char *base = strrchr(path, '/');
	size_t n = strlen(path);

	if (!strncmp(base ? base + 1 : path, "vmlinu", 6))
		return true;
	for (size_t i = 0; i < KP_ARRAY_SIZE(ext); i++) {
		size_t l = strlen(ext[i]);

		if (n >= l && !strcmp(path + n - l, ext[i]))
			return true;
	}
	return false;
}

/* The digest remembered for the trusted state @v into @h: true, else false. */
static bool memo_find(struct kp_inputs *in, const uint64_t *v, unsigned char *h)
{
	bool found = false;

	pthread_mutex_lock(&in->lock);
	for (unsigned int i = 0; i < in->nmemo && !found; i++) {
		if (!memcmp(in->memo[i].st, v, sizeof(in->memo[i].st))) {
			memcpy(h, in->memo[i].h, KP_CONTENT_HASH_LEN);
			found = true;
		}
	}
	pthread_mutex_unlock(&in->lock);
	return found;
}

static void memo_add(struct kp_inputs *in, const uint64_t *v, const unsigned char *h)
{
	unsigned int i;

	pthread_mutex_lock(&in->lock);
	i = in->memo_next;
	in->memo_next = (i + 1) % MEMO;
	if (in->nmemo < MEMO)
		in->nmemo++;
	memcpy(in->memo[i].st, v, sizeof(in->memo[i].st));
	memcpy(in->memo[i].h, h, KP_CONTENT_HASH_LEN);
	pthread_mutex_unlock(&in->lock);
}

/*
 * The digest that lets the trusted state @st of @path still hold when only the state changed
 * (K_SUMMED, K_LISTED) into @h: of a regular file read whole (small, not a module) or of a
 * directory's listing, on a file system whose stat() is the kernel's. @fd: @path as the run
 * opened it, else -1 (opened here, when still in that state). 0, or -1 when there is none
 * (the state alone decides).
 */
static int state_digest(struct kp_inputs *in, const char *path, bool follow, const struct stat *st,
			int fd, enum kp_fs_class cls, unsigned char h[KP_CONTENT_HASH_LEN])
{
	uint64_t v[8];
	int own = -1, r;

	if (cls != KP_FS_LOCAL)
		return -1;
	if (S_ISREG(st->st_mode)) {
		if ((uint64_t)st->st_size > SUM_MAX || module_name(path) ||
		    !kp_state_trusted(st, cls, in->euid))
			return -1;
	} else if (!S_ISDIR(st->st_mode)) {
		return -1;
	}
	kp_file_state(st, v);
	/* a trusted state names its bytes (and a directory's, its names): one digest */
	if (memo_find(in, v, h))
		return 0;
	if (fd < 0) {
		own = kp_inputs_open_same(path, follow, v);
		if (own < 0)
			return -1;
		fd = own;
	}
	r = kp_inputs_digest_fd(fd, st, v, h);
	if (own >= 0)
		close(own);
	if (r == 0)
		memo_add(in, v, h);
	return r;
}

/*
 * Records the result of a stat() of @path: @r (0 or -1 with @errnum) and @st; @fd is the
 * file when it was opened (else -1). Anything on a file system of the running kernel
 * (procfs, sysfs, /dev, ...) makes the run uncacheable whatever the path's spelling; on a
 * file system whose stat() is not the kernel's, only regular files are recorded. A regular
 * file opened in a state that does not name its bytes (fs-trust.h) is recorded with the
 * SHA-256 of its bytes, hashed here from @fd.
 */
static void note(struct kp_inputs *in, const char *path, bool follow, int r, int errnum,
		 const struct stat *st, int fd)
{
	unsigned char h[KP_CONTENT_HASH_LEN];
	struct entry e = { .path = path, .flags = follow ? F_FOLLOW : 0 };
	bool given_up;
	int cls;

	pthread_mutex_lock(&in->lock);
	given_up = in->uncacheable != NULL;
	pthread_mutex_unlock(&in->lock);
	if (given_up)
		return; /* not stored: no statfs() or hashing for it */
	cls = r == 0 ? fs_class(in, path, follow, fd, st) : absent_class(in, path);
	if (cls < 0) {
		mark(in, "an input's file system could not be told (statfs failed or it moved)");
		return;
	}
	if (cls == KP_FS_KERNEL) {
		mark(in, "it reads the running kernel's state (procfs, sysfs, /dev, ...)");
		return;
	}
	if (cls == KP_FS_LOCAL)
		e.flags |= F_LOCAL;
	if (r != 0) {
		if (cls != KP_FS_LOCAL) {
			mark(in, "a path is looked up on a file system whose stat() is not the "
				 "kernel's (FUSE, NFS, ...)");
			return;
		}
		e.kind = K_ABSENT;
		e.err = errnum;
		add(in, &e);
		return;
	}
	if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode) && !S_ISLNK(st->st_mode)) {
		mark(in, "an input is not a regular file");
		return;
	}
	if (!S_ISREG(st->st_mode) && cls != KP_FS_LOCAL) {
		mark(in, "a directory or link is on a file system whose stat() is not the "
			 "kernel's (FUSE, NFS, ...)");
		return;
	}
	e.kind = K_STATE;
	kp_file_state(st, e.st);
	if (S_ISREG(st->st_mode) && fd >= 0 &&
	    !kp_state_trusted(st, (enum kp_fs_class)cls, in->euid)) {
		if (kp_content_hash_fd(fd, (uint64_t)st->st_size, h) < 0) {
			mark(in, "an input whose state is not trusted could not be hashed");
			return;
		}
		e.kind = K_HASHED;
		e.content = h;
		e.clen = KP_CONTENT_HASH_LEN;
	} else if (state_digest(in, path, follow, st, fd, (enum kp_fs_class)cls, h) == 0) {
		e.kind = S_ISDIR(st->st_mode) ? K_LISTED : K_SUMMED;
		e.content = h;
		e.clen = KP_CONTENT_HASH_LEN;
	}
	add(in, &e);
}

/* Records the result of a stat() of @path: @r (0 or -1 with @errnum) and @st. */
static void note_stat(struct kp_inputs *in, const char *path, bool follow, int r, int errnum,
		      const struct stat *st)
{
	note(in, path, follow, r, errnum, st, -1);
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
		note(in, path, true, 0, 0, &st, fd);
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
			mark(in, "fstat failed");
		errno = e;
		return -1;
	}
	if (!in)
		return fd;
	if (fd >= 0) {
		note(in, path, true, 0, 0, st, fd);
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
	cls = fs_class(in, path, true, -1, st);
	if (cls < 0 || kp_state_trusted(st, (enum kp_fs_class)cls, in->euid))
		return; /* unknown: the stat() recorded it already, and marked the run */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		mark(in, "an input whose state is not trusted could not be hashed");
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
	add(in, &e);
}
