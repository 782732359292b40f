// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The certificates of kernel images (kp_keyring_add_kernel_image()) read from images half
 * written (a kernel-install hook reading a vmlinuz being copied) or damaged, of every format
 * (an s390 image, an arm zImage, an EFI zboot image, a signed EFI-stub bzImage, Image.xz and
 * Image.gz, a vmlinux), cut short at several points: one line naming the problem, never fewer
 * certificates. Whole images: test-image-certs.c.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compress.h"
#include "image-fixture.h"
#include "kernel/sig-keys.h"
#include "tap.h"

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

int main(void)
{
	struct tap t = { 0 };
	char dir[] = "/tmp/kp-image-damaged-XXXXXX", plain[4096], want[2048];
	size_t rawlen;
	unsigned char *raw = raw_image(&rawlen);

	if (!mkdtemp(dir))
		return 99;
	snprintf(plain, sizeof(plain), "%s/vmlinux", dir);
	spew(plain, raw, rawlen);
	certs_of(plain, KP_DEFAULT_MAX_SIZE, want, sizeof(want));
	if (strncmp(want, "2:", 2)) { /* test-image-certs says why */
		fprintf(stderr, "the uncompressed image: not its 2 certificates (%s)\n", want);
		return 99;
	}
	unlink(plain);
	damaged(&t, dir, raw, rawlen, want);
	rmdir(dir);
	free(raw);
	return tap_done(&t);
}
