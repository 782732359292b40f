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
 * D6.1 (gone in D6.12); ecrdsa; mldsa44/65/87 since v7.0 (profile row mldsa_signatures).
 */
static bool is_mldsa(const char *k)
{
	return !strncmp(k, "mldsa", 5);
}

/* The message's only objection is its signed attributes (lib/read/sig-verify.c). */
static bool has_authattrs(const struct kp_signature *s)
{
	return s->pkcs7_verify_err == -EKEYREJECTED && s->pkcs7_note &&
	       !strcmp(s->pkcs7_note, KP_SIG_NOTE_AUTHATTRS);
}

static bool parser_knows_pkey(const struct kp_profile *p, const char *k)
{
	if (!strcmp(k, "rsa") || !strncmp(k, "ecrdsa", 6))
		return true;
	if (!strcmp(k, "ecdsa"))
		return at_least(p, 5, 13);
	if (!strcmp(k, "sm2"))
		return !at_least(p, 6, 7);
	if (is_mldsa(k))
		return p->has[KP_F_MLDSA_SIGNATURES];
	return false;
}

/*
 * pkcs7_check_authattrs() + pkcs7_verify(), VERIFYING_MODULE_SIGNATURE (7.0-7.2): signed
 * attributes are waived ("Waived invalid module sig (has authattrs)", pr_warn_once()) only for
 * an ML-DSA signer with CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA=y.
 */
static bool authattrs_waived(const struct kp_sim_ctx *c, const struct kp_signature *s)
{
	return c->p->has[KP_F_MLDSA_SIGNATURES] && c->f->mldsa_waive_authattrs &&
	       has_authattrs(s) && s->pkey_algo && is_mldsa(s->pkey_algo);
}

/*
 * software_key_determine_akcipher(), crypto/asymmetric_keys/public_key.c (7.0-7.2), reached
 * through verify_signature() once a trusted key is found: an ML-DSA signature's hash is "none"
 * without signed attributes (pkcs7_check_authattrs()), else the digest algorithm, and only
 * "none" and "sha512" are accepted (-EINVAL, which pkcs7_validate_trust_one() turns into
 * -EKEYREJECTED "[verify %d]"). True when @s is refused that way.
 */
static bool mldsa_digest_refused(const struct kp_sim_ctx *c, const struct kp_signature *s)
{
	return c->p->has[KP_F_MLDSA_SIGNATURES] && s->pkey_algo && is_mldsa(s->pkey_algo) &&
	       has_authattrs(s) && s->hash_algo && strcmp(s->hash_algo, "sha512");
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

/* True when the key that signs @s can never be one the kernel image holds (MOK, DKMS). */
static bool never_built_in(const struct kp_keyring *kr, const struct kp_signature *s)
{
	const struct kp_trusted_key *k = kp_keyring_find_signer(kr, s);

	return k && k->origin >= KP_KEY_DB;
}

/*
 * verify_pkcs7_signature() (certs/system_keyring.c, D6.1/D6.12) for a module: parse,
 * pkcs7_verify(), then pkcs7_validate_trust() against the secondary keyring (builtin,
 * secondary, .machine) and, on -ENOKEY, the platform keyring where Debian's patch retries it
 * (mod_verify_sig(), kernel/module/signing.c; the keyrings: kp_keyring_apply_model()).
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
	if (authattrs_waived(c, s)) {
		if (!kp_once_done(c, KP_ONCE_AUTHATTRS))
			kp_msg(c, ld, "PKCS7: Waived invalid module sig (has authattrs)");
		kp_once_mark(c, KP_ONCE_AUTHATTRS);
	} else if (s->pkcs7_verify_err) {
		/* pkcs7_verify()'s pr_warn(), pr_fmt "PKCS7: " */
		if (s->pkcs7_verify_err == -EKEYREJECTED)
			kp_msg(c, ld, "%s%s", strncmp(s->pkcs7_note, "PKCS7: ", 7) ? "PKCS7: " : "",
			       s->pkcs7_note);
		return s->pkcs7_verify_err;
	}
	/*
	 * x509_check_for_self_signed() (7.0-7.2): without CONFIG_CRYPTO_MLDSA, crypto_alloc_sig()
	 * fails with -ENOENT, so a self-signed ML-DSA certificate (a MOK or DKMS key) is never
	 * loaded and the signer is unknown. (A CA-issued one would load and then fail
	 * verify_signature(): EKEYREJECTED; not modelled.)
	 */
	if (s->pkey_algo && is_mldsa(s->pkey_algo) && c->f->no_crypto_mldsa)
		return -ENOKEY;
	if (!c->f->signatures_trusted)
		return -ENOKEY;
	if (!c->f->keys || kp_keyring_empty(c->f->keys))
		/* no key source: the documented assumption (a trusted key, so it is verified) */
		return mldsa_digest_refused(c, s) ? -EKEYREJECTED : 0;
	switch (kp_keyring_verify(c->f->keys, s, &key)) {
	case KP_TRUST_VERIFIED:
		break;
	case KP_TRUST_NO_KEY:
		/* the kernel's own keys unknown: only a MOK/DKMS signer is known untrusted */
		if (!kp_keyring_has_kernel_keys(c->f->keys) && !never_built_in(c->f->keys, s))
			return mldsa_digest_refused(c, s) ? -EKEYREJECTED : 0;
		return -ENOKEY;
	case KP_TRUST_BAD_SIGNATURE:
	case KP_TRUST_REVOKED:
		return -EKEYREJECTED;
	case KP_TRUST_ID_ONLY:
		if (mldsa_digest_refused(c, s))
			return -EKEYREJECTED;
		note_signer(c, ld, "a key listed without its certificate matches", key);
		break;
	case KP_TRUST_ERROR:
		/* OpenSSL failed here (the reading threads' check reports it as the module's
		 * error before the simulation: this is a second failure): no verdict */
		note_signer(c, ld,
			    "OpenSSL failed to verify it (out of memory or an internal "
			    "error); key",
			    key);
		break;
	case KP_TRUST_UNCHECKED:
		if (mldsa_digest_refused(c, s))
			return -EKEYREJECTED;
		note_signer(c, ld,
			    is_mldsa(s->pkey_algo)
				    ? "kopolicy does not verify ML-DSA signatures "
				      "(structural rules applied); key"
				    : "this libcrypto cannot check the algorithm; key",
			    key);
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

/* mod_verify_sig()/mod_check_sig(), kernel/module/signing.c, module_signature.c (v5.x … v6.12) */
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

/* The revocation list that holds the signer, in words (@buf): an image's or the firmware's. */
static const char *revoked_by(const struct kp_keyring *kr, const struct kp_signature *s, char *buf,
			      size_t len)
{
	bool image = false;
	const char *src = kp_keyring_revoked_by(kr, s, &image);

	if (!image)
		return "dbx/MokListXRT certificate";
	snprintf(buf, len, "a certificate of the revocation_certificate_list of %s",
		 src ? src : "the kernel image");
	return buf;
}

/* A fatal verification error (module_sig_check(): "default: return err"), in words. */
static void fatal_finding(struct kp_sim_ctx *c, struct kp_loading *ld, int err)
{
	const struct kp_signature *s = &ld->m->sig;
	char by[4200];
	/* pkcs7_verify() let the message through: the trust check decided */
	const bool verified = !s->pkcs7_verify_err || authattrs_waived(c, s);

	if (err == -EKEYREJECTED && mldsa_digest_refused(c, s) && authattrs_waived(c, s))
		kp_finding(ld->v, "bad-signature", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
			   "the ML-DSA signature (%s) has signed attributes with a %s digest: "
			   "software_key_determine_akcipher() accepts only sha512 there (sign with "
			   "-a sha512, or without signed attributes: OpenSSL 4's sign-file): "
			   "rejected with EKEYREJECTED even when signatures are not enforced",
			   s->pkey_algo, s->hash_algo);
	else if (err == -EKEYREJECTED && has_authattrs(s) && !authattrs_waived(c, s) &&
		 s->pkey_algo && is_mldsa(s->pkey_algo) && c->p->has[KP_F_MLDSA_SIGNATURES])
		kp_finding(ld->v, "bad-signature", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
			   "the ML-DSA signature (%s) has signed attributes (sign-file built with "
			   "OpenSSL < 4 always adds them) and the kernel lacks "
			   "CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA: rejected with "
			   "EKEYREJECTED even when signatures are not enforced",
			   s->pkey_algo);
	else if (err == -EKEYREJECTED && c->f->keys && debian_hash_blacklist(c) &&
		 kp_keyring_hash_blacklisted(c->f->keys, s))
		kp_finding(ld->v, "bad-signature", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
			   "the module's SHA-256 is in the kernel's blacklist keyring: rejected "
			   "with EKEYREJECTED even when signatures are not enforced");
	else if (err == -EKEYREJECTED && verified && c->f->keys &&
		 kp_keyring_revoked(c->f->keys, s))
		kp_finding(ld->v, "bad-signature", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
			   "the signer (%s) is on the kernel's revocation list (%s): rejected with "
			   "EKEYREJECTED even when signatures are not enforced",
			   s->signer ? s->signer : "key id signer",
			   revoked_by(c->f->keys, s, by, sizeof(by)));
	else if (err == -EKEYREJECTED && verified)
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

/* Why signatures are enforced, when Secure Boot is the reason. */
static const char *enforced_why(const struct kp_sim_ctx *c)
{
	return c->f->sb_sig_enforce ? " (Secure Boot: IMA_ARCH_POLICY)" : "";
}

/*
 * The signer of a module the kernel has no key for, in words: the key that signed it and
 * where kopolicy saw it ("the DKMS key /var/lib/dkms/mok.pub ('...'), enrolled in MOK"),
 * what would make it trusted (@fix) and, for a pending MOK enrolment, the next boot's answer.
 */
static void describe_signer(const struct kp_sim_ctx *c, const struct kp_loading *ld, char *who,
			    size_t wlen, char *fix, size_t flen, const char **after)
{
	const struct kp_signature *s = &ld->m->sig;
	const struct kp_keyring *kr = c->f->keys;
	const struct kp_trusted_key *k = kr ? kp_keyring_find_signer(kr, s) : NULL;
	const struct kp_trusted_key *named = k ? kp_keyring_name_of(kr, k) : NULL;
	const struct kp_trusted_key *ak;
	char name[600];

	fix[0] = '\0';
	*after = "";
	if (s->pkey_algo && is_mldsa(s->pkey_algo) && c->f->no_crypto_mldsa) {
		snprintf(who, wlen,
			 "an ML-DSA key (%s, %s), which this kernel cannot load: it lacks "
			 "CONFIG_CRYPTO_MLDSA",
			 s->pkey_algo, s->signer ? s->signer : "key id signer");
		snprintf(fix, flen, " (sign with an RSA or ECDSA key)");
		return;
	}
	if (named)
		snprintf(name, sizeof(name), "%s %s ('%s')", named->name, named->source,
			 named->subject);
	else
		snprintf(name, sizeof(name), "'%s'",
			 k	     ? k->subject
			 : s->signer ? s->signer
				     : "key id signer");
	if (!k) {
		snprintf(who, wlen, "a key the kernel does not trust (%s)",
			 s->signer ? s->signer : "key id signer");
		return;
	}
	switch (k->origin) {
	case KP_KEY_MOK_PENDING:
		snprintf(who, wlen, "%s, whose MOK enrolment is pending (MokNew)", name);
		if (kp_keyring_verify_after_reboot(kr, s, &ak) == KP_TRUST_VERIFIED) {
			*after = "; after reboot with the pending MOK enrolment: yes";
			snprintf(fix, flen,
				 " (reboot and confirm the enrolment in MokManager with the "
				 "password given to mokutil --import)");
		} else {
			snprintf(fix, flen,
				 " (once enrolled, %s: this kernel does not use MOK "
				 "keys for modules)",
				 k->keyring_after);
		}
		return;
	case KP_KEY_MOK:
		snprintf(who, wlen, "%s, enrolled in MOK but not trusted for modules (%s)", name,
			 k->keyring);
		if (kr->have_model && !kr->model.secure_boot)
			snprintf(fix, flen, " (MOK keys are loaded only under Secure Boot)");
		else if (kr->have_model && kr->model.machine_keyring && !kr->model.mok_trusted)
			snprintf(fix, flen,
				 " (MokListTrustedRT is not set: mokutil --trust-mok, "
				 "then reboot and confirm in MokManager)");
		return;
	case KP_KEY_DB:
		snprintf(who, wlen, "%s, a UEFI db key this kernel does not use for modules (%s)",
			 name, k->keyring);
		return;
	case KP_KEY_NAMED:
		snprintf(who, wlen, "%s, which is not enrolled", name);
		snprintf(fix, flen,
			 " (enroll it: mokutil --import %s, then reboot and confirm in "
			 "MokManager)",
			 named->source);
		return;
	default:
		snprintf(who, wlen, "%s (%s, %s)", name, kp_key_origin_name(k->origin), k->keyring);
		return;
	}
}

/* module_sig_check(), kernel/module/signing.c (v5.19+; kernel/module_signing.c v4.x-5.18). */
int kp_rule_module_sig_check(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	const char *reason, *after = "";
	char who[1024], fix[1024];
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
	if (err == -ENOKEY)
		describe_signer(c, ld, who, sizeof(who), fix, sizeof(fix), &after);
	if (c->f->sig_enforce) {
		kp_msg(c, ld, "Loading of %s is rejected", reason);
		if (err == -ENOKEY)
			kp_finding(ld->v, "signature-untrusted-key", KP_SEV_ERROR,
				   KP_CONS_LOAD_FAIL, NULL,
				   "signed by %s and signatures are enforced%s: loads now: no "
				   "(EKEYREJECTED)%s%s",
				   who, enforced_why(c), after, fix);
		else
			kp_finding(ld->v, "signature-required", KP_SEV_ERROR, KP_CONS_LOAD_FAIL,
				   NULL, "the kernel enforces module signatures%s: %s",
				   enforced_why(c), reason);
		return -EKEYREJECTED;
	}
	if (c->f->lockdown) {
		kp_msg(c, ld,
		       "Lockdown: insmod: unsigned module loading is restricted; see man "
		       "kernel_lockdown.7");
		if (err == -ENOKEY)
			kp_finding(ld->v, "lockdown", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
				   "kernel lockdown%s refuses %s (signed by %s): loads now: no "
				   "(EPERM)%s%s",
				   c->f->sb_lockdown ? " (Secure Boot)" : "", reason, who, after,
				   fix);
		else
			kp_finding(ld->v, "lockdown", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
				   "kernel lockdown%s refuses %s",
				   c->f->sb_lockdown ? " (Secure Boot)" : "", reason);
		return -EPERM;
	}
	if (err == -ENOKEY)
		kp_finding(ld->v, "signature-untrusted-key", KP_SEV_WARNING, KP_CONS_TAINT, NULL,
			   "signed by %s: loads as unsigned, tainting the kernel (E)%s%s", who,
			   after, fix);
	return 0;
}
