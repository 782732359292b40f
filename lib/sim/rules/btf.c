// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The module BTF notifier: prepare_coming_module() runs the module notifiers after
 * complete_formation(), and btf_module_notify() (kernel/bpf/btf.c) parses the module's
 * .BTF with btf_parse_module() against the kernel's BTF. Its error fails the load unless
 * MODULE_ALLOW_BTF_MISMATCH; the taints set before stay set.
 */
#include <stdio.h>

#include "read/btf.h"
#include "sim/rules/rules.h"

/* btf_module_notify(), MODULE_STATE_COMING, v5.11+ (MODULE_ALLOW_BTF_MISMATCH v5.18+) */
int kp_rule_btf_module_notify(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	const struct kp_module *m = ld->m;
	struct kp_btf_rules rules;
	struct kp_btf_verdict v;

	/*
	 * mod->btf_data_size == 0: nothing to parse. A verdict taken from the memo needs no
	 * kernel BTF loaded (the hook, kernel/vmlinux-btf-cached.h: kp_vmlinux_btf_peek_cached())
	 */
	if (!c->f->btf_modules || !m->has_btf || (!c->f->vmlinux_btf && !m->btf_judged))
		return 0;
	kp_profile_btf_rules(c->p, &rules);
	if (m->btf_judged) { /* judged while it was read (kernel/btf-judge.h) */
		v.err = m->btf_err;
		snprintf(v.why, sizeof(v.why), "%s", m->btf_why ? m->btf_why : "");
	} else if (!m->kept_btf || !m->btf_len ||
		   kp_btf_check_module(c->f->vmlinux_btf, m->btf, m->btf_len,
				       m->has_btf_base ? m->btf_base : NULL, m->btf_base_len,
				       &rules, &v) < 0) {
		/* no bytes (nothing to parse) or out of memory: no verdict, as if not modelled */
		return 0;
	}
	if (!v.err)
		return 0;
	if (c->f->btf_mismatch_fatal) {
		kp_msg(c, ld, "failed to validate module [%s] BTF: %d", ld->name, v.err);
		kp_finding(ld->v, "btf-mismatch", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
			   "the module's .BTF%s does not validate against the kernel's BTF (%s): "
			   "%s; btf_parse_module() returns %d and the load fails at its end",
			   m->has_btf_base && rules.relocate ? " (relocated by its .BTF.base)" : "",
			   c->f->vmlinux_btf_source, v.why, v.err);
		return v.err;
	}
	if (!c->p->has[KP_F_BTF_MISMATCH_QUIET])
		kp_msg(c, ld, "failed to validate module [%s] BTF: %d", ld->name, v.err);
	else if (!kp_once_done(c, KP_ONCE_BTF_MISMATCH))
		kp_msg(c, ld,
		       "Kernel module BTF mismatch detected, BTF debug info may be "
		       "unavailable for some modules");
	kp_once_mark(c, KP_ONCE_BTF_MISMATCH);
	kp_finding(ld->v, "btf-mismatch", KP_SEV_WARNING, KP_CONS_WARN, NULL,
		   "the module's .BTF does not validate against the kernel's BTF (%s): %s (%d); "
		   "MODULE_ALLOW_BTF_MISMATCH: the module loads without its BTF",
		   c->f->vmlinux_btf_source, v.why, v.err);
	return 0;
}
