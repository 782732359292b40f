/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The loader simulation: loads a module graph into a model of the target
 * kernel, in the kernel's order of checks, and records per module what
 * finit_module() and symbol_get() would do. The rules themselves live in
 * lib/sim/rules/, one file per kernel concern; lib/sim/rules/README.md maps them.
 */
#ifndef KP_LOADER_H
#define KP_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph/graph.h"
#include "kernel/kernel-facts.h"
#include "kernel/profile.h"
#include "sim/sim-reads.h"

/* Taint bits, include/linux/panic.h (v4.14 … v7.2). */
enum {
	KP_TAINT_PROPRIETARY_MODULE = 0, /* P */
	KP_TAINT_FORCED_MODULE = 1,	 /* F */
	KP_TAINT_DIE = 7,		 /* D: an oops (global only) */
	KP_TAINT_CRAP = 10,		 /* C */
	KP_TAINT_OOT_MODULE = 12,	 /* O */
	KP_TAINT_UNSIGNED_MODULE = 13,	 /* E */
	KP_TAINT_LIVEPATCH = 15,	 /* K */
	KP_TAINT_TEST = 18,		 /* N */
	KP_TAINT_FWCTL = 19,		 /* J, v6.15+ (never set by the loader) */
};

/* Writes the module-flag letters of @taints in bit order, as /sys/module/<m>/taint. */
void kp_taint_letters(unsigned long taints, char *buf, size_t len);

enum kp_severity { KP_SEV_NOTE, KP_SEV_WARNING, KP_SEV_ERROR };
enum kp_consequence {
	KP_CONS_LOAD_FAIL,
	KP_CONS_TAINT,
	KP_CONS_FEATURE_MISSING,
	KP_CONS_WARN,
};

struct kp_finding {
	const char *id; /* stable rule id, e.g. "inherit-taint" */
	enum kp_severity severity;
	enum kp_consequence consequence;
	char *message;
	const char *symbol; /* borrowed, may be NULL */
	bool waived;
};

/* __symbol_get()'s pr_warn() for a non-GPL-only export (kernel/module/main.c, 6.6+ and stable). */
#define KP_SYMGET_FAIL_FMT "failing symbol_get of non-GPLONLY symbol %s."

struct kp_symget_result {
	const char *symbol;
	bool ok;
	const char *reason; /* static text */
	const char *owner;  /* "vmlinux", a module name, or NULL */
	bool gpl_only;
	bool method_heuristic;
	bool dynamic; /* a computed name: ok/reason describe the candidates */
	/*
	 * When the call runs (of the module's sites calling it, the earliest: at load, else
	 * unknown, else when called), the direct calls from init (AT_LOAD) and the function
	 * holding the site; borrowed from the module.
	 */
	enum kp_symget_when when;
	const char *path;
	const char *function;
	/*
	 * The kernel prints "failing symbol_get of non-GPLONLY symbol X." when the call runs:
	 * among the verdict's load-time messages for AT_LOAD and UNKNOWN, not for WHEN_CALLED.
	 */
	bool kernel_logs;
};

enum kp_p_reason { KP_P_NONE, KP_P_LICENSE, KP_P_NAME, KP_P_INHERITED, KP_P_PRELOADED };

struct kp_verdict {
	size_t node; /* graph node */
	bool attempted;
	bool loads;
	int err;		    /* negative errno, 0 on success */
	unsigned long taints;	    /* mod->taints */
	unsigned long global_added; /* bits this load added to the global mask */
	unsigned long global_after; /* global mask after this step, less the initial taint */
	char **messages;
	size_t nmessages;
	struct kp_symget_result *symget;
	size_t nsymget;
	struct kp_finding *findings;
	size_t nfindings;
	/* evidence for `kopolicy explain` */
	enum kp_p_reason p_reason;
	size_t p_from;	      /* KP_P_INHERITED: verdict of the owner */
	const char *p_symbol; /* KP_P_INHERITED: the first symbol imported from it */
	size_t failed_dep;    /* SIZE_MAX, or a dependency that failed to load */
	size_t load_seq;      /* order in which successful loads happened */
	/*
	 * err is KP_ERR_OOPS and the oops left printk's logbuf_lock held (before v5.13): the
	 * machine hangs at the next printk, nothing after this load happens
	 */
	bool hangs;
	/*
	 * err is KP_ERR_OOPS inside resolve_symbol()'s module_mutex section: the killed task
	 * holds the lock for ever, every later load blocks in mutex_lock() (rules/stall.c)
	 */
	bool holds_module_mutex;
	/*
	 * err is KP_ERR_OOPS after add_unformed_module(): the module stays in the list,
	 * MODULE_STATE_UNFORMED, and a later load of its name waits for it for ever
	 */
	bool left_unformed;
	/* err is KP_ERR_BLOCKED or KP_ERR_NOT_RUN: the verdict of the load that caused it */
	size_t stalled_by;
};

struct kp_simulation {
	const struct kp_graph *graph;
	const struct kp_kernel_facts *facts;
	struct kp_verdict *v; /* indexed like graph nodes */
	size_t n;
	unsigned long global_taint;
	/*
	 * kp_simulate_recorded() only (else NULL, 0): what each load read of the earlier
	 * loads (sim-reads.h), indexed like v, and the verdict indices they read, each
	 * load's in one run
	 */
	struct kp_sim_reads *rec;
	uint32_t *reads;
	size_t nreads, creads;
	bool reads_incomplete; /* out of memory while recording: no verdict may be reused */
};

int kp_simulate(const struct kp_graph *g, const struct kp_kernel_facts *facts,
		struct kp_simulation *sim, struct kp_err *err);
/* The same, recording what each load read of the state earlier loads left (sim->rec). */
int kp_simulate_recorded(const struct kp_graph *g, const struct kp_kernel_facts *facts,
			 struct kp_simulation *sim, struct kp_err *err);
void kp_simulation_release(struct kp_simulation *sim);

struct kp_sim_state;
/*
 * The @k-th module of @g's load order loaded alone, as kp_simulate_recorded() loads it at
 * that place (kernel/module/main.c load_module(), all versions modelled): @before holds the
 * verdicts of the modules before it (indexed like the nodes; only those before its place are
 * read, the later ones read as not attempted), @st the global taint, once-only flags and
 * stall they left (sim-reads.h; its names are taken from @before and facts->loaded). *@out
 * gets a simulation of @g->n verdicts, only the module's own set, with its record and reads
 * (kp_simulation_release() it). 0, or -1 with @err.
 */
int kp_simulate_one(const struct kp_graph *g, const struct kp_kernel_facts *facts,
		    const struct kp_verdict *before, size_t k, const struct kp_sim_state *st,
		    struct kp_simulation *out, struct kp_err *err);
/*
 * The symbol_get() calls of module @i of @one (kp_simulate_one()) after every load:
 * @final the run's verdicts (indexed like the nodes; @i's is @one's), @final_taint the global
 * taint after the loads. 0, or -1 with @err.
 */
int kp_simulate_one_late(const struct kp_graph *g, const struct kp_kernel_facts *facts,
			 const struct kp_verdict *final, unsigned long final_taint,
			 struct kp_simulation *one, size_t i, struct kp_err *err);

/*
 * The bridge findings over the verdicts @v (indexed like @g's nodes), in the order
 * kp_add_policy_findings() adds them: @fn(@data, the bridge's node, the symbol, the
 * proprietary importer's name) for each, message KP_BRIDGE_FMT (symbol, importer); a
 * negative return stops the walk and is returned. 0 when every call returned 0.
 */
#define KP_BRIDGE_FMT "uses GPL-only symbols and exports %s (plain) to proprietary module %s"
typedef int kp_bridge_fn(void *data, size_t node, const char *sym, const char *importer);
int kp_policy_bridges(const struct kp_graph *g, const struct kp_verdict *v, kp_bridge_fn *fn,
		      void *data);
/* Findings beyond the kernel's own checks (bridges, the symbol_get hole, latent breakage). */
int kp_add_policy_findings(struct kp_simulation *sim, const struct kp_simulation *strict,
			   struct kp_err *err);
/* @f is one kp_add_policy_findings() adds after the simulation (bridge, latent-breakage). */
bool kp_finding_is_policy(const struct kp_finding *f);

/*
 * A verdict's err when the kernel oopses during the load (a read past the module image on a
 * kernel without the check): not an errno, the loading process is killed and the syscall
 * does not return; the global taint gets D. kp_errno_name() says "OOPS".
 */
#define KP_ERR_OOPS (-4096)
/*
 * A verdict's err when an earlier load's oops left the loader stuck (rules/stall.c): the call
 * sleeps for ever (module_mutex held by a dead task, or a wait for a module an oops left
 * MODULE_STATE_UNFORMED): kp_errno_name() says "BLOCKED"; or the machine hung during an
 * earlier load and this one never runs: "NOT-RUN". Neither is an errno.
 */
#define KP_ERR_BLOCKED (-4097)
#define KP_ERR_NOT_RUN (-4098)
/* err is one of the three above: the syscall does not return an errno */
#define KP_ERR_IS_STALL(err) ((err) <= KP_ERR_OOPS && (err) >= KP_ERR_NOT_RUN)
const char *kp_errno_name(int err);
const char *kp_severity_name(enum kp_severity s);
const char *kp_consequence_name(enum kp_consequence c);

#endif
