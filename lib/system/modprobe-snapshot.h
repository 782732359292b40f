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

/* modprobe.d directories libkmod reads under a root (KP_CHAIN_CONF_DIRS) */
#define KP_KMOD_CONF_DIRS 5
/*
 * Those directories, relative to the root, in the order of kmod 32 to 34's default config
 * paths: the first of them holding a file of a name hides the others' (conf_files_list()).
 * kmod 30 and 31 read no usr/lib/modprobe.d; on a merged /usr it is lib/modprobe.d anyway.
 */
extern const char *const kp_kmod_conf_dirs[KP_KMOD_CONF_DIRS];
/* The name of a copy in its directory: this, then mkdtemp()'s six letters and digits. */
#define KP_KMOD_COPY_PREFIX "kopolicy-kmod."

/*
 * What libkmod reads of a release directory: the root's files, or a private copy. One per
 * run: its owner zeroes it (no copy), its first user that needs a copy makes it
 * (kp_kmod_copy_open()), every later user of the run reads that same copy (the kernel
 * tree's blacklist, then the modprobe chain), and the owner removes it once the last
 * user is done (kp_kmod_copy_remove()). It owns its strings and its descriptors.
 */
struct kp_kmod_copy {
	bool active;		    /* a copy exists (kp_kmod_copy_remove() removes it) */
	struct kp_root_dir rootdir; /* with @active: the root, its own descriptor */
	struct kp_arena arena;	    /* the paths below */
	const char *moddir;	    /* with @active: ROOT/lib/modules/<release> */
	const char *snapdir;	    /* with @active: the copy */
	const char *kmoddir;	    /* with @active: its "mod", given to kmod_new() */
	int snapfd, modfd;	    /* with @active: @snapdir and @kmoddir, O_PATH */
	int lockfd;		    /* with @active: @snapdir, flock()ed while the copy lives */
	/* with @active: the conf.N copies given to kmod_new(), NULL-terminated */
	const char *kpaths[KP_KMOD_CONF_DIRS + 1];
};

/* The release directory libkmod is given for @moddir: @k's copy when it has one. */
static inline const char *kp_kmod_dir(const struct kp_kmod_copy *k, const char *moddir)
{
	return k->active ? k->kmoddir : moddir;
}

/* The configuration directories libkmod is given for @paths: @k's copies when it has one. */
static inline const char *const *kp_kmod_paths(const struct kp_kmod_copy *k,
					       const char *const *paths)
{
	return k->active ? k->kpaths : paths;
}

/*
 * Whether libkmod may read the release directory @moddir and the configuration
 * directories @paths (NULL-terminated) by name, under the caches' trust model
 * (cache/trusted-dir.h, one walk for both): each directory by kp_trusted_dir_open(), every
 * file of @moddir libkmod reads and each *.conf of @paths by kp_trusted_entry().
 */
bool kp_kmod_trusted(const char *moddir, const char *const *paths);

/*
 * Makes @k (zeroed, or removed) the private copy for libkmod of the release directory
 * @moddir of the root @rootdir (pinned; its descriptor duplicated, @moddir copied): a 0700
 * directory under $TMPDIR (absolute; else a tmpfs /run or /dev/shm, else /tmp) that must
 * itself be trusted (kp_trusted_dir_open(); refused with a line naming TMPDIR, or with it
 * unset each place tried, and why), its "mod" set as @k->kmoddir, with each configuration
 * directory of @paths (at most KP_KMOD_CONF_DIRS) copied (its *.conf files, opened through
 * the root) as "conf.N", whose path goes to @k->kpaths[N], modules.softdep and
 * modules.weakdep, and a link to the root's own entry for each other name of @moddir
 * (libkmod only stat()s the modules). The indexes are copied by kp_kmod_copy_file() when
 * checked. 0, or -1 with @err; kp_kmod_copy_remove() removes it (also after a failure).
 * The copy is named "kopolicy-kmod.XXXXXX" and flock()ed by its owner while it lives; the
 * copies of the caller's own that runs killed before removing theirs left in the same place
 * (no lock held, unchanged for ten minutes) are removed when it is made.
 */
int kp_kmod_copy_open(struct kp_kmod_copy *k, const struct kp_root_dir *rootdir, const char *moddir,
		      const char *const *paths, struct kp_err *err);
/* Whether @k holds a copy of the release directory @moddir (a user reads it, none other). */
bool kp_kmod_copy_of(const struct kp_kmod_copy *k, const char *moddir);
/*
 * @k->moddir/@name (at most @max bytes) copied through @k->rootdir into the copy once,
 * when @k has one; absent stays absent. 0, or -1 with "PATH: why".
 */
int kp_kmod_copy_file(struct kp_kmod_copy *k, const char *name, size_t max, struct kp_err *err);
/* Removes @k's copy, if any, and frees what it holds: @k is left zeroed (no copy). */
void kp_kmod_copy_remove(struct kp_kmod_copy *k);
/*
 * Removes @k's copy (NULL or none: nothing) from the disk and leaves @k as it is, with
 * system calls only: async-signal-safe, for a process about to _exit() (the hook's
 * deadline); the copy stays when the run is stopped within the few instructions between
 * mkdtemp() and the copy's @active.
 */
void kp_kmod_copy_unlink(const struct kp_kmod_copy *k);
/*
 * The copies that runs killed before they removed them left in the directory @parentfd, the
 * one named @self aside (modprobe-snapshot-remove.c): those of the caller's own user whose
 * lock no run holds and that have not changed for ten minutes.
 */
void kp_kmod_copy_sweep(int parentfd, const char *self);

#endif
