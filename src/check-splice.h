/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The splice's report store (check-splice-report.c): a plain `check --format json` report
 * kept with the simulation (sim/sim-store.h) in the result cache's entry, its bytes those of
 * the entry's output (not stored again), cut at the points that depend on the other modules'
 * verdicts (struct kp_check_block), and the report written again from them and a spliced
 * simulation's verdicts.
 *
 * Layout (little-endian): "KPSPLRP2"; the exit status without findings (8), --fail-on (8);
 * the head's and the tail's lengths (32 each: the output's first and last bytes); the node
 * count (32); per node: reported (8), and when it is, its block's offset in the output (64)
 * and length (32), the start and end of each mark (32 each, in enum order) and the end of its
 * simulated findings (32). The decoder checks that the head, the blocks in load order each
 * after its separator ("\n", then ",\n") and the tail make up the output exactly, that the
 * marks are in order inside each block, and that nothing follows the end.
 */
#ifndef KP_CHECK_SPLICE_H
#define KP_CHECK_SPLICE_H

#include "check-output.h"
#include "util/byte-writer.h"

struct kp_splice_report {
	int base_rc; /* the exit status without the findings: 0, 1 (a kernel beyond the model), 2 */
	enum kp_severity fail_on;
	const char *head, *tail; /* borrowed from the output's bytes */
	size_t headlen, taillen;
	size_t n;
	struct kp_check_block *blocks; /* like the nodes; text in the output, NULL: a provider */
};

/*
 * The report @cap kept (@g->n blocks, indexed like @g's nodes, written in @g's load order)
 * appended to @w with @base_rc and @fail_on. 0, or -1 with @why (a block not kept, a policy
 * finding before a simulated one, out of memory).
 */
int kp_splice_report_encode(struct kp_byte_writer *w, const struct kp_check_capture *cap,
			    const struct kp_graph *g, int base_rc, enum kp_severity fail_on,
			    const char **why);
/*
 * @len bytes at @p, a store of @n nodes loaded in @order (node indices), over the report's
 * @olen bytes at @op (the entry's output, which the blocks borrow) into @out (zeroed first):
 * 0, or -1 with @err.
 */
int kp_splice_report_decode(const unsigned char *p, size_t len, size_t n, const size_t *order,
			    const unsigned char *op, size_t olen, struct kp_splice_report *out,
			    struct kp_err *err);
void kp_splice_report_release(struct kp_splice_report *r);

/*
 * The report of the spliced verdicts @sv (indexed like @g's nodes) into @t: @r's head, in
 * @g's load order each reported module's block (@fresh[i] when its text is set: module i
 * simulated again, its block rendered with no policy finding; else @r's), with its global
 * taint added and after, the open record before its messages and its bridge findings
 * (kp_policy_bridges() over @sv) written from @sv; then @r's tail. *@rc gets the exit status
 * of those verdicts. @cap (NULL: not kept; else zeroed, kp_check_capture_release() it with
 * @g->n blocks, failed or not) gets the report as written, cut at its splice points as
 * check-json.c's capture cuts a report of these bytes (a new store's report part: the kept
 * blocks' marks moved), its blocks' texts borrowed from @t's bytes (@cap->borrowed: valid
 * while @t's buffer is, set once the whole report is written). 0, or -1 with @err (out of
 * memory).
 */
int kp_splice_report_write(struct kp_jtext *t, const struct kp_splice_report *r,
			   const struct kp_graph *g, const struct kp_verdict *sv,
			   const struct kp_check_block *fresh, struct kp_check_capture *cap,
			   int *rc, struct kp_err *err);

/* What `check` hands the splice's store after its JSON report (cmd-check.c). */
struct kp_splice_ask {
	const struct kp_check_out *out; /* the report's options */
	const struct kp_ctx_opts *opts; /* the target's options as given (the context-less path) */
	struct kp_check_capture *cap;	/* its bytes, kept while written; NULL: not kept */
	bool strict_ran;		/* the strict-rules pass ran (its verdicts feed findings) */
	bool waivers;			/* --waivers marked findings */
	int rc, base_rc;		/* the exit status, and the one without the findings */
};

/*
 * After a `check --format json` report recorded by the result cache (@a simulated with
 * KP_CTX_RECORD): its simulation, graph and report kept with the entry (check-splice-store.h;
 * not after the strict pass, with --waivers or --pretty) and, on a miss under
 * KOPOLICY_CACHE_STATS (cli->measure_splice), what a splice of the stored ones would keep and
 * whether the report written from the store over the spliced verdicts is the recompute's.
 * No output changes.
 */
void kp_check_splice_store(const struct kp_cli *cli, const struct kp_ctx *a,
			   const struct kp_splice_ask *ask);

/*
 * On a result-cache miss of a plain `check --format json` (the caller checks the options: no
 * -o, --compare, --waivers, --pretty, --provider): the report spliced from the previous
 * entry's store without the recompute (check-splice-use.c), when that entry has a store, its
 * run wrote nothing to stderr, and the context-less splice (check-splice-load.h, the facts
 * cache asked) holds: true, the report's bytes written to stdout, *@rc its exit status, the
 * entry to be stored with the store the splice made and the manifest carried over. False:
 * nothing written (the caller recomputes), KOPOLICY_CACHE_STATS's note says why.
 */
bool kp_check_splice_use(const struct kp_cli *cli, const struct kp_ctx_opts *opts, int *rc);

#endif
