/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Opening a file inside a root on descriptors: the root directory is opened once and every
 * component under it is resolved by the kernel (openat2 RESOLVE_IN_ROOT) or, where openat2
 * is missing, walked one directory descriptor at a time, so nothing swapped on the way (a
 * directory replaced by a symlink) can lead the open out of the root.
 */
#ifndef KP_ROOTOPEN_H
#define KP_ROOTOPEN_H

#include <stdbool.h>

/* Most symlinks followed in one resolution, as the kernel's MAXSYMLINKS. */
#define KP_ROOT_MAX_LINKS 40

/* @root opened O_PATH|O_DIRECTORY|O_CLOEXEC, the descriptor the opens below start from. */
int kp_root_dir_open(const char *root);

/*
 * A system's root as the readers take it (kp_open_regular_in()): the path it is named by
 * and, once pinned, its directory, so that every file of a run is opened under the directory
 * ROOT named when the run began, whatever is renamed or replaced above it meanwhile (ROOT
 * itself swapped for a link to "/" by whoever owns its parent).
 */
struct kp_root_dir {
	const char *path; /* NULL, "" or "/": the host's, no root */
	int fd;		  /* the directory, O_PATH; -1: @path opened at each use */
};

/*
 * @r names @path (kept, not copied) with its directory opened now; the host's root, or a
 * directory that cannot be opened (each use then says why), leaves @r->fd -1. Release
 * with kp_root_dir_unpin(); a zeroed @r holds nothing to release.
 */
void kp_root_dir_pin(struct kp_root_dir *r, const char *path);
void kp_root_dir_unpin(struct kp_root_dir *r);

/*
 * @rel opened under the directory @rootfd with @flags (open(2)'s; O_CREAT refused), every
 * symlink on the way resolved as a chroot at @rootfd would: absolute targets restart at
 * @rootfd, ".." never climbs above it, KP_ROOT_MAX_LINKS links at most (ELOOP), procfs
 * magic links (/proc/self/root, /proc/N/fd/M) refused with ELOOP, mount points crossed.
 * openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS) when the kernel has it (5.6+), else
 * kp_root_openat_walk(). The descriptor, or -1 with errno.
 */
int kp_root_openat(int rootfd, const char *rel, int flags);

/*
 * The same without openat2: @rel walked component by component with
 * openat(dir, comp, O_PATH|O_NOFOLLOW), links read with readlinkat() on the link's own
 * descriptor, ".." taken back to the directory descriptor it came from (lexical after link
 * resolution, as kp_root_resolve()), the last component opened O_NOFOLLOW. Stricter than
 * openat2 in one way: any symlink on procfs, magic or not, is refused (ELOOP).
 */
int kp_root_openat_walk(int rootfd, const char *rel, int flags);

/*
 * The file the O_PATH descriptor @pathfd stands for opened again with @flags (open(2)'s,
 * O_CREAT refused) through /proc/self/fd: the very inode @pathfd holds, never whatever its
 * path names by now (a FIFO or device swapped in since could block or act when opened).
 * -1 with errno; ENOENT when /proc is not mounted (the caller refuses then: by name again,
 * a device swapped in since would be opened before it could be checked).
 */
int kp_fd_reopen(int pathfd, int flags);

/*
 * When @path names a file under @root (not the host's root): the part of @path after
 * @root (starting with '/' or empty), else NULL.
 */
const char *kp_root_rel(const char *root, const char *path);

#endif
