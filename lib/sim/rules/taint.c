// SPDX-License-Identifier: LGPL-2.1-or-later
#include <string.h>

#include "read/license.h"
#include "rules.h"

/* module_license_taint_check() v6.4+ / set_license() before: the first license= only. */
static void license_taint_check(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	const char *license = ld->m->license ? ld->m->license : "unspecified";

	if (kp_license_is_gpl_compatible(license))
		return;
	if (!kp_test_taint(c, KP_TAINT_PROPRIETARY_MODULE))
		kp_msg(c, ld, "%s: module license '%s' taints kernel.", ld->name, license);
	kp_add_taint_module(c, ld, KP_TAINT_PROPRIETARY_MODULE, true);
	ld->v->p_reason = KP_P_LICENSE;
	kp_finding(ld->v, "license-taint", KP_SEV_NOTE, KP_CONS_TAINT, NULL,
		   "license '%s' is not GPL-compatible: the module is proprietary (P) and cannot "
		   "use GPL-only symbols",
		   license);
}

/*
 * module_augment_kernel_taints() v6.4+; check_modinfo()+check_module_license_and_versions() before.
 */
int kp_rule_module_augment_kernel_taints(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	const struct kp_module *m = ld->m;
	bool prev_p = kp_test_taint(c, KP_TAINT_PROPRIETARY_MODULE);

	if (!m->intree) {
		if (!kp_test_taint(c, KP_TAINT_OOT_MODULE))
			kp_msg(c, ld, "%s: loading out-of-tree module taints kernel.", ld->name);
		kp_add_taint_module(c, ld, KP_TAINT_OOT_MODULE, false);
	}
	if (m->staging) {
		kp_add_taint_module(c, ld, KP_TAINT_CRAP, false);
		kp_msg(c, ld,
		       "%s: module is from the staging directory, the quality is unknown, "
		       "you have been warned.",
		       ld->name);
	}
	if (m->livepatch) {
		kp_add_taint_module(c, ld, KP_TAINT_LIVEPATCH, false);
		if (!c->livepatch_notice_done)
			kp_msg(c, ld, "%s: tainting kernel with TAINT_LIVEPATCH", ld->name);
		c->livepatch_notice_done = true;
	}
	license_taint_check(c, ld);
	if (m->test && c->p->has[KP_F_TEST_TAINT]) {
		if (!kp_test_taint(c, KP_TAINT_TEST))
			kp_msg(c, ld, "%s: loading test module taints kernel.", ld->name);
		kp_add_taint_module(c, ld, KP_TAINT_TEST, false);
	}
	if (c->f->module_sig && !ld->sig_ok) {
		if (!c->sig_notice_done)
			kp_msg(c, ld,
			       "%s: module verification failed: signature and/or required key "
			       "missing - tainting kernel",
			       ld->name);
		c->sig_notice_done = true;
		kp_add_taint_module(c, ld, KP_TAINT_UNSIGNED_MODULE, false);
	}
	/* Hard-coded names, matched on mod->name (module_license_offenders[] in v6.14+). */
	if (!strcmp(ld->name, "ndiswrapper"))
		kp_add_taint(c, ld, KP_TAINT_PROPRIETARY_MODULE, true);
	if (!strcmp(ld->name, "driverloader") || !strcmp(ld->name, "lve")) {
		kp_add_taint_module(c, ld, KP_TAINT_PROPRIETARY_MODULE, true);
		if (ld->v->p_reason == KP_P_NONE)
			ld->v->p_reason = KP_P_NAME;
	}
	if (!prev_p && kp_test_taint(c, KP_TAINT_PROPRIETARY_MODULE) &&
	    (c->p->has[KP_F_LICENSE_SECOND_MSG] || ld->v->p_reason == KP_P_NAME ||
	     !strcmp(ld->name, "ndiswrapper")))
		kp_msg(c, ld, "%s: module license taints kernel.", ld->name);
	return 0;
}
