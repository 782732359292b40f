// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * signing.c: module_sig_check() (kernel/module/signing.c v5.19+, kernel/module_signing.c
 * before): -ENODATA/-ENOPKG/-ENOKEY are fatal only when enforced (or under lockdown), every
 * other error always; mod_verify_sig()/mod_check_sig(); the PKCS#7 parser's hash and key
 * algorithms per version (md4/md5 dropped and sha3-* added in v6.7, ecdsa v5.13, sm2 gone in
 * v6.7, ML-DSA v7.0).
 */
#include <errno.h>

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
	algo(&t, "6.12.37", "sha512", "ml-dsa-65", false);
	algo(&t, "7.0.0", "sha512", "ml-dsa-65", true);
	algo(&t, "7.2.13", "sha256", "ecrdsa", true);
	algo(&t, "7.2.13", "whirlpool", "rsa", false);
	return tap_done(&t);
}
