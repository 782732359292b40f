/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A graph rebuilt from a stored interface (graph-store.h) without the modules' facts: each
 * node a stub module that carries only what the graph and the other modules' loads read of
 * it (its name, path, machine, exports and imports), or, where the caller has it, the
 * module itself (a module whose file changed); built with kp_graph_build() over the kernel
 * base, so that every edge, the load order and the cycles are resolved again, not trusted
 * from the store. The splice (issue 28, layer 5) runs over it; a node's module may be
 * replaced by the real one later (a module simulated again) as long as its interface is the
 * stub's (the caller checks the interface digests).
 */
#ifndef KP_GRAPH_REBUILD_H
#define KP_GRAPH_REBUILD_H

#include "graph/graph-store.h"

struct kp_graph_rebuilt {
	struct kp_graph g;
	struct kp_module *stubs;      /* indexed like the nodes */
	struct kp_set_entry *entries; /* the set kp_graph_build() read */
	struct kp_arena arena;	      /* the stubs' imports and strings */
};

/*
 * @out (zeroed first) rebuilt from @s over @base (may be NULL), node i named @names[i] at
 * @paths[i]; @real (NULL, or NULL entries) gives the modules to use as they are. 0, or -1
 * with @err (out of memory, the graph not built).
 */
int kp_graph_rebuild(struct kp_graph_rebuilt *out, const struct kp_graph_stored *s,
		     const char *const *names, const char *const *paths,
		     const struct kp_module *const *real, const struct kp_kernel_base *base,
		     struct kp_err *err);
void kp_graph_rebuilt_release(struct kp_graph_rebuilt *r);

/*
 * Whether @a and @b are the same graph over the same base: node names, paths and flags,
 * exports, every edge (kind, class, provider node and export, base record), dependencies,
 * base dependencies, load order and cycles; NULL, or what first differs (a static string)
 * with its node in *@node.
 */
const char *kp_graph_differs(const struct kp_graph *a, const struct kp_graph *b, size_t *node);

#endif
