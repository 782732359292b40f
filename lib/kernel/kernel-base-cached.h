/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel base through the base cache (cache/base-cache.h): Module.symvers parsed once
 * per file state (or content), then taken from a mapped table of its exports
 * (cache/base-symtab.h) without parsing. The answer is the one the parser gives: on a miss
 * the whole file is parsed and stored, and what is added to the base comes from the same
 * table either way, in the file's order; whatever the cache cannot serve (a file that does
 * not parse whole, an input that cannot be read) is loaded by the plain loader, with its
 * messages. A whole table loaded into an empty base (check, graph) is not copied: once its
 * CRC and its index's structure are checked, the base keeps it (mapped, or the miss's
 * buffer) and answers from it (kernel-base.c); a table that fails a check is parsed again.
 */
#ifndef KP_KERNEL_BASE_CACHED_H
#define KP_KERNEL_BASE_CACHED_H

#include "cache/base-cache.h"
#include "kernel-base.h"
#include "filtered-exports.h"

/*
 * Adds the exports of the Module.symvers @path (plain or compressed; under @root, NULL for
 * none, opened inside it as kp_open_regular_in()) to @b as one load, as
 * kp_base_load_symvers() does, only those named in @wanted when it is not NULL (as
 * kp_base_load_filtered() does: nothing is loaded when none is). @cache NULL: no cache.
 * 0, or -1 with @err.
 */
struct kp_root_dir;
int kp_base_load_symvers_cached(struct kp_kernel_base *b, const struct kp_root_dir *root,
				const char *path, struct kp_base_cache *cache,
				const struct kp_symset *wanted, struct kp_err *err);

/*
 * kp_base_load() of @path through @cache: a file it reads as Module.symvers (plain or
 * compressed) from the cache's table when its entry matches, anything else (a vmlinux,
 * System.map, a file that does not parse) by kp_base_load() itself, with its messages.
 * @cache NULL: kp_base_load(). 0, or -1 with @err.
 */
int kp_base_load_cached(struct kp_kernel_base *b, const char *path, struct kp_base_cache *cache,
			struct kp_err *err);

#endif
