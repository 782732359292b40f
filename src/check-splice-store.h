/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The splice's store as the result cache keeps it (check-splice-store.c): "KPSPLIC3", the
 * simulation's length (64) and the simulation (sim/sim-store.h), the graph's interface's
 * length (64) and the interface (graph/graph-store.h: opened, each node's edges decoded when
 * a reader asks for them; a KPGRST01 graph part is refused), the report store (check-splice.h:
 * where the report's blocks lie in the entry's output, read with that output).
 * KPSPLIC1 had no graph; KPSPLIC2 held the report's bytes again. Written by a recompute
 * (check-splice.c) and by a used splice (check-splice-use.c: its graph part the previous store's,
 * written from where it lies: kp_splice_store_pieces()), read by both.
 */
#ifndef KP_CHECK_SPLICE_STORE_H
#define KP_CHECK_SPLICE_STORE_H

#include "cache/run-cache.h"
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
 * blocks) with @base_rc and @fail_on, as the pieces the entry is written from
 * (run-cache.h kp_run_cache_keep_pieces()): its head, the simulation part, the graph part's
 * length, the graph part where it lies (an earlier store's in that entry's mapping: its
 * 1.4 MB on amd64-6.1 neither copied nor faulted into a new buffer) or as the four parts
 * kp_graph_store_encode_parts() made, the report part. "KPSPLIC3", the simulation part and
 * the graph part each after its 64-bit length, then the report part to the end.
 */
#define KP_SPLICE_STORE_PIECES 8
struct kp_splice_store_pieces {
	struct kp_rc_piece v[KP_SPLICE_STORE_PIECES];
	size_t n, len; /* pieces, bytes */
	/* the malloc()ed buffers they lie in: the head, the simulation, the graph part's table
	 * and body when encoded, the report part */
	unsigned char *own[KP_SPLICE_STORE_PIECES];
	size_t nown;
};
/*
 * The store's pieces into @out (zeroed first), @sim (malloc()ed) taken: freed with the
 * pieces, whatever the answer. 0, or -1 with @why (the pieces released).
 */
int kp_splice_store_pieces(const struct kp_graph *g, unsigned char *sim, size_t simlen,
			   const unsigned char *gp, size_t glen, const struct kp_check_capture *cap,
			   int base_rc, enum kp_severity fail_on,
			   struct kp_splice_store_pieces *out, const char **why);
/* Frees the buffers @s owns (none once handed to the result cache: @s->nown 0). */
void kp_splice_store_pieces_release(struct kp_splice_store_pieces *s);

/*
 * The store @p of @len bytes, of an entry whose output (stdout's bytes) is the @olen bytes
 * at @op, into @out (zeroed first; its parts borrow @p and @op): 0, or -1 with @err
 * (kp_splice_stored_release() it either way).
 */
int kp_splice_store_decode(const unsigned char *p, size_t len, const unsigned char *op, size_t olen,
			   struct kp_splice_stored *out, struct kp_err *err);
void kp_splice_stored_release(struct kp_splice_stored *s);

#endif
