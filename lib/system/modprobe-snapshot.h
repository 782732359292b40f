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
 * 1 when nothing on the host way to @path (absolute; each directory from "/", each link
 * followed as the host follows it, the file) can be changed by anyone but root or @euid:
 * each directory owned by one of them, on a local file system (fs-trust.h), not writable by
 * group or others unless sticky with the next entry theirs; the file, when present, a
 * trusted state (kp_state_trusted()), absent only where nobody else can create it. 0 when
 * not (or a FIFO, device, loop), -1 when out of memory.
 */
int kp_host_path_trusted(const char *path, uid_t euid);

/*
 * Whether libkmod may read the release directory @moddir and the configuration
 * directories @paths (NULL-terminated) by name: kp_host_path_trusted() for every file of
 * @moddir libkmod reads, each directory of @paths and each *.conf it lists. 1, 0, or -1.
 */
int kp_kmod_trusted(const char *moddir, const char *const *paths);

/*
 * Makes @k's private copy for libkmod: a 0700 directory under $TMPDIR (absolute; else
 * /tmp) that must itself be trusted, its "mod" set as @k->kmoddir, with each configuration
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
