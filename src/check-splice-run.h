/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The splice's run (check-splice-run.c): the stored simulation's verdicts kept in load order
 * while their reads hold in the spliced state, the others simulated alone at their place,
 * over a graph rebuilt from the store (graph/graph-rebuild.h, lazily or whole). Shared by the
 * measure beside the recompute (check-splice.c) and the context-less path (check-splice-load.c):
 * neither lends the other its context. A module simulated alone needs its facts: @mods[i] when the
 * caller has them, else @fetch() by its stored path.
 */
#ifndef KP_CHECK_SPLICE_RUN_H
#define KP_CHECK_SPLICE_RUN_H

#include "graph/graph-rebuild.h"
#include "sim/sim-store.h"
#include "util/symbol-index.h"

struct kp_splice_run {
	const struct kp_kernel_facts *facts; /* the target kernel's, borrowed */
	struct kp_graph_rebuilt *rb; /* the graph the splice runs over, rebuilt from the store */
	const struct kp_sim_stored *was;
	/* node i's facts for a module simulated alone (borrowed); NULL: @fetch() asked */
	const struct kp_module **mods;
	/* node i's facts read by its stored path, its interface checked: NULL with @err */
	const struct kp_module *(*fetch)(void *data, size_t i, struct kp_err *err);
	void *fetch_data;
	struct kp_verdict *sv;	     /* the spliced verdicts (borrowed or @ones'), like the nodes */
	struct kp_simulation *ones;  /* the modules simulated alone (kp_simulate_one()) */
	bool *again;		     /* node simulated alone */
	struct kp_sim_state *states; /* the state before each place in load order */
	struct kp_symbol_index live, unformed; /* names: live modules, left UNFORMED */
};

/*
 * @s's arrays for @was->n nodes and the names of the modules @loaded (@nloaded) live before
 * the first load; @s's facts, rb, mods and fetch are the caller's to set. 0, or -1 (out of
 * memory; kp_splice_run_release() it all the same).
 */
int kp_splice_run_init(struct kp_splice_run *s, const struct kp_sim_stored *was,
		       const char *const *loaded, size_t nloaded);
void kp_splice_run_release(struct kp_splice_run *s);

/*
 * The loads in order over @s->rb->g, each verdict kept while its stored reads hold in the
 * spliced state, else (its file changed, @changed) simulated alone, its node's edges taken
 * first (kp_graph_rebuilt_need(): a lazily rebuilt graph); then symbol_get() of each; then the
 * edges of what kp_policy_bridges() walks over the spliced verdicts (the modules that load
 * tainted proprietary and the modules they import from): every node a later reader of
 * @s->rb->g walks has its edges. The global taint after the loads in *@final_taint. 0, or -1
 * with @err.
 */
int kp_splice_run(struct kp_splice_run *s, const bool *changed, unsigned long *final_taint,
		  struct kp_err *err);

/* Appends @name to the list @names (@size bytes, @nlen used), after a space, while it fits. */
void kp_splice_add_name(char *names, size_t size, size_t *nlen, const char *name);

#endif
