// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The inputs recorder (lib/file/inputs.c) with a buffer small enough to spill: the manifest
 * streamed from buffer and spill file is the one recorded all in memory, exact duplicates
 * are dropped whether the first record is still in the buffer or only in the spill file,
 * from one thread or four at once, and records whose hashes collide are all kept (the bytes
 * are compared, never the hash alone); a replay sees a change to an input recorded first (so
 * spilled); a spill file that cannot be written makes the run uncacheable; a file rewritten
 * through a shared mapping without a stat() change is seen when its state is not trusted
 * (lib/util/fs-trust.h); the running kernel's files are never stored however spelled.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "file/inputs.h"
#include "util/content-hash.h"
#include "util/io.h"
#include "manifest-sink.h"
#include "tap.h"

#define NFILES 200
#define SMALL  512 /* the buffer: two or three records, so nearly all of them spill */

static char dir[64], spilldir[64]; /* the inputs; the spill files (not to change @dir) */

static void path_of(char *buf, size_t len, int i)
{
	/* long names: ~150-byte records, a few per buffer */
	snprintf(buf, len, "%s/input-%03d-padding-padding-padding-padding-padding-padding", dir, i);
}

/* What a run over the fixture reads: each file stat()ed then opened (the same state twice),
 * the directory, an absent path twice and one absent path longer than the buffer twice. */
static void *read_all(void *arg)
{
	char p[256], longp[1200];
	struct stat st;
	DIR *d;

	(void)arg;
	kp_test_read_inputs(NFILES, path_of);
	d = kp_in_opendir(dir);
	if (d)
		closedir(d);
	snprintf(p, sizeof(p), "%s/absent", dir);
	kp_in_stat(p, &st);
	kp_in_lstat(p, &st); /* another entry: not followed */
	kp_in_stat(p, &st);
	/* a record larger than the buffer goes to the spill file directly */
	snprintf(longp, sizeof(longp), "%s/%0200d/%0200d/%0200d/%0200d/%0200d", dir, 1, 2, 3, 4, 5);
	kp_in_stat(longp, &st);
	kp_in_stat(p, &st);
	kp_in_stat(longp, &st);
	/* each file again, its first record long spilled: compared from the spill file */
	for (int i = 0; i < NFILES; i++) {
		path_of(p, sizeof(p), i);
		kp_in_stat(p, &st);
	}
	return NULL;
}

/* inputs-record.c's hash of a record and the 32 bits its table keeps (FNV-1a 64, folded) */
static uint32_t fragment(const unsigned char *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325u;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3u;
	}
	h ^= h >> 29;
	return (uint32_t)h ^ (uint32_t)(h >> 32);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * NCOLL absent paths, all different: some pairs share the table's 32 bits of hash (about
 * NCOLL^2 / 2^33 of them); every one must be kept. Their pairs are counted from the
 * manifest's records (so the test shows it met a collision).
 */
#define NCOLL 200000
static void *read_absent(void *arg)
{
	char p[64];
	struct stat st;

	(void)arg;
	for (int i = 0; i < NCOLL; i++) {
		snprintf(p, sizeof(p), "/nonexistent-kopolicy-test/%d", i);
		kp_in_stat(p, &st);
	}
	return NULL;
}

/* Records @fn from @threads threads with the spill file @spill and a @size buffer. */
static int record(struct kp_test_manifest *m, void *(*fn)(void *), int spill, size_t size,
		  int threads, uint64_t *count, const char **why)
{
	struct kp_inputs *in = kp_inputs_new(spill, size);
	pthread_t t[4];
	uint64_t len = 0;
	int r;

	memset(m, 0, sizeof(*m));
	if (!in)
		return -1;
	kp_inputs_attach(in);
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, fn, NULL);
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	kp_inputs_attach(NULL);
	r = kp_inputs_stream(in, kp_test_manifest_put, m, &len, count, why);
	kp_inputs_free(in);
	if (r == 0 && len != m->len)
		return -1;
	return r;
}

static const char *one_path; /* what read_one() opens */

static void *read_one(void *arg)
{
	int fd = kp_in_open(one_path, O_RDONLY | O_CLOEXEC);

	(void)arg;
	if (fd >= 0)
		close(fd);
	return NULL;
}

/*
 * A file rewritten through a shared mapping after it was recorded (a page already dirty: no
 * timestamp moves): seen when its state is not trusted (other-writable: its SHA-256 is in
 * the manifest), not when it is (the user's own 0644 file: stat() only, by design).
 */
static void rewritten(struct tap *t, const char *name, mode_t mode, int want)
{
	static const char text[] = "license=GPL\n";
	char path[128];
	struct stat pre, post;
	const char *why = NULL;
	struct kp_test_manifest m = { 0 };
	unsigned char *map;
	uint64_t n = 0;
	int fd, spill, r;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, text, sizeof(text) - 1) != sizeof(text) - 1 ||
	    fchmod(fd, mode) < 0) {
		tap_ok(t, 0, "%s: made", name);
		return;
	}
	map = mmap(NULL, sizeof(text) - 1, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		tap_ok(t, 0, "%s: mapped", name);
		close(fd);
		return;
	}
	map[0] = 'l'; /* the page dirty now: its timestamps move now, not at the rewrite */
	nanosleep(&(struct timespec){ .tv_sec = 1, .tv_nsec = 100000000 }, NULL);
	one_path = path;
	spill = kp_test_spill_file(spilldir);
	r = record(&m, read_one, spill, 0, 1, &n, &why);
	tap_ok(t, r == 0 && n == 1, "%s: recorded (%s)", name, why ? why : "ok");
	tap_is_int(t, kp_inputs_unchanged(m.p, m.len), 1, "unchanged bytes hold");
	fstat(fd, &pre);
	memcpy(map + 8, "XYZ", 3);
	fstat(fd, &post);
	if (memcmp(&pre.st_mtim, &post.st_mtim, sizeof(pre.st_mtim)) ||
	    memcmp(&pre.st_ctim, &post.st_ctim, sizeof(pre.st_ctim)))
		tap_ok(t, 1, "# SKIP %s: the kernel moved the timestamps", name);
	else
		tap_is_int(t, kp_inputs_unchanged(m.p, m.len), want,
			   want ? "rewritten, a trusted state: still holds (stat() only)"
				: "rewritten, an untrusted state: its bytes are checked");
	munmap(map, sizeof(text) - 1);
	close(fd);
	if (spill >= 0)
		close(spill);
	free(m.p);
	unlink(path);
}

/* Anything on the running kernel's file systems, however spelled: not stored. */
static void kernel_fs(struct tap *t, const char *path)
{
	const char *why = NULL;
	struct kp_test_manifest m = { 0 };
	uint64_t n = 0;
	int spill = kp_test_spill_file(spilldir), r;

	one_path = path;
	r = record(&m, read_one, spill, 0, 1, &n, &why);
	tap_ok(t, r < 0 && why && strstr(why, "running kernel"), "%s: not stored (%s)", path,
	       why ? why : "stored");
	if (spill >= 0)
		close(spill);
	free(m.p);
}

static char fb_dir[256], fb_file[300]; /* digest_fallback()'s directory and file */

/* Writes @text to @path through a temporary file renamed over it (as depmod does). */
static int rename_over(const char *path, const char *text)
{
	char tmp[320];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	fputs(text, f);
	if (fclose(f) != 0)
		return -1;
	return rename(tmp, path);
}

static void *read_fb(void *arg)
{
	int fd = kp_in_open(fb_file, O_RDONLY | O_CLOEXEC);
	DIR *d = kp_in_opendir(fb_dir);

	if (fd >= 0)
		close(fd);
	if (d)
		closedir(d);
	if (arg)
		rename_over(fb_file, "same bytes\n"); /* changed after it was digested */
	return NULL;
}

static void *read_fb_changing(void *arg)
{
	(void)arg;
	return read_fb(fb_file);
}

/*
 * A file and a directory rewritten with the same bytes and names (new inode, new times):
 * they hold by their digests, the fresh manifest with their new states holds by stat();
 * other bytes of the same size do not; an input changed after it was digested is not
 * stored.
 */
static void digest_fallback(struct tap *t)
{
	struct kp_test_manifest m = { 0 }, m2 = { 0 };
	unsigned char *fresh = NULL, *fresh2 = NULL;
	const char *why = NULL;
	uint64_t n = 0;
	int spill, r;

	snprintf(fb_dir, sizeof(fb_dir), "%s/fb", dir);
	snprintf(fb_file, sizeof(fb_file), "%s/index", fb_dir);
	if (mkdir(fb_dir, 0755) < 0 || rename_over(fb_file, "same bytes\n") < 0) {
		tap_ok(t, 0, "fallback: made");
		return;
	}
	nanosleep(&(struct timespec){ .tv_sec = 1, .tv_nsec = 100000000 }, NULL);
	spill = kp_test_spill_file(spilldir);
	r = record(&m, read_fb, spill, 0, 1, &n, &why);
	tap_ok(t, r == 0 && n == 2, "fallback: recorded (%s)", why ? why : "ok");
	tap_is_int(t, kp_inputs_recheck(m.p, m.len, &fresh), 1, "fallback: unchanged: by stat()");
	tap_ok(t, !fresh, "fallback: no fresh manifest when every state held");
	rename_over(fb_file, "same bytes\n");
	nanosleep(&(struct timespec){ .tv_sec = 1, .tv_nsec = 100000000 }, NULL);
	tap_is_int(t, kp_inputs_unchanged(m.p, m.len), 1, "fallback: same bytes, new inode: holds");
	tap_is_int(t, kp_inputs_recheck(m.p, m.len, &fresh), 2, "fallback: ... by its digests");
	tap_ok(t, fresh && kp_inputs_recheck(fresh, m.len, NULL) == 1,
	       "fallback: the fresh manifest holds by stat()");
	rename_over(fb_file, "diff bytes\n");
	tap_is_int(t, kp_inputs_unchanged(fresh ? fresh : m.p, m.len), 0,
		   "fallback: other bytes of the same size: changed");
	tap_is_int(t, kp_inputs_recheck(m.p, m.len, &fresh2), 0, "fallback: ... for the first too");
	tap_ok(t, !fresh2, "fallback: no fresh manifest for a change");
	nanosleep(&(struct timespec){ .tv_sec = 1, .tv_nsec = 100000000 }, NULL);
	if (spill >= 0)
		close(spill);
	spill = kp_test_spill_file(spilldir);
	r = record(&m2, read_fb_changing, spill, 0, 1, &n, &why);
	tap_ok(t, r < 0 && why && !strcmp(why, "an input changed during the run"),
	       "fallback: changed after its digest: not stored (%s)", why ? why : "stored");
	if (spill >= 0)
		close(spill);
	free(fresh);
	free(m.p);
	free(m2.p);
	unlink(fb_file);
	rmdir(fb_dir);
}

static char km_path[128]; /* the module of keyed_module() */
static unsigned char km_sha[KP_CONTENT_HASH_LEN];

/* Every input of read_all() (most records spilled), then the module, known by its bytes. */
static void *read_keyed(void *arg)
{
	struct stat st;
	uint64_t v[8];

	read_all(arg);
	if (kp_in_stat(km_path, &st) == 0) {
		kp_file_state(&st, v);
		kp_in_note_bytes(v, km_sha);
	}
	return NULL;
}

static int write_km(const char *text, const struct timespec *mtime)
{
	FILE *f = fopen(km_path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	if (fclose(f) != 0)
		return -1;
	return mtime ? utimensat(AT_FDCWD, km_path, (struct timespec[]){ *mtime, *mtime }, 0) : 0;
}

/*
 * A module recorded with the SHA-256 of its bytes (kp_in_note_bytes(), spilled or not): the
 * manifest streamed with it is well-formed and holds by stat(); touched, it holds by its
 * bytes (counted: one module, its size), the fresh manifest by stat() again; other bytes of
 * the same size with the mtime put back do not; a wrong digest does not either.
 */
static void keyed_module(struct tap *t, size_t buf)
{
	struct kp_test_manifest m = { 0 }, plain = { 0 };
	struct kp_inputs_rehash rh = { 0 };
	unsigned char *fresh = NULL;
	const char *why = NULL;
	struct stat st;
	uint64_t n = 0, n2 = 0;
	int spill, fd, r;

	snprintf(km_path, sizeof(km_path), "%s/km.ko", dir);
	if (write_km("module bytes\n", NULL) < 0 || (fd = open(km_path, O_RDONLY)) < 0) {
		tap_ok(t, 0, "keyed: made");
		return;
	}
	r = fstat(fd, &st) == 0 ? kp_content_hash_fd(fd, (uint64_t)st.st_size, km_sha) : -1;
	close(fd);
	tap_ok(t, r == 0, "keyed (buffer %zu): hashed", buf);
	nanosleep(&(struct timespec){ .tv_sec = 1, .tv_nsec = 100000000 }, NULL);
	spill = kp_test_spill_file(spilldir);
	r = record(&m, read_keyed, spill, buf, 1, &n, &why);
	tap_ok(t, r == 0, "keyed: streamed (%s)", why ? why : "ok");
	if (spill >= 0)
		close(spill);
	spill = kp_test_spill_file(spilldir);
	r = record(&plain, read_all, spill, buf, 1, &n2, &why);
	if (spill >= 0)
		close(spill);
	/* one more record than read_all()'s, with a 32-byte digest: 90 + path + 32 */
	tap_ok(t, r == 0 && n == n2 + 1 && m.len == plain.len + 90 + strlen(km_path) + 32,
	       "keyed: the module's record carries its digest (%zu vs %zu bytes)", m.len,
	       plain.len);
	tap_is_int(t, kp_inputs_count(m.p, m.len), n, "keyed: a well-formed manifest");
	tap_is_int(t, kp_inputs_recheck_counted(m.p, m.len, &fresh, &rh, 1), 1,
		   "keyed: unchanged: by stat()");
	tap_ok(t, rh.files == 0 && !fresh, "keyed: nothing hashed again");
	/* touched: a new change time, the same bytes */
	utimensat(AT_FDCWD, km_path, NULL, 0);
	nanosleep(&(struct timespec){ .tv_sec = 1, .tv_nsec = 100000000 }, NULL);
	tap_is_int(t, kp_inputs_recheck_counted(m.p, m.len, &fresh, &rh, 1), 2,
		   "keyed: touched: holds by its bytes");
	tap_ok(t, rh.files == 1 && rh.bytes == (uint64_t)st.st_size && !rh.over,
	       "keyed: ... one module hashed again (%llu, %llu bytes)",
	       (unsigned long long)rh.files, (unsigned long long)rh.bytes);
	tap_ok(t, fresh && kp_inputs_recheck(fresh, m.len, NULL) == 1,
	       "keyed: the fresh manifest holds by stat()");
	free(fresh);
	fresh = NULL;
	/* other bytes of the same size, the mtime put back */
	write_km("module bytez\n", &st.st_mtim);
	nanosleep(&(struct timespec){ .tv_sec = 1, .tv_nsec = 100000000 }, NULL);
	tap_is_int(t, kp_inputs_recheck_counted(m.p, m.len, &fresh, &rh, 1), 0,
		   "keyed: other bytes, same size and mtime: changed");
	tap_ok(t, !fresh, "keyed: no fresh manifest for a change");
	/* the first bytes back, but the digest recorded was another one */
	write_km("module bytes\n", &st.st_mtim);
	memset(km_sha, 0, sizeof(km_sha));
	nanosleep(&(struct timespec){ .tv_sec = 1, .tv_nsec = 100000000 }, NULL);
	spill = kp_test_spill_file(spilldir);
	free(m.p);
	r = record(&m, read_keyed, spill, buf, 1, &n, &why);
	if (spill >= 0)
		close(spill);
	utimensat(AT_FDCWD, km_path, NULL, 0);
	nanosleep(&(struct timespec){ .tv_sec = 1, .tv_nsec = 100000000 }, NULL);
	tap_is_int(t, r == 0 ? kp_inputs_recheck(m.p, m.len, NULL) : -1, 0,
		   "keyed: touched, a digest of other bytes: changed");
	free(m.p);
	free(plain.p);
	unlink(km_path);
}

/*
 * kp_inputs_changes(): @first (the first input, changed) and a second input changed: both
 * listed, once each (stat()ed and opened: one path), in the manifest's order, the others
 * held; a manifest cut short is not whole.
 */
static void changes(struct tap *t, const struct kp_test_manifest *mem,
		    const struct kp_test_manifest *sp, const char *first)
{
	struct kp_inputs_changed c;
	char p[256];
	int fd, r;

	path_of(p, sizeof(p), 137);
	fd = open(p, O_WRONLY | O_APPEND | O_CLOEXEC);
	r = fd >= 0 && write(fd, "y", 1) == 1;
	if (fd >= 0)
		close(fd);
	tap_ok(t, r, "changes: %s appended to", p);
	r = kp_inputs_changes(mem->p, mem->len, &c);
	tap_ok(t,
	       r == 0 && c.whole && c.n == 2 && c.npaths == 2 && !strcmp(c.paths[0], first) &&
		       !strcmp(c.paths[1], p),
	       "changes: in memory: %zu entries, %zu paths (2, 2: the two changed)", c.n, c.npaths);
	kp_inputs_changed_release(&c);
	r = kp_inputs_changes(sp->p, sp->len, &c);
	tap_ok(t, r == 0 && c.whole && c.n == 2 && c.npaths == 2 && !strcmp(c.paths[1], p),
	       "changes: spilled: the same (%zu, %zu)", c.n, c.npaths);
	kp_inputs_changed_release(&c);
	r = kp_inputs_changes(mem->p, mem->len - 1, &c);
	tap_ok(t, r < 0 && !c.whole, "changes: a manifest cut short: not whole");
	kp_inputs_changed_release(&c);
}

int main(void)
{
	/* NFILES files, the directory, "absent" stat()ed and lstat()ed, the long absent path */
	const uint64_t want = NFILES + 4;
	struct kp_test_manifest mem, sp, mt;
	struct tap t = { 0 };
	uint64_t n = 0, nsp = 0, nmt = 0;
	const char *why = NULL;
	char p[256];
	int fd, r;

	snprintf(dir, sizeof(dir), "/tmp/kp-inputs-XXXXXX");
	snprintf(spilldir, sizeof(spilldir), "/tmp/kp-spill-XXXXXX");
	if (!mkdtemp(dir) || !mkdtemp(spilldir))
		return 1;
	if (kp_test_write_inputs(NFILES, path_of) < 0)
		return 1;
	/* an input changed less than a second before the run is not trusted */
	usleep(1100000);

	/* a buffer larger than every record together: nothing spills */
	fd = kp_test_spill_file(spilldir);
	r = record(&mem, read_all, fd, (size_t)1 << 20, 1, &n, &why);
	tap_ok(&t, fd >= 0 && lseek(fd, 0, SEEK_END) == 0, "in memory: nothing spilled");
	if (fd >= 0)
		close(fd);
	tap_ok(&t, r == 0, "in memory: streamed (%s)", why ? why : "ok");
	tap_is_int(&t, n, want, "in memory: duplicates dropped");

	fd = kp_test_spill_file(spilldir);
	r = record(&sp, read_all, fd, SMALL, 1, &nsp, &why);
	tap_ok(&t, r == 0, "spilled: streamed (%s)", why ? why : "ok");
	tap_is_int(&t, nsp, want, "spilled: the same duplicates dropped");
	tap_ok(&t, sp.len == mem.len && !memcmp(sp.p, mem.p, mem.len),
	       "spilled: the same manifest bytes (%zu)", sp.len);
	tap_ok(&t, fd >= 0 && lseek(fd, 0, SEEK_END) > (off_t)(sp.len - 16 - SMALL),
	       "spilled: all but the last buffer's records went to the spill file");
	tap_ok(&t, sp.pieces > 2 && sp.largest <= 16384, "spilled: streamed in %zu pieces",
	       sp.pieces);
	tap_is_int(&t, kp_inputs_count(sp.p, sp.len), want, "spilled: a well-formed manifest");
	tap_is_int(&t, kp_inputs_unchanged(sp.p, sp.len), 1, "spilled: unchanged inputs hold");
	if (fd >= 0)
		close(fd);

	fd = kp_test_spill_file(spilldir);
	r = record(&mt, read_all, fd, SMALL, 4, &nmt, &why);
	tap_ok(&t, r == 0, "four threads: streamed (%s)", why ? why : "ok");
	tap_is_int(&t, nmt, want, "four threads: each input once");
	tap_is_int(&t, mt.len, mem.len, "four threads: the same length");
	tap_is_int(&t, kp_inputs_unchanged(mt.p, mt.len), 1, "four threads: unchanged inputs hold");
	if (fd >= 0)
		close(fd);

	/* fragments that collide: each record kept (compared by its bytes) */
	fd = kp_test_spill_file(spilldir);
	free(mt.p);
	r = record(&mt, read_absent, fd, 0, 1, &nmt, &why);
	tap_ok(&t, r == 0, "absent paths: streamed (%s)", why ? why : "ok");
	tap_is_int(&t, nmt, NCOLL, "absent paths: each one kept");
	if (r == 0) {
		uint32_t *f = calloc(NCOLL, sizeof(*f));
		size_t off = 16, pairs = 0;

		for (int i = 0; f && i < NCOLL && off + 90 <= mt.len; i++) {
			size_t len = 90 + (size_t)mt.p[off + 2] + ((size_t)mt.p[off + 3] << 8);

			f[i] = fragment(mt.p + off, len);
			off += len;
		}
		if (f)
			qsort(f, NCOLL, sizeof(*f), cmp_u32);
		for (int i = 1; f && i < NCOLL; i++)
			pairs += f[i] == f[i - 1];
		tap_ok(&t, f && off == mt.len && pairs > 0,
		       "absent paths: %zu pairs share the table's hash bits", pairs);
		free(f);
	}
	if (fd >= 0)
		close(fd);

	/* a spill file that cannot be written: not stored, never a wrong manifest */
	snprintf(p, sizeof(p), "%s/input-000-padding-padding-padding-padding-padding-padding", dir);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	free(mt.p);
	r = record(&mt, read_all, fd, SMALL, 1, &nmt, &why);
	tap_ok(&t, r < 0 && why && !strcmp(why, "the inputs' temporary file could not be written"),
	       "unwritable spill file: not stored (%s)", why ? why : "(none)");
	if (fd >= 0)
		close(fd);

	/* the first input recorded (long spilled) changes: the replay sees it */
	fd = open(p, O_WRONLY | O_APPEND | O_CLOEXEC);
	r = fd >= 0 && write(fd, "x", 1) == 1;
	if (fd >= 0)
		close(fd);
	tap_ok(&t, r && !memcmp(sp.p + 16 + 90, p, strlen(p)), "the first entry is %s", p);
	tap_is_int(&t, kp_inputs_unchanged(sp.p, sp.len), 0, "spilled: a changed first input seen");
	tap_is_int(&t, kp_inputs_unchanged(mem.p, mem.len), 0, "in memory: the same");
	changes(&t, &mem, &sp, p);

	rewritten(&t, "other-writable", 0646, 0);
	rewritten(&t, "group-writable", 0664, 0);
	rewritten(&t, "own", 0644, 1);
	digest_fallback(&t);
	keyed_module(&t, (size_t)1 << 20);
	keyed_module(&t, SMALL);
	kernel_fs(&t, "//proc/self/status");
	kernel_fs(&t, "/./proc/../proc/self/status");

	free(mem.p);
	free(sp.p);
	free(mt.p);
	for (int i = 0; i < NFILES; i++) {
		path_of(p, sizeof(p), i);
		unlink(p);
	}
	rmdir(dir);
	rmdir(spilldir);
	return tap_done(&t);
}
