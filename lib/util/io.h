/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Whole reads and writes: the one pread()/write() loop of lib/ (EINTR, short transfers). */
#ifndef KP_IO_H
#define KP_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <dirent.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

/*
 * Reads @len bytes at @off of @fd into @buf, retrying interrupted and short reads. Returns
 * the bytes read: @len, or fewer when the file ends first; -1 with errno on a read error.
 * errno is left as it was when the call succeeds.
 */
ssize_t kp_pread_all(int fd, void *buf, size_t len, uint64_t off);
/*
 * Writes all @len bytes of @buf to @fd at its offset, retrying interrupted and short
 * writes. 0, or -1 with errno (EIO when write() makes no progress); errno is left as it
 * was when the call succeeds.
 */
int kp_write_all(int fd, const void *buf, size_t len);
/*
 * kp_write_all() of the @n buffers of @iov (at most IOV_MAX) in writev() calls; @iov is
 * consumed (its entries advanced past what was written).
 */
int kp_writev_all(int fd, struct iovec *iov, int n);

/* mkdir -p @path (0755): 0, or -1 with errno. */
int kp_mkdir_p(const char *path);
/*
 * A file's state as the caches key it: device, inode, size, mtime (s, ns), ctime (s, ns),
 * mode, into @v[8].
 */
void kp_file_state(const struct stat *st, uint64_t *v);

/*
 * The directory @name of @dfd ("." for @dfd itself; a link never followed) opened for
 * readdir(): the stream, or NULL with errno set and nothing left open.
 */
DIR *kp_dir_list_at(int dfd, const char *name);

/* A regular file of a cache directory, as kp_dir_newest() lists it. */
struct kp_dir_file {
	char name[96];
	time_t mtime;
	uint64_t bytes; /* allocated blocks */
};
/*
 * The regular files of the directory @dfd (links not followed) whose names fit and that
 * @keep accepts (@keep may act on a file, say remove it, and refuse it), newest mtime first,
 * then by name: the order both caches prune in. 0 (a directory that cannot be opened has
 * none), or -1 when out of memory.
 */
int kp_dir_newest(int dfd,
		  bool (*keep)(int dfd, const char *name, const struct stat *st, void *arg),
		  void *arg, struct kp_dir_file **out, size_t *n);

#endif
