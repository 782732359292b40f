/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The context-less splice (check-splice-load.c, issue 28 layer 5): a plain `check --format
 * json` report written from the previous entry's store without the walk and without reading
 * the modules that did not change; used in place of the recompute (check-splice-use.c) or
 * measured beside it (check-splice.c). The kernel's facts alone (lib/ctx
 * kp_ctx_load_kernel_facts(), through the base cache), the changed modules read as the set
 * reader reads them (the facts cache, else the file), their names and interface digests the
 * stored ones, the graph rebuilt from the store with them (graph/graph-rebuild.h, lazily: the
 * load order and cycle flags the store's, a node's edges taken when the run first needs them),
 * the splice run over it (check-splice-run.h; a kept module whose reads no longer hold read lazily
 * by its stored path), the re-simulated modules' blocks written over a thin view of that graph and
 * those facts, the report written from the store (kp_splice_report_write()).
 *
 * Anything unexpected is a fall back (-1 with why), never a wrong answer: a changed input that
 * is not a module file of the stored set, a read error or any line said while loading the
 * kernel or reading a module, a stored run that wrote to stderr (only stdout's bytes are
 * written again), a name or interface that changed, a graph that does not rebuild, a target
 * without the 2020 and 2023 rules (the strict pass's findings are not stored).
 */
#ifndef KP_CHECK_SPLICE_LOAD_H
#define KP_CHECK_SPLICE_LOAD_H

#include "ctx-options.h"
#include "check-splice.h"
#include "check-splice-store.h"
#include "file/inputs.h"
#include "graph/graph-store.h"
#include "json-out.h"
#include "sim/sim-store.h"

/* What the context-less splice is given: the options and the previous entry's store. */
struct kp_ctxless_in {
	const struct kp_cli *cli;
	const struct kp_ctx_opts *opts;	    /* the command line's, as given */
	struct kp_splice_stored *st;	    /* the previous entry's store (its graph read lazily) */
	const struct kp_inputs_changed *ch; /* the stored entry's inputs that changed */
	bool quiet; /* the stored entry's run wrote nothing to stderr (run-cache.h) */
	/*
	 * the modules read from their files, the facts cache not asked (the measure beside the
	 * recompute: the cache's counters stay the recompute's)
	 */
	bool uncached;
	/*
	 * the store the next run splices from made too (a used splice: check-splice-use.c): the
	 * simulation part over the spliced verdicts (check-splice-sim.h, the stubs carrying the
	 * stored interface digests), the graph part copied, the report part from what was written
	 */
	bool keep;
};

/* What it made: the report's bytes, the exit status, the counts for a note. */
struct kp_ctxless_out {
	struct kp_jtext t; /* the report (t.buf malloc()ed, the caller's) */
	int rc;
	size_t changed, again; /* module files changed; modules simulated again */
	size_t n;	       /* modules */
	char names[160];       /* the changed modules' names, as many as fit */
	/* @keep: the new store, the caller's (kp_splice_store_pieces_release()) */
	struct kp_splice_store_pieces store;
};

/*
 * The report of the splice of @in into @out: 0, or -1 with why into @why (@len bytes: the
 * caller recomputes).
 */
int kp_check_splice_ctxless(const struct kp_ctxless_in *in, struct kp_ctxless_out *out, char *why,
			    size_t len);

#endif
