// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The result cache (run-cache.h): the key, replaying an entry, recording a run's output and
 * storing it. Entry layout, little-endian:
 *
 *   header     64 bytes: magic, format, exit status, output length, key length, manifest
 *              length, store length (0: none; entries before it have 0 there), CRC-32 of
 *              the whole file (its own field 0)
 *   output     chunks in the order they were written: stream (1 stdout, 2 stderr), length
 *              (32 bits), bytes
 *   key        the bytes build_key() made (compared whole: the file name is only its hash)
 *   manifest   inputs.h's
 *   store      what the command kept for a later run's miss (kp_run_cache_keep()), opaque
 */
#include "run-cache.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "file/inputs.h"
#include "file/bytes.h"
#include "cache/facts-cache.h"
#include "run-cache-internal.h"
#include "trusted-dir.h"
#include "util/io.h"

#define MAGIC	    "KPRUNS1"
#define HDR_LEN	    64
#define CAP_BUF	    ((size_t)64 << 10)
#define TOUCH_EVERY 3600 /* a hit refreshes its entry's mtime (least recently used) */

extern char **environ;

struct cap {
	struct kp_run_cache *rc;
	int fd; /* the real descriptor */
	unsigned char stream;
	char *vbuf; /* stdout's buffer: glibc ignores a size given without one */
};

struct kp_run_cache {
	int dfd;       /* runs-vN, a trusted directory (trusted-dir.h), O_PATH */
	char name[32]; /* <hash>.run */
	struct kbuf key;
	/* recording */
	struct kp_inputs *in;
	struct cap cap_out, cap_err;
	FILE *orig_out, *orig_err, *out, *err;
	int tfd;       /* the entry being written (unnamed), or -1 */
	char tmp[64];  /* its temporary name when O_TMPFILE is refused */
	int ifd;       /* the inputs recorder's spill file (unnamed), or -1 */
	char itmp[64]; /* its temporary name when O_TMPFILE is refused */
	uint64_t olen; /* output bytes (chunks) so far */
	uint32_t crc;
	unsigned char *buf;
	size_t blen;
	pthread_mutex_t lock; /* stdout and stderr may be written from two threads at once */
	bool broken;	      /* a write failed: nothing is stored */
	size_t ninputs;
	bool rehash_over;    /* the replay gave up: more than KP_INPUTS_REHASH_MAX to hash */
	char note[256];	     /* what a replay did, for KOPOLICY_CACHE_STATS */
	unsigned char *keep; /* the store for this run's entry (kp_run_cache_keep()) */
	size_t nkeep;
	unsigned char *prev; /* the store of the entry a miss found (kp_run_cache_previous()) */
	size_t nprev;
	/* the inputs of that entry that changed (kp_run_cache_changes()), when @prev is set */
	struct kp_inputs_changed changed;
	char keep_note[512]; /* the command's addition to the note */
};

int kp_kbuf_add(struct kbuf *k, const void *p, size_t len)
{
	unsigned char l[4];

	if (kp_grow(&k->p, &k->cap, k->len + len + 4, 1) < 0)
		return -1;
	for (int i = 0; i < 4; i++)
		l[i] = (unsigned char)(len >> (8 * i));
	memcpy(k->p + k->len, l, 4);
	memcpy(k->p + k->len + 4, p, len);
	k->len += len + 4;
	return 0;
}

static int add_str(struct kbuf *k, const char *s)
{
	return kp_kbuf_add(k, s, strlen(s));
}

static int add_state(struct kbuf *k, const char *path)
{
	struct stat st;
	uint64_t v[6];

	if (stat(path, &st) < 0)
		return -1;
	v[0] = (uint64_t)st.st_dev;
	v[1] = (uint64_t)st.st_ino;
	v[2] = (uint64_t)st.st_size;
	v[3] = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
	v[4] = (uint64_t)st.st_ctim.tv_sec * 1000000000u + (uint64_t)st.st_ctim.tv_nsec;
	v[5] = (uint64_t)st.st_mode;
	return add_str(k, path) < 0 ? -1 : kp_kbuf_add(k, v, sizeof(v));
}

static int add_lib(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	/* the executable (""), the vDSO: not files */
	if (info->dlpi_name && info->dlpi_name[0] == '/')
		return add_state(arg, info->dlpi_name) < 0 ? 1 : 0;
	return 0;
}

/* The environment variables that can change what a command prints. */
static bool env_counts(const char *e)
{
	/* the caches' own settings: where and how big, and the statistics line (not captured) */
	static const char *const not [] = { "KOPOLICY_CACHE_DIR=", "KOPOLICY_CACHE_MAX_SIZE=",
					    "KOPOLICY_CACHE_STATS=", "KOPOLICY_RUN_CACHE=" };
	static const char *const pre[] = { "KOPOLICY_", "NO_COLOR=", "TERM=",	"MODPROBE_",
					   "OPENSSL_",	"LD_",	     "LANG=",	"LC_",
					   "KMOD_",	"TZ=",	     "MALLOC_", "GLIBC_" };

	for (size_t i = 0; i < KP_ARRAY_SIZE(not ); i++)
		if (!strncmp(e, not [i], strlen(not [i])))
			return false;
	for (size_t i = 0; i < KP_ARRAY_SIZE(pre); i++)
		if (!strncmp(e, pre[i], strlen(pre[i])))
			return true;
	return false;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The buffer glibc gives stdout (_IO_file_doallocate()): st_blksize when below BUFSIZ. */
static size_t out_buffer_size(void)
{
	struct stat st;

	if (fstat(STDOUT_FILENO, &st) == 0 && st.st_blksize > 0 && st.st_blksize < BUFSIZ)
		return (size_t)st.st_blksize;
	return BUFSIZ;
}

/* Everything besides the inputs that decides the output; 0, or -1 with @why (not cacheable). */
static int build_key(struct kp_run_cache *rc, int argc, char **argv, char *why, size_t wlen)
{
	struct kbuf *k = &rc->key;
	char exe[PATH_MAX], cwd[PATH_MAX];
	const char *env[256];
	struct stat so, se;
	struct utsname u;
	size_t nenv = 0;
	ssize_t n;
	long v[8];

	snprintf(why, wlen, "out of memory");
	if (add_str(k, "kopolicy run v" PACKAGE_VERSION) < 0)
		return -1;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0 || (size_t)n >= sizeof(exe) - 1) {
		snprintf(why, wlen,
			 "/proc/self/exe cannot be read (%s): the executable is not known",
			 n < 0 ? strerror(errno) : "too long");
		return -1;
	}
	exe[n] = '\0';
	/* a rebuilt or upgraded binary or library is another key */
	if (add_state(k, exe) < 0) {
		snprintf(
			why, wlen,
			"the executable %s cannot be stat()ed (%s): a replaced binary would not be "
			"told from this one",
			exe, strerror(errno));
		return -1;
	}
	if (dl_iterate_phdr(add_lib, k) != 0) {
		snprintf(why, wlen, "a loaded library cannot be stat()ed (%s)", strerror(errno));
		return -1;
	}
	for (int i = 0; i < argc; i++)
		if (add_str(k, argv[i]) < 0)
			return -1;
	if (!getcwd(cwd, sizeof(cwd)) || !strncmp(cwd, "/proc", 5) || !strncmp(cwd, "/sys", 4)) {
		snprintf(why, wlen, "the working directory is unknown or on /proc or /sys");
		return -1;
	}
	if (add_str(k, cwd) < 0)
		return -1;
	for (char **e = environ; e && *e; e++) {
		if (!env_counts(*e))
			continue;
		if (nenv == KP_ARRAY_SIZE(env)) {
			snprintf(why, wlen, "more than %zu KOPOLICY_, LC_, LD_, ... variables",
				 KP_ARRAY_SIZE(env));
			return -1;
		}
		env[nenv++] = *e;
	}
	qsort(env, nenv, sizeof(*env), cmp_str);
	for (size_t i = 0; i < nenv; i++)
		if (add_str(k, env[i]) < 0)
			return -1;
	if (uname(&u) < 0) {
		snprintf(why, wlen, "uname() failed (%s)", strerror(errno));
		return -1;
	}
	if (add_str(k, u.sysname) < 0 || add_str(k, u.release) < 0 || add_str(k, u.version) < 0 ||
	    add_str(k, u.machine) < 0)
		return -1;
	v[0] = isatty(STDIN_FILENO);
	v[1] = isatty(STDOUT_FILENO);
	v[2] = isatty(STDERR_FILENO);
	v[3] = sysconf(_SC_NPROCESSORS_ONLN);
	v[4] = (long)geteuid();
	v[5] = (long)getegid();
	/* how stdout's writes are cut, and whether stderr's land between them in one file */
	v[6] = (long)out_buffer_size();
	v[7] = fstat(STDOUT_FILENO, &so) == 0 && fstat(STDERR_FILENO, &se) == 0 &&
	       so.st_dev == se.st_dev && so.st_ino == se.st_ino;
	return kp_kbuf_add(k, v, sizeof(v));
}

int kp_run_cache_dir(const char *root, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/runs-v%d", root, KP_RUNS_FORMAT);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* ROOT/runs-vN, made when missing, when it and ROOT pass the trust test; -1 otherwise. */
static int open_dir(const char *root)
{
	int rootfd = kp_trusted_dir_open(root, true, NULL), dfd;

	if (rootfd < 0)
		return -1;
	dfd = kp_trusted_subdir(rootfd, KP_RC_DIR_NAME, true, NULL);
	close(rootfd);
	return dfd;
}

static bool is_off(const char *v)
{
	return v && (!strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "no"));
}

bool kp_run_cache_wanted(const char *cmd, int argc, char **argv)
{
	static const char *const cacheable[] = { "check", "graph", "info", "explain" };
	bool known = false;

	for (size_t i = 0; i < KP_ARRAY_SIZE(cacheable); i++)
		known |= !strcmp(cmd, cacheable[i]);
	if (!known || is_off(getenv("KOPOLICY_RUN_CACHE")))
		return false;
	for (int i = 0; i < argc; i++)
		if (!strcmp(argv[i], "--no-cache") || !strcmp(argv[i], "--running") ||
		    !strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return false;
	return true;
}

struct kp_run_cache *kp_run_cache_new(const char *root, const char *cmd, int argc, char **argv,
				      char *why, size_t wlen)
{
	struct kp_run_cache *rc;
	uint64_t h = 0xcbf29ce484222325u;

	if (wlen)
		why[0] = '\0';
	if (!kp_run_cache_wanted(cmd, argc, argv))
		return NULL;
	snprintf(why, wlen, "out of memory");
	rc = calloc(1, sizeof(*rc));
	if (!rc)
		return NULL;
	if (pthread_mutex_init(&rc->lock, NULL) != 0) {
		free(rc);
		return NULL;
	}
	rc->tfd = -1;
	rc->ifd = -1;
	rc->dfd = open_dir(root);
	if (rc->dfd < 0)
		snprintf(why, wlen, "%s/%s cannot be opened or made, or is not trusted", root,
			 KP_RC_DIR_NAME);
	if (rc->dfd < 0 || build_key(rc, argc, argv, why, wlen) < 0) {
		if (rc->dfd >= 0)
			close(rc->dfd);
		pthread_mutex_destroy(&rc->lock);
		free(rc->key.p);
		free(rc);
		return NULL;
	}
	for (size_t i = 0; i < rc->key.len; i++) {
		h ^= rc->key.p[i];
		h *= 0x100000001b3u;
	}
	snprintf(rc->name, sizeof(rc->name), "%016llx.run", (unsigned long long)h);
	if (wlen)
		why[0] = '\0';
	return rc;
}

static uint32_t entry_crc(const unsigned char *p, size_t len)
{
	unsigned char h[HDR_LEN];

	memcpy(h, p, HDR_LEN);
	memset(h + 48, 0, 4);
	return (uint32_t)crc32_z(crc32(0, h, HDR_LEN), p + HDR_LEN, len - HDR_LEN);
}

/* The output chunks of @p (@len bytes) are well formed; written to stdout/stderr if @write. */
static bool chunks(const unsigned char *p, uint64_t len, bool write)
{
	uint64_t off = 0;

	while (off < len) {
		uint32_t n;

		if (len - off < 5 || (p[off] != 1 && p[off] != 2))
			return false;
		n = kp_load32(p + off + 1, false);
		if (len - off - 5 < n)
			return false;
		if (write)
			kp_write_all(p[off] == 1 ? STDOUT_FILENO : STDERR_FILENO, p + off + 5, n);
		off += 5 + (uint64_t)n;
	}
	return true;
}

/* An entry mapped for a replay. */
struct replay {
	const struct kp_run_cache *rc;
	const unsigned char *m;
	uint64_t size, olen, klen, mlen, slen;
	bool intact;	      /* whole, ours, the same key: only its inputs may have changed */
	int how;	      /* kp_inputs_recheck()'s answer */
	unsigned char *fresh; /* the manifest with new states, when they are to be stored */
	/* the modules hashed again */
	struct kp_inputs_rehash rh;
};

/* Under kp_bytes_guard() (a file truncated under the mapping): 1 when the entry is whole,
 * ours and its inputs all unchanged, else 0. */
static int entry_holds(void *arg)
{
	struct replay *r = arg;
	const unsigned char *m = r->m;

	if (!(!memcmp(m, MAGIC, 8) && kp_load32(m + 8, false) == KP_RUNS_FORMAT &&
	      r->olen <= r->size && r->klen <= r->size && r->mlen <= r->size &&
	      r->slen <= r->size && HDR_LEN + r->olen + r->klen + r->mlen + r->slen == r->size &&
	      r->klen == r->rc->key.len && !memcmp(m + HDR_LEN + r->olen, r->rc->key.p, r->klen) &&
	      kp_load32(m + 48, false) == entry_crc(m, (size_t)r->size) &&
	      chunks(m + HDR_LEN, r->olen, false)))
		return 0;
	r->intact = true;
	r->how = kp_inputs_recheck_counted(m + HDR_LEN + r->olen + r->klen, (size_t)r->mlen,
					   &r->fresh, &r->rh);
	return r->how != 0;
}

/*
 * Under kp_bytes_guard(): writes the replayed entry again to @r->rc's unnamed file (its
 * descriptor in @r->rc->tfd) with the manifest @r->fresh; the new header is left in @r->rc's
 * buffer. 0 or -1.
 */
static int rewrite(void *arg)
{
	const struct replay *r = arg;
	struct kp_run_cache *rc = (struct kp_run_cache *)r->rc;
	uint64_t body = r->olen + r->klen;
	const unsigned char *store = r->m + HDR_LEN + body + r->mlen;
	unsigned char h[HDR_LEN];
	uint32_t crc;

	memcpy(h, r->m, HDR_LEN);
	memset(h + 48, 0, 4);
	crc = (uint32_t)crc32_z(crc32(0, h, HDR_LEN), r->m + HDR_LEN, (size_t)body);
	crc = (uint32_t)crc32_z(crc, r->fresh, (size_t)r->mlen);
	crc = (uint32_t)crc32_z(crc, store, (size_t)r->slen);
	kp_store32(h + 48, crc);
	if (kp_write_all(rc->tfd, h, HDR_LEN) < 0 ||
	    kp_write_all(rc->tfd, r->m + HDR_LEN, (size_t)body) < 0 ||
	    kp_write_all(rc->tfd, r->fresh, (size_t)r->mlen) < 0 ||
	    kp_write_all(rc->tfd, store, (size_t)r->slen) < 0)
		return -1;
	memcpy(rc->buf, h, HDR_LEN);
	return 0;
}

/*
 * A hit through its inputs' bytes (states changed, as after a depmod that wrote the same
 * indexes): the entry stored again with the new states, so that the next replay needs
 * stat()s only. Best effort: the replay stands whatever happens here.
 */
static const char *refresh(struct kp_run_cache *rc, struct replay *r, struct kp_bytes *b)
{
	unsigned char h[HDR_LEN];
	struct kp_err err;
	const char *why = "cannot write the entry";

	rc->buf = malloc(HDR_LEN);
	rc->tfd = kp_rc_tmpfile(rc->dfd, rc->tmp, sizeof(rc->tmp));
	if (rc->buf && rc->tfd >= 0 && kp_bytes_guard(b, rewrite, r, &err) == 0) {
		memcpy(h, rc->buf, HDR_LEN);
		if (kp_rc_finish_entry(rc->tfd, h, r->size) == 0 &&
		    kp_rc_publish(rc->dfd, rc->tfd, rc->tmp, rc->name, r->size) == 0) {
			why = NULL;
			rc->tmp[0] = '\0'; /* named now: not to be removed */
		}
	}
	free(rc->buf);
	rc->buf = NULL;
	kp_rc_tmp_drop(rc->dfd, rc->tfd, rc->tmp);
	rc->tfd = -1;
	return why;
}

/*
 * Under kp_bytes_guard(): the store of an intact entry copied for the miss, with the
 * entries of its manifest that changed (every one checked: a splice is only a candidate
 * when it knows all of them).
 */
static int copy_store(void *arg)
{
	const struct replay *r = arg;
	struct kp_run_cache *rc = (struct kp_run_cache *)r->rc;

	memcpy(rc->prev, r->m + HDR_LEN + r->olen + r->klen + r->mlen, (size_t)r->slen);
	kp_inputs_changes(r->m + HDR_LEN + r->olen + r->klen, (size_t)r->mlen, &rc->changed);
	return 0;
}

static int emit(void *arg)
{
	const struct replay *r = arg;

	chunks(r->m + HDR_LEN, r->olen, true);
	return 0;
}

int kp_run_cache_replay(struct kp_run_cache *rc, int *status)
{
	struct replay r = { .rc = rc };
	struct kp_bytes b = { 0 };
	unsigned char *m = NULL;
	struct kp_err err;
	struct stat st;
	int fd, hit = 0;

	fd = openat(rc->dfd, rc->name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return 0;
	/* only what the user or root wrote: the CRC is no authentication (run-cache.h) */
	if (fstat(fd, &st) < 0 || !kp_trusted_file(&st) || st.st_size < HDR_LEN ||
	    (uint64_t)st.st_size > ((uint64_t)1 << 36))
		goto out;
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED) {
		m = NULL;
		goto out;
	}
	r.m = m;
	r.size = (uint64_t)st.st_size;
	r.olen = kp_load64(m + 16, false);
	r.klen = kp_load64(m + 24, false);
	r.mlen = kp_load64(m + 32, false);
	r.slen = kp_load64(m + 40, false);
	b.data = m;
	b.len = (size_t)st.st_size;
	b.mapped = true;
	if (kp_bytes_guard(&b, entry_holds, &r, &err) != 1) {
		rc->rehash_over = r.rh.over;
		/* a miss through changed inputs: what the command kept, for it to use */
		if (r.intact && r.slen && (rc->prev = malloc((size_t)r.slen))) {
			rc->nprev = (size_t)r.slen;
			if (kp_bytes_guard(&b, copy_store, &r, &err) < 0) {
				kp_inputs_changed_release(&rc->changed);
				free(rc->prev);
				rc->prev = NULL;
				rc->nprev = 0;
			}
		}
		goto out;
	}
	*status = (int)kp_load32(m + 12, false);
	hit = 1;
	snprintf(rc->note, sizeof(rc->note), "hit, replayed");
	/* truncated by hand between the check and here: what was written stays, exit 2 */
	if (kp_bytes_guard(&b, emit, &r, &err) < 0) {
		fprintf(stderr, "kopolicy: result cache: %s\n", err.msg);
		*status = 2;
	} else if (r.how == 2) {
		const char *why = r.fresh ? refresh(rc, &r, &b)
					  : "a new state is less than a second old or not trusted";
		char mods[96] = "";

		if (r.rh.files)
			snprintf(mods, sizeof(mods), "; %llu module%s hashed again, %llu bytes",
				 (unsigned long long)r.rh.files, r.rh.files == 1 ? "" : "s",
				 (unsigned long long)r.rh.bytes);
		snprintf(rc->note, sizeof(rc->note),
			 "hit, replayed (inputs rewritten with the same bytes; %s%s%s)",
			 why ? "entry not refreshed: " : "entry refreshed", why ? why : "", mods);
	}
	if (st.st_mtim.tv_sec + TOUCH_EVERY < time(NULL))
		futimens(fd, NULL);
out:
	free(r.fresh);
	if (m)
		munmap(m, (size_t)st.st_size);
	close(fd);
	return hit;
}

/* Appends @len bytes to the entry being written (buffered); the CRC follows. */
static void tappend(struct kp_run_cache *rc, const void *p, size_t len)
{
	if (rc->broken)
		return;
	rc->crc = (uint32_t)crc32_z(rc->crc, p, len);
	if (rc->blen + len > CAP_BUF) {
		if (kp_write_all(rc->tfd, rc->buf, rc->blen) < 0)
			rc->broken = true;
		rc->blen = 0;
	}
	if (len > CAP_BUF) {
		if (kp_write_all(rc->tfd, p, len) < 0)
			rc->broken = true;
		return;
	}
	memcpy(rc->buf + rc->blen, p, len);
	rc->blen += len;
}

static ssize_t cap_write(void *cookie, const char *buf, size_t size)
{
	struct cap *c = cookie;
	unsigned char h[5];

	if (kp_write_all(c->fd, buf, size) < 0 || size > UINT32_MAX) {
		__atomic_store_n(&c->rc->broken, true, __ATOMIC_RELAXED);
		return size > UINT32_MAX ? (ssize_t)size : -1;
	}
	h[0] = c->stream;
	kp_store32(h + 1, (uint32_t)size);
	pthread_mutex_lock(&c->rc->lock);
	tappend(c->rc, h, 5);
	tappend(c->rc, buf, size);
	c->rc->olen += 5 + size;
	pthread_mutex_unlock(&c->rc->lock);
	return (ssize_t)size;
}

/* A stream over @c buffered as glibc would buffer the original (line for a terminal). */
static FILE *cap_stream(struct cap *c, bool unbuffered)
{
	static const cookie_io_functions_t io = { .write = cap_write };
	FILE *f = fopencookie(c, "w", io);

	size_t size = out_buffer_size();

	if (!f)
		return NULL;
	if (unbuffered) {
		setvbuf(f, NULL, _IONBF, 0);
		return f;
	}
	c->vbuf = malloc(size);
	if (!c->vbuf) {
		fclose(f);
		return NULL;
	}
	setvbuf(f, c->vbuf, isatty(c->fd) ? _IOLBF : _IOFBF, size);
	return f;
}

int kp_run_cache_record(struct kp_run_cache *rc)
{
	rc->tfd = kp_rc_tmpfile(rc->dfd, rc->tmp, sizeof(rc->tmp));
	/* the manifest goes there as it grows: the recorder keeps a buffer and a table */
	rc->ifd = kp_rc_tmpfile(rc->dfd, rc->itmp, sizeof(rc->itmp));
	if (rc->tfd < 0 || rc->ifd < 0)
		return -1;
	rc->buf = malloc(CAP_BUF);
	rc->in = kp_inputs_new(rc->ifd, 0);
	if (!rc->buf || !rc->in)
		return -1;
	/* room for the header, written last */
	rc->blen = HDR_LEN; /* not in @rc->crc */
	memset(rc->buf, 0, HDR_LEN);
	fflush(stdout);
	fflush(stderr);
	rc->cap_out = (struct cap){ .rc = rc, .fd = STDOUT_FILENO, .stream = 1 };
	rc->cap_err = (struct cap){ .rc = rc, .fd = STDERR_FILENO, .stream = 2 };
	rc->out = cap_stream(&rc->cap_out, false);
	rc->err = cap_stream(&rc->cap_err, true);
	if (!rc->out || !rc->err)
		return -1;
	rc->orig_out = stdout;
	rc->orig_err = stderr;
	stdout = rc->out;
	stderr = rc->err;
	kp_inputs_attach(rc->in);
	return 0;
}

/* kp_inputs_stream()'s writer: the manifest's bytes into the entry. */
static int put_manifest(void *arg, const void *p, size_t len)
{
	struct kp_run_cache *rc = arg;

	tappend(rc, p, len);
	return rc->broken ? -1 : 0;
}

/* Writes key, manifest and header and names the entry; 0, or -1 with @why. */
static int store(struct kp_run_cache *rc, int status, const char **why)
{
	unsigned char h[HDR_LEN];
	uint64_t mlen, count, size;
	int r;

	/* no memory, too many open files: a later run can answer otherwise */
	if (kp_env_failure()) {
		*why = "an environmental failure during the run";
		return -1;
	}
	tappend(rc, rc->key.p, rc->key.len);
	if (kp_inputs_stream(rc->in, put_manifest, rc, &mlen, &count, why) < 0)
		return -1;
	if (rc->nkeep) /* crc32_z() of NULL is no CRC: its initial value */
		tappend(rc, rc->keep, rc->nkeep);
	*why = "cannot write the entry";
	rc->ninputs = (size_t)count;
	if (rc->broken || kp_write_all(rc->tfd, rc->buf, rc->blen) < 0)
		return -1;
	rc->blen = 0;
	memset(h, 0, HDR_LEN);
	memcpy(h, MAGIC, 8);
	kp_store32(h + 8, KP_RUNS_FORMAT);
	kp_store32(h + 12, (uint32_t)status);
	kp_store64(h + 16, rc->olen);
	kp_store64(h + 24, rc->key.len);
	kp_store64(h + 32, mlen);
	kp_store64(h + 40, rc->nkeep);
	/* @rc->crc covers what follows the header: CRC(header || rest) from both */
	size = HDR_LEN + rc->olen + rc->key.len + mlen + rc->nkeep;
	kp_store32(h + 48, (uint32_t)crc32_combine(crc32(0, h, HDR_LEN), rc->crc,
						   (z_off_t)(size - HDR_LEN)));
	r = kp_rc_finish_entry(rc->tfd, h, size);
	if (r == 0 && size > kp_rc_budget()) {
		*why = "larger than a quarter of KOPOLICY_CACHE_MAX_SIZE";
		return -1;
	}
	return r < 0 ? -1 : kp_rc_publish(rc->dfd, rc->tfd, rc->tmp, rc->name, size);
}

void kp_run_cache_finish(struct kp_run_cache *rc, int status, char *note, size_t len)
{
	const char *why = "the output could not be written";
	char over[96] = "";

	if (len)
		note[0] = '\0';
	if (!rc)
		return;
	if (len)
		snprintf(note, len, "%s", rc->note);
	if (rc->orig_out) {
		fflush(stdout);
		fflush(stderr);
		stdout = rc->orig_out;
		stderr = rc->orig_err;
		kp_inputs_attach(NULL);
		if (status < 0 || status > 255)
			why = "no exit status";
		if (rc->rehash_over)
			snprintf(over, sizeof(over),
				 "; not replayed: more than %llu MiB of modules to hash again",
				 (unsigned long long)(KP_INPUTS_REHASH_MAX >> 20));
		if (!rc->broken && status >= 0 && status < 256 && store(rc, status, &why) == 0)
			snprintf(note, len, "miss, stored (%zu inputs%s)", rc->ninputs, over);
		else
			snprintf(note, len, "miss, not stored: %s", why);
	}
	if (rc->out)
		fclose(rc->out);
	if (rc->err)
		fclose(rc->err);
	free(rc->cap_out.vbuf);
	kp_inputs_attach(NULL);
	kp_inputs_free(rc->in);
	kp_rc_tmp_drop(rc->dfd, rc->ifd, rc->itmp);
	kp_rc_tmp_drop(rc->dfd, rc->tfd, rc->tmp);
	close(rc->dfd);
	free(rc->buf);
	free(rc->key.p);
	free(rc->keep);
	free(rc->prev);
	kp_inputs_changed_release(&rc->changed);
	pthread_mutex_destroy(&rc->lock);
	free(rc);
}

void kp_run_cache_keep(struct kp_run_cache *rc, unsigned char *p, size_t len)
{
	free(rc->keep);
	rc->keep = p;
	rc->nkeep = p ? len : 0;
}

const unsigned char *kp_run_cache_previous(const struct kp_run_cache *rc, size_t *len)
{
	*len = rc->nprev;
	return rc->prev;
}

const struct kp_inputs_changed *kp_run_cache_changes(const struct kp_run_cache *rc)
{
	return rc->prev ? &rc->changed : NULL;
}

bool kp_run_cache_recording(const struct kp_run_cache *rc)
{
	return rc && rc->orig_out;
}

void kp_run_cache_note(struct kp_run_cache *rc, const char *note)
{
	snprintf(rc->keep_note, sizeof(rc->keep_note), "%s", note);
}

const char *kp_run_cache_command_note(const struct kp_run_cache *rc)
{
	return rc ? rc->keep_note : "";
}
