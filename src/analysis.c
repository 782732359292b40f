// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "analysis.h"

void kp_analysis_init(struct kp_analysis *a)
{
	memset(a, 0, sizeof(*a));
	kp_facts_opts_init(&a->fo);
}

int kp_analysis_option(struct kp_analysis *a, int c, const char *arg)
{
	switch (c) {
	case 'k':
		if (a->nkernels == KP_ARRAY_SIZE(a->kernels)) {
			kp_cli_error(NULL, "too many --kernel options");
			exit(KP_EXIT_ERROR);
		}
		a->kernels[a->nkernels++] = arg;
		return 1;
	case 0x100:
		a->fo.config_path = arg;
		return 1;
	case 0x101:
		a->fo.release = arg;
		return 1;
	case 0x102:
		a->fo.version = arg;
		return 1;
	case 0x103:
		a->fo.rules = arg;
		return 1;
	case 0x104:
		a->fo.distro = arg;
		return 1;
	case 0x105:
		a->fo.vermagic = arg;
		return 1;
	case 0x106:
		a->fo.sig_enforce = 1;
		return 1;
	case 0x107:
		a->fo.lockdown = 1;
		return 1;
	case 0x108:
		a->fo.untrusted_signatures = true;
		return 1;
	case 0x109:
		a->fo.allow_missing_ns = 1;
		return 1;
	case 0x10a:
		a->fo.cmdline = arg;
		return 1;
	case 'b':
		a->basedir = arg;
		return 1;
	case 0x10b:
		a->running = true;
		return 1;
	case 0x10c:
		a->root = arg;
		return 1;
	case 0x10d:
		if (a->ntrusted_certs == KP_ARRAY_SIZE(a->trusted_certs)) {
			kp_cli_error(NULL, "too many --trusted-cert options");
			exit(KP_EXIT_ERROR);
		}
		a->trusted_certs[a->ntrusted_certs++] = arg;
		return 1;
	case 0x10f:
		a->no_kernel_keys = true;
		return 1;
	case 0x10e:
		if (a->nkernel_images == KP_ARRAY_SIZE(a->kernel_images)) {
			kp_cli_error(NULL, "too many --kernel-image options");
			exit(KP_EXIT_ERROR);
		}
		a->kernel_images[a->nkernel_images++] = arg;
		return 1;
	default:
		return 0;
	}
}

/* A directory given as --kernel: its Module.symvers (headers dir, build dir or tree). */
static int load_kernel_path(struct kp_analysis *a, const char *path)
{
	static const char *const inside[] = { "Module.symvers", "build/Module.symvers" };
	struct kp_err err = { "" };
	struct stat st;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		for (size_t i = 0; i < KP_ARRAY_SIZE(inside); i++) {
			char *p = NULL;
			int r;

			if (asprintf(&p, "%s/%s", path, inside[i]) < 0)
				return -1;
			if (stat(p, &st) == 0) {
				r = kp_base_load(a->base, p, &err);
				if (r < 0)
					kp_cli_error(NULL, "%s", err.msg);
				free(p);
				return r;
			}
			free(p);
		}
		kp_cli_error(path, "no Module.symvers in this directory");
		return -1;
	}
	if (kp_base_load(a->base, path, &err) < 0) {
		kp_cli_error(NULL, "%s", err.msg);
		return -1;
	}
	return 0;
}

/*
 * No --kernel, -b or --running: the running kernel's files as the distribution
 * installed them, found like -b / (lib/modules or usr/lib/modules, build/,
 * usr/src/linux-headers-<release>/, boot/).
 */
static int default_kernel(struct kp_analysis *a)
{
	struct kp_err err = { "" };
	struct utsname u;

	if (uname(&u) < 0)
		return -1;
	snprintf(a->release_buf, sizeof(a->release_buf), "%s", u.release);
	if (kp_tree_open(&a->tree, NULL, a->release_buf, &err) == 0) {
		a->have_tree = true;
		if (kp_tree_load_base(&a->tree, a->base, false, &err) == 0) {
			a->nkernels = 1;
			if (!a->fo.release)
				a->fo.release = a->tree.release;
			if (!a->fo.config_path)
				a->fo.config_path = a->tree.config_path;
			return 0;
		}
	}
	kp_cli_error(NULL,
		     "no kernel exports given and none found for the running kernel %s "
		     "(install its headers, or use --kernel): %s",
		     a->release_buf, err.msg);
	return -1;
}

/* -b ROOT: the kernel of a system image; its modules when no file is named. */
static int use_tree(struct kp_analysis *a, const char *root, struct kp_tree *t, bool loaded)
{
	struct kp_err err = { "" };

	if (!loaded) {
		if (kp_tree_open(t, root, a->fo.release, &err) < 0) {
			kp_cli_error(root, "%s", err.msg);
			return -1;
		}
		a->have_tree = true;
	}
	if (!a->nkernels && kp_tree_load_base(t, a->base, false, &err) < 0) {
		kp_cli_error(NULL, "%s", err.msg);
		return -1;
	}
	a->nkernels += !a->nkernels; /* the tree stands for --kernel */
	if (!a->fo.release)
		a->fo.release = t->release;
	if (!a->fo.config_path && t->config_path)
		a->fo.config_path = t->config_path;
	return 0;
}

/* --running: what the live kernel already has, as facts for the simulation. */
static int use_running(struct kp_analysis *a)
{
	struct kp_err err = { "" };
	const char **loaded, **prop;
	size_t np = 0;

	if (kp_running_open(&a->run, a->root, &err) < 0) {
		kp_cli_error(a->root ? a->root : "/", "%s", err.msg);
		return -1;
	}
	a->have_run = true;
	if (!a->fo.release)
		a->fo.release = a->run.release;
	if (a->run.have_tree &&
	    (a->nkernels || kp_tree_has_exports(&a->run.tree) || !a->run.kallsyms)) {
		if (use_tree(a, NULL, &a->run.tree, true) < 0)
			return -1;
	} else if (!a->nkernels && a->run.kallsyms) {
		a->base_borrowed = a->run.kallsyms;
		if (a->run.have_tree && !a->fo.config_path)
			a->fo.config_path = a->run.tree.config_path;
	} else if (!a->nkernels) {
		kp_cli_error(NULL, "the running kernel's exports are unknown: %s; %s",
			     a->run.tree_note ? a->run.tree_note : "no modules tree",
			     a->run.kallsyms_note ? a->run.kallsyms_note : "no kallsyms");
		return -1;
	}
	if (a->fo.sig_enforce < 0 && a->run.sig_enforce >= 0)
		a->fo.sig_enforce = a->run.sig_enforce;
	if (a->fo.lockdown < 0 && a->run.lockdown)
		a->fo.lockdown = strcmp(a->run.lockdown, "none") != 0;
	if (!a->fo.cmdline)
		a->fo.cmdline = a->run.cmdline;
	loaded = kp_arena_alloc(&a->run.arena, (a->run.nmodules + 1) * sizeof(*loaded));
	prop = kp_arena_alloc(&a->run.arena, (a->run.nmodules + 1) * sizeof(*prop));
	if (!loaded || !prop) {
		kp_cli_error(NULL, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < a->run.nmodules; i++) {
		loaded[i] = a->run.modules[i].name;
		if (a->run.modules[i].proprietary)
			prop[np++] = a->run.modules[i].name;
	}
	a->run_loaded = loaded;
	a->run_prop = prop;
	a->run_nprop = np;
	return 0;
}

/*
 * The trusted keys, in the order of preference: the running kernel's keyrings (/proc/keys)
 * and its image, the tree's image (-b), --kernel-image, --trusted-cert.
 */
static int load_keys(struct kp_analysis *a, size_t max)
{
	struct kp_err err = { "" };

	if (a->have_run && !a->no_kernel_keys) {
		if (kp_keyring_add_proc_keys(&a->keys, a->root, &err) < 0 ||
		    kp_keyring_add_installed_image(&a->keys, a->root, a->run.release, max, &err) <
			    0) {
			kp_cli_error(NULL, "%s", err.msg);
			return -1;
		}
	}
	if (a->have_tree && !a->no_kernel_keys &&
	    kp_keyring_add_installed_image(&a->keys, a->tree.root, a->tree.release, max, &err) <
		    0) {
		kp_cli_error(NULL, "%s", err.msg);
		return -1;
	}
	for (size_t i = 0; i < a->nkernel_images; i++)
		if (kp_keyring_add_kernel_image(&a->keys, a->kernel_images[i], max, &err) < 0) {
			kp_cli_error(a->kernel_images[i], "%s", err.msg);
			return -1;
		}
	for (size_t i = 0; i < a->ntrusted_certs; i++)
		if (kp_keyring_add_cert_file(&a->keys, a->trusted_certs[i], &err) < 0) {
			kp_cli_error(a->trusted_certs[i], "%s", err.msg);
			return -1;
		}
	if (a->keys.nsources)
		a->fo.keys = &a->keys; /* named in reports even when they held no key */
	return 0;
}

/*
 * A whole modules tree (-b ROOT or --running without files, or that tree's directory named):
 * keep the file depmod puts in modules.dep under each name.
 */
static int depmod_view(struct kp_analysis *a, const struct kp_tree *t)
{
	struct kp_err err = { "" };

	if (kp_depmod_cfg_load(&a->depmod, t->root, t->release, &err) < 0) {
		kp_cli_error(t->root, "%s", err.msg);
		return -1;
	}
	a->have_depmod = true;
	for (size_t i = 0; i < a->depmod.nexternals; i++) {
		char dir[4096];

		struct stat st;

		snprintf(dir, sizeof(dir), "%s%s", strcmp(t->root, "/") ? t->root : "",
			 a->depmod.externals[i]);
		if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
			continue; /* depmod ignores an absent external directory */
		if (kp_set_add_path(&a->set, dir) < 0) {
			kp_cli_error(dir, "out of memory");
			return -1;
		}
	}
	if (kp_depmod_select(&a->depmod, t->moddir, &a->set, &a->shadowed, &a->nshadowed, &err) <
	    0) {
		kp_cli_error(NULL, "%s", err.msg);
		return -1;
	}
	return 0;
}

/* True if @path names the directory @dir itself (symlinks resolved). */
static bool same_dir(const char *path, const char *dir)
{
	struct stat x, y;

	return stat(path, &x) == 0 && stat(dir, &y) == 0 && S_ISDIR(x.st_mode) &&
	       x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/*
 * The tree checked as a whole, as depmod sees it: -b ROOT or --running with no FILE, or
 * naming just that tree's lib/modules/<release>; NULL when the files are checked as given.
 */
static const struct kp_tree *whole_tree(const struct kp_analysis *a, char **paths, int npaths)
{
	const struct kp_tree *t = NULL;

	if (a->basedir)
		t = &a->tree;
	else if (a->running && a->run.have_tree)
		t = &a->run.tree;
	if (!t || a->set.n || npaths > 1)
		return NULL;
	if (npaths == 1 && !same_dir(paths[0], t->moddir))
		return NULL;
	return t;
}

/*
 * Said once when a tree's System.map was skipped where it would have been read
 * (no Module.symvers): Debian ships a one-line stub, the real map is in -dbg.
 */
static int note_stub_map(struct kp_analysis *a)
{
	const struct kp_tree *t = NULL;
	char msg[600];

	if (a->have_tree)
		t = &a->tree;
	else if (a->have_run && a->run.have_tree)
		t = &a->run.tree;
	if (!t || !t->system_map_stub || t->system_map_path || t->symvers_path)
		return 0;
	snprintf(msg, sizeof(msg),
		 "%s has no symbol lines (Debian's stub; the real System.map is in the "
		 "linux-image-%s-dbg package): not used as a symbol source",
		 t->system_map_stub, t->release);
	return kp_facts_assume(&a->facts, msg);
}

int kp_analysis_run(struct kp_analysis *a, const struct kp_cli *cli, char **paths, int npaths,
		    bool simulate)
{
	struct kp_cli rcli = *cli;
	struct kp_err err = { "" };
	const struct kp_tree *whole;
	char *tree_paths[1];

	if (kp_base_new(&a->base) < 0) {
		kp_cli_error(NULL, "out of memory");
		return KP_EXIT_ERROR;
	}
	for (size_t i = 0; i < a->nkernels; i++)
		if (load_kernel_path(a, a->kernels[i]) < 0)
			return KP_EXIT_ERROR;
	if (a->running && use_running(a) < 0)
		return KP_EXIT_ERROR;
	if (a->basedir && use_tree(a, a->basedir, &a->tree, false) < 0)
		return KP_EXIT_ERROR;
	if (!a->nkernels && !a->base_borrowed && default_kernel(a) < 0)
		return KP_EXIT_ERROR;
	whole = whole_tree(a, paths, npaths);
	if (whole) {
		tree_paths[0] = whole->moddir;
		paths = tree_paths;
		npaths = 1;
	} else if (a->running && npaths == 0 && !a->set.n) {
		kp_cli_error(NULL,
			     "--running without FILE: the running kernel has no modules tree (%s)",
			     a->run.tree_note ? a->run.tree_note : "not found");
		return KP_EXIT_ERROR;
	}
	if (a->fo.release && kp_base_set_release(a->base, a->fo.release, &err) < 0) {
		kp_cli_error(NULL, "%s", err.msg);
		return KP_EXIT_ERROR;
	}
	if (load_keys(a, cli->max_size ? cli->max_size : KP_DEFAULT_MAX_SIZE) < 0)
		return KP_EXIT_ERROR;
	rcli.sig_digest = (kp_keyring_empty(&a->keys) ? 0 : KP_SIG_DIGEST) |
			  (a->keys.nblacklist ? KP_SIG_FILE_SHA256 : 0);
	if (kp_facts_build(&a->facts, &a->fo, kp_analysis_base(a), &err) < 0) {
		kp_cli_error(NULL, "%s", err.msg);
		return KP_EXIT_ERROR;
	}
	if (a->facts.beyond_modelled)
		kp_cli_error(NULL, "warning: %s [unverified-kernel]", a->facts.beyond_modelled);
	if (note_stub_map(a) < 0) {
		kp_cli_error(NULL, "out of memory");
		return KP_EXIT_ERROR;
	}
	if (a->have_run) {
		a->facts.loaded = a->run_loaded;
		a->facts.nloaded = a->run.nmodules;
		a->facts.loaded_proprietary = a->run_prop;
		a->facts.nloaded_proprietary = a->run_nprop;
		if (a->run.have_tainted)
			a->facts.initial_taint = a->run.tainted;
	}
	{
		/* The modules share the base's symbol names: it is freed after them. */
		struct kp_name_pool names = kp_base_name_pool(kp_analysis_base(a));

		if (paths == tree_paths) {
			/* the whole tree: the files modprobe would load, as depmod chooses them */
			kp_cli_add_paths(&a->set, paths, npaths);
			if (depmod_view(a, whole) < 0)
				return KP_EXIT_ERROR;
			npaths = 0;
		}
		a->read_failures = kp_cli_read_modules(&rcli, &a->set, paths, npaths, &names);
	}
	if (kp_graph_build(&a->graph, &a->set, kp_analysis_base(a), cli->jobs, &err) < 0) {
		kp_cli_error(NULL, "%s", err.msg);
		return KP_EXIT_ERROR;
	}
	if (!simulate)
		return 0;
	if (kp_simulate(&a->graph, &a->facts, &a->sim, &err) < 0) {
		kp_cli_error(NULL, "%s", err.msg);
		return KP_EXIT_ERROR;
	}
	a->have_sim = true;
	return 0;
}

const struct kp_kernel_base *kp_analysis_base(const struct kp_analysis *a)
{
	return a->base_borrowed ? a->base_borrowed : a->base;
}

void kp_analysis_free(struct kp_analysis *a)
{
	if (a->have_sim)
		kp_simulation_free(&a->sim);
	kp_graph_free(&a->graph);
	kp_depmod_shadows_free(a->shadowed, a->nshadowed);
	if (a->have_depmod)
		kp_depmod_cfg_free(&a->depmod);
	kp_set_free(&a->set);
	kp_facts_release(&a->facts);
	kp_base_free(a->base);
	if (a->have_tree)
		kp_tree_release(&a->tree);
	if (a->have_run)
		kp_running_release(&a->run);
	kp_keyring_release(&a->keys);
	memset(a, 0, sizeof(*a));
}
