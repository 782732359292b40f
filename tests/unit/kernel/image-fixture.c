// SPDX-License-Identifier: GPL-2.0-or-later
/* image-fixture.c: kernel images made for test-image-certs and test-image-damaged. */
#include <lzma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <zstd.h>

#include "file/bytes.h"
#include "image-fixture.h"
#include "kernel/sig-keys.h"
#include "tap.h"

unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *p = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
		p = malloc((size_t)n);
		if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
			free(p);
			p = NULL;
		}
		*len = (size_t)n;
	}
	fclose(f);
	return p;
}

void spew(const char *path, const unsigned char *p, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(p, 1, len, f) != len) {
		perror(path);
		exit(99);
	}
	fclose(f);
}

unsigned char *zstd_frames(const unsigned char *raw, size_t len, size_t frames, size_t *zlen)
{
	ZSTD_CCtx *c = ZSTD_createCCtx();
	size_t cap = ZSTD_compressBound(len) + 64 * frames, at = 0;
	unsigned char *z = malloc(cap);

	if (!c || !z)
		exit(99);
	for (size_t i = 0; i < frames; i++) {
		size_t from = len * i / frames, to = len * (i + 1) / frames, r;
		ZSTD_inBuffer ib = { raw + from, to - from, 0 };
		ZSTD_outBuffer ob = { z, cap, at };

		ZSTD_CCtx_reset(c, ZSTD_reset_session_and_parameters);
		ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 3);
		ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, 27);
		ZSTD_CCtx_setParameter(c, ZSTD_c_enableLongDistanceMatching, 1);
		ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 0);
		ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
		do
			r = ZSTD_compressStream2(c, &ob, &ib, ZSTD_e_end);
		while (r != 0 && !ZSTD_isError(r));
		if (ZSTD_isError(r))
			exit(99);
		at = ob.pos;
	}
	ZSTD_freeCCtx(c);
	*zlen = at;
	return z;
}

unsigned char *xz_stream(const unsigned char *raw, size_t len, size_t *zlen)
{
	size_t cap = lzma_stream_buffer_bound(len);
	unsigned char *z = malloc(cap);

	*zlen = 0;
	if (!z ||
	    lzma_easy_buffer_encode(1, LZMA_CHECK_CRC32, NULL, raw, len, z, zlen, cap) != LZMA_OK)
		exit(99);
	return z;
}

void embedded_image(const char *path, const unsigned char *payload, size_t plen, size_t rawlen,
		    const char *decoy, size_t ndecoy)
{
	size_t pre = 65536, post = 16384, n = pre + plen + 4 + post;
	unsigned char *img = malloc(n);

	if (!img)
		exit(99);
	for (size_t i = 0, s = 7; i < n; i++) {
		s = s * 1103515245 + 12345;
		img[i] = (unsigned char)(s >> 16);
	}
	memcpy(img, "\0\x08\0\0\x80\x01\0\0", 8); /* not ELF, not MZ, not HdrS */
	if (decoy)
		memcpy(img + 4096, decoy, ndecoy);
	memcpy(img + pre, payload, plen);
	memcpy(img + pre + plen, &rawlen, 4);
	spew(path, img, n);
	free(img);
}

void certs_of(const char *path, size_t max, char *out, size_t outlen)
{
	struct kp_keyring kr;
	struct kp_err err = { { 0 }, 0 };
	size_t at;

	kp_keyring_init(&kr);
	if (kp_keyring_add_kernel_image(&kr, path, max, &err) < 0) {
		snprintf(out, outlen, "error: %s", err.msg);
		kp_keyring_release(&kr);
		return;
	}
	at = (size_t)snprintf(out, outlen, "%zu:", kr.nkeys);
	for (size_t i = 0; i < kr.nkeys && at < outlen; i++)
		at += (size_t)snprintf(out + at, outlen - at, " %s/%s/%02x%02x%02x%02x",
				       kr.keys[i].subject, kr.keys[i].id_hex, kr.keys[i].key_id[0],
				       kr.keys[i].key_id[1], kr.keys[i].key_id[2],
				       kr.keys[i].key_id[3]);
	kp_keyring_release(&kr);
}

void damage(unsigned char *p, size_t at)
{
	for (size_t i = at; i < at + 64; i++)
		p[i] ^= 0x5a;
}

unsigned char *pem_der(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	X509 *x = f ? PEM_read_X509(f, NULL, NULL, NULL) : NULL;
	unsigned char *der = NULL;
	int n = x ? i2d_X509(x, &der) : -1;

	if (f)
		fclose(f);
	X509_free(x);
	*len = n > 0 ? (size_t)n : 0;
	return n > 0 ? der : NULL;
}

unsigned char *raw_image(size_t *rawlen)
{
	size_t clen = 0, olen = 0, page = (size_t)sysconf(_SC_PAGESIZE), len = (size_t)12 << 20;
	unsigned char *cert = slurp(tap_srcpath("tests/data/sig/test-cert.der"), &clen);
	unsigned char *other = pem_der(tap_srcpath("tests/data/sig/other-cert.pem"), &olen);
	unsigned char *raw = calloc(1, len);

	if (!cert || !other || !raw)
		exit(99);
	memcpy(raw, "\177ELF", 4);
	for (size_t i = 4, s = 1; i < (size_t)1 << 20; i++) {
		s = s * 1103515245 + 12345;
		raw[i] = (unsigned char)(s >> 16);
	}
	memcpy(raw + ((size_t)9 << 20), raw + 4096, (size_t)1 << 20);
	memcpy(raw + ((size_t)10 << 20) + 4 * KP_STREAM_CHUNK - clen / 2, cert, clen);
	memcpy(raw + len - 3 * page - clen, other, olen);
	free(cert);
	OPENSSL_free(other);
	*rawlen = len;
	return raw;
}
