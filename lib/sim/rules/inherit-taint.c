// SPDX-License-Identifier: LGPL-2.1-or-later
#include "rules.h"

/*
 * inherit_taint(), kernel/module/main.c: v5.9+ (262e6ae7081d), stable
 * 4.4.269/4.9.269/4.14.233/4.19.191/5.4.118.
 */
bool kp_rule_inherit_taint(struct kp_sim_ctx *c, struct kp_loading *ld, const struct kp_found *fs,
			   const char *name)
{
	bool named = c->p->has[KP_F_INHERIT_MSG_SYMBOL]; /* v5.19 added the symbol to both lines */

	if (!c->p->has[KP_F_INHERIT_TAINT])
		return true;
	if (fs->kind == KP_PROV_VMLINUX || !fs->owner_proprietary)
		return true;
	if (ld->using_gplonly_symbols) {
		if (named)
			kp_msg(c, ld,
			       "%s: module using GPL-only symbols uses symbols %s from "
			       "proprietary module %s.",
			       ld->name, name, fs->owner_name);
		else
			kp_msg(c, ld,
			       "%s: module using GPL-only symbols uses symbols from "
			       "proprietary module %s.",
			       ld->name, fs->owner_name);
		kp_finding(ld->v, "gpl-proprietary-mix", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, name,
			   "uses GPL-only symbols and imports %s from proprietary module %s: the "
			   "import is refused (2020 rule)",
			   name, fs->owner_name);
		return false;
	}
	if (!(ld->v->taints & (1UL << KP_TAINT_PROPRIETARY_MODULE))) {
		if (named)
			kp_msg(c, ld,
			       "%s: module uses symbols %s from proprietary module %s, "
			       "inheriting taint.",
			       ld->name, name, fs->owner_name);
		else
			kp_msg(c, ld,
			       "%s: module uses symbols from proprietary module %s, "
			       "inheriting taint.",
			       ld->name, fs->owner_name);
		/* set_bit() on mod->taints only: the global mask is not touched. */
		ld->v->taints |= 1UL << KP_TAINT_PROPRIETARY_MODULE;
		ld->v->p_reason = KP_P_INHERITED;
		ld->v->p_from = fs->kind == KP_PROV_MODULE ? fs->owner : SIZE_MAX;
		ld->v->p_symbol = name;
		kp_finding(ld->v, "inherit-taint", KP_SEV_WARNING, KP_CONS_TAINT, name,
			   "imports %s from proprietary module %s and inherits P (2020 rule); "
			   "GPL-only symbols become unavailable to it",
			   name, fs->owner_name);
	}
	return true;
}
