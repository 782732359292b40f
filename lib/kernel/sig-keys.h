/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The keys a kernel verifies module signatures against, and the verification
 * itself (OpenSSL's libcrypto). Key sources, each named in reports: the running
 * kernel's keys as /proc/keys lists them (descriptions only: matched by key id
 * or name, not verified), the X.509 certificates compiled into a kernel image
 * (vmlinuz/vmlinux: the system_certificate_list of certs/system_certificates.S; those of its
 * revocation_certificate_list, certs/revocation_certificates.S, are revocations),
 * and certificate files (PEM or DER) the user names; from the firmware, UEFI db, dbx and
 * the MOK lists (MokListRT, MokListXRT, the pending MokNew) as EFI signature lists.
 *
 * Which keyring a key lands in, and whether module signatures are checked against it, is
 * the kernel's and the distribution's choice: struct kp_keyring_model (filled from the
 * profile and the config by the kernel facts) applied with kp_keyring_apply_model().
 */
#ifndef KP_SIG_KEYS_H
#define KP_SIG_KEYS_H

#include <stdbool.h>
#include <stddef.h>

#include "cache/sig-memo.h"
#include "read/module.h"
#include "util/util.h"

struct kp_ecdsa_lib;

/* Where a key comes from: decides its keyring under a model. */
enum kp_key_origin {
	KP_KEY_KERNEL, /* compiled into the kernel image: .builtin_trusted_keys */
	KP_KEY_CERT,   /* --trusted-cert: taken as built in */
	KP_KEY_LISTED, /* /proc/keys: a key the running kernel holds (description only) */
	KP_KEY_DB,     /* UEFI db: .platform (load_uefi_certs()) */
	KP_KEY_MOK,    /* MokListRT or --mok: .machine, else .platform (get_handler_for_mok()) */
	KP_KEY_MOK_PENDING, /* MokNew: enrolled by MokManager at the next boot, once confirmed */
	KP_KEY_NAMED, /* a known signing key (the DKMS key): named in reports, never trusted */
};

/*
 * The kernel's keyrings for module signatures, per version/config/distribution:
 * mod_verify_sig() checks the secondary keyring (builtin + secondary + .machine) and, with
 * Debian's "KEYS: Make use of platform keyring for module signature verify", retries the
 * platform keyring on -ENOKEY.
 */
struct kp_keyring_model {
	bool secure_boot;      /* load_uefi_certs(): MOK and MokListXRT only under Secure Boot */
	bool machine_keyring;  /* CONFIG_INTEGRITY_MACHINE_KEYRING (v5.18+) */
	bool mok_trusted;      /* trust_moklist(): MokListTrustedRT, or Debian's patch */
	bool platform_keyring; /* CONFIG_INTEGRITY_PLATFORM_KEYRING */
	bool platform_for_modules; /* Debian: mod_verify_sig() retries .platform */
	bool revocation_list;	   /* CONFIG_SYSTEM_REVOCATION_LIST: dbx certificates refuse */
	/* profile row revocation_all_keyrings: is_key_on_revocation_list() before any keyring */
	bool revocation_first;
};

struct kp_trusted_key {
	const char *subject; /* CN (else O) of the certificate: the kernel's key description */
	const char *id_hex;  /* SKID (else serial) in hex, as the description's second part */
	const char *source;  /* where it was found: "vmlinuz-6.1.0-57-amd64", "/proc/keys", ... */
	const char *keyring; /* ".builtin_trusted_keys", ".machine", ".platform", ... (model) */
	const char *keyring_after; /* the same after the next boot (a pending MOK enrolment) */
	enum kp_key_origin origin;
	const char *name; /* KP_KEY_NAMED: what the key is ("the DKMS key"), else NULL */
	/* searched by mod_verify_sig(): 0 no, 1 the secondary keyring, 2 the platform retry */
	int pass, pass_after;
	bool tbs_blacklisted; /* its tbsCertificate hash is in dbx/MokListXRT: never loaded */
	/*
	 * KP_KEY_KERNEL: found in the image outside its system_certificate_list (which list it
	 * belongs to is not known); not trusted when the image has a revocation list
	 * (@beside_revocation) or the model has SYSTEM_REVOCATION_LIST: it may be revoked.
	 */
	bool list_unknown, beside_revocation;
	bool have_cert; /* the certificate's bytes: signatures are verified with it */
	void *x509;	/* X509 *, NULL for a key known by description only */
	const unsigned char *skid;
	size_t skid_len;
	/* SHA-256 of the public key (SubjectPublicKeyInfo DER): part of each verdict's id */
	unsigned char key_id[32];
	bool have_key_id;
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
	bool *blacklist_mok; /* per entry: from MokListXRT, loaded only under Secure Boot */
	void **revoked;	     /* X509 * of dbx/MokListXRT and images: the revocation list */
	size_t nrevoked;
	bool *revoked_mok;
	/* per entry: from a kernel image's revocation_certificate_list (always loaded: the list
	 * exists only with SYSTEM_REVOCATION_LIST), and where it was read */
	bool *revoked_image;
	const char **revoked_source;
	unsigned char (*tbs)[32]; /* "tbs:" certificate hashes (dbx, MokListXRT, /proc/keys) */
	size_t ntbs;
	bool *tbs_mok;
	bool have_model;
	struct kp_keyring_model model;
	/*
	 * Verdicts remembered across runs, and the certificates of kernel images seen before
	 * (cache/sig-memo.h): borrowed, NULL for none. Set before the keys are read and the
	 * modules verified (kp_ctx); every verification goes through it.
	 */
	struct kp_sig_memo *memo;
	/* libhogweed for ECDSA, dlopen()ed on first use (ecdsa-nettle.h): owned, NULL for none */
	struct kp_ecdsa_lib *ecdsa;
	/*
	 * SHA-256 for the verdicts' ids, fetched (EVP_MD_fetch()) on the first id and set
	 * atomically, as threads verify at once: owned, NULL before. EVP_sha256() would make
	 * OpenSSL 3 look the algorithm up again for each of two ids per module.
	 */
	struct evp_md_st *verdict_md;
	struct kp_arena arena;
};

void kp_keyring_init(struct kp_keyring *kr);
void kp_keyring_release(struct kp_keyring *kr);
/* True when there is nothing to verify a signature against (no key, no image revocation). */
bool kp_keyring_empty(const struct kp_keyring *kr);
/* True when a MOK certificate, enrolled or pending, was read. */
bool kp_keyring_has_mok(const struct kp_keyring *kr);
/* True when the kernel's own keys are known (its image, /proc/keys, --trusted-cert). */
bool kp_keyring_has_kernel_keys(const struct kp_keyring *kr);

/* A certificate file: DER, or PEM holding one or more certificates. */
int kp_keyring_add_cert_file(struct kp_keyring *kr, const char *path, struct kp_err *err);
/*
 * The certificates compiled into a kernel image: bzImage (its compressed payload), an
 * arm64 EFI zboot image, a compressed Image, or a vmlinux; @max caps the decompressed size.
 * The DER X.509 certificates of the image, told apart by the layout of
 * certs/system_certificates.S and certs/revocation_certificates.S (each list followed by its
 * size; the system list also by module_cert_size, the size of its first certificate; the
 * revocation list linked after it): the system list's are trusted keys, the revocation
 * list's revocations (kr->revoked), any other one a key with list_unknown. Finding none is
 * not an error (the counts are in kr->sources).
 */
int kp_keyring_add_kernel_image(struct kp_keyring *kr, const char *path, size_t max,
				struct kp_err *err);
/* The same for @path under @root (NULL: none), opened inside it as kp_open_regular_in(). */
struct kp_root_dir;
int kp_keyring_add_kernel_image_in(struct kp_keyring *kr, const struct kp_root_dir *root,
				   const char *path, size_t max, struct kp_err *err);
/*
 * ROOT/proc/keys: asymmetric keys (description "subject: key id") and the keyrings
 * listed, and the .blacklist keyring's "bin:" module hashes. Returns the number of
 * asymmetric keys, 0 when the file is absent or unreadable (a source line says why).
 * Under @root (not the host's) it is opened inside it (kp_open_regular_in()): a link there
 * never leads to a host file, a FIFO or device is refused, not waited on.
 */
int kp_keyring_add_proc_keys(struct kp_keyring *kr, const struct kp_root_dir *root,
			     struct kp_err *err);
/*
 * The running kernel's image ROOT/boot/vmlinuz-RELEASE (or lib/modules/RELEASE/vmlinuz)
 * when there is one: 1 when read, 0 when none was found, -1 with @err (its message begins
 * with the image's path: the caller does not know it).
 */
int kp_keyring_add_installed_image(struct kp_keyring *kr, const char *root, const char *release,
				   size_t max, struct kp_err *err);

/*
 * The path of the image kp_keyring_add_installed_image() reads (at most @len bytes into
 * @path): 1, or 0 when there is none.
 */
int kp_installed_image_path(const char *root, const char *release, char *path, size_t len);
/*
 * The same under @root's directory: there, a regular file found with every link followed
 * inside the root (kp_open_regular_in()); the host's root ("/", "") as above.
 */
int kp_installed_image_path_in(const struct kp_root_dir *root, const char *release, char *path,
			       size_t len);
/*
 * kp_keyring_add_kernel_image() in two halves, so that a run reads its modules while the image
 * is decompressed: _begin() starts reading the certificates of the image @path on a thread of
 * its own (from kr->memo when it has the image, else decompressed, classified and stored
 * there; @kr itself is not touched); NULL (read it with kp_keyring_add_kernel_image()
 * instead) when out of memory, when the thread cannot be started, or when the image is not
 * worth a thread: only the payload of a bzImage or EFI zboot image compressed with xz or
 * gzip is (zstd decodes fast and in place: the memory of the image and the modules
 * at once would be the cost). _end() waits for it and puts its keys,
 * revocations and source line where kp_keyring_add_kernel_image() would have put them at the
 * time of _begin(), placed by the model applied meanwhile; 0, or -1 with @err (the image's
 * error, the same as kp_keyring_add_kernel_image()'s). Between the two, the keyring may get
 * keys of other origins than KP_KEY_KERNEL (no other kernel image: they would be compared
 * with the image's for duplicates) and nothing is verified against it. Every _begin() needs
 * its _end(), which frees @p.
 */
struct kp_image_read;
struct kp_image_read *kp_keyring_image_begin(struct kp_keyring *kr, const char *path, size_t max);
/* The same for @path under @root (NULL: none; copied: it may go before _end()). */
struct kp_image_read *kp_keyring_image_begin_in(struct kp_keyring *kr,
						const struct kp_root_dir *root, const char *path,
						size_t max);
int kp_keyring_image_end(struct kp_keyring *kr, struct kp_image_read *p, struct kp_err *err);

/* What an EFI signature list holds for the kernel (load_uefi_certs()'s handlers). */
enum kp_esl_role {
	KP_ESL_DB,	    /* db: X.509 certificates into .platform */
	KP_ESL_MOK,	    /* MokListRT: X.509 certificates into .machine or .platform */
	KP_ESL_MOK_PENDING, /* MokNew: the same after the next boot */
	KP_ESL_DBX,	    /* dbx: SHA-256 and X509-SHA256 hashes, revoked certificates */
	KP_ESL_MOKX,	    /* MokListXRT: the same, only under Secure Boot */
};

/*
 * The certificates and hashes of an EFI signature list (@p, @len: the variable's data,
 * without efivarfs' attribute word) named @label in reports ("efivarfs db", ...). A malformed
 * list keeps what came before the error (as the kernel does) and fails with "offset N: why".
 * Returns the number of certificates and hashes taken.
 */
int kp_keyring_add_esl(struct kp_keyring *kr, const unsigned char *p, size_t len,
		       enum kp_esl_role role, const char *label, struct kp_err *err);
/* A MOK certificate file (PEM or DER) as if enrolled (--mok) or pending (--mok-pending). */
int kp_keyring_add_mok_file(struct kp_keyring *kr, const char *path, bool pending,
			    struct kp_err *err);
/*
 * A signing key known by name, e.g. ("the DKMS key", "/var/lib/dkms/mok.pub"): a module
 * signed by it is reported with that name. An absent file is not an error (0); 1 when read.
 */
int kp_keyring_add_named_cert(struct kp_keyring *kr, const char *path, const char *name,
			      struct kp_err *err);
/* The same for @path under @root, opened inside it as kp_open_regular_in() (NULL: by name). */
int kp_keyring_add_named_cert_in(struct kp_keyring *kr, const struct kp_root_dir *root,
				 const char *path, const char *name, struct kp_err *err);

/* Sets each key's keyring and whether mod_verify_sig() searches it, now and after a reboot. */
void kp_keyring_apply_model(struct kp_keyring *kr, const struct kp_keyring_model *m);

/* What the trusted keys say about one module signature. */
enum kp_sig_trust {
	KP_TRUST_VERIFIED,	/* a trusted certificate verifies the signature */
	KP_TRUST_NO_KEY,	/* no trusted key matches the signer: -ENOKEY */
	KP_TRUST_BAD_SIGNATURE, /* the matching key does not verify it: -EKEYREJECTED */
	KP_TRUST_ID_ONLY,	/* a key listed only by description matches: assumed to verify */
	KP_TRUST_UNCHECKED,	/* libcrypto cannot check this algorithm: assumed to verify */
	KP_TRUST_REVOKED,	/* the signer is on the revocation list (dbx): -EKEYREJECTED */
	KP_TRUST_ERROR,		/* OpenSSL failed (out of memory, internal): no verdict */
};

/*
 * pkcs7_validate_trust_one() for a module signature (no certificates in the message:
 * the direct signer lookup by issuer+serial or SKID, then verify_signature()). *@key is
 * the matching key, or NULL.
 */
enum kp_sig_trust kp_keyring_verify(const struct kp_keyring *kr, const struct kp_signature *s,
				    const struct kp_trusted_key **key);
/*
 * The id of the verdict of @k over @s (sig-memo.h): SHA-256 of a version tag, the key's
 * public key (its key_id), the digest algorithm, the module's digest and the signature
 * bytes. False when there is nothing to verify (no digest, no public key).
 */
bool kp_sig_verdict_id(const struct kp_trusted_key *k, const struct kp_signature *s,
		       unsigned char id[32]);
/*
 * Every public-key operation kp_keyring_verify() and kp_keyring_verify_after_reboot() would
 * do for @s, done now and remembered in kr->memo (the reading threads do this in parallel,
 * so the single-threaded simulation finds each verdict made), and the verdict id of the key
 * that decides kept in @s (s->verdict_id: the simulation's look-up does not compute it again).
 * Safe from several threads, each with its own @s.
 * 0, or -1 with @err when OpenSSL failed (KP_TRUST_ERROR): the module has no verdict, which
 * the caller reports as that module's error (never as a signature that does not verify).
 */
int kp_keyring_preverify(const struct kp_keyring *kr, struct kp_signature *s, struct kp_err *err);
/* The same with the keyrings of the next boot (pending MOK enrolments done). */
enum kp_sig_trust kp_keyring_verify_after_reboot(const struct kp_keyring *kr,
						 const struct kp_signature *s,
						 const struct kp_trusted_key **key);
/*
 * is_key_on_revocation_list(): true if a certificate of the revocation list is the signer and
 * verifies the signature (pkcs7_validate_trust() against .blacklist). The list: a kernel
 * image's revocation_certificate_list, and dbx (MokListXRT under Secure Boot) when the model
 * has SYSTEM_REVOCATION_LIST. kp_keyring_verify() asks it before the keyrings
 * (revocation_first, or no model) or before the platform retry.
 */
bool kp_keyring_revoked(const struct kp_keyring *kr, const struct kp_signature *s);
/*
 * Where the revoking certificate of @s was read (an EFI variable's label, an image path), NULL
 * if none; *@image: from a kernel image's revocation_certificate_list.
 */
const char *kp_keyring_revoked_by(const struct kp_keyring *kr, const struct kp_signature *s,
				  bool *image);
/*
 * The kernel-image certificates not trusted because their list is unknown and may be the
 * revocation list (after kp_keyring_apply_model()): their number, *@source the first one's
 * image. For a warning: nothing else reports them.
 */
size_t kp_keyring_unplaced(const struct kp_keyring *kr, const char **source);
/* Any key whose certificate matches the signer, searched or not (to name it), or NULL. */
const struct kp_trusted_key *kp_keyring_find_signer(const struct kp_keyring *kr,
						    const struct kp_signature *s);
/* The named key (kp_keyring_add_named_cert()) with the same certificate as @k, or NULL. */
const struct kp_trusted_key *kp_keyring_name_of(const struct kp_keyring *kr,
						const struct kp_trusted_key *k);
/* "built into the kernel", "UEFI db", "MOK (MokListRT)", ... */
const char *kp_key_origin_name(enum kp_key_origin o);
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
