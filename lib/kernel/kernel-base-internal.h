/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the kernel-base loaders (symvers.c, vmlinux-exports.c, system-map.c) share. */
#ifndef KP_KERNEL_BASE_INTERNAL_H
#define KP_KERNEL_BASE_INTERNAL_H

#include "kernel-base.h"

/* Largest text file (after decompression) a loader accepts: System.map is ~10 MiB. */
#define KP_BASE_MAX_TEXT ((size_t)256 << 20)

/*
 * Starts a load from one source: later kp_base_add() calls for a name and
 * owner already added by this same load count as duplicates, those added by
 * an earlier load are merged (and disagreements counted).
 */
void kp_base_begin_load(struct kp_kernel_base *b, unsigned source);

/*
 * Adds or merges @in (strings are copied into the base's arena; @in->owner
 * NULL means vmlinux). @in->sources is ignored: the current load's source is used.
 */
int kp_base_add(struct kp_kernel_base *b, const struct kp_ksym *in, struct kp_err *err);

/* The vmlinux entry @name for the loader to complete (CRCs found after the export). */
struct kp_ksym *kp_base_find_mutable(struct kp_kernel_base *b, const char *name);

/*
 * How many more times the load that added entry @i (load order) saw its name and owner
 * (counted in kp_base_stats().nduplicates), for the base cache (kernel-base-cached.c).
 */
uint32_t kp_base_repeats_at(const struct kp_kernel_base *b, size_t i);
/* Counts @n duplicates of the current load that were not added one by one (a cached load). */
void kp_base_note_duplicates(struct kp_kernel_base *b, size_t n);

/* Prefixes @err's message with "@path: " (for errors of helpers that do not know it); -1. */
int kp_base_err_prefix(struct kp_err *err, const char *path);

#endif
