/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The modules whose loads the hook's install rules must gate (`kopolicy hook
 * --print-install-rules`): those whose verdict can differ from the one their kernel package
 * was judged with. In every kernel release installed under a root (modprobe.d is shared by all
 * of them: a kernel installed next must not boot ungated):
 *  - every out-of-tree module: a module file outside kernel/ (updates/, extra/, DKMS's
 *    directories; kp_relpath_is_in_tree()), found in the release directory whether or not
 *    depmod has indexed it yet (DKMS runs its POST_INSTALL before depmod);
 *  - every module that depends on one, directly or transitively, by modules.dep: modprobe
 *    loads a module's dependencies before running its own install line (libkmod's
 *    kmod_module_probe_insert_module()), so without a line of its own such a module is
 *    inserted unjudged, while its verdict can change with the out-of-tree module it uses
 *    (P inherited from a proprietary replacement, a GPL-only import refused, a CRC mismatch).
 *    A dependency counts by name: an in-tree file that an out-of-tree one of the same name
 *    shadows (updates/ first) is the out-of-tree module.
 */
#ifndef KP_GATED_MODULES_H
#define KP_GATED_MODULES_H

#include <stdbool.h>
#include <stddef.h>

#include "util/util.h"

/* One module file that gets an install line, in one release. */
struct kp_gated_module {
	const char *name;    /* as modprobe names it ('-' as '_') */
	const char *release; /* the release directory's name */
	const char *relpath; /* the file, relative to the release directory */
	const char *via;     /* NULL: out of tree; else the gated modules it depends on, "a, b" */
	/*
	 * Out of tree and not in modules.dep yet (or no modules.dep): depmod has not indexed it,
	 * so its own softdep= is not in modules.softdep yet (DKMS runs its POST_INSTALL first).
	 */
	bool unindexed;
	/*
	 * Its soft dependencies (kp_gated_softdeps()): the names of the modprobe.d or
	 * modules.softdep entry modprobe would use (the first that matches it, kopolicy's own
	 * overrides skipped), as written there, " " between; NULL: none (or an entry naming none).
	 * An unindexed module no entry matches: those of its own softdep=, the entry depmod is
	 * about to write.
	 */
	const char *softdep;	  /* all of them, pre then post */
	const char *softdep_pre;  /* loaded before it ("" none) */
	const char *softdep_post; /* loaded after it ("" none) */
	/*
	 * The names of the entries modprobe would use for a module of this name in the releases
	 * where none is gated (in tree there: their own modules.softdep), the same on every module
	 * of the name, " " between; NULL: none. modprobe.d is shared by the releases: kopolicy's
	 * override and install line of the name apply there too, and the line loads these as well.
	 */
	const char *softdep_else_pre;
	const char *softdep_else_post;
	/* libkmod finds soft dependencies for it as now configured: never runs its install line */
	bool softdep_ignorecmd;
};

enum kp_gated_source {
	KP_GATED_DEP,	 /* modules.dep read: out-of-tree modules and their dependents */
	KP_GATED_WALK,	 /* no modules.dep: out-of-tree modules only (dependents unknown) */
	KP_GATED_NO_DEP, /* modules.dep unreadable (error): out-of-tree modules only */
	KP_GATED_EMPTY,	 /* no modules at all: skipped */
	KP_GATED_FAILED, /* the directory could not be read (error) */
};

struct kp_gated_release {
	const char *release;
	enum kp_gated_source source;
	const char *error; /* KP_GATED_NO_DEP, KP_GATED_FAILED: why */
};

struct kp_gated {
	struct kp_gated_module *mods; /* sorted by name, release, path */
	size_t n;
	size_t nnames;			   /* distinct names among them */
	struct kp_gated_release *releases; /* sorted by name */
	size_t nreleases;
	struct kp_arena arena;
};

/*
 * Collects the gated modules of every release under @root (NULL: "/") into @g (overwritten;
 * kp_gated_release() after success). A release that cannot be read fully is noted in
 * @g->releases with why, and the others are still collected. 0, or -1 with @err (out of
 * memory, the releases cannot be listed).
 */
int kp_gated_collect(struct kp_gated *g, const char *root, struct kp_err *err);
void kp_gated_release(struct kp_gated *g);

/*
 * The soft dependencies of each module of @g (its softdep fields) as modprobe finds them under
 * @root (NULL: "/"), from the release's modules.softdep (depmod's, of the modules' own
 * softdep= modinfo) and the modprobe.d softdep lines. libkmod never runs the install line of a
 * module that has some (kmod_module_probe_insert_module(): its probe list marks it ignorecmd),
 * so such a module's loads are not judged, unless an entry naming none matches it first:
 * kopolicy's own override (kp_gated_softdep_key()), whose module's install line then loads
 * them. softdep, softdep_pre and softdep_post: the entry modprobe would use without kopolicy's
 * overrides; softdep_else_pre and softdep_else_post: the same of the releases where no module of
 * that name is gated; softdep_ignorecmd: libkmod's own answer with everything as it is now
 * (kmod_module_get_softdeps()). Every field left as it is before the call is reset. 0, or -1
 * with @err (libkmod missing, out of memory); a release libkmod cannot read is left as it is.
 */
int kp_gated_softdeps(struct kp_gated *g, const char *root, struct kp_err *err);

/*
 * The modprobe.d name kopolicy's softdep override of module @name is written under into @buf
 * (@len bytes): its first character in brackets ("[n]vidia"), the same module to libkmod's
 * fnmatch() and a name no one else writes. false when it does not fit or @name is empty.
 */
bool kp_gated_softdep_key(const char *name, char *buf, size_t len);

/* The number of releases whose reading failed in part or fully (their error is set). */
size_t kp_gated_nfailed(const struct kp_gated *g);

#endif
