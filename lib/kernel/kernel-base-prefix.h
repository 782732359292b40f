/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Exports of a kernel base whose names begin with given bytes: what a comparison that reads a
 * name no further than those bytes cannot tell apart (the loader's strcmp() of a name that
 * runs into an unmapped page, lib/sim/rules/find-prefix.c). A linear scan over the entries:
 * it serves the rare module with such a name, not the lookups of every import.
 */
#ifndef KP_KERNEL_BASE_PREFIX_H
#define KP_KERNEL_BASE_PREFIX_H

#include <stdbool.h>
#include <stddef.h>

#include "kernel-base.h"

/*
 * The first entry at or after index @from (load order, kp_base_at()) whose name begins with
 * the @len bytes at @prefix (the name may be just those bytes); *@at gets its index. NULL
 * when there is none; @len 0 matches every entry.
 */
const struct kp_ksym *kp_base_find_prefix(const struct kp_kernel_base *b, const char *prefix,
					  size_t len, size_t from, size_t *at);

#endif
