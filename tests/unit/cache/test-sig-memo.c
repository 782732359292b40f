// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The signature verdicts kept beside the facts (cache/sig-memo.h) as kernel/sig-keys.c uses
 * them, over the signed fixtures of tests/data/sig/6.12 and their test key: a verdict made
 * once is found by the next run (no public-key operation); a key set whose key changed (the
 * same issuer and serial, another public key) verifies again and fails; a dbx entry for the
 * key's certificate wins over a remembered verdict; forged or damaged files, and a verdict of
 * another module, are never taken for a bad signature.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "cache/sig-memo.h"
#include "cache/trusted-dir.h"
#include "kernel/sig-keys.h"
#include "read/module.h"
#include "tap.h"

static char dir[64], sd[4096];

static struct kp_module *open_mod(const char *name)
{
	struct kp_open_opts o = { .sig_digest = KP_SIG_DIGEST | KP_SIG_FILE_SHA256 };
	struct kp_module *m = NULL;
	struct kp_err err = { 0 };
	char p[4200];

	snprintf(p, sizeof(p), "%s/6.12/%s.ko", sd, name);
	if (kp_module_open(p, &o, &m, &err) < 0)
		fprintf(stderr, "# %s: %s\n", p, err.msg);
	return m;
}

/* A keyring of one certificate file, its verdicts through @memo. */
static void keys(struct kp_keyring *kr, const char *cert, struct kp_sig_memo *memo)
{
	struct kp_err err = { 0 };

	kp_keyring_init(kr);
	kr->memo = memo;
	if (kp_keyring_add_cert_file(kr, cert, &err) < 0)
		fprintf(stderr, "# %s: %s\n", cert, err.msg);
}

static enum kp_sig_trust verify(const char *cert, struct kp_sig_memo *memo,
				const struct kp_module *m)
{
	const struct kp_trusted_key *k;
	struct kp_keyring kr;
	enum kp_sig_trust t;

	keys(&kr, cert, memo);
	t = kp_keyring_verify(&kr, &m->sig, &k);
	kp_keyring_release(&kr);
	return t;
}

/* The test certificate with another public key (that of other-key.pem), re-signed by it. */
static int swapped_key_cert(const char *out)
{
	char p[4200];
	FILE *f;
	X509 *x = NULL;
	EVP_PKEY *k = NULL;
	int ok = 0;

	snprintf(p, sizeof(p), "%s/test-cert.pem", sd);
	if ((f = fopen(p, "r"))) {
		x = PEM_read_X509(f, NULL, NULL, NULL);
		fclose(f);
	}
	snprintf(p, sizeof(p), "%s/other-key.pem", sd);
	if ((f = fopen(p, "r"))) {
		k = PEM_read_PrivateKey(f, NULL, NULL, NULL);
		fclose(f);
	}
	if (x && k && X509_set_pubkey(x, k) == 1 && X509_sign(x, k, EVP_sha256()) > 0 &&
	    (f = fopen(out, "w"))) {
		ok = PEM_write_X509(f, x) == 1;
		fclose(f);
	}
	X509_free(x);
	EVP_PKEY_free(k);
	return ok ? 0 : -1;
}

/* The verdict file the memo wrote (there is one), or "" */
static void memo_file(char *out, size_t len)
{
	char cmd[256];
	FILE *p;

	out[0] = '\0';
	snprintf(cmd, sizeof(cmd), "ls %s/sigs/verdicts-*.memo 2>/dev/null", dir);
	p = popen(cmd, "r");
	if (p) {
		if (fgets(out, (int)len, p))
			out[strcspn(out, "\n")] = '\0';
		pclose(p);
	}
}

/* Removes every verdict file but @keep (what a memo that verified again wrote). */
static void keep_only(const char *keep)
{
	char cmd[4400];

	snprintf(cmd, sizeof(cmd),
		 "for f in %s/sigs/verdicts-*.memo; do [ \"$f\" = '%s' ] || rm -f \"$f\"; done",
		 dir, keep);
	if (system(cmd) != 0)
		fprintf(stderr, "# %s failed\n", cmd);
}

static uint64_t verified(struct kp_sig_memo *m)
{
	struct kp_sig_memo_counts n;

	kp_sig_memo_counts(m, &n);
	return n.verified;
}

int main(void)
{
	struct tap t = { 0 };
	const char *top = getenv("srcdir");
	struct kp_module *good, *bad, *skid;
	struct kp_sig_memo *memo;
	struct kp_sig_memo_counts n;
	char cert[4200], other[4200], file[4200];
	unsigned char id[32], id2[32];
	struct kp_keyring kr;
	const struct kp_trusted_key *k;
	int dfd;

	snprintf(sd, sizeof(sd), "%s/tests/data/sig", top ? top : ".");
	snprintf(cert, sizeof(cert), "%s/test-cert.pem", sd);
	snprintf(dir, sizeof(dir), "/tmp/kp-sig-memo-XXXXXX");
	if (!mkdtemp(dir)) {
		printf("1..0 # SKIP no temporary directory\n");
		return 0;
	}
	dfd = kp_trusted_dir_open(dir, false, NULL);
	good = open_mod("kp_sig_sha256");
	bad = open_mod("kp_sig_corrupted");
	skid = open_mod("kp_sig_sha512_skid");
	tap_ok(&t, dfd >= 0 && good && bad && skid, "a trusted directory, three signed fixtures");
	if (dfd < 0 || !good || !bad || !skid)
		return tap_done(&t);

	/* the id: every input in it */
	keys(&kr, cert, NULL);
	tap_ok(&t,
	       kr.nkeys == 1 && kp_sig_verdict_id(&kr.keys[0], &good->sig, id) &&
		       kp_sig_verdict_id(&kr.keys[0], &skid->sig, id2) && memcmp(id, id2, 32),
	       "two modules signed by one key: two verdict ids");
	kp_keyring_release(&kr);

	/* a first run verifies and stores; the next finds the verdict */
	memo = kp_sig_memo_new(dfd);
	tap_ok(&t, verify(cert, memo, good) == KP_TRUST_VERIFIED && verified(memo) == 1,
	       "cold: verified with the public key (1 operation)");
	tap_ok(&t, verify(cert, memo, bad) == KP_TRUST_BAD_SIGNATURE && verified(memo) == 2,
	       "cold: the corrupted signature does not verify");
	kp_sig_memo_counts(memo, &n);
	tap_ok(&t, n.stored == 1, "only the verdict that verifies is kept (%llu)",
	       (unsigned long long)n.stored);
	kp_sig_memo_free(memo);
	memo_file(file, sizeof(file));
	tap_ok(&t, *file != '\0', "the run wrote its verdicts: %s", file);

	memo = kp_sig_memo_new(dfd);
	tap_ok(&t, verify(cert, memo, good) == KP_TRUST_VERIFIED && verified(memo) == 0,
	       "warm: verified from the memo, no public-key operation");
	tap_ok(&t, verify(cert, memo, bad) == KP_TRUST_BAD_SIGNATURE && verified(memo) == 1,
	       "warm: a bad signature is checked again, and stays bad");

	/* a changed key set: the same signer id, another public key */
	snprintf(other, sizeof(other), "%s/swapped.pem", dir);
	tap_ok(&t, swapped_key_cert(other) == 0, "a certificate with the same issuer and serial");
	tap_ok(&t, verify(other, memo, good) == KP_TRUST_BAD_SIGNATURE && verified(memo) == 2,
	       "changed key: verified again (not the stored verdict) and rejected");

	/* preverify keeps the deciding key's verdict id in the signature: the id computed,
	 * used by the simulation's look-up, never for another key with the same signer id */
	{
		struct kp_err err = { 0 };

		keys(&kr, cert, memo);
		tap_ok(&t,
		       !good->sig.have_verdict_id &&
			       kp_keyring_preverify(&kr, &good->sig, &err) == 0 &&
			       good->sig.have_verdict_id &&
			       kp_sig_verdict_id(&kr.keys[0], &good->sig, id) &&
			       !memcmp(id, good->sig.verdict_id, sizeof(id)) &&
			       kp_keyring_verify(&kr, &good->sig, &k) == KP_TRUST_VERIFIED,
		       "preverify keeps the verdict id it computed; the verdict from it");
		kp_keyring_release(&kr);
		tap_ok(&t, verify(other, memo, good) == KP_TRUST_BAD_SIGNATURE,
		       "... another public key, the same signer id: not the kept id, rejected");
	}
	unlink(other);

	/* a changed dbx: the certificate's tbs hash revoked wins over the stored verdict */
	{
		static const unsigned char TBS[16] = { 0x92, 0xa4, 0xd2, 0x3b, 0xc0, 0x96,
						       0x79, 0x40, 0xb4, 0x20, 0xfc, 0xf9,
						       0x8e, 0xf1, 0x03, 0xed };
		const struct kp_keyring_model model = { .secure_boot = true,
							.platform_keyring = true,
							.platform_for_modules = true,
							.revocation_list = true };
		unsigned char esl[28 + 16 + 48] = { 0 }, *der = NULL;
		struct kp_err err = { 0 };
		int len;

		keys(&kr, cert, memo);
		len = i2d_re_X509_tbs(kr.keys[0].x509, &der);
		memcpy(esl, TBS, 16);
		esl[16] = sizeof(esl);
		esl[24] = 16 + 48;
		if (len > 0)
			EVP_Digest(der, (size_t)len, esl + 28 + 16, NULL, EVP_sha256(), NULL);
		OPENSSL_free(der);
		kp_keyring_add_esl(&kr, esl, sizeof(esl), KP_ESL_DBX, "dbx", &err);
		kp_keyring_apply_model(&kr, &model);
		tap_ok(&t,
		       kr.keys[0].tbs_blacklisted &&
			       kp_keyring_verify(&kr, &good->sig, &k) == KP_TRUST_NO_KEY,
		       "dbx revokes the key: no key, whatever the memo holds");
		kp_keyring_release(&kr);
	}
	kp_sig_memo_free(memo);

	/* forged: the bad module's verdict in a file the trust test refuses */
	memo = kp_sig_memo_new(-1);
	keys(&kr, cert, memo);
	tap_ok(&t, kp_sig_verdict_id(&kr.keys[0], &bad->sig, id), "the bad signature's id");
	kp_keyring_release(&kr);
	kp_sig_memo_add(memo, id);
	tap_ok(&t, verify(cert, memo, bad) == KP_TRUST_VERIFIED,
	       "(a verdict in memory is believed: the files are what the trust test guards)");
	kp_sig_memo_free(memo);
	{
		unsigned char buf[16 + 32];
		int fd;

		/* the real file, with the bad id added: rewritten with its CRC by a new memo */
		memo = kp_sig_memo_new(dfd);
		kp_sig_memo_add(memo, id);
		kp_sig_memo_free(memo);
		memo_file(file, sizeof(file));
		memo = kp_sig_memo_new(dfd);
		tap_ok(&t, verify(cert, memo, bad) == KP_TRUST_VERIFIED,
		       "a file of the user's own trusted cache is believed (man CACHE TRUST)");
		kp_sig_memo_free(memo);

		chmod(file, 0664);
		memo = kp_sig_memo_new(dfd);
		tap_ok(&t, verify(cert, memo, bad) == KP_TRUST_BAD_SIGNATURE,
		       "a group-writable verdict file is ignored: bad stays bad");
		tap_ok(&t, verify(cert, memo, good) == KP_TRUST_VERIFIED && verified(memo) == 2,
		       "... and nothing of it used (the good one verified again)");
		kp_sig_memo_free(memo);
		keep_only(file);
		chmod(file, 0644);
		if (geteuid() == 0) {
			if (chown(file, 65534, 65534) == 0) {
				memo = kp_sig_memo_new(dfd);
				tap_ok(&t, verify(cert, memo, bad) == KP_TRUST_BAD_SIGNATURE,
				       "a verdict file of another user is ignored");
				kp_sig_memo_free(memo);
				keep_only(file);
			}
			if (chown(file, 0, 0) < 0)
				perror("chown");
		} else {
			tap_ok(&t, 1, "# SKIP another user's file needs root");
		}
		/* one bit of the ids flipped: the CRC refuses the file */
		fd = open(file, O_RDWR);
		if (fd >= 0 && pread(fd, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf)) {
			buf[20] ^= 1;
			if (pwrite(fd, buf + 20, 1, 20) != 1)
				perror("pwrite");
		}
		if (fd >= 0)
			close(fd);
		memo = kp_sig_memo_new(dfd);
		tap_ok(&t, verify(cert, memo, good) == KP_TRUST_VERIFIED && verified(memo) == 1,
		       "a damaged verdict file is ignored (verified again)");
		kp_sig_memo_free(memo);
	}

	/* a verdict of another module is no verdict for this one */
	memo = kp_sig_memo_new(-1);
	tap_ok(&t, verify(cert, memo, skid) == KP_TRUST_VERIFIED, "skid module verified");
	tap_ok(&t, verify(cert, memo, bad) == KP_TRUST_BAD_SIGNATURE && verified(memo) == 2,
	       "another module's verdict does not verify the corrupted one");
	kp_sig_memo_free(memo);

	/* kernel images: certificates stored under the image's hash, damaged entries refused */
	{
		unsigned char key[32], *der = NULL, data[8] = { 4, 0, 0, 0, 1, 2, 3, 4 };
		size_t len = 0;
		uint32_t cnt = 0;

		memset(key, 0xab, sizeof(key));
		memo = kp_sig_memo_new(dfd);
		tap_ok(&t,
		       kp_sig_memo_image_get(memo, KP_SIG_MEMO_BY_BYTES, key, &der, &len, &cnt) < 0,
		       "an image never seen: not found");
		kp_sig_memo_image_put(memo, KP_SIG_MEMO_BY_BYTES, key, data, sizeof(data), 1);
		tap_ok(&t,
		       kp_sig_memo_image_get(memo, KP_SIG_MEMO_BY_BYTES, key, &der, &len, &cnt) ==
				       0 &&
			       len == sizeof(data) && cnt == 1 && !memcmp(der, data, len),
		       "an image's certificates: as stored");
		free(der);
		kp_sig_memo_image_put(memo, KP_SIG_MEMO_BY_BYTES, key, data, sizeof(data), 2);
		tap_ok(&t,
		       kp_sig_memo_image_get(memo, KP_SIG_MEMO_BY_BYTES, key, &der, &len, &cnt) < 0,
		       "an entry whose count does not match its bytes is refused");
		/* a state key names no file's bytes: the two kinds never answer for each other */
		kp_sig_memo_image_put(memo, KP_SIG_MEMO_BY_STATE, key, data, sizeof(data), 1);
		tap_ok(&t,
		       kp_sig_memo_image_get(memo, KP_SIG_MEMO_BY_BYTES, key, &der, &len, &cnt) < 0,
		       "an image stored by its state: not found by bytes with the same key");
		tap_ok(&t,
		       kp_sig_memo_image_get(memo, KP_SIG_MEMO_BY_STATE, key, &der, &len, &cnt) ==
				       0 &&
			       len == sizeof(data) && cnt == 1 && !memcmp(der, data, len),
		       "... found by its state");
		free(der);
		kp_sig_memo_free(memo);
	}

	kp_module_free(good);
	kp_module_free(bad);
	kp_module_free(skid);
	{
		uint64_t removed = 0;

		kp_sig_memo_clear_at(dfd, &removed);
		tap_ok(&t, removed >= 2, "clear removes the verdicts and images (%llu files)",
		       (unsigned long long)removed);
	}
	close(dfd);

	/* an image's state key: only for a state that names its bytes (util/fs-trust.h) */
	{
		unsigned char k1[32], k2[32];
		char ok_path[300], wr_path[300];
		struct stat st;
		int fd, wfd;
		bool racy, keyed, same, writable;

		snprintf(ok_path, sizeof(ok_path), "%s/image-ok", dir);
		snprintf(wr_path, sizeof(wr_path), "%s/image-writable", dir);
		fd = open(ok_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		wfd = open(wr_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0 || wfd < 0 || write(fd, "image", 5) != 5 || fchmod(wfd, 0664) < 0 ||
		    fstat(fd, &st) < 0)
			return printf("Bail out! test images: %m\n"), 1;
		racy = kp_sig_memo_image_state_key(fd, &st, geteuid(), k1) < 0;
		usleep(1100 * 1000); /* states changed within the last second are racy */
		keyed = fstat(fd, &st) == 0 &&
			kp_sig_memo_image_state_key(fd, &st, geteuid(), k1) == 0;
		same = kp_sig_memo_image_state_key(fd, &st, geteuid(), k2) == 0 &&
		       !memcmp(k1, k2, sizeof(k1));
		writable = fstat(wfd, &st) == 0 &&
			   kp_sig_memo_image_state_key(wfd, &st, geteuid(), k2) < 0;
		tap_ok(&t, racy, "an image changed within the last second: no state key");
		tap_ok(&t, keyed && same, "an image of the user, 0644, a second old: a state key");
		tap_ok(&t, writable, "a group-writable image: no state key (hashed)");
		if (fstat(fd, &st) < 0)
			return printf("Bail out! fstat: %m\n"), 1;
		st.st_size++;
		tap_ok(&t,
		       kp_sig_memo_image_state_key(fd, &st, geteuid(), k2) == 0 &&
			       memcmp(k1, k2, sizeof(k1)),
		       "another state (size): another key");
		close(fd);
		close(wfd);
		unlink(ok_path);
		unlink(wr_path);
	}
	rmdir(dir);
	return tap_done(&t);
}
