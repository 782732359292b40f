/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the files of the one file reader share (bytes-open.c: files opened; bytes.c: read,
 * mapped and loaded; bytes-decompress.c: compression detected and decoded, within the memory
 * budget).
 * Private to lib/file/.
 */
#ifndef KP_FILE_BYTES_INTERNAL_H
#define KP_FILE_BYTES_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bytes.h"

struct kp_decoders {
	void *xz, *zstd, *gzip; /* decoder states, created on first use */
	unsigned char *spare;	/* an output buffer handed back by kp_bytes_release() */
	size_t spare_cap;
	unsigned char *file; /* a compressed input or a sparse image, one file at a time */
	size_t file_cap;
	struct kp_mem_budget *budget; /* shared with the other threads of the read, or NULL */
};

/* @len bytes of @fd at @off into @buf: 0, or -1 with @err (a read error, the file shrank). */
int kp_bytes_pread(int fd, unsigned char *buf, size_t len, uint64_t off, struct kp_err *err);
/* The thread's file buffer sized for @len, or NULL (too big to keep, or no memory). */
unsigned char *kp_decoders_file_buffer(struct kp_decoders *d, size_t len);
/* @in (compressed as @comp) decompressed into @out, at most @max_size bytes: 0 or -1. */
int kp_bytes_decompress(const unsigned char *in, size_t len, enum kp_compression comp,
			size_t max_size, bool elf_only, struct kp_decoders *dec,
			struct kp_bytes *out, struct kp_err *err);

#endif
