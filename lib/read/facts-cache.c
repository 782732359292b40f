// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The facts cache (facts-cache.h): packs, lookup, store, merge, prune.
 *
 * Keys. A file's state (device, inode, size, mtime, ctime, mode) names its bytes: ctime
 * changes with every write, rename onto the path or chmod and cannot be set from user
 * space, so a file in the same state holds the same bytes (the trust make and ccache's
 * direct mode give it). A warm run only stat()s each module. Compressed modules are also
 * keyed by the SHA-256 of their bytes as they are on disk, so a copy of a module (another
 * tree, a point release that did not change it) is not decompressed again either; the key
 * decides which facts a run trusts, so it must not collide even for files made to collide
 * (a non-cryptographic hash would let a crafted module borrow another module's verdict).
 * SHA-256 runs at ~1.5 GB/s here (SHA-NI), against ~30 MB/s of output for liblzma: hashing
 * a .ko.xz costs ~1/50 of decompressing it. An uncompressed module is not hashed: its
 * reader loads only the sections it needs (a quarter of the bytes), so hashing all of it
 * would cost more than reading it again when its state is new.
 *
 * Packs. Each run that read modules writes the entries it made into one unnamed file
 * (O_TMPFILE) and names it packs/<pid>-<time>.pack when it ends: one file per run instead
 * of one per module, whole or absent for every reader. Layout:
 *
 *   entry...      each: a 72-byte header (magic, format, flags, key, file size, payload
 *                 length, CRC-32, build) and the payload (facts-serial.c); the key is the
 *                 content key, or the state's hash, inode and ctime (entry_key())
 *   record...     128 bytes each, sorted by the state's 64-bit hash: hash, the 8 state
 *                 fields, content key, entry offset, entry length, flags, CRC-32 of the record
 *   uint32...     the numbers of the records with a content key, sorted by that key
 *   footer        64 bytes: magic, format, build, record count, index offset, key count, CRC
 *
 * A lookup maps each pack's index (only the pages a binary search touches are read) and
 * pread()s the one entry it needs. An entry is used only when its record's CRC, and its
 * header (magic, format, build, flags, key, file size, length) and CRC all match and its
 * payload decodes exactly; anything else is a miss and the file is read as without the
 * cache. Packs are never changed once named: pruning and merging unlink them (a run that
 * has one open keeps reading it). More than MAX_PACKS packs are merged (the smallest ones,
 * under a lock file) so lookups open few files.
 */
#include "facts-cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <zlib.h>

#include "bytes.h"
#include "facts-serial.h"
#include "read/reader-id.h"

#define MAGIC	    "KPFACTS"
#define PACK_MAGIC  "KPPACK\0"
#define HEADER_LEN  72
#define REC_LEN	    128
#define FOOTER_LEN  64
#define KEY_LEN	    32
#define F_CONTENT   0x100u	       /* record flag: the content key is set */
#define TOUCH_EVERY (24 * 3600)	       /* a hit refreshes a pack's mtime at most this often */
#define PRUNE_EVERY 3600	       /* automatic pruning at most once an hour */
#define TMP_MAX_AGE 3600	       /* a temporary file older than this was left by a crash */
#define ENTRY_MAX   ((size_t)64 << 20) /* one entry */
#define PACK_MAX    ((uint64_t)1 << 40)
#define MAX_PACKS   16 /* more are merged at the end of a run that wrote one */
#define LOAD_PACKS  64 /* a lookup reads at most this many (the newest) */
#define PACK_DIR    "packs"
#define NAME_LEN    96
#define WRITE_BUF   ((size_t)64 << 10)
#define ENC_POOL    8
#define SPILL_RECS  256 /* records kept in memory while reading: the rest wait in a file */

/* One named pack, its index mapped. */
struct pack {
	int fd;
	unsigned char *map; /* the mapping that holds the index */
	size_t map_len;
	const unsigned char *recs; /* @nrec records */
	const unsigned char *keys; /* @nkeys record numbers, by content key */
	uint64_t nrec, nkeys;
	time_t mtime;
	int used; /* a hit came from it; atomic */
};

/* What this run adds: entries written to an unnamed file as they are made. */
struct rec {
	uint64_t hash;
	uint64_t st[8];
	unsigned char key[KEY_LEN];
	uint64_t off;
	uint32_t len, flags;
};

struct writer {
	int fd;	     /* -1 until the first entry */
	bool failed; /* no more entries this run */
	bool named;  /* @tmp names it (no O_TMPFILE) */
	char tmp[NAME_LEN];
	uint64_t off;	    /* the next entry's offset (written and buffered bytes) */
	unsigned char *buf; /* entries not written yet: one write() per WRITE_BUF bytes */
	size_t blen, bcap;
	struct rec *recs; /* the last @n records (@n < SPILL_RECS when @rfd is open) */
	size_t n, cap;
	int rfd;	   /* an unnamed file the earlier records went to, or -1 (all in @recs) */
	uint64_t nspilled; /* records in @rfd */
};

struct kp_facts_cache {
	char *dir;
	int dirfd;	/* O_PATH of @dir; -1: no cache directory (every lookup misses) */
	EVP_MD *sha256; /* fetched on first use: OpenSSL's start-up costs the hook ~1 ms */
	uint32_t build; /* CRC-32 of PACKAGE_VERSION and KP_READER_ID: another build's entries miss
			 */
	pthread_mutex_t lock; /* the pack list's loading and @w */
	bool loaded;	      /* @packs read (atomic acquire) */
	struct pack *packs;
	size_t npacks;
	struct writer w;
	/* encoding buffers (and string tables) kept from entry to entry, one per thread at work */
	struct kp_facts_buf *enc[ENC_POOL];
	size_t nenc;		  /* how many of @enc are free (under @lock) */
	unsigned seq;		  /* temporary file names; atomic */
	struct kp_cache_counts n; /* atomic */
};

static void count(uint64_t *v)
{
	__atomic_fetch_add(v, 1, __ATOMIC_RELAXED);
}

static bool is_off(const char *v)
{
	return v && (!strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "no"));
}

int kp_facts_cache_dir(enum kp_cache_scope scope, char *buf, size_t len)
{
	const char *env = getenv("KOPOLICY_CACHE_DIR");
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	int n;

	if (is_off(getenv("KOPOLICY_CACHE")))
		return 1;
	if (env && *env)
		n = snprintf(buf, len, "%s/facts-v%d", env, KP_FACTS_FORMAT);
	else if (scope == KP_CACHE_SYSTEM)
		n = snprintf(buf, len, "/var/cache/kopolicy/facts-v%d", KP_FACTS_FORMAT);
	else if (xdg && xdg[0] == '/') /* XDG: a relative value is invalid and ignored */
		n = snprintf(buf, len, "%s/kopolicy/facts-v%d", xdg, KP_FACTS_FORMAT);
	else if (home && home[0] == '/')
		n = snprintf(buf, len, "%s/.cache/kopolicy/facts-v%d", home, KP_FACTS_FORMAT);
	else
		return -1;
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* mkdir -p @path (0755); 0 or -1. */
static int mkdir_p(const char *path)
{
	char p[4096];

	if ((size_t)snprintf(p, sizeof(p), "%s", path) >= sizeof(p))
		return -1;
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST) {
			*s = '/';
			return -1;
		}
		*s = '/';
	}
	return mkdir(p, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

struct kp_facts_cache *kp_facts_cache_new(const char *dir)
{
	struct kp_facts_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->dir = strdup(dir);
	if (!c->dir || pthread_mutex_init(&c->lock, NULL) != 0) {
		free(c->dir);
		free(c);
		return NULL;
	}
	c->w.fd = -1;
	c->w.rfd = -1;
	/* another release or another reader (KP_READER_ID: a digest of its sources): a miss */
	c->build = (uint32_t)crc32(0, (const Bytef *)PACKAGE_VERSION, strlen(PACKAGE_VERSION));
	c->build = (uint32_t)crc32(c->build, (const Bytef *)KP_READER_ID, strlen(KP_READER_ID));
	/* created now (a read-only place stays read-only: lookups only, or none) */
	mkdir_p(dir);
	c->dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return c;
}

void kp_facts_cache_counts(const struct kp_facts_cache *c, struct kp_cache_counts *out)
{
	*out = c->n;
}

uint64_t kp_facts_cache_max_size(void)
{
	const char *v = getenv("KOPOLICY_CACHE_MAX_SIZE");
	unsigned long long n;
	char *end;

	if (!v || !*v)
		return KP_FACTS_DEFAULT_MAX;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || n == 0)
		return KP_FACTS_DEFAULT_MAX;
	switch (*end) {
	case 'G':
		n <<= 10;
		/* fall through */
	case 'M':
		n <<= 10;
		/* fall through */
	case 'K':
		n <<= 10;
		end++;
		break;
	default:
		break;
	}
	return *end ? KP_FACTS_DEFAULT_MAX : n;
}

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static uint64_t get64(const unsigned char *p)
{
	return kp_load64(p, false);
}

/* The file state a record is for: which file (device, inode) in which state. */
static void file_state(const struct stat *st, uint64_t *v)
{
	v[0] = (uint64_t)st->st_dev;
	v[1] = (uint64_t)st->st_ino;
	v[2] = (uint64_t)st->st_size;
	v[3] = (uint64_t)st->st_mtim.tv_sec;
	v[4] = (uint64_t)st->st_mtim.tv_nsec;
	v[5] = (uint64_t)st->st_ctim.tv_sec;
	v[6] = (uint64_t)st->st_ctim.tv_nsec;
	v[7] = (uint64_t)st->st_mode;
}

/* A 64-bit hash of the state, to sort and search records by (the fields are compared too). */
static uint64_t state_hash(const uint64_t *v)
{
	uint64_t h = 0x9e3779b97f4a7c15u;

	for (int i = 0; i < 8; i++) {
		h ^= v[i];
		h *= 0xff51afd7ed558ccdu;
		h ^= h >> 33;
	}
	return h;
}

static bool same_file_state(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

static EVP_MD *sha256(struct kp_facts_cache *c)
{
	EVP_MD *md = __atomic_load_n(&c->sha256, __ATOMIC_ACQUIRE);

	if (md)
		return md;
	pthread_mutex_lock(&c->lock);
	if (!c->sha256)
		__atomic_store_n(&c->sha256, EVP_MD_fetch(NULL, "SHA256", NULL), __ATOMIC_RELEASE);
	md = c->sha256;
	pthread_mutex_unlock(&c->lock);
	return md;
}

/* SHA-256 of the file's bytes as they are on disk; -1 if it cannot be read or changed. */
static int content_key(struct kp_facts_cache *c, const char *path, const struct stat *pre,
		       unsigned char *key)
{
	/* on the stack: a heap buffer this size is trimmed on every free (brk, TLB flushes) */
	unsigned char buf[65536];
	EVP_MD *md = sha256(c);
	EVP_MD_CTX *ctx = md ? EVP_MD_CTX_new() : NULL;
	struct kp_err err;
	struct stat st;
	uint64_t total = 0;
	unsigned int len = KEY_LEN;
	int fd = -1, r = -1;

	if (!ctx || EVP_DigestInit_ex(ctx, md, NULL) != 1)
		goto out;
	fd = kp_open_regular(path, &st, &err);
	if (fd < 0 || !same_file_state(pre, &st))
		goto out;
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto out;
		if (n == 0)
			break;
		total += (uint64_t)n;
		if (EVP_DigestUpdate(ctx, buf, (size_t)n) != 1)
			goto out;
	}
	if (total != (uint64_t)st.st_size || EVP_DigestFinal_ex(ctx, key, &len) != 1)
		goto out;
	r = 0;
out:
	if (fd >= 0)
		close(fd);
	EVP_MD_CTX_free(ctx);
	return r;
}

/* Compressed by its name (.ko.xz, .ko.zst, .ko.gz): worth a content key. */
static bool hashed_by_name(const char *path)
{
	size_t n = strlen(path);

	return !(n >= 3 && !strcmp(path + n - 3, ".ko"));
}

/* The read options that change the facts: part of an entry's header and its record. */
static uint32_t entry_flags(const struct kp_open_opts *o)
{
	return (o->full_modinfo ? 1u : 0u) | (o->sig_digest & 3u) << 1;
}

/* The header before the payload; its CRC covers header (CRC field 0) and payload. */
static void make_header(const struct kp_facts_cache *c, unsigned char *h, uint32_t flags,
			const unsigned char *key, uint64_t file_size, uint64_t payload_len)
{
	memset(h, 0, HEADER_LEN);
	memcpy(h, MAGIC, 8);
	put32(h + 8, KP_FACTS_FORMAT);
	put32(h + 12, flags);
	memcpy(h + 16, key, KEY_LEN);
	put64(h + 48, file_size);
	put64(h + 56, payload_len);
	/* h + 64: CRC-32, filled by the caller */
	put32(h + 68, c->build);
}

static uint32_t entry_crc(const unsigned char *h, const unsigned char *payload, size_t len)
{
	unsigned char copy[HEADER_LEN];
	uLong crc;

	memcpy(copy, h, HEADER_LEN);
	memset(copy + 64, 0, 4);
	crc = crc32(0, copy, HEADER_LEN);
	return (uint32_t)crc32_z(crc, payload, len);
}

/* The header fields a lookup checks: for @key (entry_key()) and @file_size. */
static bool header_ok(const struct kp_facts_cache *c, const unsigned char *h, size_t len,
		      uint32_t flags, const unsigned char *key, uint64_t file_size)
{
	unsigned char want[HEADER_LEN];

	if (len < HEADER_LEN)
		return false;
	make_header(c, want, flags, key, file_size, len - HEADER_LEN);
	memcpy(want + 64, h + 64, 4);
	return !memcmp(h, want, HEADER_LEN) &&
	       kp_load32(h + 64, false) == entry_crc(h, h + HEADER_LEN, len - HEADER_LEN);
}

/*
 * The key in the header of @r's entry: the content key, or for an entry found by state
 * only, the state's hash, inode and ctime: an entry is bound to what its record names.
 */
static void entry_key(const struct rec *r, unsigned char *k)
{
	if (r->flags & F_CONTENT) {
		memcpy(k, r->key, KEY_LEN);
		return;
	}
	put64(k, r->hash);
	put64(k + 8, r->st[1]);
	put64(k + 16, r->st[5]);
	put64(k + 24, r->st[6]);
}

/* Records: 128 bytes, little-endian. */
static void rec_put(unsigned char *p, const struct rec *r)
{
	memset(p, 0, REC_LEN);
	put64(p, r->hash);
	for (int i = 0; i < 8; i++)
		put64(p + 8 + 8 * i, r->st[i]);
	memcpy(p + 72, r->key, KEY_LEN);
	put64(p + 104, r->off);
	put32(p + 112, r->len);
	put32(p + 116, r->flags);
	put32(p + 124, (uint32_t)crc32(0, p, REC_LEN - 4));
}

static bool rec_get(const unsigned char *p, struct rec *r)
{
	if (kp_load32(p + 124, false) != (uint32_t)crc32(0, p, REC_LEN - 4))
		return false;
	r->hash = get64(p);
	for (int i = 0; i < 8; i++)
		r->st[i] = get64(p + 8 + 8 * i);
	memcpy(r->key, p + 72, KEY_LEN);
	r->off = get64(p + 104);
	r->len = kp_load32(p + 112, false);
	r->flags = kp_load32(p + 116, false);
	return true;
}

static void footer_put(const struct kp_facts_cache *c, unsigned char *f, uint64_t nrec,
		       uint64_t index_off, uint64_t nkeys)
{
	memset(f, 0, FOOTER_LEN);
	memcpy(f, PACK_MAGIC, 8);
	put32(f + 8, KP_FACTS_FORMAT);
	put32(f + 12, c->build);
	put64(f + 16, nrec);
	put64(f + 24, index_off);
	put64(f + 32, nkeys);
	put32(f + 60, (uint32_t)crc32(0, f, FOOTER_LEN - 4));
}

/* The footer of a pack of @size bytes: 0 and the counts, or -1 (not a pack of this build). */
static int footer_get(const struct kp_facts_cache *c, const unsigned char *f, uint64_t size,
		      uint64_t *nrec, uint64_t *index_off, uint64_t *nkeys)
{
	if (memcmp(f, PACK_MAGIC, 8) || kp_load32(f + 8, false) != KP_FACTS_FORMAT ||
	    kp_load32(f + 12, false) != c->build ||
	    kp_load32(f + 60, false) != (uint32_t)crc32(0, f, FOOTER_LEN - 4))
		return -1;
	*nrec = get64(f + 16);
	*index_off = get64(f + 24);
	*nkeys = get64(f + 32);
	if (size < FOOTER_LEN || *nrec > size / REC_LEN || *nkeys > *nrec || *index_off > size ||
	    size - *index_off != *nrec * REC_LEN + *nkeys * 4 + FOOTER_LEN)
		return -1;
	return 0;
}

static int pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	unsigned char *p = buf;

	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static int write_all(int fd, const unsigned char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static bool is_pack_name(const char *name)
{
	size_t n = strlen(name);

	return name[0] != '.' && n > 5 && n < NAME_LEN && !strcmp(name + n - 5, ".pack");
}

/* Opens the pack @name of the directory @dfd and maps its index; 0 or -1 (not a pack). */
static int pack_open(const struct kp_facts_cache *c, int dfd, const char *name, struct pack *p)
{
	unsigned char f[FOOTER_LEN];
	uint64_t nrec, off, nkeys, start;
	long page = sysconf(_SC_PAGESIZE);
	struct stat st;

	memset(p, 0, sizeof(*p));
	p->fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (p->fd < 0)
		return -1;
	if (fstat(p->fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < FOOTER_LEN ||
	    (uint64_t)st.st_size > PACK_MAX ||
	    pread_all(p->fd, f, FOOTER_LEN, (uint64_t)st.st_size - FOOTER_LEN) < 0 ||
	    footer_get(c, f, (uint64_t)st.st_size, &nrec, &off, &nkeys) < 0)
		goto fail;
	p->mtime = st.st_mtim.tv_sec;
	p->nrec = nrec;
	p->nkeys = nkeys;
	if (!nrec)
		return 0;
	start = off & ~(uint64_t)(page > 0 ? page - 1 : 4095);
	p->map_len = (size_t)((uint64_t)st.st_size - FOOTER_LEN - start);
	p->map = mmap(NULL, p->map_len, PROT_READ, MAP_SHARED, p->fd, (off_t)start);
	if (p->map == MAP_FAILED) {
		p->map = NULL;
		goto fail;
	}
	p->recs = p->map + (off - start);
	p->keys = p->recs + nrec * REC_LEN;
	return 0;
fail:
	close(p->fd);
	p->fd = -1;
	return -1;
}

static void pack_close(struct pack *p)
{
	if (p->map)
		munmap(p->map, p->map_len);
	if (p->fd >= 0)
		close(p->fd);
	p->map = NULL;
	p->fd = -1;
}

struct pack_name {
	char name[NAME_LEN];
	time_t mtime;
	uint64_t bytes;
};

static int cmp_newest(const void *a, const void *b)
{
	const struct pack_name *x = a, *y = b;

	if (x->mtime != y->mtime)
		return x->mtime > y->mtime ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The names of the packs in @dfd (and their stat), newest first; -1 when out of memory. */
static int list_packs(int dfd, struct pack_name **out, size_t *n)
{
	struct pack_name *v = NULL;
	size_t cap = 0;
	struct dirent *de;
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d;

	*out = NULL;
	*n = 0;
	if (fd < 0)
		return 0;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return 0;
	}
	while ((de = readdir(d))) {
		struct stat st;

		if (!is_pack_name(de->d_name) ||
		    fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (kp_grow(&v, &cap, *n + 1, sizeof(*v)) < 0) {
			closedir(d);
			free(v);
			*n = 0;
			return -1;
		}
		snprintf(v[*n].name, NAME_LEN, "%s", de->d_name);
		v[*n].mtime = st.st_mtim.tv_sec;
		v[*n].bytes = (uint64_t)st.st_blocks * 512;
		(*n)++;
	}
	closedir(d);
	if (*n > 1)
		qsort(v, *n, sizeof(*v), cmp_newest);
	*out = v;
	return 0;
}

/* The packs directory of @c (O_PATH), or -1. */
static int packs_dirfd(const struct kp_facts_cache *c)
{
	return openat(c->dirfd, PACK_DIR, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* Opens the newest LOAD_PACKS packs once per run (the first lookup). */
static void load_packs(struct kp_facts_cache *c)
{
	struct pack_name *names;
	size_t n;
	int dfd;

	if (__atomic_load_n(&c->loaded, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&c->lock);
	if (c->loaded)
		goto out;
	dfd = packs_dirfd(c);
	if (dfd < 0)
		goto done;
	if (list_packs(dfd, &names, &n) == 0 && n) {
		if (n > LOAD_PACKS)
			n = LOAD_PACKS;
		c->packs = calloc(n, sizeof(*c->packs));
		for (size_t i = 0; c->packs && i < n; i++)
			if (pack_open(c, dfd, names[i].name, &c->packs[c->npacks]) == 0)
				c->npacks++;
	}
	free(names);
	close(dfd);
done:
	__atomic_store_n(&c->loaded, true, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&c->lock);
}

/* A lookup in one pack's index: by file state (@st) or by content key (@key). */
struct find {
	const struct pack *p;
	const uint64_t *st;
	uint64_t hash;
	const unsigned char *key;
	uint32_t flags;
	size_t from; /* the search resumes here (the next candidate) */
	struct rec found;
};

static bool rec_matches(const struct find *f, const unsigned char *p)
{
	struct rec r;

	if (!rec_get(p, &r) || (r.flags & 0xff) != f->flags)
		return false;
	if (f->st) {
		if (r.hash != f->hash || memcmp(r.st, f->st, sizeof(r.st)))
			return false;
	} else if (!(r.flags & F_CONTENT) || memcmp(r.key, f->key, KEY_LEN)) {
		return false;
	}
	((struct find *)f)->found = r;
	return true;
}

/* The index of a record (by state) or a key slot (by content) at position @i. */
static const unsigned char *slot(const struct find *f, size_t i)
{
	uint32_t k;

	if (f->st)
		return f->p->recs + i * REC_LEN;
	k = kp_load32(f->p->keys + 4 * i, false);
	return k < f->p->nrec ? f->p->recs + (size_t)k * REC_LEN : NULL;
}

/* <0, 0, >0: the record at @i sorts before, with, after what @f looks for. */
static int slot_cmp(const struct find *f, size_t i)
{
	const unsigned char *p = slot(f, i);
	uint64_t h;

	if (!p)
		return 1;
	if (!f->st)
		return memcmp(p + 72, f->key, KEY_LEN);
	h = get64(p);
	return h < f->hash ? -1 : h > f->hash;
}

/* Under kp_bytes_guard(): the next matching record from @f->from; 1 found, 0 none. */
static int find_next(void *arg)
{
	struct find *f = arg;
	size_t n = f->st ? f->p->nrec : f->p->nkeys;

	if (f->from == SIZE_MAX) { /* first call: binary search for the first candidate */
		size_t lo = 0, hi = n;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (slot_cmp(f, mid) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		f->from = lo;
	}
	for (; f->from < n && slot_cmp(f, f->from) == 0; f->from++) {
		const unsigned char *p = slot(f, f->from);

		if (rec_matches(f, p)) {
			f->from++;
			return 1;
		}
	}
	return 0;
}

/*
 * The module from the entry @r of @p, or NULL (refused: corrupt or foreign). The file must
 * be @file_size bytes and its image fit @opts->max_size. @raw/@raw_len: the entry's bytes
 * (the caller frees them) when not NULL.
 */
static struct kp_module *load_entry(const struct kp_facts_cache *c, const struct pack *p,
				    const struct rec *r, const char *path,
				    const struct kp_open_opts *opts, uint64_t file_size,
				    unsigned char **raw)
{
	size_t max = opts->max_size ? opts->max_size : KP_DEFAULT_MAX_SIZE;
	unsigned char small[16384], *buf = small, key[KEY_LEN];
	struct kp_module *m = NULL;
	size_t len = r->len;

	if (len < HEADER_LEN || len > ENTRY_MAX)
		return NULL;
	if (len > sizeof(small) || raw) {
		buf = malloc(len);
		if (!buf)
			return NULL;
	}
	entry_key(r, key);
	if (pread_all(p->fd, buf, len, r->off) < 0 ||
	    !header_ok(c, buf, len, r->flags & 0xff, key, file_size))
		goto out;
	m = calloc(1, sizeof(*m));
	if (!m)
		goto out;
	m->path = path;
	if (kp_facts_decode(m, buf + HEADER_LEN, len - HEADER_LEN, opts->names) < 0 ||
	    m->image_size > max || m->file_size != file_size) {
		kp_module_free(m);
		m = NULL;
		goto out;
	}
	__atomic_store_n(&((struct pack *)p)->used, 1, __ATOMIC_RELAXED);
	if (raw) {
		*raw = buf;
		return m;
	}
out:
	if (buf != small)
		free(buf);
	return m;
}

/*
 * Looks the module up in every pack: by @st (the file's state) or, with @st NULL, by @key.
 * A hit returns the module (and the entry's bytes in @raw when asked); refused entries are
 * counted and the search goes on.
 */
static struct kp_module *lookup(struct kp_facts_cache *c, const uint64_t *st,
				const unsigned char *key, const char *path,
				const struct kp_open_opts *opts, uint64_t file_size,
				unsigned char **raw)
{
	struct kp_err err;

	load_packs(c);
	for (size_t i = 0; i < c->npacks; i++) {
		const struct pack *p = &c->packs[i];
		struct kp_bytes guard = { .data = p->map, .len = p->map_len, .mapped = true };
		struct find f = {
			.p = p, .st = st, .key = key, .flags = entry_flags(opts), .from = SIZE_MAX
		};

		if (!p->nrec)
			continue;
		if (st)
			f.hash = state_hash(st);
		/* a pack truncated under us (by hand) is a SIGBUS on its index: a miss */
		while (kp_bytes_guard(&guard, find_next, &f, &err) == 1) {
			struct kp_module *m =
				load_entry(c, p, &f.found, path, opts, file_size, raw);

			if (m)
				return m;
			count(&c->n.rejected);
		}
	}
	return NULL;
}

/* A name for a temporary file in the packs directory, unique across processes and threads. */
static void tmp_name(char *buf, unsigned seq)
{
	snprintf(buf, NAME_LEN, ".tmp-%ld-%ld-%u", (long)getpid(), (long)gettid(), seq);
}

/* The writer's file, made on the first entry: an unnamed file, else a temporary name. */
static int writer_open(struct kp_facts_cache *c, struct writer *w)
{
	int dfd;

	if (w->fd >= 0 || w->failed)
		return w->failed ? -1 : 0;
	w->failed = true;
	if (mkdirat(c->dirfd, PACK_DIR, 0755) < 0 && errno != EEXIST)
		return -1;
	dfd = openat(c->dirfd, PACK_DIR, O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	w->fd = openat(dfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		tmp_name(w->tmp, __atomic_fetch_add(&c->seq, 1, __ATOMIC_RELAXED));
		w->fd = openat(dfd, w->tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
			       0644);
		w->named = w->fd >= 0;
	}
	/* the records wait there: they are needed only once the run ends (peak memory) */
	if (w->fd >= 0)
		w->rfd = openat(dfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	close(dfd);
	if (w->fd < 0)
		return -1;
	w->failed = false;
	return 0;
}

static int writer_flush(struct writer *w)
{
	if (w->blen && write_all(w->fd, w->buf, w->blen) < 0)
		w->failed = true;
	w->blen = 0;
	return w->failed ? -1 : 0;
}

/* A buffer with @room bytes free after what it holds (flushed when needed); 0 or -1. */
static int writer_room(struct writer *w, size_t room)
{
	if (!w->buf) {
		w->buf = malloc(WRITE_BUF);
		if (!w->buf)
			return -1;
		w->bcap = WRITE_BUF;
	}
	return w->bcap - w->blen < room ? writer_flush(w) : 0;
}

/* Appends the entry @p (@len bytes) for @r's state and key; under @c->lock. */
static int writer_add(struct kp_facts_cache *c, struct writer *w, struct rec *r,
		      const unsigned char *p, size_t len)
{
	if (writer_open(c, w) < 0 || kp_grow(&w->recs, &w->cap, w->n + 1, sizeof(*w->recs)) < 0)
		return -1;
	if (len <= WRITE_BUF / 2 && writer_room(w, len) == 0) {
		memcpy(w->buf + w->blen, p, len);
		w->blen += len;
	} else if (writer_flush(w) < 0 || write_all(w->fd, p, len) < 0) {
		w->failed = true;
		return -1;
	}
	r->off = w->off;
	r->len = (uint32_t)len;
	w->off += len;
	w->recs[w->n++] = *r;
	if (w->rfd >= 0 && w->n >= SPILL_RECS) {
		if (write_all(w->rfd, (const unsigned char *)w->recs, w->n * sizeof(*w->recs)) <
		    0) {
			w->failed = true;
			return -1;
		}
		w->nspilled += w->n;
		w->n = 0;
	}
	return 0;
}

static void add_entry(struct kp_facts_cache *c, struct rec *r, const unsigned char *p, size_t len)
{
	if (len > ENTRY_MAX)
		return;
	pthread_mutex_lock(&c->lock);
	writer_add(c, &c->w, r, p, len);
	pthread_mutex_unlock(&c->lock);
}

/* An encoding buffer: a free one of the pool, a new one, or NULL (out of memory). */
static struct kp_facts_buf *enc_get(struct kp_facts_cache *c)
{
	struct kp_facts_buf *b = NULL;

	pthread_mutex_lock(&c->lock);
	if (c->nenc)
		b = c->enc[--c->nenc];
	pthread_mutex_unlock(&c->lock);
	return b ? b : calloc(1, sizeof(*b));
}

/* Back to the pool (under @c->lock), or freed when the pool is full. */
static void enc_put(struct kp_facts_cache *c, struct kp_facts_buf *b)
{
	if (c->nenc < ENC_POOL) {
		c->enc[c->nenc++] = b;
		return;
	}
	kp_facts_buf_free(b);
	free(b);
}

/*
 * Encodes @m as an entry for @r (its state, key and flags set) into a buffer of the pool
 * (no allocation per module once the pool's buffers have grown: fresh pages cost a page
 * fault each), outside the lock, and appends it to the run's pack. 0 or -1.
 */
static int store(struct kp_facts_cache *c, const struct kp_module *m, struct rec *r)
{
	struct kp_facts_buf *b = enc_get(c);
	unsigned char key[KEY_LEN];
	int ret = -1;

	if (!b)
		return -1;
	entry_key(r, key);
	b->len = HEADER_LEN;
	b->oom = 0;
	if (kp_facts_encode(m, b) == 0 && b->len - HEADER_LEN <= ENTRY_MAX) {
		make_header(c, b->data, r->flags & 0xff, key, m->file_size, b->len - HEADER_LEN);
		put32(b->data + 64, entry_crc(b->data, b->data + HEADER_LEN, b->len - HEADER_LEN));
		ret = 0;
	}
	pthread_mutex_lock(&c->lock);
	if (ret == 0)
		ret = writer_add(c, &c->w, r, b->data, b->len);
	enc_put(c, b);
	pthread_mutex_unlock(&c->lock);
	return ret;
}

/*
 * An empty cache (no pack to look in): the module is read first and stored under the state
 * the reader's own open() saw, then hashed when compressed: no stat() of its own, which is
 * a tenth of what reading a small uncompressed module costs.
 */
static int read_and_store(struct kp_facts_cache *c, const char *path, struct kp_open_opts *direct,
			  struct kp_decoders *dec, struct kp_module **out, struct kp_err *err)
{
	struct rec r = { .flags = entry_flags(direct) };
	struct stat st;
	int ret;

	direct->state = &st;
	ret = kp_module_open_with(path, direct, dec, out, err);
	direct->state = NULL;
	if (!S_ISREG(st.st_mode)) /* not opened: not counted, as a file stat() refuses */
		return ret;
	count(&c->n.misses);
	if (ret < 0)
		return ret;
	file_state(&st, r.st);
	r.hash = state_hash(r.st);
	/* a content key only for the bytes read: content_key() checks the state it hashes */
	if (hashed_by_name(path) && content_key(c, path, &st, r.key) == 0)
		r.flags |= F_CONTENT;
	if (store(c, *out, &r) == 0)
		count(&c->n.stored);
	return 0;
}

int kp_facts_cache_open(struct kp_facts_cache *c, const char *path, const struct kp_open_opts *opts,
			struct kp_decoders *dec, struct kp_module **out, struct kp_err *err)
{
	struct kp_open_opts direct = *opts;
	struct rec r = { .flags = entry_flags(opts) };
	struct stat pre, post;
	struct kp_module *m;

	direct.cache = NULL;
	*out = NULL;
	if (c->dirfd < 0) /* no cache directory */
		return kp_module_open_with(path, &direct, dec, out, err);
	load_packs(c);
	if (!c->npacks)
		return read_and_store(c, path, &direct, dec, out, err);
	/* Not a regular file, or gone: the reader says what it is. */
	if (stat(path, &pre) < 0 || !S_ISREG(pre.st_mode))
		return kp_module_open_with(path, &direct, dec, out, err);
	file_state(&pre, r.st);
	r.hash = state_hash(r.st);
	m = lookup(c, r.st, NULL, path, opts, (uint64_t)pre.st_size, NULL);
	if (m) {
		count(&c->n.hits);
		count(&c->n.stat_hits);
		*out = m;
		return 0;
	}
	if (hashed_by_name(path) && content_key(c, path, &pre, r.key) == 0) {
		unsigned char *raw = NULL;

		r.flags |= F_CONTENT;
		m = lookup(c, NULL, r.key, path, opts, (uint64_t)pre.st_size, &raw);
		if (m) {
			/* the same entry under this file's state: a stat hit next time */
			count(&c->n.hits);
			add_entry(c, &r, raw, get64(raw + 56) + HEADER_LEN);
			free(raw);
			*out = m;
			return 0;
		}
	}
	count(&c->n.misses);
	if (kp_module_open_with(path, &direct, dec, out, err) < 0)
		return -1;
	/*
	 * A content key must name the bytes that were read: the file must not have changed
	 * since it was hashed. An entry found by state alone needs no second stat(): a file
	 * changed since @pre has left that state for good (ctime only moves forward), so no
	 * later run looks the entry up (a change within one timestamp tick goes unseen by a
	 * stat() either way).
	 */
	if ((!(r.flags & F_CONTENT) || (stat(path, &post) == 0 && same_file_state(&pre, &post))) &&
	    store(c, *out, &r) == 0)
		count(&c->n.stored);
	return 0;
}

/* Records by state hash, state, flags, then where the entry is (the first written first). */
static int cmp_rec_state(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	int d;

	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	d = memcmp(x->st, y->st, sizeof(x->st));
	if (d)
		return d;
	if ((x->flags & 0xff) != (y->flags & 0xff))
		return (x->flags & 0xff) < (y->flags & 0xff) ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* Key slots (record numbers into @arg) by content key, then flags. */
static int cmp_key_slot(const void *a, const void *b, void *arg)
{
	const struct rec *recs = arg;
	const struct rec *x = &recs[*(const uint32_t *)a], *y = &recs[*(const uint32_t *)b];
	int d = memcmp(x->key, y->key, KEY_LEN);

	if (d)
		return d;
	return (x->flags & 0xff) < (y->flags & 0xff) ? -1 : (x->flags & 0xff) > (y->flags & 0xff);
}

/*
 * Writes the index and footer after the entries; 0, or -1 (the writer's file is then
 * useless). A state read twice (the same file named twice) keeps its first entry.
 */
static int writer_finish(struct kp_facts_cache *c, struct writer *w)
{
	unsigned char *idx = NULL;
	uint32_t *keys = NULL;
	size_t n = 0, nkeys = 0, len;
	int r = -1;

	if (w->fd < 0 || w->failed || !(w->n + w->nspilled) || writer_flush(w) < 0)
		return -1;
	if (w->nspilled) { /* the records back in memory, the spilled ones first */
		size_t total = (size_t)w->nspilled + w->n;
		struct rec *all = malloc(total * sizeof(*all));

		if (!all || pread_all(w->rfd, all, (size_t)w->nspilled * sizeof(*all), 0) < 0) {
			free(all);
			return -1;
		}
		if (w->n)
			memcpy(all + w->nspilled, w->recs, w->n * sizeof(*all));
		free(w->recs);
		w->recs = all;
		w->n = w->cap = total;
		w->nspilled = 0;
	}
	qsort(w->recs, w->n, sizeof(*w->recs), cmp_rec_state);
	for (size_t i = 0; i < w->n; i++) {
		const struct rec *prev = n ? &w->recs[n - 1] : NULL;

		if (prev && prev->hash == w->recs[i].hash &&
		    !memcmp(prev->st, w->recs[i].st, sizeof(prev->st)) &&
		    (prev->flags & 0xff) == (w->recs[i].flags & 0xff))
			continue;
		w->recs[n++] = w->recs[i];
	}
	len = n * REC_LEN + n * 4 + FOOTER_LEN;
	idx = malloc(len);
	keys = malloc(n * sizeof(*keys));
	if (!idx || !keys)
		goto out;
	for (size_t i = 0; i < n; i++) {
		rec_put(idx + i * REC_LEN, &w->recs[i]);
		if (w->recs[i].flags & F_CONTENT)
			keys[nkeys++] = (uint32_t)i;
	}
	qsort_r(keys, nkeys, sizeof(*keys), cmp_key_slot, w->recs);
	for (size_t i = 0; i < nkeys; i++)
		put32(idx + n * REC_LEN + 4 * i, keys[i]);
	footer_put(c, idx + n * REC_LEN + nkeys * 4, n, w->off, nkeys);
	r = write_all(w->fd, idx, n * REC_LEN + nkeys * 4 + FOOTER_LEN);
out:
	free(idx);
	free(keys);
	return r;
}

/* Names the finished writer's file packs/<pid>-<time>.pack; 0 or -1. */
static int writer_publish(struct kp_facts_cache *c, struct writer *w)
{
	char proc[64], name[NAME_LEN];
	struct timespec now;
	int dfd, r = -1;

	dfd = openat(c->dirfd, PACK_DIR, O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	clock_gettime(CLOCK_REALTIME, &now);
	for (int i = 0; i < 8 && r < 0; i++) {
		snprintf(name, sizeof(name), "%lld%09ld-%ld-%d.pack", (long long)now.tv_sec,
			 now.tv_nsec, (long)getpid(), i);
		if (w->named) {
			/* renameat2(RENAME_NOREPLACE) is not everywhere: link, then unlink */
			r = linkat(dfd, w->tmp, dfd, name, 0);
		} else {
			snprintf(proc, sizeof(proc), "/proc/self/fd/%d", w->fd);
			r = linkat(AT_FDCWD, proc, dfd, name, AT_SYMLINK_FOLLOW);
		}
		if (r < 0 && errno != EEXIST)
			break;
	}
	if (w->named)
		unlinkat(dfd, w->tmp, 0);
	close(dfd);
	return r;
}

static void writer_close(struct kp_facts_cache *c, struct writer *w)
{
	if (w->fd >= 0) {
		close(w->fd);
		if (w->named) { /* published or not: the temporary name goes */
			int dfd = openat(c->dirfd, PACK_DIR, O_DIRECTORY | O_CLOEXEC);

			if (dfd >= 0) {
				unlinkat(dfd, w->tmp, 0);
				close(dfd);
			}
		}
	}
	if (w->rfd >= 0)
		close(w->rfd);
	free(w->recs);
	free(w->buf);
	memset(w, 0, sizeof(*w));
	w->fd = -1;
	w->rfd = -1;
}

/* Copies every valid entry of the pack @p into @w; 0, or -1 when @w failed. */
static int merge_pack(struct kp_facts_cache *c, struct writer *w, const struct pack *p)
{
	for (uint64_t i = 0; i < p->nrec; i++) {
		unsigned char *buf, key[KEY_LEN];
		struct rec r;

		if (!rec_get(p->recs + i * REC_LEN, &r) || r.len < HEADER_LEN || r.len > ENTRY_MAX)
			continue;
		buf = malloc(r.len);
		if (!buf)
			return -1;
		entry_key(&r, key);
		if (pread_all(p->fd, buf, r.len, r.off) == 0 &&
		    header_ok(c, buf, r.len, r.flags & 0xff, key, r.st[2]) &&
		    writer_add(c, w, &r, buf, r.len) < 0) {
			free(buf);
			return -1;
		}
		free(buf);
	}
	return 0;
}

static int cmp_smallest(const void *a, const void *b)
{
	const struct pack_name *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * More than MAX_PACKS packs: the smallest ones (all but MAX_PACKS / 2 - 1) become one, so
 * lookups open few files. One process at a time (a lock file); a run that finds it taken
 * leaves the merging to the holder.
 */
static void merge_packs(struct kp_facts_cache *c)
{
	struct writer w = { .fd = -1, .rfd = -1 };
	struct pack_name *names = NULL;
	size_t n, merge;
	int lock, dfd = -1;

	lock = openat(c->dirfd, "lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (lock < 0)
		return;
	if (flock(lock, LOCK_EX | LOCK_NB) < 0)
		goto out;
	dfd = openat(c->dirfd, PACK_DIR, O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || list_packs(dfd, &names, &n) < 0 || n <= MAX_PACKS)
		goto out;
	qsort(names, n, sizeof(*names), cmp_smallest);
	merge = n - (MAX_PACKS / 2 - 1);
	for (size_t i = 0; i < merge; i++) {
		struct pack p;

		if (pack_open(c, dfd, names[i].name, &p) < 0)
			continue; /* not a pack of this build: pruning removes it */
		if (merge_pack(c, &w, &p) < 0) {
			pack_close(&p);
			goto out;
		}
		pack_close(&p);
	}
	if (writer_finish(c, &w) < 0 || writer_publish(c, &w) < 0)
		goto out;
	for (size_t i = 0; i < merge; i++)
		unlinkat(dfd, names[i].name, 0);
out:
	writer_close(c, &w);
	free(names);
	if (dfd >= 0)
		close(dfd);
	close(lock); /* and the lock with it */
}

/* Every file of DIR/packs, temporary ones removed as @mode says. */
enum walk_mode {
	WALK_LOOK,  /* count only */
	WALK_TIDY,  /* also remove temporary files older than TMP_MAX_AGE (prune) */
	WALK_CLEAR, /* also remove every temporary file */
};

struct walk {
	struct pack_name *packs; /* newest first */
	size_t n;
	uint64_t removed;
};

static int walk(const char *dir, enum walk_mode mode, struct walk *w, struct kp_err *err)
{
	time_t now = time(NULL);
	struct dirent *de;
	char p[4200];
	DIR *d;
	int dfd;

	memset(w, 0, sizeof(*w));
	if ((size_t)snprintf(p, sizeof(p), "%s/%s", dir, PACK_DIR) >= sizeof(p))
		return kp_err_set(err, "%s: path too long", dir);
	d = opendir(p);
	if (!d)
		return errno == ENOENT ? 0 : kp_err_set(err, "%s: %s", p, strerror(errno));
	dfd = dirfd(d);
	while ((de = readdir(d))) {
		struct stat st;

		if (strncmp(de->d_name, ".tmp-", 5) ||
		    fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (mode == WALK_CLEAR ||
		    (mode == WALK_TIDY && st.st_mtim.tv_sec + TMP_MAX_AGE < now))
			if (unlinkat(dfd, de->d_name, 0) == 0)
				w->removed++;
	}
	if (list_packs(dfd, &w->packs, &w->n) < 0) {
		closedir(d);
		return kp_err_set(err, "out of memory");
	}
	closedir(d);
	return 0;
}

/* Counts the first @to packs @w names and their entries into @u. */
static void usage_of(const char *dir, const struct walk *w, size_t to, struct kp_cache_usage *u)
{
	struct kp_facts_cache c = { .dirfd = -1 };
	char p[4200];
	int dfd;

	u->packs = 0;
	u->entries = 0;
	u->bytes = 0;
	snprintf(p, sizeof(p), "%s/%s", dir, PACK_DIR);
	dfd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	c.build = (uint32_t)crc32(0, (const Bytef *)PACKAGE_VERSION, strlen(PACKAGE_VERSION));
	c.build = (uint32_t)crc32(c.build, (const Bytef *)KP_READER_ID, strlen(KP_READER_ID));
	for (size_t i = 0; i < to; i++) {
		struct pack pk;

		u->packs++;
		u->bytes += w->packs[i].bytes;
		if (dfd >= 0 && pack_open(&c, dfd, w->packs[i].name, &pk) == 0) {
			u->entries += pk.nrec;
			pack_close(&pk);
		}
	}
	if (dfd >= 0)
		close(dfd);
}

int kp_facts_cache_usage(const char *dir, struct kp_cache_usage *u, struct kp_err *err)
{
	struct walk w;

	memset(u, 0, sizeof(*u));
	if (walk(dir, WALK_LOOK, &w, err) < 0)
		return -1;
	usage_of(dir, &w, w.n, u);
	free(w.packs);
	return 0;
}

int kp_facts_cache_prune(const char *dir, uint64_t max_bytes, struct kp_cache_usage *u,
			 struct kp_err *err)
{
	struct walk w;
	uint64_t total = 0;
	size_t keep = 0;
	char p[4200];

	memset(u, 0, sizeof(*u));
	if (walk(dir, WALK_TIDY, &w, err) < 0)
		return -1;
	/* the newest packs that fit; the older ones go (least recently used: oldest mtime) */
	while (keep < w.n && total + w.packs[keep].bytes <= max_bytes)
		total += w.packs[keep++].bytes;
	for (size_t i = keep; i < w.n; i++) {
		snprintf(p, sizeof(p), "%s/%s/%s", dir, PACK_DIR, w.packs[i].name);
		if (unlink(p) == 0)
			w.removed++;
	}
	usage_of(dir, &w, keep, u);
	u->removed = w.removed;
	free(w.packs);
	return 0;
}

int kp_facts_cache_clear(const char *dir, struct kp_cache_usage *u, struct kp_err *err)
{
	struct walk w;
	char p[4200];

	memset(u, 0, sizeof(*u));
	if (walk(dir, WALK_CLEAR, &w, err) < 0)
		return -1;
	for (size_t i = 0; i < w.n; i++) {
		snprintf(p, sizeof(p), "%s/%s/%s", dir, PACK_DIR, w.packs[i].name);
		if (unlink(p) == 0)
			w.removed++;
	}
	u->removed = w.removed;
	free(w.packs);
	snprintf(p, sizeof(p), "%s/%s", dir, PACK_DIR);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/last-prune", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/lock", dir);
	unlink(p);
	rmdir(dir);
	return 0;
}

/* After a run that stored entries: prune when the last pruning is PRUNE_EVERY old. */
static void auto_prune(const struct kp_facts_cache *c)
{
	char stamp[4200];
	struct kp_cache_usage u;
	struct kp_err err;
	struct stat st;
	int fd;

	snprintf(stamp, sizeof(stamp), "%s/last-prune", c->dir);
	if (stat(stamp, &st) == 0 && st.st_mtim.tv_sec + PRUNE_EVERY > time(NULL))
		return;
	fd = open(stamp, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return;
	futimens(fd, NULL);
	close(fd);
	kp_facts_cache_prune(c->dir, kp_facts_cache_max_size(), &u, &err);
}

void kp_facts_cache_free(struct kp_facts_cache *c)
{
	time_t now = time(NULL);
	bool wrote = false;

	if (!c)
		return;
	/* least recently used = oldest mtime: refresh the packs hits came from, now and then */
	for (size_t i = 0; i < c->npacks; i++) {
		if (c->packs[i].used && c->packs[i].mtime + TOUCH_EVERY < now)
			futimens(c->packs[i].fd, NULL);
		pack_close(&c->packs[i]);
	}
	free(c->packs);
	if (c->n.stored || c->w.n || c->w.nspilled)
		wrote = writer_finish(c, &c->w) == 0 && writer_publish(c, &c->w) == 0;
	writer_close(c, &c->w);
	for (size_t i = 0; i < c->nenc; i++) {
		kp_facts_buf_free(c->enc[i]);
		free(c->enc[i]);
	}
	if (wrote) {
		merge_packs(c);
		auto_prune(c);
	}
	if (c->dirfd >= 0)
		close(c->dirfd);
	pthread_mutex_destroy(&c->lock);
	free(c->dir);
	EVP_MD_free(c->sha256);
	free(c);
}
