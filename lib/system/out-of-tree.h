/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The out-of-tree modules of a release: module files outside its kernel/ directory
 * (updates/, extra/, DKMS's directories), the one rule kp_relpath_is_in_tree() says. Two
 * listings rest on it, for two questions:
 *  - kp_out_of_tree_listed(): what the release's modules.dep lists now (else what its
 *    directory holds), one file per module name: what modprobe finds today, for the
 *    hook's install rules;
 *  - kp_out_of_tree_depmod(): what depmod would choose for the release from its
 *    configuration (depmod.d search order and overrides): what the next boot loads, for
 *    `check --all-kernels` and `--upgrade-to`.
 */
#ifndef KP_OUT_OF_TREE_H
#define KP_OUT_OF_TREE_H

#include <stdbool.h>
#include <stddef.h>

#include "graph/module-set.h"
#include "util/util.h"

/*
 * True when @relpath (a module file relative to its release directory) is under kernel/,
 * where modules_install puts the kernel's own modules: an in-tree module's file.
 */
bool kp_relpath_is_in_tree(const char *relpath);

/*
 * Module files of the release directory @moddir that are not in tree, as names and paths
 * relative to @moddir, sorted by name, without duplicates: from modules.dep when it exists,
 * else by walking the directory (not kernel/, build, source). The arrays and strings live in
 * @arena. 0, or -1 with @err.
 */
int kp_out_of_tree_listed(const char *moddir, struct kp_arena *arena, const char ***names,
			  const char ***relpaths, size_t *n, struct kp_err *err);

/*
 * The files depmod would use for @release under @root (depmod.d configuration) that are not
 * in tree, added to @set (not read yet). 0, or -1 with @err.
 */
int kp_out_of_tree_depmod(const char *root, const char *release, struct kp_module_set *set,
			  struct kp_err *err);

#endif
