/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The out-of-tree modules of a release: module files outside its kernel/ directory
 * (updates/, extra/, DKMS's directories), the one rule kp_relpath_is_in_tree() says. Two
 * listings rest on it, for two questions:
 *  - kp_out_of_tree_present(): the files its directory holds now, indexed or not, for the
 *    hook's install rules (gated-modules.h);
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
 * The module files of the release directory @moddir that are not in tree, found by walking it
 * (not kernel/, build, source) whether or not depmod has indexed them yet: names and paths
 * relative to @moddir, sorted by name then path, every file (two files of one name are both
 * listed). A linked directory is entered as depmod enters it (listed under the link's path;
 * one that leads back to a directory being walked, not again); a link named as a module is
 * listed whatever it leads to. A @moddir under @root (NULL, "" or "/": the host's) is walked
 * inside it by descriptors (its directory pinned once, kp_opendir_in(), links resolved there,
 * never on the host). The arrays and strings live in @arena. 0, or -1 with @err.
 */
int kp_out_of_tree_present(const char *root, const char *moddir, struct kp_arena *arena,
			   const char ***names, const char ***relpaths, size_t *n,
			   struct kp_err *err);

/*
 * The files depmod would use for @release under @root (depmod.d configuration) that are not
 * in tree, added to @set (not read yet). 0, or -1 with @err.
 */
int kp_out_of_tree_depmod(const char *root, const char *release, struct kp_module_set *set,
			  struct kp_err *err);

#endif
