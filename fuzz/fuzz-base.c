// SPDX-License-Identifier: GPL-2.0-or-later
/* libFuzzer target for the kernel-side text parsers: Module.symvers and System.map/kallsyms. */
#include <stddef.h>
#include <stdint.h>

#include "kernel/kernel-base.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kp_kernel_base *b;
	struct kp_err err;

	if (kp_base_new(&b) < 0)
		return 0;
	kp_base_load_symvers_buffer(b, "fuzz", data, size, &err);
	kp_base_free(b);
	if (kp_base_new(&b) < 0)
		return 0;
	kp_base_load_system_map_buffer(b, "fuzz", data, size, &err);
	kp_base_free(b);
	return 0;
}
