/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ECDSA P-256 and P-384 signature verification with nettle (hogweed), about twice as fast as
 * OpenSSL 3.0's generic P-384 (issue 28: Debian signs its modules with a P-384 key, and a
 * cold `check -b` verifies thousands of them). Only a "verifies" is a verdict: everything
 * else (no such key or digest, a signature that does not verify, any failure) is left to
 * OpenSSL, whose verdict the caller then takes, so the two can never disagree on a "no".
 */
#ifndef KP_KERNEL_ECDSA_NETTLE_H
#define KP_KERNEL_ECDSA_NETTLE_H

#include <stdbool.h>
#include <stddef.h>

#include <openssl/evp.h>

/* The largest coordinate the fast path handles: P-384's 48 bytes. */
#define KP_ECDSA_MAX_BYTES 48

/* A public key of a curve the fast path knows, as unsigned big-endian coordinates. */
struct kp_ecdsa_pub {
	int nid;      /* NID_X9_62_prime256v1 or NID_secp384r1 */
	size_t bytes; /* 32 or 48: the width of x and y */
	unsigned char x[KP_ECDSA_MAX_BYTES], y[KP_ECDSA_MAX_BYTES];
};

/*
 * @pk's key as a struct kp_ecdsa_pub: true for an EC key on P-256 or P-384 with an affine
 * point, false otherwise (another key type or curve, the point at infinity, an allocation
 * failing): the fast path does not apply.
 */
bool kp_ecdsa_pub_from_pkey(const EVP_PKEY *pk, struct kp_ecdsa_pub *pub);

/*
 * true when @sig (a DER ECDSA-Sig-Value, as OpenSSL's ECDSA_verify() reads it: canonical DER,
 * nothing after it) is @pub's signature of @digest, a @md digest (SHA-256, SHA-384 or SHA-512,
 * @digest_len its size), as OpenSSL's EVP_PKEY_verify() would say; false when it does not or
 * when the fast path cannot tell (the point not on the curve, r or s out of [1, n-1], another
 * digest, a failure): then ask OpenSSL.
 */
bool kp_ecdsa_nettle_verifies(const struct kp_ecdsa_pub *pub, const EVP_MD *md,
			      const unsigned char *sig, size_t sig_len, const unsigned char *digest,
			      size_t digest_len);

#endif
