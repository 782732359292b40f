// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sig-keys.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "file/inputs.h"
#include "image-certs-internal.h"
#include "ecdsa-nettle.h"
#include "efi-siglist.h"
#include "file/bytes.h"
#include "util/content-hash.h"
#include "util/io.h"
#include "util/openssl-err.h"

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

static const char *hex(struct kp_arena *a, const unsigned char *p, size_t len)
{
	char *s = kp_arena_alloc(a, len * 2 + 1);

	if (!s)
		return NULL;
	for (size_t i = 0; i < len; i++)
		snprintf(s + 2 * i, 3, "%02x", p[i]);
	s[len * 2] = '\0';
	return s;
}

static int add_line(struct kp_arena *a, const char ***list, size_t *n, const char *line)
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
static void place(struct kp_trusted_key *k, const struct kp_keyring_model *m, bool after,
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

static struct kp_trusted_key *new_key(struct kp_keyring *kr, enum kp_key_origin origin)
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
	place(k, kr->have_model ? &kr->model : NULL, false, &k->keyring, &k->pass);
	place(k, kr->have_model ? &kr->model : NULL, true, &k->keyring_after, &k->pass_after);
	return k;
}

static bool in_hashes(unsigned char (*list)[32], const bool *from_mok, size_t n,
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
		k->tbs_blacklisted = k->have_cert && k->origin != KP_KEY_NAMED && tbs_hash(k->x509, h) &&
				     in_hashes(kr->tbs, kr->tbs_mok, kr->ntbs, h, m->secure_boot);
		place(k, m, false, &k->keyring, &k->pass);
		place(k, m, true, &k->keyring_after, &k->pass_after);
	}
}

/* SHA-256 of the certificate's SubjectPublicKeyInfo (DER): what a verdict is about. */
static bool key_id(X509 *x, unsigned char id[32])
{
	unsigned char *der = NULL;
	int n = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(x), &der);
	bool ok = n > 0 && EVP_Digest(der, (size_t)n, id, NULL, EVP_sha256(), NULL) == 1;

	OPENSSL_free(der);
	return ok;
}

/* x509_key_preparse(): the description is "<CN or O>: <SKID, else serial, in hex>". */
static int add_x509(struct kp_keyring *kr, X509 *x, const char *source, enum kp_key_origin origin)
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
	k = new_key(kr, origin);
	if (!k) {
		X509_free(x);
		return -1;
	}
	k->x509 = x;
	k->have_cert = true;
	k->have_key_id = key_id(x, k->key_id);
	k->source = source;
	k->subject = kp_arena_strdup(&kr->arena, cn);
	if (skid) {
		k->skid_len = (size_t)ASN1_STRING_length(skid);
		k->skid = ASN1_STRING_get0_data(skid); /* owned by @x */
		k->id_hex = hex(&kr->arena, k->skid, k->skid_len);
	} else {
		k->id_hex = hex(&kr->arena, ASN1_STRING_get0_data(serial),
				(size_t)ASN1_STRING_length(serial));
	}
	return k->subject && k->id_hex ? 1 : -1;
}

static int add_source(struct kp_keyring *kr, const char *what, const char *path, int n)
{
	char line[8800];

	snprintf(line, sizeof(line), "%s %s: %d certificate%s", what, path, n, n == 1 ? "" : "s");
	return add_line(&kr->arena, &kr->sources, &kr->nsources, kp_arena_strdup(&kr->arena, line));
}

/* The certificates of a PEM or DER file as keys of @origin: their number, or -1 with @err. */
static int cert_file(struct kp_keyring *kr, const char *path, enum kp_key_origin origin,
		     const char *name, struct kp_err *err)
{
	struct kp_bytes b;
	const char *label;
	int n = 0, r;

	if (kp_bytes_read(path, (size_t)64 << 20, &b, err) < 0)
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
			r = add_x509(kr, x, label, origin);
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
			r = add_x509(kr, x, label, origin);
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
	int n = cert_file(kr, path, KP_KEY_CERT, NULL, err);

	return n < 0 ? -1 : add_source(kr, "--trusted-cert", path, n);
}

int kp_keyring_add_mok_file(struct kp_keyring *kr, const char *path, bool pending,
			    struct kp_err *err)
{
	int n = cert_file(kr, path, pending ? KP_KEY_MOK_PENDING : KP_KEY_MOK, NULL, err);

	return n < 0 ? -1 : add_source(kr, pending ? "--mok-pending" : "--mok", path, n);
}

int kp_keyring_add_named_cert(struct kp_keyring *kr, const char *path, const char *name,
			      struct kp_err *err)
{
	const char *nm = kp_arena_strdup(&kr->arena, name);
	size_t first = kr->nkeys;
	struct stat st;
	int n;

	if (!nm)
		return kp_err_set(err, "out of memory");
	if (kp_in_stat(path, &st) < 0)
		return 0;
	n = cert_file(kr, path, KP_KEY_NAMED, NULL, err);
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
static int add_hash(struct kp_arena *a, unsigned char (**list)[32], bool **from_mok, size_t *n,
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
static int add_revoked(struct kp_keyring *kr, X509 *x, bool mok, bool image, const char *source)
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
			if (add_revoked(kr, x, mok, false, e->label) < 0)
				return 1;
			e->n++;
			return 0;
		}
		r = add_x509(kr, x, e->label,
			     e->role == KP_ESL_DB	     ? KP_KEY_DB
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
		if (add_hash(&kr->arena, &kr->blacklist, &kr->blacklist_mok, &kr->nblacklist, d,
			     mok) < 0)
			return 1;
		e->n++;
		return 0;
	}
	if (t == KP_ESL_X509_SHA256) {
		/* uefi_blacklist_x509_tbs(): "tbs:"; the certificate is never loaded */
		if (add_hash(&kr->arena, &kr->tbs, &kr->tbs_mok, &kr->ntbs, d, mok) < 0)
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
	if (add_line(&kr->arena, &kr->sources, &kr->nsources, kp_arena_strdup(&kr->arena, line)) <
	    0)
		return kp_err_set(err, "out of memory");
	return r < 0 ? -1 : e.n;
}

/*
 * The certificates of @f into @kr by role (their X509 taken), and the source line:
 * "kernel image PATH: N certificates" (the trusted ones, and those of no list when the image
 * has no revocation list), then the revocation list's and the untrusted ones if any.
 */
static int take_certs(struct kp_keyring *kr, struct found_certs *f, const enum img_role *role,
		      const char *label, const char *path)
{
	int keys = 0, revoked = 0, unplaced = 0;
	char line[8800];

	for (size_t i = 0; i < f->n; i++) {
		X509 *x = f->c[i].x;
		int r;

		f->c[i].x = NULL;
		if (role[i] == ROLE_REVOCATION) {
			if (add_revoked(kr, x, false, true, label) < 0)
				return -1;
			revoked++;
			continue;
		}
		r = add_x509(kr, x, label, KP_KEY_KERNEL);
		if (r < 0)
			return -1;
		if (r > 0 && role[i] != ROLE_SYSTEM) {
			struct kp_trusted_key *k = &kr->keys[kr->nkeys - 1];
			const struct kp_keyring_model *m = kr->have_model ? &kr->model : NULL;

			k->list_unknown = true;
			k->beside_revocation = role[i] == ROLE_UNPLACED_BESIDE;
			place(k, m, false, &k->keyring, &k->pass);
			place(k, m, true, &k->keyring_after, &k->pass_after);
		}
		if (role[i] == ROLE_UNPLACED_BESIDE)
			unplaced += r;
		else
			keys += r;
	}
	snprintf(line, sizeof(line), "kernel image %s: %d certificate%s", path, keys,
		 keys == 1 ? "" : "s");
	if (revoked)
		snprintf(line + strlen(line), sizeof(line) - strlen(line),
			 ", %d in its revocation list", revoked);
	if (unplaced)
		snprintf(line + strlen(line), sizeof(line) - strlen(line),
			 ", %d outside its certificate lists (not trusted)", unplaced);
	return add_line(&kr->arena, &kr->sources, &kr->nsources, kp_arena_strdup(&kr->arena, line));
}

int kp_keyring_add_kernel_image(struct kp_keyring *kr, const char *path, size_t max,
				struct kp_err *err)
{
	struct found_certs f = { 0 };
	enum img_role *role = NULL;
	const char *label = kp_arena_strdup(&kr->arena, path);
	int r = -1;

	if (!label)
		return kp_err_set(err, "out of memory");
	if (kp_image_certs_get(kr->memo, path, max, &f, &role, err) == 0)
		r = take_certs(kr, &f, role, label, label) < 0 ? kp_err_set(err, "out of memory")
							       : 0;
	kp_found_certs_release(&f);
	free(role);
	return r;
}

struct kp_image_read {
	pthread_t thread;
	struct kp_sig_memo *memo;
	char *path;
	size_t max;
	struct found_certs f;
	enum img_role *role;
	int r;
	struct kp_err err;
	/* where kp_keyring_add_kernel_image() would have put its keys, revocations, line */
	size_t nkeys, nrevoked, nsources;
};

static void *image_thread(void *arg)
{
	struct kp_image_read *p = arg;

	p->r = kp_image_certs_get(p->memo, p->path, p->max, &p->f, &p->role, &p->err);
	return NULL;
}

struct kp_image_read *kp_keyring_image_begin(struct kp_keyring *kr, const char *path, size_t max)
{
	struct kp_image_read *p;

	if (!kp_image_slow_payload(path))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p || !(p->path = strdup(path))) {
		free(p);
		return NULL;
	}
	p->memo = kr->memo;
	p->max = max;
	p->nkeys = kr->nkeys;
	p->nrevoked = kr->nrevoked;
	p->nsources = kr->nsources;
	if (pthread_create(&p->thread, NULL, image_thread, p) != 0) {
		free(p->path);
		free(p);
		return NULL;
	}
	return p;
}

/* Elements [@from, @n) of @base (each @size bytes) moved to @at (< @from), the rest after. */
static void rotate(void *base, size_t size, size_t at, size_t from, size_t n)
{
	unsigned char *b = base;

	/* three reversals, element by element, swapping byte by byte: no allocation */
	for (int pass = 0; pass < 3; pass++) {
		size_t lo = pass == 1 ? from : at, hi = pass == 0 ? from : n;

		for (; hi > lo + 1; lo++, hi--)
			for (size_t k = 0; k < size; k++) {
				unsigned char t = b[lo * size + k];

				b[lo * size + k] = b[(hi - 1) * size + k];
				b[(hi - 1) * size + k] = t;
			}
	}
}

int kp_keyring_image_end(struct kp_keyring *kr, struct kp_image_read *p, struct kp_err *err)
{
	size_t keys0 = kr->nkeys, revoked0 = kr->nrevoked, sources0 = kr->nsources;
	const char *label;
	int r;

	pthread_join(p->thread, NULL);
	r = p->r;
	if (r < 0) {
		*err = p->err;
	} else if (!(label = kp_arena_strdup(&kr->arena, p->path)) ||
		   take_certs(kr, &p->f, p->role, label, label) < 0) {
		r = kp_err_set(err, "out of memory");
	} else {
		/* what take_certs() appended goes where it would have been at _begin() */
		rotate(kr->keys, sizeof(*kr->keys), p->nkeys, keys0, kr->nkeys);
		rotate(kr->revoked, sizeof(*kr->revoked), p->nrevoked, revoked0, kr->nrevoked);
		rotate(kr->revoked_mok, sizeof(*kr->revoked_mok), p->nrevoked, revoked0,
		       kr->nrevoked);
		rotate(kr->revoked_image, sizeof(*kr->revoked_image), p->nrevoked, revoked0,
		       kr->nrevoked);
		rotate(kr->revoked_source, sizeof(*kr->revoked_source), p->nrevoked, revoked0,
		       kr->nrevoked);
		rotate(kr->sources, sizeof(*kr->sources), p->nsources, sources0, kr->nsources);
	}
	kp_found_certs_release(&p->f);
	free(p->role);
	free(p->path);
	free(p);
	return r;
}

int kp_installed_image_path(const char *root, const char *release, char *path, size_t len)
{
	static const char *const where[][2] = {
		{ "/boot/vmlinuz-", "" },
		{ "/lib/modules/", "/vmlinuz" },
		{ "/usr/lib/modules/", "/vmlinuz" },
		{ "/boot/vmlinux-", "" },
	};

	if (!release)
		return 0;
	if (!root || !strcmp(root, "/"))
		root = "";
	for (size_t i = 0; i < KP_ARRAY_SIZE(where); i++) {
		FILE *f;

		snprintf(path, len, "%s%s%s%s", root, where[i][0], release, where[i][1]);
		f = kp_in_fopen(path, "rb");
		if (!f)
			continue;
		fclose(f);
		return 1;
	}
	return 0;
}

int kp_keyring_add_installed_image(struct kp_keyring *kr, const char *root, const char *release,
				   size_t max, struct kp_err *err)
{
	char path[4096];

	if (!kp_installed_image_path(root, release, path, sizeof(path)))
		return 0;
	return kp_keyring_add_kernel_image(kr, path, max, err) < 0 ? kp_err_prefix(err, path) : 1;
}

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* A "bin:<64 hex>" or "tbs:<64 hex>" description of the .blacklist keyring (certs/blacklist.c). */
static int add_blacklist(struct kp_keyring *kr, const char *desc)
{
	bool bin = !strncmp(desc, "bin:", 4);
	unsigned char h[32];

	if ((!bin && strncmp(desc, "tbs:", 4)) || strspn(desc + 4, "0123456789abcdef") != 64)
		return 0;
	for (size_t i = 0; i < 32; i++)
		h[i] = (unsigned char)(hexval(desc[4 + 2 * i]) << 4 | hexval(desc[5 + 2 * i]));
	if (bin)
		return add_hash(&kr->arena, &kr->blacklist, &kr->blacklist_mok, &kr->nblacklist, h,
				false);
	return add_hash(&kr->arena, &kr->tbs, &kr->tbs_mok, &kr->ntbs, h, false);
}

/*
 * One /proc/keys line (security/keys/proc.c proc_keys_show()): "%08x %c%c%c%c%c%c%c %5d %4s
 * %08x %5d %5d %-9.9s " then the type's describe(): "<description>: <details>".
 */
static int proc_key(struct kp_keyring *kr, char *line, const char *label, int *nkeys)
{
	char *f[8], *save = NULL, *rest, *colon;
	size_t i;

	for (i = 0; i < 8; i++) {
		f[i] = strtok_r(i ? NULL : line, " ", &save);
		if (!f[i])
			return 0;
	}
	rest = save;
	while (rest && *rest == ' ')
		rest++;
	if (!rest)
		return 0;
	rest[strcspn(rest, "\n")] = '\0';
	if (!strcmp(f[7], "keyring") && rest[0] == '.') {
		/* ".builtin_trusted_keys: 3", ".platform: empty" */
		return add_line(&kr->arena, &kr->keyrings, &kr->nkeyrings,
				kp_arena_strdup(&kr->arena, rest));
	}
	if (!strcmp(f[7], "blacklist"))
		return add_blacklist(kr, rest);
	if (strcmp(f[7], "asymmetri") && strcmp(f[7], "asymmetric"))
		return 0;
	/* asymmetric_key_describe(): "<subject>: <id hex> X509.rsa <id8> [...]" */
	colon = strstr(rest, ": ");
	if (!colon)
		return 0;
	*colon = '\0';
	{
		struct kp_trusted_key *k = new_key(kr, KP_KEY_LISTED);
		const char *id = colon + 2;
		size_t idlen = strspn(id, "0123456789abcdef");

		if (!k)
			return -1;
		k->subject = kp_arena_strdup(&kr->arena, rest);
		k->id_hex = kp_arena_strndup(&kr->arena, id, idlen);
		k->source = label;
		if (!k->subject || !k->id_hex)
			return -1;
	}
	(*nkeys)++;
	return 0;
}

int kp_keyring_add_proc_keys(struct kp_keyring *kr, const char *root, struct kp_err *err)
{
	char path[4096], line[4096], summary[4300];
	const char *label;
	int nkeys = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/proc/keys", root && strcmp(root, "/") ? root : "");
	f = kp_in_fopen(path, "r");
	if (!f) {
		int e = errno;

		if (e == ENOENT)
			return 0;
		/* say it: the running kernel's keys are then unknown */
		snprintf(summary, sizeof(summary), "%s: cannot read (%s): the running kernel's "
						   "keys are unknown",
			 path, strerror(e));
		return add_line(&kr->arena, &kr->sources, &kr->nsources,
				kp_arena_strdup(&kr->arena, summary)) < 0
			       ? kp_err_set(err, "out of memory")
			       : 0;
	}
	label = kp_arena_strdup(&kr->arena, path);
	if (!label) {
		fclose(f);
		return kp_err_set(err, "out of memory");
	}
	while (fgets(line, sizeof(line), f))
		if (proc_key(kr, line, label, &nkeys) < 0) {
			fclose(f);
			return kp_err_set(err, "out of memory");
		}
	fclose(f);
	snprintf(summary, sizeof(summary),
		 "%s: %d asymmetric key%s (descriptions only: key ids, no "
		 "certificates), %zu blacklisted module hash%s",
		 path, nkeys, nkeys == 1 ? "" : "s", kr->nblacklist,
		 kr->nblacklist == 1 ? "" : "es");
	if (add_line(&kr->arena, &kr->sources, &kr->nsources,
		     kp_arena_strdup(&kr->arena, summary)) < 0)
		return kp_err_set(err, "out of memory");
	return nkeys;
}

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

bool kp_sig_verdict_id(const struct kp_trusted_key *k, const struct kp_signature *s,
		       unsigned char id[32])
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
	ok = EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1 &&
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

/*
 * verify_now() through the memo: a verdict found is not computed again; one computed is kept
 * for later runs when it verifies, for this run only when it does not (sig-memo.h).
 */
static int verify_with(const struct kp_keyring *kr, const struct kp_trusted_key *k,
		       const struct kp_signature *s)
{
	unsigned char id[32];
	bool have_id = kr->memo && kp_sig_verdict_id(k, s, id);
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
				bool after, int pass, const struct kp_trusted_key **key)
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
		switch (verify_with(kr, k, s)) {
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
		k.have_key_id = key_id(kr->revoked[i], k.key_id);
		if (verify_with(kr, &k, s) == 1)
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
				bool after, const struct kp_trusted_key **key)
{
	enum kp_sig_trust t;
	bool first = !kr->have_model || kr->model.revocation_first;

	*key = NULL;
	if (first && kp_keyring_revoked(kr, s))
		return KP_TRUST_REVOKED;
	t = search(kr, s, after, 1, key);
	if (t != KP_TRUST_NO_KEY || !kr->have_model || !kr->model.platform_for_modules ||
	    !kr->model.platform_keyring)
		return t;
	if (!first && kp_keyring_revoked(kr, s))
		return KP_TRUST_REVOKED;
	return search(kr, s, after, 2, key);
}

enum kp_sig_trust kp_keyring_verify(const struct kp_keyring *kr, const struct kp_signature *s,
				    const struct kp_trusted_key **key)
{
	return verify(kr, s, false, key);
}

enum kp_sig_trust kp_keyring_verify_after_reboot(const struct kp_keyring *kr,
						 const struct kp_signature *s,
						 const struct kp_trusted_key **key)
{
	return verify(kr, s, true, key);
}

int kp_keyring_preverify(const struct kp_keyring *kr, const struct kp_signature *s,
			 struct kp_err *err)
{
	const struct kp_trusted_key *key;
	enum kp_sig_trust t;

	if (!s->present || s->malformed || s->pkcs7_err || !s->digest_len || kp_keyring_empty(kr))
		return 0;
	t = verify(kr, s, false, &key);
	/* the next boot's keyrings differ only with a pending MOK enrolment */
	for (size_t i = 0; i < kr->nkeys && t != KP_TRUST_ERROR; i++)
		if (kr->keys[i].origin == KP_KEY_MOK_PENDING) {
			t = verify(kr, s, true, &key);
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
	return in_hashes(kr->blacklist, kr->blacklist_mok, kr->nblacklist, s->file_sha256,
			 kr->have_model && kr->model.secure_boot);
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
