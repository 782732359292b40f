// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What a load finds of the loader after an earlier load's oops: the kernel goes on after an
 * oops in process context (the task is killed, make_task_dead()), but what the dead task held
 * stays held. Two outcomes are certain: a machine an earlier load hung runs nothing more, and
 * a module_mutex held by a killed task is never released (kernel/locking/mutex.c: only the
 * owner unlocks), so every later load sleeps in mutex_lock(), uninterruptibly. The wait for a
 * module an oops left MODULE_STATE_UNFORMED is duplicate.c's.
 */
#include "rules.h"

/* Any version: a load after one that hung the machine (resolve.c's kernel-hang) never runs. */
int kp_rule_machine_hung(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	size_t by;

	if (!kp_read_stall(c, KP_STALL_HUNG, &by))
		return 0;
	ld->v->stalled_by = by;
	kp_finding(ld->v, "machine-hung", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
		   "never loaded: the machine hung while loading %s before it (kernel-hang), "
		   "so this load never happens",
		   c->g->nodes[by].mod->name);
	return KP_ERR_NOT_RUN;
}

/*
 * mutex_lock(&module_mutex) in add_unformed_module() before v6.4, in early_mod_check() from
 * v6.4 (5.10 … 7.2): after an oops that left the lock held (resolve.c, find_symbol() under
 * resolve_symbol()'s lock) the load sleeps there for ever, in state D.
 */
int kp_rule_module_mutex_lock(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	size_t by;

	if (!kp_read_stall(c, KP_STALL_MUTEX, &by))
		return 0;
	ld->v->stalled_by = by;
	kp_finding(ld->v, "loader-blocked", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
		   "never loaded: the oops loading %s killed its task holding module_mutex, "
		   "which nothing then releases; this load sleeps for ever in "
		   "mutex_lock(&module_mutex) in %s (state D, no signal ends it; the hung-task "
		   "detector reports it after 120 s), and so does every later one",
		   c->g->nodes[by].mod->name,
		   c->p->has[KP_F_TAINT_AFTER_DUP] ? "early_mod_check()" : "add_unformed_module()");
	return KP_ERR_BLOCKED;
}
