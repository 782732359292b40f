/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * UEFI signature databases (db, dbx, MokListRT, MokListXRT, MokNew): the
 * EFI_SIGNATURE_LIST sequence of UEFI 2.x §32.4.1, walked as the kernel's
 * parse_efi_signature_list() (security/integrity/platform_certs/efi_parser.c,
 * v4.19 … v7.2) walks it, and the efivarfs file format around a variable.
 */
#ifndef KP_EFI_SIGLIST_H
#define KP_EFI_SIGLIST_H

#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

/* The signature types the kernel's handlers know (get_handler_for_db/mok/dbx()). */
enum kp_esl_type {
	KP_ESL_X509,	    /* EFI_CERT_X509_GUID: a DER certificate */
	KP_ESL_SHA256,	    /* EFI_CERT_SHA256_GUID: a binary's SHA-256 */
	KP_ESL_X509_SHA256, /* EFI_CERT_X509_SHA256_GUID: SHA-256 of a tbsCertificate (+ time) */
	KP_ESL_OTHER,	    /* anything else: skipped whole by the kernel */
};

/* One element: its type, owner GUID and data (SignatureData, past the 16-byte owner). */
typedef int (*kp_esl_fn)(enum kp_esl_type type, const unsigned char *owner,
			 const unsigned char *data, size_t len, void *arg);

/*
 * Calls @fn for each element of each list of @p (@len bytes), in order; lists of an unknown
 * type are counted in *@skipped (may be NULL). Stops at the first non-zero return of @fn and
 * returns it. A malformed list (the kernel's -EBADMSG: truncated header, a list past the
 * end, a bad size combination) stops the walk with -1 and "@err: offset N: why"; the
 * elements before it have been handed over, as the kernel keeps them.
 */
int kp_esl_walk(const unsigned char *p, size_t len, kp_esl_fn fn, void *arg, size_t *skipped,
		struct kp_err *err);

/* "x509", "sha256", "x509-sha256", "other". */
const char *kp_esl_type_name(enum kp_esl_type t);

/*
 * An efivarfs file's content: a 4-byte little-endian attribute word, then the data.
 * 0 with *@attrs and [@data, @data + *@dlen), -1 when shorter than the attribute word.
 */
int kp_efivar_split(const unsigned char *p, size_t len, uint32_t *attrs, const unsigned char **data,
		    size_t *dlen);

/*
 * The GUIDs of the variables kopolicy reads, as efivarfs spells them in file names: the global
 * one (SecureBoot, SetupMode) and the image security one (db, dbx).
 */
#define KP_EFI_GLOBAL_GUID	   "8be4df61-93ca-11d2-aa0d-00e098032b8c"
#define KP_EFI_IMAGE_SECURITY_GUID "d719b2cb-3d3a-4596-a3bc-dad00e67656f"
#define KP_EFI_SHIM_LOCK_GUID	   "605dab50-e046-4300-abb6-3dd810dd8b23" /* Mok* variables */

#endif
