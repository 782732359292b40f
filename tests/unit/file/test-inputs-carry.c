// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kp_inputs_carry() (lib/file/inputs-carry.c) with many changed paths: NFILES inputs
 * recorded, then some or all of them changed; each entry of a changed path is replaced
 * (looked up among as many changed paths), the others are kept as stored, and the manifest
 * carried over holds the same entries as one a whole run records now (kp_inputs_differ()).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "file/inputs.h"
#include "manifest-sink.h"
#include "tap.h"

#define NFILES 2000

static char dir[64];

static void path_of(char *buf, size_t len, int i)
{
	snprintf(buf, len, "%s/input-%04d", dir, i);
}

/* What a run reads: each input stat()ed and opened, an absent path stat()ed. */
static void read_all(void)
{
	struct stat st;
	char p[128];

	kp_test_read_inputs(NFILES, path_of);
	snprintf(p, sizeof(p), "%s/absent", dir);
	kp_in_stat(p, &st);
}

/* A run recorded into @m: 0, or -1 with @why. */
static int record(struct kp_test_manifest *m, const char **why)
{
	return kp_test_record(m, dir, read_all, why);
}

static void wait_past_a_second(void)
{
	nanosleep(&(struct timespec){ .tv_sec = 1, .tv_nsec = 100000000 }, NULL);
}

/* Every @step-th input appended to: how many; -1 when one could not be. */
static int change(int step)
{
	int n = 0;

	for (int i = 0; i < NFILES; i += step) {
		char p[128];
		int fd;
		bool ok;

		path_of(p, sizeof(p), i);
		fd = open(p, O_WRONLY | O_APPEND | O_CLOEXEC);
		ok = fd >= 0 && write(fd, "z", 1) == 1;
		if (fd >= 0)
			close(fd);
		if (!ok)
			return -1;
		n++;
	}
	return n;
}

/* Every @step-th input changed, then the stored manifest carried over and compared. */
static void carry(struct tap *t, int step)
{
	struct kp_inputs_changed c = { 0 };
	struct kp_test_manifest before, now;
	struct kp_inputs *in;
	unsigned char *out = NULL;
	size_t olen = 0, carried = 0;
	const char *why = NULL;
	char note[256] = "";
	int n, r, spill;

	r = record(&before, &why);
	tap_ok(t, r == 0, "every %d: recorded (%s)", step, r == 0 ? "ok" : why);
	wait_past_a_second();
	n = change(step);
	/* not changed within the last second: their new states may be carried */
	wait_past_a_second();
	r = kp_inputs_changes(before.p, before.len, &c);
	tap_ok(t, r == 0 && c.whole && n > 0 && c.npaths == (size_t)n && c.n == (size_t)n,
	       "every %d: %zu paths changed, %zu entries (%d wanted)", step, c.npaths, c.n, n);
	spill = kp_test_spill_file(dir);
	in = spill >= 0 ? kp_inputs_new(spill, 0) : NULL;
	r = in ? kp_inputs_carry(in, before.p, before.len, &c, &out, &olen, &carried, &why) : -1;
	tap_ok(t, r == 0 && carried == (size_t)n, "every %d: %zu entries replaced (%d) (%s)", step,
	       carried, n, r == 0 ? "ok" : why);
	kp_inputs_free(in);
	if (spill >= 0)
		close(spill);
	r = record(&now, &why) == 0 && out
		    ? kp_inputs_differ(out, olen, now.p, now.len, note, sizeof(note))
		    : -1;
	tap_is_intf(t, r, 0, "every %d: the manifest carried over is the one recorded now%s%s",
		    step, *note ? ": " : "", note);
	tap_ok(t, r == 0 && kp_inputs_count(out, olen) == NFILES + 1, "every %d: %zu entries (%d)",
	       step, kp_inputs_count(out, olen), NFILES + 1);
	kp_inputs_changed_release(&c);
	free(out);
	free(before.p);
	free(now.p);
}

int main(void)
{
	struct tap t = { 0 };
	char p[128];

	snprintf(dir, sizeof(dir), "/tmp/kp-carry-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	if (kp_test_write_inputs(NFILES, path_of) < 0)
		return 1;
	/* an input changed less than a second before the run is not trusted */
	wait_past_a_second();
	carry(&t, 7); /* some of them: the others kept */
	carry(&t, 1); /* all of them */
	for (int i = 0; i < NFILES; i++) {
		path_of(p, sizeof(p), i);
		unlink(p);
	}
	rmdir(dir);
	return tap_done(&t);
}
