// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The certificates of the xz or zstd payload inside a self-decompressing kernel image (an arm
 * zImage, an s390 image), found by its magic (image-certs-parts.h).
 */
#include "image-certs-parts.h"

#include <stdlib.h>
#include <string.h>

#include "file/bytes.h"

/* A compressed payload inside an image, found by its magic. */
struct embedded_kind {
	const char *name;
	const char *magic;
	size_t len;
	/*
	 * The output past which a stream that then fails is the payload, damaged, not a chance
	 * magic in the code: xz's stream and block headers are CRC-checked (a chance magic
	 * decodes nothing: @header_crc, and the file ending inside it means it is cut), a zstd
	 * block holds at most 128 KiB (ZSTD_BLOCKSIZE_MAX).
	 */
	uint64_t payload_out;
	bool header_crc;
};

/*
 * The certificates of the compressed stream at @in (@len bytes to the end of the image, of
 * the kind @k), decoded up to its end and streamed through the scanner, never held whole,
 * what follows it ignored (kp_bytes_stream_first()): the payload of a self-decompressing
 * image, at no offset a header gives, between the decompressor's code before and after it.
 * An arm zImage's xz (arch/arm/boot/compressed/piggy.S), an s390 image's zstd (arch/s390/boot:
 * the decompressor, then .vmlinux.bin.compressed, then more of the decompressor). At most
 * @max bytes of output. 0 when decoded to its end, 1 when it is no stream (a chance magic:
 * it failed before giving a certificate or more than @k->payload_out bytes, and the image
 * did not end inside it), 2 when the image ended inside a zstd frame that gave nothing yet
 * (a chance magic near the end, or the payload cut in its first block: kp_image_embedded_certs()
 * decides), -1 with @err when out of memory or it is the payload, damaged: cut short by the
 * end of the file (an image half written), corrupt or past @max; its certificates are then
 * not all known.
 */
static int embedded_stream_certs(struct found_certs *f, const struct embedded_kind *k,
				 const unsigned char *in, size_t len, size_t max,
				 struct kp_err *err)
{
	struct kp_cert_stream cs = { .f = f };
	size_t n0 = f->n;
	struct kp_err why;
	int r = kp_bytes_stream_first(in, len, max, kp_cert_stream_piece, &cs, &why);

	if (cs.n >= 0 && cs.len) /* nothing decoded (no stream at @in): no window to scan */
		kp_cert_stream_scan(&cs, cs.len);
	free(cs.win);
	if (cs.n < 0)
		return kp_err_set(err, "out of memory");
	if (r == 0)
		return 0;
	if (r == -2 && (cs.out > 0 || k->header_crc))
		return kp_err_set(err, "truncated image: its %s payload ends with the file (%s)",
				  k->name, why.msg);
	if (f->n > n0 || cs.out > k->payload_out)
		return kp_err_set(err, "the %s payload inside the image: %s", k->name, why.msg);
	return r == -2 ? 2 : 1;
}

/*
 * None in plain sight: the certificates of an xz payload inside the image (arm zImage), else
 * of a zstd one (s390: Debian's 6.12 and 7.2 s390x images, CONFIG_KERNEL_ZSTD); each place
 * the stream's magic stands is tried until one gives certificates. 1 when one was decoded
 * to its end, 0 when none was, -1 with @err (out of memory, a damaged payload:
 * embedded_stream_certs(); and when none decoded to its end but the image ended inside a
 * zstd frame: the payload cut before its first block's end).
 */
int kp_image_embedded_certs(struct found_certs *f, const struct kp_bytes *b, size_t max,
			    struct kp_err *err)
{
	static const struct embedded_kind payload[] = {
		{ .name = "xz",
		  .magic = "\xfd"
			   "7zXZ\0",
		  .len = 6,
		  .payload_out = 0,
		  .header_crc = true },
		{ .name = "zstd",
		  .magic = "\x28\xb5\x2f\xfd",
		  .len = 4,
		  .payload_out = (uint64_t)128 << 10 },
	};
	bool whole = false, cut = false;

	for (size_t k = 0; k < KP_ARRAY_SIZE(payload); k++) {
		const unsigned char *x = b->data;

		while (f->n == 0 && (x = memmem(x, b->len - (size_t)(x - b->data), payload[k].magic,
						payload[k].len))) {
			int r = embedded_stream_certs(f, &payload[k], x,
						      b->len - (size_t)(x - b->data), max, err);

			if (r < 0)
				return -1;
			whole |= r == 0;
			cut |= r == 2;
			x++;
		}
	}
	if (f->n == 0 && !whole && cut)
		return kp_err_set(err, "truncated image: its zstd payload ends with the file "
				       "(zstd: truncated zstd stream)");
	return whole;
}
