/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What kp_running_open_opts() (running.c) shares with the loaded modules' reader beside it
 * (running-modules.c). Private to lib/system/.
 */
#ifndef KP_SYSTEM_RUNNING_INTERNAL_H
#define KP_SYSTEM_RUNNING_INTERNAL_H

#include "file/rootfs.h"
#include "running.h"
#include "util/util.h"

/* procfs and sysfs files read whole: at most this much */
#define PROC_MAX_SIZE ((size_t)16 << 20)

/* @rel under the running system's root (free() it), or NULL: out of memory. */
static inline char *running_path(const struct kp_running *r, const char *rel)
{
	return kp_root_path(r->root, rel);
}

/* @n bytes of @s as a string in the running system's arena, or NULL: out of memory. */
static inline const char *running_dup(struct kp_running *r, const char *s, size_t n)
{
	return kp_arena_strndup(&r->arena, s, n);
}

/* @n > 0 bytes of @s, all decimal digits. */
static inline bool running_all_digits(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* /proc/modules under the root into r->modules, each module's taint and import_ns: 0 or -1. */
int kp_running_read_modules(struct kp_running *r, struct kp_err *err);

#endif
