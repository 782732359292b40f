// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libcrypto loaded on first use (lazy-lib.h): the stubs of the functions the program calls,
 * with OpenSSL's prototypes. OPENSSL_free() is CRYPTO_free(), sk_*_num() and sk_*_value()
 * are OPENSSL_sk_num() and OPENSSL_sk_value(), BN_zero() is BN_zero_ex().
 *
 * Loading it initialises it as main() did before any other OpenSSL call: signatures are judged
 * as the kernel judges them, not by this host's OpenSSL policy: no openssl.cnf (a system crypto
 * policy may forbid SHA-1 or fetch only FIPS implementations) and no $OPENSSL_CONF (a root run
 * must not load the providers or engines a file named by its environment asks for).
 * CRYPTO_set_mem_functions() is the one call that must come before that initialisation (OpenSSL
 * takes allocation functions only before its first allocation): it has its own stub.
 */
#include "lazy-stubs-internal.h"

#include <dlfcn.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/cms.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/param_build.h>
#include <openssl/params.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

#define KP_LAZY_FNS(F, V, Z, VZ) \
	F(const unsigned char *, ASN1_STRING_get0_data, (const ASN1_STRING *a), (a)) \
	F(int, ASN1_STRING_length, (const ASN1_STRING *a), (a)) \
	Z(int, BIO_free, (BIO *a), (a), 0) \
	F(BIO *, BIO_new_mem_buf, (const void *a, int b), (a, b)) \
	F(int, BN_add, (BIGNUM *a, const BIGNUM *b, const BIGNUM *c), (a, b, c)) \
	F(BIGNUM *, BN_bin2bn, (const unsigned char *a, int b, BIGNUM *c), (a, b, c)) \
	F(int, BN_bn2bin, (const BIGNUM *a, unsigned char *b), (a, b)) \
	F(int, BN_bn2binpad, (const BIGNUM *a, unsigned char *b, int c), (a, b, c)) \
	F(int, BN_clear_bit, (BIGNUM *a, int b), (a, b)) \
	F(int, BN_cmp, (const BIGNUM *a, const BIGNUM *b), (a, b)) \
	F(BIGNUM *, BN_copy, (BIGNUM *a, const BIGNUM *b), (a, b)) \
	F(BIGNUM *, BN_dup, (const BIGNUM *a), (a)) \
	VZ(BN_free, (BIGNUM *a), (a)) \
	F(int, BN_is_bit_set, (const BIGNUM *a, int b), (a, b)) \
	F(int, BN_is_negative, (const BIGNUM *a), (a)) \
	F(int, BN_is_zero, (const BIGNUM *a), (a)) \
	F(BIGNUM *, BN_new, (void), ()) \
	F(int, BN_num_bits, (const BIGNUM *a), (a)) \
	F(int, BN_set_bit, (BIGNUM *a, int b), (a, b)) \
	F(int, BN_set_word, (BIGNUM *a, unsigned long b), (a, b)) \
	F(int, BN_sub, (BIGNUM *a, const BIGNUM *b, const BIGNUM *c), (a, b, c)) \
	F(int, BN_sub_word, (BIGNUM *a, unsigned long b), (a, b)) \
	V(BN_zero_ex, (BIGNUM *a), (a)) \
	VZ(CMS_ContentInfo_free, (CMS_ContentInfo *a), (a)) \
	F(ASN1_OCTET_STRING **, CMS_get0_content, (CMS_ContentInfo *a), (a)) \
	F(const ASN1_OBJECT *, CMS_get0_eContentType, (CMS_ContentInfo *a), (a)) \
	F(struct stack_st_CMS_SignerInfo *, CMS_get0_SignerInfos, (CMS_ContentInfo *a), (a)) \
	F(const ASN1_OBJECT *, CMS_get0_type, (const CMS_ContentInfo *a), (a)) \
	F(int, CMS_signed_get_attr_by_NID, (const CMS_SignerInfo *a, int b, int c), (a, b, c)) \
	F(int, CMS_signed_get_attr_count, (const CMS_SignerInfo *a), (a)) \
	V(CMS_SignerInfo_get0_algs, (CMS_SignerInfo *a, EVP_PKEY **b, X509 **c, X509_ALGOR **d, \
		X509_ALGOR **e), (a, b, c, d, e)) \
	F(ASN1_OCTET_STRING *, CMS_SignerInfo_get0_signature, (CMS_SignerInfo *a), (a)) \
	F(int, CMS_SignerInfo_get0_signer_id, (CMS_SignerInfo *a, ASN1_OCTET_STRING **b, \
		X509_NAME **c, ASN1_INTEGER **d), (a, b, c, d)) \
	VZ(CRYPTO_free, (void *a, const char *b, int c), (a, b, c)) \
	F(CMS_ContentInfo *, d2i_CMS_ContentInfo, (CMS_ContentInfo **a, const unsigned char **b, \
		long c), (a, b, c)) \
	F(ECDSA_SIG *, d2i_ECDSA_SIG, (ECDSA_SIG **a, const unsigned char **b, long c), (a, \
		b, c)) \
	F(X509 *, d2i_X509, (X509 **a, const unsigned char **b, long c), (a, b, c)) \
	F(int, EC_curve_nist2nid, (const char *a), (a)) \
	VZ(EC_GROUP_free, (EC_GROUP *a), (a)) \
	F(const BIGNUM *, EC_GROUP_get0_field, (const EC_GROUP *a), (a)) \
	F(const BIGNUM *, EC_GROUP_get0_order, (const EC_GROUP *a), (a)) \
	F(EC_GROUP *, EC_GROUP_new_by_curve_name, (int a), (a)) \
	VZ(EC_POINT_free, (EC_POINT *a), (a)) \
	F(EC_POINT *, EC_POINT_new, (const EC_GROUP *a), (a)) \
	F(int, EC_POINT_set_affine_coordinates, (const EC_GROUP *a, EC_POINT *b, const BIGNUM *c, \
		const BIGNUM *d, BN_CTX *e), (a, b, c, d, e)) \
	VZ(ECDSA_SIG_free, (ECDSA_SIG *a), (a)) \
	V(ECDSA_SIG_get0, (const ECDSA_SIG *a, const BIGNUM **b, const BIGNUM **c), (a, b, c)) \
	F(ECDSA_SIG *, ECDSA_SIG_new, (void), ()) \
	F(int, ECDSA_SIG_set0, (ECDSA_SIG *a, BIGNUM *b, BIGNUM *c), (a, b, c)) \
	V(ERR_clear_error, (void), ()) \
	F(unsigned long, ERR_get_error, (void), ()) \
	F(int, EVP_Digest, (const void *a, size_t b, unsigned char *c, unsigned int *d, \
		const EVP_MD *e, ENGINE *f), (a, b, c, d, e, f)) \
	F(int, EVP_DigestFinal_ex, (EVP_MD_CTX *a, unsigned char *b, unsigned int *c), (a, b, c)) \
	F(int, EVP_DigestInit_ex, (EVP_MD_CTX *a, const EVP_MD *b, ENGINE *c), (a, b, c)) \
	F(int, EVP_DigestUpdate, (EVP_MD_CTX *a, const void *b, size_t c), (a, b, c)) \
	F(const EVP_MD *, EVP_get_digestbyname, (const char *a), (a)) \
	F(int, EVP_MD_CTX_copy_ex, (EVP_MD_CTX *a, const EVP_MD_CTX *b), (a, b)) \
	VZ(EVP_MD_CTX_free, (EVP_MD_CTX *a), (a)) \
	F(EVP_MD_CTX *, EVP_MD_CTX_new, (void), ()) \
	F(EVP_MD *, EVP_MD_fetch, (OSSL_LIB_CTX *a, const char *b, const char *c), (a, b, c)) \
	VZ(EVP_MD_free, (EVP_MD *a), (a)) \
	F(int, EVP_MD_get_size, (const EVP_MD *a), (a)) \
	F(int, EVP_MD_get_type, (const EVP_MD *a), (a)) \
	VZ(EVP_PKEY_CTX_free, (EVP_PKEY_CTX *a), (a)) \
	F(EVP_PKEY_CTX *, EVP_PKEY_CTX_new, (EVP_PKEY *a, ENGINE *b), (a, b)) \
	F(EVP_PKEY_CTX *, EVP_PKEY_CTX_new_from_name, (OSSL_LIB_CTX *a, const char *b, \
		const char *c), (a, b, c)) \
	F(int, EVP_PKEY_CTX_set_group_name, (EVP_PKEY_CTX *a, const char *b), (a, b)) \
	F(int, EVP_PKEY_CTX_set_rsa_keygen_bits, (EVP_PKEY_CTX *a, int b), (a, b)) \
	F(int, EVP_PKEY_CTX_set_rsa_padding, (EVP_PKEY_CTX *a, int b), (a, b)) \
	F(int, EVP_PKEY_CTX_set_signature_md, (EVP_PKEY_CTX *a, const EVP_MD *b), (a, b)) \
	VZ(EVP_PKEY_free, (EVP_PKEY *a), (a)) \
	F(int, EVP_PKEY_fromdata, (EVP_PKEY_CTX *a, EVP_PKEY **b, int c, OSSL_PARAM *d), (a, b, \
		c, d)) \
	F(int, EVP_PKEY_fromdata_init, (EVP_PKEY_CTX *a), (a)) \
	F(int, EVP_PKEY_generate, (EVP_PKEY_CTX *a, EVP_PKEY **b), (a, b)) \
	F(int, EVP_PKEY_get_base_id, (const EVP_PKEY *a), (a)) \
	F(int, EVP_PKEY_get_bn_param, (const EVP_PKEY *a, const char *b, BIGNUM **c), (a, b, c)) \
	F(int, EVP_PKEY_get_group_name, (const EVP_PKEY *a, char *b, size_t c, size_t *d), (a, b, \
		c, d)) \
	F(int, EVP_PKEY_is_a, (const EVP_PKEY *a, const char *b), (a, b)) \
	F(int, EVP_PKEY_keygen_init, (EVP_PKEY_CTX *a), (a)) \
	F(int, EVP_PKEY_sign, (EVP_PKEY_CTX *a, unsigned char *b, size_t *c, \
		const unsigned char *d, size_t e), (a, b, c, d, e)) \
	F(int, EVP_PKEY_sign_init, (EVP_PKEY_CTX *a), (a)) \
	F(int, EVP_PKEY_verify, (EVP_PKEY_CTX *a, const unsigned char *b, size_t c, \
		const unsigned char *d, size_t e), (a, b, c, d, e)) \
	F(int, EVP_PKEY_verify_init, (EVP_PKEY_CTX *a), (a)) \
	F(const EVP_MD *, EVP_sha1, (void), ()) \
	F(const EVP_MD *, EVP_sha256, (void), ()) \
	F(const EVP_MD *, EVP_sha384, (void), ()) \
	F(const EVP_MD *, EVP_sha512, (void), ()) \
	F(int, i2d_ECDSA_SIG, (const ECDSA_SIG *a, unsigned char **b), (a, b)) \
	F(int, i2d_re_X509_tbs, (X509 *a, unsigned char **b), (a, b)) \
	F(int, i2d_X509, (const X509 *a, unsigned char **b), (a, b)) \
	F(int, i2d_X509_NAME, (const X509_NAME *a, unsigned char **b), (a, b)) \
	F(int, i2d_X509_PUBKEY, (const X509_PUBKEY *a, unsigned char **b), (a, b)) \
	F(const char *, OBJ_nid2sn, (int a), (a)) \
	F(int, OBJ_obj2nid, (const ASN1_OBJECT *a), (a)) \
	F(int, OBJ_obj2txt, (char *a, int b, const ASN1_OBJECT *c, int d), (a, b, c, d)) \
	F(int, OBJ_txt2nid, (const char *a), (a)) \
	F(int, OPENSSL_init_crypto, (uint64_t a, const OPENSSL_INIT_SETTINGS *b), (a, b)) \
	F(int, OPENSSL_sk_num, (const OPENSSL_STACK *a), (a)) \
	F(void *, OPENSSL_sk_value, (const OPENSSL_STACK *a, int b), (a, b)) \
	VZ(OSSL_PARAM_BLD_free, (OSSL_PARAM_BLD *a), (a)) \
	F(OSSL_PARAM_BLD *, OSSL_PARAM_BLD_new, (void), ()) \
	F(int, OSSL_PARAM_BLD_push_octet_string, (OSSL_PARAM_BLD *a, const char *b, \
		const void *c, size_t d), (a, b, c, d)) \
	F(int, OSSL_PARAM_BLD_push_utf8_string, (OSSL_PARAM_BLD *a, const char *b, const char *c, \
		size_t d), (a, b, c, d)) \
	F(OSSL_PARAM *, OSSL_PARAM_BLD_to_param, (OSSL_PARAM_BLD *a), (a)) \
	VZ(OSSL_PARAM_free, (OSSL_PARAM *a), (a)) \
	F(X509 *, PEM_read_bio_X509, (BIO *a, X509 **b, pem_password_cb *c, void *d), (a, b, c, \
		d)) \
	F(EVP_PKEY *, PEM_read_PrivateKey, (FILE *a, EVP_PKEY **b, pem_password_cb *c, \
		void *d), (a, b, c, d)) \
	F(X509 *, PEM_read_X509, (FILE *a, X509 **b, pem_password_cb *c, void *d), (a, b, c, d)) \
	F(int, PEM_write_X509, (FILE *a, const X509 *b), (a, b)) \
	F(int, RAND_bytes, (unsigned char *a, int b), (a, b)) \
	V(X509_ALGOR_get0, (const ASN1_OBJECT **a, int *b, const void **c, const X509_ALGOR *d), \
		(a, b, c, d)) \
	F(int, X509_cmp, (const X509 *a, const X509 *b), (a, b)) \
	VZ(X509_free, (X509 *a), (a)) \
	F(EVP_PKEY *, X509_get0_pubkey, (const X509 *a), (a)) \
	F(const ASN1_INTEGER *, X509_get0_serialNumber, (const X509 *a), (a)) \
	F(const ASN1_OCTET_STRING *, X509_get0_subject_key_id, (X509 *a), (a)) \
	F(X509_NAME *, X509_get_issuer_name, (const X509 *a), (a)) \
	F(X509_NAME *, X509_get_subject_name, (const X509 *a), (a)) \
	F(X509_PUBKEY *, X509_get_X509_PUBKEY, (const X509 *a), (a)) \
	F(int, X509_NAME_get0_der, (const X509_NAME *a, const unsigned char **b, size_t *c), (a, \
		b, c)) \
	F(int, X509_NAME_get_text_by_NID, (const X509_NAME *a, int b, char *c, int d), (a, b, c, \
		d)) \
	F(char *, X509_NAME_oneline, (const X509_NAME *a, char *b, int c), (a, b, c)) \
	F(int, X509_set_pubkey, (X509 *a, EVP_PKEY *b), (a, b)) \
	F(int, X509_sign, (X509 *a, EVP_PKEY *b, const EVP_MD *c), (a, b, c))

KP_LAZY_TABLE;

/* OPENSSL_INIT_NO_LOAD_CONFIG before anything else: no configuration file is read. */
static const char *crypto_ready(void *const *fns)
{
	__typeof__(&OPENSSL_init_crypto) init = fns[KP_LAZY_I_OPENSSL_init_crypto];

	if (init(OPENSSL_INIT_NO_LOAD_CONFIG, NULL) != 1)
		return "OpenSSL cannot be initialised";
	return NULL;
}

KP_LAZY_LIB(libcrypto, "libcrypto", KP_LIBCRYPTO_SONAME, crypto_ready)
KP_LAZY_STUBS

/*
 * Before the library's initialisation above, which allocates: the library mapped by its own
 * dlopen() (the same one the first stub call's load finds then), the function called, no
 * state kept. 0, OpenSSL's failure, when it cannot be loaded or was already initialised.
 */
KP_LAZY_HIDDEN int CRYPTO_set_mem_functions(CRYPTO_malloc_fn m, CRYPTO_realloc_fn r,
					    CRYPTO_free_fn f)
{
	void *h = dlopen(KP_LIBCRYPTO_SONAME, RTLD_NOW | RTLD_LOCAL);
	void *p = h ? dlsym(h, "CRYPTO_set_mem_functions") : NULL;
	__typeof__(&CRYPTO_set_mem_functions) set = p;

	/* never closed: the library stays for the stubs (a second dlopen() only counts) */
	return set ? set(m, r, f) : 0;
}
