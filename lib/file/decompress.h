/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The decompressors behind bytes.c (one file each: decompress-xz.c, -zstd.c, -gzip.c),
 * private to lib/read/: the rest of the library reads through kp_bytes_*() (bytes.h).
 */
#ifndef KP_DECOMPRESS_H
#define KP_DECOMPRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

struct kp_mem_budget;

/* Decompressors (one file each); they append to a growing buffer up to @max. */
struct kp_outbuf {
	unsigned char *data;
	size_t len;
	size_t cap;
	size_t max;
	bool elf_only; /* give up early when the output does not start with ELF magic */
	/* the capacity is reserved from @budget (@held bytes); NULL: no budget */
	struct kp_mem_budget *budget;
	size_t held;
	bool short_of_budget; /* a growth failed for the budget: @wanted bytes were asked */
	size_t wanted;
	/*
	 * Streaming (kp_bytes_stream()): @cap is fixed; a full buffer is handed to @sink and
	 * emptied instead of grown. @streamed: the bytes handed so far (@max caps them too).
	 */
	int (*sink)(const unsigned char *p, size_t n, void *arg);
	void *sink_arg;
	size_t streamed;
	bool stopped; /* @sink returned non-zero: it is not called again */
	/*
	 * The first stream only (kp_bytes_stream_first()): decoding ends with the first xz
	 * stream, zstd frame or gzip member, whatever bytes follow it.
	 */
	bool first;
	bool cut; /* set by the decoder on an error: the input ended inside the stream */
};

int kp_outbuf_reserve(struct kp_outbuf *o, size_t extra, struct kp_err *err);
/* The decompressed size a stream declares, 0 if it does not say (a hint: never trusted). */
size_t kp_xz_size_hint(const unsigned char *in, size_t len);
size_t kp_zstd_size_hint(const unsigned char *in, size_t len);
size_t kp_gzip_size_hint(const unsigned char *in, size_t len);
/* @state: NULL (one-shot) or a slot holding the decoder kept between calls (NULL at first). */
int kp_decompress_xz(const unsigned char *in, size_t len, struct kp_outbuf *o, void **state,
		     struct kp_err *err);
int kp_decompress_zstd(const unsigned char *in, size_t len, struct kp_outbuf *o, void **state,
		       struct kp_err *err);
int kp_decompress_gzip(const unsigned char *in, size_t len, struct kp_outbuf *o, void **state,
		       struct kp_err *err);
/*
 * The compressed input of a stream: @len bytes at @in, or (@in NULL) at @off of the file
 * @fd, read piecewise with pread() and never held whole.
 */
struct kp_stream_in {
	const unsigned char *in;
	int fd;
	uint64_t off;
	size_t len;
};
/*
 * The next piece of @s after its first @got bytes (@got advanced): @s's own bytes whole, or
 * up to @cap bytes of the file read into @buf. 0 with @p, @n, or -1 with @err (a read error,
 * "file shrank while being read").
 */
int kp_stream_in_read(const struct kp_stream_in *s, size_t *got, unsigned char *buf, size_t cap,
		      const unsigned char **p, size_t *n, struct kp_err *err);
/* The same for one xz stream (what follows it ignored, as kp_decompress_xz(): always @first). */
int kp_xz_stream(const struct kp_stream_in *s, struct kp_outbuf *o, struct kp_err *err);
/*
 * Decodes the zstd frames of @s (the first only with @o->first) to @o's sink
 * (kp_bytes_stream()): decoded in place when the
 * address space allows (no window buffer beside the output, and its pages of zeros given
 * back as the output passes them), else through @o's buffer and zstd's own window.
 */
int kp_zstd_stream(const struct kp_stream_in *s, struct kp_outbuf *o, struct kp_err *err);
void kp_xz_state_free(void *state);
void kp_zstd_state_free(void *state);
void kp_gzip_state_free(void *state);

#endif
