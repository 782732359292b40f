/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What IMA appraisal looks at besides a module's bytes: the file's security.ima extended
 * attribute (security/integrity/ima/ima_appraise.c, ima_read_xattr() and xattr_verify()),
 * the file system it lives on (the fsmagic= of policy rules) and its owner (fowner=).
 * Read for each module only when the target kernel's IMA policy appraises modules.
 */
#ifndef KP_IMA_XATTR_H
#define KP_IMA_XATTR_H

#include <stdbool.h>
#include <stdint.h>

/* The security.ima value types of security/integrity/integrity.h (enum evm_ima_xattr_type). */
enum {
	KP_IMA_XATTR_DIGEST = 0x01,    /* IMA_XATTR_DIGEST: a SHA-1 digest (old format) */
	KP_IMA_XATTR_DIGSIG = 0x03,    /* EVM_IMA_XATTR_DIGSIG: a signature (signature_v2_hdr) */
	KP_IMA_XATTR_DIGEST_NG = 0x04, /* IMA_XATTR_DIGEST_NG: hash algorithm id + digest */
};

enum kp_ima_xattr_state {
	KP_IMA_X_UNREAD = 0, /* not looked at (a module read from a buffer, or not asked) */
	KP_IMA_X_NONE,	     /* the file has no security.ima (ENODATA) */
	KP_IMA_X_NO_SUPPORT, /* its file system has no extended attributes (ENOTSUP) */
	KP_IMA_X_UNREADABLE, /* another error: the file could not be opened or read */
	KP_IMA_X_DIGEST,     /* a digest (type 0x01 or 0x04) */
	KP_IMA_X_DIGSIG,     /* a signature (type 0x03) */
	KP_IMA_X_OTHER,	     /* another type (fs-verity 0x06, EVM's, garbage) */
};

#define KP_IMA_DIGEST_MAX 64

struct kp_ima_file {
	enum kp_ima_xattr_state state;
	uint8_t type;	     /* the attribute's first byte */
	int hash_algo;	     /* IMA's hash_algo id (include/uapi/linux/hash_info.h), -1: none */
	uint8_t sig_version; /* KP_IMA_X_DIGSIG: signature_v2_hdr.version */
	/* KP_IMA_X_DIGEST: the file's bytes hash to the stored digest: 1, differ: 0, -1 not
	 * computed (an algorithm this libcrypto lacks, or a short attribute) */
	int digest_match;
	bool fs_known;
	int64_t fs_magic; /* statfs() f_type */
	bool owner_known;
	uint32_t uid;
	int err; /* KP_IMA_X_UNREADABLE: the errno */
};

/*
 * Reads @path's security.ima, file system and owner into @out (its state says what was
 * found; a file that cannot be opened is KP_IMA_X_UNREADABLE). A digest attribute is checked
 * against the file's bytes, as xattr_verify() compares it with the measured hash.
 */
void kp_ima_file_read(const char *path, struct kp_ima_file *out);
/* The same for @path under @root, opened inside it as kp_open_regular_in(). */
struct kp_root_dir;
void kp_ima_file_read_in(const struct kp_root_dir *root, const char *path, struct kp_ima_file *out);

/* The kernel's name of IMA hash algorithm @id ("sha256"), NULL when unknown. */
const char *kp_ima_hash_name(int id);

#endif
