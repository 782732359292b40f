// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ima-xattr.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "bytes.h"

/* hash_algo_name[] of crypto/hash_info.c, by the ids of include/uapi/linux/hash_info.h */
static const char *const hash_names[] = {
	"md4",	       "md5",	      "sha1",	  "rmd160",   "sha256",	  "sha384",
	"sha512",      "sha224",      "rmd128",	  "rmd256",   "rmd320",	  "wp256",
	"wp384",       "wp512",	      "tgr128",	  "tgr160",   "tgr192",	  "sm3",
	"streebog256", "streebog512", "sha3-256", "sha3-384", "sha3-512",
};

/* OpenSSL's names of the same ids; NULL where OpenSSL has none. */
static const char *const openssl_names[] = {
	"MD4", "MD5", "SHA1", "RIPEMD160", "SHA256",   "SHA384",   "SHA512",   "SHA224",
	NULL,  NULL,  NULL,   NULL,	   NULL,       NULL,	   NULL,       NULL,
	NULL,  "SM3", NULL,   NULL,	   "SHA3-256", "SHA3-384", "SHA3-512",
};

const char *kp_ima_hash_name(int id)
{
	if (id < 0 || (size_t)id >= sizeof(hash_names) / sizeof(hash_names[0]))
		return NULL;
	return hash_names[id];
}

/* 1 when the bytes of @fd (@size of them) hash to @want with IMA algorithm @algo, 0 when
 * not, -1 when it cannot be computed. */
static int digest_matches(int fd, uint64_t size, int algo, const uint8_t *want, size_t want_len)
{
	unsigned char md_out[EVP_MAX_MD_SIZE], buf[65536];
	unsigned int md_len = 0;
	const char *name;
	EVP_MD *md;
	EVP_MD_CTX *ctx;
	uint64_t off = 0;
	int r = -1;

	if (algo < 0 || (size_t)algo >= sizeof(openssl_names) / sizeof(openssl_names[0]) ||
	    !(name = openssl_names[algo]))
		return -1;
	md = EVP_MD_fetch(NULL, name, NULL);
	if (!md)
		return -1;
	ctx = EVP_MD_CTX_new();
	if (!ctx || !EVP_DigestInit_ex(ctx, md, NULL))
		goto out;
	while (off < size) {
		ssize_t n = pread(fd, buf, sizeof(buf), (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || !EVP_DigestUpdate(ctx, buf, (size_t)n))
			goto out;
		off += (uint64_t)n;
	}
	if (!EVP_DigestFinal_ex(ctx, md_out, &md_len))
		goto out;
	/* xattr_verify(): the stored value may be longer (md5 took 20 bytes once), not shorter */
	if (want_len < md_len)
		goto out;
	r = memcmp(want, md_out, md_len) == 0;
out:
	EVP_MD_CTX_free(ctx);
	EVP_MD_free(md);
	return r;
}

static void classify(int fd, uint64_t size, const uint8_t *v, size_t len, struct kp_ima_file *out)
{
	out->type = v[0];
	switch (v[0]) {
	case KP_IMA_XATTR_DIGEST: /* the SHA-1 of the file */
		out->state = KP_IMA_X_DIGEST;
		out->hash_algo = 2;
		out->digest_match = digest_matches(fd, size, 2, v + 1, len - 1);
		break;
	case KP_IMA_XATTR_DIGEST_NG:
		out->state = KP_IMA_X_DIGEST;
		if (len < 2)
			break;
		out->hash_algo = v[1];
		out->digest_match = digest_matches(fd, size, v[1], v + 2, len - 2);
		break;
	case KP_IMA_XATTR_DIGSIG: /* struct signature_v2_hdr: type, version, hash_algo, ... */
		out->state = KP_IMA_X_DIGSIG;
		if (len >= 3) {
			out->sig_version = v[1];
			out->hash_algo = v[2];
		}
		break;
	default:
		out->state = KP_IMA_X_OTHER;
		break;
	}
}

void kp_ima_file_read(const char *path, struct kp_ima_file *out)
{
	kp_ima_file_read_in(NULL, path, out);
}

void kp_ima_file_read_in(const struct kp_root_dir *root, const char *path, struct kp_ima_file *out)
{
	uint8_t value[8192];
	struct kp_err err = { 0 };
	struct statfs sfs;
	struct stat st;
	ssize_t len;
	int fd;

	memset(out, 0, sizeof(*out));
	out->hash_algo = -1;
	out->digest_match = -1;
	fd = kp_open_regular_in(root, path, &st, &err);
	if (fd < 0) {
		out->state = KP_IMA_X_UNREADABLE;
		out->err = err.errnum ? err.errnum : EIO;
		return;
	}
	out->owner_known = true;
	out->uid = st.st_uid;
	if (fstatfs(fd, &sfs) == 0) {
		out->fs_known = true;
		out->fs_magic = (int64_t)sfs.f_type;
	}
	len = fgetxattr(fd, "security.ima", value, sizeof(value));
	if (len < 0) {
		if (errno == ENODATA)
			out->state = KP_IMA_X_NONE;
		else if (errno == ENOTSUP)
			out->state = KP_IMA_X_NO_SUPPORT;
		else if (errno == ERANGE)
			out->state = KP_IMA_X_OTHER; /* longer than any digest or signature */
		else {
			out->state = KP_IMA_X_UNREADABLE;
			out->err = errno;
		}
	} else if (len == 0) {
		out->state = KP_IMA_X_OTHER;
	} else {
		classify(fd, (uint64_t)st.st_size, value, (size_t)len, out);
	}
	close(fd);
}
