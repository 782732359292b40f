// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The facts cache (facts-cache.h): lookup, store, prune.
 *
 * Hashing: SHA-256 through libcrypto (already a dependency for signatures). The key decides
 * which facts a run trusts, so it must not collide even for files made to collide: a
 * non-cryptographic hash (xxHash, CRC) would let a crafted module borrow another module's
 * verdict. SHA-256 runs at ~1.4 GB/s here (SHA-NI), against ~30 MB/s of output for liblzma:
 * hashing a .ko.xz costs ~1/50 of decompressing it. The stat index (device, inode, size,
 * mtime, ctime -> content hash) then skips even that on warm runs: ctime changes with every
 * write, rename onto the path or chmod and cannot be set from user space, so a file with the
 * same stat key holds the same bytes (the same trust make and ccache's direct mode give it).
 */
#include "facts-cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <zlib.h>

#include "facts-serial.h"
#include "read/reader-id.h"

#define MAGIC	    "KPFACTS"
#define HEADER_LEN  72
#define KEY_LEN	    32
#define HEX_LEN	    (2 * KEY_LEN)
#define TOUCH_EVERY (24 * 3600) /* a hit refreshes an entry's mtime at most this often */
#define PRUNE_EVERY 3600	/* automatic pruning at most once an hour */
#define TMP_MAX_AGE 3600	/* a temporary file older than this was left by a crash */
#define ENTRY_MAX   ((size_t)64 << 20)
#define NAME_LEN    160 /* "s/HH/" + 64 hex digits + "-ff", or a temporary name */

struct kp_facts_cache {
	char *dir;
	int dirfd; /* O_PATH of @dir; -1: no cache directory (every lookup misses) */
	EVP_MD *sha256;
	uint32_t build; /* CRC-32 of PACKAGE_VERSION and KP_READER_ID: another build's entries miss */
	unsigned seq;	/* temporary file names; atomic */
	unsigned char made[2][256]; /* fan-out directories known to exist (c/, s/); atomic */
	struct kp_cache_counts n;   /* atomic */
};

static void count(uint64_t *v)
{
	__atomic_fetch_add(v, 1, __ATOMIC_RELAXED);
}

static void to_hex(const unsigned char *key, char *hex)
{
	static const char digits[] = "0123456789abcdef";

	for (int i = 0; i < KEY_LEN; i++) {
		hex[2 * i] = digits[key[i] >> 4];
		hex[2 * i + 1] = digits[key[i] & 15];
	}
	hex[HEX_LEN] = '\0';
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
	c->sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
	if (!c->dir || !c->sha256) {
		free(c->dir);
		EVP_MD_free(c->sha256);
		free(c);
		return NULL;
	}
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

/* The stat key's hash: which file (device, inode) in which state (size, times). */
static int stat_key(const struct kp_facts_cache *c, const struct stat *st, unsigned char *key)
{
	uint64_t v[8] = {
		(uint64_t)st->st_dev,	       (uint64_t)st->st_ino,
		(uint64_t)st->st_size,	       (uint64_t)st->st_mtim.tv_sec,
		(uint64_t)st->st_mtim.tv_nsec, (uint64_t)st->st_ctim.tv_sec,
		(uint64_t)st->st_ctim.tv_nsec, (uint64_t)st->st_mode,
	};
	unsigned char bytes[sizeof(v)];
	unsigned int len = KEY_LEN;

	for (size_t i = 0; i < KP_ARRAY_SIZE(v); i++)
		for (int j = 0; j < 8; j++)
			bytes[i * 8 + j] = (unsigned char)(v[i] >> (8 * j));
	return EVP_Digest(bytes, sizeof(bytes), key, &len, c->sha256, NULL) == 1 ? 0 : -1;
}

static bool same_file_state(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* SHA-256 of the file's bytes as they are on disk; -1 if it cannot be read or changed. */
static int content_key(const struct kp_facts_cache *c, const char *path, const struct stat *pre,
		       unsigned char *key)
{
	/* on the stack: a heap buffer this size is trimmed on every free (brk, TLB flushes) */
	unsigned char buf[65536];
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	struct kp_err err;
	struct stat st;
	uint64_t total = 0;
	unsigned int len = KEY_LEN;
	int fd = -1, r = -1;

	if (!ctx || EVP_DigestInit_ex(ctx, c->sha256, NULL) != 1)
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

/* The read options that change the facts: part of an entry's name and header. */
static uint32_t entry_flags(const struct kp_open_opts *o)
{
	return (o->full_modinfo ? 1u : 0u) | (o->sig_digest & 3u) << 1;
}

/* "c/HH/<content>-<flags>" or "s/HH/<stat key>-<flags>", relative to the cache directory. */
static void entry_name(char sub, const unsigned char *key, uint32_t flags, char *buf)
{
	char hex[HEX_LEN + 1];

	to_hex(key, hex);
	snprintf(buf, NAME_LEN, "%c/%.2s/%s-%x", sub, hex, hex, flags & 0xff);
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

/* Header fields a lookup checks; @key NULL: any content (a stat index entry). */
static bool header_ok(const struct kp_facts_cache *c, const unsigned char *h, size_t len,
		      uint32_t flags, const unsigned char *key, uint64_t file_size)
{
	unsigned char want[HEADER_LEN];

	make_header(c, want, flags, key ? key : h + 16, file_size, len - HEADER_LEN);
	memcpy(want + 64, h + 64, 4);
	return !memcmp(h, want, HEADER_LEN) &&
	       kp_load32(h + 64, false) == entry_crc(h, h + HEADER_LEN, len - HEADER_LEN);
}

/*
 * The module from the entry @name, or NULL (a miss: absent; or refused: @*refused set).
 * @key: the content it must be for (NULL: a stat index entry, any content, copied to
 * @key_out). The file must be @file_size bytes and its image fit @opts->max_size.
 */
static struct kp_module *load_entry(const struct kp_facts_cache *c, const char *name,
				    const char *path, const unsigned char *key,
				    unsigned char *key_out, const struct kp_open_opts *opts,
				    uint64_t file_size, bool *refused)
{
	size_t max = opts->max_size ? opts->max_size : KP_DEFAULT_MAX_SIZE;
	unsigned char small[16384], *buf = small;
	struct kp_module *m = NULL;
	struct stat st;
	size_t len, got = 0;
	int fd;

	*refused = false;
	fd = openat(c->dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	*refused = true;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < HEADER_LEN ||
	    (uint64_t)st.st_size > ENTRY_MAX)
		goto out;
	len = (size_t)st.st_size;
	if (len > sizeof(small)) {
		buf = malloc(len);
		if (!buf)
			goto out;
	}
	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto out;
		got += (size_t)n;
	}
	if (!header_ok(c, buf, len, entry_flags(opts), key, file_size))
		goto out;
	if (!key) {
		/* a stat index name must be a name of the entry its header's content names */
		char cname[NAME_LEN];
		struct stat cst;

		entry_name('c', buf + 16, entry_flags(opts), cname);
		if (fstatat(c->dirfd, cname, &cst, AT_SYMLINK_NOFOLLOW) < 0 ||
		    cst.st_ino != st.st_ino || cst.st_dev != st.st_dev)
			goto out;
	}
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
	*refused = false;
	if (key_out)
		memcpy(key_out, buf + 16, KEY_LEN);
	/* least recently used = oldest mtime: refresh it, but not on every hit */
	if (st.st_mtim.tv_sec + TOUCH_EVERY < time(NULL))
		futimens(fd, NULL);
out:
	if (buf != small)
		free(buf);
	close(fd);
	return m;
}

/* The fan-out directory of @name ("c/HH/..."), made once per run. */
static int make_fanout(struct kp_facts_cache *c, const char *name)
{
	unsigned idx = (unsigned)strtoul((char[3]){ name[2], name[3], '\0' }, NULL, 16) & 0xff;
	unsigned char *made = &c->made[name[0] == 's'][idx];
	char dir[8];

	if (__atomic_load_n(made, __ATOMIC_RELAXED))
		return 0;
	snprintf(dir, sizeof(dir), "%c", name[0]);
	if (mkdirat(c->dirfd, dir, 0755) < 0 && errno != EEXIST)
		return -1;
	snprintf(dir, sizeof(dir), "%.4s", name);
	if (mkdirat(c->dirfd, dir, 0755) < 0 && errno != EEXIST)
		return -1;
	__atomic_store_n(made, 1, __ATOMIC_RELAXED);
	return 0;
}

/* A name for a temporary file in @name's directory, unique across processes and threads. */
static void tmp_name(struct kp_facts_cache *c, const char *name, char *buf)
{
	unsigned seq = __atomic_fetch_add(&c->seq, 1, __ATOMIC_RELAXED);

	snprintf(buf, NAME_LEN, "%.4s/.tmp-%ld-%ld-%u", name, (long)getpid(), (long)gettid(), seq);
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

/* @to becomes another name of the entry @from (a hard link), replacing what @to was. */
static int link_entry(struct kp_facts_cache *c, const char *from, const char *to)
{
	char tmp[NAME_LEN];

	if (make_fanout(c, to) < 0)
		return -1;
	/* a new name at once; an existing one (refused, or a racing writer's) by rename */
	if (linkat(c->dirfd, from, c->dirfd, to, 0) == 0)
		return 0;
	if (errno != EEXIST)
		return -1;
	tmp_name(c, to, tmp);
	if (linkat(c->dirfd, from, c->dirfd, tmp, 0) < 0)
		return -1;
	if (renameat(c->dirfd, tmp, c->dirfd, to) < 0) {
		unlinkat(c->dirfd, tmp, 0);
		return -1;
	}
	/*
	 * rename() of two links of one file does nothing and succeeds (a racing writer linked
	 * @to to the same entry): the temporary name would stay. Gone already otherwise.
	 */
	unlinkat(c->dirfd, tmp, 0);
	return 0;
}

/* Names the unnamed (O_TMPFILE) file @fd @name, replacing what @name was; 0 or -1. */
static int publish_tmpfile(struct kp_facts_cache *c, int fd, const char *name)
{
	char proc[64], tmp[NAME_LEN];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (linkat(AT_FDCWD, proc, c->dirfd, name, AT_SYMLINK_FOLLOW) == 0)
		return 0;
	if (errno != EEXIST)
		return -1;
	tmp_name(c, name, tmp);
	if (linkat(AT_FDCWD, proc, c->dirfd, tmp, AT_SYMLINK_FOLLOW) < 0)
		return -1;
	if (renameat(c->dirfd, tmp, c->dirfd, name) < 0) {
		unlinkat(c->dirfd, tmp, 0);
		return -1;
	}
	unlinkat(c->dirfd, tmp, 0); /* as in link_entry(): left when both were one file */
	return 0;
}

/* Writes @len bytes as the entry @name: whole or not at all, whoever reads meanwhile. */
static int write_entry(struct kp_facts_cache *c, const char *name, const unsigned char *p,
		       size_t len)
{
	char dir[8], tmp[NAME_LEN];
	int fd;

	/* an unnamed file linked in once written: no temporary name to create and rename */
	snprintf(dir, sizeof(dir), "%.4s", name);
	fd = openat(c->dirfd, dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
	if (fd >= 0) {
		int r = write_all(fd, p, len) == 0 ? publish_tmpfile(c, fd, name) : -1;

		close(fd);
		if (r == 0)
			return 0;
	}
	/* no O_TMPFILE here (or no /proc): a temporary name and rename() */
	tmp_name(c, name, tmp);
	fd = openat(c->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -1;
	if (write_all(fd, p, len) < 0 || close(fd) < 0 ||
	    renameat(c->dirfd, tmp, c->dirfd, name) < 0) {
		unlinkat(c->dirfd, tmp, 0);
		return -1;
	}
	return 0;
}

/* Writes @m's entry as @cname (and @sname, the stat index's name for it, when not NULL). */
static void store_entry(struct kp_facts_cache *c, const struct kp_module *m,
			const unsigned char *key, const struct kp_open_opts *opts,
			const char *cname, const char *sname)
{
	struct kp_facts_buf b = { 0 };

	b.data = calloc(1, 16384);
	if (!b.data)
		return;
	b.cap = 16384;
	b.len = HEADER_LEN;
	if (kp_facts_encode(m, &b) < 0 || make_fanout(c, cname) < 0)
		goto out;
	make_header(c, b.data, entry_flags(opts), key, m->file_size, b.len - HEADER_LEN);
	put32(b.data + 64, entry_crc(b.data, b.data + HEADER_LEN, b.len - HEADER_LEN));
	if (write_entry(c, cname, b.data, b.len) < 0)
		goto out;
	count(&c->n.stored);
	if (sname)
		link_entry(c, cname, sname);
out:
	kp_facts_buf_free(&b);
}

int kp_facts_cache_open(struct kp_facts_cache *c, const char *path, const struct kp_open_opts *opts,
			struct kp_decoders *dec, struct kp_module **out, struct kp_err *err)
{
	struct kp_open_opts direct = *opts;
	unsigned char skey[KEY_LEN], key[KEY_LEN];
	char sname[NAME_LEN], cname[NAME_LEN];
	uint32_t flags = entry_flags(opts);
	bool have_key = false, have_skey = false, refused;
	struct stat pre, post;
	struct kp_module *m;

	direct.cache = NULL;
	*out = NULL;
	/* No cache directory; not a regular file, or gone (the reader says what it is). */
	if (c->dirfd < 0 || stat(path, &pre) < 0 || !S_ISREG(pre.st_mode))
		return kp_module_open_with(path, &direct, dec, out, err);
	if (stat_key(c, &pre, skey) == 0) {
		have_skey = true;
		entry_name('s', skey, flags, sname);
		m = load_entry(c, sname, path, NULL, NULL, opts, (uint64_t)pre.st_size, &refused);
		if (m) {
			count(&c->n.hits);
			count(&c->n.stat_hits);
			*out = m;
			return 0;
		}
		if (refused)
			count(&c->n.rejected);
	}
	if (content_key(c, path, &pre, key) == 0) {
		have_key = true;
		entry_name('c', key, flags, cname);
		m = load_entry(c, cname, path, key, NULL, opts, (uint64_t)pre.st_size, &refused);
		if (m) {
			count(&c->n.hits);
			if (have_skey)
				link_entry(c, cname, sname);
			*out = m;
			return 0;
		}
		if (refused)
			count(&c->n.rejected);
	}
	count(&c->n.misses);
	if (kp_module_open_with(path, &direct, dec, out, err) < 0)
		return -1;
	/* Store only what was read from the bytes the key names: the file did not change. */
	if (have_key && stat(path, &post) == 0 && same_file_state(&pre, &post))
		store_entry(c, *out, key, opts, cname, have_skey ? sname : NULL);
	return 0;
}

/*
 * Walking the cache: every file under DIR/c and DIR/s, two levels down. An entry and its
 * stat index name are one file (hard links): disk use counts inodes once, and pruning
 * removes every name of an inode together.
 */
enum walk_mode {
	WALK_LOOK,  /* count only */
	WALK_TIDY,  /* also remove temporary files older than TMP_MAX_AGE (prune) */
	WALK_CLEAR, /* also remove every temporary file and emptied fan-out directory */
};

struct walk_item {
	char *path;
	ino_t ino;
	time_t mtime;
	uint64_t bytes;
	bool link; /* a name in s/ */
};

struct walk {
	struct walk_item *items;
	size_t n, cap;
	uint64_t removed;
};

static int walk_add(struct walk *w, const char *path, const struct stat *st, bool link)
{
	struct walk_item *it;

	if (kp_grow(&w->items, &w->cap, w->n + 1, sizeof(*w->items)) < 0)
		return -1;
	it = &w->items[w->n];
	it->path = strdup(path);
	if (!it->path)
		return -1;
	it->ino = st->st_ino;
	it->mtime = st->st_mtim.tv_sec;
	it->bytes = (uint64_t)st->st_blocks * 512;
	it->link = link;
	w->n++;
	return 0;
}

static void walk_free(struct walk *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->items[i].path);
	free(w->items);
	memset(w, 0, sizeof(*w));
}

static void walk_remove(struct walk *w, const char *path)
{
	if (unlink(path) == 0)
		w->removed++;
}

/* Collects the files of DIR/@sub/HH, removing temporary ones as @mode says. */
static int walk_sub(const char *dir, const char *sub, enum walk_mode mode, struct walk *w,
		    struct kp_err *err)
{
	time_t now = time(NULL);
	struct dirent *de;
	char p[4096];
	DIR *top;

	if ((size_t)snprintf(p, sizeof(p), "%s/%s", dir, sub) >= sizeof(p))
		return kp_err_set(err, "%s: path too long", dir);
	top = opendir(p);
	if (!top)
		return errno == ENOENT ? 0 : kp_err_set(err, "%s: %s", p, strerror(errno));
	while ((de = readdir(top))) {
		struct dirent *fe;
		char q[4200];
		DIR *d;

		if (de->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(q, sizeof(q), "%s/%s", p, de->d_name) >= sizeof(q))
			continue;
		d = opendir(q);
		if (!d)
			continue;
		while ((fe = readdir(d))) {
			char f[4500];
			struct stat st;

			if (!strcmp(fe->d_name, ".") || !strcmp(fe->d_name, ".."))
				continue;
			snprintf(f, sizeof(f), "%s/%s", q, fe->d_name);
			if (lstat(f, &st) < 0)
				continue;
			if (!strncmp(fe->d_name, ".tmp-", 5) || !S_ISREG(st.st_mode)) {
				if (mode == WALK_CLEAR ||
				    (mode == WALK_TIDY && st.st_mtim.tv_sec + TMP_MAX_AGE < now))
					walk_remove(w, f);
				continue;
			}
			if (walk_add(w, f, &st, sub[0] == 's') < 0) {
				closedir(d);
				closedir(top);
				return kp_err_set(err, "out of memory");
			}
		}
		closedir(d);
		if (mode == WALK_CLEAR) /* the fan-out directory too, once empty */
			rmdir(q);
	}
	closedir(top);
	return 0;
}

static int walk_all(const char *dir, enum walk_mode mode, struct walk *w, struct kp_err *err)
{
	if (walk_sub(dir, "c", mode, w, err) < 0 || walk_sub(dir, "s", mode, w, err) < 0) {
		walk_free(w);
		return -1;
	}
	return 0;
}

static int cmp_age(const void *a, const void *b)
{
	const struct walk_item *x = a, *y = b;

	if (x->mtime != y->mtime)
		return x->mtime < y->mtime ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* Sorted oldest first, the names of one inode together: counts each inode once. */
static void usage_of(struct walk *w, struct kp_cache_usage *u)
{
	uint64_t removed = u->removed;

	memset(u, 0, sizeof(*u));
	u->removed = removed + w->removed;
	if (w->n > 1)
		qsort(w->items, w->n, sizeof(*w->items), cmp_age);
	for (size_t i = 0; i < w->n; i++) {
		if (!i || w->items[i].ino != w->items[i - 1].ino)
			u->bytes += w->items[i].bytes;
		u->entries += !w->items[i].link;
		u->links += w->items[i].link;
	}
}

int kp_facts_cache_usage(const char *dir, struct kp_cache_usage *u, struct kp_err *err)
{
	struct walk w = { 0 };

	memset(u, 0, sizeof(*u));
	if (walk_all(dir, WALK_LOOK, &w, err) < 0)
		return -1;
	usage_of(&w, u);
	walk_free(&w);
	return 0;
}

int kp_facts_cache_prune(const char *dir, uint64_t max_bytes, struct kp_cache_usage *u,
			 struct kp_err *err)
{
	struct walk w = { 0 };
	size_t i = 0;

	memset(u, 0, sizeof(*u));
	if (walk_all(dir, WALK_TIDY, &w, err) < 0)
		return -1;
	usage_of(&w, u);
	/* oldest inodes first, every name of each, until the rest fits */
	while (i < w.n && u->bytes > max_bytes) {
		size_t j = i;

		while (j < w.n && w.items[j].ino == w.items[i].ino)
			walk_remove(&w, w.items[j++].path);
		u->bytes -= u->bytes < w.items[i].bytes ? u->bytes : w.items[i].bytes;
		i = j;
	}
	/* recount what is left */
	for (size_t k = 0; k < i; k++)
		free(w.items[k].path);
	memmove(w.items, w.items + i, (w.n - i) * sizeof(*w.items));
	w.n -= i;
	usage_of(&w, u);
	walk_free(&w);
	return 0;
}

int kp_facts_cache_clear(const char *dir, struct kp_cache_usage *u, struct kp_err *err)
{
	struct walk w = { 0 };
	char p[4200];

	memset(u, 0, sizeof(*u));
	if (walk_all(dir, WALK_CLEAR, &w, err) < 0)
		return -1;
	for (size_t i = 0; i < w.n; i++)
		walk_remove(&w, w.items[i].path);
	/* the fan-out directories emptied above go on a second walk */
	u->removed = w.removed;
	walk_free(&w);
	if (walk_all(dir, WALK_CLEAR, &w, err) < 0)
		return -1;
	u->removed += w.removed;
	walk_free(&w);
	snprintf(p, sizeof(p), "%s/c", dir);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/s", dir);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/last-prune", dir);
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
	if (!c)
		return;
	if (c->n.stored)
		auto_prune(c);
	if (c->dirfd >= 0)
		close(c->dirfd);
	free(c->dir);
	EVP_MD_free(c->sha256);
	free(c);
}
