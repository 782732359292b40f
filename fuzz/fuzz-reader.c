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

#include "module.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool same_module(const struct kp_module *a, const struct kp_module *b)
{
	if (!same_str(a->name, b->name) || !same_str(a->license, b->license) ||
	    !same_str(a->vermagic, b->vermagic) || a->nmodinfo != b->nmodinfo ||
	    a->nimports != b->nimports || a->nexports != b->nexports ||
	    a->nversions != b->nversions || a->next_versions != b->next_versions ||
	    a->nsymget != b->nsymget || a->nsymput != b->nsymput ||
	    memcmp(&a->sig, &b->sig, sizeof(a->sig)) || a->this_module_size != b->this_module_size)
		return false;
	for (size_t i = 0; i < a->nimports; i++)
		if (!same_str(a->imports[i].name, b->imports[i].name) ||
		    a->imports[i].weak != b->imports[i].weak)
			return false;
	for (size_t i = 0; i < a->nexports; i++)
		if (!same_str(a->exports[i].name, b->exports[i].name) ||
		    !same_str(a->exports[i].ns, b->exports[i].ns) ||
		    a->exports[i].gpl_only != b->exports[i].gpl_only ||
		    a->exports[i].crc != b->exports[i].crc)
			return false;
	for (size_t i = 0; i < a->nversions; i++)
		if (!same_str(a->versions[i].name, b->versions[i].name) ||
		    a->versions[i].crc != b->versions[i].crc)
			return false;
	for (size_t i = 0; i < a->nsymget; i++)
		if (!same_str(a->symget[i].symbol, b->symget[i].symbol) ||
		    a->symget[i].offset != b->symget[i].offset)
			return false;
	return true;
}

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
		    (r == 0 && !same_module(m, f))) {
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
