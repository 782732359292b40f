/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A kernel image's layout from its first bytes: where the compressed payload of an x86
 * bzImage or an EFI zboot image is, and whether the headers (bzImage, PE, arm zImage, ELF)
 * say that the file is longer than it is. Pure functions of the bytes given. Private to
 * lib/kernel/ (image-certs.c).
 */
#ifndef KP_KERNEL_IMAGE_LAYOUT_H
#define KP_KERNEL_IMAGE_LAYOUT_H

#include <stddef.h>

#include "util/util.h"

/*
 * The payload of an x86 bzImage of @len bytes, @hlen of them at @p, into *@off and *@plen:
 * 1, 0 when it is no bzImage, -1 when the payload lies outside the file, -2 when the code
 * after it does.
 */
int kp_bzimage_payload(const unsigned char *p, size_t hlen, size_t len, size_t *off, size_t *plen);
/* The payload of an EFI zboot image: 1, 0 when it is none, -1 when it lies outside the file. */
int kp_zboot_payload(const unsigned char *p, size_t hlen, size_t len, size_t *off, size_t *plen);
/*
 * Where the certificates of an image of @flen bytes are, from its first @hlen bytes at @head:
 * a bzImage's payload (1), an EFI zboot image's (2), else the whole file (0); -1 with @err
 * when the headers say that the file is cut short.
 */
int kp_image_layout(const unsigned char *head, size_t hlen, size_t flen, size_t *off, size_t *plen,
		    struct kp_err *err);

#endif
