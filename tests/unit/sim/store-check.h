/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * store-check.h: the checks test-store.c and test-store-stall.c run on a simulation stored by
 * sim-store.c (its round trip, its damaged bytes), over a world of tests/unit/builder.h.
 */
#ifndef KP_TEST_STORE_CHECK_H
#define KP_TEST_STORE_CHECK_H

#include <stddef.h>

#include "builder.h"

/* Builds @w's graph and runs the simulation recording its reads; aborts on failure. */
void run_recorded(struct tb_world *w);
/*
 * Encodes @w's simulation, decodes it and checks (TAP lines named after @what) that every
 * verdict, read record, the pool, the load order, the paths, names and interface digests come
 * back equal and the stored reads hold on the same run; the bytes in *@out (the caller frees).
 */
void round_trip(struct tap *t, struct tb_world *w, const char *what, unsigned char **out,
		size_t *len);
/*
 * Every truncation of @p refused; every byte flipped (every @step-th) and every 32-bit word
 * set to 0, 1, 0x7fffffff and ~0: refused or in bounds.
 */
/*
 * The store @p (@len bytes) decoded and written again with every module's body copied
 * (kp_sim_store_copy_body()), its state and policy findings from the decoded verdicts: the
 * same bytes (what a splice that keeps a verdict relies on).
 */
void copied_again(struct tap *t, const unsigned char *p, size_t len, const char *what);
void damage(struct tap *t, const unsigned char *p, size_t len, size_t step, const char *what);

#endif
