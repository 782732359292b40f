/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The caches' trust model: which directories and files a run may read results and facts
 * from, or write them to. kopolicy runs as root from modprobe, DKMS, apt and kernel-install,
 * often with a user's HOME, XDG_CACHE_HOME or KOPOLICY_CACHE_DIR (sudo -E, su without -,
 * env_keep): a cache that another user can write would let that user forge root's verdicts,
 * or plant links that make root create or remove files elsewhere.
 *
 * A cache directory is trusted when it and every directory from / down to it are owned by
 * the effective user or by root and are not writable by group or others. A directory
 * writable by others is accepted only above the cache directory and only when it is sticky
 * (/tmp, /var/tmp): there nobody but its owner and root can rename or remove what another
 * user made in it, so the next component, which must pass the same test, cannot be swapped.
 * Every component is opened with openat(O_NOFOLLOW | O_DIRECTORY) from the one above it and
 * checked with fstat() on what was opened. A symbolic link on the way to the cache directory
 * (a system's /var/run -> /run, a /home link) is followed only when the link itself is owned
 * by the effective user or root (its directory passed the test already); its target is then
 * walked the same way, 40 links at most. Inside the cache no link is ever followed.
 * A file of the cache is believed only when it is a regular file owned by the effective user
 * or root and not writable by group or others (kp_trusted_file()).
 *
 * The same walk serves libkmod under a root (system/modprobe-snapshot.c): libkmod opens its
 * indexes and modprobe.d files by name, so each of them must be a name nobody else can
 * change (kp_trusted_entry()): its directory trusted as above (the last directory, so not
 * even sticky) with every directory on a local file system (kp_trusted_dir_open_local()),
 * the name absent (nobody else can create it), a directory, a regular file in a
 * trusted state (kp_state_trusted(): root's or ours, on a local file system, writable by
 * nobody else) or a link owned by us or root whose target passes the same test from /.
 *
 * The hook asks the same of the module files kmod opens by name after its answer
 * (system/module-trust.h): kp_trusted_owner(), kp_trusted_dir_mode() and kp_trusted_file()
 * on what it opens under the root.
 */
#ifndef KP_TRUSTED_DIR_H
#define KP_TRUSTED_DIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "util/util.h"

/*
 * Opens the directory @path (a relative one from the working directory), creating its missing
 * components (mode 0755) when @create, under the test above. Returns an O_PATH descriptor of
 * it, or -1 with @err: errnum EPERM when the trust model refuses it (the message names the
 * component and why), another errno when it does not exist or cannot be created or opened.
 */
int kp_trusted_dir_open(const char *path, bool create, struct kp_err *err);
/*
 * kp_trusted_dir_open() (@create false) for libkmod's reads under a root: every directory of
 * the walk also on a local file system (fs-trust.h), since the server or daemon of NFS, CIFS
 * or FUSE can change it whatever its modes say. The caches do not ask it: a cache directory
 * on NFS is the user's own choice, its entries checked as the header says.
 */
int kp_trusted_dir_open_local(const char *path, struct kp_err *err);
/*
 * kp_trusted_dir_open_local() for a directory a run makes its own directory in (a TMPDIR):
 * the directory itself may also be writable by others when it is sticky (/tmp), since what
 * the run makes in it must then pass the test alone (kp_trusted_subdir()).
 */
int kp_trusted_parent_open_local(const char *path, struct kp_err *err);
/*
 * The directory @name (one component, never a link) of the trusted directory @dfd, under the
 * same test, made (0755) when missing and @create. O_PATH descriptor, or -1 as above.
 */
int kp_trusted_subdir(int dfd, const char *name, bool create, struct kp_err *err);
/*
 * The name @name of the trusted directory @dfd (shown as @dir) can be read by name, as the
 * header says: absent, a directory, a trusted regular file, or a link owned by us or root whose
 * target (40 links at most) passes the same test, its directory walked from / again.
 * 0, or -1 with @err: errnum EPERM when refused (the message names the file and why).
 */
int kp_trusted_entry(int dfd, const char *dir, const char *name, struct kp_err *err);
/* A file of a trusted directory may be believed: regular, owned by the effective user or root,
 * not writable by group or others. */
bool kp_trusted_file(const struct stat *st);
/* The owner of @st is the effective user or root. */
bool kp_trusted_owner(const struct stat *st);
/*
 * The directory @st, its owner trusted, lets nobody else change it: not writable by group or
 * others, or, when @sticky_ok, sticky (then nobody but its owner and root can rename or remove
 * an entry another user owns: that entry must pass the test itself).
 */
bool kp_trusted_dir_mode(const struct stat *st, bool sticky_ok);

/*
 * For show, prune and clear: the directory @name of the trusted @dfd (O_PATH descriptor),
 * or -1 with @err. A link or other non-directory in its place is never followed: with
 * @tidy it is removed (as a link, unlinkat()) and counted in *@removed. errnum ENOENT when
 * there is no such directory (an empty cache), EPERM when the test refuses it.
 */
int kp_trusted_subdir_tidy(int dfd, const char *name, bool tidy, uint64_t *removed,
			   struct kp_err *err);
/* Removes every symbolic link of the trusted directory @dfd (as links), counting them. */
void kp_trusted_remove_links(int dfd, uint64_t *removed);
/*
 * Splits the cache path @path at its last "/": its directory into @dir (@len bytes) and
 * its last component into *@base (inside @path). 0, or -1 (no "/", too long).
 */
int kp_trusted_split(const char *path, char *dir, size_t len, const char **base);

#endif
