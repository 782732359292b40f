/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The signature verdicts and kernel-image certificates kept beside the facts cache, in its
 * directory: DIR/facts-vN/sigs/ (the same trust model: cache/trusted-dir.h, man CACHE TRUST).
 *
 * Verdicts. What a signature check costs is the public-key operation: ~1 ms for an ECDSA P-384
 * signature (Debian 6.12's modules), 75 us for RSA-4096, every module of a tree, every run. The
 * operation is a pure function of the public key, the digest algorithm, the module's digest
 * (of its content before the signature) and the signature bytes, so its result is remembered
 * under a SHA-256 of exactly those (kernel/sig-keys.c, kp_sig_verdict_id()): a key that is not
 * the one verified, another module (another digest) or other signature bytes give another id.
 * Only "verifies" is stored: a module whose signature does not verify is checked again on
 * every run (a forged or stale entry could otherwise only turn a good signature into a bad
 * one, and such modules are rare). Which keys are trusted, in which keyring, the revocation
 * list (dbx, MokListXRT), the .blacklist module hashes and the profile rows are not part of a
 * verdict: they are applied on every run, after it, so a change to any of them takes effect
 * at once and a key set that gains a key verifies with that key (a new id).
 *
 * Kernel images. The certificates a kernel image holds (kp_keyring_add_kernel_image()) are
 * kept under a SHA-256 key instead of decompressing the image again (0.2-0.7 s, the
 * decompressed image in memory): of the image file's state (device, inode, size, mtime,
 * ctime, mode) when that state names its bytes as the facts cache takes it (util/fs-trust.h:
 * a local file system, owned by root or the effective user, not group/other-writable; and
 * settled: kp_state_settled()), so a warm run only fstat()s the image; else of the image's
 * bytes (8 MB: ~5 ms a run; stored under that key only for an image whose state names its
 * bytes too: the bytes hashed and the bytes read are two reads, and only such a state proves
 * that they are the same bytes). A changed or replaced image has another state (its change
 * time moves with any write, chown or rename over it), one that names no bytes is
 * hashed. Each with the list it was found in (system, revocation, neither) in the two top
 * bits of its length: the files of the first format (KPIMGC1, every certificate taken as
 * trusted) are not read.
 *
 * Safe from several threads at once. Files: "verdicts-<time>-<pid>.memo" (magic, count, CRC-32,
 * sorted 32-byte ids; a run that found new ones writes every id it knows into one new file and
 * removes the files it read), "image-<sha256>.certs" (magic, count, CRC-32, then each
 * certificate's length, its list in the top bits, and DER bytes) keyed by the image's bytes,
 * "istate-<sha256>.certs" the same keyed by its state (both for an image whose state names
 * its bytes: an image whose state changed and bytes did not, a package reinstalled, is
 * hashed once and not decompressed). A file is believed only when
 * kp_trusted_file() passes and its magic, sizes and CRC match; anything else is ignored (the work
 * is done again).
 */
#ifndef KP_SIG_MEMO_H
#define KP_SIG_MEMO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#define KP_SIG_MEMO_ID_LEN  32
#define KP_SIG_MEMO_DIR	    "sigs"	      /* KP_MEMO_DIR (memo-file.h) */
#define KP_SIG_MEMO_MAX_IDS ((size_t)1 << 20) /* 32 MiB of ids: beyond, only this run's kept */
/* An image certificate's length word: the length, its list (kernel/sig-keys.c) above */
#define KP_SIG_MEMO_LEN_MASK 0x3fffffffu

struct kp_sig_memo;

/*
 * The memo of the trusted facts directory @dirfd (borrowed: it must outlive the memo), its
 * verdict files read now. NULL when out of memory; an unreadable or refused directory gives
 * an empty memo that stores nothing.
 */
struct kp_sig_memo *kp_sig_memo_new(int dirfd);
/* Writes what the run added (see above) and frees @m; NULL is fine. */
void kp_sig_memo_free(struct kp_sig_memo *m);

/* 1: @id verifies (stored by an earlier run, or this one's); 0: it failed this run; -1: unknown. */
int kp_sig_memo_lookup(struct kp_sig_memo *m, const unsigned char *id);
/* True when kp_sig_memo_lookup() says 1. */
bool kp_sig_memo_verified(struct kp_sig_memo *m, const unsigned char *id);
/* @id verified now: kept for the next runs (and counted). */
void kp_sig_memo_add(struct kp_sig_memo *m, const unsigned char *id);
/* @id (NULL: none) did not verify now: counted, remembered for this run only. */
void kp_sig_memo_failed(struct kp_sig_memo *m, const unsigned char *id);

struct kp_sig_memo_counts {
	uint64_t hits;	   /* stored verdicts used (each saved a public-key operation) */
	uint64_t verified; /* public-key operations done this run */
	uint64_t stored;   /* new verdicts, written when the memo is freed */
	uint64_t images;   /* kernel images whose certificates came from the memo */
};
void kp_sig_memo_counts(const struct kp_sig_memo *m, struct kp_sig_memo_counts *out);

/* What an image's key is the SHA-256 of (kp_sig_memo_image_state_key() or its bytes). */
enum kp_sig_memo_key { KP_SIG_MEMO_BY_BYTES, KP_SIG_MEMO_BY_STATE };

/*
 * The certificates stored for the kernel image whose bytes or state (@by) hash to @key:
 * *@der (malloc'ed, the caller frees it) holds *@n of them, each a 4-byte little-endian
 * length (its bits above KP_SIG_MEMO_LEN_MASK the caller's: the list) and the DER.
 * 0 when found, -1 when not.
 */
int kp_sig_memo_image_get(struct kp_sig_memo *m, enum kp_sig_memo_key by, const unsigned char *key,
			  unsigned char **der, size_t *len, uint32_t *n);
/*
 * The key of the kernel image open as @fd in the state @st when that state names its bytes
 * (see above; @euid the run's effective user): the SHA-256 of a tag and the state, never the
 * SHA-256 of any file's bytes. 0, or -1 when the state does not name the bytes (the image is
 * to be keyed by its bytes then) or OpenSSL fails.
 */
int kp_sig_memo_image_state_key(int fd, const struct stat *st, uid_t euid,
				unsigned char key[KP_SIG_MEMO_ID_LEN]);
/* Stores @n certificates (@der, @len bytes, the layout above) for the image @key (@by). */
void kp_sig_memo_image_put(struct kp_sig_memo *m, enum kp_sig_memo_key by, const unsigned char *key,
			   const unsigned char *der, size_t len, uint32_t n);

/* What DIR/facts-vN/sigs holds, for `cache show` and `cache prune`. */
struct kp_sig_memo_usage {
	uint64_t files;	   /* every *.memo and image-* file of sigs/ */
	uint64_t bytes;	   /* allocated on disk */
	uint64_t verdicts; /* ids in the verdict files (one verdict may be in two files) */
	uint64_t images;   /* kernel images' certificate files keyed by their bytes */
	uint64_t removed;  /* prune: files removed */
	/* the files among @files, by kind (the others: verdict files) */
	uint64_t states;  /* istate-*: a kernel image's certificates keyed by its file state */
	uint64_t btf;	  /* btf-*.memo: module BTF verdicts (btf-memo.c) */
	uint64_t indexes; /* index-*.memo: depmod indexes checked (index-memo.c) */
	uint64_t kmod;	  /* kmod/kmod-*.memo: libkmod's answers (kmod-memo.c) */
};
/* Adds what the sigs/ directory of the trusted facts directory @dirfd holds to @u. */
void kp_sig_memo_usage_at(int dirfd, struct kp_sig_memo_usage *u);
/*
 * Removes the oldest files (by mtime) of @dirfd's sigs/ beyond @max_bytes in all, and links;
 * adds what is kept and removed to @u.
 */
void kp_sig_memo_prune_at(int dirfd, uint64_t max_bytes, struct kp_sig_memo_usage *u);
/* For `cache clear`: removes every file of DIR/facts-vN/sigs and the directory (counted). */
void kp_sig_memo_clear_at(int dirfd, uint64_t *removed);

#endif
