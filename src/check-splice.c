// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `check --format json` through the result cache: the recorded simulation stored beside the
 * output (sim/sim-store.h), and, on a miss that found the entry of the same command with
 * changed inputs, a splice of that stored simulation run beside the recompute and compared
 * with it (the KOPOLICY_CACHE_STATS line "splice: ..."); nothing here changes an output.
 * A candidate only when every input of the stored entry that changed is a module file of
 * the stored set (run-cache.h kp_run_cache_changes()) and no interface digest changed.
 * The loads in order: a module whose file changed is simulated alone at its place
 * (kp_simulate_one(): its facts are not part of its reads), the others' stored verdicts
 * kept while their reads hold in the spliced state (else simulated alone too), the state
 * carried past each with the record of the verdict taken; then symbol_get() of those
 * simulated, and of the kept ones whose late reads no longer hold. A spliced verdict that
 * differs from the recompute's (policy findings aside: layer 4 recomputes them) would be
 * a wrong splice and is listed.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "cache/run-cache.h"
#include "file/inputs.h"
#include "check-output.h"
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

/* Appends @name to the list @names (@size bytes, @nlen used) while it fits. */
static void add_name(char *names, size_t size, size_t *nlen, const char *name)
{
	int w = snprintf(names + *nlen, size - *nlen, "%s%s", *nlen ? " " : "", name);

	if (w > 0 && (size_t)w < size - *nlen)
		*nlen += (size_t)w;
}

/* A splice being run against the recompute (measure()). */
struct splice {
	const struct kp_ctx *a;
	const struct kp_sim_stored *was;
	struct kp_verdict *sv;	     /* the spliced verdicts (borrowed or @ones'), like the nodes */
	struct kp_simulation *ones;  /* the modules simulated alone (kp_simulate_one()) */
	bool *again;		     /* node simulated alone */
	struct kp_sim_state *states; /* the state before each place in load order */
	struct kp_symbol_index live, unformed; /* names: live modules, left UNFORMED */
};

/* Module @k of the load order simulated alone in @s->states[k], its verdict spliced in. */
static int simulate_alone(struct splice *s, size_t k, struct kp_err *err)
{
	const struct kp_ctx *a = s->a;
	size_t i = a->graph.order[k];

	if (s->again[i])
		kp_simulation_release(&s->ones[i]);
	s->again[i] = false;
	if (kp_simulate_one(&a->graph, &a->facts, s->sv, k, &s->states[k], &s->ones[i], err) < 0)
		return -1;
	s->again[i] = true;
	s->sv[i] = s->ones[i].v[i];
	return 0;
}

/*
 * The loads in order, each verdict kept while its stored reads hold in the spliced state,
 * else (its file changed, @changed) simulated alone; the state carried with the record of
 * the verdict taken. Then symbol_get() of each: a kept verdict whose late reads no longer
 * hold is simulated alone again. 0, or -1 with @err.
 */
static int splice_run(struct splice *s, const bool *changed, unsigned long *final_taint,
		      struct kp_err *err)
{
	const struct kp_ctx *a = s->a;
	const struct kp_graph *g = &a->graph;
	struct kp_sim_state st = { .taint = a->facts.initial_taint };
	size_t seq = 0;

	for (size_t k = 0; k < g->n; k++) {
		size_t i = g->order[k];
		const char *name = g->nodes[i].mod->name;
		const struct kp_sim_reads *r;

		if (k == 0)
			st.once = s->was->sim.rec[i].once_before;
		st.name_live = kp_symbol_index_find(&s->live, name) != NULL;
		st.name_unformed = !st.name_live && kp_symbol_index_find(&s->unformed, name);
		s->states[k] = st;
		if (!changed[i] && kp_sim_reads_hold(&s->was->sim, i, &st, s->sv)) {
			r = &s->was->sim.rec[i];
			s->sv[i] = s->was->sim.v[i];
			/* derived from the state it is kept in, not stored values */
			s->sv[i].global_added = r->taint_set & ~st.taint;
			s->sv[i].global_after = (st.taint | r->taint_set) & ~a->facts.initial_taint;
			s->sv[i].load_seq = s->sv[i].loads ? seq + 1 : 0;
		} else {
			if (simulate_alone(s, k, err) < 0)
				return -1;
			r = &s->ones[i].rec[i];
		}
		seq += s->sv[i].loads;
		/* the D taint of an oops is in its record's taint_set (loader.c after_oops()) */
		kp_sim_reads_apply(r, &st);
		if ((s->sv[i].loads && kp_symbol_index_add(&s->live, name, NULL) < 0) ||
		    (s->sv[i].left_unformed && kp_symbol_index_add(&s->unformed, name, NULL) < 0))
			return kp_err_set(err, "out of memory");
	}
	*final_taint = st.taint;
	for (size_t k = 0; k < g->n; k++) {
		size_t i = g->order[k];

		if (!s->again[i] && !kp_sim_late_reads_hold(&s->was->sim, i, st.taint, s->sv) &&
		    simulate_alone(s, k, err) < 0)
			return -1;
		if (s->again[i]) {
			if (kp_simulate_one_late(g, &a->facts, s->sv, st.taint, &s->ones[i], i,
						 err) < 0)
				return -1;
			s->sv[i] = s->ones[i].v[i];
		}
	}
	return 0;
}

/*
 * The stored simulation @was against this run's (@a, its interface digests @now indexed
 * like the nodes, @ch the inputs of the stored entry that changed): why a splice falls
 * back, else the splice run (splice_run()) and the count of verdicts it kept, those it
 * simulated again and those that differ from the recompute, in @note.
 */
static void measure(const struct kp_ctx *a, const struct kp_sim_stored *was,
		    const unsigned char (*now)[KP_SIM_IFACE_LEN],
		    const struct kp_inputs_changed *ch, char *note, size_t len)
{
	const struct kp_graph *g = &a->graph;
	struct splice s = { .a = a, .was = was };
	size_t n = g->n ? g->n : 1, again = 0, differ = 0, nchanged = 0;
	char names[160] = "", cnames[160] = "";
	size_t nlen = 0, clen = 0;
	unsigned long final_taint = 0;
	struct kp_err err;
	bool *changed;

	if (was->n != g->n) {
		snprintf(note, len, "splice: falls back: %zu modules, %zu stored", g->n, was->n);
		return;
	}
	for (size_t k = 0; k < g->n; k++) {
		size_t i = g->order[k];
		const struct kp_node *nd = &g->nodes[i];

		if (was->order[k] != i || !nd->path || !nd->mod->name ||
		    strcmp(was->mods[i].path, nd->path) ||
		    strcmp(was->mods[i].name, nd->mod->name)) {
			snprintf(note, len,
				 "splice: falls back: the module set or load order changed");
			return;
		}
		if (memcmp(was->mods[i].iface, now[i], KP_SIM_IFACE_LEN)) {
			snprintf(note, len, "splice: falls back: the interface of %.160s changed",
				 nd->mod->name);
			return;
		}
	}
	changed = calloc(n, sizeof(*changed));
	s.sv = calloc(n, sizeof(*s.sv));
	s.ones = calloc(n, sizeof(*s.ones));
	s.again = calloc(n, sizeof(*s.again));
	s.states = calloc(n, sizeof(*s.states));
	if (!changed || !s.sv || !s.ones || !s.again || !s.states ||
	    kp_symbol_index_init(&s.live, g->n + a->facts.nloaded) < 0 ||
	    kp_symbol_index_init(&s.unformed, 4) < 0) {
		snprintf(note, len, "splice: falls back: out of memory");
		goto out;
	}
	for (size_t i = 0; i < a->facts.nloaded; i++)
		if (kp_symbol_index_add(&s.live, a->facts.loaded[i], NULL) < 0) {
			snprintf(note, len, "splice: falls back: out of memory");
			goto out;
		}
	if (mark_changed(g, ch, changed, note, len))
		goto out;
	if (splice_run(&s, changed, &final_taint, &err) < 0) {
		snprintf(note, len, "splice: falls back: %.200s", err.msg);
		goto out;
	}
	for (size_t k = 0; k < g->n; k++) {
		size_t i = g->order[k];

		again += s.again[i];
		if (changed[i]) {
			nchanged++;
			add_name(cnames, sizeof(cnames), &clen, g->nodes[i].mod->name);
		}
		/* a spliced verdict that differs is a wrong splice: listed, never expected */
		if (!kp_verdict_same_simulated(&s.sv[i], &a->sim.v[i])) {
			differ++;
			add_name(names, sizeof(names), &nlen, g->nodes[i].mod->name);
		}
	}
	if (final_taint != a->sim.global_taint) {
		differ++;
		add_name(names, sizeof(names), &nlen, "(the global taint)");
	}
	snprintf(note, len,
		 "splice: %zu of %zu verdicts kept, %zu simulated again (%zu module files "
		 "changed: %s; %zu spliced and differing: %s); not used yet, recomputed",
		 g->n - again, g->n, again, nchanged, nchanged ? cnames : "none", differ,
		 differ ? names : "none");
out:
	for (size_t i = 0; s.again && s.ones && i < g->n; i++)
		if (s.again[i])
			kp_simulation_release(&s.ones[i]);
	kp_symbol_index_release(&s.live);
	kp_symbol_index_release(&s.unformed);
	free(changed);
	free(s.sv);
	free(s.ones);
	free(s.again);
	free(s.states);
}

void kp_check_splice_store(const struct kp_cli *cli, const struct kp_ctx *a, bool strict_ran)
{
	unsigned char(*digests)[KP_SIM_IFACE_LEN];
	struct kp_sim_stored was;
	const unsigned char *prev;
	unsigned char *p;
	struct kp_err err;
	size_t len, plen;
	char note[512];

	if (!kp_run_cache_recording(cli->runs) || !a->sim.rec)
		return;
	if (strict_ran) {
		/* the strict pass's verdicts feed the findings: not stored, no splice */
		kp_run_cache_note(cli->runs, "splice: not stored: the strict-rules pass ran");
		return;
	}
	digests = calloc(a->graph.n ? a->graph.n : 1, sizeof(*digests));
	if (!digests || kp_sim_store_encode(&a->graph, &a->sim, &p, &len, digests, &err) < 0) {
		snprintf(note, sizeof(note), "splice: not stored: %.200s",
			 digests ? err.msg : "out of memory");
		kp_run_cache_note(cli->runs, note);
		free(digests);
		return;
	}
	prev = kp_run_cache_previous(cli->runs, &plen);
	if (prev) {
		if (kp_sim_store_decode(prev, plen, &was, &err) < 0)
			snprintf(note, sizeof(note), "splice: falls back: %.200s", err.msg);
		else
			measure(a, &was, (const unsigned char(*)[KP_SIM_IFACE_LEN])digests,
				kp_run_cache_changes(cli->runs), note, sizeof(note));
		kp_sim_stored_release(&was);
		kp_run_cache_note(cli->runs, note);
	}
	free(digests);
	kp_run_cache_keep(cli->runs, p, len);
}
