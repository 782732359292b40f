/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the parts of image-certs.c share (image-certs-internal.h is what they give sig-keys):
 * image-certs-scan.c finds DER certificates in bytes, in a file read as it is and in a
 * compressed payload streamed through a window; image-certs-embedded.c finds the xz or zstd
 * payload inside a self-decompressing image; image-certs-classify.c places each certificate
 * in its list; image-certs.c reads an image with them (image-layout.h says where its payload
 * is) and memoises the result. Private to the image-certs*.c files.
 */
#ifndef KP_KERNEL_IMAGE_CERTS_PARTS_H
#define KP_KERNEL_IMAGE_CERTS_PARTS_H

#include <stddef.h>
#include <stdint.h>

#include "image-certs-internal.h"

/* The zeros skipped after a certificate before its tail (struct img_cert). */
#define TAIL_REACH (65536 + 16)

/* Every certificate of @p (the whole image). 0, or -1 when out of memory. */
int kp_certs_scan(struct found_certs *f, const unsigned char *p, size_t len);

/*
 * The same over a decompressed stream (kp_bytes_stream()): a window of the last bytes, so a
 * certificate (at most 4 + 65535 bytes: 30 82 len) across two pieces is still seen whole,
 * with the words after it (TAIL_REACH).
 */
#define CERT_MAX (4 + 65535 + 13 + TAIL_REACH + TAIL_LEN)
struct kp_cert_stream {
	struct found_certs *f;
	unsigned char *win;
	size_t len, cap;
	uint64_t base; /* the image offset of win[0] */
	uint64_t out;  /* the bytes decoded so far */
	int n;	       /* 0, or -1 when out of memory */
};

/* The window's start positions before @limit scanned and dropped; -1 when out of memory. */
int kp_cert_stream_scan(struct kp_cert_stream *cs, size_t limit);
/* A decoded piece into the window (a kp_bytes_stream() callback, @arg the stream). */
int kp_cert_stream_piece(const unsigned char *p, size_t n, void *arg);

/* The certificates of the compressed payload at @off (@len bytes) of @fd. 0, or -1 with @err. */
int kp_certs_stream_fd(struct found_certs *f, int fd, size_t off, size_t len, size_t max,
		       struct kp_err *err);
/* The certificates of the @len bytes of @fd as they are. 0, or -1 with @err. */
int kp_certs_raw_fd(struct found_certs *f, int fd, size_t len, struct kp_err *err);

/*
 * The certificates of an xz or zstd payload inside the image @b: 1 when one was decoded to
 * its end, 0 when none was, -1 with @err (image-certs-embedded.c says when).
 */
struct kp_bytes;
int kp_image_embedded_certs(struct found_certs *f, const struct kp_bytes *b, size_t max,
			    struct kp_err *err);

/* The role of each certificate of @f into @role (@f->n of them). 0, or -1 when out of memory. */
int kp_image_certs_classify(const struct found_certs *f, enum img_role *role);

#endif
