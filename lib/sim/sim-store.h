/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A recorded simulation (kp_simulate_recorded()) as bytes, and back: the store a result cache
 * keeps beside a run's output so that a later run where one module changed can keep the
 * verdicts whose reads hold (sim-reads.h) instead of simulating the tree again (a splice).
 *
 * A header (the module count, the global taint, the count of verdicts read), then per
 * module, in load order: its state (what the loads before it left and what it derived
 * from that: the global masks, the load sequence, the taint, once-only flags and stall before
 * it), its body (its graph node's path and name, its interface digest: what the graph and
 * the other modules' loads read of its facts; its verdict but for the state and the policy
 * findings: errno, taints, messages, findings, symbol_get() results, the P evidence, the
 * failed dependency; what its load read of the state (struct kp_sim_reads) and the verdicts
 * it read), then its policy findings (bridges); nothing after the last. A body holds no
 * offset into the rest of the store (nor a policy finding): a splice that keeps a verdict
 * copies its body's bytes into the new store (kp_sim_store_copy_body()) and writes its state
 * and policy findings again, the bytes a full run's kp_sim_store_encode() writes.
 *
 * The decoder trusts nothing: every length, index and enum is bounds-checked, the nodes must
 * be a permutation, every verdict read must be a node, and no byte may follow the end.
 * Anything else is an error (a forged or damaged store may only cost the caller a recompute).
 * The container (the result cache's entry) gives integrity and trust; this gives structure.
 * A decoded store lends its strings and bodies from the bytes it was decoded from.
 */
#ifndef KP_SIM_STORE_H
#define KP_SIM_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "graph/graph.h"
#include "sim/sim-reads.h"
#include "sim/loader.h"
#include "util/byte-writer.h"
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

/*
 * A store written module by module in load order: kp_sim_store_begin(), then per module
 * kp_sim_store_put_state(), its body (kp_sim_store_put_body(), or kp_sim_store_copy_body()
 * from a decoded store when nothing in it changed) and kp_sim_store_put_policy(); then
 * kp_sim_store_finish(). A failure is kept and reported by the last call.
 */
struct evp_md_st;
struct kp_sim_store_writer {
	struct kp_byte_writer w;
	struct evp_md_st *md; /* SHA-256, fetched for the first module without its digest */
	const char *bad;      /* why the store cannot be made (else w.failed: no memory) */
	uint64_t nreads;      /* the verdicts read of the bodies written */
};
/* A store of @n modules and @global_taint begun, room made for about @hint bytes (0: none). */
void kp_sim_store_begin(struct kp_sim_store_writer *sw, size_t n, unsigned long global_taint,
			size_t hint);
/* Node @node's place: the state of verdict @v and record @r (sim-store.c: which fields). */
void kp_sim_store_put_state(struct kp_sim_store_writer *sw, size_t node, const struct kp_verdict *v,
			    const struct kp_sim_reads *r);
/*
 * The body of node @nd with verdict @v and record @r, whose verdicts read are in @pool;
 * @digest gets the interface digest stored.
 */
void kp_sim_store_put_body(struct kp_sim_store_writer *sw, const struct kp_node *nd,
			   const struct kp_verdict *v, const struct kp_sim_reads *r,
			   const uint32_t *pool, unsigned char digest[KP_SIM_IFACE_LEN]);
/* The policy findings of @v (kp_finding_is_policy()), in their order. */
void kp_sim_store_put_policy(struct kp_sim_store_writer *sw, const struct kp_verdict *v);
/* *@out (malloc()ed, the caller's) of *@len bytes; 0, or -1 with @err. @sw is emptied. */
int kp_sim_store_finish(struct kp_sim_store_writer *sw, unsigned char **out, size_t *len,
			struct kp_err *err);

struct kp_sim_stored_module {
	const char *path, *name;
	unsigned char iface[KP_SIM_IFACE_LEN];
	const unsigned char *body; /* its body's bytes in the store (borrowed), for a copy */
	size_t bodylen;
	size_t nreads; /* the verdicts its body holds as read (both ranges) */
};

/* A decoded store: everything in its arena and arrays, released in one call. */
struct kp_sim_stored {
	size_t n;
	size_t *order;			   /* load order: node indices */
	struct kp_sim_stored_module *mods; /* indexed like the nodes */
	/* verdicts (indexed like the nodes), records and pool; graph and facts NULL */
	struct kp_simulation sim;
	struct kp_arena arena;
	size_t len; /* the stored bytes' */
};

/*
 * The store @p of @len bytes into @out (zeroed first; its strings and bodies are @p's bytes:
 * @p must outlive it); 0, or -1 with @err saying why.
 */
int kp_sim_store_decode(const unsigned char *p, size_t len, struct kp_sim_stored *out,
			struct kp_err *err);
/*
 * The body of stored module @m copied as it is: what kp_sim_store_put_body() writes of the
 * same node, verdict and record when they are the stored ones (their state apart).
 */
void kp_sim_store_copy_body(struct kp_sim_store_writer *sw, const struct kp_sim_stored_module *m);
/* Empties @s (kp_sim_store_decode()'s, failed or not) and leaves it zeroed. */
void kp_sim_stored_release(struct kp_sim_stored *s);

#endif
