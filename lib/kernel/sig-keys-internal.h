/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the keyring's files share (sig-keys.c: the keyring, where a key lands under the
 * model; sig-keys-sources.c: the keys read from certificate files and EFI signature lists,
 * and the adders every source uses; sig-keys-image.c: a kernel image's; sig-keys-proc.c:
 * /proc/keys'; sig-keys-verify.c: the signature checked against them).
 * Private to lib/kernel/.
 */
#ifndef KP_KERNEL_SIG_KEYS_INTERNAL_H
#define KP_KERNEL_SIG_KEYS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include <openssl/x509.h>

#include "sig-keys.h"
#include "util/util.h"

/* @p in lower-case hex, in @a; NULL when out of memory. */
const char *kp_keyring_hex(struct kp_arena *a, const unsigned char *p, size_t len);
/* @line appended to *@list (arena-grown); -1 when out of memory or @line is NULL. */
int kp_keyring_add_line(struct kp_arena *a, const char ***list, size_t *n, const char *line);
/* The keyring and search pass of a key under @m (NULL: no model, only the kernel's own). */
void kp_key_place(struct kp_trusted_key *k, const struct kp_keyring_model *m, bool after,
		  const char **keyring, int *pass);
/* A new key of @origin at the end of @kr, placed under its model; NULL when out of memory. */
struct kp_trusted_key *kp_keyring_new_key(struct kp_keyring *kr, enum kp_key_origin origin);
/* @h in @list of @n SHA-256 hashes (those from MOK only when @mok_loaded). */
bool kp_keyring_in_hashes(unsigned char (*list)[32], const bool *from_mok, size_t n,
			  const unsigned char *h, bool mok_loaded);
/* SHA-256 of the certificate's SubjectPublicKeyInfo (DER): what a verdict is about. */
bool kp_x509_key_id(X509 *x, unsigned char id[32]);
/*
 * The certificate @x (taken: freed when a duplicate or on failure) as a key of @origin from
 * @source: 1 when added, 0 when the same certificate of @origin was there, -1 when out of
 * memory.
 */
int kp_keyring_add_x509(struct kp_keyring *kr, X509 *x, const char *source,
			enum kp_key_origin origin);
/* A SHA-256 hash @h into @list (arena-grown), with its from-MOK flag; -1 when out of memory. */
int kp_keyring_add_hash(struct kp_arena *a, unsigned char (**list)[32], bool **from_mok, size_t *n,
			const unsigned char *h, bool mok);
/* A revoked certificate (taken: freed on failure) into kr->revoked; -1 when out of memory. */
int kp_keyring_add_revoked(struct kp_keyring *kr, X509 *x, bool mok, bool image,
			   const char *source);

static inline int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

#endif
