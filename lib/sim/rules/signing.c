// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel/kernel-facts.h"
#include "rules.h"
#include "kernel/sig-keys.h"

static bool at_least(const struct kp_profile *p, int major, int minor)
{
	const struct kp_kver v = { major, minor, 0 };

	return !p->version_known || kp_kver_cmp(&p->version, &v) >= 0;
}

/*
 * pkcs7_sig_note_digest_algo(), crypto/asymmetric_keys/pkcs7_parser.c: D6.1 maps md4, md5,
 * sha1, sha256, sha384, sha512, sha224, sm3, streebog; D6.12 drops md4/md5 and adds sha3-*
 * (upstream v6.7); anything else is -ENOPKG. Kernels between 6.1 and 6.12 are taken as 6.12.
 */
static bool parser_knows_hash(const struct kp_profile *p, const char *h)
{
	static const char *const always[] = { "sha1",	"sha224", "sha256",	 "sha384",
					      "sha512", "sm3",	  "streebog256", "streebog512" };

	for (size_t i = 0; i < KP_ARRAY_SIZE(always); i++)
		if (!strcmp(h, always[i]))
			return true;
	if (!strcmp(h, "md4") || !strcmp(h, "md5"))
		return !at_least(p, 6, 7);
	if (!strncmp(h, "sha3-", 5))
		return at_least(p, 6, 7);
	return false;
}

/*
 * pkcs7_sig_note_pkey_algo(): rsaEncryption always; ecdsa-with-* since v5.13; sm2 up to
 * D6.1 (gone in D6.12); ecrdsa; ML-DSA since v7.0 ("modsign: Enable ML-DSA module signing").
 */
static bool parser_knows_pkey(const struct kp_profile *p, const char *k)
{
	if (!strcmp(k, "rsa") || !strncmp(k, "ecrdsa", 6))
		return true;
	if (!strcmp(k, "ecdsa"))
		return at_least(p, 5, 13);
	if (!strcmp(k, "sm2"))
		return !at_least(p, 6, 7);
	if (!strncmp(k, "ml-dsa-", 7))
		return at_least(p, 7, 0);
	return false;
}

/* Debian's mod_is_hash_blacklisted() patch: D5.10, D6.1, D6.12; dropped in Debian 6.17. */
static bool debian_hash_blacklist(const struct kp_sim_ctx *c)
{
	return kp_release_is_debian(c->f->release) && !at_least(c->p, 6, 17);
}

static void note_signer(struct kp_sim_ctx *c, struct kp_loading *ld, const char *what,
			const struct kp_trusted_key *k)
{
	const struct kp_signature *s = &ld->m->sig;

	kp_finding(ld->v, "signature-assumed", KP_SEV_NOTE, KP_CONS_WARN, NULL,
		   "the signature (%s, %s) is assumed to verify: %s%s%s%s", s->hash_algo,
		   s->pkey_algo, what, k ? " '" : "", k ? k->subject : "", k ? "'" : "");
}

/*
 * verify_pkcs7_signature() (certs/system_keyring.c, D6.1/D6.12) for a module: parse,
 * pkcs7_verify(), then pkcs7_validate_trust() against the secondary keyring and, on -ENOKEY,
 * the platform keyring (mod_verify_sig(), kernel/module/signing.c).
 */
static int verify_pkcs7(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	const struct kp_signature *s = &ld->m->sig;
	const struct kp_trusted_key *key;

	if (s->pkcs7_err) {
		if (s->pkcs7_note && !strncmp(s->pkcs7_note, "PKCS7: ", 7))
			kp_msg(c, ld, "%s", s->pkcs7_note); /* the parser's own pr_warn() */
		return s->pkcs7_err;
	}
	if (s->hash_algo && s->pkey_algo &&
	    (!parser_knows_hash(c->p, s->hash_algo) || !parser_knows_pkey(c->p, s->pkey_algo)))
		return -ENOPKG;
	if (s->pkcs7_verify_err) {
		if (s->pkcs7_verify_err == -EKEYREJECTED)
			kp_msg(c, ld, "%s", s->pkcs7_note);
		return s->pkcs7_verify_err;
	}
	if (!c->f->signatures_trusted)
		return -ENOKEY;
	if (!c->f->keys || kp_keyring_empty(c->f->keys))
		return 0; /* no key source: the documented assumption */
	switch (kp_keyring_verify(c->f->keys, s, &key)) {
	case KP_TRUST_VERIFIED:
		break;
	case KP_TRUST_NO_KEY:
		return -ENOKEY;
	case KP_TRUST_BAD_SIGNATURE:
		return -EKEYREJECTED;
	case KP_TRUST_ID_ONLY:
		note_signer(c, ld, "a key listed without its certificate matches", key);
		break;
	case KP_TRUST_UNCHECKED:
		note_signer(c, ld, "this libcrypto cannot check the algorithm; key", key);
		break;
	}
	/* mod_is_hash_blacklisted(): "Module hash %*phN is blacklisted" */
	if (debian_hash_blacklist(c) && kp_keyring_hash_blacklisted(c->f->keys, s)) {
		char h[65];

		for (size_t i = 0; i < 32; i++)
			snprintf(h + 2 * i, 3, "%02x", s->file_sha256[i]);
		kp_msg(c, ld, "Module hash %s is blacklisted", h);
		return -EKEYREJECTED;
	}
	return 0;
}

/* mod_verify_sig()/mod_check_sig(), kernel/module/signing.c and module_signature.c (v5.x … v6.12).
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
	return verify_pkcs7(c, ld);
}

/* A fatal verification error (module_sig_check(): "default: return err"), in words. */
static void fatal_finding(struct kp_sim_ctx *c, struct kp_loading *ld, int err)
{
	const struct kp_signature *s = &ld->m->sig;

	if (err == -EKEYREJECTED && c->f->keys && debian_hash_blacklist(c) &&
	    kp_keyring_hash_blacklisted(c->f->keys, s))
		kp_finding(ld->v, "bad-signature", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
			   "the module's SHA-256 is in the kernel's blacklist keyring: rejected "
			   "with EKEYREJECTED even when signatures are not enforced");
	else if (err == -EKEYREJECTED && !s->pkcs7_verify_err)
		kp_finding(ld->v, "bad-signature", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
			   "the signature does not verify against the trusted key that signed it "
			   "(%s): rejected with EKEYREJECTED even when signatures are not enforced",
			   s->signer ? s->signer : "key id signer");
	else
		kp_finding(ld->v, "bad-signature", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
			   "the appended signature is malformed (%s%s%s): rejected even when "
			   "signatures are not enforced",
			   kp_errno_name(err), s->pkcs7_note ? ": " : "",
			   s->pkcs7_note ? s->pkcs7_note : "");
}

/* module_sig_check(), kernel/module/signing.c (v5.19+; kernel/module_signing.c v4.x-5.18). */
int kp_rule_module_sig_check(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	const char *reason;
	int err = -ENODATA;

	ld->sig_ok = false;
	if (!c->f->module_sig)
		return 0;
	/*
	 * mangled_module (all versions): a load that ignores modversions or vermagic
	 * (modprobe --force) is not verified at all: the signature counts as absent.
	 */
	if (ld->m->sig.present && c->f->init_flags)
		kp_finding(ld->v, "forced-unverified", KP_SEV_WARNING, KP_CONS_TAINT, NULL,
			   "loaded with --force: module_sig_check() treats the forced module as "
			   "mangled and does not verify its signature (unsigned: E%s)",
			   c->f->sig_enforce ? ", EKEYREJECTED as signatures are enforced" : "");
	else if (ld->m->sig.present)
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
		fatal_finding(c, ld, err);
		return err;
	}
	if (c->f->sig_enforce) {
		kp_msg(c, ld, "Loading of %s is rejected", reason);
		if (err == -ENOKEY)
			kp_finding(
				ld->v, "signature-untrusted-key", KP_SEV_ERROR, KP_CONS_LOAD_FAIL,
				NULL,
				"signed by a key the kernel does not trust (%s) and signatures are "
				"enforced: EKEYREJECTED",
				ld->m->sig.signer ? ld->m->sig.signer : "key id signer");
		else
			kp_finding(ld->v, "signature-required", KP_SEV_ERROR, KP_CONS_LOAD_FAIL,
				   NULL, "the kernel enforces module signatures: %s", reason);
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
	if (err == -ENOKEY)
		kp_finding(ld->v, "signature-untrusted-key", KP_SEV_WARNING, KP_CONS_TAINT, NULL,
			   "signed by a key the kernel does not trust (%s): loads as unsigned, "
			   "tainting the kernel (E)",
			   ld->m->sig.signer ? ld->m->sig.signer : "key id signer");
	return 0;
}
