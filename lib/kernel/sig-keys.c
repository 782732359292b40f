// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The keyring (sig-keys.h): its keys and where each lands under the kernel's keyring model.
 * The keys are read by sig-keys-sources.c, sig-keys-image.c and sig-keys-proc.c, signatures
 * checked by sig-keys-verify.c.
 */
#include "sig-keys-internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "ecdsa-nettle.h"

void kp_keyring_init(struct kp_keyring *kr)
{
	memset(kr, 0, sizeof(*kr));
}

void kp_keyring_release(struct kp_keyring *kr)
{
	for (size_t i = 0; i < kr->nkeys; i++)
		X509_free(kr->keys[i].x509);
	for (size_t i = 0; i < kr->nrevoked; i++)
		X509_free(kr->revoked[i]);
	free(kr->keys);
	kp_ecdsa_lib_free(kr->ecdsa);
	EVP_MD_free(kr->verdict_md);
	kp_arena_release(&kr->arena);
	memset(kr, 0, sizeof(*kr));
}

bool kp_keyring_empty(const struct kp_keyring *kr)
{
	/* a kernel image's revocation list refuses signatures even without a trusted key */
	for (size_t i = 0; i < kr->nrevoked; i++)
		if (kr->revoked_image[i])
			return false;
	return kr->nkeys == 0;
}

bool kp_keyring_has_mok(const struct kp_keyring *kr)
{
	for (size_t i = 0; i < kr->nkeys; i++)
		if (kr->keys[i].origin == KP_KEY_MOK || kr->keys[i].origin == KP_KEY_MOK_PENDING)
			return true;
	return false;
}

bool kp_keyring_has_kernel_keys(const struct kp_keyring *kr)
{
	for (size_t i = 0; i < kr->nkeys; i++)
		if (kr->keys[i].origin <= KP_KEY_LISTED)
			return true;
	return false;
}

const char *kp_keyring_hex(struct kp_arena *a, const unsigned char *p, size_t len)
{
	char *s = kp_arena_alloc(a, len * 2 + 1);

	if (!s)
		return NULL;
	for (size_t i = 0; i < len; i++)
		snprintf(s + 2 * i, 3, "%02x", p[i]);
	s[len * 2] = '\0';
	return s;
}

int kp_keyring_add_line(struct kp_arena *a, const char ***list, size_t *n, const char *line)
{
	const char **p = kp_arena_alloc(a, (*n + 1) * sizeof(*p));

	if (!p || !line)
		return -1;
	if (*n)
		memcpy(p, *list, *n * sizeof(*p));
	p[(*n)++] = line;
	*list = p;
	return 0;
}

/* The keyring and search pass of a key under @m (NULL: no model, only the kernel's own). */
void kp_key_place(struct kp_trusted_key *k, const struct kp_keyring_model *m, bool after,
		  const char **keyring, int *pass)
{
	enum kp_key_origin o = k->origin;

	*pass = 0;
	if (o == KP_KEY_MOK_PENDING) {
		if (!after) {
			*keyring = "pending (MokNew)";
			return;
		}
		o = KP_KEY_MOK;
	}
	if (k->tbs_blacklisted) {
		*keyring = "none: its certificate hash is blacklisted (dbx/MokListXRT)";
		return;
	}
	switch (o) {
	case KP_KEY_KERNEL:
		if (k->list_unknown && (k->beside_revocation || (m && m->revocation_list))) {
			*keyring = "none: outside the image's system certificate list (it may be "
				   "revoked)";
			return;
		}
		*keyring = ".builtin_trusted_keys";
		*pass = 1;
		return;
	case KP_KEY_CERT:
		*keyring = "--trusted-cert";
		*pass = 1;
		return;
	case KP_KEY_LISTED:
		*keyring = k->keyring ? k->keyring : "/proc/keys";
		*pass = 1;
		return;
	case KP_KEY_NAMED:
		*keyring = "none";
		return;
	case KP_KEY_MOK:
		if (!m) {
			*keyring = "MOK (no keyring model)";
			return;
		}
		if (!m->secure_boot) {
			*keyring = "none: MOK is not loaded without Secure Boot";
			return;
		}
		if (m->machine_keyring && m->mok_trusted) {
			*keyring = ".machine";
			*pass = 1;
			return;
		}
		break;
	case KP_KEY_DB:
	case KP_KEY_MOK_PENDING:
		if (!m) {
			*keyring = "UEFI db (no keyring model)";
			return;
		}
		break;
	}
	if (!m->platform_keyring) {
		*keyring = "none: no platform keyring (INTEGRITY_PLATFORM_KEYRING off)";
		return;
	}
	*keyring = m->platform_for_modules ? ".platform" : ".platform (not used for modules)";
	*pass = m->platform_for_modules ? 2 : 0;
}

struct kp_trusted_key *kp_keyring_new_key(struct kp_keyring *kr, enum kp_key_origin origin)
{
	struct kp_trusted_key *k;

	if (kp_grow(&kr->keys, &kr->cap, kr->nkeys + 1, sizeof(*kr->keys)) < 0)
		return NULL;
	/* before any verification (keys are read first): NULL when out of memory, OpenSSL's */
	if (!kr->ecdsa)
		kr->ecdsa = kp_ecdsa_lib_new();
	k = &kr->keys[kr->nkeys++];
	memset(k, 0, sizeof(*k));
	k->origin = origin;
	kp_key_place(k, kr->have_model ? &kr->model : NULL, false, &k->keyring, &k->pass);
	kp_key_place(k, kr->have_model ? &kr->model : NULL, true, &k->keyring_after,
		     &k->pass_after);
	return k;
}

bool kp_keyring_in_hashes(unsigned char (*list)[32], const bool *from_mok, size_t n,
			  const unsigned char *h, bool mok_loaded)
{
	for (size_t i = 0; i < n; i++)
		if ((mok_loaded || !from_mok || !from_mok[i]) && !memcmp(list[i], h, 32))
			return true;
	return false;
}

/* The SHA-256 of a certificate's tbsCertificate (the dbx X509_SHA256 form). */
static bool tbs_hash(X509 *x, unsigned char h[32])
{
	unsigned char *der = NULL;
	int n = i2d_re_X509_tbs(x, &der);
	bool ok = n > 0 && EVP_Digest(der, (size_t)n, h, NULL, EVP_sha256(), NULL) == 1;

	OPENSSL_free(der);
	return ok;
}

void kp_keyring_apply_model(struct kp_keyring *kr, const struct kp_keyring_model *m)
{
	kr->model = *m;
	kr->have_model = true;
	for (size_t i = 0; i < kr->nkeys; i++) {
		struct kp_trusted_key *k = &kr->keys[i];
		unsigned char h[32];

		if (k->origin == KP_KEY_LISTED)
			k->keyring = NULL; /* placed again below */
		k->tbs_blacklisted =
			k->have_cert && k->origin != KP_KEY_NAMED && tbs_hash(k->x509, h) &&
			kp_keyring_in_hashes(kr->tbs, kr->tbs_mok, kr->ntbs, h, m->secure_boot);
		kp_key_place(k, m, false, &k->keyring, &k->pass);
		kp_key_place(k, m, true, &k->keyring_after, &k->pass_after);
	}
}

/* SHA-256 of the certificate's SubjectPublicKeyInfo (DER): what a verdict is about. */
bool kp_x509_key_id(X509 *x, unsigned char id[32])
{
	unsigned char *der = NULL;
	int n = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(x), &der);
	bool ok = n > 0 && EVP_Digest(der, (size_t)n, id, NULL, EVP_sha256(), NULL) == 1;

	OPENSSL_free(der);
	return ok;
}
