// SPDX-License-Identifier: LGPL-2.1-or-later
#include "kernel-base-prefix.h"

#include <string.h>

const struct kp_ksym *kp_base_find_prefix(const struct kp_kernel_base *b, const char *prefix,
					  size_t len, size_t from, size_t *at)
{
	const size_t n = b ? kp_base_count(b) : 0;

	for (size_t i = from; i < n; i++) {
		const struct kp_ksym *k = kp_base_at(b, i);

		if (!strncmp(k->name, prefix, len) && strnlen(k->name, len) == len) {
			if (at)
				*at = i;
			return k;
		}
	}
	return NULL;
}
