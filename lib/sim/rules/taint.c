// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
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
 * The taints of check_modinfo() (<= v6.3; the first half of module_augment_kernel_taints()
 * v6.4+): O, C, K, the license's P, N. Before v6.4 check_modinfo_livepatch() refuses a
 * livepatch module here, after O and C are set (v6.4+: in check_modinfo(), before any taint).
 */
static int modinfo_taints(struct kp_sim_ctx *c, struct kp_loading *ld, bool livepatch_check)
{
	const struct kp_module *m = ld->m;

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
	if (m->livepatch && livepatch_check && !c->f->livepatch) {
		kp_msg(c, ld,
		       "%s: module is marked as livepatch module, but livepatch support is "
		       "disabled",
		       ld->name);
		return -ENOEXEC;
	}
	if (m->livepatch) {
		kp_add_taint_module(c, ld, KP_TAINT_LIVEPATCH, false);
		if (!kp_once_done(c, KP_ONCE_LIVEPATCH))
			kp_msg(c, ld, "%s: tainting kernel with TAINT_LIVEPATCH", ld->name);
		kp_once_mark(c, KP_ONCE_LIVEPATCH);
	}
	license_taint_check(c, ld);
	if (m->test && c->p->has[KP_F_TEST_TAINT]) {
		if (!kp_test_taint(c, KP_TAINT_TEST))
			kp_msg(c, ld, "%s: loading test module taints kernel.", ld->name);
		kp_add_taint_module(c, ld, KP_TAINT_TEST, false);
	}
	return 0;
}

/*
 * E for a signature that did not verify (<= v6.3: in load_module() after
 * add_unformed_module()), then the hard-coded names (check_module_license_and_versions()
 * <= v6.3, module_license_offenders[] v6.14+) and "module license taints kernel." when P
 * is new since @prev_p.
 */
static void sig_and_name_taints(struct kp_sim_ctx *c, struct kp_loading *ld, bool prev_p)
{
	if (c->f->module_sig && !ld->sig_ok) {
		if (!kp_once_done(c, KP_ONCE_SIG_NOTICE))
			kp_msg(c, ld,
			       "%s: module verification failed: signature and/or required key "
			       "missing - tainting kernel",
			       ld->name);
		kp_once_mark(c, KP_ONCE_SIG_NOTICE);
		kp_add_taint_module(c, ld, KP_TAINT_UNSIGNED_MODULE, false);
	}
	/* ndiswrapper: the global P only, so that it keeps its GPL-only symbols. */
	if (!strcmp(ld->name, "ndiswrapper"))
		kp_add_taint(c, ld, KP_TAINT_PROPRIETARY_MODULE, true);
	if (!strcmp(ld->name, "driverloader") || !strcmp(ld->name, "lve")) {
		kp_add_taint_module(c, ld, KP_TAINT_PROPRIETARY_MODULE, true);
		if (ld->v->p_reason == KP_P_NONE)
			ld->v->p_reason = KP_P_NAME;
	}
	if (!prev_p && kp_test_taint(c, KP_TAINT_PROPRIETARY_MODULE))
		kp_msg(c, ld, "%s: module license taints kernel.", ld->name);
}

/* module_augment_kernel_taints() v6.4+: P sampled before every taint of the module. */
int kp_rule_module_augment_kernel_taints(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	bool prev_p = kp_test_taint(c, KP_TAINT_PROPRIETARY_MODULE);

	modinfo_taints(c, ld, false);
	sig_and_name_taints(c, ld, prev_p);
	return 0;
}

/* check_modinfo()'s taints and livepatch check, v4.x … v6.3 (before add_unformed_module()). */
int kp_rule_check_modinfo_taints(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	return modinfo_taints(c, ld, true);
}

/*
 * v4.x … v6.3: E after add_unformed_module(), then check_module_license_and_versions()'s
 * names, P sampled there (after the license's P: that one is not announced twice).
 */
void kp_rule_check_module_license_taints(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	sig_and_name_taints(c, ld, kp_test_taint(c, KP_TAINT_PROPRIETARY_MODULE));
}
