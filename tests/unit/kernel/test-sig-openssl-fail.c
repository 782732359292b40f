// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * OpenSSL failing is never a verdict (issue 28): with OpenSSL's allocator failing at its
 * k-th allocation from a point on (CRYPTO_set_mem_functions(), for every k until one run
 * needs no more), reading a signed module either gives the facts it gives without failures
 * (digest, file SHA-256, PKCS#7 verdict) or fails with an error naming OpenSSL; verifying
 * its signature either verifies or says KP_TRUST_ERROR (kp_keyring_preverify(): -1 with a
 * message), never "bad signature", and a failure leaves no verdict in the memo. Over the
 * signed fixtures of tests/data/sig/6.12 (SHA-256, RSA) and their test key.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "cache/sig-memo.h"
#include "kernel/sig-keys.h"
#include "read/module.h"
#include "tap.h"

#include "ossl-fail-alloc.h"

static char sd[4096];

static struct kp_module *open_with(const char *name, unsigned what, struct kp_err *err)
{
	struct kp_open_opts o = { .sig_digest = what };
	struct kp_module *m = NULL;
	char p[4200];

	snprintf(p, sizeof(p), "%s/6.12/%s.ko", sd, name);
	if (kp_module_open(p, &o, &m, err) < 0)
		return NULL;
	return m;
}

static struct kp_module *open_mod(const char *name, struct kp_err *err)
{
	return open_with(name, KP_SIG_DIGEST | KP_SIG_FILE_SHA256, err);
}

/* sha256sum of the fixture @name, as 32 bytes; 0 or -1 */
static int sha256sum(const char *name, unsigned char *out)
{
	char cmd[4400], hex[65] = "";
	FILE *p;

	snprintf(cmd, sizeof(cmd), "sha256sum '%s/6.12/%s.ko'", sd, name);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	if (fscanf(p, "%64s", hex) != 1)
		hex[0] = '\0';
	pclose(p);
	if (strlen(hex) != 64)
		return -1;
	for (int i = 0; i < 32; i++)
		sscanf(hex + 2 * i, "%2hhx", &out[i]);
	return 0;
}

static bool same_facts(const struct kp_signature *a, const struct kp_signature *b)
{
	return a->digest_len == b->digest_len && !memcmp(a->digest, b->digest, a->digest_len) &&
	       a->have_file_sha256 == b->have_file_sha256 &&
	       !memcmp(a->file_sha256, b->file_sha256, sizeof(a->file_sha256)) &&
	       a->pkcs7_err == b->pkcs7_err && a->pkcs7_verify_err == b->pkcs7_verify_err;
}

int main(void)
{
	struct tap t = { 0 };
	const char *top = getenv("srcdir");
	struct kp_module *ref, *m;
	struct kp_keyring kr;
	struct kp_err err = { 0 };
	char cert[4200];
	long k;
	int wrong = 0, errors = 0, named = 0, bad = 0, poisoned = 0, failed = 0;

	/* before OpenSSL allocates anything */
	if (!CRYPTO_set_mem_functions(t_malloc, t_realloc, t_free)) {
		printf("1..0 # SKIP OpenSSL's allocator cannot be replaced\n");
		return 0;
	}
	snprintf(sd, sizeof(sd), "%s/tests/data/sig", top ? top : ".");
	snprintf(cert, sizeof(cert), "%s/test-cert.pem", sd);
	ref = open_mod("kp_sig_sha256", &err);
	tap_ok(&t, ref && ref->sig.digest_len == 32 && ref->sig.have_file_sha256,
	       "the reference read: a SHA-256 digest and the file's SHA-256");
	if (!ref)
		return tap_done(&t);
	/* the signed part's and the file's SHA-256 from one pass: as from two */
	{
		struct kp_module *d = open_with("kp_sig_sha256", KP_SIG_DIGEST, &err);
		struct kp_module *f = open_with("kp_sig_sha256", KP_SIG_FILE_SHA256, &err);
		unsigned char sum[32];

		tap_ok(&t,
		       d && f && d->sig.digest_len == 32 && !d->sig.have_file_sha256 &&
			       !memcmp(d->sig.digest, ref->sig.digest, 32) &&
			       f->sig.have_file_sha256 && !f->sig.digest_len &&
			       !memcmp(f->sig.file_sha256, ref->sig.file_sha256, 32),
		       "one pass: the same digests as hashing the signed part and the file apart");
		tap_ok(&t,
		       sha256sum("kp_sig_sha256", sum) == 0 &&
			       !memcmp(sum, ref->sig.file_sha256, 32),
		       "one pass: the file's SHA-256 is sha256sum's");
		kp_module_free(d);
		kp_module_free(f);
	}

	/* OpenSSL's one-time set-up (providers, method stores) done before anything fails */
	kp_keyring_init(&kr);
	tap_ok(&t, kp_keyring_add_cert_file(&kr, cert, &err) == 0 && kr.nkeys == 1,
	       "a keyring of the test certificate");
	{
		const struct kp_trusted_key *key;

		tap_ok(&t, kp_keyring_verify(&kr, &ref->sig, &key) == KP_TRUST_VERIFIED,
		       "the reference verification: verified");
	}

	/* reading: the same facts, or an error naming OpenSSL */
	for (k = 0; k < 100000; k++) {
		memset(&err, 0, sizeof(err));
		countdown = k;
		m = open_mod("kp_sig_sha256", &err);
		countdown = -1;
		if (m) {
			wrong += !same_facts(&m->sig, &ref->sig);
			if (!same_facts(&m->sig, &ref->sig))
				printf("# k=%ld: digest_len %u, file %d, pkcs7 %d/%d\n", k,
				       m->sig.digest_len, m->sig.have_file_sha256, m->sig.pkcs7_err,
				       m->sig.pkcs7_verify_err);
			kp_module_free(m);
			break; /* no failure reached it: every allocation point was tried */
		}
		errors++;
		named += strstr(err.msg, "OpenSSL") || strstr(err.msg, "out of memory");
	}
	tap_ok(&t, k > 0 && k < 100000, "reading: %ld allocation points failed in turn", k);
	tap_ok(&t, !wrong, "reading: never other facts than without failures");
	tap_ok(&t, named == errors, "reading: each failure an error naming OpenSSL or memory (%d)",
	       errors);

	/* verifying: verified, or no verdict; nothing remembered from a failure */
	for (k = 0; k < 100000; k++) {
		const struct kp_trusted_key *key;
		struct kp_sig_memo *memo = kp_sig_memo_new(-1);
		enum kp_sig_trust tr;
		unsigned char id[32];
		int pre;

		kr.memo = memo;
		memset(&err, 0, sizeof(err));
		countdown = k;
		pre = kp_keyring_preverify(&kr, &ref->sig, &err);
		countdown = -1;
		if (pre == 0) {
			tr = kp_keyring_verify(&kr, &ref->sig, &key);
			if (tr != KP_TRUST_VERIFIED)
				printf("# k=%ld: %s\n", k, kp_sig_trust_name(tr));
			wrong += tr != KP_TRUST_VERIFIED;
			kp_sig_memo_free(memo);
			break;
		}
		failed++;
		bad += !strstr(err.msg, "OpenSSL failed");
		/* the failure left no verdict: verified now that OpenSSL works */
		poisoned += kp_sig_verdict_id(&kr.keys[0], &ref->sig, id) &&
			    kp_sig_memo_lookup(memo, id) != -1;
		tr = kp_keyring_verify(&kr, &ref->sig, &key);
		if (tr != KP_TRUST_VERIFIED)
			printf("# k=%ld: after the failure: %s\n", k, kp_sig_trust_name(tr));
		wrong += tr != KP_TRUST_VERIFIED;
		countdown = k;
		tr = kp_keyring_verify(&kr, &ref->sig, &key);
		countdown = -1;
		/* the verdict is in the memo now: no allocation needed, or an error */
		if (tr != KP_TRUST_VERIFIED && tr != KP_TRUST_ERROR)
			printf("# k=%ld: failing again: %s\n", k, kp_sig_trust_name(tr));
		wrong += tr != KP_TRUST_VERIFIED && tr != KP_TRUST_ERROR;
		kp_sig_memo_free(memo);
	}
	kr.memo = NULL;
	tap_ok(&t, failed > 0 && k < 100000, "verifying: %d allocation points failed in turn",
	       failed);
	tap_ok(&t, !bad, "verifying: each failure -1 with \"OpenSSL failed\"");
	tap_ok(&t, !poisoned, "verifying: a failure remembers no verdict");
	tap_ok(&t, !wrong, "verifying: never \"bad signature\", verified once OpenSSL works");

	/* without the memo: KP_TRUST_ERROR itself */
	{
		const struct kp_trusted_key *key;
		enum kp_sig_trust tr;

		countdown = 0;
		tr = kp_keyring_verify(&kr, &ref->sig, &key);
		countdown = -1;
		tap_ok(&t, tr == KP_TRUST_ERROR && !strcmp(kp_sig_trust_name(tr), "error"),
		       "no allocation possible: KP_TRUST_ERROR (\"%s\")", kp_sig_trust_name(tr));
	}
	kp_keyring_release(&kr);
	kp_module_free(ref);
	return tap_done(&t);
}
