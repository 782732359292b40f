// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>

#include "rules.h"

/*
 * mod_verify_sig()/mod_check_sig(), kernel/module/signing.c and module_signature.c
 * (v5.x … v6.12): the layout checks; the PKCS#7 verification itself needs the
 * kernel's keyrings, so a well-formed blob is assumed to verify unless told otherwise.
 */
static int mod_verify_sig(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	const struct kp_signature *sig = &ld->m->sig;

	if (sig->malformed)
		return -EBADMSG;
	if (sig->id_type != 2) { /* PKEY_ID_PKCS7 */
		kp_msg(c, ld, "module: not signed with expected PKCS#7 message");
		return -ENOPKG;
	}
	if (!sig->params_zero) {
		kp_msg(c, ld, "module: PKCS#7 signature info has unexpected non-zero params");
		return -EBADMSG;
	}
	if (!sig->pkcs7_der)
		return -EBADMSG; /* verify_pkcs7_signature() cannot parse the message */
	return c->f->signatures_trusted ? 0 : -ENOKEY;
}

/* module_sig_check(), kernel/module/signing.c (v5.19+; kernel/module_signing.c v4.x-5.18). */
int kp_rule_module_sig_check(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	const char *reason;
	int err = -ENODATA;

	ld->sig_ok = false;
	if (!c->f->module_sig)
		return 0;
	if (ld->m->sig.present)
		err = mod_verify_sig(c, ld);
	switch (err) {
	case 0:
		ld->sig_ok = true;
		return 0;
	case -ENODATA:
		reason = "unsigned module";
		break;
	case -ENOPKG:
		reason = "module with unsupported crypto";
		break;
	case -ENOKEY:
		reason = "module with unavailable key";
		break;
	default:
		/* every other error is fatal even when signatures are not enforced */
		kp_finding(ld->v, "bad-signature", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
			   "the appended signature is malformed (%s): rejected even when "
			   "signatures are not enforced",
			   kp_errno_name(err));
		return err;
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
