// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * signing.c: module_sig_check() (kernel/module/signing.c v5.19+, kernel/module_signing.c
 * before): -ENODATA/-ENOPKG/-ENOKEY are fatal only when enforced (or under lockdown), every
 * other error always; mod_verify_sig()/mod_check_sig(); the PKCS#7 parser's hash and key
 * algorithms per version (md4/md5 dropped and sha3-* added in v6.7, ecdsa v5.13, sm2 gone in
 * v6.7, ML-DSA v7.0); signed attributes: refused by pkcs7_verify() except for an ML-DSA signer
 * with CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA (7.0+), then only a sha512 digest
 * (software_key_determine_akcipher()). Checked against the 7.2.13 tree
 * (crypto/asymmetric_keys/pkcs7_parser.c, pkcs7_verify.c, pkcs7_trust.c, public_key.c).
 */
#include <errno.h>
#include <string.h>

#include "builder.h"

enum mode { PLAIN, ENFORCE, LOCKDOWN };

static struct kp_module *one(struct tb_world *w, const char *release, enum mode mode)
{
	tb_init(w, release);
	w->facts.module_sig = true;
	w->facts.signatures_trusted = true;
	w->facts.sig_enforce = mode == ENFORCE;
	w->facts.lockdown = mode == LOCKDOWN;
	return tb_module(w, "m");
}

#define NOTICE                                                                    \
	"m: module verification failed: signature and/or required key missing - " \
	"tainting kernel"

static void unsigned_module(struct tap *t)
{
	struct tb_world w;

	one(&w, "6.12.37", PLAIN);
	w.facts.module_sig = false;
	tb_expect_taints(t, &w, 0, "", "", "", "no CONFIG_MODULE_SIG: nothing");
	one(&w, "6.12.37", PLAIN);
	tb_expect_taints(t, &w, 0, NOTICE, "", "E", "unsigned, not enforced");
	one(&w, "6.12.37", ENFORCE);
	tb_expect_taints(t, &w, -EKEYREJECTED, "Loading of unsigned module is rejected",
			 "signature-required", "", "unsigned, enforced");
	one(&w, "6.12.37", LOCKDOWN);
	tb_expect_taints(t, &w, -EPERM,
			 "Lockdown: insmod: unsigned module loading is restricted; see man "
			 "kernel_lockdown.7",
			 "lockdown", "", "unsigned, lockdown");
}

static void broken_signatures(struct tap *t)
{
	struct tb_world w;
	struct kp_module *m;

	m = one(&w, "6.12.37", PLAIN);
	tb_signed(m, "sha256", "rsa");
	m->sig.malformed = true;
	tb_expect_taints(t, &w, -EBADMSG, "", "bad-signature", "",
			 "sig_len past the file: EBADMSG");
	m = one(&w, "6.12.37", PLAIN);
	tb_signed(m, "sha256", "rsa");
	m->sig.params_zero = false;
	tb_expect_taints(t, &w, -EBADMSG,
			 "module: PKCS#7 signature info has unexpected non-zero params",
			 "bad-signature", "", "non-zero params: EBADMSG");
	m = one(&w, "6.12.37", PLAIN);
	tb_signed(m, "sha256", "rsa");
	m->sig.pkcs7_der = false;
	tb_expect_taints(t, &w, -EBADMSG, "", "bad-signature", "", "no DER message: EBADMSG");
	m = one(&w, "6.12.37", PLAIN);
	tb_signed(m, "sha256", "rsa");
	m->sig.pkcs7_err = -EBADMSG;
	tb_expect_taints(t, &w, -EBADMSG, "", "bad-signature", "",
			 "pkcs7_parse_message() fails: EBADMSG");
	m = one(&w, "6.12.37", PLAIN);
	tb_signed(m, "sha256", "rsa");
	m->sig.pkcs7_verify_err = -EKEYREJECTED;
	m->sig.pkcs7_note = "PKCS7: Message digest mismatch";
	tb_expect_taints(t, &w, -EKEYREJECTED, "PKCS7: Message digest mismatch", "bad-signature",
			 "", "digest mismatch: EKEYREJECTED even when not enforced");
	/* PGP (id_type 1): -ENOPKG, non-fatal unless enforced. */
	m = one(&w, "6.12.37", PLAIN);
	tb_signed(m, "sha256", "rsa");
	m->sig.id_type = 1;
	tb_expect_taints(t, &w, 0, "module: not signed with expected PKCS#7 message\n" NOTICE, "",
			 "E", "PGP signature, not enforced: loads unsigned");
	m = one(&w, "6.12.37", ENFORCE);
	tb_signed(m, "sha256", "rsa");
	m->sig.id_type = 1;
	tb_expect_taints(t, &w, -EKEYREJECTED,
			 "module: not signed with expected PKCS#7 message\n"
			 "Loading of module with unsupported crypto is rejected",
			 "signature-required", "", "PGP signature, enforced");
}

static void keys(struct tap *t)
{
	struct tb_world w;
	struct kp_module *m;

	m = one(&w, "6.12.37", ENFORCE);
	tb_signed(m, "sha256", "rsa");
	tb_expect_taints(t, &w, 0, "", "", "", "signed, key trusted (no key source): verifies");
	m = one(&w, "6.12.37", PLAIN);
	tb_signed(m, "sha256", "rsa");
	w.facts.signatures_trusted = false;
	tb_expect_taints(t, &w, 0, NOTICE, "signature-untrusted-key", "E",
			 "unknown key, not enforced: ENOKEY, loads unsigned");
	m = one(&w, "6.12.37", ENFORCE);
	tb_signed(m, "sha256", "rsa");
	w.facts.signatures_trusted = false;
	tb_expect_taints(t, &w, -EKEYREJECTED, "Loading of module with unavailable key is rejected",
			 "signature-untrusted-key", "", "unknown key, enforced");
}

/* A signature with @hash/@pkey on @release: verified (no E) or -ENOPKG (loads with E). */
static void algo(struct tap *t, const char *release, const char *hash, const char *pkey, bool known)
{
	struct tb_world w;
	struct kp_module *m = one(&w, release, PLAIN);
	char what[128];

	tb_signed(m, hash, pkey);
	snprintf(what, sizeof(what), "%s %s+%s: %s", release, hash, pkey,
		 known ? "verifies" : "ENOPKG, loads unsigned");
	tb_expect_taints(t, &w, 0, known ? "" : NOTICE, "", known ? "" : "E", what);
	m = one(&w, release, ENFORCE);
	tb_signed(m, hash, pkey);
	snprintf(what, sizeof(what), "%s %s+%s enforced", release, hash, pkey);
	tb_expect_taints(t, &w, known ? 0 : -EKEYREJECTED,
			 known ? "" : "Loading of module with unsupported crypto is rejected",
			 known ? "" : "signature-required", "", what);
}

/* pkcs7_verify()'s pr_warn() and pr_warn_once(), pr_fmt "PKCS7: " */
#define HAS_AUTHATTRS "PKCS7: Invalid module sig (has authattrs)"
#define WAIVED	      "PKCS7: Waived invalid module sig (has authattrs)"

static struct kp_module *aa(struct tb_world *w, const char *release, enum mode mode, bool waive,
			    const char *hash, const char *pkey)
{
	struct kp_module *m = one(w, release, mode);

	w->facts.mldsa_waive_authattrs = waive;
	tb_signed_authattrs(m, hash, pkey);
	return m;
}

static void authattrs(struct tap *t)
{
	struct tb_world w;
	const struct kp_finding *f;
	struct kp_module *m;

	aa(&w, "6.12.37", PLAIN, false, "sha256", "rsa");
	tb_expect_taints(t, &w, -EKEYREJECTED, HAS_AUTHATTRS, "bad-signature", "",
			 "6.12 rsa with authattrs: EKEYREJECTED even when not enforced");
	aa(&w, "7.2.13", PLAIN, true, "sha256", "rsa");
	tb_expect_taints(t, &w, -EKEYREJECTED, HAS_AUTHATTRS, "bad-signature", "",
			 "7.2 rsa with authattrs, waiver on: not an ML-DSA signer, EKEYREJECTED");
	aa(&w, "7.2.13", PLAIN, false, "sha512", "mldsa65");
	tb_run(&w);
	tap_is_int(t, tb_v(&w, "m")->err, -EKEYREJECTED, "7.2 mldsa65 authattrs, no waiver: errno");
	tb_is_text(t, tb_dmesg(&w, "m"), HAS_AUTHATTRS, "7.2 mldsa65 authattrs, no waiver: dmesg");
	f = tb_finding(&w, "m", "bad-signature");
	tap_ok(t,
	       f && strstr(f->message, "CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA") &&
		       strstr(f->message, "mldsa65"),
	       "7.2 mldsa65 authattrs, no waiver: the finding names the config option");
	tb_free(&w);
	aa(&w, "7.2.13", PLAIN, true, "sha512", "mldsa65");
	tb_expect_taints(t, &w, 0, WAIVED, "", "", "7.2 mldsa65 sha512 authattrs, waived: loads");
	aa(&w, "7.0.0", ENFORCE, true, "sha512", "mldsa87");
	tb_expect_taints(t, &w, 0, WAIVED, "", "",
			 "7.0 mldsa87 sha512 authattrs, waived, enforced");
	aa(&w, "7.2.13", PLAIN, true, "sha256", "mldsa65");
	tb_run(&w);
	tap_is_int(t, tb_v(&w, "m")->err, -EKEYREJECTED,
		   "7.2 mldsa65 sha256 authattrs, waived: akcipher refuses sha256: errno");
	tb_is_text(t, tb_dmesg(&w, "m"), WAIVED, "7.2 mldsa65 sha256 authattrs: dmesg");
	f = tb_finding(&w, "m", "bad-signature");
	tap_ok(t,
	       f && strstr(f->message, "software_key_determine_akcipher()") &&
		       strstr(f->message, "sha256"),
	       "7.2 mldsa65 sha256 authattrs: the finding names the digest rule");
	tb_free(&w);
	/* the digest rule is met only once a trusted key verifies: an unknown key is ENOKEY */
	aa(&w, "7.2.13", PLAIN, true, "sha256", "mldsa65");
	w.facts.signatures_trusted = false;
	tb_expect_taints(t, &w, 0, WAIVED "\n" NOTICE, "signature-untrusted-key", "E",
			 "7.2 mldsa65 sha256 authattrs, unknown key: ENOKEY, loads unsigned");
	/* before 7.0 the parser does not know ML-DSA: -ENOPKG before pkcs7_verify() */
	aa(&w, "6.12.37", PLAIN, true, "sha512", "mldsa65");
	tb_expect_taints(t, &w, 0, NOTICE, "", "E",
			 "6.12 mldsa65 authattrs: ENOPKG, loads unsigned");
	/* no CONFIG_CRYPTO_MLDSA: the ML-DSA key never loads, ENOKEY (after pkcs7_verify()) */
	m = one(&w, "7.2.13", PLAIN);
	tb_signed(m, "sha512", "mldsa65");
	w.facts.no_crypto_mldsa = true;
	tb_run(&w);
	tap_is_int(t, tb_v(&w, "m")->err, 0, "7.2 mldsa65, no CRYPTO_MLDSA: errno");
	tap_is_str(t, tb_taints(&w, "m"), "E", "7.2 mldsa65, no CRYPTO_MLDSA: loads unsigned (E)");
	f = tb_finding(&w, "m", "signature-untrusted-key");
	tap_ok(t, f && strstr(f->message, "lacks CONFIG_CRYPTO_MLDSA"),
	       "7.2 mldsa65, no CRYPTO_MLDSA: the finding says why the key is unknown");
	tb_free(&w);
	m = one(&w, "7.2.13", ENFORCE);
	tb_signed(m, "sha512", "mldsa65");
	w.facts.no_crypto_mldsa = true;
	tb_expect_taints(t, &w, -EKEYREJECTED, "Loading of module with unavailable key is rejected",
			 "signature-untrusted-key", "", "7.2 mldsa65, no CRYPTO_MLDSA, enforced");
	aa(&w, "7.2.13", PLAIN, false, "sha512", "mldsa65");
	w.facts.no_crypto_mldsa = true;
	tb_expect_taints(t, &w, -EKEYREJECTED, HAS_AUTHATTRS, "bad-signature", "",
			 "7.2 mldsa65 authattrs, no CRYPTO_MLDSA: pkcs7_verify() refuses first");
	/* pr_warn_once(): the second waived module prints nothing */
	aa(&w, "7.2.13", PLAIN, true, "sha512", "mldsa65");
	tb_signed_authattrs(tb_module(&w, "n"), "sha512", "mldsa65");
	tb_run(&w);
	tb_is_text(t, tb_dmesg(&w, "m"), WAIVED, "waived twice: the first module's line");
	tb_is_text(t, tb_dmesg(&w, "n"), "",
		   "waived twice: pr_warn_once(), nothing for the second");
	tap_is_int(t, tb_v(&w, "n")->err, 0, "waived twice: the second loads too");
	tb_free(&w);
}

int main(void)
{
	struct tap t = { 0 };

	unsigned_module(&t);
	broken_signatures(&t);
	keys(&t);
	algo(&t, "6.1.129", "md5", "rsa", true);
	algo(&t, "6.12.37", "md5", "rsa", false);
	algo(&t, "6.1.129", "sha3-256", "rsa", false);
	algo(&t, "6.12.37", "sha3-256", "rsa", true);
	algo(&t, "5.10.223", "sha512", "ecdsa", false);
	algo(&t, "6.1.129", "sha512", "ecdsa", true);
	algo(&t, "6.1.129", "sm3", "sm2", true);
	algo(&t, "6.12.37", "sm3", "sm2", false);
	algo(&t, "6.12.37", "sha512", "mldsa65", false);
	algo(&t, "7.0.0", "sha512", "mldsa65", true);
	algo(&t, "7.2.13", "sha512", "mldsa44", true);
	algo(&t, "7.2.13", "sha512", "mldsa87", true);
	/* no signed attributes: the hash becomes "none", any digest OID the parser maps will do */
	algo(&t, "7.2.13", "sha256", "mldsa65", true);
	/* SHA-1 signing left Kconfig in 7.0; the parser and pkcs1(rsa,sha1) still take it */
	algo(&t, "7.2.13", "sha1", "rsa", true);
	authattrs(&t);
	algo(&t, "7.2.13", "sha256", "ecrdsa", true);
	algo(&t, "7.2.13", "whirlpool", "rsa", false);
	return tap_done(&t);
}
