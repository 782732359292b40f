/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The simulation part of the store a splice makes (check-splice-sim.c): the spliced verdicts
 * with the policy findings added as the recompute adds them (cmd-check.c
 * kp_add_policy_findings(), no strict pass: a store is made only without one), written as
 * kp_sim_store_encode() writes the recompute's simulation: each kept verdict's body copied
 * from the stored simulation's bytes, its state written from the splice run; each verdict
 * simulated again encoded from kp_simulate_one()'s. The bytes the recompute stores for the
 * same run.
 */
#ifndef KP_CHECK_SPLICE_SIM_H
#define KP_CHECK_SPLICE_SIM_H

#include "check-splice-run.h"

/*
 * The store of @s's spliced verdicts (kp_splice_run() done, @final_taint its global taint)
 * over @g (the run's graph, the one @s ran over or equal to it, field for field) in *@out
 * (malloc()ed, the caller's) of *@len bytes; the stored simulation's bytes (@s->was's)
 * are read for the kept bodies. 0, or -1 with @err.
 */
int kp_splice_sim_encode(const struct kp_graph *g, const struct kp_splice_run *s,
			 unsigned long final_taint, unsigned char **out, size_t *len,
			 struct kp_err *err);

#endif
