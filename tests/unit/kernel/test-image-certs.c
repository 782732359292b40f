// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The certificates of kernel images (kp_keyring_add_kernel_image()) and the zstd stream under
 * it (kp_bytes_stream_fd(), decoded in place with its pages of zeros given back): bzImages
 * built here with a zstd payload as kbuild writes it (no content size, a large window, the
 * 4-byte size after it), checked against the same bytes uncompressed; the output handed to
 * the sink byte for byte, with matches reaching back into pages given back; several frames;
 * truncated and corrupt payloads and the size cap, each one line; an xz image read on its own
 * thread (kp_keyring_image_begin(), _end()) while a certificate file is added: the keyring of
 * the image read in order; images of every format read cut short (half written) at several
 * points or damaged: one line naming the problem, never fewer certificates (damaged()).
 *
 * With arguments (--list IMAGE...): each image's certificates, one line each (subject, key
 * id, SHA-256 of the public key), to compare two builds on real images.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <lzma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <zstd.h>

#include "compress.h"
#include "file/bytes.h"
#include "kernel/sig-keys.h"
#include "tap.h"

static unsigned char *slurp(const char *path, size_t *len)
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

static void spew(const char *path, const unsigned char *p, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(p, 1, len, f) != len) {
		perror(path);
		exit(99);
	}
	fclose(f);
}

/*
 * zstd frames of @raw as kbuild's `zstd -22 --ultra` leaves them: no content size, a 2^27
 * window, the CLI's checksum.
 */
static unsigned char *zstd_frames(const unsigned char *raw, size_t len, size_t frames, size_t *zlen)
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

/* One xz stream of @raw as kbuild's xz_wrap.sh writes it (CRC32; dict 32 MiB there, 8 here). */
static unsigned char *xz_stream(const unsigned char *raw, size_t len, size_t *zlen)
{
	size_t cap = lzma_stream_buffer_bound(len);
	unsigned char *z = malloc(cap);

	*zlen = 0;
	if (!z ||
	    lzma_easy_buffer_encode(1, LZMA_CHECK_CRC32, NULL, raw, len, z, zlen, cap) != LZMA_OK)
		exit(99);
	return z;
}

/* A bzImage (arch/x86/boot/header.S) around @payload, with kbuild's 4-byte size after it. */
static void bzimage(const char *path, const unsigned char *payload, size_t plen, size_t rawlen,
		    size_t say_len)
{
	size_t total = 1024 + plen + 4;
	unsigned char *img = calloc(1, total);

	if (!img)
		exit(99);
	img[0x1f1] = 1; /* setup_sects: the payload starts after 2 * 512 bytes */
	memcpy(img + 0x202, "HdrS", 4);
	for (int i = 0; i < 4; i++) {
		img[0x248 + i] = 0;
		img[0x24c + i] = (unsigned char)((say_len ? say_len : plen + 4) >> (8 * i));
		img[1024 + plen + i] = (unsigned char)(rawlen >> (8 * i));
	}
	memcpy(img + 1024, payload, plen);
	spew(path, img, total);
	free(img);
}

/*
 * A self-decompressing image (an s390 image, an arm zImage): 64 KiB of the decompressor's
 * code (pseudo-random bytes, @decoy's @ndecoy bytes among them), the payload at no offset a
 * header gives, its 4-byte size, 16 KiB more code.
 */
static void embedded_image(const char *path, const unsigned char *payload, size_t plen,
			   size_t rawlen, const char *decoy, size_t ndecoy)
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

/* The image's certificates as one line: "N: subject/id/key-id-prefix ..." or "error: msg". */
static void certs_of(const char *path, size_t max, char *out, size_t outlen)
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

/* The keyring as one line: each key's subject, source and keyring, then each source line. */
static void keyring_line(const struct kp_keyring *kr, char *out, size_t outlen)
{
	size_t at = (size_t)snprintf(out, outlen, "%zu:", kr->nkeys);

	for (size_t i = 0; i < kr->nkeys && at < outlen; i++)
		at += (size_t)snprintf(out + at, outlen - at, " %s<%s>", kr->keys[i].subject,
				       kr->keys[i].source);
	for (size_t i = 0; i < kr->nsources && at < outlen; i++)
		at += (size_t)snprintf(out + at, outlen - at, " | %s", kr->sources[i]);
}

/*
 * The image read as kp_keyring_add_kernel_image() between a certificate file before and one
 * after (@sync), or begun on its thread before the second file and ended after it: the
 * keyring as one line, or "error: msg", or "not begun".
 */
static void around(const char *path, const char *cert_a, const char *cert_b, bool sync, char *out,
		   size_t outlen)
{
	struct kp_keyring kr;
	struct kp_err err = { { 0 }, 0 };
	struct kp_image_read *p = NULL;
	int r = 0;

	kp_keyring_init(&kr);
	kp_keyring_add_cert_file(&kr, cert_a, &err);
	if (sync)
		r = kp_keyring_add_kernel_image(&kr, path, KP_DEFAULT_MAX_SIZE, &err);
	else if (!(p = kp_keyring_image_begin(&kr, path, KP_DEFAULT_MAX_SIZE)))
		snprintf(out, outlen, "not begun");
	kp_keyring_add_cert_file(&kr, cert_b, &err);
	if (p)
		r = kp_keyring_image_end(&kr, p, &err);
	if (r < 0)
		snprintf(out, outlen, "error: %s", err.msg);
	else if (sync || p)
		keyring_line(&kr, out, outlen);
	kp_keyring_release(&kr);
}

struct collect {
	unsigned char *p;
	size_t len, cap, pieces, largest;
};

static int collect(const unsigned char *p, size_t n, void *arg)
{
	struct collect *c = arg;

	if (c->len + n > c->cap)
		return 1;
	memcpy(c->p + c->len, p, n);
	c->len += n;
	c->pieces++;
	if (n > c->largest)
		c->largest = n;
	return 0;
}

/* The DER bytes of the PEM certificate @path. */
static unsigned char *pem_der(const char *path, size_t *len)
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

static int list(int argc, char **argv)
{
	for (int i = 2; i < argc; i++) {
		struct kp_keyring kr;
		struct kp_err err = { { 0 }, 0 };

		kp_keyring_init(&kr);
		if (kp_keyring_add_kernel_image(&kr, argv[i], KP_DEFAULT_MAX_SIZE, &err) < 0)
			printf("%s: error: %s\n", argv[i], err.msg);
		for (size_t k = 0; k < kr.nkeys; k++) {
			printf("%s: %s / %s / ", argv[i], kr.keys[k].subject, kr.keys[k].id_hex);
			for (int b = 0; b < 32; b++)
				printf("%02x", kr.keys[k].key_id[b]);
			putchar('\n');
		}
		for (size_t s = 0; s < kr.nsources; s++)
			printf("%s: source: %s\n", argv[i], kr.sources[s]);
		kp_keyring_release(&kr);
	}
	return 0;
}

/* A gzip member of @raw, as Debian's arm64 Image.gz. */
static unsigned char *gzip_member(const unsigned char *raw, size_t len, size_t *zlen)
{
	size_t cap = len + len / 100 + 4096;
	unsigned char *out = malloc(cap);

	if (!out)
		exit(99);
	*zlen = tu_gzip(raw, len, out, cap);
	return out;
}

/* 64 bytes of @p from @at on damaged (the same call again restores them). */
static void damage(unsigned char *p, size_t at)
{
	for (size_t i = at; i < at + 64; i++)
		p[i] ^= 0x5a;
}

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/*
 * An EFI-stub bzImage as Debian's amd64 images: @payload and its size, 4 KiB more code
 * (syssize and the PE .text section end there), then a 1472-byte signature the PE security
 * directory places there (sbsign).
 */
static void efi_bzimage(const char *path, const unsigned char *payload, size_t plen, size_t rawlen)
{
	size_t code = (1024 + plen + 4 + 4096 + 15) / 16 * 16, total = code + 1472;
	unsigned char *img = calloc(1, total);
	size_t pe = 0x80, opt = pe + 24, sec = opt + 240;

	if (!img)
		exit(99);
	memcpy(img, "MZ", 2);
	put32(img + 0x3c, (uint32_t)pe);
	memcpy(img + pe, "PE\0\0", 4);
	img[pe + 6] = 1;    /* NumberOfSections */
	img[pe + 20] = 240; /* SizeOfOptionalHeader: PE32+ with 16 data directories */
	img[opt] = 0x0b;
	img[opt + 1] = 0x02;
	img[opt + 108] = 16;
	put32(img + opt + 144, (uint32_t)code); /* the security directory: the signature */
	put32(img + opt + 148, 1472);
	memcpy(img + sec, ".text", 5);
	put32(img + sec + 16, (uint32_t)(code - 1024));
	put32(img + sec + 20, 1024);
	img[0x1f1] = 1;
	put32(img + 0x1f4, (uint32_t)((code - 1024) / 16)); /* syssize */
	memcpy(img + 0x202, "HdrS", 4);
	put32(img + 0x24c, (uint32_t)(plen + 4));
	memcpy(img + 1024, payload, plen);
	put32(img + 1024 + plen, (uint32_t)rawlen);
	memset(img + code, 0x30, 1472);
	spew(path, img, total);
	free(img);
}

/* An arm64 EFI zboot image: "zimg", the payload's offset and size, the payload at 4 KiB. */
static void zboot_image(const char *path, const unsigned char *payload, size_t plen)
{
	unsigned char *img = calloc(1, 4096 + plen);

	if (!img)
		exit(99);
	memcpy(img, "MZ", 2);
	memcpy(img + 4, "zimg", 4);
	put32(img + 8, 4096);
	put32(img + 12, (uint32_t)plen);
	memcpy(img + 4096, payload, plen);
	spew(path, img, 4096 + plen);
	free(img);
}

/* The zImage header (arch/arm/boot/compressed/head.S) put on the image at @path. */
static void zimage_header(const char *path)
{
	size_t n = 0;
	unsigned char *img = slurp(path, &n);

	if (!img)
		exit(99);
	put32(img + 0x24, 0x016f2818);
	put32(img + 0x28, 0);
	put32(img + 0x2c, (uint32_t)n);
	spew(path, img, n);
	free(img);
}

/* @from's first @n bytes as @to: an image half written. */
static void head_of(const char *from, const char *to, size_t n)
{
	size_t len = 0;
	unsigned char *p = slurp(from, &len);

	if (!p || n > len)
		exit(99);
	spew(to, p, n);
	free(p);
}

/* The image @full cut to @n bytes gives one line starting with @want. */
static void cut_says(struct tap *t, const char *full, const char *path, size_t n, const char *what,
		     const char *want)
{
	char got[2048];

	head_of(full, path, n);
	certs_of(path, KP_DEFAULT_MAX_SIZE, got, sizeof(got));
	tap_ok(t, !strncmp(got, want, strlen(want)) && !strchr(got, '\n'), "%s, cut at %zu: %s",
	       what, n, got);
}

/*
 * Images half written (a kernel-install hook reading a vmlinuz being copied) or damaged,
 * each format read: one line naming the problem, never fewer certificates. @raw: the image's
 * decompressed bytes, @want: its certificates as certs_of() says them.
 */
static void damaged(struct tap *t, const char *dir, const unsigned char *raw, size_t rawlen,
		    const char *want)
{
	char full[4096], path[4096], got[2048];
	const size_t pre = 65536; /* embedded_image()'s code before the payload */
	const char *nothing = "error: no certificate and no complete xz or zstd payload";
	const char *bz_past = "error: truncated bzImage: its payload lies past the end of the file";
	size_t zlen, cuts[3];
	unsigned char *z, *vm;

	snprintf(full, sizeof(full), "%s/full", dir);
	snprintf(path, sizeof(path), "%s/cut", dir);

	/* an s390 image: the zstd payload at no offset a header gives */
	z = zstd_frames(raw, rawlen, 1, &zlen);
	embedded_image(full, z, zlen, rawlen, NULL, 0);
	cuts[0] = pre + zlen / 10;
	cuts[1] = pre + zlen / 2;
	cuts[2] = pre + zlen - 1;
	for (int i = 0; i < 3; i++)
		cut_says(t, full, path, cuts[i], "s390 image (zstd payload)",
			 "error: truncated image: its zstd payload ends with the file (zstd: "
			 "truncated zstd stream)");
	cut_says(t, full, path, pre + 64, "s390 image, nothing of the payload decoded yet",
		 "error: truncated image: its zstd payload ends with the file");
	cut_says(t, full, path, pre + 2, "s390 image, inside the payload's magic", nothing);
	cut_says(t, full, path, pre / 2, "s390 image, before its payload", nothing);
	cut_says(t, full, path, pre + zlen, "s390 image, its payload whole (the code after it cut)",
		 want);
	damage(z, zlen / 2);
	embedded_image(full, z, zlen, rawlen, NULL, 0);
	certs_of(full, KP_DEFAULT_MAX_SIZE, got, sizeof(got));
	tap_ok(t, !strncmp(got, "error: the zstd payload inside the image: zstd: ", 48),
	       "s390 image, its payload corrupt: one line (%s)", got);
	free(z);

	/* an arm zImage: its header gives its size; the xz payload inside */
	z = xz_stream(raw, rawlen, &zlen);
	embedded_image(full, z, zlen, rawlen, NULL, 0);
	cut_says(t, full, path, pre + zlen / 2, "xz payload inside, no header",
		 "error: truncated image: its xz payload ends with the file (xz: truncated xz "
		 "stream)");
	cut_says(t, full, path, pre + 20, "xz payload inside, its stream header only",
		 "error: truncated image: its xz payload ends with the file");
	zimage_header(full);
	certs_of(full, KP_DEFAULT_MAX_SIZE, got, sizeof(got));
	tap_is_str(t, got, want, "arm zImage with its header: the same certificates");
	cuts[0] = 1000;
	cuts[1] = pre + zlen / 2;
	cuts[2] = pre + zlen + 4 + 16384 - 1;
	for (int i = 0; i < 3; i++) {
		char w[128];

		snprintf(w, sizeof(w),
			 "error: truncated zImage: %zu of the %zu bytes its header gives", cuts[i],
			 pre + zlen + 4 + 16384);
		cut_says(t, full, path, cuts[i], "arm zImage", w);
	}
	cut_says(t, full, path, 0x2f, "arm zImage, inside its header", nothing);
	damage(z, zlen / 2);
	embedded_image(full, z, zlen, rawlen, NULL, 0);
	certs_of(full, KP_DEFAULT_MAX_SIZE, got, sizeof(got));
	tap_ok(t, !strncmp(got, "error: the xz payload inside the image: xz: ", 44),
	       "arm zImage, its payload corrupt: one line (%s)", got);
	damage(z, zlen / 2);

	/* an EFI zboot image (arm64, riscv64, loong64) */
	zboot_image(full, z, zlen);
	certs_of(full, KP_DEFAULT_MAX_SIZE, got, sizeof(got));
	tap_is_str(t, got, want, "EFI zboot image (xz payload): the same certificates");
	cut_says(t, full, path, 4096 + zlen / 2, "EFI zboot image",
		 "error: truncated EFI zboot image: its payload lies past the end of the file");

	/* a signed EFI-stub bzImage, as Debian's amd64 */
	efi_bzimage(full, z, zlen, rawlen);
	certs_of(full, KP_DEFAULT_MAX_SIZE, got, sizeof(got));
	tap_is_str(t, got, want, "signed EFI bzImage (xz payload): the same certificates");
	cut_says(t, full, path, 1000, "signed EFI bzImage, inside its setup", bz_past);
	cut_says(t, full, path, 1024 + zlen / 2, "signed EFI bzImage, inside its payload", bz_past);
	cut_says(t, full, path, 1024 + zlen + 4 + 100, "signed EFI bzImage, in the code after it",
		 "error: truncated bzImage: ");
	cut_says(t, full, path, (1024 + zlen + 4 + 4096 + 15) / 16 * 16 + 100,
		 "signed EFI bzImage, inside its signature",
		 "error: truncated EFI image: its signature lies past the end of the file");
	cut_says(t, full, path, 100, "signed EFI bzImage, inside its first sector", nothing);

	/* a compressed Image, the whole file one stream: xz, and gzip as Debian's arm64 */
	spew(full, z, zlen);
	for (size_t i = 1; i < 4; i++)
		cut_says(t, full, path, zlen * i / 4, "Image.xz", "error: xz: truncated xz stream");
	free(z);
	z = gzip_member(raw, rawlen, &zlen);
	spew(full, z, zlen);
	certs_of(full, KP_DEFAULT_MAX_SIZE, got, sizeof(got));
	tap_is_str(t, got, want, "Image.gz: the same certificates");
	for (size_t i = 1; i < 4; i++)
		cut_says(t, full, path, zlen * i / 4, "Image.gz",
			 "error: gzip: truncated gzip stream");
	free(z);

	/* a vmlinux: its section headers come last */
	vm = malloc(rawlen);
	if (!vm)
		exit(99);
	memcpy(vm, raw, rawlen);
	memset(vm + 4, 0, 60);
	vm[4] = 2; /* ELFCLASS64, ELFDATA2LSB, EV_CURRENT */
	vm[5] = 1;
	vm[6] = 1;
	put32(vm + 0x28, (uint32_t)(rawlen - 4 * 64)); /* e_shoff */
	vm[0x3a] = 64;				       /* e_shentsize */
	vm[0x3c] = 4;				       /* e_shnum */
	spew(full, vm, rawlen);
	free(vm);
	certs_of(full, KP_DEFAULT_MAX_SIZE, got, sizeof(got));
	tap_is_str(t, got, want, "vmlinux with its ELF header: the same certificates");
	cut_says(t, full, path, rawlen / 2, "vmlinux",
		 "error: truncated vmlinux: its section headers lie past the end of the file");
	cut_says(t, full, path, rawlen - 1, "vmlinux, its last byte",
		 "error: truncated vmlinux: its section headers lie past the end of the file");
	unlink(path);
	unlink(full);
}

int main(int argc, char **argv)
{
	struct tap t = { 0 };
	char dir[] = "/tmp/kp-image-certs-XXXXXX", path[4096], plain[4096], got[2048], want[2048],
	     want2[2048];
	/* tap_srcpath() returns one buffer */
	char *ca = strdup(tap_srcpath("tests/data/sig/distro-cert.pem")),
	     *cb = strdup(tap_srcpath("tests/data/sig/other-cert.pem"));
	size_t clen = 0, olen = 0, rawlen = (size_t)12 << 20, zlen,
	       page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *cert, *other, *raw, *z;
	struct collect c = { 0 };
	struct kp_err err = { { 0 }, 0 };
	int fd;

	if (argc > 1 && !strcmp(argv[1], "--list"))
		return list(argc, argv);
	cert = slurp(tap_srcpath("tests/data/sig/test-cert.der"), &clen);
	other = pem_der(tap_srcpath("tests/data/sig/other-cert.pem"), &olen);
	raw = calloc(1, rawlen);
	if (!cert || !other || !raw || !ca || !cb || !mkdtemp(dir))
		return 99;
	/*
	 * An ELF-like image: text (a pseudo-random, little-compressible run), megabytes of zeros
	 * (.bss, padding: the pages given back), the text again 8 MiB further (a match reaching
	 * back over the zeros), the certificate across a page and a KP_STREAM_CHUNK boundary,
	 * more zeros, and a second copy of it near the end.
	 */
	memcpy(raw, "\177ELF", 4);
	for (size_t i = 4, s = 1; i < (size_t)1 << 20; i++) {
		s = s * 1103515245 + 12345;
		raw[i] = (unsigned char)(s >> 16);
	}
	memcpy(raw + ((size_t)9 << 20), raw + 4096, (size_t)1 << 20);
	memcpy(raw + ((size_t)10 << 20) + 4 * KP_STREAM_CHUNK - clen / 2, cert, clen);
	memcpy(raw + rawlen - 3 * page - clen, other, olen);
	snprintf(plain, sizeof(plain), "%s/vmlinux", dir);
	spew(plain, raw, rawlen);
	certs_of(plain, KP_DEFAULT_MAX_SIZE, want, sizeof(want));
	tap_ok(&t, !strncmp(want, "2:", 2), "the uncompressed image: its 2 certificates (%s)",
	       want);

	/* one frame, as kbuild writes it */
	z = zstd_frames(raw, rawlen, 1, &zlen);
	snprintf(path, sizeof(path), "%s/vmlinuz", dir);
	bzimage(path, z, zlen, rawlen, 0);
	certs_of(path, KP_DEFAULT_MAX_SIZE, got, sizeof(got));
	tap_is_str(&t, got, want, "zstd bzImage: the same certificates as uncompressed");
	around(path, ca, cb, false, got, sizeof(got));
	tap_is_str(&t, got, "not begun", "... not worth a thread (decoded in place, fast)");

	/* the stream itself, byte for byte */
	c.cap = rawlen;
	c.p = malloc(c.cap);
	fd = open(path, O_RDONLY);
	if (!c.p || fd < 0)
		return 99;
	tap_is_int(&t, kp_bytes_stream_fd(fd, 1024, zlen, KP_DEFAULT_MAX_SIZE, collect, &c, &err),
		   0, "kp_bytes_stream_fd() of the payload");
	tap_ok(&t, c.len == rawlen && !memcmp(c.p, raw, rawlen),
	       "... hands over exactly the decompressed bytes (%zu of %zu), zero pages given back",
	       c.len, rawlen);
	tap_ok(&t, c.largest <= KP_STREAM_CHUNK && c.pieces >= rawlen / KP_STREAM_CHUNK,
	       "... in pieces of at most KP_STREAM_CHUNK (%zu pieces, largest %zu)", c.pieces,
	       c.largest);
	c.len = c.pieces = c.largest = 0;
	tap_is_int(&t, kp_bytes_stream(z, zlen, KP_DEFAULT_MAX_SIZE, collect, &c, &err), 0,
		   "kp_bytes_stream() of the same payload in memory");
	tap_ok(&t, c.len == rawlen && !memcmp(c.p, raw, rawlen), "... the same bytes");
	/* a cap past any address space: no mapping that large, through zstd's own window */
	c.len = c.pieces = c.largest = 0;
	tap_is_int(&t, kp_bytes_stream_fd(fd, 1024, zlen, (size_t)1 << 62, collect, &c, &err), 0,
		   "kp_bytes_stream_fd() without the in-place mapping");
	tap_ok(&t, c.len == rawlen && !memcmp(c.p, raw, rawlen) && c.largest <= KP_STREAM_CHUNK,
	       "... the same bytes, in pieces of at most KP_STREAM_CHUNK");
	c.len = 0;
	tap_is_int(&t, kp_bytes_stream_fd(fd, 1024, zlen, rawlen - 1, collect, &c, &err), -1,
		   "a cap one byte short of the output");
	tap_is_str(&t, err.msg, "decompressed size exceeds the limit of 12582911 bytes",
		   "... is refused, one line");
	close(fd);
	free(z);

	/* three frames, one after the other (zstd -T, or concatenated by hand) */
	z = zstd_frames(raw, rawlen, 3, &zlen);
	bzimage(path, z, zlen, rawlen, 0);
	certs_of(path, KP_DEFAULT_MAX_SIZE, got, sizeof(got));
	tap_is_str(&t, got, want, "zstd bzImage of three frames: the same certificates");

	/* cut: the header says the payload is shorter than the stream */
	bzimage(path, z, zlen / 2, rawlen, 0);
	certs_of(path, KP_DEFAULT_MAX_SIZE, got, sizeof(got));
	tap_is_str(&t, got, "error: zstd: truncated zstd stream",
		   "a zstd payload cut in the middle: one line");
	/* the file ends before the payload it declares */
	bzimage(path, z, zlen, rawlen, zlen + 4096);
	certs_of(path, KP_DEFAULT_MAX_SIZE, got, sizeof(got));
	tap_is_str(&t, got, "error: truncated bzImage: its payload lies past the end of the file",
		   "a payload past the end of the file: one line");
	/* corrupt bytes in the middle of a frame */
	damage(z, zlen / 3);
	bzimage(path, z, zlen, rawlen, 0);
	certs_of(path, KP_DEFAULT_MAX_SIZE, got, sizeof(got));
	tap_ok(&t, !strncmp(got, "error: zstd: ", 13) && !strchr(got, '\n'),
	       "a corrupt zstd payload: one line (%s)", got);
	free(z);

	/* xz, as Debian's 5.10 and 6.1 images: streamed from the file too */
	z = xz_stream(raw, rawlen, &zlen);
	bzimage(path, z, zlen, rawlen, 0);
	certs_of(path, KP_DEFAULT_MAX_SIZE, got, sizeof(got));
	tap_is_str(&t, got, want, "xz bzImage: the same certificates as uncompressed");
	fd = open(path, O_RDONLY);
	c.len = c.pieces = c.largest = 0;
	tap_is_int(&t, kp_bytes_stream_fd(fd, 1024, zlen, KP_DEFAULT_MAX_SIZE, collect, &c, &err),
		   0, "kp_bytes_stream_fd() of the xz payload");
	tap_ok(&t, c.len == rawlen && !memcmp(c.p, raw, rawlen) && c.largest <= KP_STREAM_CHUNK,
	       "... the decompressed bytes, in pieces of at most KP_STREAM_CHUNK");
	close(fd);
	/* on its own thread (kp_keyring_image_begin()): the same keyring as read in order */
	around(path, ca, cb, true, want2, sizeof(want2));
	around(path, ca, cb, false, got, sizeof(got));
	tap_ok(&t, !strncmp(want2, "4:", 2),
	       "xz bzImage between two certificate files: 4 keys (%s)", want2);
	tap_is_str(&t, got, want2,
		   "... read on its own thread meanwhile: its keys and line where they would be");
	bzimage(path, z, zlen - 100, rawlen, 0);
	certs_of(path, KP_DEFAULT_MAX_SIZE, got, sizeof(got));
	tap_is_str(&t, got, "error: xz: truncated xz stream", "an xz payload cut short: one line");
	around(path, ca, cb, false, got, sizeof(got));
	tap_is_str(&t, got, "error: xz: truncated xz stream",
		   "... on its own thread: the same line");
	/* a compressed Image (no header: the whole file is the stream) */
	spew(path, z, zlen);
	certs_of(path, KP_DEFAULT_MAX_SIZE, got, sizeof(got));
	tap_is_str(&t, got, want, "Image.xz (the whole file compressed): the same certificates");
	certs_of(path, (size_t)8 << 20, got, sizeof(got));
	tap_is_str(&t, got, "error: decompressed size exceeds the limit of 8 MiB",
		   "... over the cap: one line");
	free(z);

	/*
	 * An s390 image (Debian's 6.12 and 7.2 s390x, CONFIG_KERNEL_ZSTD): the decompressor's
	 * code, the zstd payload at no offset a header gives, its 4-byte size, more code
	 */
	z = zstd_frames(raw, rawlen, 1, &zlen);
	embedded_image(path, z, zlen, rawlen, NULL, 0);
	certs_of(path, KP_DEFAULT_MAX_SIZE, got, sizeof(got));
	tap_is_str(&t, got, want, "s390 image (zstd payload inside): the same certificates");
	/* a chance zstd magic in the code before it: tried, decoded into nothing, passed */
	embedded_image(path, z, zlen, rawlen, "\x28\xb5\x2f\xfd\x00\x58", 6);
	certs_of(path, KP_DEFAULT_MAX_SIZE, got, sizeof(got));
	tap_is_str(&t, got, want, "... behind a chance zstd magic in the code: the same");
	free(z);
	/* an arm zImage (arch/arm/boot/compressed/piggy.S): an xz payload inside, code after */
	z = xz_stream(raw, rawlen, &zlen);
	embedded_image(path, z, zlen, rawlen, NULL, 0);
	certs_of(path, KP_DEFAULT_MAX_SIZE, got, sizeof(got));
	tap_is_str(&t, got, want, "arm zImage (xz payload inside): the same certificates");
	embedded_image(path, z, zlen, rawlen,
		       "\xfd"
		       "7zXZ\0\0\x01",
		       8);
	certs_of(path, KP_DEFAULT_MAX_SIZE, got, sizeof(got));
	tap_is_str(&t, got, want, "... behind a chance xz magic in the code: the same");
	free(z);

	/* the decompressed size over the cap */
	z = zstd_frames(raw, rawlen, 1, &zlen);
	bzimage(path, z, zlen, rawlen, 0);
	certs_of(path, (size_t)8 << 20, got, sizeof(got));
	tap_is_str(&t, got, "error: decompressed size exceeds the limit of 8 MiB",
		   "an image decompressing past --max-size: one line");
	free(z);

	damaged(&t, dir, raw, rawlen, want);

	unlink(path);
	unlink(plain);
	rmdir(dir);
	free(c.p);
	free(raw);
	free(cert);
	free(ca);
	free(cb);
	OPENSSL_free(other);
	return tap_done(&t);
}
