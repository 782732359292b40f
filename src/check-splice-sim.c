// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The simulation part of a splice's store (check-splice-sim.h). The recompute's store is
 * kp_simulate_recorded()'s simulation after kp_add_policy_findings(); this one is made of the
 * spliced verdicts so that the two are the same bytes:
 *   - a kept verdict is the stored one (its global masks and load sequence already derived
 *     by kp_splice_run()), its stored policy findings dropped (they were over the stored
 *     verdicts); a verdict simulated again is kp_simulate_one()'s;
 *   - then the bridges over the spliced verdicts, appended as kp_add_policy_findings() does;
 *   - a kept record's state before the load (taint, once-only flags, the stall it asked
 *     about) is the state it is kept in: those are what the recompute's load records;
 *   - the pool: every load's verdict reads in load order, then every module's symbol_get()
 *     reads in node order (loader.c kp_simulate_recorded()), each range copied from the pool
 *     it was recorded in (the stored one, or the module's kp_simulate_one() run).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "check-splice-sim.h"
#include "sim/rules/rules.h"
#include "sim/sim-reads.h"
#include "sim/sim-store.h"

/* The simulation being made: its verdicts' findings arrays and added messages are its own. */
struct spliced {
	struct kp_simulation sim;
	size_t *kept; /* per node: the findings copied from the spliced verdict */
};

static void spliced_release(struct spliced *p)
{
	for (size_t i = 0; p->sim.v && p->kept && i < p->sim.n; i++) {
		for (size_t j = p->kept[i]; j < p->sim.v[i].nfindings; j++)
			free(p->sim.v[i].findings[j].message);
		free(p->sim.v[i].findings);
	}
	free(p->sim.v);
	free(p->sim.rec);
	free(p->sim.reads);
	free(p->kept);
}

/* kp_policy_bridges()'s finding appended to the bridge's verdict (policy.c add_bridge()). */
static int add_bridge(void *data, size_t node, const char *sym, const char *importer)
{
	struct spliced *p = data;

	return kp_finding(&p->sim.v[node], "bridge", KP_SEV_NOTE, KP_CONS_WARN, sym, KP_BRIDGE_FMT,
			  sym, importer);
}

/* Verdict @i spliced (@sv) without its policy findings: 0, or -1 (out of memory). */
static int take_verdict(struct spliced *p, size_t i, const struct kp_verdict *sv)
{
	struct kp_verdict *v = &p->sim.v[i];
	size_t m = 0;

	*v = *sv;
	v->findings = NULL;
	v->nfindings = 0;
	p->kept[i] = 0;
	if (!sv->nfindings)
		return 0;
	v->findings = malloc(sv->nfindings * sizeof(*v->findings));
	if (!v->findings)
		return -1;
	for (size_t j = 0; j < sv->nfindings; j++)
		if (!kp_finding_is_policy(&sv->findings[j]))
			v->findings[m++] = sv->findings[j];
	v->nfindings = m;
	p->kept[i] = m;
	return 0;
}

/* The record of node @i at load place @k, as the recompute's load records it. */
static void take_record(struct spliced *p, const struct kp_splice_run *s, size_t i, size_t k)
{
	struct kp_sim_reads *r = &p->sim.rec[i];

	if (s->again[i]) {
		*r = s->ones[i].rec[i];
		return;
	}
	*r = s->was->sim.rec[i];
	/* what the load read of them held (kp_sim_reads_hold()); the rest is recorded whole */
	r->taint_before = s->states[k].taint;
	r->once_before = s->states[k].once;
	if (r->stall_asked)
		r->stall_before = s->states[k].stall;
}

/* The range @*first, @count of node @i's pool appended to @p's: 0, or -1 (too many). */
static int rebase(struct spliced *p, const struct kp_splice_run *s, size_t i, uint32_t *first,
		  uint32_t count)
{
	const uint32_t *from = s->again[i] ? s->ones[i].reads : s->was->sim.reads;

	if (!count) {
		*first = 0;
		return 0;
	}
	if (p->sim.nreads > UINT32_MAX - count)
		return -1;
	memcpy(p->sim.reads + p->sim.nreads, from + *first, count * sizeof(*from));
	*first = (uint32_t)p->sim.nreads;
	p->sim.nreads += count;
	return 0;
}

int kp_splice_sim_encode(const struct kp_graph *g, const struct kp_splice_run *s,
			 unsigned long final_taint, unsigned char **out, size_t *len,
			 struct kp_err *err)
{
	struct spliced p = {
		.sim = { .graph = g, .facts = s->facts, .n = g->n, .global_taint = final_taint }
	};
	size_t n = g->n ? g->n : 1, total = 0;
	int r = -1;

	if (g->n != s->was->n)
		return kp_err_set(err, "%zu modules, %zu spliced", g->n, s->was->n);
	p.sim.v = calloc(n, sizeof(*p.sim.v));
	p.sim.rec = calloc(n, sizeof(*p.sim.rec));
	p.kept = calloc(n, sizeof(*p.kept));
	if (!p.sim.v || !p.sim.rec || !p.kept)
		goto oom;
	for (size_t k = 0; k < g->n; k++) {
		size_t i = g->order[k];

		if (take_verdict(&p, i, &s->sv[i]) < 0)
			goto oom;
		take_record(&p, s, i, k);
		total += (size_t)p.sim.rec[i].nverdicts + p.sim.rec[i].nlate;
	}
	p.sim.reads = malloc((total ? total : 1) * sizeof(*p.sim.reads));
	if (!p.sim.reads)
		goto oom;
	p.sim.creads = total;
	/* the loads' reads in load order, then symbol_get()'s in node order */
	for (size_t k = 0; k < g->n; k++) {
		struct kp_sim_reads *rd = &p.sim.rec[g->order[k]];

		if (rebase(&p, s, g->order[k], &rd->verdicts, rd->nverdicts) < 0)
			goto big;
	}
	for (size_t i = 0; i < g->n; i++) {
		struct kp_sim_reads *rd = &p.sim.rec[i];

		if (rebase(&p, s, i, &rd->late, rd->nlate) < 0)
			goto big;
	}
	if (kp_policy_bridges(g, p.sim.v, add_bridge, &p) < 0)
		goto oom;
	r = kp_sim_store_encode(g, &p.sim, out, len, NULL, err);
	spliced_release(&p);
	return r;
oom:
	spliced_release(&p);
	return kp_err_set(err, "out of memory");
big:
	spliced_release(&p);
	return kp_err_set(err, "the pool: over 32 bits");
}
