// SPDX-License-Identifier: LGPL-2.1-or-later
#include "efi-siglist.h"

#include <string.h>

/* EFI GUIDs as stored: little-endian data1..data3, then 8 bytes as they are. */
static const struct {
	enum kp_esl_type type;
	unsigned char guid[16];
} types[] = {
	/* a5c059a1-94e4-4aa7-87b5-ab155c2bf072 */
	{ KP_ESL_X509,
	  { 0xa1, 0x59, 0xc0, 0xa5, 0xe4, 0x94, 0xa7, 0x4a, 0x87, 0xb5, 0xab, 0x15, 0x5c, 0x2b,
	    0xf0, 0x72 } },
	/* c1c41626-504c-4092-aca9-41f936934328 */
	{ KP_ESL_SHA256,
	  { 0x26, 0x16, 0xc4, 0xc1, 0x4c, 0x50, 0x92, 0x40, 0xac, 0xa9, 0x41, 0xf9, 0x36, 0x93,
	    0x43, 0x28 } },
	/* 3bd2a492-96c0-4079-b420-fcf98ef103ed */
	{ KP_ESL_X509_SHA256,
	  { 0x92, 0xa4, 0xd2, 0x3b, 0xc0, 0x96, 0x79, 0x40, 0xb4, 0x20, 0xfc, 0xf9, 0x8e, 0xf1,
	    0x03, 0xed } },
};

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static enum kp_esl_type type_of(const unsigned char *guid)
{
	for (size_t i = 0; i < KP_ARRAY_SIZE(types); i++)
		if (!memcmp(types[i].guid, guid, 16))
			return types[i].type;
	return KP_ESL_OTHER;
}

/*
 * EFI_SIGNATURE_LIST: SignatureType (16), SignatureListSize, SignatureHeaderSize,
 * SignatureSize (u32 each), the header, then elements of SignatureSize bytes, each an owner
 * GUID (16) and the data: the checks of parse_efi_signature_list(), in its order.
 */
int kp_esl_walk(const unsigned char *p, size_t len, kp_esl_fn fn, void *arg, size_t *skipped,
		struct kp_err *err)
{
	const size_t hdr = 28, owner = 16;
	size_t off = 0;

	if (skipped)
		*skipped = 0;
	while (off < len) {
		size_t size = len - off, lsize, hsize, esize, elsize;
		enum kp_esl_type t;

		if (size < hdr)
			return kp_err_set(err, "offset %zu: truncated EFI_SIGNATURE_LIST header",
					  off);
		lsize = le32(p + off + 16);
		hsize = le32(p + off + 20);
		esize = le32(p + off + 24);
		if (lsize > size)
			return kp_err_set(
				err,
				"offset %zu: the signature list (%zu bytes) runs past the "
				"end (%zu bytes left)",
				off, lsize, size);
		if (lsize < hdr || lsize - hdr < hsize || esize < owner ||
		    lsize - hdr - hsize < esize || (lsize - hdr - hsize) % esize)
			return kp_err_set(err,
					  "offset %zu: bad sizes (list %zu, header %zu, "
					  "signature %zu)",
					  off, lsize, hsize, esize);
		elsize = lsize - hdr - hsize;
		t = type_of(p + off);
		if (t == KP_ESL_OTHER) {
			if (skipped)
				(*skipped)++;
			off += lsize;
			continue;
		}
		for (size_t e = off + hdr + hsize; elsize > 0; elsize -= esize, e += esize) {
			int r = fn(t, p + e, p + e + owner, esize - owner, arg);

			if (r)
				return r;
		}
		off += lsize;
	}
	return 0;
}

const char *kp_esl_type_name(enum kp_esl_type t)
{
	static const char *const names[] = {
		[KP_ESL_X509] = "x509",
		[KP_ESL_SHA256] = "sha256",
		[KP_ESL_X509_SHA256] = "x509-sha256",
		[KP_ESL_OTHER] = "other",
	};

	return (size_t)t < KP_ARRAY_SIZE(names) ? names[t] : "other";
}

int kp_efivar_split(const unsigned char *p, size_t len, uint32_t *attrs, const unsigned char **data,
		    size_t *dlen)
{
	if (len < 4)
		return -1;
	*attrs = le32(p);
	*data = p + 4;
	*dlen = len - 4;
	return 0;
}
