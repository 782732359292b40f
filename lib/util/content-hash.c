// SPDX-License-Identifier: LGPL-2.1-or-later
/* The SHA-256 of a file's bytes (content-hash.h). */
#include "content-hash.h"

#include <errno.h>
#include <unistd.h>

#include <openssl/evp.h>

int kp_content_hash_fd(int fd, uint64_t size, unsigned char out[KP_CONTENT_HASH_LEN])
{
	return kp_content_hash_fd_md(fd, size, NULL, out);
}

int kp_content_hash_fd_md(int fd, uint64_t size, const struct evp_md_st *md,
			  unsigned char out[KP_CONTENT_HASH_LEN])
{
	/* on the stack: a heap buffer this size is trimmed on every free */
	unsigned char buf[65536];
	EVP_MD_CTX *ctx;
	uint64_t off = 0;
	unsigned int len = KP_CONTENT_HASH_LEN;
	int r = -1;

	if (size > KP_CONTENT_HASH_MAX)
		return -1;
	ctx = EVP_MD_CTX_new();
	if (!ctx || EVP_DigestInit_ex(ctx, md ? md : EVP_sha256(), NULL) != 1)
		goto out;
	for (;;) {
		ssize_t n = pread(fd, buf, sizeof(buf), (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto out;
		if (n == 0)
			break;
		off += (uint64_t)n;
		if (off > size || EVP_DigestUpdate(ctx, buf, (size_t)n) != 1)
			goto out;
	}
	if (off == size && EVP_DigestFinal_ex(ctx, out, &len) == 1 && len == KP_CONTENT_HASH_LEN)
		r = 0;
out:
	EVP_MD_CTX_free(ctx);
	return r;
}
