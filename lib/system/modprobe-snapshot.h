/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libkmod under a root reads by name on the host (kmod 30's index_file_open(),
 * conf_files_list()): kopolicy checks those files first, so a name someone else can
 * replace after the check could hand libkmod other bytes (a link to the host's own index).
 * Either nobody but root or the run's user can change any of them (read by name), or
 * libkmod reads a private copy made through the root's pinned directory and checked there.
 */
#ifndef KP_MODPROBE_SNAPSHOT_H
#define KP_MODPROBE_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "file/rootopen.h"
#include "util/util.h"

/* What libkmod reads of a release directory: the root's files, or a private copy. */
struct kp_kmod_copy {
	const struct kp_root_dir *rootdir; /* the root, pinned (borrowed) */
	const char *moddir;		   /* ROOT/lib/modules/<release> (borrowed) */
	struct kp_arena *arena;		   /* the owner's: the paths below */
	const char *kmoddir;		   /* given to kmod_new(): @moddir, or the copy's */
	bool active;			   /* a copy exists (kp_kmod_copy_remove() removes it) */
	const char *snapdir;		   /* with @active: the copy (@kmoddir is its "mod") */
	int snapfd, modfd;		   /* with @active: @snapdir and @kmoddir, O_PATH */
};

/*
 * Whether libkmod may read the release directory @moddir and the configuration
 * directories @paths (NULL-terminated) by name, under the caches' trust model
 * (cache/trusted-dir.h, one walk for both): each directory by kp_trusted_dir_open(), every
 * file of @moddir libkmod reads and each *.conf of @paths by kp_trusted_entry().
 */
bool kp_kmod_trusted(const char *moddir, const char *const *paths);

/*
 * Makes @k's private copy for libkmod: a 0700 directory under $TMPDIR (absolute; else a
 * tmpfs /run or /dev/shm, else /tmp) that must itself be trusted (kp_trusted_dir_open();
 * refused with a line naming TMPDIR, or with it unset each place tried, and why), its "mod"
 * set as @k->kmoddir, with each configuration
 * directory of @paths copied (its *.conf files, opened through @k->rootdir) as "conf.N",
 * whose path goes to @kpaths[N], modules.softdep and modules.weakdep, and a link to the
 * root's own entry for each other name of @k->moddir (libkmod only stat()s the modules).
 * The indexes are copied by kp_kmod_copy_file() when checked. 0, or -1 with @err;
 * kp_kmod_copy_remove() removes it (also after a failure).
 */
int kp_kmod_copy_open(struct kp_kmod_copy *k, const char *const *paths, const char **kpaths,
		      struct kp_err *err);
/*
 * @k->moddir/@name (at most @max bytes) copied through @k->rootdir into the copy once,
 * when @k has one; absent stays absent. 0, or -1 with "PATH: why".
 */
int kp_kmod_copy_file(struct kp_kmod_copy *k, const char *name, size_t max, struct kp_err *err);
/* Removes @k's copy, if any. */
void kp_kmod_copy_remove(struct kp_kmod_copy *k);

#endif
