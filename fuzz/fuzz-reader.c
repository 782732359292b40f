// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the module reader: decompression, ELF, modinfo, exports,
 * imports, versions, signature and the symbol_get() tracer over arbitrary bytes.
 * Build: ./configure CC=clang --enable-fuzzing && make fuzz/fuzz-reader
 * Run:   fuzz/fuzz-reader -max_total_time=600 fuzz/corpus/reader
 */
#include <stddef.h>
#include <stdint.h>

#include "module.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kp_open_opts opts = { .max_size = 16 << 20 };
	struct kp_module *m = NULL;
	struct kp_err err;

	if (kp_module_open_buffer("fuzz", data, size, &opts, &m, &err) == 0)
		kp_module_free(m);
	return 0;
}
