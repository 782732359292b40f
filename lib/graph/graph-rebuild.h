/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A graph rebuilt from a stored interface (graph-store.h) without the modules' facts: each
 * node a stub module that carries only what the graph and the other modules' loads read of
 * it (its name, path, machine, exports and imports), or, where the caller has it, the
 * module itself (a module whose file changed), over the kernel base. Its edges are the
 * stored ones (the store is part of a trusted, CRC-checked entry written by this program
 * over the same base): only their base records are looked up, by name, and each is checked
 * against what it names (the import, the provider's export, a record found, the class); the
 * dependencies, load order and cycles are computed from them and must be the stored ones. The
 * splice (issue 28, layer 5) runs over it; a node's module may be replaced by the real one later (a
 * module simulated again) as long as its interface is the stub's (the caller checks the interface
 * digests).
 */
#ifndef KP_GRAPH_REBUILD_H
#define KP_GRAPH_REBUILD_H

#include "graph/graph-store.h"

struct kp_graph_rebuilt {
	struct kp_graph g;
	struct kp_module *stubs;      /* indexed like the nodes */
	struct kp_set_entry *entries; /* the set the graph is begun from */
	struct kp_arena arena;	      /* the stubs' imports */
};

/*
 * @out (zeroed first) rebuilt from @s over @base (may be NULL), node i named @names[i] at
 * @paths[i] (borrowed, not copied: they outlive @out, as @s does); @real (NULL, or NULL entries)
 * gives the modules to use as they are; @order (NULL: not checked) the stored load order. 0, or -1
 * with @err (out of memory, or a stored edge, cycle, duplicate name or load order that does not
 * hold: the graph not built).
 */
int kp_graph_rebuild(struct kp_graph_rebuilt *out, const struct kp_graph_stored *s,
		     const char *const *names, const char *const *paths,
		     const struct kp_module *const *real, const size_t *order,
		     const struct kp_kernel_base *base, struct kp_err *err);
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
