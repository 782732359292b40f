// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ECDSA P-256/P-384 verification with nettle's low-level ecc_ecdsa_verify() (ecdsa-nettle.h):
 * the step of public_key_verify_signature() (crypto/asymmetric_keys/public_key.c) that
 * crypto/ecdsa.c's ecdsa_verify() does, v5.10-v7.2, answered as OpenSSL 3's EVP_PKEY_verify()
 * answers it. OpenSSL still reads the signature (d2i_ECDSA_SIG() and the re-encoding check of
 * ossl_ecdsa_verify()) and checks the point; nettle only does the arithmetic. Limbs on the
 * heap (checked), not through GMP's allocator, which aborts when it fails. libhogweed is
 * dlopen()ed on first use (ecdsa-nettle.h); its headers give the types and prototypes.
 */
#include "ecdsa-nettle.h"

#include <dlfcn.h>
#include <pthread.h>
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

/* The functions of libhogweed the fast path calls, typed by nettle's own prototypes. */
struct nettle_fns {
	__typeof__(&nettle_get_secp_256r1) get_secp_256r1;
	__typeof__(&nettle_get_secp_384r1) get_secp_384r1;
	__typeof__(&nettle_ecc_size) ecc_size;
	__typeof__(&nettle_ecc_ecdsa_verify_itch) ecdsa_verify_itch;
	__typeof__(&nettle_ecc_ecdsa_verify) ecdsa_verify;
};

struct kp_ecdsa_lib {
	pthread_mutex_t lock; /* guards tried, handle and fns while the library is loaded */
	bool tried;	      /* dlopen() done, whatever it gave: never tried twice */
	void *handle;	      /* NULL: not loaded, OpenSSL verifies */
	struct nettle_fns fns;
	char soname[];
};

struct kp_ecdsa_lib *kp_ecdsa_lib_new_soname(const char *soname)
{
	size_t n = strlen(soname) + 1;
	struct kp_ecdsa_lib *lib = calloc(1, sizeof(*lib) + n);

	if (!lib)
		return NULL;
	if (pthread_mutex_init(&lib->lock, NULL) != 0) {
		free(lib);
		return NULL;
	}
	memcpy(lib->soname, soname, n);
	return lib;
}

struct kp_ecdsa_lib *kp_ecdsa_lib_new(void)
{
	return kp_ecdsa_lib_new_soname(KP_HOGWEED_SONAME);
}

void kp_ecdsa_lib_free(struct kp_ecdsa_lib *lib)
{
	if (!lib)
		return;
	if (lib->handle)
		dlclose(lib->handle);
	pthread_mutex_destroy(&lib->lock);
	free(lib);
}

/* @name's address in @h into the function pointer at @fn (POSIX: same representation). */
static bool sym(void *h, const char *name, void *fn)
{
	void *p = dlsym(h, name);

	if (!p)
		return false;
	memcpy(fn, &p, sizeof(p));
	return true;
}

/*
 * dlopen() by SONAME only, never a path: the directories the dynamic linker searches for a
 * linked library (nothing from the modules tree); RTLD_LOCAL keeps its symbols to itself.
 */
static void load(struct kp_ecdsa_lib *lib)
{
	struct nettle_fns f;
	void *h = !lib->soname[0] || strchr(lib->soname, '/')
			  ? NULL /* "" would be the program itself */
			  : dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return;
	if (sym(h, "nettle_get_secp_256r1", &f.get_secp_256r1) &&
	    sym(h, "nettle_get_secp_384r1", &f.get_secp_384r1) &&
	    sym(h, "nettle_ecc_size", &f.ecc_size) &&
	    sym(h, "nettle_ecc_ecdsa_verify_itch", &f.ecdsa_verify_itch) &&
	    sym(h, "nettle_ecc_ecdsa_verify", &f.ecdsa_verify)) {
		lib->fns = f;
		lib->handle = h;
	} else {
		dlclose(h);
	}
}

/* The functions, loaded on the first call; NULL when the library cannot be loaded. */
static const struct nettle_fns *fns_of(struct kp_ecdsa_lib *lib)
{
	bool ok;

	if (!lib)
		return NULL;
	pthread_mutex_lock(&lib->lock);
	if (!lib->tried) {
		lib->tried = true;
		load(lib);
	}
	ok = lib->handle != NULL;
	pthread_mutex_unlock(&lib->lock);
	/* set once under the lock above, never changed after: read without it */
	return ok ? &lib->fns : NULL;
}

bool kp_ecdsa_lib_available(struct kp_ecdsa_lib *lib)
{
	return fns_of(lib) != NULL;
}

static bool curve_known(int nid)
{
	return nid == NID_X9_62_prime256v1 || nid == NID_secp384r1;
}

static const struct ecc_curve *curve_of(const struct nettle_fns *f, int nid)
{
	switch (nid) {
	case NID_X9_62_prime256v1:
		return f->get_secp_256r1();
	case NID_secp384r1:
		return f->get_secp_384r1();
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
	if (!curve_known(pub->nid))
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

bool kp_ecdsa_nettle_verifies(struct kp_ecdsa_lib *lib, const struct kp_ecdsa_pub *pub,
			      const EVP_MD *md, const unsigned char *sig, size_t sig_len,
			      const unsigned char *digest, size_t digest_len)
{
	const struct nettle_fns *f = pub && curve_known(pub->nid) ? fns_of(lib) : NULL;
	const struct ecc_curve *c = f ? curve_of(f, pub->nid) : NULL;
	unsigned char r[KP_ECDSA_MAX_BYTES], s[KP_ECDSA_MAX_BYTES];
	mp_limb_t *point, *rp, *sp, *scratch;
	size_t n;
	bool ok;

	if (!c || !digest_known(md, digest_len) || !sig || !digest)
		return false;
	n = (size_t)f->ecc_size(c);
	if (pub->bytes != (pub->nid == NID_secp384r1 ? 48 : 32) ||
	    n * sizeof(mp_limb_t) < pub->bytes || GMP_NUMB_BITS != 8 * sizeof(mp_limb_t))
		return false;
	ok = read_rs(sig, sig_len, pub->bytes, r, s) && on_curve(pub);
	ERR_clear_error(); /* a "no" here is not OpenSSL's to report */
	if (!ok)
		return false;
	point = calloc(4 * n + (size_t)f->ecdsa_verify_itch(c), sizeof(*point));
	if (!point)
		return false;
	rp = point + 2 * n;
	sp = rp + n;
	scratch = sp + n;
	to_limbs(point, n, pub->x, pub->bytes);
	to_limbs(point + n, n, pub->y, pub->bytes);
	to_limbs(rp, n, r, pub->bytes);
	to_limbs(sp, n, s, pub->bytes);
	ok = f->ecdsa_verify(c, point, digest_len, digest, rp, sp, scratch) == 1;
	free(point);
	return ok;
}
