// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The PKCS#7 message of a module signature, read with libcrypto's CMS parser,
 * and the digest the kernel computes over the module: what verify_pkcs7_signature()
 * (certs/system_keyring.c, Debian 6.1/6.12) needs besides the trusted keys.
 */
#include <errno.h>
#include <string.h>

#include <openssl/cms.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/err.h>
#include <openssl/x509.h>

#include "module-internal.h"
#include "util/openssl-err.h"

static const unsigned char *dup_bytes(struct kp_module *m, const unsigned char *p, size_t len)
{
	unsigned char *d = kp_arena_alloc(&m->arena, len ? len : 1);

	if (d && len)
		memcpy(d, p, len);
	return d;
}

/* The kernel's name of a digest (pkcs7_sig_note_digest_algo(),
 * crypto/asymmetric_keys/pkcs7_parser.c). */
static const char *hash_name(int nid)
{
	switch (nid) {
	case NID_md4:
		return "md4";
	case NID_md5:
		return "md5";
	case NID_sha1:
		return "sha1";
	case NID_sha224:
		return "sha224";
	case NID_sha256:
		return "sha256";
	case NID_sha384:
		return "sha384";
	case NID_sha512:
		return "sha512";
	case NID_sha3_256:
		return "sha3-256";
	case NID_sha3_384:
		return "sha3-384";
	case NID_sha3_512:
		return "sha3-512";
	case NID_sm3:
		return "sm3";
	case NID_id_GostR3411_2012_256:
		return "streebog256";
	case NID_id_GostR3411_2012_512:
		return "streebog512";
	default:
		return NULL;
	}
}

/* pkcs7_sig_note_pkey_algo(): the signature algorithm OIDs the parser knows. */
static const char *pkey_name(const ASN1_OBJECT *obj, char *oid, size_t len)
{
	static const struct {
		const char *oid, *name;
	} mldsa[] = {
		/* FIPS 204 OIDs, kernel names (v7.0 "modsign: Enable ML-DSA module signing") */
		{ "2.16.840.1.101.3.4.3.17", "mldsa44" },
		{ "2.16.840.1.101.3.4.3.18", "mldsa65" },
		{ "2.16.840.1.101.3.4.3.19", "mldsa87" },
	};

	switch (OBJ_obj2nid(obj)) {
	case NID_rsaEncryption:
		return "rsa";
	case NID_ecdsa_with_SHA1:
	case NID_ecdsa_with_SHA224:
	case NID_ecdsa_with_SHA256:
	case NID_ecdsa_with_SHA384:
	case NID_ecdsa_with_SHA512:
	case NID_ecdsa_with_SHA3_256:
	case NID_ecdsa_with_SHA3_384:
	case NID_ecdsa_with_SHA3_512:
		return "ecdsa";
	case NID_SM2_with_SM3:
		return "sm2";
	case NID_id_GostR3410_2012_256:
		return "ecrdsa256";
	case NID_id_GostR3410_2012_512:
		return "ecrdsa512";
	default:
		break;
	}
	if (OBJ_obj2txt(oid, (int)len, obj, 1) <= 0)
		return NULL;
	for (size_t i = 0; i < KP_ARRAY_SIZE(mldsa); i++)
		if (!strcmp(oid, mldsa[i].oid))
			return mldsa[i].name;
	return NULL;
}

static int fail(struct kp_signature *s, int err, const char *why)
{
	s->pkcs7_err = err;
	s->pkcs7_note = why;
	return 0;
}

/* An error of pkcs7_verify() and later: after the parser's algorithm checks. */
static int fail_late(struct kp_signature *s, int err, const char *why)
{
	s->pkcs7_verify_err = err;
	s->pkcs7_note = why;
	return 0;
}

/* The signer: issuer + serial (sign-file's default) or the SKID (sign-file -k). */
static int read_signer(struct kp_module *m, CMS_SignerInfo *si)
{
	struct kp_signature *s = &m->sig;
	ASN1_OCTET_STRING *keyid = NULL;
	X509_NAME *issuer = NULL;
	ASN1_INTEGER *serial = NULL;
	unsigned char *der = NULL;
	char cn[256];
	int n;

	if (CMS_SignerInfo_get0_signer_id(si, &keyid, &issuer, &serial) != 1)
		return fail(s, -EBADMSG, "the SignerInfo names no signer");
	if (keyid) {
		s->skid_len = (size_t)ASN1_STRING_length(keyid);
		s->skid = dup_bytes(m, ASN1_STRING_get0_data(keyid), s->skid_len);
		return s->skid ? 0 : -1;
	}
	if (!issuer || !serial)
		return fail(s, -EBADMSG, "the SignerInfo names no signer");
	ERR_clear_error();
	n = i2d_X509_NAME(issuer, &der);
	if (n <= 0 && kp_openssl_failed())
		return -1; /* out of memory, not the message */
	if (n <= 0)
		return fail(s, -EBADMSG, "the signer's issuer name cannot be encoded");
	s->issuer = dup_bytes(m, der, (size_t)n);
	s->issuer_len = (size_t)n;
	OPENSSL_free(der);
	s->serial_len = (size_t)ASN1_STRING_length(serial);
	s->serial = dup_bytes(m, ASN1_STRING_get0_data(serial), s->serial_len);
	if (X509_NAME_get_text_by_NID(issuer, NID_commonName, cn, sizeof(cn)) <= 0 &&
	    X509_NAME_get_text_by_NID(issuer, NID_organizationName, cn, sizeof(cn)) <= 0 &&
	    !X509_NAME_oneline(issuer, cn, sizeof(cn)))
		return -1; /* out of memory */
	s->signer = kp_arena_strdup(&m->arena, cn);
	return s->issuer && s->serial && s->signer ? 0 : -1;
}

/* What pkcs7_parse_message() and pkcs7_verify() (VERIFYING_MODULE_SIGNATURE) check. */
static int read_message(struct kp_module *m, CMS_ContentInfo *cms)
{
	struct kp_signature *s = &m->sig;
	STACK_OF(CMS_SignerInfo) * sis;
	CMS_SignerInfo *si;
	X509_ALGOR *dig = NULL, *alg = NULL;
	const ASN1_OBJECT *obj;
	ASN1_OCTET_STRING **content, *sigval;
	char oid[80];
	int r;

	/* pkcs7_check_content_type(): "Only support pkcs7_signedData type" */
	if (OBJ_obj2nid(CMS_get0_type(cms)) != NID_pkcs7_signed)
		return fail(s, -EINVAL, "not a PKCS#7 SignedData message");
	sis = CMS_get0_SignerInfos(cms);
	s->nsigners = sis ? (unsigned)sk_CMS_SignerInfo_num(sis) : 0;
	/* pkcs7_verify(): with no SignerInfo, actual_ret stays -ENOPKG */
	if (!s->nsigners)
		return fail_late(s, -ENOPKG, "the message has no SignerInfo");
	si = sk_CMS_SignerInfo_value(sis, 0);
	r = read_signer(m, si);
	if (r < 0 || s->pkcs7_err)
		return r;
	CMS_SignerInfo_get0_algs(si, NULL, NULL, &dig, &alg);
	if (!dig || !alg)
		return fail(s, -EBADMSG, "the SignerInfo has no algorithms");
	X509_ALGOR_get0(&obj, NULL, NULL, dig);
	s->hash_algo = hash_name(OBJ_obj2nid(obj));
	if (!s->hash_algo && OBJ_obj2txt(oid, sizeof(oid), obj, 1) > 0)
		s->hash_algo = kp_arena_strdup(&m->arena, oid);
	X509_ALGOR_get0(&obj, NULL, NULL, alg);
	s->pkey_algo = pkey_name(obj, oid, sizeof(oid));
	if (!s->pkey_algo && OBJ_obj2txt(oid, sizeof(oid), obj, 1) > 0)
		s->pkey_algo = kp_arena_strdup(&m->arena, oid);
	if (!s->hash_algo || !s->pkey_algo)
		return -1;
	sigval = CMS_SignerInfo_get0_signature(si);
	if (!sigval || ASN1_STRING_length(sigval) <= 0)
		return fail(s, -EBADMSG, "the SignerInfo has no signature");
	/*
	 * pkcs7_sig_note_authenticated_attr() / pkcs7_sig_note_set_of_authattrs(), parser
	 * (5.10-7.2): S/MIME capabilities outside Authenticode are -EKEYREJECTED, and
	 * contentType and messageDigest are required.
	 */
	if (CMS_signed_get_attr_count(si) > 0) {
		/* OID_msIndirectData, 1.3.6.1.4.1.311.2.1.4 (no OpenSSL NID) */
		if (CMS_signed_get_attr_by_NID(si, NID_SMIMECapabilities, -1) >= 0 &&
		    (OBJ_obj2txt(oid, sizeof(oid), CMS_get0_eContentType(cms), 1) <= 0 ||
		     strcmp(oid, "1.3.6.1.4.1.311.2.1.4")))
			return fail(s, -EKEYREJECTED,
				    "PKCS7: S/MIME Caps only allowed with Authenticode");
		if (CMS_signed_get_attr_by_NID(si, NID_pkcs9_contentType, -1) < 0 ||
		    CMS_signed_get_attr_by_NID(si, NID_pkcs9_messageDigest, -1) < 0)
			return fail(s, -EBADMSG, "PKCS7: Missing required AuthAttr");
	}
	s->sig_bytes_len = (size_t)ASN1_STRING_length(sigval);
	s->sig_bytes = dup_bytes(m, ASN1_STRING_get0_data(sigval), s->sig_bytes_len);
	if (!s->sig_bytes)
		return -1;
	/* verify_pkcs7_message_sig(): "PKCS#7 signature with non-detached data" */
	content = CMS_get0_content(cms);
	if (content && *content)
		return fail_late(s, -EBADMSG, "the message carries its content (not detached)");
	/* pkcs7_verify(), VERIFYING_MODULE_SIGNATURE: "Invalid module sig (not pkcs7-data)" */
	if (OBJ_obj2nid(CMS_get0_eContentType(cms)) != NID_pkcs7_data)
		return fail_late(s, -EKEYREJECTED, "Invalid module sig (not pkcs7-data)");
	/*
	 * pkcs7_verify(), VERIFYING_MODULE_SIGNATURE: "Invalid module sig (has authattrs)", which
	 * 7.0+ can waive for an ML-DSA signer (the rule decides: lib/sim/rules/signing.c).
	 */
	if (CMS_signed_get_attr_count(si) > 0)
		return fail_late(s, -EKEYREJECTED, KP_SIG_NOTE_AUTHATTRS);
	return 0;
}

/*
 * The signed part's SHA-256 (into @s->digest) and the whole file's (into @file_sha256) from one
 * pass: the state after the signed part is copied and continued over the signature. 0, or -1
 * when OpenSSL failed.
 */
static int digest_both(struct kp_signature *s, const unsigned char *image, size_t signed_len,
		       size_t file_len, unsigned char *file_sha256)
{
	EVP_MD_CTX *part = EVP_MD_CTX_new(), *file = EVP_MD_CTX_new();
	unsigned n = 0, nf = 0;
	int ok = part && file && EVP_DigestInit_ex(part, EVP_sha256(), NULL) == 1 &&
		 EVP_DigestUpdate(part, image, signed_len) == 1 &&
		 EVP_MD_CTX_copy_ex(file, part) == 1 &&
		 EVP_DigestFinal_ex(part, s->digest, &n) == 1 &&
		 EVP_DigestUpdate(file, image + signed_len, file_len - signed_len) == 1 &&
		 EVP_DigestFinal_ex(file, file_sha256, &nf) == 1 && n == 32 && nf == 32;

	EVP_MD_CTX_free(part);
	EVP_MD_CTX_free(file);
	if (!ok)
		return -1;
	s->digest_len = n;
	return 0;
}

/*
 * The digests of @what, and the whole image's SHA-256 into @whole (NULL: not wanted) when it
 * comes with them; 0, or -1 when OpenSSL failed (no digest is then a verdict).
 */
static int digest(struct kp_signature *s, const unsigned char *image, size_t signed_len,
		  size_t file_len, unsigned what, struct kp_whole_sha256 *whole)
{
	const EVP_MD *md = NULL;
	unsigned int n = 0;
	int nid = OBJ_txt2nid(s->hash_algo);

	/* The kernel spells some digests differently from OpenSSL's short names. */
	if (!strcmp(s->hash_algo, "sha3-256"))
		nid = NID_sha3_256;
	else if (!strcmp(s->hash_algo, "sha3-384"))
		nid = NID_sha3_384;
	else if (!strcmp(s->hash_algo, "sha3-512"))
		nid = NID_sha3_512;
	else if (!strcmp(s->hash_algo, "streebog256"))
		nid = NID_id_GostR3411_2012_256;
	else if (!strcmp(s->hash_algo, "streebog512"))
		nid = NID_id_GostR3411_2012_512;
	if (nid != NID_undef)
		md = EVP_get_digestbynid(nid);
	/*
	 * pkcs7_digest(): the detached data, i.e. the module before the signature. Not for ML-DSA,
	 * which signs the data itself (hash "none") or the signed attributes, not a digest: the
	 * key check then reports the signature unchecked (sig-keys.c, a zero digest_len).
	 */
	if (!((what & KP_SIG_DIGEST) && md && strncmp(s->pkey_algo, "mldsa", 5) &&
	      EVP_MD_get_size(md) <= (int)sizeof(s->digest)))
		md = NULL;
	/* both SHA-256: one pass, the signed part being a prefix of the file */
	if (md && ((what & KP_SIG_FILE_SHA256) || whole) && EVP_MD_get_type(md) == NID_sha256) {
		unsigned char file_sha256[32];

		if (digest_both(s, image, signed_len, file_len, file_sha256) < 0)
			return -1;
		if (what & KP_SIG_FILE_SHA256) {
			memcpy(s->file_sha256, file_sha256, sizeof(s->file_sha256));
			s->have_file_sha256 = true;
		}
		if (whole) {
			memcpy(whole->sha256, file_sha256, sizeof(whole->sha256));
			whole->set = true;
		}
		return 0;
	}
	if (md) {
		/* a failure here would read as "unchecked, assumed to verify": an error instead */
		if (EVP_Digest(image, signed_len, s->digest, &n, md, NULL) != 1)
			return -1;
		s->digest_len = n;
	}
	/* mod_is_hash_blacklisted() (Debian): SHA-256 of the whole file, marker included */
	if (what & KP_SIG_FILE_SHA256) {
		if (EVP_Digest(image, file_len, s->file_sha256, &n, EVP_sha256(), NULL) != 1)
			return -1;
		s->have_file_sha256 = true;
		if (whole) {
			memcpy(whole->sha256, s->file_sha256, sizeof(whole->sha256));
			whole->set = true;
		}
	}
	return 0;
}

int kp_read_pkcs7(struct kp_module *m, const unsigned char *image, size_t signed_len,
		  size_t file_len, unsigned want_digest, struct kp_whole_sha256 *whole)
{
	struct kp_signature *s = &m->sig;
	const unsigned char *p = image + signed_len;
	CMS_ContentInfo *cms;
	int r;

	if (!s->present || s->malformed || s->id_type != 2 || !s->params_zero)
		return 0; /* mod_check_sig() decided already */
	if (!s->pkcs7_der)
		return fail(s, -EBADMSG, "the PKCS#7 blob is not one DER SEQUENCE");
	ERR_clear_error();
	cms = d2i_CMS_ContentInfo(NULL, &p, s->sig_len);
	if (!cms && kp_openssl_failed())
		return -2; /* not the message: OpenSSL (out of memory) */
	if (!cms || p != image + signed_len + s->sig_len) {
		CMS_ContentInfo_free(cms);
		/* pkcs7_parse_message(): the ASN.1 decoder's -EBADMSG */
		return fail(s, -EBADMSG, "the PKCS#7 message cannot be parsed");
	}
	r = read_message(m, cms);
	CMS_ContentInfo_free(cms);
	if (r == 0 && want_digest && !s->pkcs7_err && !s->pkcs7_verify_err &&
	    digest(s, image, signed_len, file_len, want_digest, whole) < 0)
		return -2;
	return r;
}
