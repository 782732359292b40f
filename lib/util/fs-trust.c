// SPDX-License-Identifier: LGPL-2.1-or-later
/* Which file states name their bytes, and which file systems are the kernel's (fs-trust.h). */
#include "fs-trust.h"

#include <linux/magic.h>
#include <string.h>
#include <time.h>
#include <sys/statfs.h>
#include <sys/vfs.h>

/* magic numbers some linux/magic.h versions lack (values from the kernel's headers) */
#ifndef EFIVARFS_MAGIC
#define EFIVARFS_MAGIC 0xde5e81e4
#endif
#ifndef TRACEFS_MAGIC
#define TRACEFS_MAGIC 0x74726163
#endif
#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif
#ifndef NSFS_MAGIC
#define NSFS_MAGIC 0x6e736673
#endif
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif
#ifndef EROFS_SUPER_MAGIC_V1
#define EROFS_SUPER_MAGIC_V1 0xe0f5e1e2
#endif
#ifndef OVERLAYFS_SUPER_MAGIC
#define OVERLAYFS_SUPER_MAGIC 0x794c7630
#endif
#define CONFIGFS_MAGIC_ 0x62656570 /* fs/configfs/mount.c */
#define MQUEUE_MAGIC_	0x19800202 /* ipc/mqueue.c */
#define FUSECTL_MAGIC_	0x65735543 /* fs/fuse/control.c */
#define ZFS_MAGIC_	0x2fc12fc1 /* OpenZFS */
#define BCACHEFS_MAGIC_ 0xca451a4e /* fs/bcachefs */
#define JFS_MAGIC_	0x3153464a /* fs/jfs */
#define NILFS_MAGIC_	0x3434	   /* fs/nilfs2 */

/* The running kernel's state as files: what reads here says nothing a later run can trust. */
static const uint32_t kernel_fs[] = {
	PROC_SUPER_MAGIC,    SYSFS_MAGIC,	  DEBUGFS_MAGIC,  SECURITYFS_MAGIC, EFIVARFS_MAGIC,
	CGROUP_SUPER_MAGIC,  CGROUP2_SUPER_MAGIC, TRACEFS_MAGIC,  BPF_FS_MAGIC,	    PSTOREFS_MAGIC,
	DEVPTS_SUPER_MAGIC,  SELINUX_MAGIC,	  SMACK_MAGIC,	  NSFS_MAGIC,	    BINFMTFS_MAGIC,
	CONFIGFS_MAGIC_,     MQUEUE_MAGIC_,	  FUSECTL_MAGIC_, PIPEFS_MAGIC,	    SOCKFS_MAGIC,
	ANON_INODE_FS_MAGIC, BDEVFS_MAGIC,
};

/*
 * File systems whose stat() the kernel keeps (a change time no caller can set, updated by
 * every write but one through a shared mapping): local disks, tmpfs, read-only images.
 */
static const uint32_t local_fs[] = {
	EXT4_SUPER_MAGIC, /* ext2, ext3, ext4 */
	XFS_SUPER_MAGIC,      BTRFS_SUPER_MAGIC,    TMPFS_MAGIC,      RAMFS_MAGIC,
	SQUASHFS_MAGIC,	      EROFS_SUPER_MAGIC_V1, F2FS_SUPER_MAGIC, OVERLAYFS_SUPER_MAGIC,
	ISOFS_SUPER_MAGIC,    ZFS_MAGIC_,	    BCACHEFS_MAGIC_,  JFS_MAGIC_,
	REISERFS_SUPER_MAGIC, NILFS_MAGIC_,
};

enum kp_fs_class kp_fs_class_of_type(int64_t f_type)
{
	/* f_type is a signed long on some ABIs: the magic is its low 32 bits */
	uint32_t t = (uint32_t)f_type;

	for (size_t i = 0; i < sizeof(kernel_fs) / sizeof(kernel_fs[0]); i++)
		if (t == kernel_fs[i])
			return KP_FS_KERNEL;
	for (size_t i = 0; i < sizeof(local_fs) / sizeof(local_fs[0]); i++)
		if (t == local_fs[i])
			return KP_FS_LOCAL;
	return KP_FS_OTHER;
}

void kp_fs_devs_init(struct kp_fs_devs *d)
{
	struct stat root, dev;
	struct statfs fs;

	memset(d, 0, sizeof(*d));
	/*
	 * devtmpfs reports tmpfs's (or ramfs's) magic: it is told by being the file system
	 * mounted at /dev. /dev/shm and the like are mounts of their own (other devices).
	 */
	if (stat("/", &root) == 0 && stat("/dev", &dev) == 0 && dev.st_dev != root.st_dev &&
	    statfs("/dev", &fs) == 0 &&
	    ((uint32_t)fs.f_type == TMPFS_MAGIC || (uint32_t)fs.f_type == RAMFS_MAGIC))
		kp_fs_devs_add(d, (uint64_t)dev.st_dev, KP_FS_KERNEL);
}

int kp_fs_devs_find(const struct kp_fs_devs *d, uint64_t dev)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->dev[i] == dev)
			return d->cls[i];
	return -1;
}

void kp_fs_devs_add(struct kp_fs_devs *d, uint64_t dev, enum kp_fs_class cls)
{
	if (d->n == KP_FS_DEVS || kp_fs_devs_find(d, dev) >= 0)
		return;
	d->dev[d->n] = dev;
	d->cls[d->n++] = (unsigned char)cls;
}

/* The directory part of @path into @buf ("." or "/" at least); 0 or -1 (too long). */
int kp_fs_parent(const char *path, char *buf, size_t len)
{
	const char *slash = strrchr(path, '/');
	size_t n;

	if (!slash)
		return len >= 2 ? (memcpy(buf, ".", 2), 0) : -1;
	n = slash == path ? 1 : (size_t)(slash - path);
	if (n >= len)
		return -1;
	memcpy(buf, path, n);
	buf[n] = '\0';
	return 0;
}

int kp_fs_class_of_path(const char *path, const struct stat *st, bool follow)
{
	char parent[4096];
	struct statfs fs;
	struct stat again;

	/*
	 * statfs() follows a final symbolic link: a link's own file system is its directory's
	 * (the same device)
	 */
	if (!follow && S_ISLNK(st->st_mode)) {
		if (kp_fs_parent(path, parent, sizeof(parent)) < 0 || statfs(parent, &fs) < 0 ||
		    stat(parent, &again) < 0 || again.st_dev != st->st_dev)
			return -1;
		return kp_fs_class_of_type((int64_t)fs.f_type);
	}
	if (statfs(path, &fs) < 0 || stat(path, &again) < 0 || again.st_dev != st->st_dev ||
	    again.st_ino != st->st_ino)
		return -1;
	return kp_fs_class_of_type((int64_t)fs.f_type);
}

int kp_fs_class_of_fd(int fd)
{
	struct statfs fs;

	if (fstatfs(fd, &fs) < 0)
		return -1;
	return kp_fs_class_of_type((int64_t)fs.f_type);
}

bool kp_state_settled(const uint64_t *v, const struct timespec *before)
{
	/* nanoseconds since the epoch: KP_SETTLE_SECONDS before @before */
	int64_t edge = ((int64_t)before->tv_sec - KP_SETTLE_SECONDS) * 1000000000 + before->tv_nsec;

	/* mtime can be set back by hand, ctime cannot: ctime says when the file last changed */
	return (int64_t)v[5] * 1000000000 + (int64_t)v[6] < edge &&
	       (int64_t)v[3] * 1000000000 + (int64_t)v[4] < edge;
}

bool kp_state_trusted(const struct stat *st, enum kp_fs_class cls, uid_t euid)
{
	if (cls != KP_FS_LOCAL || (st->st_uid != 0 && st->st_uid != euid))
		return false;
	return !S_ISREG(st->st_mode) || !(st->st_mode & (S_IWGRP | S_IWOTH));
}
