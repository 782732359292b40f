// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The two certificate lists of a kernel image (kp_keyring_add_kernel_image()): images built
 * here as certs/system_certificates.S and certs/revocation_certificates.S lay them out (each
 * list after .align 8, then its size; the system list also module_cert_size), in either
 * order, with CONFIG_SYSTEM_EXTRA_CERTIFICATE's space, 32-bit and big-endian sizes, without
 * a revocation list, and certificates outside both lists. The system list's certificates are
 * trusted keys, the revocation list's revocations (kp_keyring_verify(): "revoked" before any
 * keyring), the others trusted only while no revocation list may exist.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "kernel/sig-keys.h"
#include "read/module.h"
#include "tap.h"

struct img {
	unsigned char *p;
	size_t len;
};

static void put(struct img *m, const void *d, size_t n)
{
	unsigned char *p;

	if (!n)
		return;
	p = realloc(m->p, m->len + n);
	if (!p)
		exit(99);
	m->p = p;
	if (d)
		memcpy(p + m->len, d, n);
	else
		memset(p + m->len, 0, n);
	m->len += n;
}

static void align(struct img *m, size_t a)
{
	put(m, NULL, (a - m->len % a) % a);
}

/* A size word as .quad (@bytes 8) or .long (4), little- or big-endian. */
static void word(struct img *m, uint64_t v, int bytes, bool be)
{
	unsigned char b[8];

	for (int i = 0; i < bytes; i++)
		b[be ? bytes - 1 - i : i] = (unsigned char)(v >> (8 * i));
	put(m, b, (size_t)bytes);
}

struct der {
	unsigned char *p;
	size_t len;
};

static struct der pem_der(const char *path)
{
	FILE *f = fopen(path, "r");
	X509 *x = f ? PEM_read_X509(f, NULL, NULL, NULL) : NULL;
	struct der d = { NULL, 0 };
	int n = x ? i2d_X509(x, &d.p) : -1;

	if (f)
		fclose(f);
	X509_free(x);
	if (n <= 0)
		exit(99);
	d.len = (size_t)n;
	return d;
}

/*
 * A list as the .S files write it: .align 8, the certificates, [the extra certificate's
 * space: .fill, .align 4, .int 0], .align 8, the size; the system list then module_cert_size.
 */
static void list(struct img *m, const struct der *c, size_t n, bool system, size_t extra, int bytes,
		 bool be)
{
	size_t total = 0;

	align(m, 8);
	for (size_t i = 0; i < n; i++) {
		put(m, c[i].p, c[i].len);
		total += c[i].len;
	}
	if (extra) {
		put(m, NULL, extra);
		align(m, 4);
		put(m, NULL, 4);
	}
	align(m, 8);
	word(m, total, bytes, be);
	if (system) {
		align(m, 8);
		word(m, n ? c[0].len : 0, bytes, be);
	}
}

/* Unrelated bytes: code, other .init.rodata (blacklist_hashes[]'s pointers) */
static void filler(struct img *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char b = (unsigned char)(i * 37 + 11);

		put(m, &b, 1);
	}
}

/*
 * What the keyring made of @m: "keys: SUBJECT[ ?] ...; revoked: SUBJECT ...; source" with
 * " ?" for a key of no list; with @model (SYSTEM_REVOCATION_LIST=y) also the untrusted count.
 */
static void read_back(const char *path, const struct img *m, bool model, char *out, size_t len)
{
	FILE *f = fopen(path, "wb");
	struct kp_keyring kr;
	struct kp_err err = { { 0 }, 0 };
	size_t at;

	if (!f || fwrite(m->p, 1, m->len, f) != m->len || fclose(f))
		exit(99);
	kp_keyring_init(&kr);
	if (kp_keyring_add_kernel_image(&kr, path, KP_DEFAULT_MAX_SIZE, &err) < 0) {
		snprintf(out, len, "error: %s", err.msg);
		kp_keyring_release(&kr);
		return;
	}
	if (model) {
		struct kp_keyring_model km = { .revocation_list = true, .platform_keyring = true };

		kp_keyring_apply_model(&kr, &km);
	}
	at = (size_t)snprintf(out, len, "keys:");
	for (size_t i = 0; i < kr.nkeys && at < len; i++)
		at += (size_t)snprintf(out + at, len - at, " %s%s%s", kr.keys[i].subject,
				       kr.keys[i].list_unknown ? " ?" : "",
				       kr.keys[i].pass ? "" : " (not searched)");
	at += (size_t)snprintf(out + at, len - at, "; revoked:");
	for (size_t i = 0; i < kr.nrevoked && at < len; i++) {
		char cn[128] = "";

		X509_NAME_get_text_by_NID(X509_get_subject_name(kr.revoked[i]), NID_commonName, cn,
					  sizeof(cn));
		at += (size_t)snprintf(out + at, len - at, " %s", cn);
	}
	if (model && at < len) {
		const char *src;
		size_t n = kp_keyring_unplaced(&kr, &src);

		at += (size_t)snprintf(out + at, len - at, "; untrusted: %zu", n);
	}
	for (size_t i = 0; i < kr.nsources && at < len; i++)
		at += (size_t)snprintf(out + at, len - at, "; %s",
				       kr.sources[i] + strlen("kernel image ") + strlen(path) + 2);
	kp_keyring_release(&kr);
}

int main(void)
{
	struct tap t = { 0 };
	char dir[] = "/tmp/kp-image-lists-XXXXXX", path[4096], got[2048];
	struct der sys[2], rev[1];
	struct img m = { NULL, 0 };
	const char *both = "keys: kopolicy throwaway test key; revoked: kopolicy unknown test key; "
			   "1 certificate, 1 in its revocation list";

	sys[0] = pem_der(tap_srcpath("tests/data/sig/test-cert.pem"));
	sys[1] = pem_der(tap_srcpath("tests/data/sig/distro-cert.pem"));
	rev[0] = pem_der(tap_srcpath("tests/data/sig/other-cert.pem"));
	if (!mkdtemp(dir))
		return 99;
	snprintf(path, sizeof(path), "%s/vmlinux", dir);

	/* 6.1+ amd64: system list, its two sizes, other .init.rodata, the revocation list */
	filler(&m, 1001);
	list(&m, sys, 1, true, 0, 8, false);
	filler(&m, 40);
	list(&m, rev, 1, false, 0, 8, false);
	filler(&m, 999);
	read_back(path, &m, false, got, sizeof(got));
	tap_is_str(&t, got, both, "system list then revocation list: one key, one revocation");
	read_back(path, &m, true, got, sizeof(got));
	tap_is_str(&t, got,
		   "keys: kopolicy throwaway test key; revoked: kopolicy unknown test key; "
		   "untrusted: 0; 1 certificate, 1 in its revocation list",
		   "... the same with SYSTEM_REVOCATION_LIST in the model: nothing untrusted");

	/* the other order (not kbuild's link order): told apart by module_cert_size */
	m.len = 0;
	filler(&m, 77);
	list(&m, rev, 1, false, 0, 8, false);
	filler(&m, 64);
	list(&m, sys, 1, true, 0, 8, false);
	read_back(path, &m, false, got, sizeof(got));
	tap_is_str(&t, got, both,
		   "revocation list first: the same (module_cert_size names the system list)");

	/* two system certificates (signing_key.x509 + x509_certificate_list), extra space */
	m.len = 0;
	filler(&m, 13);
	list(&m, sys, 2, true, 4096, 8, false);
	list(&m, rev, 1, false, 0, 8, false);
	read_back(path, &m, false, got, sizeof(got));
	tap_is_str(
		&t, got,
		"keys: kopolicy throwaway test key kopolicy distro test key; revoked: kopolicy "
		"unknown test key; 2 certificates, 1 in its revocation list",
		"CONFIG_SYSTEM_EXTRA_CERTIFICATE's space before the size: still the system list");

	/*
	 * scripts/insert-sys-cert's certificate in the extra space: right after the list, the
	 * rest zeros, system_extra_cert_used its length, the size grown by it
	 */
	m.len = 0;
	filler(&m, 5);
	align(&m, 8);
	put(&m, sys[0].p, sys[0].len);
	put(&m, sys[1].p, sys[1].len);
	put(&m, NULL, 4096 - sys[1].len);
	align(&m, 4);
	word(&m, sys[1].len, 4, false);
	align(&m, 8);
	word(&m, sys[0].len + sys[1].len, 8, false);
	word(&m, sys[0].len, 8, false);
	list(&m, rev, 1, false, 0, 8, false);
	read_back(path, &m, false, got, sizeof(got));
	tap_is_str(&t, got,
		   "keys: kopolicy throwaway test key kopolicy distro test key; revoked: kopolicy "
		   "unknown test key; 2 certificates, 1 in its revocation list",
		   "an extra certificate inserted (system_extra_cert_used): still the system list");

	/* 32-bit (.long) and big-endian (.quad) sizes */
	m.len = 0;
	list(&m, sys, 1, true, 0, 4, false);
	filler(&m, 24);
	list(&m, rev, 1, false, 0, 4, false);
	read_back(path, &m, false, got, sizeof(got));
	tap_is_str(&t, got, both, "32-bit (.long sizes): the same");
	m.len = 0;
	list(&m, sys, 1, true, 0, 8, true);
	filler(&m, 24);
	list(&m, rev, 1, false, 0, 8, true);
	read_back(path, &m, false, got, sizeof(got));
	tap_is_str(&t, got, both, "big-endian 64-bit: the same");

	/* Debian's 5.10 (no module_cert_size): the link order decides */
	m.len = 0;
	list(&m, sys, 1, false, 0, 8, false);
	filler(&m, 24);
	list(&m, rev, 1, false, 0, 8, false);
	read_back(path, &m, false, got, sizeof(got));
	tap_is_str(&t, got, both,
		   "no module_cert_size (5.10): the first sized list is the system list");

	/* no revocation list (Debian): the image's certificates are all keys, as before */
	m.len = 0;
	filler(&m, 500);
	list(&m, sys, 2, true, 0, 8, false);
	filler(&m, 500);
	read_back(path, &m, false, got, sizeof(got));
	tap_is_str(
		&t, got,
		"keys: kopolicy throwaway test key kopolicy distro test key; revoked:; "
		"2 certificates",
		"no revocation list: both system certificates are keys, the source line unchanged");
	read_back(path, &m, true, got, sizeof(got));
	tap_is_str(&t, got,
		   "keys: kopolicy throwaway test key kopolicy distro test key; revoked:; "
		   "untrusted: 0; 2 certificates",
		   "... the same under SYSTEM_REVOCATION_LIST (an empty revocation list)");

	/* ambiguous: certificates without a size after them */
	m.len = 0;
	filler(&m, 300);
	put(&m, sys[0].p, sys[0].len);
	filler(&m, 300);
	put(&m, rev[0].p, rev[0].len);
	filler(&m, 300);
	read_back(path, &m, false, got, sizeof(got));
	tap_is_str(&t, got,
		   "keys: kopolicy throwaway test key ? kopolicy unknown test key ?; revoked:; "
		   "2 certificates",
		   "no list found, no revocation list possible: both taken as keys (as before)");
	read_back(path, &m, true, got, sizeof(got));
	tap_is_str(&t, got,
		   "keys: kopolicy throwaway test key ? (not searched) kopolicy unknown test key ? "
		   "(not searched); revoked:; untrusted: 2; 2 certificates",
		   "... with SYSTEM_REVOCATION_LIST: neither is trusted (either may be revoked)");

	/* a certificate outside both lists of an image with a revocation list */
	m.len = 0;
	put(&m, sys[1].p, sys[1].len);
	filler(&m, 100);
	list(&m, sys, 1, true, 0, 8, false);
	list(&m, rev, 1, false, 0, 8, false);
	read_back(path, &m, false, got, sizeof(got));
	tap_is_str(&t, got,
		   "keys: kopolicy distro test key ? (not searched) kopolicy throwaway test key; "
		   "revoked: kopolicy unknown test key; 1 certificate, 1 in its revocation list, 1 "
		   "outside its certificate lists (not trusted)",
		   "beside a revocation list, a certificate of no list is not trusted, and said");

	/* three sized lists, none with module_cert_size: link order (first system, next revoked) */
	m.len = 0;
	list(&m, sys, 1, false, 0, 8, false);
	list(&m, rev, 1, false, 0, 8, false);
	list(&m, sys + 1, 1, false, 0, 8, false);
	read_back(path, &m, false, got, sizeof(got));
	tap_is_str(&t, got,
		   "keys: kopolicy throwaway test key kopolicy distro test key ? (not searched); "
		   "revoked: kopolicy unknown test key; 1 certificate, 1 in its revocation list, 1 "
		   "outside its certificate lists (not trusted)",
		   "a third sized run: neither list, not trusted");

	unlink(path);
	rmdir(dir);
	free(m.p);
	for (int i = 0; i < 2; i++)
		OPENSSL_free(sys[i].p);
	OPENSSL_free(rev[0].p);
	return tap_done(&t);
}
