// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The splice's run (check-splice-run.h): the loads of the stored simulation replayed in load
 * order over the rebuilt graph, each kept verdict's global taint and load sequence derived
 * from the state it is kept in, the others simulated alone (loader.c kp_simulate_one()), each
 * one's edges taken first (graph-rebuild.h kp_graph_rebuilt_need()), then those of what the
 * bridge findings walk (need_bridges()).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check-splice-run.h"
#include "sim/sim-reads.h"

int kp_splice_run_init(struct kp_splice_run *s, const struct kp_sim_stored *was,
		       const char *const *loaded, size_t nloaded)
{
	size_t n = was->n ? was->n : 1;

	s->was = was;
	s->sv = calloc(n, sizeof(*s->sv));
	s->ones = calloc(n, sizeof(*s->ones));
	s->again = calloc(n, sizeof(*s->again));
	s->states = calloc(n, sizeof(*s->states));
	if (!s->sv || !s->ones || !s->again || !s->states ||
	    kp_symbol_index_init(&s->live, was->n + nloaded) < 0 ||
	    kp_symbol_index_init(&s->unformed, 4) < 0)
		return -1;
	for (size_t i = 0; i < nloaded; i++)
		if (kp_symbol_index_add(&s->live, loaded[i], NULL) < 0)
			return -1;
	return 0;
}

void kp_splice_run_release(struct kp_splice_run *s)
{
	for (size_t i = 0; s->again && s->ones && s->was && i < s->was->n; i++)
		if (s->again[i])
			kp_simulation_release(&s->ones[i]);
	kp_symbol_index_release(&s->live);
	kp_symbol_index_release(&s->unformed);
	free(s->sv);
	free(s->ones);
	free(s->again);
	free(s->states);
	s->sv = NULL;
	s->ones = NULL;
	s->again = NULL;
	s->states = NULL;
}

/* Module @k of the load order simulated alone in @s->states[k], its verdict spliced in. */
static int simulate_alone(struct kp_splice_run *s, size_t k, struct kp_err *err)
{
	struct kp_graph *g = &s->rb->g;
	size_t i = g->order[k];
	const struct kp_module *m = s->mods ? s->mods[i] : NULL;

	if (s->again[i])
		kp_simulation_release(&s->ones[i]);
	s->again[i] = false;
	if (!m && (!s->fetch || !(m = s->fetch(s->fetch_data, i, err))))
		return s->fetch ? -1 : kp_err_set(err, "no facts for %s", g->nodes[i].path);
	/* its facts for its stub (the same interface: the digests were compared) */
	g->nodes[i].mod = m;
	/* its edges, checked against its own imports (a lazy graph takes them now) */
	if (kp_graph_rebuilt_need(s->rb, i, err) < 0)
		return -1;
	if (kp_simulate_one(g, s->facts, s->sv, k, &s->states[k], &s->ones[i], err) < 0)
		return -1;
	s->again[i] = true;
	s->sv[i] = s->ones[i].v[i];
	return 0;
}

/*
 * What kp_policy_bridges() walks once the run is done (the report's bridge findings and the new
 * store's, over the spliced verdicts): the edges of every module that loads tainted
 * proprietary, and of each module of the set it imports from. 0, or -1 with @err.
 */
static int need_bridges(struct kp_splice_run *s, struct kp_err *err)
{
	const struct kp_graph *g = &s->rb->g;

	for (size_t p = 0; p < g->n; p++) {
		const struct kp_node *nd = &g->nodes[p];

		if (!s->sv[p].loads || !(s->sv[p].taints & (1UL << KP_TAINT_PROPRIETARY_MODULE)))
			continue;
		if (kp_graph_rebuilt_need(s->rb, p, err) < 0)
			return -1;
		for (size_t e = 0; e < nd->nedges; e++)
			if (nd->edges[e].kind == KP_PROV_MODULE &&
			    kp_graph_rebuilt_need(s->rb, nd->edges[e].node, err) < 0)
				return -1;
	}
	return 0;
}

int kp_splice_run(struct kp_splice_run *s, const bool *changed, unsigned long *final_taint,
		  struct kp_err *err)
{
	const struct kp_graph *g = &s->rb->g;
	struct kp_sim_state st = { .taint = s->facts->initial_taint };
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
			s->sv[i].global_after =
				(st.taint | r->taint_set) & ~s->facts->initial_taint;
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
			if (kp_simulate_one_late(g, s->facts, s->sv, st.taint, &s->ones[i], i,
						 err) < 0)
				return -1;
			s->sv[i] = s->ones[i].v[i];
		}
	}
	return need_bridges(s, err);
}

void kp_splice_add_name(char *names, size_t size, size_t *nlen, const char *name)
{
	int w = snprintf(names + *nlen, size - *nlen, "%s%s", *nlen ? " " : "", name);

	if (w > 0 && (size_t)w < size - *nlen)
		*nlen += (size_t)w;
}
