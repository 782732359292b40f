// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The modules the hook's install rules gate, over every installed release (gated-modules.h),
 * each out-of-tree one marked when depmod has not indexed it yet.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "file/bytes.h"
#include "file/inputs.h"
#include "file/rootfs.h"
#include "gated-modules.h"
#include "kernel-tree.h"
#include "modprobe-chain-internal.h"
#include "out-of-tree.h"
#include "util/module-name.h"

/* One line of modules.dep: a module file and the files it depends on. */
struct dep_line {
	const char *name;
	const char *rel;
	const char **deps; /* module names */
	size_t ndeps;
	bool gated;
};

/* The work on one release: its modules.dep lines and the names gated so far. */
struct release_work {
	struct kp_arena tmp; /* the lines' strings */
	struct dep_line *lines;
	size_t nlines, cap_lines;
	char **gated; /* names, sorted (strings in tmp or in the result's arena) */
	size_t ngated, cap_gated;
};

static void work_release(struct release_work *w)
{
	for (size_t i = 0; i < w->nlines; i++)
		free(w->lines[i].deps);
	free(w->lines);
	free(w->gated);
	kp_arena_release(&w->tmp);
}

/* @rel as a path relative to its release directory (an old modules.dep's absolute entries). */
static const char *relative(const char *rel)
{
	const char *lm, *r;

	if (rel[0] == '/' && (lm = strstr(rel, "/lib/modules/")) && (r = strchr(lm + 13, '/')))
		return r + 1;
	return rel;
}

static const char *name_of(struct kp_arena *a, const char *path)
{
	char name[256];

	kp_modname_from_path(name, sizeof(name), path, KP_MODNAME_KO);
	return *name ? kp_arena_strdup(a, name) : "";
}

/* Cuts the text of modules.dep into @w->lines. 0, or -1 with @err (out of memory). */
static int parse_dep(struct release_work *w, const char *text, size_t len, struct kp_err *err)
{
	const char *pos = text, *end = text + len;

	while (pos < end) {
		const char *nl = memchr(pos, '\n', (size_t)(end - pos));
		const char *lend = nl ? nl : end;
		const char *colon = memchr(pos, ':', (size_t)(lend - pos));
		struct dep_line *l;
		char *deps;
		size_t cap = 0;

		if (!colon || colon == pos) {
			pos = nl ? nl + 1 : end;
			continue;
		}
		if (kp_grow(&w->lines, &w->cap_lines, w->nlines + 1, sizeof(*w->lines)) < 0)
			return kp_err_set(err, "out of memory");
		l = &w->lines[w->nlines];
		memset(l, 0, sizeof(*l));
		l->rel = kp_arena_strndup(&w->tmp, pos, (size_t)(colon - pos));
		deps = kp_arena_strndup(&w->tmp, colon + 1, (size_t)(lend - colon - 1));
		if (!l->rel || !deps)
			return kp_err_set(err, "out of memory");
		w->nlines++;
		l->rel = relative(l->rel);
		l->name = name_of(&w->tmp, l->rel);
		if (!l->name)
			return kp_err_set(err, "out of memory");
		for (char *save = NULL, *d = strtok_r(deps, " \t\r", &save); d;
		     d = strtok_r(NULL, " \t\r", &save)) {
			const char *dn = name_of(&w->tmp, relative(d));

			if (!dn || kp_grow(&l->deps, &cap, l->ndeps + 1, sizeof(*l->deps)) < 0)
				return kp_err_set(err, "out of memory");
			if (*dn)
				l->deps[l->ndeps++] = dn;
		}
		pos = nl ? nl + 1 : end;
	}
	return 0;
}

static bool is_gated(const struct release_work *w, const char *name)
{
	return kp_sorted_contains((const char *const *)w->gated, w->ngated, name);
}

/* Notes @name gated (kept sorted when @sort, else sorted later). 0, or -1 (out of memory). */
static int gate_name(struct release_work *w, const char *name, bool sort)
{
	if (is_gated(w, name))
		return 0;
	if (kp_grow(&w->gated, &w->cap_gated, w->ngated + 1, sizeof(*w->gated)) < 0)
		return -1;
	w->gated[w->ngated++] = (char *)name;
	if (sort)
		kp_sort_names(w->gated, w->ngated);
	return 0;
}

static int add_module(struct kp_gated *g, size_t *cap, const char *name, const char *release,
		      const char *rel, const char *via, struct kp_err *err)
{
	struct kp_gated_module *m;

	if (kp_grow(&g->mods, cap, g->n + 1, sizeof(*g->mods)) < 0)
		return kp_err_set(err, "out of memory");
	m = &g->mods[g->n];
	m->name = kp_arena_strdup(&g->arena, name);
	m->release = release;
	m->relpath = kp_arena_strdup(&g->arena, rel);
	m->via = via ? kp_arena_strdup(&g->arena, via) : NULL;
	m->unindexed = false;
	if (!m->name || !m->relpath || (via && !m->via))
		return kp_err_set(err, "out of memory");
	g->n++;
	return 0;
}

/* The gated names @l depends on, joined into @buf; false when none. */
static bool gated_deps(const struct release_work *w, const struct dep_line *l, char *buf,
		       size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < l->ndeps; i++) {
		if (!is_gated(w, l->deps[i]))
			continue;
		if (used < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
						 l->deps[i]);
	}
	return used > 0;
}

/*
 * The modules of @w's modules.dep that depend on a gated one, added until none is left (a
 * modules.dep lists every module a module needs, but one written by hand may list only the
 * direct ones). 0, or -1 with @err.
 */
static int add_dependents(struct kp_gated *g, size_t *cap, struct release_work *w,
			  const char *release, struct kp_err *err)
{
	char via[1024];
	bool more = true;

	for (size_t pass = 0; more && pass <= w->nlines; pass++) {
		size_t before = w->ngated;

		more = false;
		for (size_t i = 0; i < w->nlines; i++) {
			struct dep_line *l = &w->lines[i];

			if (l->gated || !*l->name || is_gated(w, l->name) ||
			    !gated_deps(w, l, via, sizeof(via)))
				continue;
			l->gated = true;
			if (add_module(g, cap, l->name, release, l->rel, via, err) < 0)
				return -1;
			if (kp_grow(&w->gated, &w->cap_gated, w->ngated + 1, sizeof(*w->gated)) < 0)
				return kp_err_set(err, "out of memory");
			w->gated[w->ngated++] = (char *)l->name; /* sorted after the pass */
		}
		if (w->ngated != before) {
			kp_sort_names(w->gated, w->ngated);
			more = true;
		}
	}
	return 0;
}

/*
 * An out-of-tree entry of modules.dep that the walk did not see (a linked directory): a
 * regular file as the system at @root sees it, its links followed inside the root.
 */
static bool present(const char *root, const char *moddir, const char *rel)
{
	char *path, *real;
	struct stat st;
	bool r;

	if (asprintf(&path, "%s/%s", moddir, rel) < 0)
		return false;
	real = kp_root_resolve_path(root, path);
	free(path);
	if (!real)
		return false;
	r = kp_in_stat(real, &st) == 0 && S_ISREG(st.st_mode);
	free(real);
	return r;
}

static int collect_release(struct kp_gated *g, size_t *cap, const char *root,
			   struct kp_gated_release *r, struct kp_err *err)
{
	struct release_work w = { .tmp = { 0 } };
	const char **names, **rels;
	struct kp_err e = { 0 };
	struct kp_bytes b;
	size_t n, first = g->n;
	char *moddir = kp_tree_release_dir(root, r->release, &e), *kdir = NULL;
	bool have_dep = false, kernel_dir;
	int rc = -1;

	if (!moddir) {
		r->source = KP_GATED_FAILED;
		r->error = kp_arena_strdup(&g->arena, e.msg);
		return r->error ? 0 : kp_err_set(err, "out of memory");
	}
	if (kp_out_of_tree_present(root, moddir, &w.tmp, &names, &rels, &n, &e) < 0) {
		r->source = KP_GATED_FAILED;
		r->error = kp_arena_strdup(&g->arena, e.msg);
		rc = r->error ? 0 : kp_err_set(err, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (add_module(g, cap, names[i], r->release, rels[i], NULL, err) < 0 ||
		    gate_name(&w, names[i], false) < 0)
			goto out;
	kp_sort_names(w.gated, w.ngated);

	r->source = KP_GATED_DEP;
	if (kp_chain_read_text_index(&(const struct kp_root_dir){ .path = root, .fd = -1 }, moddir,
				     "modules.dep", &b, &e) == 0) {
		int pr = parse_dep(&w, (const char *)b.data, b.len, err);

		kp_bytes_release(&b);
		if (pr < 0)
			goto out;
		have_dep = true;
	} else if (kp_err_errnum(&e) == ENOENT) {
		r->source = KP_GATED_WALK;
	} else {
		r->source = KP_GATED_NO_DEP;
		r->error = kp_arena_strdup(&g->arena, e.msg);
		if (!r->error) {
			kp_err_set(err, "out of memory");
			goto out;
		}
	}
	/* the walk's modules depmod has not indexed yet: their softdep= is not read yet either */
	for (size_t i = first; i < first + n; i++) {
		g->mods[i].unindexed = true;
		for (size_t j = 0; j < w.nlines && g->mods[i].unindexed; j++)
			g->mods[i].unindexed = strcmp(w.lines[j].rel, g->mods[i].relpath) != 0;
	}
	for (size_t i = 0; i < w.nlines; i++) {
		struct dep_line *l = &w.lines[i];

		if (kp_relpath_is_in_tree(l->rel) || !*l->name || is_gated(&w, l->name) ||
		    !present(root, moddir, l->rel))
			continue;
		l->gated = true;
		if (add_module(g, cap, l->name, r->release, l->rel, NULL, err) < 0 ||
		    gate_name(&w, l->name, true) < 0)
			goto out;
	}
	if (have_dep && add_dependents(g, cap, &w, r->release, err) < 0)
		goto out;
	if (asprintf(&kdir, "%s/kernel", moddir) < 0) {
		kdir = NULL;
		kp_err_set(err, "out of memory");
		goto out;
	}
	kernel_dir = kp_is_dir(kdir);
	if (g->n == first && !w.nlines && !kernel_dir && r->source != KP_GATED_NO_DEP)
		r->source = KP_GATED_EMPTY;
	rc = 0;
out:
	free(kdir);
	free(moddir);
	work_release(&w);
	return rc;
}

static int cmp_module(const void *a, const void *b)
{
	const struct kp_gated_module *x = a, *y = b;
	int d = strcmp(x->name, y->name);

	if (!d)
		d = strcmp(x->release, y->release);
	return d ? d : strcmp(x->relpath, y->relpath);
}

int kp_gated_collect(struct kp_gated *g, const char *root, struct kp_err *err)
{
	char **rels = NULL;
	size_t nrels = 0, cap = 0;

	memset(g, 0, sizeof(*g));
	if (kp_tree_list_releases(root, &rels, &nrels, err) < 0)
		return -1;
	if (nrels) {
		g->releases = calloc(nrels, sizeof(*g->releases));
		if (!g->releases) {
			kp_tree_releases_free(rels, nrels);
			return kp_err_set(err, "out of memory");
		}
	}
	for (size_t i = 0; i < nrels; i++) {
		struct kp_gated_release *r = &g->releases[g->nreleases];

		r->release = kp_arena_strdup(&g->arena, rels[i]);
		if (!r->release) {
			kp_err_set(err, "out of memory");
			goto fail;
		}
		g->nreleases++;
		if (collect_release(g, &cap, root, r, err) < 0)
			goto fail;
	}
	kp_tree_releases_free(rels, nrels);
	if (g->n)
		qsort(g->mods, g->n, sizeof(*g->mods), cmp_module);
	for (size_t i = 0; i < g->n; i++)
		if (!i || strcmp(g->mods[i - 1].name, g->mods[i].name))
			g->nnames++;
	return 0;
fail:
	kp_tree_releases_free(rels, nrels);
	kp_gated_release(g);
	return -1;
}

size_t kp_gated_nfailed(const struct kp_gated *g)
{
	size_t n = 0;

	for (size_t i = 0; i < g->nreleases; i++)
		n += g->releases[i].error != NULL;
	return n;
}

void kp_gated_release(struct kp_gated *g)
{
	free(g->mods);
	free(g->releases);
	kp_arena_release(&g->arena);
	memset(g, 0, sizeof(*g));
}
