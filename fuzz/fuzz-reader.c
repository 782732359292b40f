// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the module reader: decompression, ELF, modinfo, exports,
 * imports, versions, signature and the symbol_get() tracer over arbitrary bytes.
 * Each input is read twice: from memory (the whole image) and as a file by a reading
 * thread's path (pread() into a sparse image that loads only the sections the readers
 * use). The two must agree on the error or on the facts, else the target aborts.
 * Build: ./configure CC=clang --enable-fuzzing && make fuzz/fuzz-reader
 * Run:   fuzz/fuzz-reader -max_total_time=600 fuzz/corpus/reader
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "read/module.h"
#include "same-module.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kp_open_opts opts = { .max_size = 16 << 20 };
	struct kp_module *m = NULL, *f = NULL;
	struct kp_decoders *dec;
	struct kp_err err, ferr;
	char path[64];
	int r, fr, fd;

	r = kp_module_open_buffer("fuzz", data, size, &opts, &m, &err);
	/* The file path: an empty file is refused before reading, unlike an empty buffer. */
	fd = size ? memfd_create("fuzz", MFD_CLOEXEC) : -1;
	if (fd >= 0 && write(fd, data, size) == (ssize_t)size) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		dec = kp_decoders_new();
		fr = kp_module_open_with(path, &opts, dec, &f, &ferr);
		if (fr != r || (r < 0 && strcmp(err.msg, ferr.msg)) ||
		    (r == 0 && !kp_same_module(m, f))) {
			fprintf(stderr, "memory and file readings differ: %s / %s\n",
				r < 0 ? err.msg : "ok", fr < 0 ? ferr.msg : "ok");
			abort();
		}
		kp_module_free(f);
		kp_decoders_free(dec);
	}
	if (fd >= 0)
		close(fd);
	kp_module_free(m);
	return 0;
}
