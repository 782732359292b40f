// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <string.h>

#include "rules.h"

/*
 * module_patient_check_exists() v6.4+ / add_unformed_module() before (5.10 … 7.2): a live
 * module of that name; one an oops left MODULE_STATE_UNFORMED (the oopsing load never took it
 * out of the list): wait_event_interruptible(module_wq, finished_loading()) waits for ever.
 */
int kp_rule_module_patient_check_exists(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	bool live = kp_symbol_index_find(&c->live_names, ld->name);
	const struct kp_symbol_index_entry *dead =
		live ? NULL : kp_symbol_index_find(&c->unformed_names, ld->name);

	if (c->rd) {
		c->rd->name_read = true;
		c->rd->name_live = live;
		c->rd->name_unformed = dead != NULL;
	}
	if (dead) {
		ld->v->stalled_by = *(const size_t *)dead->value;
		/* which load left it: the verdict read (its left_unformed), as find_symbol()'s */
		kp_read_verdict(c, ld->v->stalled_by);
		kp_finding(ld->v, "loader-blocked", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
			   "never loaded: the oops loading %s left a module named %s in the "
			   "kernel's list, MODULE_STATE_UNFORMED, and this load waits for it to "
			   "finish loading, for ever (%s: wait_event_interruptible(), state S; "
			   "only a signal ends it)",
			   c->g->nodes[ld->v->stalled_by].mod->name, ld->name,
			   c->p->has[KP_F_TAINT_AFTER_DUP] ? "module_patient_check_exists()"
							   : "add_unformed_module()");
		return KP_ERR_BLOCKED;
	}
	if (!live)
		return 0;
	kp_finding(ld->v, "already-loaded", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
		   "a module named %s is already loaded", ld->name);
	return -EEXIST;
}

/*
 * verify_exported_symbols(): v2.6 … v7.2, searched with gplok=true, first duplicate ends it
 * (v7.1+: the single __ksymtab).
 */
int kp_rule_verify_exported_symbols(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	const struct kp_module *m = ld->m;
	const struct kp_wild_export *w = m->wild_export.present ? &m->wild_export : NULL;
	uint32_t pos = 0; /* x's index in its table */

	for (size_t i = 0; i < m->nexports; i++, pos++) {
		const struct kp_export *x = &m->exports[i];
		struct kp_found fs;
		bool gpl;

		if (i && x->table != m->exports[i - 1].table)
			pos = 0;
		/* the wild name is looked up in table order, before x (exports.c leaves it out) */
		if (w && (x->table > w->table || (x->table == w->table && pos >= w->index))) {
			int err = kp_rule_wild_export_name(c, ld);

			w = NULL;
			if (err)
				return err;
		}
		if (x->table != KP_KSYMTAB && x->table != KP_KSYMTAB_GPL)
			continue;
		if (!kp_export_class(c, x, &gpl))
			continue;
		if (!kp_find_symbol_hashed(c, x->name, x->hash, true, &fs))
			continue;
		kp_msg(c, ld, "%s: exports duplicate symbol %s (owned by %s)", ld->name, x->name,
		       fs.owner_name ? fs.owner_name : "kernel");
		kp_finding(ld->v, "duplicate-export", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, x->name,
			   "exports %s, already exported by %s", x->name,
			   fs.owner_name ? fs.owner_name : "the kernel");
		return -ENOEXEC;
	}
	return w ? kp_rule_wild_export_name(c, ld) : 0;
}
