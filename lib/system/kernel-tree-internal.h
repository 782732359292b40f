/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What kp_tree_open() (kernel-tree.c) calls in the files beside it: the kernel-side files
 * found (kernel-tree-files.c) and the built-in modules read (kernel-tree-builtin.c). Private
 * to lib/system/.
 */
#ifndef KP_SYSTEM_KERNEL_TREE_INTERNAL_H
#define KP_SYSTEM_KERNEL_TREE_INTERNAL_H

#include "kernel-tree.h"
#include "util/util.h"

/* The tree's Module.symvers, config, System.map (and stub) and vmlinux paths, as found. */
void kp_tree_find_files(struct kp_tree *t);

/* modules.builtin of t->moddir (none: 0); -1 with @err when unreadable or malformed. */
int kp_tree_read_builtin(struct kp_tree *t, struct kp_err *err);

#endif
