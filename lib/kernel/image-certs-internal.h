/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The certificates compiled into a kernel image (image-certs.c): found in the decompressed
 * image (a bzImage's or EFI zboot image's payload, streamed; the xz or zstd payload inside
 * an arm zImage or an s390 image, streamed; a vmlinux), each placed in the list of
 * certs/system_certificates.S or certs/revocation_certificates.S it belongs to, and memoised
 * by the image's bytes. Private to lib/kernel/: sig-keys.c turns them into keyring entries.
 */
#ifndef KP_KERNEL_IMAGE_CERTS_INTERNAL_H
#define KP_KERNEL_IMAGE_CERTS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/x509.h>

#include "cache/sig-memo.h"
#include "util/util.h"

/*
 * A certificate found in a kernel image: its place in the decompressed image and the bytes
 * after it from the first non-zero 4-byte aligned word on (at most TAIL_REACH bytes of zeros
 * skipped: .align 8 and CONFIG_SYSTEM_EXTRA_CERTIFICATE's .fill), where a list's size is.
 */
#define TAIL_LEN 32
struct img_cert {
	X509 *x; /* owned until taken */
	uint64_t off;
	size_t len;
	unsigned char tail[TAIL_LEN];
	size_t ntail;
};

/* The certificates of one image, in the order of the image. */
struct found_certs {
	struct img_cert *c;
	size_t n, cap;
	bool oom;
};

/*
 * Which list of certs/system_certificates.S and certs/revocation_certificates.S a
 * certificate is in (kp_sig_memo stores it in the two top bits of the length).
 */
enum img_role {
	ROLE_SYSTEM,	      /* system_certificate_list: .builtin_trusted_keys */
	ROLE_REVOCATION,      /* revocation_certificate_list: .blacklist (load_revocation_...()) */
	ROLE_UNPLACED,	      /* neither found: trusted unless the kernel has a revocation list */
	ROLE_UNPLACED_BESIDE, /* neither, in an image with a revocation list: not trusted */
};

/* Frees @f's certificates and empties it. */
void kp_found_certs_release(struct found_certs *f);

/*
 * The certificates of the image @path (under @root, NULL for none: opened inside it as
 * kp_open_regular_in()) and their roles (*@role: allocated), from @memo when it
 * has the image's bytes, else read and classified (and stored in @memo). Touches no keyring:
 * kp_keyring_image_begin()'s thread runs it. 0, or -1 with @err: also for an image cut short
 * (its headers give more bytes than the file has, the file ends inside its payload, or no
 * header describes it and it holds neither a certificate nor a payload that decodes) or
 * whose payload is corrupt: never fewer certificates than the image has.
 */
struct kp_root_dir;
int kp_image_certs_get(struct kp_sig_memo *memo, const struct kp_root_dir *root, const char *path,
		       size_t max, struct found_certs *f, enum img_role **role, struct kp_err *err);

/*
 * True when the image's certificates are behind a slow decoder: the payload of a bzImage or
 * an EFI zboot image compressed with xz or gzip (liblzma decodes 65 MB of
 * amd64-6.1's in 0.77 s). Not a zstd payload (decoded in place at over 1 GB/s: a thread would
 * gain little and hold the image's memory beside the modules'), an uncompressed one, or a
 * file read whole (a vmlinux, an arm zImage).
 */
bool kp_image_slow_payload(const struct kp_root_dir *root, const char *path);

#endif
