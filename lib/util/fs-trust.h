/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which file states name their bytes. Both caches (the facts cache, lib/cache/facts-cache.c,
 * and the result cache's manifest, lib/file/inputs.c) take a file in the same stat() state
 * (device, inode, size, mtime, ctime, mode) to hold the same bytes. The kernel keeps that
 * true for every write but one: a store through a shared writable mapping into a page that
 * is already dirty changes the bytes and no timestamp. (A write in the same timestamp tick
 * as the recorded state is the other case; both caches refuse states changed less than a
 * second before they are recorded.) So a state is trusted only when nobody but the run's
 * own user or root can have the file open for writing, and only on a file system whose
 * stat() the kernel itself keeps:
 *
 *   - the file system is a local one (ext2/3/4, XFS, btrfs, tmpfs, ...); not FUSE, NFS, CIFS
 *     or any other whose server or daemon reports the state (and can report the same state
 *     for other bytes), nor one without a real change time (FAT, exFAT);
 *   - the owner is root or the effective user;
 *   - a regular file is not group- or other-writable (with POSIX ACLs the group bits are
 *     the ACL mask, so a named user's or group's write access shows there too).
 *
 * The directories above a file do not matter for its bytes: replacing the file changes
 * its device/inode or change time, which the state holds. Bytes of any other file are
 * verified by their SHA-256 (content-hash.h).
 *
 * The same f_type from statfs() also tells the kernel's own pseudo file systems (procfs,
 * sysfs, debugfs, ...) and the devtmpfs mounted at /dev apart from files: what a run reads
 * there is the running kernel's state and is never cached, however the path was spelled.
 */
#ifndef KP_FS_TRUST_H
#define KP_FS_TRUST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

enum kp_fs_class {
	KP_FS_OTHER = 0, /* a file system whose stat() is not the kernel's own (FUSE, NFS, ...) */
	KP_FS_LOCAL = 1, /* the kernel keeps every state: ext4, XFS, btrfs, tmpfs, ... */
	KP_FS_KERNEL = 2 /* the running kernel's state: procfs, sysfs, devtmpfs at /dev, ... */
};

/* The class of a file system by its statfs() f_type (/dev's devtmpfs: see kp_fs_devs). */
enum kp_fs_class kp_fs_class_of_type(int64_t f_type);

/*
 * The classes of the devices seen so far (a device number names one mounted file system),
 * so that statfs() is called once per file system, not once per file. Not locked: the
 * owner serialises. kp_fs_devs_init() notes /dev's devtmpfs (when /dev is a mount of its
 * own) as KP_FS_KERNEL.
 */
#define KP_FS_DEVS 16
struct kp_fs_devs {
	size_t n;
	uint64_t dev[KP_FS_DEVS];
	unsigned char cls[KP_FS_DEVS];
};
void kp_fs_devs_init(struct kp_fs_devs *d);
/* The class of device @dev, -1 when not seen yet. */
int kp_fs_devs_find(const struct kp_fs_devs *d, uint64_t dev);
/* Remembers @dev's class (nothing when full: the caller then asks again). */
void kp_fs_devs_add(struct kp_fs_devs *d, uint64_t dev, enum kp_fs_class cls);

/*
 * The class of the file system holding @path, whose stat() said @st (@follow: of the link's
 * target, else of the link): statfs(), then the state checked again so that the answer is
 * the file system of that file, not of one that replaced it in between. -1 when @path
 * changed or statfs() failed.
 */
int kp_fs_class_of_path(const char *path, const struct stat *st, bool follow);
/* The directory part of @path into @buf ("." for a bare name); 0 or -1 (too long). */
int kp_fs_parent(const char *path, char *buf, size_t len);
/* The same for an open descriptor (fstatfs): no race. -1 when fstatfs() failed. */
int kp_fs_class_of_fd(int fd);

/*
 * The state @st on a file system of class @cls names its bytes for a run as @euid: the file
 * system is KP_FS_LOCAL, the owner root or @euid, a regular file not group/other-writable.
 */
bool kp_state_trusted(const struct stat *st, enum kp_fs_class cls, uid_t euid);

/*
 * The settle rule of every memo that keys a file by its state (the facts cache, the base
 * cache, the image certificates; the result cache's manifest applies the same margin to the
 * run's start, file/inputs-state.c): the state @v (kp_file_state()) last changed, by its
 * change and modification times, at least KP_SETTLE_SECONDS before @before, a time taken
 * before the file's bytes were read. A write in the same timestamp tick as the state leaves
 * the state as it was (ext4 before 6.13 ticks every few ms, ext3's small inodes every
 * second); a write after @before cannot fall in that tick, so the state names the bytes read
 * after @before. Judged against the time of the check instead, a file written just before
 * its read and again within the same tick while it was read would pass once the check came
 * a second after the first write.
 */
#define KP_SETTLE_SECONDS 1
struct timespec;
bool kp_state_settled(const uint64_t *v, const struct timespec *before);

#endif
