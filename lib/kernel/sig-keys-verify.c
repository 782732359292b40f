// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Module signatures checked against the keyring (sig-keys.h): mod_verify_sig()'s search of
 * the keyrings, the revocation lists, the verdicts' ids for the memo, and the names reports
 * use.
 */
#include "sig-keys-internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "ecdsa-nettle.h"
#include "util/openssl-err.h"

/* public_key_verify_signature(): the signature over the digest, with the key's algorithm. */
/*
 * public_key_verify_signature(): 1 when @x's key verifies @s, 0 when it does not, -1 when
 * OpenSSL failed (out of memory, an internal error): no verdict, never "does not verify".
 */
static int verify_now(struct kp_ecdsa_lib *ecdsa, X509 *x, const struct kp_signature *s)
{
	EVP_PKEY *pk = X509_get0_pubkey(x);
	const EVP_MD *md = EVP_get_digestbyname(s->hash_algo);
	EVP_PKEY_CTX *ctx;
	struct kp_ecdsa_pub pub;
	int r = -1;

	if (!pk || !md)
		return 0;
	/* P-256/P-384 (Debian's P-384 signing key): nettle's "verifies" is OpenSSL's */
	if (kp_ecdsa_pub_from_pkey(pk, &pub) &&
	    kp_ecdsa_nettle_verifies(ecdsa, &pub, md, s->sig_bytes, s->sig_bytes_len, s->digest,
				     s->digest_len))
		return 1;
	ERR_clear_error();
	ctx = EVP_PKEY_CTX_new(pk, NULL);
	if (!ctx)
		return -1; /* allocation only */
	/*
	 * Setting up a verification of a key OpenSSL parsed with a digest it knows fails only
	 * when OpenSSL does (out of memory reads as "operation not supported for this
	 * keytype" there): no verdict. The verification itself says no with 0 (or -1 for a
	 * signature that is not DER), a failure with a fatal error in the queue.
	 */
	if (EVP_PKEY_verify_init(ctx) != 1 || EVP_PKEY_CTX_set_signature_md(ctx, md) != 1 ||
	    (EVP_PKEY_get_base_id(pk) == EVP_PKEY_RSA &&
	     EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) != 1)) {
		EVP_PKEY_CTX_free(ctx);
		ERR_clear_error();
		return -1;
	}
	r = EVP_PKEY_verify(ctx, s->sig_bytes, s->sig_bytes_len, s->digest, s->digest_len);
	EVP_PKEY_CTX_free(ctx);
	if (r == 1)
		return 1;
	return kp_openssl_failed() ? -1 : 0;
}

/* A version of the verdicts: a change to verify_now() must change it (old verdicts unused). */
#define VERDICT_TAG "kopolicy signature verdict 1 " PACKAGE_VERSION

/* kp_sig_verdict_id() with the SHA-256 @md (NULL: EVP_sha256()). */
static bool verdict_id(const EVP_MD *md, const struct kp_trusted_key *k,
		       const struct kp_signature *s, unsigned char id[32])
{
	static const unsigned char zero[32];
	const char *h = s->hash_algo ? s->hash_algo : "";
	EVP_MD_CTX *ctx;
	unsigned char len[8];
	bool ok;

	if (!k->have_key_id || !s->digest_len || s->digest_len > sizeof(s->digest) ||
	    !s->sig_bytes || !s->sig_bytes_len)
		return false;
	ctx = EVP_MD_CTX_new();
	if (!ctx)
		return false;
	/* each variable-length field with its length: no two inputs share an encoding */
	for (int i = 0; i < 8; i++)
		len[i] = (unsigned char)((uint64_t)s->sig_bytes_len >> (8 * i));
	ok = EVP_DigestInit_ex(ctx, md ? md : EVP_sha256(), NULL) == 1 &&
	     EVP_DigestUpdate(ctx, VERDICT_TAG, sizeof(VERDICT_TAG)) == 1 &&
	     EVP_DigestUpdate(ctx, k->key_id, sizeof(k->key_id)) == 1 &&
	     EVP_DigestUpdate(ctx, h, strlen(h) + 1) == 1 &&
	     EVP_DigestUpdate(ctx, &(unsigned char){ (unsigned char)s->digest_len }, 1) == 1 &&
	     EVP_DigestUpdate(ctx, s->digest, s->digest_len) == 1 &&
	     EVP_DigestUpdate(ctx, len, sizeof(len)) == 1 &&
	     EVP_DigestUpdate(ctx, s->sig_bytes, s->sig_bytes_len) == 1 &&
	     EVP_DigestFinal_ex(ctx, id, NULL) == 1;
	EVP_MD_CTX_free(ctx);
	/* an all-zero id means "none" to the memo */
	return ok && memcmp(id, zero, sizeof(zero));
}

bool kp_sig_verdict_id(const struct kp_trusted_key *k, const struct kp_signature *s,
		       unsigned char id[32])
{
	return verdict_id(NULL, k, s, id);
}

/*
 * The keyring's SHA-256 for the verdicts' ids (sig-keys.h: verdict_md), fetched by the first
 * thread that needs it; NULL when the fetch fails (EVP_sha256() then; fetched again next
 * time). The keyring's one field set after it is built, once, atomically.
 */
static const EVP_MD *verdict_md(const struct kp_keyring *kr)
{
	EVP_MD **slot = (EVP_MD **)&((struct kp_keyring *)kr)->verdict_md;
	EVP_MD *md = __atomic_load_n(slot, __ATOMIC_ACQUIRE), *none = NULL;

	if (md)
		return md;
	md = EVP_MD_fetch(NULL, "SHA256", NULL);
	if (md && !__atomic_compare_exchange_n(slot, &none, md, false, __ATOMIC_ACQ_REL,
					       __ATOMIC_ACQUIRE)) {
		EVP_MD_free(md); /* another thread's came first */
		md = none;
	}
	return md;
}

/*
 * The verdict id of @k over @s: the one kept in @s for @k's key (kp_keyring_preverify()),
 * else computed, and kept in @keep (@s itself, or NULL: not kept) when it could be.
 */
static bool verdict_id_of(const struct kp_keyring *kr, const struct kp_trusted_key *k,
			  const struct kp_signature *s, struct kp_signature *keep,
			  unsigned char id[32])
{
	if (s->have_verdict_id && k->have_key_id &&
	    !memcmp(s->verdict_key_id, k->key_id, sizeof(k->key_id))) {
		memcpy(id, s->verdict_id, sizeof(s->verdict_id));
		return true;
	}
	if (!verdict_id(verdict_md(kr), k, s, id))
		return false;
	if (keep) {
		memcpy(keep->verdict_id, id, sizeof(keep->verdict_id));
		memcpy(keep->verdict_key_id, k->key_id, sizeof(keep->verdict_key_id));
		keep->have_verdict_id = true;
	}
	return true;
}

/*
 * verify_now() through the memo: a verdict found is not computed again; one computed is kept
 * for later runs when it verifies, for this run only when it does not (sig-memo.h). The
 * verdict id kept in @keep (verdict_id_of()).
 */
static int verify_with(const struct kp_keyring *kr, const struct kp_trusted_key *k,
		       const struct kp_signature *s, struct kp_signature *keep)
{
	unsigned char id[32];
	bool have_id = kr->memo && verdict_id_of(kr, k, s, keep, id);
	int known = have_id ? kp_sig_memo_lookup(kr->memo, id) : -1, r;

	if (known >= 0)
		return known;
	r = verify_now(kr->ecdsa, k->x509, s);
	if (r < 0)
		return -1; /* no verdict: nothing remembered */
	if (r && have_id)
		kp_sig_memo_add(kr->memo, id);
	else
		kp_sig_memo_failed(kr->memo, have_id ? id : NULL);
	return r;
}

/* The signer's asymmetric key id is the key's id[0] (serial + issuer) or id[1] (SKID). */
static bool matches_cert(X509 *x, const struct kp_signature *s)
{
	if (s->skid) {
		const ASN1_OCTET_STRING *skid = X509_get0_subject_key_id(x);

		return skid && (size_t)ASN1_STRING_length(skid) == s->skid_len &&
		       !memcmp(ASN1_STRING_get0_data(skid), s->skid, s->skid_len);
	} else {
		const ASN1_INTEGER *serial = X509_get0_serialNumber(x);
		const unsigned char *der = NULL;
		size_t n = 0;

		/* the parsed certificate's own encoding: no allocation, no failure to mistake
		 * for "another signer" */
		if (X509_NAME_get0_der(X509_get_issuer_name(x), &der, &n) != 1)
			return false;
		return n == s->issuer_len && !memcmp(der, s->issuer, n) &&
		       (size_t)ASN1_STRING_length(serial) == s->serial_len &&
		       !memcmp(ASN1_STRING_get0_data(serial), s->serial, s->serial_len);
	}
}

/* A key known by description only: its id (SKID or serial), or its name for a self-signed signer.
 */
static bool matches_description(const struct kp_trusted_key *k, const struct kp_signature *s)
{
	const unsigned char *id = s->skid ? s->skid : s->serial;
	size_t len = s->skid ? s->skid_len : s->serial_len;

	if (strlen(k->id_hex) == len * 2) {
		bool same = true;

		for (size_t i = 0; i < len && same; i++)
			same = hexval(k->id_hex[2 * i]) == id[i] >> 4 &&
			       hexval(k->id_hex[2 * i + 1]) == (id[i] & 15);
		if (same)
			return true;
	}
	return !s->skid && s->signer && !strcmp(k->subject, s->signer);
}

/*
 * A /proc/keys description of a certificate of an image's revocation list: /proc/keys does
 * not say which keyring holds a key, and .blacklist holds those (load_revocation_...()).
 */
static bool describes_revoked(const struct kp_keyring *kr, const struct kp_trusted_key *k)
{
	for (size_t i = 0; i < kr->nrevoked; i++) {
		const ASN1_OCTET_STRING *skid = X509_get0_subject_key_id(kr->revoked[i]);
		const ASN1_STRING *id = skid ? skid : X509_get0_serialNumber(kr->revoked[i]);
		const unsigned char *d = ASN1_STRING_get0_data(id);
		size_t n = (size_t)ASN1_STRING_length(id);
		bool same = kr->revoked_image[i] && strlen(k->id_hex) == 2 * n;

		for (size_t b = 0; b < n && same; b++)
			same = hexval(k->id_hex[2 * b]) == d[b] >> 4 &&
			       hexval(k->id_hex[2 * b + 1]) == (d[b] & 15);
		if (same)
			return true;
	}
	return false;
}

/*
 * pkcs7_validate_trust_one() for a module signature (no certificates in the message: the
 * direct signer lookup, then verify_signature()) against the keys of one pass.
 */
static enum kp_sig_trust search(const struct kp_keyring *kr, const struct kp_signature *s,
				struct kp_signature *keep, bool after, int pass,
				const struct kp_trusted_key **key)
{
	/* "see if we have a trusted public key that matches the signed info directly"; the
	 * first match decides (find_asymmetric_key()) */
	for (size_t i = 0; i < kr->nkeys; i++) {
		const struct kp_trusted_key *k = &kr->keys[i];

		if ((after ? k->pass_after : k->pass) != pass || !k->have_cert ||
		    !matches_cert(k->x509, s))
			continue;
		*key = k;
		if (!s->digest_len || !EVP_get_digestbyname(s->hash_algo))
			return KP_TRUST_UNCHECKED;
		/* verify_signature() failing: "-EKEYREJECTED [verify %d]" */
		switch (verify_with(kr, k, s, keep)) {
		case 1:
			return KP_TRUST_VERIFIED;
		case 0:
			return KP_TRUST_BAD_SIGNATURE;
		default:
			return KP_TRUST_ERROR;
		}
	}
	for (size_t i = 0; i < kr->nkeys; i++)
		if ((after ? kr->keys[i].pass_after : kr->keys[i].pass) == pass &&
		    !kr->keys[i].have_cert && matches_description(&kr->keys[i], s) &&
		    !describes_revoked(kr, &kr->keys[i])) {
			*key = &kr->keys[i];
			return KP_TRUST_ID_ONLY;
		}
	return KP_TRUST_NO_KEY;
}

/*
 * is_key_on_revocation_list(), certs/blacklist.c (v5.13+; Debian's 5.10 has it):
 * pkcs7_validate_trust() against .blacklist is 0 (-EKEYREJECTED) only when a certificate
 * there is the signer and verifies the signature. The image's revocation_certificate_list
 * always counts (it exists only with SYSTEM_REVOCATION_LIST); dbx and MokListXRT (the latter
 * under Secure Boot only) with the model's SYSTEM_REVOCATION_LIST. Its index, or -1.
 */
static ssize_t revoker(const struct kp_keyring *kr, const struct kp_signature *s)
{
	bool listed = kr->have_model && kr->model.revocation_list;

	for (size_t i = 0; i < kr->nrevoked; i++) {
		struct kp_trusted_key k = { .x509 = kr->revoked[i], .have_cert = true };

		if (!kr->revoked_image[i] &&
		    (!listed || (!kr->model.secure_boot && kr->revoked_mok[i])))
			continue;
		if (!matches_cert(kr->revoked[i], s))
			continue;
		/* an algorithm libcrypto cannot check: taken as verifying (as for trusted keys) */
		if (!s->digest_len || !EVP_get_digestbyname(s->hash_algo))
			return (ssize_t)i;
		k.have_key_id = kp_x509_key_id(kr->revoked[i], k.key_id);
		if (verify_with(kr, &k, s, NULL) == 1)
			return (ssize_t)i;
	}
	return -1;
}

bool kp_keyring_revoked(const struct kp_keyring *kr, const struct kp_signature *s)
{
	return revoker(kr, s) >= 0;
}

const char *kp_keyring_revoked_by(const struct kp_keyring *kr, const struct kp_signature *s,
				  bool *image)
{
	ssize_t i = revoker(kr, s);

	*image = i >= 0 && kr->revoked_image[i];
	return i < 0 ? NULL : kr->revoked_source[i];
}

size_t kp_keyring_unplaced(const struct kp_keyring *kr, const char **source)
{
	size_t n = 0;

	*source = NULL;
	for (size_t i = 0; i < kr->nkeys; i++)
		if (kr->keys[i].origin == KP_KEY_KERNEL && kr->keys[i].list_unknown &&
		    !kr->keys[i].pass) {
			if (!n)
				*source = kr->keys[i].source;
			n++;
		}
	return n;
}

/*
 * mod_verify_sig(): verify_pkcs7_signature() with the secondary keyring (builtin, secondary,
 * .machine) and, on -ENOKEY, the platform keyring (Debian). verify_pkcs7_message_sig(),
 * certs/system_keyring.c: the revocation list before the keyring search since "certs:
 * Reference revocation list for all keyrings" (profile row revocation_all_keyrings; taken so
 * without a model), before the platform retry only in older kernels (the 6.1.192 tree).
 */
static enum kp_sig_trust verify(const struct kp_keyring *kr, const struct kp_signature *s,
				struct kp_signature *keep, bool after,
				const struct kp_trusted_key **key)
{
	enum kp_sig_trust t;
	bool first = !kr->have_model || kr->model.revocation_first;

	*key = NULL;
	if (first && kp_keyring_revoked(kr, s))
		return KP_TRUST_REVOKED;
	t = search(kr, s, keep, after, 1, key);
	if (t != KP_TRUST_NO_KEY || !kr->have_model || !kr->model.platform_for_modules ||
	    !kr->model.platform_keyring)
		return t;
	if (!first && kp_keyring_revoked(kr, s))
		return KP_TRUST_REVOKED;
	return search(kr, s, keep, after, 2, key);
}

enum kp_sig_trust kp_keyring_verify(const struct kp_keyring *kr, const struct kp_signature *s,
				    const struct kp_trusted_key **key)
{
	return verify(kr, s, NULL, false, key);
}

enum kp_sig_trust kp_keyring_verify_after_reboot(const struct kp_keyring *kr,
						 const struct kp_signature *s,
						 const struct kp_trusted_key **key)
{
	return verify(kr, s, NULL, true, key);
}

int kp_keyring_preverify(const struct kp_keyring *kr, struct kp_signature *s, struct kp_err *err)
{
	const struct kp_trusted_key *key;
	enum kp_sig_trust t;

	if (!s->present || s->malformed || s->pkcs7_err || !s->digest_len || kp_keyring_empty(kr))
		return 0;
	t = verify(kr, s, s, false, &key);
	/* the next boot's keyrings differ only with a pending MOK enrolment */
	for (size_t i = 0; i < kr->nkeys && t != KP_TRUST_ERROR; i++)
		if (kr->keys[i].origin == KP_KEY_MOK_PENDING) {
			t = verify(kr, s, s, true, &key);
			break;
		}
	if (t == KP_TRUST_ERROR)
		return kp_err_set(
			err,
			"cannot verify its signature: OpenSSL failed (out of memory or an "
			"internal error) with key '%s'",
			key && key->subject ? key->subject : "?");
	return 0;
}

const struct kp_trusted_key *kp_keyring_find_signer(const struct kp_keyring *kr,
						    const struct kp_signature *s)
{
	const struct kp_trusted_key *named = NULL;

	for (size_t i = 0; i < kr->nkeys; i++) {
		const struct kp_trusted_key *k = &kr->keys[i];

		if (!k->have_cert || !matches_cert(k->x509, s))
			continue;
		if (k->origin != KP_KEY_NAMED)
			return k;
		if (!named)
			named = k;
	}
	return named;
}

const struct kp_trusted_key *kp_keyring_name_of(const struct kp_keyring *kr,
						const struct kp_trusted_key *k)
{
	if (!k || !k->have_cert)
		return NULL;
	if (k->origin == KP_KEY_NAMED)
		return k;
	for (size_t i = 0; i < kr->nkeys; i++)
		if (kr->keys[i].origin == KP_KEY_NAMED && !X509_cmp(kr->keys[i].x509, k->x509))
			return &kr->keys[i];
	return NULL;
}

const char *kp_key_origin_name(enum kp_key_origin o)
{
	static const char *const names[] = {
		[KP_KEY_KERNEL] = "built into the kernel",
		[KP_KEY_CERT] = "--trusted-cert",
		[KP_KEY_LISTED] = "listed in /proc/keys",
		[KP_KEY_DB] = "UEFI db",
		[KP_KEY_MOK] = "MOK (enrolled)",
		[KP_KEY_MOK_PENDING] = "MOK (enrolment pending: MokNew)",
		[KP_KEY_NAMED] = "not enrolled anywhere kopolicy read",
	};

	return (size_t)o < KP_ARRAY_SIZE(names) ? names[o] : "unknown";
}

bool kp_keyring_hash_blacklisted(const struct kp_keyring *kr, const struct kp_signature *s)
{
	if (!s->have_file_sha256)
		return false;
	return kp_keyring_in_hashes(kr->blacklist, kr->blacklist_mok, kr->nblacklist,
				    s->file_sha256, kr->have_model && kr->model.secure_boot);
}

const char *kp_sig_trust_name(enum kp_sig_trust t)
{
	static const char *const names[] = {
		[KP_TRUST_VERIFIED] = "verified",
		[KP_TRUST_NO_KEY] = "no-trusted-key",
		[KP_TRUST_BAD_SIGNATURE] = "bad-signature",
		[KP_TRUST_ID_ONLY] = "key-id-only",
		[KP_TRUST_UNCHECKED] = "unchecked",
		[KP_TRUST_REVOKED] = "revoked",
		[KP_TRUST_ERROR] = "error",
	};

	return t < KP_ARRAY_SIZE(names) ? names[t] : "unknown";
}

void kp_sig_key_id(const struct kp_signature *s, char *buf, size_t len)
{
	const unsigned char *id = s->skid ? s->skid : s->serial;
	size_t n = s->skid ? s->skid_len : s->serial_len, at;

	if (!len)
		return;
	buf[0] = '\0';
	if (!id)
		return;
	at = (size_t)snprintf(buf, len, "%s", s->skid ? "skid:" : "serial:");
	for (size_t i = 0; i < n && at + 3 <= len; i++, at += 2)
		snprintf(buf + at, 3, "%02x", id[i]);
}

const char *kp_sig_check(const struct kp_keyring *kr, const struct kp_signature *s,
			 const struct kp_trusted_key **key)
{
	*key = NULL;
	if (!s->present)
		return "unsigned";
	if (s->malformed || s->id_type != 2 || !s->params_zero || !s->pkcs7_der || s->pkcs7_err ||
	    s->pkcs7_verify_err)
		return "malformed";
	if (!kr || kp_keyring_empty(kr))
		return "no-key-source";
	return kp_sig_trust_name(kp_keyring_verify(kr, s, key));
}
