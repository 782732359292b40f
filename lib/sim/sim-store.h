/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A recorded simulation (kp_simulate_recorded()) as bytes, and back: the store a result cache
 * keeps beside a run's output so that a later run where one module changed can keep the
 * verdicts whose reads hold (sim-reads.h) instead of simulating the tree again (a splice).
 *
 * Per module, in load order: its graph node, path and name, its interface digest (what the
 * graph and the other modules' loads read of its facts), its verdict in full (errno, taints,
 * the global mask it added and left, messages, findings, symbol_get() results, the P
 * evidence, the failed dependency, the load sequence) and what its load read of the state
 * (struct kp_sim_reads); then the run's global taint and the pool of verdicts read.
 *
 * The decoder trusts nothing: every length, index and enum is bounds-checked, the nodes must
 * be a permutation, every read range must lie in the pool, and no byte may follow the end.
 * Anything else is an error (a forged or damaged store may only cost the caller a recompute).
 * The container (the result cache's entry) gives integrity and trust; this gives structure.
 */
#ifndef KP_SIM_STORE_H
#define KP_SIM_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "graph/graph.h"
#include "sim/loader.h"
#include "util/util.h"

#define KP_SIM_IFACE_LEN 32 /* SHA-256 */

/*
 * The interface digest of module @m computed from its fields now (read/module-iface.h:
 * what the graph, the load order and the loads of other modules read of its facts; the
 * store writes the one made when the module was read, kp_module.iface_sha256). 0, or -1
 * (OpenSSL failed).
 */
int kp_sim_iface_digest(const struct kp_module *m, unsigned char out[KP_SIM_IFACE_LEN]);

/*
 * @sim (recorded over @g, !reads_incomplete) as bytes: *@out (malloc()ed, the caller's) of
 * *@len bytes; @digests (NULL: not wanted; else @g->n of them, indexed like the nodes) gets
 * the interface digests it stored. 0, or -1 with @err (out of memory, not recorded, a count
 * over 32 bits).
 */
int kp_sim_store_encode(const struct kp_graph *g, const struct kp_simulation *sim,
			unsigned char **out, size_t *len,
			unsigned char (*digests)[KP_SIM_IFACE_LEN], struct kp_err *err);

struct kp_sim_stored_module {
	const char *path, *name;
	unsigned char iface[KP_SIM_IFACE_LEN];
};

/* A decoded store: everything in its arena and arrays, released in one call. */
struct kp_sim_stored {
	size_t n;
	size_t *order;			   /* load order: node indices */
	struct kp_sim_stored_module *mods; /* indexed like the nodes */
	/* verdicts (indexed like the nodes), records and pool; graph and facts NULL */
	struct kp_simulation sim;
	struct kp_arena arena;
};

/* The store @p of @len bytes into @out (zeroed first); 0, or -1 with @err saying why. */
int kp_sim_store_decode(const unsigned char *p, size_t len, struct kp_sim_stored *out,
			struct kp_err *err);
/* Empties @s (kp_sim_store_decode()'s, failed or not) and leaves it zeroed. */
void kp_sim_stored_release(struct kp_sim_stored *s);

#endif
