// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Which file states the caches trust (lib/util/fs-trust.c) and the content hash for the
 * others (lib/util/content-hash.c): file system classes by statfs() magic, the trust rule
 * (owner, write bits, file system), an absent path's parent, the device table, SHA-256 of a
 * descriptor's bytes (the FIPS 180-2 "abc" vector) and its refusals.
 */
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>

#include "tap.h"
#include "util/content-hash.h"
#include "util/fs-trust.h"

static struct stat st_of(uid_t uid, mode_t mode)
{
	struct stat st;

	memset(&st, 0, sizeof(st));
	st.st_uid = uid;
	st.st_mode = mode;
	return st;
}

static void classes(struct tap *t)
{
	static const struct {
		int64_t magic;
		enum kp_fs_class cls;
		const char *name;
	} cases[] = {
		{ PROC_SUPER_MAGIC, KP_FS_KERNEL, "procfs" },
		{ SYSFS_MAGIC, KP_FS_KERNEL, "sysfs" },
		{ DEBUGFS_MAGIC, KP_FS_KERNEL, "debugfs" },
		{ SECURITYFS_MAGIC, KP_FS_KERNEL, "securityfs" },
		{ 0xde5e81e4, KP_FS_KERNEL, "efivarfs" },
		{ CGROUP_SUPER_MAGIC, KP_FS_KERNEL, "cgroup" },
		{ 0x63677270, KP_FS_KERNEL, "cgroup2" },
		{ 0x74726163, KP_FS_KERNEL, "tracefs" },
		{ EXT4_SUPER_MAGIC, KP_FS_LOCAL, "ext4" },
		{ XFS_SUPER_MAGIC, KP_FS_LOCAL, "xfs" },
		{ BTRFS_SUPER_MAGIC, KP_FS_LOCAL, "btrfs" },
		{ TMPFS_MAGIC, KP_FS_LOCAL, "tmpfs" },
		{ 0x794c7630, KP_FS_LOCAL, "overlayfs" },
		{ (int64_t)(int32_t)0xe0f5e1e2, KP_FS_LOCAL, "erofs, f_type sign-extended" },
		{ 0x65735546, KP_FS_OTHER, "fuse" },
		{ NFS_SUPER_MAGIC, KP_FS_OTHER, "nfs" },
		{ (int64_t)(int32_t)0xff534d42, KP_FS_OTHER, "cifs" },
		{ MSDOS_SUPER_MAGIC, KP_FS_OTHER, "vfat (no change time)" },
		{ V9FS_MAGIC, KP_FS_OTHER, "9p" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		tap_is_int(t, kp_fs_class_of_type(cases[i].magic), cases[i].cls, cases[i].name);
}

static void trust(struct tap *t)
{
	struct stat st;

	st = st_of(0, S_IFREG | 0644);
	tap_ok(t, kp_state_trusted(&st, KP_FS_LOCAL, 1000), "root's 0644 file: trusted");
	st = st_of(1000, S_IFREG | 0644);
	tap_ok(t, kp_state_trusted(&st, KP_FS_LOCAL, 1000), "the user's own 0644 file: trusted");
	st = st_of(1000, S_IFREG | 0600);
	tap_ok(t, !kp_state_trusted(&st, KP_FS_LOCAL, 0), "a user's file, for root: not trusted");
	st = st_of(1001, S_IFREG | 0444);
	tap_ok(t, !kp_state_trusted(&st, KP_FS_LOCAL, 1000), "another user's file: not trusted");
	st = st_of(0, S_IFREG | 0664);
	tap_ok(t, !kp_state_trusted(&st, KP_FS_LOCAL, 0), "group-writable: not trusted");
	st = st_of(1000, S_IFREG | 0646);
	tap_ok(t, !kp_state_trusted(&st, KP_FS_LOCAL, 1000), "other-writable: not trusted");
	st = st_of(0, S_IFDIR | 01777);
	tap_ok(t, kp_state_trusted(&st, KP_FS_LOCAL, 1000),
	       "a directory's write bits do not matter (entries change its times)");
	st = st_of(0, S_IFREG | 0644);
	tap_ok(t, !kp_state_trusted(&st, KP_FS_OTHER, 0), "root's file on FUSE/NFS: not trusted");
	tap_ok(t, !kp_state_trusted(&st, KP_FS_KERNEL, 0), "a procfs file: not trusted");
}

static void parents(struct tap *t)
{
	static const char *const cases[][2] = {
		{ "a", "." },	   { "/a", "/" },	 { "a/b", "a" },
		{ "//proc", "/" }, { "/a/b/c", "/a/b" }, { "x/../proc/k", "x/../proc" },
	};
	char buf[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r = kp_fs_parent(cases[i][0], buf, sizeof(buf));

		tap_ok(t, r == 0 && !strcmp(buf, cases[i][1]), "parent of %s: %s", cases[i][0],
		       r ? "(error)" : buf);
	}
	tap_ok(t, kp_fs_parent("abcdef/g", buf, 4) < 0, "a parent longer than the buffer: -1");
}

static void devs(struct tap *t)
{
	struct kp_fs_devs d;

	memset(&d, 0, sizeof(d));
	tap_is_int(t, kp_fs_devs_find(&d, 5), -1, "an unknown device");
	kp_fs_devs_add(&d, 5, KP_FS_LOCAL);
	kp_fs_devs_add(&d, 5, KP_FS_KERNEL);
	tap_is_int(t, kp_fs_devs_find(&d, 5), KP_FS_LOCAL, "a device keeps its first class");
	for (uint64_t i = 100; i < 100 + 2 * KP_FS_DEVS; i++)
		kp_fs_devs_add(&d, i, KP_FS_OTHER);
	tap_is_int(t, (long long)d.n, KP_FS_DEVS, "a full table takes no more");
	tap_is_int(t, kp_fs_devs_find(&d, 100 + KP_FS_DEVS), -1,
		   "a device past the table: unknown");
}

static void paths(struct tap *t)
{
	struct stat st;

	if (stat("/proc/self/status", &st) == 0)
		tap_is_int(t, kp_fs_class_of_path("/proc/self/status", &st, true), KP_FS_KERNEL,
			   "/proc/self/status is the kernel's");
	else
		tap_ok(t, 1, "# SKIP no /proc");
	if (stat("//proc/./self/../self/status", &st) == 0)
		tap_is_int(t, kp_fs_class_of_path("//proc/./self/../self/status", &st, true),
			   KP_FS_KERNEL, "//proc/./self/../self/status too");
	else
		tap_ok(t, 1, "# SKIP no /proc");
	if (stat("/sys/kernel", &st) == 0)
		tap_is_int(t, kp_fs_class_of_path("/sys/kernel", &st, true), KP_FS_KERNEL,
			   "/sys/kernel is the kernel's");
	else
		tap_ok(t, 1, "# SKIP no /sys");
	st = st_of(0, S_IFREG);
	st.st_dev = (dev_t)-1;
	tap_is_int(t, kp_fs_class_of_path("/proc/self/status", &st, true), -1,
		   "another file than the one stat()ed: -1");
}

static void hashes(struct tap *t)
{
	static const unsigned char abc[KP_CONTENT_HASH_LEN] = {
		0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40,
		0xde, 0x5d, 0xae, 0x22, 0x23, 0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17,
		0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad,
	};
	unsigned char h[KP_CONTENT_HASH_LEN];
	char path[] = "/tmp/kp-test-fs-trust-XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0 || write(fd, "abc", 3) != 3) {
		tap_ok(t, 0, "temporary file");
		return;
	}
	tap_ok(t, kp_content_hash_fd(fd, 3, h) == 0 && !memcmp(h, abc, sizeof(h)),
	       "SHA-256 of \"abc\" (FIPS 180-2)");
	tap_ok(t, lseek(fd, 0, SEEK_CUR) == 3, "the file offset did not move");
	tap_ok(t, kp_content_hash_fd(fd, 2, h) < 0, "more bytes than the size said: -1");
	tap_ok(t, kp_content_hash_fd(fd, 4, h) < 0, "fewer bytes than the size said: -1");
	tap_ok(t, kp_content_hash_fd(fd, KP_CONTENT_HASH_MAX + 1, h) < 0, "over the limit: -1");
	tap_ok(t, kp_content_hash_fd(-1, 3, h) < 0, "a bad descriptor: -1");
	close(fd);
	unlink(path);
}

/*
 * The settle rule (kp_state_settled()): a state changed at least a second before a time taken
 * before the read is settled, one changed within that second is not, by its change time or
 * by its modification time; the time of the check plays no part.
 */
static void settle(struct tap *t)
{
	const struct timespec before = { .tv_sec = 1000000, .tv_nsec = 500000000 };
	/* kp_file_state(): mtime in [3] and [4], ctime in [5] and [6] */
	uint64_t v[8] = { 1, 2, 3, 999999, 0, 999999, 0, 0100644 };

	tap_ok(t, kp_state_settled(v, &before), "changed 1.5 s before the read: settled");
	v[5] = 999999, v[6] = 499999999;
	tap_ok(t, kp_state_settled(v, &before), "ctime a second and 1 ns before the read: settled");
	v[6] = 500000000;
	tap_ok(t, !kp_state_settled(v, &before), "ctime exactly a second before the read: not");
	v[5] = 1000000, v[6] = 0;
	tap_ok(t, !kp_state_settled(v, &before), "ctime half a second before the read: not");
	v[5] = 999999, v[6] = 0, v[3] = 1000001;
	tap_ok(t, !kp_state_settled(v, &before), "mtime set after the read: not");
	v[3] = 1000000;
	tap_ok(t, !kp_state_settled(v, &before), "mtime half a second before the read: not");
	v[3] = 0;
	tap_ok(t, kp_state_settled(v, &before), "mtime set back to 1970, ctime old: settled");
}

int main(void)
{
	struct tap t = { 0 };

	classes(&t);
	trust(&t);
	parents(&t);
	devs(&t);
	paths(&t);
	hashes(&t);
	settle(&t);
	return tap_done(&t);
}
