// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Findings beyond the kernel's own checks (not loader rules; notes by default):
 *   bridge           a GPL module that uses GPL-only symbols exports plain symbols
 *                    that a proprietary module imports: the go-between the 2020 and
 *                    2023 rules aim at but cannot stop when calls flow from the P side;
 *   latent-breakage  the outcome changes under the rules this kernel does not have yet.
 */
#include <string.h>

#include "rules.h"

static bool uses_gpl_only(const struct kp_node *nd)
{
	for (size_t i = 0; i < nd->nedges; i++)
		if (nd->edges[i].kind != KP_PROV_NONE && nd->edges[i].gpl_only)
			return true;
	return false;
}

int kp_policy_bridges(const struct kp_graph *g, const struct kp_verdict *v, kp_bridge_fn *fn,
		      void *data)
{
	for (size_t p = 0; p < g->n; p++) {
		const struct kp_verdict *pv = &v[p];

		if (!pv->loads || !(pv->taints & (1UL << KP_TAINT_PROPRIETARY_MODULE)))
			continue;
		for (size_t e = 0; e < g->nodes[p].nedges; e++) {
			const struct kp_edge *ed = &g->nodes[p].edges[e];
			const struct kp_verdict *bv;

			if (ed->kind != KP_PROV_MODULE || ed->gpl_only)
				continue;
			bv = &v[ed->node];
			if (!bv->loads || (bv->taints & (1UL << KP_TAINT_PROPRIETARY_MODULE)) ||
			    !uses_gpl_only(&g->nodes[ed->node]))
				continue;
			if (fn(data, ed->node, kp_edge_import(&g->nodes[p], ed)->name,
			       g->nodes[p].mod->name) < 0)
				return -1;
		}
	}
	return 0;
}

/* kp_policy_bridges()'s finding added to the bridge's verdict. */
static int add_bridge(void *data, size_t node, const char *sym, const char *importer)
{
	struct kp_simulation *sim = data;

	kp_finding(&sim->v[node], "bridge", KP_SEV_NOTE, KP_CONS_WARN, sym, KP_BRIDGE_FMT, sym,
		   importer);
	return 0;
}

static void latent(struct kp_simulation *sim, const struct kp_simulation *strict)
{
	const char *rules = kp_profile_rules_name(&strict->facts->profile);

	for (size_t i = 0; i < sim->n; i++) {
		struct kp_verdict *v = &sim->v[i];
		const struct kp_verdict *s = &strict->v[i];
		bool p_now = v->taints & (1UL << KP_TAINT_PROPRIETARY_MODULE);
		bool p_strict = s->taints & (1UL << KP_TAINT_PROPRIETARY_MODULE);

		if (v->loads && !s->loads)
			kp_finding(v, "latent-breakage", KP_SEV_NOTE, KP_CONS_WARN, NULL,
				   "loads on this kernel but fails (%s) under the %s rules",
				   kp_errno_name(s->err), rules);
		else if (v->loads && !p_now && p_strict)
			kp_finding(v, "latent-breakage", KP_SEV_NOTE, KP_CONS_WARN, NULL,
				   "becomes proprietary (P) under the %s rules", rules);
		for (size_t j = 0; j < v->nsymget && v->loads && s->loads; j++)
			for (size_t k = 0; k < s->nsymget; k++)
				if (!strcmp(v->symget[j].symbol, s->symget[k].symbol) &&
				    v->symget[j].ok && !s->symget[k].ok)
					kp_finding(v, "latent-breakage", KP_SEV_NOTE, KP_CONS_WARN,
						   v->symget[j].symbol,
						   "symbol_get(%s) returns "
						   "NULL under the %s rules",
						   v->symget[j].symbol, rules);
	}
}

bool kp_finding_is_policy(const struct kp_finding *f)
{
	return !strcmp(f->id, "bridge") || !strcmp(f->id, "latent-breakage");
}

int kp_add_policy_findings(struct kp_simulation *sim, const struct kp_simulation *strict,
			   struct kp_err *err)
{
	(void)err;
	kp_policy_bridges(sim->graph, sim->v, add_bridge, sim);
	if (strict && strict->n == sim->n)
		latent(sim, strict);
	return 0;
}
