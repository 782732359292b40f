// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * IMA appraisal of a module, before load_module() runs: finit_module() reads the file with
 * kernel_read_file(READING_MODULE), whose security_kernel_post_read_file() hook is
 * ima_post_read_file() -> process_measurement(MODULE_CHECK); init_module() (a module kmod
 * decompressed itself) is judged by ima_load_data(LOADING_MODULE) without a file
 * (security/integrity/ima/ima_main.c, ima_appraise.c, ima_modsig.c). The policy is
 * kernel/ima-policy.c's; the file's security.ima is file/ima-xattr.c's.
 */
#include <errno.h>
#include <stdio.h>

#include "kernel/kernel-facts.h"
#include "rules.h"

/* The audit record integrity_audit_msg() prints (type 1800 AUDIT_INTEGRITY_DATA, res=0). */
static void audit_line(struct kp_sim_ctx *c, struct kp_loading *ld, const char *cause)
{
	kp_msg(c, ld,
	       "audit: type=1800 audit(<time>:<serial>): pid=<pid> uid=0 auid=<auid> ses=<ses> "
	       "op=appraise_data cause=%s comm=<comm> name=\"%s\" dev=<dev> ino=<ino> res=0 "
	       "errno=0",
	       cause, ld->m->path ? ld->m->path : ld->name);
}

/* ima_load_data(LOADING_MODULE), 5.4-7.2: init_module() has no file to appraise */
static int load_data(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	const struct kp_ima_policy *p = &c->f->ima;

	if (!(p->appraise & KP_IMA_APPRAISE_ENFORCE) || c->f->sig_enforce ||
	    !(p->appraise & KP_IMA_APPRAISE_MODULES))
		return 0;
	kp_msg(c, ld,
	       "ima: impossible to appraise a module without a file descriptor. "
	       "sig_enforce kernel parameter might help");
	kp_finding(ld->v, "ima-appraisal", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
		   "the module is compressed and this kernel cannot decompress it "
		   "(MODULE_DECOMPRESS off): kmod loads the decompressed bytes with init_module(), "
		   "which IMA refuses while its policy (%s) appraises modules and module "
		   "signatures are not enforced",
		   p->source);
	return -EACCES;
}

/*
 * The appended signature IMA can appraise (IMA_MODSIG_ALLOWED, CONFIG_IMA_APPRAISE_MODSIG):
 * ima_read_modsig() looks for it at the end of the buffer it is given, which for a
 * compressed finit_module() is the compressed file until c200892b46ba.
 */
static bool modsig_seen(const struct kp_sim_ctx *c, const struct kp_ima_rule *r,
			const struct kp_module *m)
{
	return r->modsig && c->f->ima.modsig && m->sig.present && !m->sig.malformed &&
	       (m->compression == KP_COMP_NONE || c->p->has[KP_F_IMA_DECOMPRESSED_MODULES]);
}

static void assumed(struct kp_loading *ld, const char *what, const struct kp_ima_rule *r)
{
	kp_finding(ld->v, "ima-signature-assumed", KP_SEV_NOTE, KP_CONS_WARN, NULL,
		   "IMA appraises the module (%s): %s is assumed to verify against the .ima "
		   "keyring",
		   r->text, what);
}

/*
 * ima_appraise_measurement() + xattr_verify() (5.4-7.2): the cause of a failed appraisal,
 * NULL when it passes (or is assumed to) and "" for INTEGRITY_UNKNOWN (a file system without
 * extended attributes: a failure without an audit record).
 */
static const char *appraise(const struct kp_sim_ctx *c, struct kp_loading *ld,
			    const struct kp_ima_rule *r)
{
	const struct kp_ima_file *x = &ld->m->ima;
	bool modsig = modsig_seen(c, r, ld->m);

	switch (x->state) {
	case KP_IMA_X_NO_SUPPORT:
		if (modsig)
			break;
		return "";
	case KP_IMA_X_UNREAD:
	case KP_IMA_X_NONE:
	case KP_IMA_X_UNREADABLE:
		if (modsig)
			break;
		return r->digsig ? "IMA-signature-required" : "missing-hash";
	case KP_IMA_X_DIGEST:
		if (modsig)
			break; /* a digest with a modsig: the modsig is verified */
		if (r->digsig)
			return "IMA-signature-required";
		if (x->digest_match == 0)
			return "invalid-hash";
		if (x->digest_match < 0)
			kp_finding(ld->v, "ima-signature-assumed", KP_SEV_NOTE, KP_CONS_WARN, NULL,
				   "IMA appraises the module (%s): its security.ima digest (%s) "
				   "could not be computed here and is assumed to match",
				   r->text,
				   kp_ima_hash_name(x->hash_algo) ? kp_ima_hash_name(x->hash_algo)
								  : "unknown algorithm");
		return NULL;
	case KP_IMA_X_DIGSIG:
		assumed(ld, "its security.ima signature", r);
		return NULL;
	case KP_IMA_X_OTHER:
		assumed(ld, "its security.ima value (not a digest or signature kopolicy knows)", r);
		return NULL;
	}
	assumed(ld, "its appended signature (modsig)", r);
	return NULL;
}

/* ima_post_read_file() -> process_measurement(MODULE_CHECK), 5.4-7.2 (ima_main.c) */
int kp_rule_ima_appraise_module(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	const struct kp_ima_policy *p = &c->f->ima;
	const struct kp_module *m = ld->m;
	const struct kp_ima_rule *r;
	const char *cause;
	bool enforce = p->appraise & KP_IMA_APPRAISE_ENFORCE;

	if (!kp_ima_policy_appraises_modules(p))
		return 0;
	if (m->compression != KP_COMP_NONE && !c->f->module_decompress)
		return load_data(c, ld);
	r = kp_ima_policy_match(p, &m->ima);
	if (!r || !r->appraise)
		return 0;
	cause = appraise(c, ld, r);
	if (!cause)
		return 0;
	if (*cause)
		audit_line(c, ld, cause);
	if (!enforce) {
		kp_finding(ld->v, "ima-appraisal", KP_SEV_WARNING, KP_CONS_WARN, NULL,
			   "IMA appraisal fails (%s, rule '%s' of %s) but is not enforced "
			   "(ima_appraise=%s): the failure is only logged",
			   *cause ? cause : "a file system without extended attributes", r->text,
			   p->source, p->appraise & KP_IMA_APPRAISE_FIX ? "fix" : "log/off");
		return 0;
	}
	kp_finding(ld->v, "ima-appraisal", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
		   "IMA refuses to read the module: %s under rule '%s' of %s%s%s",
		   *cause ? cause
			  : "its file system has no extended attributes (INTEGRITY_UNKNOWN)",
		   r->text, p->source,
		   m->compression != KP_COMP_NONE && r->modsig && p->modsig &&
				   !c->p->has[KP_F_IMA_DECOMPRESSED_MODULES]
			   ? "; the module is compressed and this kernel appraises the compressed "
			     "file, whose end holds no appended signature (IMA reads the "
			     "decompressed module from 6.19)"
			   : "",
		   r->unmodelled ? "; the rule's condition on which files it covers is not "
				   "modelled and taken as met"
				 : "");
	return -EACCES;
}
