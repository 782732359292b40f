// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The soft dependencies of the gated modules (gated-modules.h, kp_gated_softdeps()): asked of
 * libkmod with the root's modprobe.d directories and release directory, as modprobe would.
 * libkmod 30 to 34's probe list (__kmod_module_fill_softdep()) sets ignorecmd on a module
 * whose first matching softdep entry (kmod_module_get_softdeps(): config files in order of
 * their names, modules.softdep among them) names a module it finds, pre or post, and then
 * never runs its install line: such a module (nvidia under the "softdep nvidia pre: vfio-pci"
 * GPU passthrough setups write) is inserted without the hook, unless kopolicy's own override (an
 * entry naming none, "softdep [n]vidia pre:", in a file sorting first) matches it first. The entry
 * modprobe would use without that override is read from the configuration's softdep entries
 * (kmod_config_get_softdeps()), in the same order, the override skipped, so that the
 * module's install line can load those modules itself; in every release, those of the releases
 * where no module of its name is gated too (modprobe.d, so the override and the line, is shared
 * by all of them: an in-tree module of that name keeps its own). An out-of-tree module depmod
 * has not indexed yet (DKMS runs its POST_INSTALL first) that no entry matches has its own
 * softdep= read from its file: depmod is about to write it into modules.softdep, and libkmod
 * would then never run the line written now. Names are words between blanks:
 * nvidia.ko's own softdep= "pre: ecdh_generic,ecdsa_generic" is one name, which libkmod
 * finds no module for, so its install line runs (checked with kmod 30's modprobe).
 */
#include "config.h"

#include <errno.h>
#include <fnmatch.h>
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
#include "read/module.h"

/* One softdep entry of libkmod's configuration, in its order (first match wins). */
struct entry {
	char *key;   /* the module name or fnmatch() pattern */
	char *value; /* "pre: a b post: c", as kmod_config_iter_get_value() gives it */
};

struct entries {
	struct entry *v;
	size_t n;
};

static void entries_free(struct entries *e)
{
	for (size_t i = 0; i < e->n; i++) {
		free(e->v[i].key);
		free(e->v[i].value);
	}
	free(e->v);
	e->v = NULL;
	e->n = 0;
}

/* The softdep entries of @ctx, in libkmod's order, into @e. 0, or -1 out of memory. */
static int entries_read(struct kmod_ctx *ctx, struct entries *e)
{
	struct kmod_config_iter *it = kmod_config_get_softdeps(ctx);
	int r = 0;

	while (it && r == 0 && kmod_config_iter_next(it)) {
		const char *k = kmod_config_iter_get_key(it);
		const char *v = kmod_config_iter_get_value(it);
		struct entry *nv;

		if (!k)
			continue;
		nv = realloc(e->v, (e->n + 1) * sizeof(*nv));
		if (!nv) {
			r = -1;
			break;
		}
		e->v = nv;
		nv[e->n].key = strdup(k);
		nv[e->n].value = strdup(v ? v : "");
		if (!nv[e->n].key || !nv[e->n].value) {
			free(nv[e->n].key);
			free(nv[e->n].value);
			r = -1;
			break;
		}
		e->n++;
	}
	if (it)
		kmod_config_iter_free_iter(it);
	return r;
}

bool kp_gated_softdep_key(const char *name, char *buf, size_t len)
{
	int n;

	if (!name[0])
		return false;
	n = snprintf(buf, len, "[%c]%s", name[0], name + 1);
	return n > 0 && (size_t)n < len;
}

/* @key is kopolicy's own override of @name (kp_gated_softdep_key()). */
static bool own_key(const char *key, const char *name)
{
	return key[0] == '[' && name[0] && key[1] == name[0] && key[2] == ']' &&
	       !strcmp(key + 3, name + 1);
}

/* @word appended to the names *@out (malloc'ed, *@len bytes, " " between). 0, or -1. */
static int add_name(char **out, size_t *len, const char *word, size_t n)
{
	char *p = realloc(*out, *len + n + 2);

	if (!p)
		return -1;
	*out = p;
	if (*len)
		p[(*len)++] = ' ';
	memcpy(p + *len, word, n);
	*len += n;
	p[*len] = '\0';
	return 0;
}

/* The blanks between names: isspace(), as libkmod's kmod_config_add_softdep() splits them. */
#define SPACE " \t\n\v\f\r"

/*
 * @value (kmod_config_iter_get_value(): "pre: a b post: c"; libkmod 30 to 34 write no blank
 * before "post:", "pre: a bpost: c", and a module name holds no ':') into its pre and post
 * names, each " " between (malloc'ed, NULL none). 0, or -1 out of memory.
 */
static int parse_value(const char *value, char **pre, size_t *prelen, char **post, size_t *postlen)
{
	enum { NONE, PRE, POST } mode = NONE;
	const char *p = value;

	while (*p) {
		size_t n;

		while (*p && strchr(SPACE, *p))
			p++;
		n = strcspn(p, SPACE);
		if (!n)
			break;
		if (n == 4 && !strncmp(p, "pre:", 4)) {
			mode = PRE;
		} else if (n == 5 && !strncmp(p, "post:", 5)) {
			mode = POST;
		} else {
			size_t w = n > 5 && !strncmp(p + n - 5, "post:", 5) ? n - 5 : n;

			if (mode == PRE && add_name(pre, prelen, p, w) < 0)
				return -1;
			if (mode == POST && add_name(post, postlen, p, w) < 0)
				return -1;
			if (w != n)
				mode = POST;
		}
		p += n;
	}
	return 0;
}

/*
 * The names of the first entry of @e matching module @name that is not kopolicy's own
 * (parse_value(): malloc'ed, NULL none), *@matched set when there is one. 0, or -1 out of
 * memory.
 */
static int entry_names(const struct entries *e, const char *name, char **pre, size_t *prelen,
		       char **post, size_t *postlen, bool *matched)
{
	for (size_t i = 0; i < e->n; i++) {
		if (own_key(e->v[i].key, name) || fnmatch(e->v[i].key, name, 0) != 0)
			continue;
		*matched = true;
		return parse_value(e->v[i].value, pre, prelen, post, postlen);
	}
	return 0;
}

/*
 * The value of the first softdep= of module file @relpath in @moddir under @root (malloc'ed),
 * NULL: none, or it cannot be read (the hook judges such a file; here it has no softdep).
 */
static char *own_softdep(const char *root, const char *moddir, const char *relpath)
{
	const struct kp_open_opts opts = { .full_modinfo = true };
	struct kp_module *mod = NULL;
	struct kp_err err = { 0 };
	char *path, *real, *v = NULL;
	const char *s;

	if (asprintf(&path, "%s/%s", moddir, relpath) < 0)
		return NULL;
	real = kp_root_resolve_path(root, path);
	free(path);
	if (!real)
		return NULL;
	if (kp_module_open(real, &opts, &mod, &err) == 0 && mod &&
	    (s = kp_module_modinfo(mod, "softdep")))
		v = strdup(s);
	kp_module_free(mod);
	free(real);
	return v;
}

/*
 * @m's fields from the first entry of @e matching it that is not kopolicy's own; with none, for
 * a module depmod has not indexed yet, from its own softdep= (in @moddir under @root): the
 * modules.softdep entry depmod is about to write, then the first that matches it. 0 or -1.
 */
static int entry_softdeps(struct kp_gated *g, struct kp_gated_module *m, const struct entries *e,
			  const char *root, const char *moddir)
{
	char *pre = NULL, *post = NULL, *all = NULL;
	size_t prelen = 0, postlen = 0, alen = 0;
	bool matched = false;
	int r;

	r = entry_names(e, m->name, &pre, &prelen, &post, &postlen, &matched);
	if (r == 0 && !matched && m->unindexed) {
		char *v = own_softdep(root, moddir, m->relpath);

		r = v ? parse_value(v, &pre, &prelen, &post, &postlen) : 0;
		free(v);
	}
	if (r == 0 && (prelen || postlen)) {
		if ((prelen && add_name(&all, &alen, pre, prelen) < 0) ||
		    (postlen && add_name(&all, &alen, post, postlen) < 0))
			r = -1;
		else if (!(m->softdep = kp_arena_strdup(&g->arena, all)) ||
			 !(m->softdep_pre = kp_arena_strdup(&g->arena, pre ? pre : "")) ||
			 !(m->softdep_post = kp_arena_strdup(&g->arena, post ? post : "")))
			r = -1;
	}
	free(pre);
	free(post);
	free(all);
	return r;
}

/* The @n bytes at @w are one of the words of @list (NULL: none; " " between). */
static bool has_name(const char *list, const char *w, size_t n)
{
	for (const char *p = list; p && *p;) {
		size_t k = strcspn(p, " ");

		if (k == n && !strncmp(p, w, n))
			return true;
		p += k;
		p += *p == ' ';
	}
	return false;
}

/*
 * *@field (arena, NULL none) with those of the names at @add (@n bytes, " " between) it does not
 * hold yet after it (another release's modprobe.d entry is the same one). 0, or -1.
 */
static int else_add(struct kp_gated *g, const char **field, const char *add, size_t n)
{
	size_t old = *field ? strlen(*field) : 0, used;
	char *s = kp_arena_alloc(&g->arena, old + n + 2);

	if (!s)
		return -1;
	memcpy(s, old ? *field : "", old);
	used = old;
	for (size_t i = 0; i < n;) {
		size_t k = strcspn(add + i, " ");

		if (k > n - i)
			k = n - i;
		s[used] = '\0';
		if (k && !has_name(s, add + i, k)) {
			if (used)
				s[used++] = ' ';
			memcpy(s + used, add + i, k);
			used += k;
		}
		i += k + 1;
	}
	s[used] = '\0';
	*field = used ? s : NULL;
	return 0;
}

/*
 * The soft dependencies in release @rel (its entries @e) of each name of @g none of whose
 * modules is of @rel, added to the softdep_else fields of its modules. 0, or -1.
 */
static int else_softdeps(struct kp_gated *g, const struct entries *e, const char *rel)
{
	for (size_t from = 0, to; from < g->n; from = to) {
		char *pre = NULL, *post = NULL;
		size_t prelen = 0, postlen = 0;
		bool here = false, matched = false;
		int r;

		for (to = from; to < g->n && !strcmp(g->mods[to].name, g->mods[from].name); to++)
			here |= !strcmp(g->mods[to].release, rel);
		if (here)
			continue;
		r = entry_names(e, g->mods[from].name, &pre, &prelen, &post, &postlen, &matched);
		if (r == 0 && prelen)
			r = else_add(g, &g->mods[from].softdep_else_pre, pre, prelen);
		if (r == 0 && postlen)
			r = else_add(g, &g->mods[from].softdep_else_post, post, postlen);
		for (size_t i = from + 1; i < to && r == 0; i++) {
			g->mods[i].softdep_else_pre = g->mods[from].softdep_else_pre;
			g->mods[i].softdep_else_post = g->mods[from].softdep_else_post;
		}
		free(pre);
		free(post);
		if (r < 0)
			return -1;
	}
	return 0;
}

/*
 * The soft dependencies of each module of @g in release @rel (its directory @moddir under
 * @root), asked of @ctx. 0 or -1.
 */
static int release_softdeps(struct kp_gated *g, struct kmod_ctx *ctx, const char *root,
			    const char *moddir, const char *rel, struct kp_err *err)
{
	struct entries e = { 0 };

	if (entries_read(ctx, &e) < 0 || else_softdeps(g, &e, rel) < 0) {
		entries_free(&e);
		return kp_err_set(err, "out of memory");
	}
	for (size_t i = 0; i < g->n; i++) {
		struct kp_gated_module *m = &g->mods[i];
		struct kmod_list *pre = NULL, *post = NULL;
		struct kmod_module *mod = NULL;

		if (strcmp(m->release, rel))
			continue;
		if (entry_softdeps(g, m, &e, root, moddir) < 0) {
			entries_free(&e);
			return kp_err_set(err, "out of memory");
		}
		/* libkmod's own answer: __kmod_module_fill_softdep() sets ignorecmd on it */
		if (kmod_module_new_from_name(ctx, m->name, &mod) < 0 || !mod)
			continue;
		if (kmod_module_get_softdeps(mod, &pre, &post) == 0)
			m->softdep_ignorecmd = pre || post;
		kmod_module_unref_list(pre);
		kmod_module_unref_list(post);
		kmod_module_unref(mod);
	}
	entries_free(&e);
	return 0;
}

int kp_gated_softdeps(struct kp_gated *g, const char *root, struct kp_err *err)
{
	const char *paths[KP_KMOD_CONF_DIRS + 1] = { NULL };
	char *owned[KP_KMOD_CONF_DIRS] = { NULL };
	size_t n = 0;
	int rc = 0;

	for (size_t i = 0; i < g->n; i++) {
		g->mods[i].softdep = g->mods[i].softdep_pre = g->mods[i].softdep_post = NULL;
		g->mods[i].softdep_else_pre = g->mods[i].softdep_else_post = NULL;
		g->mods[i].softdep_ignorecmd = false;
	}
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
		if (ctx)
			rc = release_softdeps(g, ctx, root, moddir, r->release, err);
		if (ctx)
			kmod_unref(ctx);
		free(moddir);
	}
	for (size_t i = 0; i < KP_KMOD_CONF_DIRS; i++)
		free(owned[i]);
	return rc;
}
