// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * efi-siglist.c: kp_esl_walk() on EFI_SIGNATURE_LIST sequences built byte by byte (UEFI
 * 2.x §32.4.1): the element types the kernel's handlers know, unknown lists skipped whole,
 * and each -EBADMSG case of parse_efi_signature_list() (efi_parser.c) with the elements
 * before the error handed over, as the kernel keeps them; kp_efivar_split().
 */
#include <stdio.h>
#include <string.h>

#include "kernel/efi-siglist.h"
#include "tap.h"

static const unsigned char X509[16] = { 0xa1, 0x59, 0xc0, 0xa5, 0xe4, 0x94, 0xa7, 0x4a,
					0x87, 0xb5, 0xab, 0x15, 0x5c, 0x2b, 0xf0, 0x72 };
static const unsigned char SHA256[16] = { 0x26, 0x16, 0xc4, 0xc1, 0x4c, 0x50, 0x92, 0x40,
					  0xac, 0xa9, 0x41, 0xf9, 0x36, 0x93, 0x43, 0x28 };
static const unsigned char TBS[16] = { 0x92, 0xa4, 0xd2, 0x3b, 0xc0, 0x96, 0x79, 0x40,
				       0xb4, 0x20, 0xfc, 0xf9, 0x8e, 0xf1, 0x03, 0xed };
static const unsigned char RSA2048[16] = { 0xe8, 0x66, 0x57, 0x3c, 0x9c, 0x26, 0x34, 0x4e,
					   0xaa, 0x14, 0xed, 0x77, 0x6e, 0x85, 0xb3, 0xb6 };

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* One list at @p: @n elements of @dlen data bytes (filled with @fill), @hsize header bytes. */
static size_t list(unsigned char *p, const unsigned char *guid, size_t n, size_t dlen, size_t hsize,
		   unsigned char fill)
{
	size_t esize = 16 + dlen, lsize = 28 + hsize + n * esize;

	memcpy(p, guid, 16);
	put32(p + 16, (uint32_t)lsize);
	put32(p + 20, (uint32_t)hsize);
	put32(p + 24, (uint32_t)esize);
	memset(p + 28, 0, hsize);
	for (size_t i = 0; i < n; i++) {
		memset(p + 28 + hsize + i * esize, 0x55, 16); /* owner */
		memset(p + 28 + hsize + i * esize + 16, fill + (int)i, dlen);
	}
	return lsize;
}

struct seen {
	char log[256];
	size_t n;
};

static int record(enum kp_esl_type type, const unsigned char *owner, const unsigned char *data,
		  size_t len, void *arg)
{
	struct seen *s = arg;
	size_t at = strlen(s->log);

	if (owner[0] != 0x55)
		return 9;
	snprintf(s->log + at, sizeof(s->log) - at, "%s%s/%zu/%02x", at ? " " : "",
		 kp_esl_type_name(type), len, data[0]);
	s->n++;
	return 0;
}

static void valid(struct tap *t)
{
	unsigned char buf[1024];
	struct seen s = { "", 0 };
	struct kp_err err = { 0 };
	size_t len = 0, skipped;

	len += list(buf + len, X509, 2, 40, 0, 0x30);
	len += list(buf + len, RSA2048, 1, 256, 0, 0x01);
	len += list(buf + len, SHA256, 1, 32, 0, 0xaa);
	len += list(buf + len, TBS, 1, 48, 8, 0xbb);
	tap_is_int(t, kp_esl_walk(buf, len, record, &s, &skipped, &err), 0, "four lists walk");
	tap_is_str(t, s.log, "x509/40/30 x509/40/31 sha256/32/aa x509-sha256/48/bb",
		   "elements in order, types, data past the owner GUID and a list header");
	tap_is_int(t, (int)skipped, 1, "the RSA2048 list is skipped whole");
	tap_is_int(t, kp_esl_walk(buf, 0, record, &s, NULL, &err), 0, "an empty variable");
}

/* @what: the list at offset 0 is followed by one whose fields are changed by @edit. */
static void bad(struct tap *t, const char *what, size_t cut, int field, uint32_t value,
		const char *want)
{
	unsigned char buf[1024];
	struct seen s = { "", 0 };
	struct kp_err err = { 0 };
	size_t first = list(buf, X509, 1, 40, 0, 0x30);
	size_t len = first + list(buf + first, X509, 2, 40, 0, 0x40);

	if (field)
		put32(buf + first + field, value);
	if (cut)
		len = first + cut;
	tap_is_int(t, kp_esl_walk(buf, len, record, &s, NULL, &err), -1, what);
	tap_is_str(t, err.msg, want, "... the message");
	tap_is_str(t, s.log, "x509/40/30", "... the first list's element was handed over");
}

static void malformed(struct tap *t)
{
	bad(t, "a header cut short", 20, 0, 0, "offset 84: truncated EFI_SIGNATURE_LIST header");
	bad(t, "a list past the end", 100, 0, 0,
	    "offset 84: the signature list (140 bytes) runs past the end (100 bytes left)");
	bad(t, "a list size below the header", 0, 16, 20,
	    "offset 84: bad sizes (list 20, header 0, signature 56)");
	bad(t, "a header size past the list", 0, 20, 200,
	    "offset 84: bad sizes (list 140, header 200, signature 56)");
	bad(t, "a signature smaller than the owner GUID", 0, 24, 8,
	    "offset 84: bad sizes (list 140, header 0, signature 8)");
	bad(t, "elements that do not divide the list", 0, 24, 50,
	    "offset 84: bad sizes (list 140, header 0, signature 50)");
	bad(t, "a signature larger than the elements", 0, 24, 200,
	    "offset 84: bad sizes (list 140, header 0, signature 200)");
}

static int stop(enum kp_esl_type type, const unsigned char *owner, const unsigned char *data,
		size_t len, void *arg)
{
	(void)type, (void)owner, (void)data, (void)len;
	return ++*(int *)arg == 2 ? 7 : 0;
}

int main(void)
{
	struct tap t = { 0 };
	unsigned char buf[256];
	struct kp_err err = { 0 };
	const unsigned char *d;
	uint32_t attrs;
	size_t len, dlen;
	int calls = 0;

	valid(&t);
	malformed(&t);
	len = list(buf, SHA256, 3, 32, 0, 1);
	tap_is_int(&t, kp_esl_walk(buf, len, stop, &calls, NULL, &err), 7,
		   "the callback's non-zero return stops the walk and is returned");
	tap_is_int(&t, calls, 2, "... after the second element");
	put32(buf, 0x27);
	tap_ok(&t,
	       kp_efivar_split(buf, 10, &attrs, &d, &dlen) == 0 && attrs == 0x27 && d == buf + 4 &&
		       dlen == 6,
	       "efivarfs: the attribute word, then the data");
	tap_is_int(&t, kp_efivar_split(buf, 3, &attrs, &d, &dlen), -1, "shorter than the word");
	return tap_done(&t);
}
