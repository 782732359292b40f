// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The nettle ECDSA path (lib/kernel/ecdsa-nettle.c) against OpenSSL (issue 28): for P-256 and
 * P-384 keys and SHA-256/384/512 digests, valid signatures and every corruption (bit flips in
 * r, s, the digest and the key; r or s = 0, = n, > n, + n, negative, wider than the curve;
 * DER that is not canonical or has bytes after it; a point not on the curve; another key,
 * another curve, a digest of the wrong length), the fast path says "verifies" exactly when
 * OpenSSL's EVP_PKEY_verify() does, and each verdict is the expected one. Keys are generated
 * at each run (the verdicts do not depend on them), by EVP_PKEY_generate() (gen_key()).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>

#include "kernel/ecdsa-nettle.h"
#include "util/util.h"
#include "tap.h"

#include "ossl-fail-alloc.h"

/* libhogweed as the binary loads it (dlopen() of configure's SONAME), for every case */
static struct kp_ecdsa_lib *lib;

struct sig {
	unsigned char der[256];
	size_t len;
};

/* What sig-keys.c's verify_now() asks OpenSSL: 1 verifies, 0 not (or no key). */
static int ossl_verdict(EVP_PKEY *pk, const EVP_MD *md, const struct sig *s,
			const unsigned char *dg, size_t dlen)
{
	EVP_PKEY_CTX *c = pk ? EVP_PKEY_CTX_new(pk, NULL) : NULL;
	int r = c && EVP_PKEY_verify_init(c) == 1 && EVP_PKEY_CTX_set_signature_md(c, md) == 1 &&
		EVP_PKEY_verify(c, s->der, s->len, dg, dlen) == 1;

	EVP_PKEY_CTX_free(c);
	return r;
}

/* The key OpenSSL makes of @pub's point (NULL when it refuses it: not on the curve). */
static EVP_PKEY *pkey_of(const struct kp_ecdsa_pub *pub)
{
	unsigned char enc[1 + 2 * KP_ECDSA_MAX_BYTES];
	OSSL_PARAM_BLD *b = OSSL_PARAM_BLD_new();
	OSSL_PARAM *p = NULL;
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
	EVP_PKEY *pk = NULL;

	enc[0] = 4;
	memcpy(enc + 1, pub->x, pub->bytes);
	memcpy(enc + 1 + pub->bytes, pub->y, pub->bytes);
	if (b && c &&
	    OSSL_PARAM_BLD_push_utf8_string(b, OSSL_PKEY_PARAM_GROUP_NAME,
					    pub->nid == NID_secp384r1 ? "secp384r1" : "prime256v1",
					    0) == 1 &&
	    OSSL_PARAM_BLD_push_octet_string(b, OSSL_PKEY_PARAM_PUB_KEY, enc, 1 + 2 * pub->bytes) ==
		    1 &&
	    (p = OSSL_PARAM_BLD_to_param(b)) && EVP_PKEY_fromdata_init(c) == 1 &&
	    EVP_PKEY_fromdata(c, &pk, EVP_PKEY_PUBLIC_KEY, p) != 1)
		pk = NULL;
	OSSL_PARAM_free(p);
	OSSL_PARAM_BLD_free(b);
	EVP_PKEY_CTX_free(c);
	return pk;
}

static int n_cases, n_verified, n_want;

/* Both verdicts equal @want. */
static void check(struct tap *t, const char *what, const struct kp_ecdsa_pub *pub, const EVP_MD *md,
		  const struct sig *s, const unsigned char *dg, size_t dlen, int want)
{
	EVP_PKEY *pk = pkey_of(pub);
	int o = ossl_verdict(pk, md, s, dg, dlen);
	int f = kp_ecdsa_nettle_verifies(lib, pub, md, s->der, s->len, dg, dlen);

	EVP_PKEY_free(pk);
	n_cases++;
	n_verified += f;
	n_want += want;
	tap_ok(t, o == want && f == want, "%s %s: nettle %d, OpenSSL %d, want %d",
	       pub->nid == NID_secp384r1 ? "P-384" : "P-256", what, f, o, want);
}

static void set_sig(struct sig *s, const BIGNUM *r, const BIGNUM *sv)
{
	ECDSA_SIG *es = ECDSA_SIG_new();
	unsigned char *p = s->der;
	int n;

	if (!es || ECDSA_SIG_set0(es, BN_dup(r), BN_dup(sv)) != 1)
		abort();
	n = i2d_ECDSA_SIG(es, NULL);
	if (n <= 0 || (size_t)n > sizeof(s->der) || i2d_ECDSA_SIG(es, &p) != n)
		abort();
	s->len = (size_t)n;
	ECDSA_SIG_free(es);
}

/* r and s of @s (which the caller frees) */
static void get_rs(const struct sig *s, BIGNUM **r, BIGNUM **sv)
{
	const unsigned char *p = s->der;
	ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &p, (long)s->len);
	const BIGNUM *a, *b;

	if (!es)
		abort();
	ECDSA_SIG_get0(es, &a, &b);
	*r = BN_dup(a);
	*sv = BN_dup(b);
	ECDSA_SIG_free(es);
	if (!*r || !*sv)
		abort();
}

/*
 * One DER INTEGER of @b (minimal: a 0x00 before a top bit set) after @pad more bytes @padbyte
 * (0x00: no longer minimal, not DER; 0x80: negative).
 */
static size_t raw_int(unsigned char *d, const BIGNUM *b, int pad, int padbyte)
{
	unsigned char bb[80];
	int l = BN_bn2bin(b, bb), z = BN_num_bits(b) % 8 == 0;

	d[0] = 0x02;
	d[1] = (unsigned char)(pad + z + l);
	memset(d + 2, padbyte, (size_t)pad);
	d[2 + pad] = 0;
	memcpy(d + 2 + pad + z, bb, (size_t)l);
	return 2 + (size_t)(pad + z + l);
}

/* DER by hand: SEQUENCE { INTEGER r, INTEGER s }, each after its pad bytes. */
static void raw_sig(struct sig *s, const BIGNUM *r, int rpad, const BIGNUM *sv, int spad,
		    int padbyte)
{
	size_t n = raw_int(s->der + 2, r, rpad, padbyte);

	n += raw_int(s->der + 2 + n, sv, spad, padbyte);
	s->der[0] = 0x30;
	s->der[1] = (unsigned char)n;
	s->len = 2 + n;
}

static void sign(EVP_PKEY *pk, const EVP_MD *md, const unsigned char *dg, size_t dlen,
		 struct sig *s)
{
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new(pk, NULL);

	s->len = sizeof(s->der);
	if (!c || EVP_PKEY_sign_init(c) != 1 || EVP_PKEY_CTX_set_signature_md(c, md) != 1 ||
	    EVP_PKEY_sign(c, s->der, &s->len, dg, dlen) != 1)
		abort();
	EVP_PKEY_CTX_free(c);
}

/*
 * A new key of @type: "EC" on @curve, "RSA" of @bits. Made with the calls ec_gen() and
 * EVP_RSA_gen() stand for: those are macros for the variadic EVP_PKEY_Q_keygen(), which the
 * program's libcrypto stubs (lib/dl/lazy-crypto.c) leave out. NULL when it fails.
 */
static EVP_PKEY *gen_key(const char *type, const char *curve, int bits)
{
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_name(NULL, type, NULL);
	EVP_PKEY *pk = NULL;

	if (c && EVP_PKEY_keygen_init(c) == 1 &&
	    (curve ? EVP_PKEY_CTX_set_group_name(c, curve)
		   : EVP_PKEY_CTX_set_rsa_keygen_bits(c, bits)) == 1 &&
	    EVP_PKEY_generate(c, &pk) != 1)
		pk = NULL;
	EVP_PKEY_CTX_free(c);
	return pk;
}

static EVP_PKEY *ec_gen(const char *curve)
{
	return gen_key("EC", curve, 0);
}

static void one(struct tap *t, const char *curve, const EVP_MD *md, const char *mdname)
{
	EVP_PKEY *pk = ec_gen(curve), *other = ec_gen(curve);
	EVP_PKEY *wrong_curve = ec_gen(strcmp(curve, "P-384") ? "P-384" : "P-256");
	struct kp_ecdsa_pub pub, opub, wpub, bad;
	EC_GROUP *g = EC_GROUP_new_by_curve_name(strcmp(curve, "P-384") ? NID_X9_62_prime256v1
									: NID_secp384r1);
	const BIGNUM *n = g ? EC_GROUP_get0_order(g) : NULL;
	unsigned char dg[64], dg2[64];
	size_t dlen = (size_t)EVP_MD_get_size(md);
	BIGNUM *r, *s, *x = BN_new(), *one_ = BN_new();
	struct sig sg, v;
	char what[128];

	if (!pk || !other || !wrong_curve || !n || !x || !one_ || !BN_one(one_) ||
	    RAND_bytes(dg, sizeof(dg)) != 1)
		abort();
	tap_ok(t,
	       kp_ecdsa_pub_from_pkey(pk, &pub) && kp_ecdsa_pub_from_pkey(other, &opub) &&
		       kp_ecdsa_pub_from_pkey(wrong_curve, &wpub),
	       "%s: the keys' points read", curve);
	sign(pk, md, dg, dlen, &sg);
	get_rs(&sg, &r, &s);

#define CASE(...) snprintf(what, sizeof(what), __VA_ARGS__)
	CASE("%s valid", mdname);
	check(t, what, &pub, md, &sg, dg, dlen, 1);
	/* more valid signatures: the fast path must verify each */
	for (int i = 0; i < 8; i++) {
		struct sig more;

		dg2[0] = (unsigned char)i;
		memcpy(dg2 + 1, dg + 1, sizeof(dg2) - 1);
		sign(pk, md, dg2, dlen, &more);
		CASE("%s valid #%d", mdname, i);
		check(t, what, &pub, md, &more, dg2, dlen, 1);
	}
	/* (r, n - s) verifies too (no low-s rule, in the kernel or in OpenSSL) */
	if (!BN_sub(x, n, s))
		abort();
	set_sig(&v, r, x);
	CASE("%s (r, n - s)", mdname);
	check(t, what, &pub, md, &v, dg, dlen, 1);

	/* bit flips in r, in s (low, middle, top bit of the curve's width) */
	for (int which = 0; which < 2; which++) {
		const int bits[] = { 0, 1, 100, (int)pub.bytes * 8 - 1 };

		for (size_t i = 0; i < KP_ARRAY_SIZE(bits); i++) {
			BIGNUM *c = BN_dup(which ? s : r);

			if (!c || !(BN_is_bit_set(c, bits[i]) ? BN_clear_bit(c, bits[i])
							      : BN_set_bit(c, bits[i])))
				abort();
			set_sig(&v, which ? r : c, which ? c : s);
			CASE("%s bit %d of %s flipped", mdname, bits[i], which ? "s" : "r");
			check(t, what, &pub, md, &v, dg, dlen, 0);
			BN_free(c);
		}
	}
	/* r or s = 0, = n, = n + 1, = the value + n (the same residue), = 2^width - 1,
	 * wider than the curve, negative */
	for (int which = 0; which < 2; which++) {
		const char *nm = which ? "s" : "r";
		BIGNUM *orig = which ? s : r;
		struct {
			const char *what;
			int op;
		} ops[] = { { "0", 0 },
			    { "n", 1 },
			    { "n + 1", 2 },
			    { "itself + n", 3 },
			    { "2^width - 1", 4 },
			    { "itself + 2^width", 5 },
			    { "itself, negative (0x80 before it)", 6 } };

		for (size_t i = 0; i < KP_ARRAY_SIZE(ops); i++) {
			BIGNUM *c = BN_new();
			int ok = c != NULL;

			switch (ops[i].op) {
			case 0:
				if (ok)
					BN_zero(c);
				break;
			case 1:
				ok = ok && BN_copy(c, n);
				break;
			case 2:
				ok = ok && BN_add(c, n, one_);
				break;
			case 3:
				ok = ok && BN_add(c, orig, n);
				break;
			case 4:
				ok = ok && BN_set_bit(c, (int)pub.bytes * 8) && BN_sub_word(c, 1);
				break;
			case 5:
				ok = ok && BN_set_bit(c, (int)pub.bytes * 8) && BN_add(c, c, orig);
				break;
			case 6:
				ok = ok && BN_copy(c, orig);
				break;
			}
			if (!ok)
				abort();
			if (ops[i].op == 6)
				raw_sig(&v, r, !which, s, which, 0x80);
			else
				set_sig(&v, which ? r : c, which ? c : s);
			CASE("%s %s = %s", mdname, nm, ops[i].what);
			check(t, what, &pub, md, &v, dg, dlen, 0);
			BN_free(c);
		}
	}
	/* the hand-made DER is OpenSSL's when nothing is added (the cases below mean it) */
	raw_sig(&v, r, 0, s, 0, 0);
	tap_ok(t, v.len == sg.len && !memcmp(v.der, sg.der, sg.len), "%s %s: hand-made DER", curve,
	       mdname);
	/* DER: a needless leading zero in r, a byte after the signature, a short read */
	raw_sig(&v, r, 1, s, 0, 0);
	CASE("%s r with a leading zero byte too many (not DER)", mdname);
	check(t, what, &pub, md, &v, dg, dlen, 0);
	v = sg;
	v.der[v.len++] = 0;
	CASE("%s a byte after the signature", mdname);
	check(t, what, &pub, md, &v, dg, dlen, 0);
	v = sg;
	v.len--;
	CASE("%s the signature cut short", mdname);
	check(t, what, &pub, md, &v, dg, dlen, 0);
	v = sg;
	v.der[0] = 0x31;
	CASE("%s a SET, not a SEQUENCE", mdname);
	check(t, what, &pub, md, &v, dg, dlen, 0);

	/* the digest: bit flips (first, last byte), the wrong length, another digest */
	memcpy(dg2, dg, sizeof(dg2));
	dg2[0] ^= 0x80;
	CASE("%s digest bit 0 flipped", mdname);
	check(t, what, &pub, md, &sg, dg2, dlen, 0);
	memcpy(dg2, dg, sizeof(dg2));
	dg2[dlen - 1] ^= 1;
	/* ecdsa_verify() (crypto/ecdsa.c) and OpenSSL take the digest's leftmost bits only */
	CASE("%s digest's last bit flipped%s", mdname,
	     dlen > pub.bytes ? " (beyond the curve's width: truncated, verifies)" : "");
	check(t, what, &pub, md, &sg, dg2, dlen, dlen > pub.bytes);
	CASE("%s digest one byte short", mdname);
	check(t, what, &pub, md, &sg, dg, dlen - 1, 0);
	CASE("%s verified as SHA-1 (20 bytes)", mdname);
	check(t, what, &pub, EVP_sha1(), &sg, dg, 20, 0);

	/* the key: another key, another curve, bit flips in x and y (off the curve) */
	CASE("%s another key", mdname);
	check(t, what, &opub, md, &sg, dg, dlen, 0);
	CASE("%s a key of the other curve", mdname);
	check(t, what, &wpub, md, &sg, dg, dlen, 0);
	for (int i = 0; i < 4; i++) {
		bad = pub;
		(i < 2 ? bad.x : bad.y)[i % 2 ? 0 : pub.bytes - 1] ^= i % 2 ? 0x40 : 1;
		CASE("%s key %s bit flipped (%s)", mdname, i < 2 ? "x" : "y",
		     i % 2 ? "high" : "low");
		check(t, what, &bad, md, &sg, dg, dlen, 0);
	}
	/* a point not on the curve: (x, y + 1); and x = p's width of 0xff (above p) */
	bad = pub;
	for (size_t i = pub.bytes; i-- > 0;)
		if (++bad.y[i])
			break;
	CASE("%s the point (x, y + 1), not on the curve", mdname);
	check(t, what, &bad, md, &sg, dg, dlen, 0);
	bad = pub;
	memset(bad.x, 0xff, bad.bytes);
	CASE("%s x above p", mdname);
	check(t, what, &bad, md, &sg, dg, dlen, 0);
#undef CASE

	BN_free(r);
	BN_free(s);
	BN_free(x);
	BN_free(one_);
	EC_GROUP_free(g);
	EVP_PKEY_free(pk);
	EVP_PKEY_free(other);
	EVP_PKEY_free(wrong_curve);
}

/*
 * OpenSSL failing at its k-th allocation inside the fast path, for every k until a run needs
 * no more: a valid signature is verified or left to OpenSSL (false), an invalid one is never
 * said to verify; nothing crashes or leaks (ASan).
 */
static void oom(struct tap *t)
{
	EVP_PKEY *pk = ec_gen("P-384");
	struct kp_ecdsa_pub pub;
	unsigned char dg[48] = { 1, 2, 3 };
	struct sig sg, bad;
	bool wrong = false;
	long k;

	if (!pk || !kp_ecdsa_pub_from_pkey(pk, &pub))
		abort();
	sign(pk, EVP_sha384(), dg, sizeof(dg), &sg);
	bad = sg;
	bad.der[bad.len - 1] ^= 1;
	for (k = 0; k < 10000; k++) {
		struct kp_ecdsa_pub p2;
		bool got, gotbad, done;

		countdown = k;
		got = kp_ecdsa_pub_from_pkey(pk, &p2) &&
		      kp_ecdsa_nettle_verifies(lib, &p2, EVP_sha384(), sg.der, sg.len, dg,
					       sizeof(dg));
		done = countdown > 0;
		countdown = k;
		gotbad = kp_ecdsa_nettle_verifies(lib, &pub, EVP_sha384(), bad.der, bad.len, dg,
						  sizeof(dg));
		done = done && countdown > 0;
		countdown = -1;
		wrong = wrong || gotbad || (done && !got);
		if (done)
			break;
	}
	tap_ok(t, !wrong && k > 0 && k < 10000,
	       "OpenSSL failing at each of its first %ld allocations: never a wrong \"verifies\", "
	       "and verified once none fails",
	       k);
	EVP_PKEY_free(pk);
}

/*
 * The library not there (or not nettle): no verdict from the fast path, never an error; the
 * caller's OpenSSL gives the verdict, the same as with nettle. A path is never dlopen()ed.
 */
static void unloadable(struct tap *t)
{
	EVP_PKEY *pk = ec_gen("P-384");
	const char *names[] = { "libkopolicy-no-such-hogweed.so.6", "libc.so.6",
				"/usr/lib/x86_64-linux-gnu/" KP_HOGWEED_SONAME, "" };
	unsigned char dg[48] = { 4, 5, 6 };
	struct kp_ecdsa_pub pub;
	struct sig sg;

	if (!pk || !kp_ecdsa_pub_from_pkey(pk, &pub))
		abort();
	sign(pk, EVP_sha384(), dg, sizeof(dg), &sg);
	tap_ok(t,
	       kp_ecdsa_lib_available(lib) &&
		       kp_ecdsa_nettle_verifies(lib, &pub, EVP_sha384(), sg.der, sg.len, dg,
						sizeof(dg)),
	       "%s loaded: verifies", KP_HOGWEED_SONAME);
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		struct kp_ecdsa_lib *l = kp_ecdsa_lib_new_soname(names[i]);
		bool twice;

		if (!l)
			abort();
		twice = !kp_ecdsa_lib_available(l) && !kp_ecdsa_lib_available(l);
		tap_ok(t,
		       twice &&
			       !kp_ecdsa_nettle_verifies(l, &pub, EVP_sha384(), sg.der, sg.len, dg,
							 sizeof(dg)) &&
			       ossl_verdict(pk, EVP_sha384(), &sg, dg, sizeof(dg)) == 1,
		       "\"%s\" not loaded: no fast verdict, OpenSSL's verifies", names[i]);
		kp_ecdsa_lib_free(l);
	}
	tap_ok(t,
	       !kp_ecdsa_nettle_verifies(NULL, &pub, EVP_sha384(), sg.der, sg.len, dg, sizeof(dg)),
	       "no library object (out of memory): OpenSSL's");
	EVP_PKEY_free(pk);
}

/* Keys the fast path leaves to OpenSSL. */
static void not_mine(struct tap *t)
{
	struct kp_ecdsa_pub pub;
	EVP_PKEY *k521 = ec_gen("P-521"), *k256k1 = ec_gen("secp256k1");
	EVP_PKEY *rsa = gen_key("RSA", NULL, 2048);

	tap_ok(t, k521 && !kp_ecdsa_pub_from_pkey(k521, &pub), "P-521: OpenSSL's");
	tap_ok(t, k256k1 && !kp_ecdsa_pub_from_pkey(k256k1, &pub), "secp256k1: OpenSSL's");
	tap_ok(t, rsa && !kp_ecdsa_pub_from_pkey(rsa, &pub), "RSA: OpenSSL's");
	tap_ok(t, !kp_ecdsa_pub_from_pkey(NULL, &pub), "no key: OpenSSL's");
	EVP_PKEY_free(k521);
	EVP_PKEY_free(k256k1);
	EVP_PKEY_free(rsa);
}

int main(void)
{
	struct tap t = { 0 };
	const char *curves[] = { "P-256", "P-384" };

	if (!CRYPTO_set_mem_functions(t_malloc, t_realloc, t_free)) {
		printf("1..0 # SKIP OpenSSL's allocator cannot be replaced\n");
		return 0;
	}

	lib = kp_ecdsa_lib_new();
	if (!lib)
		abort();
	for (size_t c = 0; c < 2; c++) {
		one(&t, curves[c], EVP_sha256(), "SHA-256");
		one(&t, curves[c], EVP_sha384(), "SHA-384");
		one(&t, curves[c], EVP_sha512(), "SHA-512");
	}
	not_mine(&t);
	unloadable(&t);
	oom(&t);
	/* every valid case verified by nettle itself (10 per curve and digest, 3 truncations) */
	tap_ok(&t, n_verified == n_want && n_want == 6 * 10 + 3,
	       "%d of %d cases verified by nettle (want %d)", n_verified, n_cases, n_want);
	kp_ecdsa_lib_free(lib);
	return tap_done(&t);
}
