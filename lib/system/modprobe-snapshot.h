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

#include <stddef.h>
#include <sys/types.h>

#include "modprobe-chain.h"
#include "util/util.h"

/*
 * What libkmod will read for @c (opened by kp_chain_open() on a release directory with
 * modules.dep.bin), checked first: the root's modprobe.d directories (their entries must be
 * regular files or directories), then, under a root whose files others could swap
 * (kp_chain_kmod_trusted()), a private copy (kp_chain_snapshot_open()), then the indexes
 * kmod_new() reaches (modules.dep.bin kept in @c). @kpaths (KP_CHAIN_CONF_DIRS + 1) gets the
 * configuration directories kmod_new() is given, NULL-terminated. 0, or -1 with @err.
 */
int kp_chain_kmod_prepare(struct kp_chain *c, const char **kpaths, struct kp_err *err);

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
int kp_chain_kmod_trusted(const char *moddir, const char *const *paths);

/*
 * Makes @c's private copy for libkmod: a 0700 directory under $TMPDIR (absolute; else
 * /tmp) that must itself be trusted, set as @c->kmoddir, with each configuration directory
 * of @paths copied (its *.conf files, opened through @c->rootdir) as "conf.N", whose path
 * goes to @kpaths[N], and modules.softdep. The indexes are copied by
 * kp_chain_snapshot_file() when checked. 0, or -1 with @err; kp_chain_close() removes it.
 */
int kp_chain_snapshot_open(struct kp_chain *c, const char *const *paths, const char **kpaths,
			   struct kp_err *err);
/*
 * @c->moddir/@name (at most @max bytes) copied through @c->rootdir into the snapshot once,
 * when @c has one; absent stays absent. 0, or -1 with "PATH: why".
 */
int kp_chain_snapshot_file(struct kp_chain *c, const char *name, size_t max, struct kp_err *err);
/* Removes @c's snapshot, if any. */
void kp_chain_snapshot_remove(struct kp_chain *c);

#endif
