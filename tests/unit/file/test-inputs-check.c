// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A large manifest checked from several threads (lib/file/inputs-precheck.c) answers as the
 * one-thread walk does: NFILES inputs (a few other-writable, so kept with their digest), the
 * directory and an absent path recorded; then checked unchanged, with inputs changed early,
 * in the middle and last (the same first failure, the same paths listed in the same order),
 * with a digest entry touched (held by its bytes, the same fresh manifest), and cut short
 * (malformed: the same entries listed, not whole), for 1, 2 and 4 threads. The threads stop
 * past an entry that fails unless every one is to be listed; none start for a small manifest
 * or one job.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "file/inputs.h"
#include "file/inputs-internal.h"
#include "manifest-sink.h"
#include "tap.h"

#define NFILES 1500
/* this input is other-writable: stat()ed K_STATE, opened K_HASHED (its bytes compared) */
#define HASHED 900

static char dir[64];

static void path_of(char *buf, size_t len, int i)
{
	snprintf(buf, len, "%s/input-%04d", dir, i);
}

/* What a run reads: each input stat()ed and opened, the directory listed, an absent path. */
static void read_all(void)
{
	struct stat st;
	char p[128];
	DIR *d;

	kp_test_read_inputs(NFILES, path_of);
	d = kp_in_opendir(dir);
	if (d)
		closedir(d);
	snprintf(p, sizeof(p), "%s/absent", dir);
	kp_in_stat(p, &st);
}

/* A run recorded into @m (its spill file not in @dir: that listing is recorded). */
static int record(struct kp_test_manifest *m, const char **why)
{
	return kp_test_record(m, "/tmp", read_all, why);
}

static void settle(void)
{
	nanosleep(&(struct timespec){ .tv_sec = 1, .tv_nsec = 100000000 }, NULL);
}

static int append(int i)
{
	char p[128];
	int fd, r;

	path_of(p, sizeof(p), i);
	fd = open(p, O_WRONLY | O_APPEND | O_CLOEXEC);
	r = fd >= 0 && write(fd, "y", 1) == 1 ? 0 : -1;
	if (fd >= 0)
		close(fd);
	return r;
}

/* The two lists are the same: entries, paths in order, whole, stale, fresh manifests. */
static bool same_changes(const struct kp_inputs_changed *a, const struct kp_inputs_changed *b,
			 size_t len)
{
	if (a->n != b->n || a->npaths != b->npaths || a->whole != b->whole ||
	    a->stale != b->stale || !a->fresh != !b->fresh ||
	    (a->fresh && memcmp(a->fresh, b->fresh, len)))
		return false;
	for (size_t i = 0; i < a->npaths; i++)
		if (strcmp(a->paths[i], b->paths[i]))
			return false;
	return true;
}

/*
 * Every check of @m (@len bytes) with 2 and 4 threads answers as with one: the recheck's
 * answer @want, the same fresh manifest and rehash counts, the same changes listed (@c1 gets
 * the one-thread list, to release).
 */
static void same_answers(struct tap *t, const char *what, const unsigned char *m, size_t len,
			 int want, struct kp_inputs_changed *c1)
{
	struct kp_inputs_rehash rh1, rh;
	unsigned char *f1 = NULL, *f;
	int r1 = kp_inputs_recheck_counted(m, len, &f1, &rh1, 1);

	tap_is_intf(t, r1, want, "%s: one thread: %d", what, want);
	kp_inputs_recheck_listed(m, len, &f, &rh, c1, 1);
	free(f);
	for (unsigned jobs = 2; jobs <= 4; jobs += 2) {
		struct kp_inputs_changed c;
		int r = kp_inputs_recheck_counted(m, len, &f, &rh, jobs);

		tap_ok(t,
		       r == r1 && !f == !f1 && (!f || !memcmp(f, f1, len)) &&
			       rh.files == rh1.files && rh.bytes == rh1.bytes &&
			       rh.over == rh1.over,
		       "%s: %u threads: recheck %d, the same fresh manifest and counts", what, jobs,
		       r);
		free(f);
		r = kp_inputs_recheck_listed(m, len, &f, &rh, &c, jobs);
		tap_ok(t, r == r1 && same_changes(&c, c1, len),
		       "%s: %u threads: %zu entries, %zu paths listed, as with one", what, jobs,
		       c.n, c.npaths);
		free(f);
		kp_inputs_changed_release(&c);
	}
	free(f1);
}

/* The verdicts of the look-up of @m by 4 threads: how many entries were left unchecked. */
static size_t unchecked(const unsigned char *m, size_t len, bool stop, size_t *n)
{
	struct kp_inputs_prechecked pc;
	size_t u = 0;

	*n = 0;
	if (kp_inputs_precheck(m, len, 4, stop, &pc) < 0)
		return SIZE_MAX;
	for (size_t i = 0; i < pc.n; i++)
		u += pc.verdict[i] == V_UNCHECKED;
	*n = pc.n;
	kp_inputs_prechecked_release(&pc);
	return u;
}

int main(void)
{
	struct tap t = { 0 };
	struct kp_test_manifest m;
	struct kp_inputs_changed c;
	struct kp_inputs_prechecked pc;
	const char *why = NULL;
	char p[128], q[128];
	unsigned char *cut;
	size_t n, u;
	int r;

	snprintf(dir, sizeof(dir), "/tmp/kp-check-XXXXXX");
	if (!mkdtemp(dir) || kp_test_write_inputs(NFILES, path_of) < 0) {
		printf("Bail out! cannot make the inputs\n");
		return 1;
	}
	path_of(p, sizeof(p), HASHED);
	chmod(p, 0666);

	tap_is_int(&t, kp_inputs_check_threads(511, 4), 1, "threads: none for 511 entries");
	tap_is_int(&t, kp_inputs_check_threads(512, 4), 4, "threads: 4 for 512 entries, -j 4");
	tap_is_int(&t, kp_inputs_check_threads(5000, 1), 1, "threads: none for -j 1");
	tap_is_intf(&t, kp_inputs_check_threads(5000, 64), KP_INPUTS_CHECK_THREADS,
		    "threads: at most %d", KP_INPUTS_CHECK_THREADS);
	tap_ok(&t, kp_inputs_check_threads(5000, 0) >= 1, "threads: one per CPU, %u",
	       kp_inputs_check_threads(5000, 0));

	settle();
	r = record(&m, &why);
	tap_ok(&t, r == 0, "recorded (%s)", why ? why : "ok");
	if (r < 0)
		return tap_done(&t);
	/* the inputs (the other-writable one twice), the directory, the absent path */
	tap_is_intf(&t, kp_inputs_count(m.p, m.len), NFILES + 3, "%d entries", NFILES + 3);
	tap_is_int(&t, kp_inputs_precheck(m.p, m.len, 1, true, &pc), -1,
		   "one job: nothing looked up beforehand");

	same_answers(&t, "unchanged", m.p, m.len, 1, &c);
	tap_ok(&t, c.n == 0 && c.npaths == 0, "unchanged: nothing listed");
	kp_inputs_changed_release(&c);

	/* touched, the same bytes: a K_SUMMED input holds by its bytes */
	path_of(q, sizeof(q), HASHED - 1);
	utimensat(AT_FDCWD, q, NULL, 0);
	settle();
	same_answers(&t, "digest entry touched", m.p, m.len, 2, &c);
	kp_inputs_changed_release(&c);

	/* changed early, in the middle and last (the directory's listing stays) */
	tap_ok(&t, append(3) == 0 && append(700) == 0 && append(NFILES - 1) == 0,
	       "inputs 3, 700 and %d appended to", NFILES - 1);
	settle();
	same_answers(&t, "three changed", m.p, m.len, 0, &c);
	path_of(q, sizeof(q), 700);
	tap_ok(&t,
	       c.whole && c.n == 3 && c.npaths == 3 && strstr(c.paths[0], "input-0003") &&
		       !strcmp(c.paths[1], q) && strstr(c.paths[2], "input-1499"),
	       "three changed: 3, 700, 1499 listed in that order (%zu)", c.npaths);
	kp_inputs_changed_release(&c);

	/* only the first failure matters: entry 3 fails before any thread starts */
	u = unchecked(m.p, m.len, true, &n);
	tap_ok(&t, n == NFILES + 3 && u == n - 4,
	       "a failure early: %zu of %zu entries not looked up (all after it)", u, n);
	u = unchecked(m.p, m.len, false, &n);
	tap_ok(&t, n == NFILES + 3 && u == 0, "every one listed: all looked up (%zu left)", u);

	/* malformed further on: the entries before it are listed as with one thread */
	cut = malloc(m.len - 1);
	if (cut) {
		memcpy(cut, m.p, m.len - 1);
		same_answers(&t, "cut short", cut, m.len - 1, 0, &c);
		tap_ok(&t, !c.whole && c.npaths == 3, "cut short: not whole, 3 listed (%zu)",
		       c.npaths);
		kp_inputs_changed_release(&c);
		/* an entry count the records cannot hold: malformed at once */
		cut[15] = 0x7f;
		same_answers(&t, "count too large", cut, m.len - 1, 0, &c);
		tap_ok(&t, !c.whole && c.npaths == 0, "count too large: nothing listed");
		kp_inputs_changed_release(&c);
		free(cut);
	}

	/* the absent path made: its entry fails too, last */
	snprintf(q, sizeof(q), "%s/absent", dir);
	r = open(q, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (r >= 0)
		close(r);
	settle();
	same_answers(&t, "absent made", m.p, m.len, 0, &c);
	tap_ok(&t, c.npaths >= 4 && !strcmp(c.paths[c.npaths - 1], q),
	       "absent made: listed last (%zu paths)", c.npaths);
	kp_inputs_changed_release(&c);
	unlink(q);

	free(m.p);
	for (int i = 0; i < NFILES; i++) {
		path_of(p, sizeof(p), i);
		unlink(p);
	}
	rmdir(dir);
	return tap_done(&t);
}
