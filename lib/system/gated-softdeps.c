// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The soft dependencies of the gated modules (gated-modules.h, kp_gated_softdeps()): asked of
 * libkmod with the root's modprobe.d directories and release directory, as modprobe would.
 * libkmod 30's probe list (__kmod_module_fill_softdep()) sets ignorecmd on a module whose
 * first matching softdep entry names a module, pre or post, and then never runs its install
 * line: such a module (NVIDIA's nvidia.ko declares "pre: ecdh_generic,ecdsa_generic") is
 * inserted without the hook, and its rules must say so.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dl/lazy-lib.h"
#include "file/inputs.h"
#include "file/rootfs.h"
#include "gated-modules.h"
#include "kernel-tree.h"
#include "modprobe-kmod.h"
#include "modprobe-snapshot.h"

/* The names of @list appended to *@out (malloc'ed, *@len bytes, " " between). 0, or -1. */
static int append_names(char **out, size_t *len, const struct kmod_list *list)
{
	const struct kmod_list *l;

	kmod_list_foreach(l, list)
	{
		struct kmod_module *m = kmod_module_get_module(l);
		const char *name = m ? kmod_module_get_name(m) : NULL;
		size_t n = name ? strlen(name) : 0;
		char *p;

		if (!name) {
			kmod_module_unref(m);
			continue;
		}
		p = realloc(*out, *len + n + 2);
		if (!p) {
			kmod_module_unref(m);
			return -1;
		}
		*out = p;
		if (*len)
			(*out)[(*len)++] = ' ';
		memcpy(*out + *len, name, n + 1);
		*len += n;
		kmod_module_unref(m);
	}
	return 0;
}

/* The soft dependencies of each module of @g in release @rel, asked of @ctx. 0 or -1. */
static int release_softdeps(struct kp_gated *g, struct kmod_ctx *ctx, const char *rel,
			    struct kp_err *err)
{
	for (size_t i = 0; i < g->n; i++) {
		struct kp_gated_module *m = &g->mods[i];
		struct kmod_list *pre = NULL, *post = NULL;
		struct kmod_module *mod = NULL;
		char *names = NULL;
		size_t len = 0;
		int r = 0;

		if (strcmp(m->release, rel) || kmod_module_new_from_name(ctx, m->name, &mod) < 0 ||
		    !mod)
			continue;
		if (kmod_module_get_softdeps(mod, &pre, &post) == 0 && (pre || post)) {
			r = append_names(&names, &len, pre);
			if (r == 0)
				r = append_names(&names, &len, post);
			if (r == 0)
				m->softdep = kp_arena_strdup(&g->arena, names ? names : "");
			if (r < 0 || !m->softdep)
				r = kp_err_set(err, "out of memory");
		}
		kmod_module_unref_list(pre);
		kmod_module_unref_list(post);
		kmod_module_unref(mod);
		free(names);
		if (r < 0)
			return -1;
	}
	return 0;
}

int kp_gated_softdeps(struct kp_gated *g, const char *root, struct kp_err *err)
{
	const char *paths[KP_KMOD_CONF_DIRS + 1] = { NULL };
	char *owned[KP_KMOD_CONF_DIRS] = { NULL };
	size_t n = 0;
	int rc = 0;

	if (!g->n)
		return 0;
	if (kp_lazy_require(kp_lazy_libkmod(), err) < 0)
		return -1;
	for (size_t i = 0; i < KP_KMOD_CONF_DIRS && rc == 0; i++) {
		/* inside the root: ROOT/etc -> /etc is the root's etc, not the host's */
		owned[i] = kp_root_resolve_dir(root, kp_kmod_conf_dirs[i]);
		if (!owned[i] && errno != ELOOP)
			rc = kp_err_set(err, "out of memory");
		else if (owned[i] && kp_is_dir(owned[i]))
			paths[n++] = owned[i];
	}
	for (size_t i = 0; i < g->nreleases && rc == 0; i++) {
		const struct kp_gated_release *r = &g->releases[i];
		struct kp_err e = { 0 };
		char *moddir, *said = NULL;
		struct kmod_ctx *ctx;

		if (r->source == KP_GATED_FAILED || r->source == KP_GATED_EMPTY)
			continue;
		moddir = kp_tree_release_dir(root, r->release, &e);
		if (!moddir)
			continue;
		/* its log off: what it says of the configuration, the hook and modprobe say */
		kp_in_note_kmod(moddir, paths);
		ctx = kp_kmod_new_said(moddir, paths, false, &said);
		free(said);
		free(moddir);
		if (!ctx)
			continue;
		rc = release_softdeps(g, ctx, r->release, err);
		kmod_unref(ctx);
	}
	for (size_t i = 0; i < KP_KMOD_CONF_DIRS; i++)
		free(owned[i]);
	return rc;
}
