// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `check --format json` through the result cache, recomputed: the recorded simulation stored
 * beside the output (sim/sim-store.h, check-splice-store.h), and, under KOPOLICY_CACHE_STATS
 * on a miss that found the entry of the same command with changed inputs (the splice not
 * used: check-splice-use.c, or KOPOLICY_SPLICE=measure), a splice of that stored simulation
 * run beside the recompute and compared with it (the line "splice: ..."); nothing here
 * changes an output.
 * A candidate only when every input of the stored entry that changed is a module file of
 * the stored set (run-cache.h kp_run_cache_changes()) and no interface digest changed.
 * The loads in order: a module whose file changed is simulated alone at its place
 * (kp_simulate_one(): its facts are not part of its reads), the others' stored verdicts
 * kept while their reads hold in the spliced state (else simulated alone too), the state
 * carried past each with the record of the verdict taken; then symbol_get() of those
 * simulated, and of the kept ones whose late reads no longer hold. A spliced verdict that
 * differs from the recompute's (policy findings aside: the report recomputes them) would be
 * a wrong splice and is listed. Then the JSON report kept with the simulation (the store is
 * both: check-splice.h) is written again over the spliced verdicts and compared with the
 * recompute's, byte for byte, and the exit status with it; the report store made from what
 * it wrote (the kept blocks' marks moved: what a used splice would store) is compared with
 * the one this run stores ("its store the same"). The graph's interface stored with
 * them (graph/graph-store.h: what a splice would rebuild the kept modules' graph from) is
 * compared with this run's graph, field for field ("graph stored: the same"). After a splice
 * ran (no interface digest changed, the same module set), the new store's graph part is the
 * previous store's bytes copied, not encoded again, while a fresh encoding says they are the
 * same ("graph copied: the same"; else the fresh one is stored). The simulation part a used
 * splice would store, made from the spliced verdicts (check-splice-sim.h: their bridges
 * added, the kept verdicts' bodies copied from the stored bytes), is compared with the one
 * this run stores, byte for byte ("simulation stored: the same"). When the splice ran, the
 * entry's manifest is carried over as a used splice would store it, only the changed files'
 * states and content keys replaced, and compared with the one this run stored (run-cache.h
 * kp_run_cache_carry(): "manifest carried: the same"). Then the splice is run again on its own,
 * without this run's context (check-splice-load.h: the kernel's facts alone, only the changed
 * modules read), and its whole report and exit status compared with the recompute's
 * ("context-less: the same (N bytes)").
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "cache/run-cache.h"
#include "file/inputs.h"
#include "graph/graph-rebuild.h"
#include "graph/graph-store.h"
#include "check-splice.h"
#include "check-splice-run.h"
#include "check-splice-sim.h"
#include "check-splice-load.h"
#include "check-splice-store.h"
#include "json-out.h"
#include "sim/sim-reads.h"
#include "sim/sim-store.h"
#include "sim/verdict-same.h"
#include "util/symbol-index.h"

/*
 * Marks in @changed (indexed like the nodes) the modules whose files are among the inputs
 * @ch that no longer hold; NULL when every one of them is a module file of the stored set
 * (a splice candidate: only those are read again), else why not into @note.
 */
static const char *mark_changed(const struct kp_graph *g, const struct kp_inputs_changed *ch,
				bool *changed, char *note, size_t len)
{
	if (!ch || !ch->whole) {
		snprintf(note, len, "splice: falls back: the changed inputs are not all known");
		return note;
	}
	for (size_t p = 0; p < ch->npaths; p++) {
		size_t i = 0;

		while (i < g->n && (!g->nodes[i].path || strcmp(g->nodes[i].path, ch->paths[p])))
			i++;
		if (i == g->n) {
			snprintf(note, len,
				 "splice: falls back: %.160s changed, not a module of the stored "
				 "set",
				 ch->paths[p]);
			return note;
		}
		changed[i] = true;
	}
	return NULL;
}

/* How many leading bytes @a (@alen bytes) and @b (@blen) share: both lengths when the same. */
static size_t same_prefix(const void *a, size_t alen, const void *b, size_t blen)
{
	const unsigned char *x = a, *y = b;
	size_t at = 0;

	while (at < alen && at < blen && x[at] == y[at])
		at++;
	return at;
}

/* The recompute's JSON report rendered again, once per measure for every comparison with it. */
struct recomputed {
	char *p; /* NULL until rendered */
	size_t len;
	bool failed; /* it could not be rendered (out of memory) */
};

/* @r's bytes, rendered from @a as @ask's output on the first call; NULL when they cannot be. */
static const char *recomputed_report(const struct kp_ctx *a, const struct kp_splice_ask *ask,
				     struct recomputed *r)
{
	struct kp_check_out o = *ask->out;
	bool bad;

	if (r->p || r->failed)
		return r->p;
	o.capture = NULL;
	o.f = open_memstream(&r->p, &r->len);
	if (!o.f) {
		r->failed = true;
		return NULL;
	}
	bad = kp_check_print_json(&o, a, NULL) < 0;
	if (fclose(o.f) != 0 || bad) {
		free(r->p);
		r->p = NULL;
		r->failed = true;
	}
	return r->p;
}

/*
 * The report store's part encoded from the report the splice wrote (@ncap, cut as it was
 * written: kp_splice_report_write()) with @rep's exit status and --fail-on, against the one
 * this run stores (@ask's capture): ", its store the same" or how it differs, appended to
 * @note (what a used splice would store for the next one to splice from).
 */
static void compare_report_store(const struct kp_check_capture *ncap, const struct kp_graph *ng,
				 const struct kp_splice_report *rep,
				 const struct kp_splice_ask *ask, const struct kp_graph *g,
				 char *note, size_t len)
{
	struct kp_byte_writer mine = { 0 }, theirs = { 0 };
	const char *why = NULL;
	size_t at = 0, used = strlen(note);

	if (kp_splice_report_encode(&mine, ncap, ng, rep->base_rc, rep->fail_on, &why) < 0 ||
	    kp_splice_report_encode(&theirs, ask->cap, g, ask->base_rc, ask->out->fail_on, &why) <
		    0) {
		snprintf(note + used, len - used, ", its store not made: %.120s", why);
	} else {
		at = same_prefix(mine.p, mine.len, theirs.p, theirs.len);
		if (at == mine.len && at == theirs.len)
			snprintf(note + used, len - used, ", its store the same");
		else
			snprintf(note + used, len - used,
				 ", its store differs (%zu bytes, the recompute's %zu, from byte "
				 "%zu)",
				 mine.len, theirs.len, at);
	}
	free(mine.p);
	free(theirs.p);
}

/*
 * The report written from the store @rep over the spliced verdicts of @s (the modules
 * simulated again rendered from their verdicts) against the recompute's (@rr)
 * for the comparison, and the two exit statuses, and the report store made from what it
 * wrote against this run's (compare_report_store()): what, in @note.
 */
static void compare_report(const struct kp_ctx *a, const struct kp_splice_run *s,
			   const struct kp_splice_report *rep, const struct kp_splice_ask *ask,
			   struct recomputed *rr, char *note, size_t len)
{
	struct kp_check_block *fresh = calloc(a->graph.n ? a->graph.n : 1, sizeof(*fresh));
	struct kp_check_capture ncap = { 0 };
	struct kp_jtext t = { 0 };
	const char *want = NULL;
	size_t at;
	struct kp_err err;
	int rc = 0;

	if (!fresh) {
		snprintf(note, len, "report not spliced: out of memory");
		return;
	}
	for (size_t i = 0; i < a->graph.n; i++) {
		struct kp_jtext b = { 0 };

		if (!s->again[i] || a->graph.nodes[i].provider)
			continue;
		kp_check_block_text(&b, a, &s->sv[i], NULL, &fresh[i]);
		fresh[i].text = b.buf;
		fresh[i].len = b.len;
		if (b.failed || !fresh[i].policy_last)
			t.failed = true;
	}
	if (!t.failed)
		want = recomputed_report(a, ask, rr);
	if (!want ||
	    kp_splice_report_write(&t, rep, &s->rb->g, s->sv, fresh, &ncap, &rc, &err) < 0) {
		snprintf(note, len, "report not spliced: out of memory");
	} else {
		at = same_prefix(t.buf, t.len, want, rr->len);
		if (at == t.len && at == rr->len)
			snprintf(note, len, "report spliced: the same %zu bytes", rr->len);
		else
			snprintf(note, len,
				 "report spliced: %zu bytes, differs from the recompute's %zu at "
				 "byte %zu",
				 t.len, rr->len, at);
		if (rc != ask->rc)
			snprintf(note + strlen(note), len - strlen(note),
				 ", exit status %d where the recompute's is %d", rc, ask->rc);
		compare_report_store(&ncap, &s->rb->g, rep, ask, &a->graph, note, len);
	}
	kp_check_capture_release(&ncap, a->graph.n);
	for (size_t i = 0; i < a->graph.n; i++)
		free(fresh[i].text);
	free(fresh);
	free(t.buf);
}

/*
 * The graph's interface stored with the simulation (@gs: the one a splice would rebuild the
 * kept modules' graph from) against this run's graph @g, in @note: the same, or what first
 * differs. The stored run's graph: its modules whose files changed are compared too, so a
 * difference there is one the interface digest let through.
 */
static void compare_graph(struct kp_graph_stored *gs, const struct kp_graph *g, char *note,
			  size_t len)
{
	size_t node;
	const char *what = kp_graph_stored_differs(gs, g, &node);

	if (!what)
		snprintf(note, len, "graph stored and rebuilt: the same");
	else
		snprintf(note, len, "graph stored: differs (%s of %.120s)", what,
			 node < g->n && g->nodes[node].mod->name ? g->nodes[node].mod->name
								 : "(none)");
}

/*
 * The previous store's graph part @gp of @glen bytes, which the new store takes as it is when
 * a splice ran (no interface digest changed, the same module set: the same graph), against a
 * fresh encoding of this run's graph @g, in @note; *@copy set when they are the same (else
 * the new store has the fresh one).
 */
static void compare_copy(const unsigned char *gp, size_t glen, const struct kp_graph *g, bool *copy,
			 char *note, size_t len)
{
	size_t flen, at;
	int rc = kp_graph_store_compare(gp, glen, g, &flen, &at);

	*copy = rc == 0;
	if (rc < 0)
		snprintf(note, len, "graph not copied: out of memory");
	else if (rc == 0)
		snprintf(note, len, "graph copied: the same");
	else
		snprintf(note, len,
			 "graph copied: differs (%zu bytes, a fresh encoding %zu, from byte %zu; "
			 "the fresh one stored)",
			 glen, flen, at);
}

/*
 * The simulation part of the store made from the splice run @s (check-splice-sim.h) against
 * the one this run stores (@sim of @simlen bytes), in @note: "simulation stored: the same",
 * or where it differs.
 */
static void compare_sim(const struct kp_graph *g, const struct kp_splice_run *s,
			unsigned long final_taint, const unsigned char *sim, size_t simlen,
			char *note, size_t len)
{
	unsigned char *p = NULL;
	size_t plen = 0, at;
	struct kp_err err;

	if (kp_splice_sim_encode(g, s, final_taint, &p, &plen, &err) < 0) {
		snprintf(note, len, "simulation stored: not made: %.120s", err.msg);
		return;
	}
	at = same_prefix(p, plen, sim, simlen);
	if (at == plen && at == simlen)
		snprintf(note, len, "simulation stored: the same");
	else
		snprintf(note, len,
			 "simulation stored: differs (%zu bytes, the recompute's %zu, from byte "
			 "%zu)",
			 plen, simlen, at);
	free(p);
}

/*
 * The stored simulation @was against this run's (@a, its interface digests @now indexed
 * like the nodes, @ch the inputs of the stored entry that changed; @rr its report rendered
 * again, on first use, for every comparison with it): why a splice falls
 * back, else the splice run (splice_run()) and the count of verdicts it kept, those it
 * simulated again and those that differ from the recompute, in @note; after a splice run,
 * *@copy set when the stored graph part @gp (@glen bytes) is the new store's (compare_copy());
 * the simulation part made from the splice compared with this run's @sim (@simlen bytes);
 * true when the splice ran (then its entry's manifest is carried over too:
 * kp_run_cache_carry()).
 */
static bool measure(const struct kp_ctx *a, const struct kp_sim_stored *was,
		    struct kp_graph_stored *gs, const struct kp_splice_report *rep,
		    const struct kp_splice_ask *ask, const unsigned char (*now)[KP_SIM_IFACE_LEN],
		    const struct kp_inputs_changed *ch, const unsigned char *gp, size_t glen,
		    const unsigned char *sim, size_t simlen, struct recomputed *rr, bool *copy,
		    char *note, size_t len)
{
	char report[320], graph[200], copied[160], simst[200];
	const struct kp_graph *g = &a->graph;
	struct kp_splice_run s = { .facts = &a->facts };
	size_t n = g->n ? g->n : 1, again = 0, differ = 0, nchanged = 0;
	char names[160] = "", cnames[160] = "";
	size_t nlen = 0, clen = 0, node;
	unsigned long final_taint = 0;
	struct kp_graph_rebuilt rb = { 0 };
	const char **mnames = NULL, **mpaths = NULL, *what;
	const struct kp_module **real = NULL;
	struct kp_err err;
	bool *changed, ran = false;

	if (was->n != g->n) {
		snprintf(note, len, "splice: falls back: %zu modules, %zu stored", g->n, was->n);
		return false;
	}
	for (size_t k = 0; k < g->n; k++) {
		size_t i = g->order[k];
		const struct kp_node *nd = &g->nodes[i];

		if (was->order[k] != i || !nd->path || !nd->mod->name ||
		    strcmp(was->mods[i].path, nd->path) ||
		    strcmp(was->mods[i].name, nd->mod->name)) {
			snprintf(note, len,
				 "splice: falls back: the module set or load order changed");
			return false;
		}
		if (memcmp(was->mods[i].iface, now[i], KP_SIM_IFACE_LEN)) {
			snprintf(note, len, "splice: falls back: the interface of %.160s changed",
				 nd->mod->name);
			return false;
		}
	}
	s.rb = &rb;
	changed = calloc(n, sizeof(*changed));
	mnames = calloc(n, sizeof(*mnames));
	mpaths = calloc(n, sizeof(*mpaths));
	real = calloc(n, sizeof(*real));
	if (!changed || !mnames || !mpaths || !real ||
	    kp_splice_run_init(&s, was, a->facts.loaded, a->facts.nloaded) < 0) {
		snprintf(note, len, "splice: falls back: out of memory");
		goto out;
	}
	if (mark_changed(g, ch, changed, note, len))
		goto out;
	/* the graph from the store, the changed modules' facts in it: the one the splice uses */
	for (size_t i = 0; i < g->n; i++) {
		mnames[i] = was->mods[i].name;
		mpaths[i] = was->mods[i].path;
		real[i] = changed[i] ? g->nodes[i].mod : NULL;
	}
	/* a module simulated again: this run's read of it (the same interface) */
	s.mods = real;
	if (kp_graph_rebuild(&rb, gs, mnames, mpaths, real, was->order, g->base, &err) < 0) {
		snprintf(note, len, "splice: falls back: rebuilding the graph: %.200s", err.msg);
		goto out;
	}
	what = kp_graph_differs(&rb.g, g, &node);
	if (what) {
		snprintf(note, len,
			 "splice: falls back: the graph rebuilt from the store differs (%s of "
			 "%.160s)",
			 what, node < g->n ? g->nodes[node].mod->name : "(none)");
		goto out;
	}
	for (size_t i = 0; i < g->n; i++)
		real[i] = g->nodes[i].mod;
	if (kp_splice_run(&s, changed, &final_taint, &err) < 0) {
		snprintf(note, len, "splice: falls back: %.200s", err.msg);
		goto out;
	}
	for (size_t k = 0; k < g->n; k++) {
		size_t i = g->order[k];

		again += s.again[i];
		if (changed[i]) {
			nchanged++;
			kp_splice_add_name(cnames, sizeof(cnames), &clen, g->nodes[i].mod->name);
		}
		/* a spliced verdict that differs is a wrong splice: listed, never expected */
		if (!kp_verdict_same_simulated(&s.sv[i], &a->sim.v[i])) {
			differ++;
			kp_splice_add_name(names, sizeof(names), &nlen, g->nodes[i].mod->name);
		}
	}
	if (final_taint != a->sim.global_taint) {
		differ++;
		kp_splice_add_name(names, sizeof(names), &nlen, "(the global taint)");
	}
	compare_report(a, &s, rep, ask, rr, report, sizeof(report));
	compare_graph(gs, g, graph, sizeof(graph));
	compare_copy(gp, glen, g, copy, copied, sizeof(copied));
	compare_sim(g, &s, final_taint, sim, simlen, simst, sizeof(simst));
	snprintf(note, len,
		 "splice: %zu of %zu verdicts kept, %zu simulated again (%zu module files "
		 "changed: %s; %zu spliced and differing: %s; %s; %s; %s; %s); measured only, "
		 "the recompute answers",
		 g->n - again, g->n, again, nchanged, nchanged ? cnames : "none", differ,
		 differ ? names : "none", graph, copied, simst, report);
	ran = true;
out:
	kp_splice_run_release(&s);
	kp_graph_rebuilt_release(&rb);
	free(mnames);
	free(mpaths);
	free(real);
	free(changed);
	return ran;
}

/*
 * The context-less splice (check-splice-load.h) run on its own beside this recompute @a:
 * its whole report's bytes and exit status against the recompute's (@rr), in
 * @note: "context-less: the same (N bytes)", "differs (...)" or "falls back: WHY".
 */
static void compare_ctxless(const struct kp_ctx *a, const struct kp_splice_ask *ask,
			    const struct kp_ctxless_in *in, struct recomputed *rr, char *note,
			    size_t len)
{
	struct kp_ctxless_out cl;
	const char *want;
	char why[240];
	size_t at;

	if (kp_check_splice_ctxless(in, &cl, why, sizeof(why)) < 0) {
		snprintf(note, len, "context-less: falls back: %.180s", why);
		return;
	}
	want = recomputed_report(a, ask, rr);
	if (!want) {
		snprintf(note, len, "context-less: not compared: out of memory");
	} else {
		at = same_prefix(cl.t.buf, cl.t.len, want, rr->len);
		if (at == cl.t.len && at == rr->len && cl.rc == ask->rc)
			snprintf(note, len, "context-less: the same (%zu bytes)", rr->len);
		else
			snprintf(note, len,
				 "context-less: differs (%zu bytes, the recompute's %zu, from byte "
				 "%zu; exit status %d, the recompute's %d)",
				 cl.t.len, rr->len, at, cl.rc, ask->rc);
	}
	free(cl.t.buf);
}

void kp_check_splice_store(const struct kp_cli *cli, const struct kp_ctx *a,
			   const struct kp_splice_ask *ask)
{
	unsigned char(*digests)[KP_SIM_IFACE_LEN];
	struct kp_splice_stored st;
	const unsigned char *prev, *out;
	struct kp_splice_store_pieces pieces;
	unsigned char *sim;
	const char *why = NULL;
	struct kp_err err;
	size_t simlen, plen, olen;
	struct recomputed rr = { 0 };
	bool copy = false;
	char note[1024], ctxless[400];

	if (!kp_run_cache_recording(cli->runs) || !a->sim.rec)
		return;
	if (ask->strict_ran || ask->waivers || !ask->cap) {
		/* the strict pass's verdicts feed the findings; waivers mark them */
		snprintf(note, sizeof(note), "splice: not stored: %s",
			 ask->strict_ran ? "the strict-rules pass ran"
			 : ask->waivers	 ? "--waivers marks the findings"
					 : "the report was not kept (--pretty, or no memory)");
		kp_run_cache_note(cli->runs, note);
		return;
	}
	digests = calloc(a->graph.n ? a->graph.n : 1, sizeof(*digests));
	if (!digests || kp_sim_store_encode(&a->graph, &a->sim, &sim, &simlen, digests, &err) < 0) {
		snprintf(note, sizeof(note), "splice: not stored: %.200s",
			 digests ? err.msg : "out of memory");
		kp_run_cache_note(cli->runs, note);
		free(digests);
		return;
	}
	/* the measure beside the recompute: KOPOLICY_CACHE_STATS only */
	prev = cli->measure_splice ? kp_run_cache_previous(cli->runs, &plen) : NULL;
	out = prev ? kp_run_cache_previous_output(cli->runs, &olen) : NULL;
	memset(&st, 0, sizeof(st));
	if (prev) {
		if (!out)
			snprintf(note, sizeof(note), "splice: falls back: %s",
				 "the stored output: out of memory");
		else if (kp_splice_store_decode(prev, plen, out, olen, &st, &err) < 0)
			snprintf(note, sizeof(note), "splice: falls back: %.200s", err.msg);
		else if (measure(a, &st.was, &st.gs, &st.rep, ask,
				 (const unsigned char(*)[KP_SIM_IFACE_LEN])digests,
				 kp_run_cache_changes(cli->runs), st.gp, st.glen, sim, simlen, &rr,
				 &copy, note, sizeof(note))) {
			struct kp_ctxless_in in = { .cli = cli,
						    .opts = ask->opts,
						    .st = &st,
						    .ch = kp_run_cache_changes(cli->runs),
						    .quiet = kp_run_cache_previous_quiet(cli->runs),
						    .uncached = true };

			kp_run_cache_carry(cli->runs);
			if (ask->opts) {
				compare_ctxless(a, ask, &in, &rr, ctxless, sizeof(ctxless));
				snprintf(note + strlen(note), sizeof(note) - strlen(note), "; %s",
					 ctxless);
			}
		}
		kp_run_cache_note(cli->runs, note);
		free(rr.p);
	}
	/*
	 * A splice that ran kept the graph: the previous store's part, copied (compare_copy()).
	 * A store that cannot be made says so in place of the measure's line.
	 */
	if (kp_splice_store_pieces(&a->graph, sim, simlen, copy ? st.gp : NULL, st.glen, ask->cap,
				   ask->base_rc, ask->out->fail_on, &pieces, &why) < 0) {
		snprintf(note, sizeof(note), "splice: not stored: %.200s", why);
		kp_run_cache_note(cli->runs, note);
	} else {
		/* written from where its pieces lie: the copied graph part in the previous store */
		kp_run_cache_keep_pieces(cli->runs, pieces.v, pieces.n, pieces.own, pieces.nown);
	}
	kp_splice_stored_release(&st);
	free(digests);
}
