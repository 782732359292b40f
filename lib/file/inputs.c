// SPDX-License-Identifier: LGPL-2.1-or-later
/* The inputs a run read (inputs.h): the recording wrappers and the manifest they make. */
#include "inputs.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <openssl/evp.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/content-hash.h"
#include "util/fs-trust.h"
#include "util/io.h"
#include "util/util.h"

#define CONTENT_MAX  65536 /* a pseudo-file recorded by its bytes (/proc/cmdline) */
#define NEW_MARGIN   1	   /* seconds: a file changed this close to the run's start is too new */
#define CMP_CHUNK    4096  /* bytes of a spilled record read back at a time to compare it */
#define STREAM_CHUNK 16384 /* bytes of the spill file read back at a time to store it */
#define SUM_MAX	     ((uint64_t)16 << 20) /* bytes: a larger file is not summed (K_SUMMED) */
#define MEMO	     64 /* digests remembered by state: a file stat()ed, then opened */
#define MAGIC	     "KPMANIF4"
#define KEYED_MAX    ((size_t)1 << 17) /* module digests kept (kp_in_note_bytes()) */

enum kind {
	K_STATE = 1,   /* stat() gave a state: dev, ino, size, mtime, ctime, mode */
	K_ABSENT = 2,  /* stat() failed with errno @err */
	K_CONTENT = 3, /* the bytes of a pseudo-file */
	K_HASHED = 4,  /* a state and the SHA-256 of the file's bytes (a state not trusted) */
	/*
	 * A trusted state and the SHA-256 of the regular file's bytes: the state decides,
	 * and when it changed (a file rewritten with the same bytes) the bytes do.
	 */
	K_SUMMED = 5,
	/*
	 * A directory's state and the SHA-256 of its entries' sorted names and types: the
	 * state decides, and when it changed (files renamed over others) the listing does.
	 */
	K_LISTED = 6,
	/*
	 * A module's trusted state and the SHA-256 of its bytes the facts cache keyed its
	 * facts by (kp_in_note_bytes()): the state decides, and when it changed (touched,
	 * reinstalled with the same bytes) the bytes do, within a replay's budget.
	 */
	K_KEYED = 7
};

/* An entry's flags (the byte after its kind). */
#define F_FOLLOW 1 /* stat(), not lstat() */
#define F_LOCAL	 2 /* on a file system whose stat() the kernel keeps (fs-trust.h) */

/* One input as recorded (its encoding: see put_entry()). */
struct entry {
	const char *path;
	const unsigned char *rec; /* the record in a manifest being checked (walk()) */
	unsigned char kind, flags;
	int err;
	uint64_t st[8];
	const unsigned char *content;
	size_t clen;
};

#define REC_HEAD 90 /* kind, flags, path length, err, 8 state fields, content length */

/* A module's state and the SHA-256 of its bytes (kp_in_note_bytes()). */
struct keyed {
	uint64_t st[8];
	unsigned char h[KP_CONTENT_HASH_LEN];
};

/*
 * The manifest is encoded as it is recorded (no structure or string per entry: a whole
 * tree's run records ~5,000): into a buffer of a fixed size that is written out to the
 * spill file whenever the next record does not fit, so the records' memory does not grow
 * with the number of inputs. A table of (hash, offset) drops exact duplicates (a file
 * stat()ed, then opened in the same state); a hash that matches is only a candidate, the
 * record's bytes are compared, in the buffer or read back from the spill file.
 */
struct kp_inputs {
	pthread_mutex_t lock;
	int spill;	    /* the file full buffers are written to, or -1 (the buffer grows) */
	uint64_t spilled;   /* bytes of records in it: the first ones, whole */
	unsigned char *buf; /* the records after those, whole */
	size_t len, cap;
	size_t bufmax; /* the buffer's size when there is a spill file */
	uint64_t n;    /* records */
	uint32_t *tab; /* pairs: 32 bits of the hash, offset + 1 in the records (0: free slot) */
	size_t tcap;   /* slots, a power of two, at most 3/4 taken */
	struct timespec start;
	const char *uncacheable; /* why, or NULL */
	uid_t euid;		 /* whose files' states are trusted (besides root's) */
	struct kp_fs_devs devs;	 /* the file systems seen (under @lock) */
	/* the last digests of trusted states (under @lock): one state, one digest */
	struct {
		uint64_t st[8];
		unsigned char h[KP_CONTENT_HASH_LEN];
	} memo[MEMO];
	unsigned int nmemo, memo_next;
	/* module digests by state (under @lock): open addressing, a free slot's mode is 0 */
	struct keyed *keyed;
	size_t nkeyed, kcap;
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
static size_t keyed_slot(const struct keyed *tab, size_t cap, const uint64_t *v)
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
			tab[keyed_slot(tab, cap, in->keyed[i].st)] = in->keyed[i];
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
	i = keyed_slot(in->keyed, in->kcap, st);
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

/* The state @st (kp_file_state()) changed less than NEW_MARGIN before @start. */
static bool state_too_new(const uint64_t *st, const struct timespec *start)
{
	/* nanoseconds since the epoch: a second before the run's start */
	int64_t edge = ((int64_t)start->tv_sec - NEW_MARGIN) * 1000000000 + start->tv_nsec;

	/* mtime can be set back by hand, ctime cannot: ctime says when the file last changed */
	return (int64_t)st[5] * 1000000000 + (int64_t)st[6] >= edge ||
	       (int64_t)st[3] * 1000000000 + (int64_t)st[4] >= edge;
}

static bool too_new(const struct kp_inputs *in, const struct entry *e)
{
	return e->kind != K_ABSENT && e->kind != K_CONTENT && state_too_new(e->st, &in->start);
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

static int cmp_listed(const void *a, const void *b)
{
	/* the type byte first, then the name */
	return strcmp(*(char *const *)a + 1, *(char *const *)b + 1);
}

/*
 * The SHA-256 of the directory @dfd's entries (besides "." and ".."), sorted by name: each
 * its type (DT_*, lstat()ed when the file system does not tell) and its name with its
 * terminating NUL. 0 or -1. @dfd itself is not moved (the listing reads another open).
 */
static int listing_digest(int dfd, unsigned char h[KP_CONTENT_HASH_LEN])
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	EVP_MD_CTX *ctx = NULL;
	char **v = NULL;
	size_t n = 0, cap = 0;
	unsigned int hl = KP_CONTENT_HASH_LEN;
	struct dirent *de;
	int r = -1;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while ((errno = 0, de = readdir(d))) {
		unsigned char type = de->d_type;
		size_t l = strlen(de->d_name);
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (type == DT_UNKNOWN) {
			if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				goto out;
			type = (unsigned char)IFTODT(st.st_mode);
		}
		if (kp_grow((void **)&v, &cap, n + 1, sizeof(*v)) < 0 || !(v[n] = malloc(l + 2)))
			goto out;
		v[n][0] = (char)type;
		memcpy(v[n] + 1, de->d_name, l + 1);
		n++;
	}
	if (errno)
		goto out;
	if (n)
		qsort(v, n, sizeof(*v), cmp_listed);
	ctx = EVP_MD_CTX_new();
	if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (EVP_DigestUpdate(ctx, v[i], strlen(v[i] + 1) + 2) != 1)
			goto out;
	if (EVP_DigestFinal_ex(ctx, h, &hl) == 1 && hl == KP_CONTENT_HASH_LEN)
		r = 0;
out:
	EVP_MD_CTX_free(ctx);
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	closedir(d);
	return r;
}

/*
 * The digest of what @fd (open on a file that fstat() says is in the state @v) holds into
 * @h: its bytes (a regular file), its listing (a directory); then its state checked again
 * (changed while read: -1). 0 or -1.
 */
static int digest_fd(int fd, const struct stat *st, const uint64_t *v,
		     unsigned char h[KP_CONTENT_HASH_LEN])
{
	struct stat now;
	uint64_t w[8];
	int r = S_ISDIR(st->st_mode) ? listing_digest(fd, h)
				     : kp_content_hash_fd(fd, (uint64_t)st->st_size, h);

	if (r < 0 || fstat(fd, &now) < 0)
		return -1;
	kp_file_state(&now, w);
	return memcmp(v, w, sizeof(w)) ? -1 : 0;
}

/*
 * @path (stat()ed, or lstat()ed unless @follow) opened again, when it still is the file in
 * the state @v: the descriptor, else -1.
 */
static int open_same(const char *path, bool follow, const uint64_t *v)
{
	int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
	struct stat st;
	uint64_t w[8];
	int fd;

	/* O_NONBLOCK: what replaced the file may be a FIFO */
	fd = open(path, flags | (follow ? 0 : O_NOFOLLOW));
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0) {
		kp_file_state(&st, w);
		if (!memcmp(v, w, sizeof(w)))
			return fd;
	}
	close(fd);
	return -1;
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
		own = open_same(path, follow, v);
		if (own < 0)
			return -1;
		fd = own;
	}
	r = digest_fd(fd, st, v, h);
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

/*
 * The digested records among the @len bytes of whole records at @p (K_HASHED, K_SUMMED,
 * K_LISTED) are still in their recorded states: their digests are of what the run read. The
 * bytes of whole records scanned (a record cut at the end is left), -1 when one changed.
 */
static long scan_digested(const unsigned char *p, size_t len)
{
	char path[4096];
	size_t off = 0;

	while (len - off >= REC_HEAD) {
		uint64_t pl = kp_load64(p + off + 2, false), cl = kp_load64(p + off + 82, false);
		unsigned char kind = p[off];
		struct stat st;
		uint64_t v[8];
		int r;

		if (pl > len - off - REC_HEAD || cl > len - off - REC_HEAD - pl)
			break;
		if (kind >= K_HASHED) {
			/* a path this long is refused at the replay (walk()) */
			if (pl >= sizeof(path))
				return -1;
			memcpy(path, p + off + REC_HEAD, pl);
			path[pl] = '\0';
			r = (p[off + 1] & F_FOLLOW) ? stat(path, &st) : lstat(path, &st);
			if (r < 0)
				return -1;
			kp_file_state(&st, v);
			for (int k = 0; k < 8; k++)
				if (v[k] != kp_load64(p + off + 18 + 8 * k, false))
					return -1;
		}
		off += REC_HEAD + pl + cl;
	}
	return (long)off;
}

/*
 * Hands the records, spilled then buffered, to @fn in whole records: @fn returns the bytes
 * of whole records it took (a record cut at the end is given again with what follows), <= 0
 * to stop. 0 when every record was taken, else -1; *@why is set here only when the spilled
 * records could not be read (no memory, a read error), the caller's otherwise.
 */
static int walk_records(const struct kp_inputs *in,
			long (*fn)(const unsigned char *p, size_t len, void *arg), void *arg,
			const char **why)
{
	/* the largest record: a path and a pseudo-file's bytes */
	size_t cap = REC_HEAD + 4096 + CONTENT_MAX;
	unsigned char *chunk = NULL;
	long used;
	int r = -1;

	if (in->spilled) {
		chunk = malloc(cap);
		if (!chunk) {
			*why = "out of memory";
			return -1;
		}
	}
	for (uint64_t off = 0; off < in->spilled; off += (uint64_t)used) {
		size_t n = in->spilled - off < cap ? (size_t)(in->spilled - off) : cap;

		if (kp_pread_all(in->spill, chunk, n, off) != (ssize_t)n) {
			*why = "the inputs' temporary file could not be read";
			goto out;
		}
		used = fn(chunk, n, arg);
		if (used <= 0) /* a record longer than any recorded: never, unless corrupted */
			goto out;
	}
	if (in->len && fn(in->buf, in->len, arg) != (long)in->len)
		goto out;
	r = 0;
out:
	free(chunk);
	return r;
}

static long scan_digested_fn(const unsigned char *p, size_t len, void *arg)
{
	(void)arg;
	return scan_digested(p, len);
}

/*
 * Every digested record still in its state at the end of the run (a file or directory
 * changed after it was digested: what the run read may not be what was digested, and a
 * replay that compares digests would not see it). 0 or -1 with @why.
 */
static int digests_hold(struct kp_inputs *in, const char **why)
{
	*why = "an input changed during the run";
	return walk_records(in, scan_digested_fn, NULL, why);
}

/*
 * Puts the whole records among the @len bytes at @p to @put (under @in->lock), each K_STATE
 * record of a regular file on a local file system whose state has a module digest
 * (kp_in_note_bytes()) as a K_KEYED one with it; adds the bytes put to *@out. The bytes of
 * whole records taken (a record cut at the end is left to the next call), -1 when @put
 * failed.
 */
static long put_keyed(const struct kp_inputs *in, const unsigned char *p, size_t len,
		      kp_inputs_put put, void *arg, uint64_t *out)
{
	size_t off = 0, run = 0; /* the unchanged records from @run to @off: put at once */

	while (len - off >= REC_HEAD) {
		uint64_t pl = kp_load64(p + off + 2, false), cl = kp_load64(p + off + 82, false);
		unsigned char h[REC_HEAD];
		uint64_t v[8];
		size_t i;

		if (pl > len - off - REC_HEAD || cl > len - off - REC_HEAD - pl)
			break;
		if (p[off] != K_STATE || !(p[off + 1] & F_LOCAL) || cl) {
			off += REC_HEAD + pl + cl;
			continue;
		}
		for (int k = 0; k < 8; k++)
			v[k] = kp_load64(p + off + 18 + 8 * k, false);
		if (!S_ISREG((mode_t)v[7]) ||
		    !in->keyed[i = keyed_slot(in->keyed, in->kcap, v)].st[7]) {
			off += REC_HEAD + pl;
			continue;
		}
		memcpy(h, p + off, REC_HEAD);
		h[0] = K_KEYED;
		kp_store64(h + 82, KP_CONTENT_HASH_LEN);
		if ((off > run && put(arg, p + run, off - run) < 0) || put(arg, h, REC_HEAD) < 0 ||
		    put(arg, p + off + REC_HEAD, (size_t)pl) < 0 ||
		    put(arg, in->keyed[i].h, KP_CONTENT_HASH_LEN) < 0)
			return -1;
		*out += off - run + REC_HEAD + pl + KP_CONTENT_HASH_LEN;
		off += REC_HEAD + pl;
		run = off;
	}
	if (off > run && put(arg, p + run, off - run) < 0)
		return -1;
	*out += off - run;
	return (long)off;
}

struct keyed_put {
	const struct kp_inputs *in;
	kp_inputs_put put;
	void *arg;
	uint64_t *body;
};

static long put_keyed_fn(const unsigned char *p, size_t len, void *arg)
{
	const struct keyed_put *k = arg;

	return put_keyed(k->in, p, len, k->put, k->arg, k->body);
}

/*
 * The records, spilled then buffered, to @put with the module digests put in
 * (put_keyed()); the bytes put in *@body. 0 or -1 with @why.
 */
static int stream_keyed(const struct kp_inputs *in, kp_inputs_put put, void *arg, uint64_t *body,
			const char **why)
{
	struct keyed_put k = { in, put, arg, body };

	*body = 0;
	*why = "cannot write the entry";
	return walk_records(in, put_keyed_fn, &k, why);
}

int kp_inputs_stream(struct kp_inputs *in, kp_inputs_put put, void *arg, uint64_t *len,
		     uint64_t *count, const char **why)
{
	unsigned char chunk[STREAM_CHUNK];
	uint64_t body;
	int r = -1;

	*len = 0;
	*count = 0;
	pthread_mutex_lock(&in->lock);
	body = in->spilled + in->len;
	*why = in->uncacheable;
	if (*why || digests_hold(in, why) < 0)
		goto out;
	memcpy(chunk, MAGIC, 8);
	kp_store64(chunk + 8, in->n);
	*why = "cannot write the entry";
	if (put(arg, chunk, 16) < 0)
		goto out;
	if (in->nkeyed) {
		if (stream_keyed(in, put, arg, &body, why) < 0)
			goto out;
		goto done;
	}
	/* the spilled records, read back a chunk at a time, then the buffer's */
	for (uint64_t off = 0; off < in->spilled;) {
		size_t n = in->spilled - off < sizeof(chunk) ? (size_t)(in->spilled - off)
							     : sizeof(chunk);

		if (kp_pread_all(in->spill, chunk, n, off) != (ssize_t)n) {
			*why = "the inputs' temporary file could not be read";
			goto out;
		}
		if (put(arg, chunk, n) < 0)
			goto out;
		off += n;
	}
	if (in->len && put(arg, in->buf, in->len) < 0)
		goto out;
done:
	*why = NULL;
	*len = 16 + body;
	*count = in->n;
	r = 0;
out:
	pthread_mutex_unlock(&in->lock);
	return r;
}

/*
 * Walks @m: calls @fn(@arg, entry) on each decoded entry; the number of entries, or -1 when
 * malformed or @fn said no.
 */
static long walk(const unsigned char *m, size_t len, bool (*fn)(void *arg, const struct entry *e),
		 void *arg)
{
	char path[4096];
	uint64_t n;
	size_t off = 16;

	if (len < 16 || memcmp(m, MAGIC, 8))
		return -1;
	n = kp_load64(m + 8, false);
	if (n > len / REC_HEAD)
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		struct entry e = { .path = path };
		uint64_t pl, cl;

		if (len - off < REC_HEAD)
			return -1;
		e.kind = m[off];
		e.flags = m[off + 1];
		pl = kp_load64(m + off + 2, false);
		e.err = (int)(int64_t)kp_load64(m + off + 10, false);
		for (int k = 0; k < 8; k++)
			e.st[k] = kp_load64(m + off + 18 + 8 * k, false);
		cl = kp_load64(m + off + 82, false);
		if (pl == 0 || pl >= sizeof(path) || cl > CONTENT_MAX ||
		    len - off - REC_HEAD < pl + cl || e.kind < K_STATE || e.kind > K_KEYED ||
		    (e.flags & ~(F_FOLLOW | F_LOCAL)) ||
		    (e.kind >= K_HASHED && cl != KP_CONTENT_HASH_LEN) ||
		    (e.kind >= K_SUMMED && !(e.flags & F_LOCAL)))
			return -1;
		memcpy(path, m + off + REC_HEAD, pl);
		path[pl] = '\0';
		if (memchr(path, '\0', pl))
			return -1;
		e.rec = m + off;
		e.content = (unsigned char *)m + off + REC_HEAD + pl;
		e.clen = cl;
		if (fn && !fn(arg, &e))
			return -1;
		off += REC_HEAD + pl + cl;
	}
	return off == len ? (long)n : -1;
}

/* The bytes of the regular file @path, still in the state @v, still hash to @hash. */
static bool same_bytes(const char *path, const uint64_t *v, const unsigned char *hash)
{
	unsigned char h[KP_CONTENT_HASH_LEN];
	struct stat st;
	uint64_t now[8];
	bool same = false;
	/* O_NONBLOCK: what replaced the file since the stat() may be a FIFO */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0)
		return false;
	if (fstat(fd, &st) == 0) {
		kp_file_state(&st, now);
		same = !memcmp(now, v, sizeof(now)) &&
		       kp_content_hash_fd(fd, (uint64_t)st.st_size, h) == 0 &&
		       !memcmp(h, hash, sizeof(h));
	}
	close(fd);
	return same;
}

/* A manifest being checked (kp_inputs_recheck()). */
struct check {
	struct kp_fs_devs devs; /* the file systems seen */
	const unsigned char *m;
	size_t len;
	struct timespec start;
	uid_t euid;
	bool by_digest;	      /* an entry held by its digest, its state changed */
	bool no_refresh;      /* a new state may not be stored (too new, untrusted, no memory) */
	unsigned char *fresh; /* @m with the new states of the entries that held by digest */
	/* the modules hashed again (K_KEYED) */
	struct kp_inputs_rehash rh;
};

/*
 * The entry @e of a K_HASHED, K_SUMMED or K_LISTED kind whose state changed to @v (@st: the
 * stat() that gave it) still holds by its digest: the same type and permissions (and size
 * for a file), on a file system whose stat() is the kernel's, the same bytes or listing. Its
 * new state then goes into @c's fresh manifest when it may be stored (a K_HASHED entry
 * stays one: its bytes are compared on every check).
 */
static bool holds_by_digest(struct check *c, const struct entry *e, const struct stat *st,
			    const uint64_t *v)
{
	unsigned char h[KP_CONTENT_HASH_LEN];
	size_t at = (size_t)(e->rec - c->m);
	bool same;
	int fd;

	if (v[7] != e->st[7] || (e->kind != K_LISTED && v[2] != e->st[2]))
		return false;
	if (e->kind == K_KEYED) {
		/* a module another user can write is not taken by its bytes (fs-trust.h) */
		if (!kp_state_trusted(st, KP_FS_LOCAL, c->euid))
			return false;
		if (v[2] > KP_INPUTS_REHASH_MAX - c->rh.bytes) {
			c->rh.over = true;
			return false;
		}
		c->rh.bytes += v[2];
		c->rh.files++;
	}
	fd = open_same(e->path, e->flags & F_FOLLOW, v);
	if (fd < 0)
		return false;
	same = kp_fs_class_of_fd(fd) == KP_FS_LOCAL && digest_fd(fd, st, v, h) == 0 &&
	       !memcmp(h, e->content, sizeof(h));
	close(fd);
	if (!same)
		return false;
	c->by_digest = true;
	/* a state too new, or one that does not name the file's bytes, is not stored */
	if (state_too_new(v, &c->start) ||
	    (e->kind == K_SUMMED && !kp_state_trusted(st, KP_FS_LOCAL, c->euid)))
		c->no_refresh = true;
	if (c->no_refresh)
		return true;
	if (!c->fresh) {
		c->fresh = malloc(c->len);
		if (!c->fresh) {
			c->no_refresh = true;
			return true;
		}
		memcpy(c->fresh, c->m, c->len);
	}
	for (int k = 0; k < 8; k++)
		kp_store64(c->fresh + at + 18 + 8 * k, v[k]);
	return true;
}

/*
 * The entry still holds (@arg: the check). A state recorded on a file system whose stat()
 * the kernel keeps must still be on one: a device number reused by a FUSE mount would
 * report any state.
 */
static bool holds(void *arg, const struct entry *e)
{
	struct check *chk = arg;
	struct kp_fs_devs *devs = &chk->devs;
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
	r = (e->flags & F_FOLLOW) ? stat(e->path, &st) : lstat(e->path, &st);
	if (e->kind == K_ABSENT)
		return r < 0 && errno == e->err;
	if (r < 0)
		return false;
	kp_file_state(&st, v);
	if (memcmp(v, e->st, sizeof(v)))
		return e->kind >= K_HASHED && holds_by_digest(chk, e, &st, v);
	if (e->flags & F_LOCAL) {
		int c = kp_fs_devs_find(devs, (uint64_t)st.st_dev);

		if (c < 0) {
			c = kp_fs_class_of_path(e->path, &st, e->flags & F_FOLLOW);
			if (c < 0)
				return false;
			kp_fs_devs_add(devs, (uint64_t)st.st_dev, (enum kp_fs_class)c);
		}
		if (c != KP_FS_LOCAL)
			return false;
	}
	return e->kind != K_HASHED || same_bytes(e->path, e->st, e->content);
}

int kp_inputs_recheck(const unsigned char *m, size_t len, unsigned char **fresh)
{
	return kp_inputs_recheck_counted(m, len, fresh, NULL);
}

int kp_inputs_recheck_counted(const unsigned char *m, size_t len, unsigned char **fresh,
			      struct kp_inputs_rehash *rh)
{
	struct check c = { .m = m, .len = len, .euid = geteuid() };
	int r;

	if (fresh)
		*fresh = NULL;
	/* no /dev entry: a state recorded as on a local file system is checked as one */
	memset(&c.devs, 0, sizeof(c.devs));
	clock_gettime(CLOCK_REALTIME, &c.start);
	r = walk(m, len, holds, &c) < 0 ? 0 : c.by_digest ? 2 : 1;
	if (rh)
		*rh = c.rh;
	if (r == 2 && fresh && !c.no_refresh)
		*fresh = c.fresh;
	else
		free(c.fresh);
	return r;
}

int kp_inputs_unchanged(const unsigned char *m, size_t len)
{
	return kp_inputs_recheck(m, len, NULL) != 0;
}

size_t kp_inputs_count(const unsigned char *m, size_t len)
{
	long n = walk(m, len, NULL, NULL);

	return n < 0 ? 0 : (size_t)n;
}
