/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A set of modules read from files and directories: paths are collected
 * (directories recursed, symlinked directories not followed), then read in
 * parallel, keeping the order in which they were named.
 */
#ifndef KP_MODULE_SET_H
#define KP_MODULE_SET_H

#include <stdbool.h>
#include <stddef.h>

#include "read/module.h"

struct kp_set_entry {
	char *path;
	struct kp_module *mod; /* NULL when reading failed */
	char *error;	       /* why reading failed, or NULL */
	bool walked;	       /* found in a directory, not named itself */
	bool provider;	       /* resolved against, not reported (check --provider) */
};

struct kp_module_set {
	struct kp_set_entry *entries;
	size_t n;
	size_t cap;
};

/* True for the names a module tree uses: *.ko, *.ko.xz, *.ko.zst, *.ko.gz. */
bool kp_is_module_filename(const char *name);

/*
 * Adds @path: a file is taken whatever its name; a directory contributes every
 * module file below it, sorted by path. Errors (unreadable directory) become
 * entries with an error. Returns 0, or -1 when out of memory.
 */
int kp_set_add_path(struct kp_module_set *set, const char *path);

typedef void (*kp_progress_fn)(size_t done, size_t total, void *data);

struct kp_read_opts {
	struct kp_open_opts open;
	unsigned jobs;		 /* 0: one per online CPU */
	kp_progress_fn progress; /* called from one thread at a time; may be NULL */
	void *progress_data;
};

/* Reads every entry not read yet. Returns the number of entries that failed. */
size_t kp_set_read(struct kp_module_set *set, const struct kp_read_opts *opts);
/* Reads entries [@from, @to) only (streaming consumers read a window at a time). */
size_t kp_set_read_range(struct kp_module_set *set, size_t from, size_t to,
			 const struct kp_read_opts *opts);
void kp_set_free(struct kp_module_set *set);

#endif
