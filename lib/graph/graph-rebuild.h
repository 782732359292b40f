/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A graph rebuilt from a stored interface (graph-store.h) without the modules' facts: each
 * node a stub module that carries only what the graph and the other modules' loads read of
 * it (its name, path, machine, exports and imports), or, where the caller has it, the
 * module itself (a module whose file changed), over the kernel base. Its edges are the
 * stored ones (the store is part of a trusted, CRC-checked entry written by this program
 * over the same base): only their base records are looked up, by name, and each is checked
 * against what it names (the import, the provider's export, a record found, the class).
 *
 * Two ways: kp_graph_rebuild() takes every node's edges, computes the dependencies, load
 * order and cycles from them, and they must be the stored ones (the measure beside the
 * recompute, check-splice.c); kp_graph_rebuild_lazy() takes the nodes, their exports and the
 * indexes over them (what a module's load looks up), the load order and the cycle flags from
 * the store, and no edge: a node's edges and dependencies are taken when first needed
 * (kp_graph_rebuilt_need(): the used splice asks for the modules it simulates again and what
 * the report's bridges walk, check-splice-run.c), the others keep none (nedges 0, no deps)
 * and the graph has no cycle list. The splice (issue 28, layer 5) runs over it; a node's
 * module may be replaced by the real one later (a module simulated again) as long as its
 * interface is the stub's (the caller checks the interface digests).
 */
#ifndef KP_GRAPH_REBUILD_H
#define KP_GRAPH_REBUILD_H

#include "graph/graph-store.h"

struct kp_graph_rebuilt {
	struct kp_graph g;
	struct kp_module *stubs;      /* indexed like the nodes */
	struct kp_set_entry *entries; /* the set the graph is begun from */
	struct kp_graph_stored *s;    /* borrowed: the edges are decoded from it when needed */
	bool *ready;		      /* per node: its edges and dependencies taken */
	/* kp_graph_rebuild()'s base records by stored name; NULL: lazy (looked up each time) */
	struct kp_rebuild_lookups *lk;
	struct kp_arena arena; /* the stubs' imports */
};

/*
 * @out (zeroed first) rebuilt from @s over @base (may be NULL), node i named @names[i] at
 * @paths[i] (borrowed, not copied: they outlive @out, as @s does); @real (NULL, or NULL entries)
 * gives the modules to use as they are; @order (NULL: not checked) the stored load order. 0, or -1
 * with @err (out of memory, or a stored edge, cycle, duplicate name or load order that does not
 * hold: the graph not built).
 */
int kp_graph_rebuild(struct kp_graph_rebuilt *out, struct kp_graph_stored *s,
		     const char *const *names, const char *const *paths,
		     const struct kp_module *const *real, const size_t *order,
		     const struct kp_kernel_base *base, struct kp_err *err);
/*
 * kp_graph_rebuild() without the edges: the load order @order (required: a permutation of the
 * nodes, the stored simulation's) and the nodes' cycle flags taken from the store, the
 * duplicate names checked against it. 0, or -1 with @err.
 */
int kp_graph_rebuild_lazy(struct kp_graph_rebuilt *out, struct kp_graph_stored *s,
			  const char *const *names, const char *const *paths,
			  const struct kp_module *const *real, const size_t *order,
			  const struct kp_kernel_base *base, struct kp_err *err);
/*
 * Node @i's edges (its stored ones decoded, its stub's imports made, each edge taken and
 * checked) and dependency lists, once, with the module node @i has now (a module simulated
 * again: the real one). 0, or -1 with @err (an edge that does not hold, out of memory).
 */
int kp_graph_rebuilt_need(struct kp_graph_rebuilt *r, size_t i, struct kp_err *err);
void kp_graph_rebuilt_release(struct kp_graph_rebuilt *r);

/*
 * The stub of node @i of @r (when it is one, not a real module) carries the interface digest
 * @iface (KP_GRAPH_IFACE_LEN bytes: the stored one), as a module read carries its own
 * (kp_module.iface_sha256): a simulation store encoded over @r->g (sim/sim-store.h) then
 * holds the digests a recompute's holds, not a hash of the stub's fields.
 */
#define KP_GRAPH_IFACE_LEN 32
void kp_graph_rebuilt_digest(struct kp_graph_rebuilt *r, size_t i, const unsigned char *iface);

/*
 * Whether @a and @b are the same graph over the same base: node names, paths and flags,
 * exports, every edge (kind, class, provider node and export, base record), dependencies,
 * base dependencies, load order and cycles; NULL, or what first differs (a static string)
 * with its node in *@node.
 */
const char *kp_graph_differs(const struct kp_graph *a, const struct kp_graph *b, size_t *node);

#endif
