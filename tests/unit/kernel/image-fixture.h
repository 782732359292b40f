/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * image-fixture.h: kernel images made for test-image-certs.c and test-image-damaged.c (the
 * decompressed image with its two certificates, its payloads as kbuild compresses them, a
 * self-decompressing image around one) and the certificates read from one, as one line.
 * A failure to make one exits 99 (the TAP driver's hard error).
 */
#ifndef KP_TEST_IMAGE_FIXTURE_H
#define KP_TEST_IMAGE_FIXTURE_H

#include <stddef.h>

/* The bytes of the file @path (*@len), or NULL. */
unsigned char *slurp(const char *path, size_t *len);
/* Writes @len bytes of @p as @path. */
void spew(const char *path, const unsigned char *p, size_t len);
/* The DER bytes of the PEM certificate @path (OPENSSL_free() them), or NULL. */
unsigned char *pem_der(const char *path, size_t *len);
/*
 * An ELF-like image of *@rawlen (12 MiB) bytes: text (a pseudo-random, little-compressible
 * run), megabytes of zeros (.bss, padding: the pages given back), the text again 8 MiB further
 * (a match reaching back over the zeros), tests/data/sig/test-cert.der across a page and a
 * KP_STREAM_CHUNK boundary, more zeros, and other-cert.pem near the end.
 */
unsigned char *raw_image(size_t *rawlen);
/*
 * zstd frames of @raw as kbuild's `zstd -22 --ultra` leaves them: no content size, a 2^27
 * window, the CLI's checksum.
 */
unsigned char *zstd_frames(const unsigned char *raw, size_t len, size_t frames, size_t *zlen);
/* One xz stream of @raw as kbuild's xz_wrap.sh writes it (CRC32; dict 32 MiB there, 8 here). */
unsigned char *xz_stream(const unsigned char *raw, size_t len, size_t *zlen);
/*
 * A self-decompressing image (an s390 image, an arm zImage): 64 KiB of the decompressor's
 * code (pseudo-random bytes, @decoy's @ndecoy bytes among them), the payload at no offset a
 * header gives, its 4-byte size, 16 KiB more code.
 */
void embedded_image(const char *path, const unsigned char *payload, size_t plen, size_t rawlen,
		    const char *decoy, size_t ndecoy);
/* The image's certificates as one line: "N: subject/id/key-id-prefix ..." or "error: msg". */
void certs_of(const char *path, size_t max, char *out, size_t outlen);
/* 64 bytes of @p from @at on damaged (the same call again restores them). */
void damage(unsigned char *p, size_t at);

#endif
