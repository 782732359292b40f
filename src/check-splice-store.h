/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The splice's store as the result cache keeps it (check-splice-store.c): "KPSPLIC3", the
 * simulation's length (64) and the simulation (sim/sim-store.h), the graph's interface's
 * length (64) and the interface (graph/graph-store.h: opened, each node's edges decoded when
 * a reader asks for them; a KPGRST01 graph part is refused), the report store (check-splice.h:
 * where the report's blocks lie in the entry's output, read with that output).
 * KPSPLIC1 had no graph; KPSPLIC2 held the report's bytes again. Written by a recompute
 * (check-splice.c) and by a used splice (check-splice-use.c: its graph part the previous store's,
 * copied), read by both.
 */
#ifndef KP_CHECK_SPLICE_STORE_H
#define KP_CHECK_SPLICE_STORE_H

#include "check-splice.h"
#include "graph/graph-store.h"
#include "sim/sim-store.h"

/*
 * A store decoded (the graph part opened: kp_graph_store_open()): its three parts, and the graph
 * part's bytes (to be copied).
 */
struct kp_splice_stored {
	struct kp_sim_stored was;
	struct kp_graph_stored gs;
	struct kp_splice_report rep;
	const unsigned char *gp; /* borrowed from the store's bytes */
	size_t glen;
};

/*
 * The store of the simulation part @sim (@simlen bytes), the graph part @gp of @glen bytes
 * (an earlier store's, copied) or, @gp NULL, @g encoded, and the report @cap kept (@g->n
 * blocks) with @base_rc and @fail_on, in *@p (malloc()ed) of *@len. 0, or -1 with @why.
 */
int kp_splice_store_encode(const struct kp_graph *g, const unsigned char *sim, size_t simlen,
			   const unsigned char *gp, size_t glen, const struct kp_check_capture *cap,
			   int base_rc, enum kp_severity fail_on, unsigned char **p, size_t *len,
			   const char **why);
/*
 * The store @p of @len bytes, of an entry whose output (stdout's bytes) is the @olen bytes
 * at @op, into @out (zeroed first; its parts borrow @p and @op): 0, or -1 with @err
 * (kp_splice_stored_release() it either way).
 */
int kp_splice_store_decode(const unsigned char *p, size_t len, const unsigned char *op, size_t olen,
			   struct kp_splice_stored *out, struct kp_err *err);
void kp_splice_stored_release(struct kp_splice_stored *s);

#endif
