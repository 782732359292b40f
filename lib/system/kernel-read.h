/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading a kernel file whose read can sleep uninterruptibly on a lock an oops left held
 * (kernel-read.c): through a child the caller can abandon.
 */
#ifndef KP_KERNEL_READ_H
#define KP_KERNEL_READ_H

#include <stddef.h>
#include <sys/types.h>

#include "file/bytes.h"
#include "util/util.h"

/*
 * Reads @path to its end, up to @max bytes, into @out (text, never decompressed). A procfs,
 * sysfs or efivarfs file, or a FIFO, is read by a child (clone(CLONE_VM)) that copies it into
 * a pipe: the caller waits on the pipe, where a signal reaches it, while the child may sleep
 * in state D (on module_mutex, or in a firmware call) and is then left behind, holding nothing
 * open but the file and the pipe. Any other file is read as kp_read_file() does. Returns 0, or
 * -1 with "PATH: why" in @err and its errno (ENOENT for a missing file).
 */
int kp_read_kernel_file(const char *path, size_t max, struct kp_bytes *out, struct kp_err *err);
/*
 * The same for @path under @root (-b ROOT, --root): opened inside it by descriptors
 * (kp_open_readable_in()), then read by the child when it is a FIFO or on procfs, sysfs or
 * efivarfs, else as kp_read_file_in(). A NULL or host @root: kp_read_kernel_file().
 */
struct kp_root_dir;
int kp_read_kernel_file_in(const struct kp_root_dir *root, const char *path, size_t max,
			   struct kp_bytes *out, struct kp_err *err);
/*
 * Told of the child of a read: @started once it runs, before it is waited for; @ended once it
 * is reaped. A caller that gives up meanwhile (its deadline exits) never hears the end: the
 * child is left behind.
 */
struct kp_read_watch {
	void (*started)(void *data, pid_t child);
	void (*ended)(void *data, pid_t child);
	void *data;
};
/* kp_read_kernel_file_in() with its child, if any, told to @watch (NULL: none). */
int kp_read_kernel_file_watched(const struct kp_root_dir *root, const char *path, size_t max,
				const struct kp_read_watch *watch, struct kp_bytes *out,
				struct kp_err *err);
/* Its first line, blanks trimmed, into @buf, as kp_read_first_line() (EOVERFLOW: too long). */
int kp_read_kernel_first_line(const char *path, char *buf, size_t size, struct kp_err *err);
int kp_read_kernel_first_line_in(const struct kp_root_dir *root, const char *path, char *buf,
				 size_t size, struct kp_err *err);

#endif
