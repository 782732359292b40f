/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * depmod's view of a module tree: which file depmod puts in modules.dep under each module
 * name when several files carry it (an in-tree driver and its DKMS rebuild in updates/dkms/,
 * a vendor copy in extra/). Modelled on kmod's tools/depmod.c: the depmod.d configuration
 * (search, override, external, exclude) and depmod_module_is_higher_priority().
 */
#ifndef KP_DEPMOD_CONFIG_H
#define KP_DEPMOD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "graph/module-set.h"
#include "util/util.h"

enum kp_depmod_search_type {
	KP_DEPMOD_SEARCH_PATH,	   /* a directory below the module directory */
	KP_DEPMOD_SEARCH_BUILTIN,  /* "built-in": everything not matched otherwise */
	KP_DEPMOD_SEARCH_EXTERNAL, /* "external": the external directories */
};

struct kp_depmod_search {
	enum kp_depmod_search_type type;
	const char *path; /* KP_DEPMOD_SEARCH_PATH */
};

struct kp_depmod_cfg {
	/* In kmod's list order: each new search line is put at the head. */
	struct kp_depmod_search *searches;
	size_t nsearches;
	const char **overrides; /* "subdir/filename-without-extension", head first */
	size_t noverrides;
	const char **externals; /* absolute directories, head first */
	size_t nexternals;
	const char **excludes; /* directory names never entered */
	size_t nexcludes;
	const char **files; /* the configuration files read, in reading order */
	size_t nfiles;
	bool default_search; /* no search line: kmod's "updates" default */
	struct kp_arena arena;
};

/*
 * Reads the depmod.d files of the system at @root (NULL or "/" for this one):
 * etc/depmod.d, run/depmod.d, usr/local/lib/depmod.d, usr/lib/depmod.d, lib/depmod.d,
 * *.conf files sorted by name, a name seen in an earlier directory hiding later ones;
 * override and external lines apply when their version pattern matches @kver.
 */
int kp_depmod_cfg_load(struct kp_depmod_cfg *cfg, const char *root, const char *kver,
		       struct kp_err *err);
void kp_depmod_cfg_release(struct kp_depmod_cfg *cfg);

/* True if depmod never enters a directory of this name (build, source, exclude lines). */
bool kp_depmod_excluded(const struct kp_depmod_cfg *cfg, const char *dirname);

/*
 * depmod_module_is_higher_priority(): true if the module already chosen at @oldpath stays
 * when depmod meets @newpath with the same name (@moddir: lib/modules/<release>).
 * @tie is set when neither path is preferred by the configuration (walk order decides).
 */
bool kp_depmod_keeps(const struct kp_depmod_cfg *cfg, const char *moddir, const char *oldpath,
		     const char *newpath, bool *tie);

/* A file depmod does not use: another one carries its module name, or its directory is skipped. */
struct kp_depmod_shadow {
	char *path;
	char name[64];
	const char *winner; /* the file depmod uses (owned by the set), NULL if excluded */
	bool tie;	    /* the configuration prefers neither: depmod's walk order decided */
};

/*
 * Keeps in @set (module files collected below @moddir, in path order) the file depmod would
 * choose for each module name and moves the others to *@out (caller frees with
 * kp_depmod_shadows_free()). Entries are not read yet.
 */
int kp_depmod_select(const struct kp_depmod_cfg *cfg, const char *moddir, struct kp_module_set *set,
		     struct kp_depmod_shadow **out, size_t *nout, struct kp_err *err);
void kp_depmod_shadows_free(struct kp_depmod_shadow *s, size_t n);

#endif
