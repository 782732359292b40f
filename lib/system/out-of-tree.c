// SPDX-License-Identifier: LGPL-2.1-or-later
/* The out-of-tree modules of a release: one rule, two listings (out-of-tree.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "depmod-config.h"
#include "file/bytes.h"
#include "file/inputs.h"
#include "file/rootfs.h"
#include "kernel-tree.h"
#include "out-of-tree.h"
#include "util/module-name.h"

#define WALK_MAX_DEPTH 16
#define WALK_MAX_FILES 100000

bool kp_relpath_is_in_tree(const char *relpath)
{
	return !strncmp(relpath, "kernel/", 7);
}

struct oot {
	const struct kp_root_dir *root; /* the directories under it listed inside it */
	struct kp_arena *arena;
	const char **names;
	const char **rels;
	size_t n, cap, files;
	struct {
		dev_t dev;
		ino_t ino;
	} stack[WALK_MAX_DEPTH + 1]; /* the directories being walked: a link back is a loop */
	unsigned depth;
};

static int oot_add(struct oot *o, const char *rel, struct kp_err *err)
{
	char name[256];
	const char *r, *lm;

	/* an absolute entry of an old modules.dep: relative to its release directory */
	if (rel[0] == '/' && (lm = strstr(rel, "/lib/modules/")) && (r = strchr(lm + 13, '/')))
		rel = r + 1;
	if (kp_relpath_is_in_tree(rel))
		return 0;
	kp_modname_from_path(name, sizeof(name), rel, KP_MODNAME_KO);
	if (!*name)
		return 0;
	if (o->n == o->cap) {
		size_t ncap = o->cap ? o->cap * 2 : 16;
		const char **nn = kp_arena_alloc(o->arena, ncap * sizeof(*nn));
		const char **nr = kp_arena_alloc(o->arena, ncap * sizeof(*nr));

		if (!nn || !nr)
			return kp_err_set(err, "out of memory");
		if (o->n) {
			memcpy(nn, o->names, o->n * sizeof(*nn));
			memcpy(nr, o->rels, o->n * sizeof(*nr));
		}
		o->names = nn;
		o->rels = nr;
		o->cap = ncap;
	}
	o->names[o->n] = kp_arena_strdup(o->arena, name);
	r = kp_arena_strdup(o->arena, rel);
	o->rels[o->n] = r;
	if (!o->names[o->n] || !r)
		return kp_err_set(err, "out of memory");
	o->n++;
	return 0;
}

/*
 * The entry @name of the directory @dfd (listed inside the root): 1 when it is a directory to
 * walk, a real one or a link to one inside the root (kp_stat_in()), as depmod's walk enters
 * it (tools/depmod.c depmod_modules_search_dir(), kmod 9 to 34); 2 when it is a module file
 * to list (a regular file, or a link, whatever it leads to, named as a module); else 0. Its
 * type comes from the directory's descriptor, never from a path resolved again on the host.
 */
static int entry_kind(const struct oot *o, int dfd, const char *name, const char *full)
{
	struct stat st, rec;

	(void)kp_in_lstat(full, &rec); /* recorded as before: the entry's state */
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (S_ISDIR(st.st_mode))
		return 1;
	if (S_ISLNK(st.st_mode)) {
		struct stat t;

		if (kp_stat_in(o->root, full, &t) == 0 && S_ISDIR(t.st_mode))
			return 1;
		return kp_is_module_filename(name) ? 2 : 0;
	}
	return S_ISREG(st.st_mode) && kp_is_module_filename(name) ? 2 : 0;
}

static int walk(struct oot *o, const char *dir, const char *rel, struct kp_err *err)
{
	struct dirent *de;
	struct stat ds;
	DIR *d;
	int r = 0;

	if (o->depth > WALK_MAX_DEPTH)
		return 0;
	d = kp_opendir_in(o->root, dir);
	if (!d)
		return 0;
	if (fstat(dirfd(d), &ds) < 0) {
		closedir(d);
		return 0;
	}
	/* a linked directory that leads back to one being walked: not entered again */
	for (unsigned i = 0; i < o->depth; i++)
		if (o->stack[i].dev == ds.st_dev && o->stack[i].ino == ds.st_ino) {
			closedir(d);
			return 0;
		}
	o->stack[o->depth].dev = ds.st_dev;
	o->stack[o->depth].ino = ds.st_ino;
	o->depth++;
	while (r == 0 && (de = readdir(d))) {
		char *full = NULL, *sub = NULL;

		if (de->d_name[0] == '.')
			continue;
		if (!*rel && (!strcmp(de->d_name, "kernel") || !strcmp(de->d_name, "build") ||
			      !strcmp(de->d_name, "source")))
			continue;
		if (asprintf(&full, "%s/%s", dir, de->d_name) < 0) {
			r = kp_err_set(err, "out of memory");
			break;
		}
		if (asprintf(&sub, "%s%s%s", rel, *rel ? "/" : "", de->d_name) < 0) {
			free(full);
			r = kp_err_set(err, "out of memory");
			break;
		}
		switch (entry_kind(o, dirfd(d), de->d_name, full)) {
		case 1:
			r = walk(o, full, sub, err);
			break;
		case 2:
			if (++o->files > WALK_MAX_FILES)
				r = kp_err_set(err, "%s: more than %d module files", dir,
					       WALK_MAX_FILES);
			else
				r = oot_add(o, sub, err);
			break;
		}
		free(full);
		free(sub);
	}
	o->depth--;
	closedir(d);
	return r;
}

static int cmp_pair(const void *a, const void *b)
{
	const char *const *x = a, *const *y = b;
	int d = strcmp(x[0], y[0]);

	return d ? d : strcmp(x[1], y[1]);
}

int kp_out_of_tree_present(const char *root, const char *moddir, struct kp_arena *arena,
			   const char ***names, const char ***relpaths, size_t *n,
			   struct kp_err *err)
{
	struct kp_root_dir rd;
	struct oot o = { .root = &rd, .arena = arena };
	const char **pairs;
	int r;

	*names = *relpaths = NULL;
	*n = 0;
	/* every directory and link of the walk under the directory @root names now */
	kp_root_dir_pin(&rd, root);
	if (kp_root_is_host(root))
		o.root = NULL;
	r = walk(&o, moddir, "", err);
	kp_root_dir_unpin(&rd);
	if (r < 0)
		return -1;
	if (!o.n)
		return 0;
	pairs = malloc(o.n * 2 * sizeof(*pairs));
	if (!pairs)
		return kp_err_set(err, "out of memory");
	for (size_t i = 0; i < o.n; i++) {
		pairs[2 * i] = o.names[i];
		pairs[2 * i + 1] = o.rels[i];
	}
	qsort(pairs, o.n, 2 * sizeof(*pairs), cmp_pair);
	for (size_t i = 0; i < o.n; i++) {
		o.names[i] = pairs[2 * i];
		o.rels[i] = pairs[2 * i + 1];
	}
	free(pairs);
	*names = o.names;
	*relpaths = o.rels;
	*n = o.n;
	return 0;
}

/* @p is a file of the release directory @moddir (@ml bytes) under kernel/. */
static bool under_kernel_dir(const char *p, const char *moddir, size_t ml)
{
	return !strncmp(p, moddir, ml) && p[ml] == '/' && kp_relpath_is_in_tree(p + ml + 1);
}

int kp_out_of_tree_depmod(const char *root, const char *release, struct kp_module_set *set,
			  struct kp_err *err)
{
	struct kp_depmod_shadow *sh = NULL;
	struct kp_depmod_cfg cfg;
	struct kp_tree t;
	size_t nsh = 0, kept = 0, ml;
	int r = -1;

	memset(&t, 0, sizeof(t));
	if (kp_tree_open(&t, root, release, NULL, err) < 0)
		return -1;
	if (kp_depmod_cfg_load(&cfg, root, release, err) < 0)
		goto out_tree;
	/* the modules as the system at @root sees them: its symlinks followed inside it */
	if (kp_set_set_root(set, root) < 0 || kp_set_add_path(set, t.moddir) < 0 ||
	    kp_depmod_select(&cfg, t.moddir, set, &sh, &nsh, err) < 0) {
		kp_err_set(err, "out of memory");
		goto out_cfg;
	}
	ml = strlen(t.moddir);
	for (size_t i = 0; i < set->n; i++) {
		const char *p = set->entries[i].path;

		/* the files of the release directory under kernel/ */
		if (under_kernel_dir(p, t.moddir, ml)) {
			free(set->entries[i].path);
			free(set->entries[i].file);
			continue;
		}
		set->entries[kept++] = set->entries[i];
	}
	set->n = kept;
	/* the walk's warnings likewise: those of the files outside kernel/ */
	kept = 0;
	for (size_t i = 0; i < set->nwarnings; i++) {
		const char *p = set->warnings[i].path;

		if (under_kernel_dir(p, t.moddir, ml)) {
			free(set->warnings[i].path);
			free(set->warnings[i].what);
			continue;
		}
		set->warnings[kept++] = set->warnings[i];
	}
	set->nwarnings = kept;
	r = 0;
out_cfg:
	kp_depmod_shadows_free(sh, nsh);
	kp_depmod_cfg_release(&cfg);
out_tree:
	kp_tree_release(&t);
	return r;
}
