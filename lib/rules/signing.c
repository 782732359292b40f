// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>

#include "rules.h"

/* module_sig_check(), kernel/module/signing.c (v5.19+; kernel/module_signing.c v4.x-5.18). */
int kp_rule_module_sig_check(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	const struct kp_module *m = ld->m;
	const char *reason;

	if (!c->f->module_sig)
		return 0;
	if (m->sig.present && !m->sig.malformed) {
		if (m->sig.id_type != 2) { /* mod_check_sig(): only PKEY_ID_PKCS7 */
			reason = "module with unsupported crypto";
		} else if (c->f->signatures_trusted) {
			return 0;
		} else {
			reason = "module with unavailable key";
		}
	} else if (m->sig.present) {
		kp_finding(ld->v, "bad-signature", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
			   "the appended signature is malformed: rejected even when signatures are "
			   "not enforced");
		return -EBADMSG;
	} else {
		reason = "unsigned module";
	}
	if (c->f->sig_enforce) {
		kp_msg(c, ld, "Loading of %s is rejected", reason);
		kp_finding(ld->v, "signature-required", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
			   "the kernel enforces module signatures: %s", reason);
		return -EKEYREJECTED;
	}
	if (c->f->lockdown) {
		kp_msg(c, ld,
		       "Lockdown: insmod: unsigned module loading is restricted; see man "
		       "kernel_lockdown.7");
		kp_finding(ld->v, "lockdown", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
			   "kernel lockdown refuses %s", reason);
		return -EPERM;
	}
	return 0;
}
