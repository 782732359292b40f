/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ECDSA P-256 and P-384 signature verification with nettle (hogweed), about twice as fast as
 * OpenSSL 3.0's generic P-384 (issue 28: Debian signs its modules with a P-384 key, and a
 * cold `check -b` verifies thousands of them). Only a "verifies" is a verdict: everything
 * else (no such key or digest, a signature that does not verify, any failure) is left to
 * OpenSSL, whose verdict the caller then takes, so the two can never disagree on a "no".
 *
 * The binary is not linked against hogweed, nettle and GMP (three more libraries for every
 * process to map and relocate, 0.2-0.4 ms at each start of the modprobe hook, which almost
 * never verifies ECDSA): libhogweed is dlopen()ed by its SONAME, found by configure, when the
 * first P-256/P-384 verification needs it. When it cannot be loaded, OpenSSL verifies: the
 * same verdicts, slower.
 */
#ifndef KP_KERNEL_ECDSA_NETTLE_H
#define KP_KERNEL_ECDSA_NETTLE_H

#include <stdbool.h>
#include <stddef.h>

#include <openssl/evp.h>

/*
 * libhogweed, loaded at most once, on first use, by whichever thread gets there first; NULL
 * (out of memory) works as a library that cannot be loaded.
 */
struct kp_ecdsa_lib;

struct kp_ecdsa_lib *kp_ecdsa_lib_new(void);
/* The same with another SONAME (tests: a library that is not there); never a path. */
struct kp_ecdsa_lib *kp_ecdsa_lib_new_soname(const char *soname);
void kp_ecdsa_lib_free(struct kp_ecdsa_lib *lib);
/* Loads the library if not tried yet: true when the fast path is available. */
bool kp_ecdsa_lib_available(struct kp_ecdsa_lib *lib);

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
 * digest, a failure, @lib that cannot be loaded): then ask OpenSSL.
 */
bool kp_ecdsa_nettle_verifies(struct kp_ecdsa_lib *lib, const struct kp_ecdsa_pub *pub,
			      const EVP_MD *md, const unsigned char *sig, size_t sig_len,
			      const unsigned char *digest, size_t digest_len);

#endif
