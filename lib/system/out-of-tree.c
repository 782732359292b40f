// SPDX-License-Identifier: LGPL-2.1-or-later
/* The out-of-tree modules of a release: one rule, two listings (out-of-tree.h). */
#include <dirent.h>
#include <errno.h>
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
	const char *root; /* the directories under it listed inside it */
	struct kp_arena *arena;
	const char **names;
	const char **rels;
	size_t n, cap, files;
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

static int walk(struct oot *o, const char *dir, const char *rel, unsigned depth, struct kp_err *err)
{
	struct dirent *de;
	DIR *d;
	int r = 0;

	if (depth > WALK_MAX_DEPTH)
		return 0;
	d = kp_opendir_root(o->root, dir);
	if (!d)
		return 0;
	while (r == 0 && (de = readdir(d))) {
		char *full = NULL, *sub = NULL;
		struct stat st;

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
		if (kp_in_lstat(full, &st) == 0) {
			if (S_ISDIR(st.st_mode))
				r = walk(o, full, sub, depth + 1, err);
			else if ((S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) &&
				 kp_is_module_filename(de->d_name)) {
				if (++o->files > WALK_MAX_FILES)
					r = kp_err_set(err, "%s: more than %d module files", dir,
						       WALK_MAX_FILES);
				else
					r = oot_add(o, sub, err);
			}
		}
		free(full);
		free(sub);
	}
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
	struct oot o = { .root = root, .arena = arena };
	const char **pairs;

	*names = *relpaths = NULL;
	*n = 0;
	if (walk(&o, moddir, "", 0, err) < 0)
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

int kp_out_of_tree_depmod(const char *root, const char *release, struct kp_module_set *set,
			  struct kp_err *err)
{
	struct kp_depmod_shadow *sh = NULL;
	struct kp_depmod_cfg cfg;
	struct kp_tree t;
	size_t nsh = 0, kept = 0, ml;
	int r = -1;

	memset(&t, 0, sizeof(t));
	if (kp_tree_open(&t, root, release, err) < 0)
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
		if (!strncmp(p, t.moddir, ml) && p[ml] == '/' &&
		    kp_relpath_is_in_tree(p + ml + 1)) {
			free(set->entries[i].path);
			free(set->entries[i].file);
			continue;
		}
		set->entries[kept++] = set->entries[i];
	}
	set->n = kept;
	r = 0;
out_cfg:
	kp_depmod_shadows_free(sh, nsh);
	kp_depmod_cfg_release(&cfg);
out_tree:
	kp_tree_release(&t);
	return r;
}
