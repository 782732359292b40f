/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Whether the module files kmod opens by name after the hook's answer are the files the hook
 * judged. The hook reads a module and its chain, exits, and the install line's
 * `modprobe --ignore-install` has kmod open the same paths again: whoever can write, replace
 * or rename one of those files, or a directory on its path, can let the hook judge one file
 * and swap in another before kmod reads it. So each file and every directory from the root
 * (excluded: the administrator named it) down to it must pass the caches' trust test
 * (cache/trusted-dir.h): owned by root or the effective user, not writable by group or
 * others, a sticky directory accepted (what another user owns in it must pass itself). A link
 * on the way, owned by root or the effective user (its directory passed), is resolved inside
 * the root (kp_root_resolve()) and the resolved path walked the same way.
 *
 * Every directory is opened with openat(O_PATH | O_NOFOLLOW) from the one above it, from the
 * root's pinned directory, and checked with fstat() on what was opened; the files of a chain
 * share the directories their paths share (one walk for extra/ or updates/dkms/).
 */
#ifndef KP_MODULE_TRUST_H
#define KP_MODULE_TRUST_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "file/rootopen.h"
#include "util/util.h"

/* What failed the test: the path as the host names it, its owner and its mode bits. */
struct kp_untrusted {
	char path[PATH_MAX];
	unsigned uid;
	unsigned mode;	    /* st_mode & 07777 */
	bool owner_trusted; /* root's or ours: its mode lets others change it */
};

/* Directories of the last walk kept open: a deeper one is walked again for each file. */
#define KP_MODULE_TRUST_DEPTH 16

/*
 * One run of checks under a root. The directories of the last file's walk that passed stay
 * open, so the next file walks only what its path does not share with it (a chain's modules
 * share lib/modules/REL/kernel/drivers/...): nobody else could change those meanwhile.
 */
struct kp_module_trust {
	const char *root; /* NULL, "" or "/": the host's */
	int rootfd;	  /* the root's directory (borrowed when @own_root is false) */
	bool own_root;
	size_t depth;			    /* directories kept in @fds */
	int fds[KP_MODULE_TRUST_DEPTH];	    /* each one that passed, from the root down */
	size_t ends[KP_MODULE_TRUST_DEPTH]; /* where its name ends in @dir */
	char dir[PATH_MAX]; /* the kept directories' path under the root, no leading '/' */
};

/*
 * @t ready for files under @root (its pinned directory used when it holds one, else the
 * root opened now). 0, or -1 with @err when the root cannot be opened.
 */
int kp_module_trust_init(struct kp_module_trust *t, const struct kp_root_dir *root,
			 struct kp_err *err);
void kp_module_trust_release(struct kp_module_trust *t);

/*
 * @path (a host path under the root, as modules.dep gives it there) and every directory from
 * the root down to it pass the test: 1; 0 when one does not (*@bad says which); -1 with @err
 * when the walk fails (a component missing or unreadable, a link loop, a path too long).
 */
int kp_module_trust_check(struct kp_module_trust *t, const char *path, struct kp_untrusted *bad,
			  struct kp_err *err);

#endif
