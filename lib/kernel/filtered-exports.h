/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel exports a few names need, read the cheap way for `kopolicy hook` (inside
 * modprobe, a few milliseconds per module): Module.symvers or System.map/kallsyms lines
 * filtered down to the symbols named before they are parsed.
 */
#ifndef KP_FILTERED_EXPORTS_H
#define KP_FILTERED_EXPORTS_H

#include <stdbool.h>
#include <stddef.h>

#include "kernel-base.h"
#include "util/symbol-set.h"
#include "util/util.h"

/* Bounds on what is read from a root that may be hostile. */
#define KP_FILTERED_MAX_SYMVERS ((size_t)128 << 20) /* Module.symvers after decompression */
#define KP_FILTERED_MAX_KALLSYM ((size_t)256 << 20) /* /proc/kallsyms */

/*
 * Loads into @b only the exports named in @wanted (a set of symbol names; NULL: every
 * export, for a chain whose import names may run into the guard page) from @path:
 * Module.symvers (any layout, compressed or not) or, with @kallsyms, System.map/kallsyms
 * text (the table bounds __start___ksymtab* are kept). The lines are filtered before they
 * are parsed: the hook never parses the thousands of exports it does not need. A file with
 * no wanted symbol loads nothing and succeeds.
 */
int kp_base_load_filtered(struct kp_kernel_base *b, const char *path, bool kallsyms,
			  const struct kp_symset *wanted, struct kp_err *err);
/* The same for @path under @root (NULL: none), opened inside it as kp_open_regular_in(). */
struct kp_root_dir;
int kp_base_load_filtered_in(struct kp_kernel_base *b, const struct kp_root_dir *root,
			     const char *path, bool kallsyms, const struct kp_symset *wanted,
			     struct kp_err *err);

#endif
