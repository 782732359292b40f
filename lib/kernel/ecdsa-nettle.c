// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ECDSA P-256/P-384 verification with nettle's low-level ecc_ecdsa_verify() (ecdsa-nettle.h):
 * the step of public_key_verify_signature() (crypto/asymmetric_keys/public_key.c) that
 * crypto/ecdsa.c's ecdsa_verify() does, v5.10-v7.2, answered as OpenSSL 3's EVP_PKEY_verify()
 * answers it. OpenSSL still reads the signature (d2i_ECDSA_SIG() and the re-encoding check of
 * ossl_ecdsa_verify()) and checks the point; nettle only does the arithmetic. Limbs on the
 * heap (checked), not through GMP's allocator, which aborts when it fails.
 */
#include "ecdsa-nettle.h"

#include <stdlib.h>
#include <string.h>

#include <nettle/ecc-curve.h>
#include <nettle/ecc.h>
#include <nettle/ecdsa.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/objects.h>

static const struct ecc_curve *curve_of(int nid)
{
	switch (nid) {
	case NID_X9_62_prime256v1:
		return nettle_get_secp_256r1();
	case NID_secp384r1:
		return nettle_get_secp_384r1();
	default:
		return NULL;
	}
}

bool kp_ecdsa_pub_from_pkey(const EVP_PKEY *pk, struct kp_ecdsa_pub *pub)
{
	char group[64];
	BIGNUM *x = NULL, *y = NULL;
	bool ok;

	if (!pk || !EVP_PKEY_is_a(pk, "EC") ||
	    EVP_PKEY_get_group_name(pk, group, sizeof(group), NULL) != 1)
		return false;
	pub->nid = OBJ_txt2nid(group);
	if (pub->nid == NID_undef)
		pub->nid = EC_curve_nist2nid(group);
	if (!curve_of(pub->nid))
		return false;
	pub->bytes = pub->nid == NID_secp384r1 ? 48 : 32;
	/* the point at infinity has no affine coordinates: OpenSSL's to judge */
	ok = EVP_PKEY_get_bn_param(pk, OSSL_PKEY_PARAM_EC_PUB_X, &x) == 1 &&
	     EVP_PKEY_get_bn_param(pk, OSSL_PKEY_PARAM_EC_PUB_Y, &y) == 1 &&
	     BN_bn2binpad(x, pub->x, (int)pub->bytes) == (int)pub->bytes &&
	     BN_bn2binpad(y, pub->y, (int)pub->bytes) == (int)pub->bytes;
	BN_free(x);
	BN_free(y);
	return ok;
}

/* The point is on the curve, its coordinates below p (EC_POINT_set_affine_coordinates()). */
static bool on_curve(const struct kp_ecdsa_pub *pub)
{
	EC_GROUP *g = EC_GROUP_new_by_curve_name(pub->nid);
	EC_POINT *pt = g ? EC_POINT_new(g) : NULL;
	BIGNUM *x = BN_bin2bn(pub->x, (int)pub->bytes, NULL);
	BIGNUM *y = BN_bin2bn(pub->y, (int)pub->bytes, NULL);
	const BIGNUM *p = g ? EC_GROUP_get0_field(g) : NULL;
	bool ok = pt && x && y && p && BN_cmp(x, p) < 0 && BN_cmp(y, p) < 0 &&
		  EC_POINT_set_affine_coordinates(g, pt, x, y, NULL) == 1;

	BN_free(x);
	BN_free(y);
	EC_POINT_free(pt);
	EC_GROUP_free(g);
	return ok;
}

/* @len big-endian bytes as @n little-endian limbs (n limbs hold them: checked by the caller) */
static void to_limbs(mp_limb_t *l, size_t n, const unsigned char *b, size_t len)
{
	memset(l, 0, n * sizeof(*l));
	for (size_t i = 0; i < len; i++) {
		size_t bit = 8 * (len - 1 - i);

		l[bit / GMP_NUMB_BITS] |= (mp_limb_t)b[i] << (bit % GMP_NUMB_BITS);
	}
}

/*
 * r and s of @sig as ossl_ecdsa_verify() reads them: DER that re-encodes to the same bytes,
 * neither negative nor zero nor wider than the curve (nettle checks them against n).
 */
static bool read_rs(const unsigned char *sig, size_t sig_len, size_t bytes, unsigned char *r,
		    unsigned char *s)
{
	const unsigned char *p = sig;
	ECDSA_SIG *es;
	const BIGNUM *br, *bs;
	unsigned char *der = NULL;
	int n;
	bool ok;

	if (sig_len > 1024)
		return false;
	es = d2i_ECDSA_SIG(NULL, &p, (long)sig_len);
	if (!es)
		return false;
	n = i2d_ECDSA_SIG(es, &der);
	ECDSA_SIG_get0(es, &br, &bs);
	ok = n > 0 && (size_t)n == sig_len && !memcmp(der, sig, sig_len) && br && bs &&
	     !BN_is_negative(br) && !BN_is_negative(bs) && !BN_is_zero(br) && !BN_is_zero(bs) &&
	     BN_bn2binpad(br, r, (int)bytes) == (int)bytes &&
	     BN_bn2binpad(bs, s, (int)bytes) == (int)bytes;
	OPENSSL_free(der);
	ECDSA_SIG_free(es);
	return ok;
}

static bool digest_known(const EVP_MD *md, size_t len)
{
	int t = md ? EVP_MD_get_type(md) : NID_undef;

	return (t == NID_sha256 || t == NID_sha384 || t == NID_sha512) &&
	       len == (size_t)EVP_MD_get_size(md);
}

bool kp_ecdsa_nettle_verifies(const struct kp_ecdsa_pub *pub, const EVP_MD *md,
			      const unsigned char *sig, size_t sig_len, const unsigned char *digest,
			      size_t digest_len)
{
	const struct ecc_curve *c = pub ? curve_of(pub->nid) : NULL;
	unsigned char r[KP_ECDSA_MAX_BYTES], s[KP_ECDSA_MAX_BYTES];
	mp_limb_t *point, *rp, *sp, *scratch;
	size_t n;
	bool ok;

	if (!c || !digest_known(md, digest_len) || !sig || !digest)
		return false;
	n = (size_t)ecc_size(c);
	if (pub->bytes != (pub->nid == NID_secp384r1 ? 48 : 32) ||
	    n * sizeof(mp_limb_t) < pub->bytes || GMP_NUMB_BITS != 8 * sizeof(mp_limb_t))
		return false;
	ok = read_rs(sig, sig_len, pub->bytes, r, s) && on_curve(pub);
	ERR_clear_error(); /* a "no" here is not OpenSSL's to report */
	if (!ok)
		return false;
	point = calloc(4 * n + (size_t)ecc_ecdsa_verify_itch(c), sizeof(*point));
	if (!point)
		return false;
	rp = point + 2 * n;
	sp = rp + n;
	scratch = sp + n;
	to_limbs(point, n, pub->x, pub->bytes);
	to_limbs(point + n, n, pub->y, pub->bytes);
	to_limbs(rp, n, r, pub->bytes);
	to_limbs(sp, n, s, pub->bytes);
	ok = ecc_ecdsa_verify(c, point, digest_len, digest, rp, sp, scratch) == 1;
	free(point);
	return ok;
}
