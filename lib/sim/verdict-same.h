/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Whether two verdicts of one module say the same (the splice's measure, check-splice.c, and
 * the store's round trip, test-store).
 */
#ifndef KP_VERDICT_SAME_H
#define KP_VERDICT_SAME_H

#include <stdbool.h>

#include "sim/loader.h"

/*
 * What verdict @a gives the output against @b: every field a report prints (outcome, errno,
 * taints and global masks, P evidence, failed dependency, stall, messages, findings with
 * their waivers, symbol_get() results); not the node or the load sequence.
 */
bool kp_verdict_same_output(const struct kp_verdict *a, const struct kp_verdict *b);
/*
 * What the simulation gives of verdict @a against @b (kp_simulate() with its symbol_get()
 * pass, before kp_add_policy_findings() and the waivers): kp_verdict_same_output() with the
 * load sequence, without the policy findings (bridge, latent-breakage) and the waivers.
 */
bool kp_verdict_same_simulated(const struct kp_verdict *a, const struct kp_verdict *b);

#endif
