// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The built-in modules of a kernel tree under a root. What depmod reads is read
 * the same way here: modules.builtin (one "kernel/<path>.ko" per line, written by
 * modules_install). libkmod reads the modprobe.d configuration; its public API offers
 * no way to list built-in modules, and its lookups need the .bin indexes that depmod
 * writes at install time (missing in unpacked packages), so the text file is parsed
 * here. modules.builtin.modinfo is read only where its records are used: the aliases
 * of built-in drivers when there are no .bin indexes (modprobe-chain-text.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel-tree.h"
#include "kernel-tree-internal.h"
#include "file/rootfs.h"
#include "util/module-name.h"

#define BUILTIN_MAX_SIZE ((size_t)64 << 20)

/*
 * The file @name of the tree's modules directory into @b, its path into *@path (the caller
 * frees it): 1, 0 when the file does not exist (nothing to free), -1 on error.
 */
static int read_moddir_file(const struct kp_tree *t, const char *name, struct kp_bytes *b,
			    char **path, struct kp_err *err)
{
	char *real;
	int r;

	if (asprintf(path, "%s/%s", t->moddir, name) < 0)
		return kp_err_set(err, "out of memory");
	/* a symlink is followed inside the root, not on the host; named as the tree names it */
	real = kp_root_resolve_path(t->root, *path);
	if (!real) {
		r = errno == ELOOP ? kp_err_set(err, "%s: cannot resolve inside the root: %s",
						*path, strerror(ELOOP))
				   : kp_err_set(err, "out of memory");
		free(*path);
		*path = NULL;
		return r;
	}
	r = kp_read_file_in(&t->rootdir, real, BUILTIN_MAX_SIZE, b, err);
	if (r == 0) {
		free(real);
		return 1;
	}
	if (strcmp(real, *path) && kp_err_errnum(err) != ENOENT) {
		/* the error names the file read: say which one the tree names */
		kp_err_prefix(err, *path);
	}
	free(real);
	free(*path);
	*path = NULL;
	return kp_err_errnum(err) == ENOENT ? 0 : -1;
}

int kp_tree_read_builtin(struct kp_tree *t, struct kp_err *err)
{
	struct kp_bytes b;
	char *path, name[256];
	const char *pos, *end;
	size_t cap = 0, lineno = 0;
	int r;

	r = read_moddir_file(t, "modules.builtin", &b, &path, err);
	if (r <= 0)
		return r;
	t->have_builtin_list = true;
	pos = (const char *)b.data;
	end = pos + b.len;
	r = 0;
	while (pos < end && r == 0) {
		const char *nl = memchr(pos, '\n', (size_t)(end - pos));
		size_t l = nl ? (size_t)(nl - pos) : (size_t)(end - pos);

		lineno++;
		if (l) {
			char *p;

			if (l < 4 || !memmem(pos, l, ".ko", 3) || memchr(pos, ' ', l) ||
			    memchr(pos, '\0', l)) {
				r = kp_err_set(err, "%s:%zu: expected a module path ending in .ko",
					       path, lineno);
				break;
			}
			if (kp_grow(&t->builtin_paths, &cap, t->nbuiltin + 1,
				    sizeof(*t->builtin_paths)) < 0 ||
			    !(p = kp_arena_strndup(&t->arena, pos, l))) {
				r = kp_err_set(err, "out of memory");
				break;
			}
			t->builtin_paths[t->nbuiltin++] = p;
		}
		pos = nl ? nl + 1 : end;
	}
	kp_bytes_release(&b);
	free(path);
	if (r < 0 || !t->nbuiltin)
		return r;
	/* Sort the paths by module name so both arrays share one order. */
	t->builtin = kp_calloc(t->nbuiltin, sizeof(*t->builtin));
	if (!t->builtin)
		return kp_err_set(err, "out of memory");
	for (size_t i = 0; i < t->nbuiltin; i++) {
		size_t nl;

		kp_modname_from_path(name, sizeof(name), t->builtin_paths[i], KP_MODNAME_KO);
		nl = strlen(name);
		/* name, NUL, path: the path rides along through the sort */
		t->builtin[i] = kp_arena_alloc(&t->arena, nl + 1 + strlen(t->builtin_paths[i]) + 1);
		if (!t->builtin[i])
			return kp_err_set(err, "out of memory");
		memcpy(t->builtin[i], name, nl + 1);
		strcpy(t->builtin[i] + nl + 1, t->builtin_paths[i]);
	}
	kp_sort_names(t->builtin, t->nbuiltin);
	for (size_t i = 0; i < t->nbuiltin; i++)
		t->builtin_paths[i] = t->builtin[i] + strlen(t->builtin[i]) + 1;
	return 0;
}

bool kp_tree_is_builtin(const struct kp_tree *t, const char *name)
{
	char key[256];

	kp_modname_from_path(key, sizeof(key), name, KP_MODNAME_KO);
	return kp_sorted_contains((const char *const *)t->builtin, t->nbuiltin, key);
}
