// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The simulation part of a splice's store (check-splice-sim.h). The recompute's store is
 * kp_simulate_recorded()'s simulation after kp_add_policy_findings(); this one is written
 * from the spliced verdicts so that the two are the same bytes, module by module in load
 * order (sim/sim-store.h):
 *   - the state: a kept verdict's global masks and load sequence as kp_splice_run() derived
 *     them, and its record's state before the load (taint, once-only flags, the stall it
 *     asked about) the state it is kept in: those are what the recompute's load records;
 *   - the body: a kept verdict's is the stored body's bytes, copied (nothing in it depends on
 *     the loads before it once its reads hold); a verdict simulated again is encoded from
 *     kp_simulate_one()'s verdict, record and reads;
 *   - the policy findings: the bridges over the spliced verdicts, as kp_add_policy_findings()
 *     adds them (a kept verdict's stored ones were over the stored verdicts).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "check-splice-sim.h"
#include "sim/rules/rules.h"
#include "sim/sim-reads.h"
#include "sim/sim-store.h"

/*
 * The bridges over the spliced verdicts: per node that has some, a verdict holding just
 * its bridge findings (their messages its own), in kp_policy_bridges() order.
 */
struct bridges {
	uint32_t *slot;	      /* per node: its verdict in @v plus one, or 0 (none) */
	struct kp_verdict *v; /* only .findings and .nfindings set */
	size_t n, cap;
};

static void bridges_release(struct bridges *b)
{
	for (size_t i = 0; i < b->n; i++) {
		for (size_t j = 0; j < b->v[i].nfindings; j++)
			free(b->v[i].findings[j].message);
		free(b->v[i].findings);
	}
	free(b->v);
	free(b->slot);
}

/* kp_policy_bridges()'s finding made as policy.c add_bridge() makes it, kept for its node. */
static int add_bridge(void *data, size_t node, const char *sym, const char *importer)
{
	struct bridges *b = data;

	if (!b->slot[node]) {
		if (b->n >= UINT32_MAX || kp_grow(&b->v, &b->cap, b->n + 1, sizeof(*b->v)) < 0)
			return -1;
		b->slot[node] = (uint32_t)++b->n;
	}
	return kp_finding(&b->v[b->slot[node] - 1], "bridge", KP_SEV_NOTE, KP_CONS_WARN, sym,
			  KP_BRIDGE_FMT, sym, importer);
}

/* The record of kept node @i at load place @k, as the recompute's load records it. */
static void kept_record(const struct kp_splice_run *s, size_t i, size_t k, struct kp_sim_reads *r)
{
	*r = s->was->sim.rec[i];
	/* what the load read of them held (kp_sim_reads_hold()); the rest is recorded whole */
	r->taint_before = s->states[k].taint;
	r->once_before = s->states[k].once;
	if (r->stall_asked)
		r->stall_before = s->states[k].stall;
}

int kp_splice_sim_encode(const struct kp_graph *g, const struct kp_splice_run *s,
			 unsigned long final_taint, unsigned char **out, size_t *len,
			 struct kp_err *err)
{
	static const struct kp_verdict none = { 0 };
	struct bridges b = { 0 };
	struct kp_sim_store_writer sw;
	unsigned char digest[KP_SIM_IFACE_LEN];

	*out = NULL;
	*len = 0;
	if (g->n != s->was->n)
		return kp_err_set(err, "%zu modules, %zu spliced", g->n, s->was->n);
	b.slot = calloc(g->n ? g->n : 1, sizeof(*b.slot));
	if (!b.slot || kp_policy_bridges(g, s->sv, add_bridge, &b) < 0) {
		bridges_release(&b);
		return kp_err_set(err, "out of memory");
	}
	/* the store is about the stored one's size: one module's body differs, or a few */
	kp_sim_store_begin(&sw, g->n, final_taint, s->was->len + s->was->len / 16 + 4096);
	for (size_t k = 0; k < g->n; k++) {
		size_t i = g->order[k];
		struct kp_sim_reads r;

		if (s->again[i]) {
			kp_sim_store_put_state(&sw, i, &s->sv[i], &s->ones[i].rec[i]);
			kp_sim_store_put_body(&sw, &g->nodes[i], &s->sv[i], &s->ones[i].rec[i],
					      s->ones[i].reads, digest);
		} else {
			kept_record(s, i, k, &r);
			kp_sim_store_put_state(&sw, i, &s->sv[i], &r);
			kp_sim_store_copy_body(&sw, &s->was->mods[i]);
		}
		kp_sim_store_put_policy(&sw, b.slot[i] ? &b.v[b.slot[i] - 1] : &none);
	}
	bridges_release(&b);
	return kp_sim_store_finish(&sw, out, len, err);
}
