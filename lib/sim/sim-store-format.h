/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The layout of a recorded simulation as bytes (sim-store.h), shared by its writer
 * (sim-store.c) and its reader (sim-store-read.c). Layout, little-endian; a string is
 * its length (32 bits, 0xffffffff for NULL) and its bytes and a NUL (none for NULL):
 *
 *   magic "KPSIMST3", module count (32), global taint (64), verdicts read in all (32)
 *   per module in load order:
 *     node (32)
 *     its state (what the loads before it left, and what it derived from that):
 *       global_added, global_after (64), load_seq (32), taint_before (64),
 *       once_before (32), stall_before: kind (8), by (32)
 *     its body's length (32), its body:
 *       path, name
 *       interface digest (32 bytes), flags (8: attempted, loads, hangs, holds_module_mutex,
 *       left_unformed), err (32), taints (64), p_reason (8), p_from, failed_dep,
 *       stalled_by (32: an index of 0xffffffff is none)
 *       reads: taint_tested, taint_set, taint_late (64), once_read, once_set (32), name bits
 *              (8: read, live, unformed), stall_asked (8), stall_set: kind (8), by (32),
 *              nmessages_load, nfindings_load (32)
 *       p_symbol
 *       messages: count (32), strings
 *       findings but the policy ones: count (32), each: id, severity (8), consequence (8),
 *                 message, symbol, waived (8)
 *       symbol_get: count (32), each: symbol, flags (8: ok, gpl_only, heuristic, dynamic,
 *                   kernel_logs), reason, owner, when (8), path, function
 *       verdicts read: count (32), each a node (32); verdicts read late: the same
 *     its policy findings (kp_finding_is_policy(), after the others): count, each a finding
 *
 * A body holds what a splice keeps of a verdict whose reads hold (check-splice-run.c): no
 * offset into the rest of the store, so that a later store of the same verdict copies its
 * bytes (kp_sim_store_copy_body()); the state and the policy findings (bridges read every
 * verdict) are what a splice derives again, written beside it. Strings end in a NUL so that a
 * decoded store's strings are its own bytes, not copies; the fixed-size fields come in
 * blocks, each bounds-checked once.
 *
 * The magic names the layout: a store of another layout (KPSIMST1 had no stall state,
 * KPSIMST2 one pool of reads for every record, offsets into it) is refused, never read as
 * this one.
 */
#ifndef KP_SIM_STORE_FORMAT_H
#define KP_SIM_STORE_FORMAT_H

#include "util/byte-writer.h"

#define SS_MAGIC "KPSIMST3"
#define SS_NONE	 KP_BW_NONE

#define STATE_LEN 41  /* node and state */
#define FIXED_LEN 105 /* a body's fixed-size fields */
#define NREADS_AT 20  /* the header's count of verdicts read */

#endif
