// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the other text inputs: the kernel .config (kconfig), the hook's
 * policy file, the waiver file, a libkmod .bin index (the hook's check before libkmod)
 * and compressed text (kp_bytes_from_text_buffer()). The first byte picks the parser.
 */
#include <stddef.h>
#include <stdint.h>

#include "file/bytes.h"
#include "policy/hook-policy.h"
#include "kernel/kernel-config.h"
#include "system/modprobe-index.h"
#include "waivers.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kp_err err;

	if (!size)
		return 0;
	switch (data[0] % 5) {
	case 0: {
		struct kp_kconfig c = { 0 };

		kp_kconfig_load_buffer(&c, "fuzz", data + 1, size - 1, &err);
		kp_kconfig_release(&c);
		break;
	}
	case 1: {
		struct kp_hook_policy p;

		if (kp_hook_policy_parse(&p, "fuzz", (const char *)data + 1, size - 1, &err) == 0)
			kp_hook_policy_release(&p);
		break;
	}
	case 2: {
		struct kp_waivers w;

		if (kp_waivers_load_buffer(&w, "fuzz", (const char *)data + 1, size - 1, &err) == 0)
			kp_waivers_free(&w);
		break;
	}
	case 3:
		kp_chain_index_check(data + 1, size - 1, &err);
		break;
	default: {
		struct kp_bytes b;

		if (kp_bytes_from_text_buffer(data + 1, size - 1, (size_t)16 << 20, &b, &err) == 0)
			kp_bytes_release(&b);
		break;
	}
	}
	return 0;
}
