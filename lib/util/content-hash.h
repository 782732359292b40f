/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The SHA-256 of a file's bytes, for inputs whose stat() state does not name their bytes
 * (fs-trust.h). A cryptographic hash: the value decides which stored answer a file gets,
 * so two files made to collide must not share one. SHA-256 (OpenSSL, SHA-NI) runs at
 * ~1.5 GB/s here; only files no state can be trusted for are hashed.
 */
#ifndef KP_CONTENT_HASH_H
#define KP_CONTENT_HASH_H

#include <stdint.h>

#define KP_CONTENT_HASH_LEN 32
/* Files larger than this are not hashed: a run that would have to is not cached. */
#define KP_CONTENT_HASH_MAX ((uint64_t)1 << 30)

/*
 * SHA-256 of the bytes of @fd from offset 0 (pread: the file offset does not move), which
 * must be exactly @size; 0, or -1 when they cannot be read, there are more or fewer, @size
 * is over KP_CONTENT_HASH_MAX, or OpenSSL fails.
 */
int kp_content_hash_fd(int fd, uint64_t size, unsigned char out[KP_CONTENT_HASH_LEN]);

struct evp_md_st; /* OpenSSL's EVP_MD */
/*
 * The same with a SHA-256 the caller fetched once (EVP_MD_fetch()): EVP_sha256() makes
 * OpenSSL 3 look the algorithm up again on every EVP_DigestInit_ex(). @md NULL: EVP_sha256().
 */
int kp_content_hash_fd_md(int fd, uint64_t size, const struct evp_md_st *md,
			  unsigned char out[KP_CONTENT_HASH_LEN]);

#endif
