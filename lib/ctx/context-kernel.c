// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The target kernel's exports (context-kernel.h): --kernel files or directories, the running
 * system, a -b tree, else the running kernel's installed files; then --provider symbol files.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/utsname.h>

#include "file/inputs.h"
#include "kernel/kernel-base-cached.h"
#include "context-kernel.h"

/*
 * The base cache (cache/base-cache.h) for the kernel's Module.symvers and config: parsed once
 * per file state, then mapped; NULL with --no-cache or KOPOLICY_BASE_CACHE=off.
 */
static struct kp_base_cache *base_cache(const struct kp_ctx *c)
{
	return c->env.base_cache ? c->env.base_cache(c->env.cache_data) : NULL;
}

/* A directory given as --kernel: its Module.symvers (headers dir, build dir or tree). */
static int load_kernel_path(struct kp_ctx *c, const char *path, struct kp_err *err)
{
	static const char *const inside[] = { "Module.symvers", "build/Module.symvers" };
	struct stat st;

	if (kp_in_stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		for (size_t i = 0; i < KP_ARRAY_SIZE(inside); i++) {
			char *p = NULL;
			int r;

			if (asprintf(&p, "%s/%s", path, inside[i]) < 0)
				return kp_err_set(err, "out of memory");
			if (kp_in_stat(p, &st) == 0) {
				r = kp_base_load_cached(c->base, p, base_cache(c), err);
				free(p);
				return r;
			}
			free(p);
		}
		kp_err_set(err, "no Module.symvers in this directory");
		return kp_err_prefix(err, path);
	}
	return kp_base_load_cached(c->base, path, base_cache(c), err);
}

/*
 * No --kernel, -b or --running: the running kernel's files as the distribution
 * installed them, found like -b / (lib/modules or usr/lib/modules, build/,
 * usr/src/linux-headers-<release>/, boot/).
 */
static int kernel_default(struct kp_ctx *c, struct kp_err *err)
{
	struct kp_err why = { 0 };
	struct utsname u;

	if (uname(&u) < 0)
		return kp_err_set(err, "uname: %m");
	snprintf(c->release_buf, sizeof(c->release_buf), "%s", u.release);
	if (kp_tree_open(&c->tree, NULL, c->release_buf, NULL, &why) == 0) {
		c->have_tree = true;
		if (kp_tree_load_base_cached(&c->tree, c->base, false, base_cache(c), &why) == 0) {
			c->o.nkernels = 1;
			if (!c->o.fo.release)
				c->o.fo.release = c->tree.release;
			if (!c->o.fo.config_path)
				c->o.fo.config_path = c->tree.config_path;
			return 0;
		}
	}
	return kp_err_set(err,
			  "no kernel exports given and none found for the running kernel %s "
			  "(install its headers, or use --kernel): %s",
			  c->release_buf, why.msg);
}

/* -b ROOT: the kernel of a system image; its modules when no file is named. */
static int kernel_from_tree(struct kp_ctx *c, const char *root, struct kp_tree *t, bool loaded,
			    struct kp_err *err)
{
	if (!loaded) {
		if (kp_tree_open(t, root, c->o.fo.release, kp_ctx_kmod_copy(c), err) < 0)
			return -1; /* its messages name the path */
		c->have_tree = true;
	}
	if (!c->o.nkernels && kp_tree_load_base_cached(t, c->base, false, base_cache(c), err) < 0)
		return -1;
	c->o.nkernels += !c->o.nkernels; /* the tree stands for --kernel */
	if (!c->o.fo.release)
		c->o.fo.release = t->release;
	if (!c->o.fo.config_path && t->config_path) {
		c->o.fo.config_path = t->config_path;
		c->o.fo.config_root = &t->rootdir; /* opened inside the tree's root */
	}
	return 0;
}

/* The names of the loaded modules, and of those carrying P, for the facts. */
static int loaded_names(struct kp_arena *arena, const struct kp_running *r, const char ***loaded,
			const char ***prop, size_t *nprop, struct kp_err *err)
{
	const char **l, **p;
	size_t np = 0;

	l = kp_arena_alloc(arena, (r->nmodules + 1) * sizeof(*l));
	p = kp_arena_alloc(arena, (r->nmodules + 1) * sizeof(*p));
	if (!l || !p)
		return kp_err_set(err, "out of memory");
	for (size_t i = 0; i < r->nmodules; i++) {
		l[i] = r->modules[i].name;
		if (r->modules[i].proprietary)
			p[np++] = r->modules[i].name;
	}
	*loaded = l;
	*prop = p;
	*nprop = np;
	return 0;
}

/* --running: what the live kernel already has, as facts for the simulation. */
static int kernel_from_running(struct kp_ctx *c, struct kp_err *err)
{
	struct kp_running *r = &c->run;

	/* its tree reads the run's one copy for libkmod (system/modprobe-snapshot.h) */
	if (kp_running_open_opts(r, c->o.root, NULL, KP_RUNNING_ALL, kp_ctx_kmod_copy(c), err) < 0)
		return -1; /* its messages name the root or the file */
	c->have_run = true;
	if (!c->o.fo.release)
		c->o.fo.release = r->release;
	if (r->have_tree && (c->o.nkernels || kp_tree_has_exports(&r->tree) || !r->kallsyms)) {
		if (kernel_from_tree(c, NULL, &r->tree, true, err) < 0)
			return -1;
	} else if (!c->o.nkernels && r->kallsyms) {
		c->base_borrowed = r->kallsyms;
		if (r->have_tree && !c->o.fo.config_path) {
			c->o.fo.config_path = r->tree.config_path;
			c->o.fo.config_root = &r->tree.rootdir;
		}
	} else if (!c->o.nkernels) {
		return kp_err_set(err, "the running kernel's exports are unknown: %s; %s",
				  r->tree_note ? r->tree_note : "no modules tree",
				  r->kallsyms_note ? r->kallsyms_note : "no kallsyms");
	}
	if (c->o.fo.sig_enforce < 0 && r->sig_enforce >= 0)
		c->o.fo.sig_enforce = r->sig_enforce;
	if (c->o.fo.lockdown < 0 && r->lockdown)
		c->o.fo.lockdown = strcmp(r->lockdown, "none") != 0;
	if (!c->o.fo.cmdline)
		c->o.fo.cmdline = r->cmdline;
	return loaded_names(&r->arena, r, &c->run_loaded, &c->run_prop, &c->run_nprop, err);
}

/* A --provider path naming modules (a directory, a *.ko* file), not a symbol file. */
bool kp_ctx_provider_has_modules(const char *path)
{
	const char *base = strrchr(path, '/');
	struct stat st;

	if (kp_in_stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return true;
	return kp_is_module_filename(base ? base + 1 : path);
}

/*
 * --provider symbol files (Module.symvers of other packages, KBUILD_EXTRA_SYMBOLS): their
 * exports join the kernel's, as modpost reads them.
 */
static int load_provider_symbols(struct kp_ctx *c, struct kp_err *err)
{
	for (size_t i = 0; i < c->o.nprovider_paths; i++) {
		const char *p = c->o.provider_paths[i];

		if (kp_ctx_provider_has_modules(p))
			continue;
		if (c->base_borrowed) {
			kp_err_set(err,
				   "a provider symbol file needs the kernel's exports as a file "
				   "(--kernel, -b), not the running kernel's kallsyms");
			return kp_err_prefix(err, p);
		}
		if (kp_base_load(c->base, p, err) < 0)
			return -1;
	}
	return 0;
}

/* The kernel: its exports, its release, its keys, its facts. */
int kp_ctx_load_kernel(struct kp_ctx *c, struct kp_err *err)
{
	if (kp_base_new(&c->base) < 0)
		return kp_err_set(err, "out of memory");
	c->o.fo.base_cache = base_cache(c); /* the config too (kp_facts_build()) */
	for (size_t i = 0; i < c->o.nkernels; i++)
		if (load_kernel_path(c, c->o.kernels[i], err) < 0)
			return -1;
	if (c->o.running && kernel_from_running(c, err) < 0)
		return -1;
	if (c->o.basedir && kernel_from_tree(c, c->o.basedir, &c->tree, false, err) < 0)
		return -1;
	if (!c->o.nkernels && !c->base_borrowed && kernel_default(c, err) < 0)
		return -1;
	/* the modules of -b ROOT or --root are read as that system sees them (module-set.h) */
	if (kp_set_set_root(&c->set, c->o.basedir ? c->o.basedir : c->o.root) < 0)
		return kp_err_set(err, "out of memory");
	return load_provider_symbols(c, err);
}
