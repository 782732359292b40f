/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The target kernel's exports, release and facts for the context (lib/ctx only). */
#ifndef KP_CONTEXT_KERNEL_H
#define KP_CONTEXT_KERNEL_H

#include <stdbool.h>

#include "context.h"

/*
 * The kernel: its exports from --kernel (a file, or a directory holding Module.symvers),
 * --running, -b ROOT, else the running kernel's installed files; its release and config for
 * the facts; then the --provider symbol files. 0, or -1 with @err.
 */
int kp_ctx_load_kernel(struct kp_ctx *c, struct kp_err *err);

/* A --provider path naming modules (a directory, a *.ko* file), not a symbol file. */
bool kp_ctx_provider_has_modules(const char *path);

#endif
