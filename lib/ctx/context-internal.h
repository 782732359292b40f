/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Inside the context: what context.c (loading), context-read.c (reading the modules) and
 * context-btf.c (the BTF) share (lib/ctx only).
 */
#ifndef KP_CONTEXT_INTERNAL_H
#define KP_CONTEXT_INTERNAL_H

#include <stddef.h>
#include <sys/types.h>

#include "context.h"

/* Says @msg about @path (NULL: the run) through the front end's log, when it gave one. */
void kp_ctx_say(const struct kp_ctx *c, const char *path, const char *msg);
/*
 * Says "warning: WHAT" about each walk warning of the set not said yet (a link depmod skips
 * with its ERROR line, graph/module-set.h): a problem that fails nothing.
 */
void kp_ctx_say_walk_warnings(struct kp_ctx *c);

/* Reads set entries [@from, @to); their misses wait in the facts cache to be stored. */
size_t kp_ctx_read_entries(struct kp_ctx *c, size_t from, size_t to);
/* The facts cache's thread stores the misses now, beside the caller's single-threaded work. */
void kp_ctx_store_pending(struct kp_ctx *c);
/*
 * Adds @paths to the set, reads every entry, says each failure. Returns how many failed
 * (directories without modules included), or -1 with @err.
 */
ssize_t kp_ctx_read_modules(struct kp_ctx *c, char **paths, int npaths, struct kp_err *err);

/*
 * The judge of module BTF for the kernel's BTF (kernel/btf-judge.h), its verdicts kept with
 * the facts; NULL without kernel BTF or out of memory (the bytes are then kept for the
 * simulation's check).
 */
const struct kp_btf_judge *kp_ctx_btf_judge(struct kp_ctx *c);

#endif
