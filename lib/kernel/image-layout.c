// SPDX-License-Identifier: LGPL-2.1-or-later
/* A kernel image's layout from its headers (image-layout.h). */
#include "image-layout.h"

#include <inttypes.h>
#include <string.h>

#include "util/util.h"

/* The end of a bzImage's code (@p: its header): the setup sectors, then syssize paragraphs. */
static uint64_t bzimage_code_end(const unsigned char *p)
{
	return ((uint64_t)(p[0x1f1] ? p[0x1f1] : 4) + 1) * 512 +
	       (uint64_t)kp_load32(p + 0x1f4, false) * 16;
}

/*
 * The payload of an x86 bzImage (arch/x86/boot/header.S: payload_offset, payload_length) of
 * @len bytes, @hlen of them at @p: 1, 0 when it is no bzImage, -1 when the payload lies
 * outside the file, -2 when the code after it does (syssize: the 16-byte paragraphs after
 * the setup sectors, up to where an EFI signature begins; so on Debian's 5.10, 6.1, 6.12 and
 * 7.2 images).
 */
int kp_bzimage_payload(const unsigned char *p, size_t hlen, size_t len, size_t *off, size_t *plen)
{
	size_t setup, start, size;

	if (hlen < 0x250 || memcmp(p + 0x202, "HdrS", 4))
		return 0;
	setup = ((size_t)(p[0x1f1] ? p[0x1f1] : 4) + 1) * 512;
	start = setup + kp_load32(p + 0x248, false);
	size = kp_load32(p + 0x24c, false);
	if (start >= len || size == 0 || size > len - start)
		return -1;
	if (bzimage_code_end(p) > len)
		return -2;
	*off = start;
	*plen = size;
	return 1;
}

/*
 * An EFI zboot image (drivers/firmware/efi/libstub/zboot-header.S: "zimg", offset, size): 1,
 * 0 when it is no zboot image, -1 when the payload lies outside the file.
 */
int kp_zboot_payload(const unsigned char *p, size_t hlen, size_t len, size_t *off, size_t *plen)
{
	size_t start, size;

	if (hlen < 0x40 || memcmp(p, "MZ", 2) || memcmp(p + 4, "zimg", 4))
		return 0;
	start = kp_load32(p + 8, false);
	size = kp_load32(p + 12, false);
	if (start >= len || size == 0 || size > len - start)
		return -1;
	*off = start;
	*plen = size;
	return 1;
}

/*
 * Whether the PE header of an EFI image (@hlen bytes at @p: a bzImage's EFI stub, an EFI
 * zboot image, an arm64 or riscv Image) says the file of @len bytes is longer: the file
 * bytes of its sections (PointerToRawData + SizeOfRawData: the end of syssize on Debian's
 * amd64 5.10, 6.1, 6.12 and 7.2), or its signature (the security directory: file offset and
 * size of the Authenticode signature sbsign appends). 0, or -1 with @err.
 */
static int pe_image_cut(const unsigned char *p, size_t hlen, size_t len, struct kp_err *err)
{
	size_t pe, opt, sec, nd, dd, nsec;
	uint64_t end = 0, at, size;

	if (hlen < 0x40 || memcmp(p, "MZ", 2))
		return 0;
	pe = kp_load32(p + 0x3c, false);
	if (pe > hlen - 24 || memcmp(p + pe, "PE\0\0", 4))
		return 0;
	opt = pe + 24;
	sec = opt + kp_load16(p + pe + 20, false); /* SizeOfOptionalHeader */
	nsec = kp_load16(p + pe + 6, false);
	for (size_t i = 0; i < nsec && sec + 40 * i + 24 <= hlen; i++) {
		const unsigned char *h = p + sec + 40 * i;
		uint64_t e = (uint64_t)kp_load32(h + 20, false) + kp_load32(h + 16, false);

		end = e > end ? e : end;
	}
	if (end > len)
		return kp_err_set(
			err, "truncated EFI image: %zu of the %" PRIu64 " bytes its sections take",
			len, end);
	/* PE32 or PE32+: NumberOfRvaAndSizes, then the data directories (security: the 5th) */
	if (opt + 2 > hlen)
		return 0;
	switch (kp_load16(p + opt, false)) {
	case 0x10b:
		nd = opt + 92;
		break;
	case 0x20b:
		nd = opt + 108;
		break;
	default:
		return 0;
	}
	dd = nd + 4 + 4 * 8;
	if (dd + 8 > hlen || kp_load32(p + nd, false) < 5)
		return 0;
	at = kp_load32(p + dd, false);
	size = kp_load32(p + dd + 4, false);
	if (size && (at > len || size > len - at))
		return kp_err_set(err, "truncated EFI image: its signature lies past the end of "
				       "the file");
	return 0;
}

/*
 * Whether the header of an image read as it is (@hlen bytes at @p of a file of @len) says
 * the file is longer: an arm zImage's (arch/arm/boot/compressed/head.S, v2.6+: magic
 * 0x016f2818 at 0x24, then the load address and the zImage's end: its size, the xz payload
 * inside) or a vmlinux's section headers (the ELF header's e_shoff, e_shnum, e_shentsize:
 * the linker writes them last). 0, or -1 with @err.
 */
static int whole_image_cut(const unsigned char *p, size_t hlen, size_t len, struct kp_err *err)
{
	uint64_t shoff, need;

	if (hlen >= 0x30 &&
	    (kp_load32(p + 0x24, false) == 0x016f2818 || kp_load32(p + 0x24, true) == 0x016f2818)) {
		bool be = kp_load32(p + 0x24, true) == 0x016f2818;
		uint32_t start = kp_load32(p + 0x28, be), end = kp_load32(p + 0x2c, be);

		if (end > start && end - start > len)
			return kp_err_set(err,
					  "truncated zImage: %zu of the %" PRIu32
					  " bytes its header gives",
					  len, end - start);
		return 0;
	}
	if (hlen < 0x40 || memcmp(p, "\177ELF", 4) || (p[4] != 1 && p[4] != 2) ||
	    (p[5] != 1 && p[5] != 2) || p[6] != 1)
		return 0;
	if (p[4] == 1) {
		shoff = kp_load32(p + 0x20, p[5] == 2);
		need = (uint64_t)kp_load16(p + 0x2e, p[5] == 2) * kp_load16(p + 0x30, p[5] == 2);
	} else {
		shoff = kp_load64(p + 0x28, p[5] == 2);
		need = (uint64_t)kp_load16(p + 0x3a, p[5] == 2) * kp_load16(p + 0x3c, p[5] == 2);
	}
	if (shoff && (shoff > len || need > len - shoff))
		return kp_err_set(err, "truncated vmlinux: its section headers lie past the end "
				       "of the file");
	return 0;
}

/*
 * Where the certificates of an image of @flen bytes are, from its first @hlen bytes at @head:
 * the compressed payload of a bzImage (1) or an EFI zboot image (2) at *@off, *@plen bytes;
 * else the whole file (0). -1 with @err when the headers say that the file is cut short (a
 * half-written image: its certificates would be fewer or none).
 */
int kp_image_layout(const unsigned char *head, size_t hlen, size_t flen, size_t *off, size_t *plen,
		    struct kp_err *err)
{
	int n;

	switch (kp_bzimage_payload(head, hlen, flen, off, plen)) {
	case -1:
		return kp_err_set(err,
				  "truncated bzImage: its payload lies past the end of the file");
	case -2:
		return kp_err_set(
			err, "truncated bzImage: %zu of the %" PRIu64 " bytes its header gives",
			flen, bzimage_code_end(head));
	case 1:
		n = 1;
		break;
	default:
		switch (kp_zboot_payload(head, hlen, flen, off, plen)) {
		case -1:
			return kp_err_set(err, "truncated EFI zboot image: its payload lies past "
					       "the end of the file");
		case 1:
			n = 2;
			break;
		default:
			if (whole_image_cut(head, hlen, flen, err) < 0)
				return -1;
			*off = 0;
			*plen = flen;
			n = 0;
		}
	}
	return pe_image_cut(head, hlen, flen, err) < 0 ? -1 : n;
}
