/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A module named on the command line, found as modprobe users name modules. */
#ifndef KP_MODULE_LOOKUP_H
#define KP_MODULE_LOOKUP_H

#include "ctx-options.h"

/*
 * The graph node of @asked: a file of the set, a module name ('-' and '_' alike), a file
 * name (basename without .ko*), else what modprobe resolves it to in @a's modules tree
 * (aliases of modprobe.d and modules.alias). SIZE_MAX when none; *@how says which matched.
 */
size_t kp_cli_find_module(const struct kp_ctx *a, const char *asked, const char **how);

#endif
