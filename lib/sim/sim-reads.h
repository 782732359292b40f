/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What one load read of the state the earlier loads left, and what it wrote to it: recorded by
 * kp_simulate_recorded() for every verdict (kp_simulate() records nothing), so that a cache of
 * results can reuse a module's verdict when the state it read is the same (a splice: one module of
 * a tree changed, the others' verdicts kept) and carry the state past it without simulating it.
 *
 * The state carried in load order (kernel/module/main.c, kernel/panic.c): the global taint
 * mask (test_taint()), the once-only flags (pr_*_once(), debug_locks_off()), the names of
 * the live modules (module_patient_check_exists()) and those an oops left unformed, what an oops
 * left of the loader (a held module_mutex, a hung machine), and the verdicts of the modules loaded
 * before (find_symbol() reads whether each exporter is live and, of the one it takes, the
 * P taint; a dependency's failure). After the loads, symbol_get() reads the same of every
 * exporter of the names it asks for ("late" reads). Nothing else of one load reaches the
 * next: the graph, the load order, the kernel facts and the module's own facts are the
 * caller's part of a splice's key.
 */
#ifndef KP_SIM_READS_H
#define KP_SIM_READS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The once-only flags of the simulation (struct kp_sim_ctx's once mask, one bit each). */
enum kp_once {
	KP_ONCE_SIG_NOTICE,	/* pr_notice_once() "module verification failed" */
	KP_ONCE_NO_VERSION,	/* pr_warn_once() "no symbol version" (upstream) */
	KP_ONCE_NO_EXT_VERSION, /* pr_warn_once() "no extended symbol version" (6.14+) */
	KP_ONCE_DEBUG_LOCKS,	/* debug_locks_off(): "Disabling lock debugging" printed */
	KP_ONCE_LIVEPATCH,	/* "tainting kernel with TAINT_LIVEPATCH" */
	KP_ONCE_BTF_MISMATCH,	/* pr_warn_once() of an allowed BTF mismatch (6.12+) */
	KP_ONCE_AUTHATTRS,	/* pr_warn_once() "Waived invalid module sig (has authattrs)" */
	KP_ONCE_N
};

/*
 * What an earlier load's oops left of the loader (rules/stall.c): nothing, module_mutex held by
 * the killed task (every later load sleeps in mutex_lock()), or a hung machine (nothing after
 * runs). @by is the verdict of that load.
 */
enum kp_stall_kind { KP_STALL_NONE, KP_STALL_MUTEX, KP_STALL_HUNG };
struct kp_stall {
	enum kp_stall_kind kind;
	size_t by;
};

struct kp_sim_reads {
	unsigned long taint_before; /* the global taint before the load */
	unsigned long taint_tested; /* its bits the load tested */
	unsigned long taint_set;    /* the bits it set (global_added = taint_set & ~before) */
	unsigned long taint_late;   /* bits tested after every load (symbol_get()) */
	unsigned once_before;	    /* the once-only flags (1 << KP_ONCE_*) before the load */
	unsigned once_read;	    /* those it consulted */
	unsigned once_set;	    /* those it set */
	bool name_read;		    /* it looked its own name up among the live modules */
	bool name_live;		    /* and found one */
	bool name_unformed;	    /* or one an oops left MODULE_STATE_UNFORMED */
	/* the stall kinds it asked about (1 << KP_STALL_*: stall.c), and what it found then */
	unsigned stall_asked;
	struct kp_stall stall_before;
	struct kp_stall stall_set; /* the stall its own oops left (kind NONE: none) */
	/* earlier verdicts it read: kp_simulation's reads[verdicts .. verdicts + nverdicts) */
	uint32_t verdicts, nverdicts;
	/* verdicts symbol_get() read after every load: reads[late .. late + nlate) */
	uint32_t late, nlate;
	/* the verdict's messages and findings of the load; symbol_get()'s come after them */
	uint32_t nmessages_load, nfindings_load;
};

/* The state a load starts from, as a splice has it at a module's place in load order. */
struct kp_sim_state {
	unsigned long taint;   /* the global taint */
	unsigned once;	       /* the once-only flags */
	bool name_live;	       /* a live module has the module's name (facts->loaded or earlier) */
	bool name_unformed;    /* an earlier load's oops left a module of that name UNFORMED */
	struct kp_stall stall; /* what earlier oopses left of the loader */
};

struct kp_simulation;
struct kp_verdict;

/*
 * Whether verdict @i of @was (recorded, its reads complete: !was->reads_incomplete)
 * would be the verdict of the same module loaded from the state @now, where @now_v holds the
 * verdicts of the modules before it in load order (indexed like @was->v; the others are not
 * read): every taint bit and once-only flag it tested is equal, its name is live or not as
 * then, and every earlier verdict it read loads or not, has the taints and left a module
 * UNFORMED or not as then (the one a load of its name waits for is read). The graph,
 * the load order, the facts of the kernel and of the module must be the same (the caller's
 * key). global_added and global_after are not part of it: kp_sim_reads_apply() gives them.
 */
bool kp_sim_reads_hold(const struct kp_simulation *was, size_t i, const struct kp_sim_state *now,
		       const struct kp_verdict *now_v);
/*
 * The same for symbol_get()'s results of verdict @i (read after every load): @final_taint the
 * global taint after the loads, @now_v every verdict of the run.
 */
bool kp_sim_late_reads_hold(const struct kp_simulation *was, size_t i, unsigned long final_taint,
			    const struct kp_verdict *now_v);
/*
 * The state after a load whose reads were @r, from @s: the taint and once-only bits it set
 * are added, and the stall it left. The live and unformed names are the caller's (a module
 * that loads becomes live under its name, one whose verdict has left_unformed unformed).
 */
void kp_sim_reads_apply(const struct kp_sim_reads *r, struct kp_sim_state *s);

#endif
