// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the memo of libkmod's answers that the hook replays as root
 * (lib/cache/kmod-memo.h), read through the hook's own entry points: kp_kmod_memo_bind()
 * (kp_memo_read()'s trust, size, magic and CRC checks, the key compared, the records parsed,
 * the library record checked), then kp_kmod_memo_get(). The reader takes a file of the
 * trusted facts directory, not a buffer, so every input is written over one memo file (its
 * descriptor kept open, truncated and written again: no file made per input) in a
 * temporary facts directory, whose key is the one kp_kmod_memo_bind() computes for an empty
 * release directory and no modprobe.d directory. Each input (a memo file) is read three ways:
 *   - as it is: the header, the CRC and the key as an attacker wrote them;
 *   - its CRC made again: the key's length and comparison reached;
 *   - rebased: this run's header, key and library record (the state of /proc/self/exe, as
 *     the libkmod that answered), then the input's records (what follows its own key), the
 *     count the input's plus one: the record parser and the lookups reached. When the
 *     input's magic does not end in '1', without this run's library record: the input's
 *     first one judges its records (kp_kmod_memo_bind()'s library check reached).
 * The first two carry another key (this run's holds its temporary directory; unless the
 * fuzzer learnt it, then nothing is asserted): refused, no lookup succeeds. The rebased
 * memo's records are walked here as kmod-memo.h lays them out: found damaged (a string cut
 * short or holding a NUL, bytes left over, another count), no lookup succeeds; found as the
 * hook writes a memo (a few records of a few strings) with this run's library record,
 * every lookup succeeds; a lookup that succeeds gives the code and the strings of the first
 * record of that question, each NUL-terminated, none other, and the first library record
 * names a file in the state it gives (no answer replayed for another libkmod).
 * Seeds: the memo files of `kopolicy hook` on a fake root with the 6.12 fixtures
 * (tests/lib/hook-root.sh; fuzz/corpus/kmodmemo).
 * Build: ./configure CC=clang --enable-fuzzing && make fuzz/fuzz-kmodmemo
 * Run:   fuzz/fuzz-kmodmemo -max_total_time=600 fuzz/corpus/kmodmemo
 */
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache/kmod-memo.h"
#include "cache/memo-file.h"
#include "cache/trusted-dir.h"
#include "util/fs-trust.h"
#include "util/io.h"
#include "util/util.h"

/* the libkmod recorded: a regular file whose state holds for the whole run */
#define LIBRARY	 "/proc/self/exe"
#define QUESTION "kp_fuzz"
#define NONE	 UINT32_MAX
/* a memo as the hook writes one (a handful of questions), far below the reader's bounds */
#define FEW_RECORDS 64
#define FEW_STRINGS 256

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A record as the walk found it: its question and first string point into the memo read. */
struct walked {
	char type;
	const char *q;
	int32_t code;
	uint32_t n;
	size_t strings;
};

/* Made once (libFuzzer's callbacks take no context): what every input is read against. */
static struct {
	char top[256], moddir[280];
	int dirfd;	     /* the facts directory */
	int fd;		     /* the memo file, written again for each input */
	unsigned char *head; /* this run's key (its length, its bytes), then the library record */
	size_t keypart, headlen;
	unsigned char *buf; /* the file being written */
	size_t cap;
} fz = { .dirfd = -1, .fd = -1 };

static void die(const char *what)
{
	fprintf(stderr, "fuzz-kmodmemo: %s\n", what);
	exit(1);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static void cleanup(void)
{
	if (fz.fd >= 0)
		close(fz.fd);
	if (fz.dirfd >= 0)
		close(fz.dirfd);
	nftw(fz.top, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(fz.head);
	free(fz.buf);
}

/* kp_kmod_memo_library() refuses a file changed less than KP_SETTLE_SECONDS ago: waited for. */
static void wait_settled(const char *path)
{
	for (int i = 0; i < 50; i++) {
		struct timespec now, nap = { 0, 100000000 };
		struct stat st;
		uint64_t v[8];

		if (stat(path, &st) < 0)
			die("no " LIBRARY);
		kp_file_state(&st, v);
		clock_gettime(CLOCK_REALTIME, &now);
		if (kp_state_settled(v, &now))
			return;
		nanosleep(&nap, NULL);
	}
	die(LIBRARY " does not settle");
}

/* The one memo file the facts directory holds, opened to be written; its bytes in *@len. */
static unsigned char *read_stored(size_t *len)
{
	char dir[320], path[600] = "";
	unsigned char *p = NULL;
	struct dirent *de;
	struct stat st;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/facts/" KP_MEMO_DIR "/" KP_KMOD_MEMO_DIR, fz.top);
	d = opendir(dir);
	if (!d)
		die("no memo directory");
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, "kmod-", 5))
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
	closedir(d);
	fz.fd = path[0] ? open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW) : -1;
	if (fz.fd < 0 || fstat(fz.fd, &st) < 0 || st.st_size < KP_MEMO_HEADER_LEN + 4 ||
	    !(p = malloc((size_t)st.st_size)) ||
	    kp_pread_all(fz.fd, p, (size_t)st.st_size, 0) != st.st_size)
		die("no memo file stored");
	*len = (size_t)st.st_size;
	return p;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *const none[] = { NULL };
	const char *tmp = getenv("TMPDIR");
	struct kp_kmod_memo_counts n;
	struct kp_kmod_memo *m;
	char facts[280];
	unsigned char *file;
	size_t len;

	(void)argc;
	(void)argv;
	if (snprintf(fz.top, sizeof(fz.top), "%s/kp-fuzz-kmodmemo-XXXXXX",
		     tmp && *tmp ? tmp : "/tmp") >= (int)sizeof(fz.top) ||
	    !mkdtemp(fz.top))
		die("no temporary directory");
	atexit(cleanup);
	snprintf(fz.moddir, sizeof(fz.moddir), "%s/mod", fz.top);
	snprintf(facts, sizeof(facts), "%s/facts", fz.top);
	if (mkdir(fz.moddir, 0755) < 0 || mkdir(facts, 0755) < 0)
		die("no directories");
	fz.dirfd = kp_trusted_dir_open(facts, false, NULL);
	if (fz.dirfd < 0)
		die("the facts directory is not trusted");
	wait_settled(LIBRARY);
	/* a memo stored by the writer the hook uses: this run's key and library record */
	m = kp_kmod_memo_new(fz.dirfd, QUESTION);
	if (!m || !kp_kmod_memo_bind(m, fz.moddir, none))
		die("the memo is not bound");
	kp_kmod_memo_library(m, LIBRARY);
	kp_kmod_memo_flush(m);
	kp_kmod_memo_counts(m, &n);
	kp_kmod_memo_free(m);
	if (n.stored != 1)
		die("the memo is not stored");
	file = read_stored(&len);
	fz.keypart = 4 + (size_t)kp_load32(file + KP_MEMO_HEADER_LEN, false);
	fz.headlen = len - KP_MEMO_HEADER_LEN;
	if (kp_load32(file + 8, false) != 1 || fz.keypart >= fz.headlen)
		die("the memo stored is not one key and one record");
	fz.head = malloc(fz.headlen);
	if (!fz.head)
		die("out of memory");
	memcpy(fz.head, file + KP_MEMO_HEADER_LEN, fz.headlen);
	free(file);
	return 0;
}

/* The counted string at *@off of @p (@len) past: its length, NONE (@null_ok), -1 if damaged. */
static int64_t walk_str(const unsigned char *p, size_t len, size_t *off, bool null_ok)
{
	uint32_t n;

	if (len - *off < 4)
		return -1;
	n = kp_load32(p + *off, false);
	*off += 4;
	if (n == NONE)
		return null_ok ? (int64_t)n : -1;
	if (len - *off < (size_t)n + 1 || memchr(p + *off, 0, n) || p[*off + n])
		return -1;
	*off += (size_t)n + 1;
	return n;
}

/*
 * The records of @p (@len) as kmod-memo.h lays them out (u8 type, the question, i32 code, u32
 * count, the strings), the first FEW_RECORDS into @w (*@nw): their number, or -1 when damaged
 * (cut short, a NUL in a string, a NULL question). *@few: at most FEW_RECORDS records of at
 * most FEW_STRINGS strings.
 */
static long walk(const unsigned char *p, size_t len, struct walked *w, size_t *nw, bool *few)
{
	size_t off = 0;
	long n = 0;

	*nw = 0;
	*few = true;
	while (off < len) {
		struct walked r = { .type = (char)p[off++] };

		r.q = (const char *)p + off + 4;
		if (walk_str(p, len, &off, false) < 0 || len - off < 8)
			return -1;
		r.code = (int32_t)kp_load32(p + off, false);
		r.n = kp_load32(p + off + 4, false);
		off += 8;
		r.strings = off;
		/* each string is 4 bytes at least: the loop ends with the bytes */
		for (uint32_t i = 0; i < r.n; i++)
			if (walk_str(p, len, &off, true) < 0)
				return -1;
		*few = *few && r.n <= FEW_STRINGS && *nw < FEW_RECORDS;
		if (*nw < FEW_RECORDS)
			w[(*nw)++] = r;
		n++;
	}
	return n;
}

/* @a is the record @r of @p (@len) walked: its code and strings, each NUL-terminated. */
static bool same_answer(const struct kp_kmod_answer *a, const struct walked *r,
			const unsigned char *p, size_t len)
{
	size_t off = r->strings;

	if (a->code != r->code || a->n != r->n)
		return false;
	for (size_t i = 0; i < a->n; i++) {
		size_t at = off + 4;
		int64_t sl = walk_str(p, len, &off, true);

		if (sl == NONE ? a->s[i] != NULL
			       : !a->s[i] || strlen(a->s[i]) != (size_t)sl ||
					 memcmp(a->s[i], p + at, (size_t)sl))
			return false;
	}
	return true;
}

/* @len bytes of fz.buf as the memo file; a memo bound to it, which must be. */
static struct kp_kmod_memo *bind_file(size_t len)
{
	const char *const none[] = { NULL };
	struct kp_kmod_memo *m;

	if (ftruncate(fz.fd, 0) < 0 || lseek(fz.fd, 0, SEEK_SET) < 0 ||
	    kp_write_all(fz.fd, fz.buf, len) < 0)
		die("the memo file cannot be written");
	m = kp_kmod_memo_new(fz.dirfd, QUESTION);
	if (!m)
		die("out of memory");
	/* bound whatever the file holds: the key is computed before the file is read */
	if (!kp_kmod_memo_bind(m, fz.moddir, none))
		__builtin_trap();
	return m;
}

/*
 * The input as it is (@crc: its CRC made again): unless it holds this run's key (which the
 * fuzzer could learn from the key's memcmp()), refused; no lookup succeeds.
 */
static void read_foreign(const uint8_t *data, size_t size, bool crc)
{
	struct walked w[FEW_RECORDS];
	struct kp_kmod_memo_counts n;
	struct kp_kmod_memo *m;
	struct kp_kmod_answer a;
	size_t nw = 0, off;
	bool few;

	memcpy(fz.buf, data, size);
	if (crc && size >= KP_MEMO_HEADER_LEN)
		kp_store32(fz.buf + 12,
			   kp_memo_crc(fz.buf + KP_MEMO_HEADER_LEN, size - KP_MEMO_HEADER_LEN));
	m = bind_file(size);
	if (size >= KP_MEMO_HEADER_LEN + fz.keypart &&
	    !memcmp(data + KP_MEMO_HEADER_LEN, fz.head, fz.keypart)) {
		kp_kmod_memo_free(m);
		return;
	}
	/* the questions of the records after the input's key, as far as they walk */
	off = size >= KP_MEMO_HEADER_LEN + 4 ? KP_MEMO_HEADER_LEN + 4 + kp_load32(data + 16, false)
					     : size;
	if (off <= size)
		walk(fz.buf + off, size - off, w, &nw, &few);
	for (size_t i = 0; i < nw; i++)
		if (kp_kmod_memo_get(m, w[i].type, w[i].q, &a))
			__builtin_trap();
	kp_kmod_memo_counts(m, &n);
	if (n.refused != 1 || n.replayed)
		__builtin_trap();
	kp_kmod_memo_free(m);
}

/*
 * Whether the file @path is now in the state @state as kmod-memo.c records a library's
 * (kp_file_state()'s eight values in hex, between colons).
 */
static bool in_state(const char *path, const char *state)
{
	struct stat st;
	uint64_t v[8];
	char now[200];

	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return false;
	kp_file_state(&st, v);
	snprintf(now, sizeof(now), "%llx:%llx:%llx:%llx:%llx:%llx:%llx:%llx",
		 (unsigned long long)v[0], (unsigned long long)v[1], (unsigned long long)v[2],
		 (unsigned long long)v[3], (unsigned long long)v[4], (unsigned long long)v[5],
		 (unsigned long long)v[6], (unsigned long long)v[7]);
	return !strcmp(now, state);
}

/*
 * Whether the first library record of the walked @w (@nw, @walked in all) names a file in
 * the state it gives, as the reader needs to believe the records: or it was not walked.
 */
static bool library_named(const struct walked *w, size_t nw, long walked, const unsigned char *p,
			  size_t len)
{
	for (size_t i = 0; i < nw; i++) {
		size_t off = w[i].strings;
		const char *path = (const char *)p + off + 4, *state;

		if (w[i].type != 'L')
			continue;
		if (w[i].n != 2 || walk_str(p, len, &off, false) < 0)
			return false;
		state = (const char *)p + off + 4;
		return walk_str(p, len, &off, false) >= 0 && in_state(path, state);
	}
	return walked < 0 || (size_t)walked > nw;
}

/*
 * This run's header and key, then (@ours) this run's library record, then the input's
 * records; without @ours, the input's own library record (its first) judges them.
 */
static void read_rebased(const uint8_t *data, size_t size, bool ours)
{
	struct walked w[FEW_RECORDS];
	struct kp_kmod_memo_counts n;
	struct kp_kmod_memo *m;
	struct kp_kmod_answer a;
	size_t off = size < KP_MEMO_HEADER_LEN ? size : KP_MEMO_HEADER_LEN, len, rlen, nw, got = 0;
	size_t head = ours ? fz.headlen : fz.keypart;
	uint32_t count = (size >= 12 ? kp_load32(data + 8, false) : 0) + (ours ? 1 : 0);
	const unsigned char *recs;
	bool clean, few;
	long walked;

	/* the input's records: what follows its key, as far as its key's length goes */
	if (size - off >= 4) {
		size_t kl = 4 + (size_t)kp_load32(data + off, false);

		off += kl < size - off ? kl : size - off;
	}
	len = KP_MEMO_HEADER_LEN + head + (size - off);
	memcpy(fz.buf, "KPKMODA1", 8);
	kp_store32(fz.buf + 8, count);
	memcpy(fz.buf + KP_MEMO_HEADER_LEN, fz.head, head);
	memcpy(fz.buf + KP_MEMO_HEADER_LEN + head, data + off, size - off);
	kp_store32(fz.buf + 12, kp_memo_crc(fz.buf + KP_MEMO_HEADER_LEN, len - KP_MEMO_HEADER_LEN));
	m = bind_file(len);
	recs = fz.buf + KP_MEMO_HEADER_LEN + fz.keypart;
	rlen = len - KP_MEMO_HEADER_LEN - fz.keypart;
	walked = walk(recs, rlen, w, &nw, &few);
	clean = walked >= 0 && (uint64_t)walked == count;
	for (size_t i = 0; i < nw; i++) {
		size_t first = 0;

		while (w[first].type != w[i].type || strcmp(w[first].q, w[i].q))
			first++;
		if (!kp_kmod_memo_get(m, w[i].type, w[i].q, &a)) {
			if (ours && clean && few)
				__builtin_trap(); /* a memo as the hook writes one not believed */
			continue;
		}
		got++;
		if (!clean)
			__builtin_trap(); /* a damaged memo believed */
		if (!same_answer(&a, &w[first], recs, rlen))
			__builtin_trap(); /* an answer the file does not hold */
	}
	if (got && !library_named(w, nw, walked, recs, rlen))
		__builtin_trap(); /* believed without the libkmod that answered, as it was */
	/* (clean, not few: the reader's own bounds may refuse it) */
	kp_kmod_memo_counts(m, &n);
	if (n.replayed != got || n.refused > 1 || (!clean && !n.refused) ||
	    (clean && few && n.refused))
		__builtin_trap();
	kp_kmod_memo_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t need = KP_MEMO_HEADER_LEN + fz.headlen + size;

	if (need > fz.cap) {
		unsigned char *p = realloc(fz.buf, need);

		if (!p)
			return 0;
		fz.buf = p;
		fz.cap = need;
	}
	read_foreign(data, size, false);
	read_foreign(data, size, true);
	/* the magic's last byte (never read but here) chooses whose library record judges */
	read_rebased(data, size, size < 8 || data[7] == '1');
	return 0;
}
