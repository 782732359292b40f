/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An installed kernel under a root, found the way depmod -b ROOT does:
 * ROOT/lib/modules/<release>, else ROOT/usr/lib/modules/<release>, its
 * modules.builtin lists, and the kernel-side files distributions put beside
 * it (Module.symvers, config, System.map, vmlinux). Every path is inside the
 * root, symlinks included (Debian's absolute "build" link is taken relative to
 * the root). The .ko files themselves are read with kp_set_add_path(moddir).
 */
#ifndef KP_KERNEL_TREE_H
#define KP_KERNEL_TREE_H

#include <stdbool.h>
#include <stddef.h>

#include "kernel/kernel-base.h"
#include "kernel/kernel-config.h"
#include "file/rootopen.h"
#include "modprobe-snapshot.h"
#include "util/util.h"

struct kp_tree {
	char *root; /* as given; "/" when NULL was given */
	/*
	 * @root's directory, opened once by kp_tree_open(): the kernel's files below are
	 * opened inside it (kp_open_regular_in()). Not to be copied: kp_tree_release() closes it.
	 */
	struct kp_root_dir rootdir;
	char *release;
	char *moddir; /* ROOT/lib/modules/<release> or ROOT/usr/lib/modules/<release> */

	/* Kernel-side files found for this release; NULL when none was found. */
	char *symvers_path;    /* build/, usr/src/linux-headers-<r>/, boot/symvers-<r>.gz, ... */
	char *config_path;     /* boot/config-<r>, <moddir>/config (sid), build/.config */
	char *system_map_path; /* a real System.map (usr/lib/debug/boot/ first) */
	char *system_map_stub; /* the first one without symbol lines (Debian's stub), if any */
	char *vmlinux_path;    /* a vmlinux with export tables (BTF-only ones are skipped) */

	/* modules.builtin: module names ('-' turned to '_'), sorted, and their paths. */
	char **builtin;
	char **builtin_paths; /* same index: "kernel/fs/ext4/ext4.ko" */
	size_t nbuiltin;
	bool have_builtin_list; /* modules.builtin was present */

	/* "blacklist" commands of modprobe.d under the root (read with libkmod). */
	char **modprobe_blacklist;
	size_t nmodprobe_blacklist;

	struct kp_arena arena;
};

/*
 * Opens the tree of @release under @root (NULL: "/"). @release NULL picks the
 * only release there is, or fails listing the candidates. Missing optional
 * files are NULL fields, not errors; a malformed modules.builtin is an error.
 * @t is overwritten; release it with kp_tree_release() after success.
 * @kc: the run's private copy for libkmod (modprobe-snapshot.h; borrowed, removed by its
 * owner), made there when libkmod must read the modprobe.d blacklist from a copy, for the
 * modprobe chain to read next (kp_chain_open()); NULL: a copy made then is removed before
 * this returns.
 */
int kp_tree_open(struct kp_tree *t, const char *root, const char *release, struct kp_kmod_copy *kc,
		 struct kp_err *err);
struct kp_kmod_memo;
/*
 * kp_tree_open() for the hook: the modprobe.d blacklist libkmod gives replayed from @kmemo
 * (cache/kmod-memo.h; borrowed, NULL: none) when it holds it for the same inputs, else asked
 * of libkmod and recorded there.
 */
int kp_tree_open_memo(struct kp_tree *t, const char *root, const char *release,
		      struct kp_kmod_copy *kc, struct kp_kmod_memo *kmemo, struct kp_err *err);
void kp_tree_release(struct kp_tree *t);

/*
 * The kernel releases installed under @root (NULL: "/"): the directories in its
 * lib/modules and usr/lib/modules (resolved inside the root as kp_tree_open() does),
 * sorted, each name once, into *@names (free with kp_tree_releases_free()). A root with
 * neither directory has none. 0, or -1 with @err when out of memory.
 */
int kp_tree_list_releases(const char *root, char ***names, size_t *n, struct kp_err *err);
void kp_tree_releases_free(char **names, size_t n);
/*
 * The directory of @release under @root (NULL: "/") as kp_tree_open() finds it: lib/modules/
 * @release, else usr/lib/modules/@release (malloc'ed), without reading anything in it. NULL
 * with @err (errnum ENOENT: no such directory).
 */
char *kp_tree_release_dir(const char *root, const char *release, struct kp_err *err);

/*
 * A vmlinux holding the kernel's BTF: build/vmlinux (Debian's headers: BTF only), else
 * vmlinux_path. Looked up on demand (only kernels that check module BTF need it); the
 * caller frees the path. NULL: none.
 */
char *kp_tree_btf_vmlinux(const struct kp_tree *t);

/* True if module @name ("-" and "_" alike) is built into the kernel. */
bool kp_tree_is_builtin(const struct kp_tree *t, const char *name);

/*
 * Loads the tree's kernel exports into @b: Module.symvers when found (it has
 * CRCs and namespaces), else the vmlinux, else the System.map; with @all,
 * every one found (merged, disagreements counted in kp_base_stats()). Sets
 * the base's release. Fails when none is found, naming where it looked.
 */
int kp_tree_load_base(const struct kp_tree *t, struct kp_kernel_base *b, bool all,
		      struct kp_err *err);
/* The same with its Module.symvers through the base cache @cache (NULL: none). */
struct kp_base_cache;
int kp_tree_load_base_cached(const struct kp_tree *t, struct kp_kernel_base *b, bool all,
			     struct kp_base_cache *cache, struct kp_err *err);

/* True when the tree has a source of kernel exports (Module.symvers, vmlinux, real System.map). */
bool kp_tree_has_exports(const struct kp_tree *t);

/* Loads the tree's config into @c (zeroed or released before); fails if none was found. */
int kp_tree_load_config(const struct kp_tree *t, struct kp_kconfig *c, struct kp_err *err);

#endif
