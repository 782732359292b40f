// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The keyring's certificate sources (sig-keys.h): certificate files (--trusted-cert, --mok,
 * --mok-pending, certificates by name) and EFI signature lists (db, dbx, the MOK lists), and
 * what every source adds with: a certificate as a key, a revoked certificate, a hash. The
 * kernel image's certificates: sig-keys-image.c; /proc/keys: sig-keys-proc.c.
 */
#include "sig-keys-internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "efi-siglist.h"
#include "file/bytes.h"

/* x509_key_preparse(): the description is "<CN or O>: <SKID, else serial, in hex>". */
int kp_keyring_add_x509(struct kp_keyring *kr, X509 *x, const char *source,
			enum kp_key_origin origin)
{
	const ASN1_OCTET_STRING *skid = X509_get0_subject_key_id(x);
	const ASN1_INTEGER *serial = X509_get0_serialNumber(x);
	X509_NAME *subj = X509_get_subject_name(x);
	struct kp_trusted_key *k;
	char cn[256] = "";

	/* the same certificate from two sources is one key */
	for (size_t i = 0; i < kr->nkeys; i++)
		if (kr->keys[i].x509 && kr->keys[i].origin == origin &&
		    !X509_cmp(kr->keys[i].x509, x)) {
			X509_free(x);
			return 0;
		}
	if (X509_NAME_get_text_by_NID(subj, NID_commonName, cn, sizeof(cn)) <= 0 &&
	    X509_NAME_get_text_by_NID(subj, NID_organizationName, cn, sizeof(cn)) <= 0)
		X509_NAME_oneline(subj, cn, sizeof(cn));
	k = kp_keyring_new_key(kr, origin);
	if (!k) {
		X509_free(x);
		return -1;
	}
	k->x509 = x;
	k->have_cert = true;
	k->have_key_id = kp_x509_key_id(x, k->key_id);
	k->source = source;
	k->subject = kp_arena_strdup(&kr->arena, cn);
	if (skid) {
		k->skid_len = (size_t)ASN1_STRING_length(skid);
		k->skid = ASN1_STRING_get0_data(skid); /* owned by @x */
		k->id_hex = kp_keyring_hex(&kr->arena, k->skid, k->skid_len);
	} else {
		k->id_hex = kp_keyring_hex(&kr->arena, ASN1_STRING_get0_data(serial),
					   (size_t)ASN1_STRING_length(serial));
	}
	return k->subject && k->id_hex ? 1 : -1;
}

static int add_source(struct kp_keyring *kr, const char *what, const char *path, int n)
{
	char line[8800];

	snprintf(line, sizeof(line), "%s %s: %d certificate%s", what, path, n, n == 1 ? "" : "s");
	return kp_keyring_add_line(&kr->arena, &kr->sources, &kr->nsources,
				   kp_arena_strdup(&kr->arena, line));
}

/* The certificates of a PEM or DER file as keys of @origin: their number, or -1 with @err. */
/* @path read inside @root as kp_bytes_read_in() (NULL: by name) */
static int cert_file(struct kp_keyring *kr, const struct kp_root_dir *root, const char *path,
		     enum kp_key_origin origin, const char *name, struct kp_err *err)
{
	struct kp_bytes b;
	const char *label;
	int n = 0, r;

	if (kp_bytes_read_in(root, path, (size_t)64 << 20, &b, err) < 0)
		return -1;
	label = kp_arena_strdup(&kr->arena, name ? name : path);
	if (!label) {
		kp_bytes_release(&b);
		return kp_err_set(err, "out of memory");
	}
	if (memmem(b.data, b.len, "-----BEGIN", 10)) {
		BIO *bio = BIO_new_mem_buf(b.data, (int)b.len);
		X509 *x;

		while (bio && (x = PEM_read_bio_X509(bio, NULL, NULL, NULL))) {
			r = kp_keyring_add_x509(kr, x, label, origin);
			if (r < 0) {
				BIO_free(bio);
				kp_bytes_release(&b);
				return kp_err_set(err, "out of memory");
			}
			n++; /* a duplicate is still a certificate of the file */
		}
		BIO_free(bio);
	} else {
		const unsigned char *p = b.data;
		X509 *x = d2i_X509(NULL, &p, (long)b.len);

		if (x) {
			r = kp_keyring_add_x509(kr, x, label, origin);
			if (r < 0) {
				kp_bytes_release(&b);
				return kp_err_set(err, "out of memory");
			}
			n++; /* a duplicate is still a certificate of the file */
		}
	}
	kp_bytes_release(&b);
	if (!n)
		return kp_err_set(err, "no X.509 certificate (PEM or DER) in this file");
	return n;
}

int kp_keyring_add_cert_file(struct kp_keyring *kr, const char *path, struct kp_err *err)
{
	int n = cert_file(kr, NULL, path, KP_KEY_CERT, NULL, err);

	return n < 0 ? -1 : add_source(kr, "--trusted-cert", path, n);
}

int kp_keyring_add_mok_file(struct kp_keyring *kr, const char *path, bool pending,
			    struct kp_err *err)
{
	int n = cert_file(kr, NULL, path, pending ? KP_KEY_MOK_PENDING : KP_KEY_MOK, NULL, err);

	return n < 0 ? -1 : add_source(kr, pending ? "--mok-pending" : "--mok", path, n);
}

int kp_keyring_add_named_cert(struct kp_keyring *kr, const char *path, const char *name,
			      struct kp_err *err)
{
	return kp_keyring_add_named_cert_in(kr, NULL, path, name, err);
}

int kp_keyring_add_named_cert_in(struct kp_keyring *kr, const struct kp_root_dir *root,
				 const char *path, const char *name, struct kp_err *err)
{
	const char *nm = kp_arena_strdup(&kr->arena, name);
	size_t first = kr->nkeys;
	struct stat st;
	int n;

	if (!nm)
		return kp_err_set(err, "out of memory");
	if (kp_stat_in(root, path, &st) < 0)
		return 0;
	n = cert_file(kr, root, path, KP_KEY_NAMED, NULL, err);
	if (n < 0)
		return -1;
	for (size_t i = first; i < kr->nkeys; i++)
		kr->keys[i].name = nm;
	{
		char what[4300];

		/* named in findings; trusted only as a MOK or db key elsewhere */
		snprintf(what, sizeof(what), "%.4096s (by name, not a trust anchor)", path);
		return add_source(kr, name, what, n) < 0 ? kp_err_set(err, "out of memory") : 1;
	}
}

/* A hash into @list (arena-grown), with its from-MOK flag. */
int kp_keyring_add_hash(struct kp_arena *a, unsigned char (**list)[32], bool **from_mok, size_t *n,
			const unsigned char *h, bool mok)
{
	unsigned char(*p)[32] = kp_arena_alloc(a, (*n + 1) * sizeof(*p));
	bool *f = kp_arena_alloc(a, (*n + 1) * sizeof(*f));

	if (!p || !f)
		return -1;
	if (*n) {
		memcpy(p, *list, *n * sizeof(*p));
		if (*from_mok)
			memcpy(f, *from_mok, *n * sizeof(*f));
		else
			memset(f, 0, *n * sizeof(*f));
	}
	memcpy(p[*n], h, 32);
	f[*n] = mok;
	(*n)++;
	*list = p;
	*from_mok = f;
	return 0;
}

/* A revoked certificate (taken: freed on failure) into kr->revoked, arena-grown. */
int kp_keyring_add_revoked(struct kp_keyring *kr, X509 *x, bool mok, bool image, const char *source)
{
	size_t n = kr->nrevoked;
	void **p = kp_arena_alloc(&kr->arena, (n + 1) * sizeof(*p));
	bool *f = kp_arena_alloc(&kr->arena, (n + 1) * sizeof(*f));
	bool *im = kp_arena_alloc(&kr->arena, (n + 1) * sizeof(*im));
	const char **src = kp_arena_alloc(&kr->arena, (n + 1) * sizeof(*src));

	if (!p || !f || !im || !src) {
		X509_free(x);
		return -1;
	}
	if (n) {
		memcpy(p, kr->revoked, n * sizeof(*p));
		memcpy(f, kr->revoked_mok, n * sizeof(*f));
		memcpy(im, kr->revoked_image, n * sizeof(*im));
		memcpy(src, kr->revoked_source, n * sizeof(*src));
	}
	p[n] = x;
	f[n] = mok;
	im[n] = image;
	src[n] = source;
	kr->revoked = p;
	kr->revoked_mok = f;
	kr->revoked_image = im;
	kr->revoked_source = src;
	kr->nrevoked = n + 1;
	return 0;
}

struct esl_ctx {
	struct kp_keyring *kr;
	enum kp_esl_role role;
	const char *label;
	int n;
};

/* get_handler_for_db(), _mok() and _dbx() (platform_certs/keyring_handler.c). */
static int esl_element(enum kp_esl_type t, const unsigned char *owner, const unsigned char *d,
		       size_t len, void *arg)
{
	struct esl_ctx *e = arg;
	struct kp_keyring *kr = e->kr;
	bool revoke = e->role == KP_ESL_DBX || e->role == KP_ESL_MOKX;
	bool mok = e->role == KP_ESL_MOKX;

	(void)owner;
	if (t == KP_ESL_X509) {
		const unsigned char *q = d;
		X509 *x = d2i_X509(NULL, &q, (long)len);
		int r;

		if (!x)
			return 0; /* x509_cert_parse() fails: the kernel logs it and goes on */
		if (revoke) {
			if (kp_keyring_add_revoked(kr, x, mok, false, e->label) < 0)
				return 1;
			e->n++;
			return 0;
		}
		r = kp_keyring_add_x509(kr, x, e->label,
					e->role == KP_ESL_DB		? KP_KEY_DB
					: e->role == KP_ESL_MOK_PENDING ? KP_KEY_MOK_PENDING
									: KP_KEY_MOK);
		if (r < 0)
			return 1;
		e->n += r;
		return 0;
	}
	if (!revoke || len < 32)
		return 0; /* db and MOK: only certificates; a short hash is no SHA-256 */
	if (t == KP_ESL_SHA256) {
		/* uefi_blacklist_binary(): "bin:" into .blacklist */
		if (kp_keyring_add_hash(&kr->arena, &kr->blacklist, &kr->blacklist_mok,
					&kr->nblacklist, d, mok) < 0)
			return 1;
		e->n++;
		return 0;
	}
	if (t == KP_ESL_X509_SHA256) {
		/* uefi_blacklist_x509_tbs(): "tbs:"; the certificate is never loaded */
		if (kp_keyring_add_hash(&kr->arena, &kr->tbs, &kr->tbs_mok, &kr->ntbs, d, mok) < 0)
			return 1;
		e->n++;
	}
	return 0;
}

int kp_keyring_add_esl(struct kp_keyring *kr, const unsigned char *p, size_t len,
		       enum kp_esl_role role, const char *label, struct kp_err *err)
{
	struct esl_ctx e = { kr, role, kp_arena_strdup(&kr->arena, label), 0 };
	char line[600];
	size_t skipped = 0;
	int r;

	if (!e.label)
		return kp_err_set(err, "out of memory");
	r = kp_esl_walk(p, len, esl_element, &e, &skipped, err);
	if (r > 0)
		return kp_err_set(err, "out of memory");
	snprintf(line, sizeof(line), "%s: %d certificate%s or hash%s%s", label, e.n,
		 e.n == 1 ? "" : "s", e.n == 1 ? "" : "es", r < 0 ? " (malformed list)" : "");
	if (kp_keyring_add_line(&kr->arena, &kr->sources, &kr->nsources,
				kp_arena_strdup(&kr->arena, line)) < 0)
		return kp_err_set(err, "out of memory");
	return r < 0 ? -1 : e.n;
}
