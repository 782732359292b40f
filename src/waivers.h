/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Waiver file: accepted findings. One rule per line, first match wins:
 *   RULE-ID-GLOB  MODULE-GLOB  [SYMBOL-GLOB]   # comment
 * Globs use fnmatch(3). A waived finding is still reported, marked waived,
 * and does not count for the exit status.
 */
#ifndef KP_WAIVERS_H
#define KP_WAIVERS_H

#include "sim/loader.h"

struct kp_waiver {
	char *rule, *module, *symbol;
	unsigned line;
};

struct kp_waivers {
	struct kp_waiver *w;
	size_t n;
};

/* Largest waiver file read (a few lines in practice). */
#define KP_WAIVERS_MAX_SIZE ((size_t)16 << 20)

/* Reads @path with kp_read_file(): a regular file of at most KP_WAIVERS_MAX_SIZE. */
int kp_waivers_load(struct kp_waivers *ws, const char *path, struct kp_err *err);
/* The same from @len bytes of @buf (@path names it in errors; fuzzing, tests). */
int kp_waivers_load_buffer(struct kp_waivers *ws, const char *path, const char *buf, size_t len,
			   struct kp_err *err);
/* Marks every matching finding of @sim waived; returns how many. */
size_t kp_waivers_apply(const struct kp_waivers *ws, struct kp_simulation *sim);
void kp_waivers_free(struct kp_waivers *ws);

#endif
