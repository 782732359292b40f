/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Files of a system under a --root: path joining that never escapes to the
 * host by accident, symlinks resolved inside the root, and reading files that
 * procfs/sysfs report with a size of 0 or 4096.
 */
#ifndef KP_ROOTFS_H
#define KP_ROOTFS_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>

#include "file/bytes.h"
#include "file/rootopen.h"
#include "util/util.h"

/* True when @root is the host's own root (NULL, "" or "/"). */
bool kp_root_is_host(const char *root);

/* "@root/@rel" (malloc'ed; @rel may start with '/'); NULL when out of memory. */
char *kp_root_path(const char *root, const char *rel);

/*
 * @path (inside @root) with a final symlink resolved the way it would be on
 * that system: an absolute target is taken relative to @root. Returns a
 * malloc'ed copy of @path when it is no symlink; NULL when out of memory.
 */
char *kp_root_resolve_link(const char *root, const char *path);

/*
 * @rel under @root with every symlink on the way resolved as it would be on
 * that system, chroot-like: absolute targets restart at @root and ".." never
 * climbs above it, so a usrmerge root whose lib is "/usr/lib" or a "build"
 * link to "/usr/src/..." is read inside @root, not on the host. Components
 * that do not exist are kept as written. Returns a malloc'ed host path; NULL
 * with errno ENOMEM when out of memory, ELOOP after more than 40 symlinks.
 */
char *kp_root_resolve(const char *root, const char *rel);

/*
 * The host path of @path as a system at @root sees it: a path under @root ("@root/...")
 * resolved inside it by kp_root_resolve() (its symlinks, absolute or relative, chained,
 * looping or climbing out, never followed on the host); any other path, or any path when
 * @root is the host's, a malloc'ed copy of @path as named. Each link followed is recorded
 * in the inputs manifest (kp_in_readlink()), so a run cached on the result notices a link
 * that now points elsewhere. NULL with errno ENOMEM or ELOOP as kp_root_resolve().
 */
char *kp_root_resolve_path(const char *root, const char *path);

/*
 * @rel under @root (a directory of its configuration, say): kp_root_path() when @root is the
 * host's, else resolved inside it as kp_root_resolve() does. Same returns.
 */
char *kp_root_resolve_dir(const char *root, const char *rel);

/*
 * For a file another library opens by name (libkmod's indexes and modprobe.d): 1 when
 * @path leads on the host to the file (or the absence) it leads to inside @root, so that
 * library reads what the system at @root would; 0 when it leads elsewhere (a symlink out
 * of the root, to another file, or links that loop); -1 with errno ENOMEM.
 */
int kp_root_same_on_host(const char *root, const char *path);

/*
 * opendir() of @path, a directory under @root (a path kp_root_resolve*() gave, say), opened
 * inside @root by descriptors (kp_root_openat(), O_DIRECTORY: never a device or FIFO) and
 * recorded under @path (kp_in_fdopendir()); any other path, or no @root, kp_in_opendir().
 * NULL with errno.
 */
DIR *kp_opendir_in(const struct kp_root_dir *root, const char *path);
/* kp_opendir_in() with @root (NULL, "" or "/": the host's) opened at this use. */
DIR *kp_opendir_root(const char *root, const char *path);

/* True if @path is a regular file (symlinks followed), a directory for kp_is_dir. */
bool kp_is_file(const char *path);
bool kp_is_dir(const char *path);

/*
 * Reads @path to its end whatever its reported size (procfs, sysfs), up to
 * @max bytes after decompression by magic. Returns 0, or -1 with "PATH: why"
 * in @err and its errno in @err->errnum (ENOENT for a missing file, so callers
 * can treat absence as "unknown").
 */
int kp_read_file(const char *path, size_t max, struct kp_bytes *out, struct kp_err *err);
/*
 * The same for @path under @root (a path kp_root_resolve*() gave): opened inside @root by
 * descriptors (kp_open_regular_in()), so a link swapped on the way since it was resolved
 * cannot lead the read to a host file.
 */
int kp_read_file_in(const struct kp_root_dir *root, const char *path, size_t max,
		    struct kp_bytes *out, struct kp_err *err);

/*
 * The first line of a small text file without its newline and surrounding
 * blanks, into @buf. Same returns as kp_read_file().
 */
int kp_read_first_line(const char *path, char *buf, size_t size, struct kp_err *err);
/*
 * The first line of @b (read from @path) into @buf as kp_read_first_line() gives it; @b is
 * released. 0, or -1 (EOVERFLOW: longer than @size - 1).
 */
int kp_bytes_first_line(struct kp_bytes *b, const char *path, char *buf, size_t size,
			struct kp_err *err);
/* The same for @path under @root, opened as kp_open_regular_in(). */
int kp_read_first_line_in(const struct kp_root_dir *root, const char *path, char *buf, size_t size,
			  struct kp_err *err);

#endif
