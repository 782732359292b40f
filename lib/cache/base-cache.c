// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The base cache's entries (base-cache.h). An entry file:
 *
 *   header   384 bytes: magic "KPBASE\r\n", format, build, payload length (64-bit), the key's
 *            material (kind and inputs, KP_BASE_KEY_LEN bytes), CRC-32 of the header
 *   payload  what the caller stored (base-symtab.c, base-kvtab.c), used where it lies; its
 *            own checks cover it (base-cache.h)
 *
 * in host byte order (the build tag differs between architectures' builds anyway).
 */
#include "base-cache.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "cache/base-id.h"
#include "file/bytes.h"
#include "file/rootfs.h"
#include "trusted-dir.h"
#include "util/fs-trust.h"
#include "util/io.h"
#include "util/crc32.h"

#define MAGIC	    "KPBASE\r\n"
#define HEADER_LEN  384
#define TMP_MAX_AGE 3600 /* a temporary file older than this was left by a crash */
#define TOUCH_EVERY 3600 /* a hit refreshes its entry's mtime when older (as run-cache-replay.c) */

struct kp_base_cache {
	char *root;
	int dfd;     /* O_PATH descriptor of ROOT/base-v1, -1 before it is opened */
	bool failed; /* opening it failed (refused or absent): not tried again for lookups */
	bool made;   /* opened with create */
	uint32_t build;
	struct kp_base_counts n;
};

static uint32_t build_tag(void)
{
	uint32_t b = kp_crc32(0, PACKAGE_VERSION, strlen(PACKAGE_VERSION));

	return kp_crc32(b, KP_BASE_ID, strlen(KP_BASE_ID));
}

/* ------------------------------------------------------------------ inputs */

/* The state settled (kp_state_settled()) before now, the input opened and not read yet. */
static bool settled(const struct stat *st)
{
	struct timespec now;
	uint64_t v[8];

	if (clock_gettime(CLOCK_REALTIME, &now) < 0)
		return false;
	kp_file_state(st, v);
	return kp_state_settled(v, &now);
}

int kp_base_input_open(struct kp_base_input *in, const char *path, struct kp_err *err)
{
	return kp_base_input_open_in(in, NULL, path, err);
}

int kp_base_input_open_in(struct kp_base_input *in, const struct kp_root_dir *root,
			  const char *path, struct kp_err *err)
{
	int cls;

	memset(in, 0, sizeof(*in));
	in->fd = kp_open_regular_in(root, path, &in->st, err);
	if (in->fd < 0)
		return -1;
	cls = kp_fs_class_of_fd(in->fd);
	in->fs_class = cls;
	in->trusted = cls >= 0 && kp_state_trusted(&in->st, (enum kp_fs_class)cls, geteuid()) &&
		      settled(&in->st);
	return 0;
}

int kp_base_input_read(struct kp_base_input *in, size_t max, struct kp_err *err)
{
	size_t cap, len = 0;
	struct stat after;
	unsigned char *buf;

	if (in->raw)
		return 0;
	/* to the end whatever the size says (procfs' config.gz says 0) */
	cap = in->st.st_size > 0 && (uint64_t)in->st.st_size < max ? (size_t)in->st.st_size + 1
								   : 65536;
	buf = malloc(cap);
	if (!buf)
		return kp_err_set(err, "out of memory");
	for (;;) {
		ssize_t r;

		if (len == cap) {
			size_t ncap = cap * 2;
			unsigned char *nb;

			if (cap > max) {
				free(buf);
				return kp_err_errno(err, EFBIG, "larger than %zu bytes", max);
			}
			nb = realloc(buf, ncap);
			if (!nb) {
				free(buf);
				return kp_err_set(err, "out of memory");
			}
			buf = nb;
			cap = ncap;
		}
		r = kp_pread_all(in->fd, buf + len, cap - len, len);
		if (r < 0) {
			int e = errno;

			free(buf);
			return kp_err_errno(err, e, "read error: %s", strerror(e));
		}
		len += (size_t)r;
		if (len < cap)
			break;
	}
	if (len > max) {
		free(buf);
		return kp_err_errno(err, EFBIG, "larger than %zu bytes", max);
	}
	in->raw = buf;
	in->len = len;
	if (in->trusted) {
		uint64_t a[8], b[8];

		kp_file_state(&in->st, a);
		if (fstat(in->fd, &after) < 0)
			in->changed = true;
		else {
			kp_file_state(&after, b);
			in->changed = memcmp(a, b, sizeof(a)) != 0;
		}
	}
	return 0;
}

int kp_base_input_vouch(struct kp_base_input *in, const char *id)
{
	if (strlen(id) >= sizeof(in->identity) || in->fs_class != KP_FS_KERNEL || !*id)
		return -1;
	snprintf(in->identity, sizeof(in->identity), "%s", id);
	return 0;
}

void kp_base_input_close(struct kp_base_input *in)
{
	if (in->fd >= 0)
		close(in->fd);
	free(in->raw);
	memset(in, 0, sizeof(*in));
	in->fd = -1;
}

/* FNV-1a, 64-bit, from @h: the entry's name only (the key is compared whole). */
static uint64_t fnv64(uint64_t h, const unsigned char *p, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static int sha256(const unsigned char *p, size_t len, unsigned char out[32])
{
	unsigned n = 0;

	/* OpenSSL only for an input known by content: its start-up costs the hook ~1 ms */
	return EVP_Digest(p, len, out, &n, EVP_sha256(), NULL) == 1 && n == 32 ? 0 : -1;
}

int kp_base_key_make(struct kp_base_key *k, const char *kind, struct kp_base_input *const *in,
		     size_t n, size_t max, struct kp_err *err)
{
	const uint32_t head[2] = { KP_BASE_CACHE_FORMAT, build_tag() };
	uint64_t h1, h2;

	memset(k, 0, sizeof(*k));
	if (strlen(kind) >= 16 || n > KP_BASE_MAX_INPUTS)
		return kp_err_set(err, "base cache: bad key (%s, %zu inputs)", kind, n);
	memcpy(k->material, kind, strlen(kind));
	k->storable = true;
	for (size_t i = 0; i < n; i++) {
		unsigned char *m = k->material + 16 + 80 * i;
		uint64_t v[10] = { 0 };

		if (in[i]->identity[0]) {
			v[0] = 3; /* by the caller's identity, with size, device and inode */
			v[1] = (uint64_t)in[i]->st.st_size;
			v[2] = (uint64_t)in[i]->st.st_dev;
			v[3] = (uint64_t)in[i]->st.st_ino;
			memcpy(m, v, 32);
			memcpy(m + 32, in[i]->identity, strnlen(in[i]->identity, 47));
		} else if (in[i]->trusted) {
			v[0] = 1; /* by state */
			kp_file_state(&in[i]->st, v + 1);
			memcpy(m, v, sizeof(v));
		} else {
			if (kp_base_input_read(in[i], max, err) < 0)
				return -1;
			v[0] = 2; /* by content */
			v[1] = in[i]->len;
			memcpy(m, v, 16);
			if (sha256(in[i]->raw, in[i]->len, m + 16) < 0)
				return kp_err_set(err, "SHA-256 failed");
		}
		if (in[i]->changed)
			k->storable = false;
	}
	/* the name also depends on the format and build: another build's entry is not in the way */
	h1 = fnv64(0xcbf29ce484222325ull, (const unsigned char *)head, sizeof(head));
	h1 = fnv64(h1, k->material, sizeof(k->material));
	h2 = fnv64(0x84222325cbf29ce4ull ^ h1, k->material, sizeof(k->material));
	memcpy(k->id, &h1, 8);
	memcpy(k->id + 8, &h2, 8);
	return 0;
}

/* ------------------------------------------------------------------ entries */

struct kp_base_cache *kp_base_cache_new(const char *root)
{
	struct kp_base_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->root = strdup(root);
	if (!c->root) {
		free(c);
		return NULL;
	}
	c->dfd = -1;
	c->build = build_tag();
	return c;
}

void kp_base_cache_free(struct kp_base_cache *c)
{
	if (!c)
		return;
	if (c->dfd >= 0)
		close(c->dfd);
	free(c->root);
	free(c);
}

/* The entries' directory (opened once, made when @create); -1 when it cannot be used. */
static int entries_dir(struct kp_base_cache *c, bool create)
{
	struct kp_err err = { 0 };
	int rootfd;

	if (c->dfd >= 0 || (c->failed && !create) || (create && c->failed && c->made))
		return c->dfd;
	rootfd = kp_trusted_dir_open(c->root, create, &err);
	if (rootfd >= 0) {
		c->dfd = kp_trusted_subdir(rootfd, KP_BASE_CACHE_DIR, create, &err);
		close(rootfd);
	}
	c->failed = c->dfd < 0;
	c->made = c->made || create;
	return c->dfd;
}

static void entry_name(const struct kp_base_key *k, char *buf, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t j = 0;

	for (size_t i = 0; i < sizeof(k->id) && j + 3 < len; i++) {
		buf[j++] = hex[k->id[i] >> 4];
		buf[j++] = hex[k->id[i] & 15];
	}
	snprintf(buf + j, len - j, ".base");
}

static void header(const struct kp_base_cache *c, const struct kp_base_key *k, uint64_t len,
		   unsigned char h[HEADER_LEN])
{
	uint32_t fmt = KP_BASE_CACHE_FORMAT, crc;

	memset(h, 0, HEADER_LEN);
	memcpy(h, MAGIC, 8);
	memcpy(h + 8, &fmt, 4);
	memcpy(h + 12, &c->build, 4);
	memcpy(h + 16, &len, 8);
	memcpy(h + 24, k->material, sizeof(k->material));
	crc = kp_crc32(0, h, HEADER_LEN - 4);
	memcpy(h + HEADER_LEN - 4, &crc, 4);
}

int kp_base_cache_get(struct kp_base_cache *c, const struct kp_base_key *k, struct kp_base_map *m)
{
	unsigned char want[HEADER_LEN];
	char name[80];
	struct stat st;
	uint64_t len;
	void *p;
	int dfd, fd;

	memset(m, 0, sizeof(*m));
	if (!c || (dfd = entries_dir(c, false)) < 0)
		return 0;
	entry_name(k, name, sizeof(name));
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !kp_trusted_file(&st) || st.st_size < HEADER_LEN ||
	    (uint64_t)st.st_size > SIZE_MAX) {
		close(fd);
		__atomic_add_fetch(&c->n.rejected, 1, __ATOMIC_RELAXED);
		return 0;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		close(fd);
		return 0;
	}
	memcpy(&len, (const unsigned char *)p + 16, 8);
	header(c, k, len, want);
	if (memcmp(p, want, HEADER_LEN) || len != (uint64_t)st.st_size - HEADER_LEN) {
		close(fd);
		munmap(p, (size_t)st.st_size);
		__atomic_add_fetch(&c->n.rejected, 1, __ATOMIC_RELAXED);
		return 0;
	}
	/* aged by last use (prune removes the least recently used): refreshed hourly at most */
	if (st.st_mtim.tv_sec + TOUCH_EVERY < time(NULL))
		(void)futimens(fd, NULL);
	close(fd);
	m->addr = p;
	m->maplen = (size_t)st.st_size;
	m->data = (const unsigned char *)p + HEADER_LEN;
	m->len = (size_t)len;
	__atomic_add_fetch(&c->n.hits, 1, __ATOMIC_RELAXED);
	return 1;
}

void kp_base_map_release(struct kp_base_map *m)
{
	if (m->addr)
		munmap(m->addr, m->maplen);
	memset(m, 0, sizeof(*m));
}

static bool is_entry(const char *name)
{
	size_t n = strlen(name);

	return name[0] != '.' && n > 5 && !strcmp(name + n - 5, ".base");
}

struct sweep {
	time_t now;
	bool all;
	uint64_t removed;
};

/* Entries are listed; stale temporary files (all of them for clear) are removed on the way. */
static bool keep(int dfd, const char *name, const struct stat *st, void *arg)
{
	struct sweep *s = arg;

	if (!strncmp(name, ".tmp-", 5)) {
		if ((s->all || st->st_mtim.tv_sec + TMP_MAX_AGE < s->now) &&
		    unlinkat(dfd, name, 0) == 0)
			s->removed++;
		return false;
	}
	return is_entry(name);
}

/*
 * Removes the oldest entries (least recently used: a hit refreshes the mtime) beyond @keep_n
 * or beyond @max_bytes in all; counts what is kept into @u (may be NULL).
 */
static void prune(int dfd, size_t keep_n, uint64_t max_bytes, struct sweep *s,
		  struct kp_base_usage *u)
{
	struct kp_dir_file *files = NULL;
	uint64_t total = 0;
	size_t n = 0, k = 0;

	if (kp_dir_newest(dfd, keep, s, &files, &n) < 0)
		return;
	while (k < n && k < keep_n && total + files[k].bytes <= max_bytes)
		total += files[k++].bytes;
	for (size_t i = k; i < n; i++)
		if (unlinkat(dfd, files[i].name, 0) == 0)
			s->removed++;
	if (u) {
		u->entries = k;
		u->bytes = total;
	}
	free(files);
}

static int tmpfile_in(int dfd, char *tmp, size_t len)
{
	int fd = openat(dfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
	struct timespec now;

	tmp[0] = '\0';
	if (fd < 0) {
		clock_gettime(CLOCK_REALTIME, &now);
		snprintf(tmp, len, ".tmp-%ld-%ld", (long)getpid(), now.tv_nsec);
		fd = openat(dfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd < 0)
			tmp[0] = '\0';
	}
	/* 0644 whatever the umask: a group-writable entry is never believed */
	if (fd >= 0 && fchmod(fd, 0644) < 0) {
		if (tmp[0])
			unlinkat(dfd, tmp, 0);
		close(fd);
		return -1;
	}
	return fd;
}

int kp_base_cache_put(struct kp_base_cache *c, const struct kp_base_key *k, const void *payload,
		      size_t len)
{
	unsigned char h[HEADER_LEN];
	char name[80], tmp[64], proc[64];
	struct sweep s = { .now = time(NULL) };
	int dfd, fd, r;

	if (!c || !k->storable || (dfd = entries_dir(c, true)) < 0)
		return -1;
	fd = tmpfile_in(dfd, tmp, sizeof(tmp));
	if (fd < 0)
		return -1;
	header(c, k, len, h);
	entry_name(k, name, sizeof(name));
	r = kp_write_all(fd, h, HEADER_LEN) < 0 || kp_write_all(fd, payload, len) < 0 ? -1 : 0;
	if (r == 0 && !tmp[0]) {
		/* the unnamed file gets a temporary name, then replaces the entry in one rename */
		struct timespec now;

		clock_gettime(CLOCK_REALTIME, &now);
		snprintf(tmp, sizeof(tmp), ".tmp-%ld-%ld", (long)getpid(), now.tv_nsec);
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		r = linkat(AT_FDCWD, proc, dfd, tmp, AT_SYMLINK_FOLLOW);
		if (r < 0)
			tmp[0] = '\0';
	}
	/*
	 * Replaces what is there: a damaged or refused entry of this key (another run storing the
	 * same key writes the same bytes). A reader that mapped the old file keeps it.
	 */
	if (r == 0)
		r = renameat(dfd, tmp, dfd, name);
	if (r < 0 && tmp[0])
		unlinkat(dfd, tmp, 0);
	close(fd);
	if (r < 0)
		return -1;
	__atomic_add_fetch(&c->n.stored, 1, __ATOMIC_RELAXED);
	prune(dfd, KP_BASE_CACHE_KEEP, UINT64_MAX, &s, NULL);
	return 0;
}

void kp_base_cache_drop(struct kp_base_cache *c, const struct kp_base_key *k)
{
	char name[80];
	int dfd;

	if (!c || (dfd = entries_dir(c, false)) < 0)
		return;
	entry_name(k, name, sizeof(name));
	unlinkat(dfd, name, 0);
	__atomic_add_fetch(&c->n.rejected, 1, __ATOMIC_RELAXED);
	/* counted as a hit by kp_base_cache_get(): it was not one */
	__atomic_sub_fetch(&c->n.hits, 1, __ATOMIC_RELAXED);
}

void kp_base_cache_counts(const struct kp_base_cache *c, struct kp_base_counts *out)
{
	memset(out, 0, sizeof(*out));
	if (!c)
		return;
	out->hits = __atomic_load_n(&c->n.hits, __ATOMIC_RELAXED);
	out->misses = __atomic_load_n(&c->n.misses, __ATOMIC_RELAXED);
	out->stored = __atomic_load_n(&c->n.stored, __ATOMIC_RELAXED);
	out->rejected = __atomic_load_n(&c->n.rejected, __ATOMIC_RELAXED);
}

void kp_base_cache_note_miss(struct kp_base_cache *c)
{
	if (c)
		__atomic_add_fetch(&c->n.misses, 1, __ATOMIC_RELAXED);
}

int kp_base_cache_clear(const char *root, uint64_t *removed, struct kp_err *err)
{
	struct sweep s = { .now = time(NULL), .all = true };
	int rootfd, dfd;

	*removed = 0;
	rootfd = kp_trusted_dir_open(root, false, err);
	if (rootfd < 0)
		return kp_err_errnum(err) == ENOENT ? 0 : -1;
	dfd = kp_trusted_subdir_tidy(rootfd, KP_BASE_CACHE_DIR, true, &s.removed, err);
	if (dfd < 0) {
		close(rootfd);
		*removed = s.removed;
		return kp_err_errnum(err) == ENOENT ? 0 : kp_err_prefix(err, root);
	}
	prune(dfd, 0, 0, &s, NULL);
	close(dfd);
	unlinkat(rootfd, KP_BASE_CACHE_DIR, AT_REMOVEDIR);
	close(rootfd);
	*removed = s.removed;
	return 0;
}

/* The entries of ROOT/base-v1 kept within @keep_n and @max_bytes (show: all of them). */
static int sweep_at(const char *root, bool tidy, size_t keep_n, uint64_t max_bytes,
		    struct kp_base_usage *u, struct kp_err *err)
{
	struct sweep s = { .now = time(NULL), .all = false };
	int rootfd, dfd;

	memset(u, 0, sizeof(*u));
	rootfd = kp_trusted_dir_open(root, false, err);
	if (rootfd < 0)
		return kp_err_errnum(err) == ENOENT ? 0 : -1;
	dfd = kp_trusted_subdir_tidy(rootfd, KP_BASE_CACHE_DIR, tidy, &s.removed, err);
	close(rootfd);
	if (dfd < 0) {
		u->removed = s.removed;
		return kp_err_errnum(err) == ENOENT ? 0 : kp_err_prefix(err, root);
	}
	if (!tidy)
		s.now = 0; /* show: no temporary file is old enough to go */
	prune(dfd, keep_n, max_bytes, &s, u);
	close(dfd);
	u->removed = s.removed;
	return 0;
}

int kp_base_cache_usage(const char *root, struct kp_base_usage *u, struct kp_err *err)
{
	return sweep_at(root, false, SIZE_MAX, UINT64_MAX, u, err);
}

int kp_base_cache_prune(const char *root, uint64_t max_bytes, struct kp_base_usage *u,
			struct kp_err *err)
{
	return sweep_at(root, true, KP_BASE_CACHE_KEEP, max_bytes, u, err);
}

/* kp_boot_id(): base-cache.h. */
int kp_boot_id(const struct kp_root_dir *root, char *buf, size_t size)
{
	struct kp_base_input in = { .fd = -1 };
	struct kp_err why = { 0 };
	char *path = kp_root_path(root ? root->path : NULL, "proc/sys/kernel/random/boot_id");
	ssize_t n = -1;
	size_t i;

	if (path && kp_base_input_open_in(&in, root, path, &why) == 0 &&
	    in.fs_class == KP_FS_KERNEL)
		n = pread(in.fd, buf, size - 1, 0);
	kp_base_input_close(&in);
	free(path);
	if (n < 32)
		return -1;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	for (i = 0; buf[i]; i++)
		if (!strchr("0123456789abcdef-", buf[i]))
			return -1;
	return i >= 32 ? 0 : -1;
}
