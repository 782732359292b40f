// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The splice used (issue 28, layer 5): a result-cache miss of a plain `check --format json`
 * answered from the previous entry's store by the context-less splice (check-splice-load.h)
 * in place of the recompute, and the entry stored with the store that splice made (written
 * from its pieces: check-splice-store.h) and the previous manifest carried over (run-cache.h
 * kp_run_cache_use_carried()). Every condition the recompute could answer otherwise is a
 * fall back before a byte is written.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "cache/facts-cache.h"
#include "cache/run-cache.h"
#include "check-splice.h"
#include "check-splice-load.h"
#include "check-splice-store.h"

/* "splice: not used: @why" for KOPOLICY_CACHE_STATS; false. */
static bool not_used(const struct kp_cli *cli, const char *why)
{
	char note[300];

	snprintf(note, sizeof(note), "splice: not used: %.260s", why);
	kp_run_cache_note(cli->runs, note);
	return false;
}

/*
 * The previous entry's manifest carried over for this run's entry (run-cache.h
 * kp_run_cache_use_carried()), once the facts cache noted the changed modules' bytes (its
 * stores may run on): 0, or -1 with why (the entry could not be stored: a recompute's is).
 */
static int carry(const struct kp_cli *cli, char *why, size_t len)
{
	const char *no = NULL;

	kp_facts_cache_wait_stored(kp_cli_facts_cache(cli));
	if (kp_run_cache_use_carried(cli->runs, &no) == 0)
		return 0;
	snprintf(why, len, "the manifest not carried: %.200s", no);
	return -1;
}

bool kp_check_splice_use(const struct kp_cli *cli, const struct kp_ctx_opts *opts, int *rc)
{
	struct kp_ctxless_out cl = { 0 };
	struct kp_splice_stored st;
	const unsigned char *prev, *out;
	struct kp_err err = { 0 };
	char why[240], note[400];
	size_t plen, olen;
	bool used = false;

	if (!kp_run_cache_recording(cli->runs))
		return false;
	prev = kp_run_cache_previous(cli->runs, &plen);
	if (!prev)
		return false; /* no entry to splice from: a first run, or one without a store */
	/* the report is stdout's bytes alone: a stored run's stderr lines are not in the store */
	if (!kp_run_cache_previous_quiet(cli->runs))
		return not_used(cli, "the stored run wrote to stderr");
	/* the report's blocks are read in that entry's output */
	out = kp_run_cache_previous_output(cli->runs, &olen);
	if (!out)
		return not_used(cli, "the stored output: out of memory");
	if (kp_splice_store_decode(prev, plen, out, olen, &st, &err) < 0) {
		not_used(cli, err.msg);
	} else {
		struct kp_ctxless_in in = { .cli = cli,
					    .opts = opts,
					    .st = &st,
					    .ch = kp_run_cache_changes(cli->runs),
					    .quiet = true,
					    .keep = true };

		if (kp_check_splice_ctxless(&in, &cl, why, sizeof(why)) < 0) {
			not_used(cli, why);
		} else if (carry(cli, why, sizeof(why)) < 0) {
			not_used(cli, why);
		} else {
			used = true;
			/* a short write marks the entry broken (not stored); the caller flushes */
			fwrite(cl.t.buf, 1, cl.t.len, stdout);
			*rc = cl.rc;
			/* written from where its pieces lie (never more than the cache keeps) */
			kp_run_cache_keep_pieces(cli->runs, cl.store.v, cl.store.n, cl.store.own,
						 cl.store.nown);
			cl.store.nown = 0; /* the result cache's now */
			snprintf(note, sizeof(note),
				 "splice: used (%zu of %zu verdicts kept, %zu simulated again, %zu "
				 "module files changed: %s)",
				 cl.n - cl.again, cl.n, cl.again, cl.changed,
				 cl.changed ? cl.names : "none");
			kp_run_cache_note(cli->runs, note);
		}
	}
	free(cl.t.buf);
	kp_splice_store_pieces_release(&cl.store);
	kp_splice_stored_release(&st);
	return used;
}
