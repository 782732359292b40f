// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The keyring's sources (sig-keys.h): certificate files, EFI signature lists (db, dbx, the
 * MOK lists), the certificates of kernel images (found by image-certs.c) and the running
 * kernel's /proc/keys, each read into keys or revocations of the keyring.
 */
#include "sig-keys-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "efi-siglist.h"
#include "file/bytes.h"
#include "file/inputs.h"
#include "file/rootopen.h"
#include "image-certs-internal.h"

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
	if (kp_keyring_add_line(&kr->arena, &kr->sources, &kr->nsources,
				kp_arena_strdup(&kr->arena, line)) < 0)
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
			kp_key_place(k, m, false, &k->keyring, &k->pass);
			kp_key_place(k, m, true, &k->keyring_after, &k->pass_after);
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
	return kp_keyring_add_line(&kr->arena, &kr->sources, &kr->nsources,
				   kp_arena_strdup(&kr->arena, line));
}

int kp_keyring_add_kernel_image(struct kp_keyring *kr, const char *path, size_t max,
				struct kp_err *err)
{
	return kp_keyring_add_kernel_image_in(kr, NULL, path, max, err);
}

int kp_keyring_add_kernel_image_in(struct kp_keyring *kr, const struct kp_root_dir *root,
				   const char *path, size_t max, struct kp_err *err)
{
	struct found_certs f = { 0 };
	enum img_role *role = NULL;
	const char *label = kp_arena_strdup(&kr->arena, path);
	int r = -1;

	if (!label)
		return kp_err_set(err, "out of memory");
	if (kp_image_certs_get(kr->memo, root, path, max, &f, &role, err) == 0)
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
	/* the root @path lies under, its own copy (path and directory): the thread's */
	struct kp_root_dir root;
	bool in_root;
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

	p->r = kp_image_certs_get(p->memo, p->in_root ? &p->root : NULL, p->path, p->max, &p->f,
				  &p->role, &p->err);
	return NULL;
}

struct kp_image_read *kp_keyring_image_begin(struct kp_keyring *kr, const char *path, size_t max)
{
	return kp_keyring_image_begin_in(kr, NULL, path, max);
}

static void image_read_free(struct kp_image_read *p)
{
	if (p->root.fd >= 0)
		close(p->root.fd);
	free((char *)p->root.path);
	free(p->path);
	free(p);
}

struct kp_image_read *kp_keyring_image_begin_in(struct kp_keyring *kr,
						const struct kp_root_dir *root, const char *path,
						size_t max)
{
	struct kp_image_read *p;

	if (!kp_image_slow_payload(root, path))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->root.fd = -1;
	/* the caller's root may go before _end(): the thread keeps its own */
	p->in_root = root && root->path;
	if (!(p->path = strdup(path)) || (p->in_root && !(p->root.path = strdup(root->path))) ||
	    (p->in_root && root->fd >= 0 &&
	     (p->root.fd = fcntl(root->fd, F_DUPFD_CLOEXEC, 0)) < 0)) {
		image_read_free(p);
		return NULL;
	}
	p->memo = kr->memo;
	p->max = max;
	p->nkeys = kr->nkeys;
	p->nrevoked = kr->nrevoked;
	p->nsources = kr->nsources;
	if (pthread_create(&p->thread, NULL, image_thread, p) != 0) {
		image_read_free(p);
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
	image_read_free(p);
	return r;
}

int kp_installed_image_path(const char *root, const char *release, char *path, size_t len)
{
	const struct kp_root_dir rd = { .path = root, .fd = -1 };

	return kp_installed_image_path_in(&rd, release, path, len);
}

int kp_installed_image_path_in(const struct kp_root_dir *rd, const char *release, char *path,
			       size_t len)
{
	const char *root = rd->path;

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

		struct kp_err quiet = { 0 };
		struct stat st;
		int fd;

		snprintf(path, len, "%s%s%s%s", root, where[i][0], release, where[i][1]);
		if (kp_root_rel(root, path)) {
			/* under a root: a regular file there, every link followed inside it */
			fd = kp_open_regular_in(rd, path, &st, &quiet);
			if (fd < 0)
				continue;
			close(fd);
			return 1;
		}
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
	const struct kp_root_dir rd = { .path = root, .fd = -1 };
	char path[4096];

	if (!kp_installed_image_path_in(&rd, release, path, sizeof(path)))
		return 0;
	return kp_keyring_add_kernel_image_in(kr, &rd, path, max, err) < 0
		       ? kp_err_prefix(err, path)
		       : 1;
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
		return kp_keyring_add_line(&kr->arena, &kr->keyrings, &kr->nkeyrings,
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
		struct kp_trusted_key *k = kp_keyring_new_key(kr, KP_KEY_LISTED);
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
		snprintf(summary, sizeof(summary),
			 "%s: cannot read (%s): the running kernel's "
			 "keys are unknown",
			 path, strerror(e));
		return kp_keyring_add_line(&kr->arena, &kr->sources, &kr->nsources,
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
	if (kp_keyring_add_line(&kr->arena, &kr->sources, &kr->nsources,
				kp_arena_strdup(&kr->arena, summary)) < 0)
		return kp_err_set(err, "out of memory");
	return nkeys;
}
