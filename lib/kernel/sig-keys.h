/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The keys a kernel verifies module signatures against, and the verification
 * itself (OpenSSL's libcrypto). Key sources, each named in reports: the running
 * kernel's keys as /proc/keys lists them (descriptions only: matched by key id
 * or name, not verified), the X.509 certificates compiled into a kernel image
 * (vmlinuz/vmlinux: the system_certificate_list of certs/system_certificates.S),
 * and certificate files (PEM or DER) the user names.
 */
#ifndef KP_SIG_KEYS_H
#define KP_SIG_KEYS_H

#include <stdbool.h>
#include <stddef.h>

#include "read/module.h"
#include "util/util.h"

struct kp_trusted_key {
	const char *subject; /* CN (else O) of the certificate: the kernel's key description */
	const char *id_hex;  /* SKID (else serial) in hex, as the description's second part */
	const char *source;  /* where it was found: "vmlinuz-6.1.0-57-amd64", "/proc/keys", ... */
	const char *keyring; /* ".builtin_trusted_keys", ".secondary_trusted_keys", ... */
	bool have_cert;	     /* the certificate's bytes: signatures are verified with it */
	void *x509;	     /* X509 *, NULL for a key known by description only */
	const unsigned char *skid;
	size_t skid_len;
};

struct kp_keyring {
	struct kp_trusted_key *keys; /* in the order the kernel searches: secondary, platform */
	size_t nkeys, cap;
	const char **sources; /* one line per source read: "FILE: N certificates" */
	size_t nsources;
	const char **keyrings; /* keyrings /proc/keys lists ("name: N keys") */
	size_t nkeyrings;
	unsigned char (*blacklist)[32]; /* "bin:" SHA-256 entries of the .blacklist keyring */
	size_t nblacklist;
	struct kp_arena arena;
};

void kp_keyring_init(struct kp_keyring *kr);
void kp_keyring_release(struct kp_keyring *kr);
bool kp_keyring_empty(const struct kp_keyring *kr);

/* A certificate file: DER, or PEM holding one or more certificates. */
int kp_keyring_add_cert_file(struct kp_keyring *kr, const char *path, struct kp_err *err);
/*
 * The certificates compiled into a kernel image: bzImage (its compressed payload), an
 * arm64 EFI zboot image, a compressed Image, or a vmlinux; @max caps the decompressed size.
 * Every DER X.509 certificate in the image is taken (the system_certificate_list holds
 * them). Finding none is not an error (the count is in kr->sources).
 */
int kp_keyring_add_kernel_image(struct kp_keyring *kr, const char *path, size_t max,
				struct kp_err *err);
/*
 * ROOT/proc/keys: asymmetric keys (description "subject: key id") and the keyrings
 * listed, and the .blacklist keyring's "bin:" module hashes. Returns the number of
 * asymmetric keys, 0 when the file is absent or unreadable.
 */
int kp_keyring_add_proc_keys(struct kp_keyring *kr, const char *root, struct kp_err *err);
/*
 * The running kernel's image ROOT/boot/vmlinuz-RELEASE (or lib/modules/RELEASE/vmlinuz)
 * when there is one: 1 when read, 0 when none was found.
 */
int kp_keyring_add_installed_image(struct kp_keyring *kr, const char *root, const char *release,
				   size_t max, struct kp_err *err);

/* What the trusted keys say about one module signature. */
enum kp_sig_trust {
	KP_TRUST_VERIFIED,	/* a trusted certificate verifies the signature */
	KP_TRUST_NO_KEY,	/* no trusted key matches the signer: -ENOKEY */
	KP_TRUST_BAD_SIGNATURE, /* the matching key does not verify it: -EKEYREJECTED */
	KP_TRUST_ID_ONLY,	/* a key listed only by description matches: assumed to verify */
	KP_TRUST_UNCHECKED,	/* libcrypto cannot check this algorithm: assumed to verify */
};

/*
 * pkcs7_validate_trust_one() for a module signature (no certificates in the message:
 * the direct signer lookup by issuer+serial or SKID, then verify_signature()). *@key is
 * the matching key, or NULL.
 */
enum kp_sig_trust kp_keyring_verify(const struct kp_keyring *kr, const struct kp_signature *s,
				    const struct kp_trusted_key **key);
/* True if @s's whole-file SHA-256 is in the .blacklist keyring (mod_is_hash_blacklisted()). */
bool kp_keyring_hash_blacklisted(const struct kp_keyring *kr, const struct kp_signature *s);

const char *kp_sig_trust_name(enum kp_sig_trust t);

/* The signer's key id: "serial:<hex>" (issuer + serial) or "skid:<hex>"; "" if none. */
void kp_sig_key_id(const struct kp_signature *s, char *buf, size_t len);
/*
 * What `info` says of a signature, kernel version aside: "unsigned", "malformed",
 * "no-key-source", or kp_sig_trust_name() of kp_keyring_verify() (*@key: the key).
 */
const char *kp_sig_check(const struct kp_keyring *kr, const struct kp_signature *s,
			 const struct kp_trusted_key **key);

#endif
