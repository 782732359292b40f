// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sig-keys.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <lzma.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "cache/inputs.h"
#include "read/bytes.h"

void kp_keyring_init(struct kp_keyring *kr)
{
	memset(kr, 0, sizeof(*kr));
}

void kp_keyring_release(struct kp_keyring *kr)
{
	for (size_t i = 0; i < kr->nkeys; i++)
		X509_free(kr->keys[i].x509);
	free(kr->keys);
	kp_arena_release(&kr->arena);
	memset(kr, 0, sizeof(*kr));
}

bool kp_keyring_empty(const struct kp_keyring *kr)
{
	return kr->nkeys == 0;
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

static struct kp_trusted_key *new_key(struct kp_keyring *kr)
{
	struct kp_trusted_key *k;

	if (kp_grow(&kr->keys, &kr->cap, kr->nkeys + 1, sizeof(*kr->keys)) < 0)
		return NULL;
	k = &kr->keys[kr->nkeys++];
	memset(k, 0, sizeof(*k));
	return k;
}

/* x509_key_preparse(): the description is "<CN or O>: <SKID, else serial, in hex>". */
static int add_x509(struct kp_keyring *kr, X509 *x, const char *source, const char *keyring)
{
	const ASN1_OCTET_STRING *skid = X509_get0_subject_key_id(x);
	const ASN1_INTEGER *serial = X509_get0_serialNumber(x);
	X509_NAME *subj = X509_get_subject_name(x);
	struct kp_trusted_key *k;
	char cn[256] = "";

	/* the same certificate from two sources is one key */
	for (size_t i = 0; i < kr->nkeys; i++)
		if (kr->keys[i].x509 && !X509_cmp(kr->keys[i].x509, x)) {
			X509_free(x);
			return 0;
		}
	if (X509_NAME_get_text_by_NID(subj, NID_commonName, cn, sizeof(cn)) <= 0 &&
	    X509_NAME_get_text_by_NID(subj, NID_organizationName, cn, sizeof(cn)) <= 0)
		X509_NAME_oneline(subj, cn, sizeof(cn));
	k = new_key(kr);
	if (!k) {
		X509_free(x);
		return -1;
	}
	k->x509 = x;
	k->have_cert = true;
	k->source = source;
	k->keyring = keyring;
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
	char line[1024];

	snprintf(line, sizeof(line), "%s %s: %d certificate%s", what, path, n, n == 1 ? "" : "s");
	return add_line(&kr->arena, &kr->sources, &kr->nsources, kp_arena_strdup(&kr->arena, line));
}

int kp_keyring_add_cert_file(struct kp_keyring *kr, const char *path, struct kp_err *err)
{
	struct kp_bytes b;
	const char *label;
	int n = 0, r;

	if (kp_bytes_read(path, (size_t)64 << 20, &b, err) < 0)
		return -1;
	label = kp_arena_strdup(&kr->arena, path);
	if (!label) {
		kp_bytes_release(&b);
		return kp_err_set(err, "out of memory");
	}
	if (memmem(b.data, b.len, "-----BEGIN", 10)) {
		BIO *bio = BIO_new_mem_buf(b.data, (int)b.len);
		X509 *x;

		while (bio && (x = PEM_read_bio_X509(bio, NULL, NULL, NULL))) {
			r = add_x509(kr, x, label, "--trusted-cert");
			if (r < 0) {
				BIO_free(bio);
				kp_bytes_release(&b);
				return kp_err_set(err, "out of memory");
			}
			n += r;
		}
		BIO_free(bio);
	} else {
		const unsigned char *p = b.data;
		X509 *x = d2i_X509(NULL, &p, (long)b.len);

		if (x) {
			r = add_x509(kr, x, label, "--trusted-cert");
			if (r < 0) {
				kp_bytes_release(&b);
				return kp_err_set(err, "out of memory");
			}
			n += r;
		}
	}
	kp_bytes_release(&b);
	if (!n)
		return kp_err_set(err, "no X.509 certificate (PEM or DER) in this file");
	return add_source(kr, "--trusted-cert", path, n);
}

/*
 * The DER certificates in a kernel image: a SEQUENCE (30 82 len) holding a tbsCertificate
 * SEQUENCE that starts with the [0] version 3 field (30 82 len a0 03 02 01 02), as
 * certs/system_certificates.S includes them (and pem2der'ed by scripts/extract-cert.c).
 */
static int scan_certs(struct kp_keyring *kr, const unsigned char *p, size_t len, const char *label)
{
	int n = 0;

	for (size_t i = 0; i + 13 < len; i++) {
		const unsigned char *q;
		size_t clen;
		X509 *x;
		int r;

		if (p[i] != 0x30 || p[i + 1] != 0x82 || p[i + 4] != 0x30 || p[i + 5] != 0x82 ||
		    memcmp(p + i + 8, "\xa0\x03\x02\x01\x02", 5))
			continue;
		clen = 4 + ((size_t)p[i + 2] << 8 | p[i + 3]);
		if (clen > len - i)
			continue;
		q = p + i;
		x = d2i_X509(NULL, &q, (long)clen);
		if (!x || (size_t)(q - (p + i)) != clen) {
			X509_free(x);
			continue;
		}
		r = add_x509(kr, x, label, ".builtin_trusted_keys");
		if (r < 0)
			return -1;
		n += r;
		i += clen - 1;
	}
	return n;
}

/*
 * The payload of an x86 bzImage (arch/x86/boot/header.S: payload_offset, payload_length):
 * 1, 0 when it is no bzImage, -1 when the payload lies outside the file.
 */
static int bzimage_payload(const unsigned char *p, size_t len, size_t *off, size_t *plen)
{
	size_t setup, start, size;

	if (len < 0x250 || memcmp(p + 0x202, "HdrS", 4))
		return 0;
	setup = ((size_t)(p[0x1f1] ? p[0x1f1] : 4) + 1) * 512;
	start = setup + kp_load32(p + 0x248, false);
	size = kp_load32(p + 0x24c, false);
	if (start >= len || size == 0 || size > len - start)
		return -1;
	*off = start;
	*plen = size;
	return 1;
}

/* An EFI zboot image (drivers/firmware/efi/libstub/zboot-header.S: "zimg", offset, size). */
static bool zboot_payload(const unsigned char *p, size_t len, size_t *off, size_t *plen)
{
	size_t start, size;

	if (len < 0x40 || memcmp(p, "MZ", 2) || memcmp(p + 4, "zimg", 4))
		return false;
	start = kp_load32(p + 8, false);
	size = kp_load32(p + 12, false);
	if (start >= len || size == 0 || size > len - start)
		return false;
	*off = start;
	*plen = size;
	return true;
}

/*
 * A self-decompressing image with an xz payload followed by more code (arm zImage:
 * arch/arm/boot/compressed/piggy.S): one xz stream, decoded up to its end, trailing
 * bytes ignored. NULL when it is not one (or out of memory).
 */
static unsigned char *embedded_xz(const unsigned char *in, size_t len, size_t max, size_t *outlen)
{
	lzma_stream st = LZMA_STREAM_INIT;
	unsigned char *out = NULL, *p;
	size_t cap = 0;
	lzma_ret r = LZMA_OK;

	if (lzma_stream_decoder(&st, (uint64_t)256 << 20, 0) != LZMA_OK)
		return NULL;
	st.next_in = in;
	st.avail_in = len;
	while (r == LZMA_OK) {
		if (st.total_out == cap) {
			if (cap >= max)
				break;
			cap = cap ? (cap * 2 < max ? cap * 2 : max) : (size_t)16 << 20;
			p = realloc(out, cap);
			if (!p)
				break;
			out = p;
		}
		st.next_out = out + st.total_out;
		st.avail_out = cap - st.total_out;
		r = lzma_code(&st, LZMA_FINISH);
	}
	*outlen = st.total_out;
	lzma_end(&st);
	if (r != LZMA_STREAM_END) {
		free(out);
		return NULL;
	}
	return out;
}

static int image_certs(struct kp_keyring *kr, const struct kp_bytes *b, size_t max,
		       const char *label, struct kp_err *err)
{
	struct kp_bytes inner;
	enum kp_compression comp = KP_COMP_NONE;
	size_t off, plen;
	int n;

	switch (bzimage_payload(b->data, b->len, &off, &plen)) {
	case -1:
		return kp_err_set(err,
				  "truncated bzImage: its payload lies past the end of the file");
	case 1:
		comp = kp_detect_compression(b->data + off, plen);
		break;
	default:
		if (zboot_payload(b->data, b->len, &off, &plen))
			comp = kp_detect_compression(b->data + off, plen);
	}
	if (comp != KP_COMP_NONE) {
		/* kbuild's *_with_size: xz and zstd payloads end with the 4-byte size */
		if ((comp == KP_COMP_XZ || comp == KP_COMP_ZSTD) && plen > 4 &&
		    !memcmp(b->data + 0x202, "HdrS", 4))
			plen -= 4;
		if (kp_bytes_from_buffer(b->data + off, plen, max, &inner, err) < 0)
			return -1;
		n = scan_certs(kr, inner.data, inner.len, label);
		kp_bytes_release(&inner);
	} else {
		n = scan_certs(kr, b->data, b->len, label);
	}
	/* none in plain sight: an xz payload inside the image (arm zImage) */
	for (const unsigned char *x = b->data; n == 0 && x;) {
		size_t left = b->len - (size_t)(x - b->data), outlen;
		unsigned char *out;

		x = memmem(x, left,
			   "\xfd"
			   "7zXZ\0",
			   6);
		if (!x)
			break;
		out = embedded_xz(x, b->len - (size_t)(x - b->data), max, &outlen);
		if (out) {
			n = scan_certs(kr, out, outlen, label);
			free(out);
		}
		x++;
	}
	if (n < 0)
		return kp_err_set(err, "out of memory");
	return n;
}

int kp_keyring_add_kernel_image(struct kp_keyring *kr, const char *path, size_t max,
				struct kp_err *err)
{
	struct kp_bytes b;
	const char *label = kp_arena_strdup(&kr->arena, path);
	int n;

	if (!label)
		return kp_err_set(err, "out of memory");
	if (kp_bytes_read(path, max, &b, err) < 0)
		return -1;
	n = image_certs(kr, &b, max, label, err);
	kp_bytes_release(&b);
	if (n < 0)
		return -1;
	return add_source(kr, "kernel image", path, n) < 0 ? kp_err_set(err, "out of memory") : 0;
}

int kp_keyring_add_installed_image(struct kp_keyring *kr, const char *root, const char *release,
				   size_t max, struct kp_err *err)
{
	static const char *const where[][2] = {
		{ "/boot/vmlinuz-", "" },
		{ "/lib/modules/", "/vmlinuz" },
		{ "/usr/lib/modules/", "/vmlinuz" },
		{ "/boot/vmlinux-", "" },
	};
	char path[4096];

	if (!release)
		return 0;
	if (!root || !strcmp(root, "/"))
		root = "";
	for (size_t i = 0; i < KP_ARRAY_SIZE(where); i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s%s%s%s", root, where[i][0], release, where[i][1]);
		f = kp_in_fopen(path, "rb");
		if (!f)
			continue;
		fclose(f);
		return kp_keyring_add_kernel_image(kr, path, max, err) < 0 ? -1 : 1;
	}
	return 0;
}

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* A "bin:<64 hex>" description of the .blacklist keyring (certs/blacklist.c). */
static int add_blacklist(struct kp_keyring *kr, const char *desc)
{
	unsigned char h[32];
	unsigned char(*p)[32];

	if (strncmp(desc, "bin:", 4) || strspn(desc + 4, "0123456789abcdef") != 64)
		return 0;
	for (size_t i = 0; i < 32; i++)
		h[i] = (unsigned char)(hexval(desc[4 + 2 * i]) << 4 | hexval(desc[5 + 2 * i]));
	p = kp_arena_alloc(&kr->arena, (kr->nblacklist + 1) * sizeof(*p));
	if (!p)
		return -1;
	if (kr->nblacklist)
		memcpy(p, kr->blacklist, kr->nblacklist * sizeof(*p));
	memcpy(p[kr->nblacklist++], h, 32);
	kr->blacklist = p;
	return 0;
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
		struct kp_trusted_key *k = new_key(kr);
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
	if (!f)
		return 0;
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
static bool verify_with(X509 *x, const struct kp_signature *s)
{
	EVP_PKEY *pk = X509_get0_pubkey(x);
	const EVP_MD *md = EVP_get_digestbyname(s->hash_algo);
	EVP_PKEY_CTX *ctx;
	bool ok = false;

	if (!pk || !md)
		return false;
	ctx = EVP_PKEY_CTX_new(pk, NULL);
	if (!ctx)
		return false;
	if (EVP_PKEY_verify_init(ctx) == 1 && EVP_PKEY_CTX_set_signature_md(ctx, md) == 1 &&
	    (EVP_PKEY_get_base_id(pk) != EVP_PKEY_RSA ||
	     EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) == 1))
		ok = EVP_PKEY_verify(ctx, s->sig_bytes, s->sig_bytes_len, s->digest,
				     s->digest_len) == 1;
	EVP_PKEY_CTX_free(ctx);
	return ok;
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
		unsigned char *der = NULL;
		int n = i2d_X509_NAME(X509_get_issuer_name(x), &der);
		bool same = n > 0 && (size_t)n == s->issuer_len &&
			    !memcmp(der, s->issuer, (size_t)n) &&
			    (size_t)ASN1_STRING_length(serial) == s->serial_len &&
			    !memcmp(ASN1_STRING_get0_data(serial), s->serial, s->serial_len);

		OPENSSL_free(der);
		return same;
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

enum kp_sig_trust kp_keyring_verify(const struct kp_keyring *kr, const struct kp_signature *s,
				    const struct kp_trusted_key **key)
{
	*key = NULL;
	/* pkcs7_validate_trust_one(): "see if we have a trusted public key that matches the
	 * signed info directly"; the first match decides (find_asymmetric_key()) */
	for (size_t i = 0; i < kr->nkeys; i++) {
		const struct kp_trusted_key *k = &kr->keys[i];

		if (!k->have_cert || !matches_cert(k->x509, s))
			continue;
		*key = k;
		if (!s->digest_len || !EVP_get_digestbyname(s->hash_algo))
			return KP_TRUST_UNCHECKED;
		/* verify_signature() failing: "-EKEYREJECTED [verify %d]" */
		return verify_with(k->x509, s) ? KP_TRUST_VERIFIED : KP_TRUST_BAD_SIGNATURE;
	}
	for (size_t i = 0; i < kr->nkeys; i++)
		if (!kr->keys[i].have_cert && matches_description(&kr->keys[i], s)) {
			*key = &kr->keys[i];
			return KP_TRUST_ID_ONLY;
		}
	return KP_TRUST_NO_KEY;
}

bool kp_keyring_hash_blacklisted(const struct kp_keyring *kr, const struct kp_signature *s)
{
	if (!s->have_file_sha256)
		return false;
	for (size_t i = 0; i < kr->nblacklist; i++)
		if (!memcmp(kr->blacklist[i], s->file_sha256, 32))
			return true;
	return false;
}

const char *kp_sig_trust_name(enum kp_sig_trust t)
{
	static const char *const names[] = {
		[KP_TRUST_VERIFIED] = "verified",	    [KP_TRUST_NO_KEY] = "no-trusted-key",
		[KP_TRUST_BAD_SIGNATURE] = "bad-signature", [KP_TRUST_ID_ONLY] = "key-id-only",
		[KP_TRUST_UNCHECKED] = "unchecked",
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
