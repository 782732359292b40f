// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The context (context.h): the target kernel (context-kernel.c) and its keys; the modules
 * from files or a whole tree as depmod sees it (read by context-read.c, their BTF judged by
 * context-btf.c); the graph and the simulation over them.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "file/inputs.h"
#include "file/rootfs.h"
#include "kernel/btf-judge.h"
#include "cache/facts-cache.h"
#include "cache/sig-memo.h"
#include "cache/kmod-memo.h"
#include "context.h"
#include "context-image.h"
#include "context-internal.h"
#include "context-kernel.h"
#include "context-machine.h"
#include "context-names.h"

void kp_ctx_opts_init(struct kp_ctx_opts *o)
{
	memset(o, 0, sizeof(*o));
	kp_facts_opts_init(&o->fo);
}

void kp_ctx_init(struct kp_ctx *c, const struct kp_ctx_opts *opts, const struct kp_ctx_env *env)
{
	memset(c, 0, sizeof(*c));
	c->o = *opts;
	if (env)
		c->env = *env;
}

struct kp_kmod_copy *kp_ctx_kmod_copy(struct kp_ctx *c)
{
	return c->env.kmod_copy ? c->env.kmod_copy : &c->own_kmod_copy;
}

void kp_ctx_say(const struct kp_ctx *c, const char *path, const char *msg)
{
	if (c->env.log)
		c->env.log(c->env.log_data, path, msg);
}

void kp_ctx_say_walk_warnings(struct kp_ctx *c)
{
	for (; c->nwarnings_said < c->set.nwarnings; c->nwarnings_said++) {
		const struct kp_set_warning *w = &c->set.warnings[c->nwarnings_said];
		char *line;

		if (!c->env.log)
			continue;
		/* no memory for the prefix: the warning said as it is */
		if (asprintf(&line, "warning: %s", w->what) < 0) {
			c->env.log(c->env.log_data, w->path, w->what);
			continue;
		}
		c->env.log(c->env.log_data, w->path, line);
		free(line);
	}
}

static size_t max_size(const struct kp_ctx *c)
{
	return c->env.max_size ? c->env.max_size : KP_DEFAULT_MAX_SIZE;
}

/*
 * Where the machine's EFI variables and DKMS key are: the live root for --running and
 * --this-machine (*@live: a missing /sys/firmware/efi means no EFI boot), else -b ROOT's
 * (its sys/firmware/efi when one is mounted there, its DKMS key); NULL for files alone.
 */
static const char *machine_root(const struct kp_ctx *c, bool *live)
{
	*live = c->have_run || c->o.this_machine || (c->o.basedir && kp_root_is_host(c->o.basedir));
	if (c->have_run || c->o.this_machine)
		return c->o.root ? c->o.root : "/";
	if (c->o.basedir)
		return kp_root_is_host(c->o.basedir) ? "/" : c->o.basedir;
	return NULL;
}

/*
 * The signature verdicts and image certificates kept with the facts (cache/sig-memo.h), or
 * this run's own when there is no facts cache: every verification goes through one.
 */
void kp_ctx_attach_sig_memo(struct kp_ctx *c)
{
	struct kp_facts_cache *fc = c->env.cache ? c->env.cache(c->env.cache_data) : NULL;

	c->keys.memo = fc ? kp_facts_cache_sig_memo(fc) : NULL;
	if (!c->keys.memo) {
		if (!c->own_memo)
			c->own_memo = kp_sig_memo_new(-1);
		c->keys.memo = c->own_memo;
	}
}

/*
 * The trusted keys, in the order of preference: the running kernel's keyrings (/proc/keys)
 * and its image, the tree's image (-b), --kernel-image, --trusted-cert.
 */
static int load_keys(struct kp_ctx *c, struct kp_err *err)
{
	size_t max = max_size(c);

	kp_ctx_attach_sig_memo(c);

	if (c->have_run && !c->o.no_kernel_keys) {
		if (kp_keyring_add_proc_keys(&c->keys, &c->run.rootdir, err) < 0 ||
		    kp_keyring_add_installed_image(&c->keys, c->o.root, c->run.release, max, err) <
			    0)
			return -1;
	}
	if (c->have_tree && !c->o.no_kernel_keys) {
		char path[4096];

		/* read beside the modules when it can be (context-image.h), else now */
		/* opened inside the tree's root: its links cannot lead to the host's image */
		if (kp_installed_image_path_in(&c->tree.rootdir, c->tree.release, path,
					       sizeof(path)) &&
		    !kp_ctx_image_begin(c, &c->tree.rootdir, path, max) &&
		    kp_keyring_add_kernel_image_in(&c->keys, &c->tree.rootdir, path, max, err) < 0)
			return kp_err_prefix(err, path);
	}
	for (size_t i = 0; i < c->o.nkernel_images; i++)
		if (kp_keyring_add_kernel_image(&c->keys, c->o.kernel_images[i], max, err) < 0)
			return kp_err_prefix(err, c->o.kernel_images[i]);
	for (size_t i = 0; i < c->o.ntrusted_certs; i++)
		if (kp_keyring_add_cert_file(&c->keys, c->o.trusted_certs[i], err) < 0)
			return kp_err_prefix(err, c->o.trusted_certs[i]);
	{
		bool live;
		const char *root = machine_root(c, &live);

		if (kp_ctx_machine_keys(c, root, live, false, err) < 0)
			return -1;
	}
	if (c->keys.nsources || kp_ctx_image_pending(c))
		c->o.fo.keys = &c->keys; /* named in reports even when they held no key */
	c->o.fo.keys_pending = kp_ctx_image_pending(c);
	return 0;
}

/*
 * A whole modules tree (-b ROOT or --running without files, or that tree's directory named):
 * keep the file depmod puts in modules.dep under each name.
 */
static int depmod_view(struct kp_ctx *c, const struct kp_tree *t, struct kp_err *err)
{
	if (kp_depmod_cfg_load(&c->depmod, t->root, t->release, err) < 0)
		return kp_err_prefix(err, t->root);
	c->have_depmod = true;
	for (size_t i = 0; i < c->depmod.nexternals; i++) {
		char dir[4096], *real;
		bool is_dir;

		snprintf(dir, sizeof(dir), "%s%s", strcmp(t->root, "/") ? t->root : "",
			 c->depmod.externals[i]);
		/* inside the root: its links are not followed on the host */
		real = kp_root_resolve_path(t->root, dir);
		if (!real && errno != ELOOP) {
			kp_err_set(err, "out of memory");
			return kp_err_prefix(err, dir);
		}
		is_dir = real && kp_is_dir(real);
		free(real);
		if (!is_dir)
			continue; /* depmod ignores an absent external directory */
		if (kp_set_add_path(&c->set, dir) < 0) {
			kp_err_set(err, "out of memory");
			return kp_err_prefix(err, dir);
		}
	}
	return kp_depmod_select(&c->depmod, t->moddir, &c->set, &c->shadowed, &c->nshadowed, err);
}

/* True if @path names the directory @dir itself (symlinks resolved). */
static bool same_dir(const char *path, const char *dir)
{
	struct stat x, y;

	return kp_in_stat(path, &x) == 0 && kp_in_stat(dir, &y) == 0 && S_ISDIR(x.st_mode) &&
	       x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/*
 * The tree checked as a whole, as depmod sees it: -b ROOT or --running with no FILE, or
 * naming just that tree's lib/modules/<release>; NULL when the files are checked as given.
 */
static const struct kp_tree *whole_tree(const struct kp_ctx *c, char **paths, int npaths)
{
	const struct kp_tree *t = NULL;

	if (c->o.basedir)
		t = &c->tree;
	else if (c->o.running && c->run.have_tree)
		t = &c->run.tree;
	if (!t || c->set.n || npaths > 1)
		return NULL;
	if (npaths == 1 && !same_dir(paths[0], t->moddir))
		return NULL;
	return t;
}

/*
 * Said once when a tree's System.map was skipped where it would have been read
 * (no Module.symvers): Debian ships a one-line stub, the real map is in -dbg.
 */
static int note_stub_map(struct kp_ctx *c)
{
	const struct kp_tree *t = NULL;
	char msg[600];

	if (c->have_tree)
		t = &c->tree;
	else if (c->have_run && c->run.have_tree)
		t = &c->run.tree;
	if (!t || !t->system_map_stub || t->system_map_path || t->symvers_path)
		return 0;
	snprintf(msg, sizeof(msg),
		 "%s has no symbol lines (Debian's stub; the real System.map is in the "
		 "linux-image-%s-dbg package): not used as a symbol source",
		 t->system_map_stub, t->release);
	return kp_facts_assume(&c->facts, msg);
}

/*
 * --provider modules: read with the set, marked, and dropped when a module checked has the
 * same name (an installed older build of the module being checked: the new one replaces it).
 * A provider that cannot be read is said and left out; it is not a failure of the check.
 */
static int add_providers(struct kp_ctx *c, struct kp_err *err)
{
	for (size_t i = 0; i < c->o.nprovider_paths; i++) {
		const char *p = c->o.provider_paths[i];
		size_t before = c->set.n;
		struct stat st;

		if (!kp_ctx_provider_has_modules(p))
			continue;
		if (kp_in_stat(p, &st) < 0) {
			kp_err_set(err, "provider: %m");
			return kp_err_prefix(err, p);
		}
		if (kp_set_add_path(&c->set, p) < 0) {
			kp_err_set(err, "out of memory");
			return kp_err_prefix(err, p);
		}
		for (size_t j = before; j < c->set.n; j++)
			c->set.entries[j].provider = true;
	}
	return 0;
}

static bool checked_name(const struct kp_module_set *set, const char *name)
{
	for (size_t i = 0; i < set->n; i++)
		if (!set->entries[i].provider && set->entries[i].mod &&
		    !strcmp(set->entries[i].mod->name, name))
			return true;
	return false;
}

/* Drops the providers not read and those a checked module replaces. */
static void prune_providers(struct kp_ctx *c)
{
	size_t k = 0;

	for (size_t i = 0; i < c->set.n; i++) {
		struct kp_set_entry *e = &c->set.entries[i];

		if (e->provider && (!e->mod || checked_name(&c->set, e->mod->name))) {
			if (!e->mod) {
				char msg[600];

				snprintf(msg, sizeof(msg), "provider not used: %s", e->error);
				kp_ctx_say(c, e->path, msg);
			}
			free(e->path);
			free(e->file);
			free(e->error);
			kp_set_drop_module(&c->set, e);
			continue;
		}
		c->set.entries[k++] = *e;
	}
	c->set.n = k;
}

static int load_facts(struct kp_ctx *c, struct kp_err *err)
{
	if (c->o.fo.release && kp_base_set_kernel_release(c->base, c->o.fo.release, err) < 0)
		return -1;
	if (load_keys(c, err) < 0)
		return -1;
	if (kp_facts_build(&c->facts, &c->o.fo, kp_ctx_base(c), err) < 0 ||
	    kp_ctx_vmlinux_btf(c, &c->facts, err) < 0)
		return -1;
	if (kp_ctx_machine_facts(c, err) < 0)
		return -1;
	if (c->facts.beyond_modelled) {
		char msg[sizeof(err->msg) + 32];

		snprintf(msg, sizeof(msg), "warning: %s [unverified-kernel]",
			 c->facts.beyond_modelled);
		kp_ctx_say(c, NULL, msg);
	}
	if (note_stub_map(c) < 0)
		return kp_err_set(err, "out of memory");
	if (c->have_run) {
		c->facts.loaded = c->run_loaded;
		c->facts.nloaded = c->run.nmodules;
		c->facts.loaded_proprietary = c->run_prop;
		c->facts.nloaded_proprietary = c->run_nprop;
		if (c->run.have_tainted)
			c->facts.initial_taint = c->run.tainted;
	}
	return 0;
}

void kp_ctx_take_keys(struct kp_ctx *c, struct kp_keyring *keys)
{
	kp_keyring_release(&c->keys);
	c->keys = *keys;
	memset(keys, 0, sizeof(*keys));
}

static int load(struct kp_ctx *c, char **paths, int npaths, unsigned flags, struct kp_err *err);

static int load_named(struct kp_ctx *c, char **paths, int npaths, unsigned flags,
		      struct kp_err *err);

int kp_ctx_load(struct kp_ctx *c, char **paths, int npaths, unsigned flags, struct kp_err *err)
{
	struct kp_err ierr = { 0 };
	int r = load_named(c, paths, npaths, flags, err);

	/*
	 * A run that stopped with the image still being read: the image's error first (it was
	 * read first), else what was held said before the run's error.
	 */
	if (kp_ctx_image_settle(c, &ierr) < 0) {
		*err = ierr;
		return -1;
	}
	return r;
}

int kp_ctx_load_kernel_facts(struct kp_ctx *c, struct kp_err *err)
{
	struct kp_err ierr = { 0 };
	int r = kp_ctx_load_kernel(c, err);

	if (r == 0)
		r = load_facts(c, err);
	/* the tree's image read on its thread: its keys are part of the facts */
	if (kp_ctx_image_settle(c, &ierr) < 0) {
		*err = ierr;
		return -1;
	}
	return r;
}

static int load_named(struct kp_ctx *c, char **paths, int npaths, unsigned flags,
		      struct kp_err *err)
{
	struct kp_ctx_operands ops;
	int r;

	if (kp_ctx_load_kernel(c, err) < 0)
		return -1;
	if (!(flags & KP_CTX_NAMES) || npaths == 0)
		return load(c, paths, npaths, flags, err);
	if (kp_ctx_resolve_names(c, paths, npaths, &ops, err) < 0)
		return -1;
	if (ops.n == 0) {
		/* every operand a name that matched nothing (each said): not the whole tree */
		kp_ctx_operands_release(&ops);
		return kp_err_set(err, "no module to check: %s",
				  npaths == 1 ? "the name matched no file and no module"
					      : "the names matched no file and no module");
	}
	r = load(c, ops.paths, ops.n, flags, err);
	c->read_failures += ops.unresolved;
	kp_ctx_operands_release(&ops);
	return r;
}

static int load(struct kp_ctx *c, char **paths, int npaths, unsigned flags, struct kp_err *err)
{
	const struct kp_tree *whole;
	ssize_t failed;

	whole = whole_tree(c, paths, npaths);
	if (!whole && c->o.running && npaths == 0 && !c->set.n)
		return kp_err_set(err,
				  "--running without FILE: the running kernel has no modules tree "
				  "(%s)",
				  c->run.tree_note ? c->run.tree_note : "not found");
	if (load_facts(c, err) < 0)
		return -1;
	if (whole) {
		/* the whole tree: the files modprobe would load, as depmod chooses them */
		if (kp_set_add_path(&c->set, whole->moddir) < 0) {
			kp_err_set(err, "out of memory");
			return kp_err_prefix(err, whole->moddir);
		}
		if (depmod_view(c, whole, err) < 0)
			return -1;
		npaths = 0;
	}
	if (c->o.nprovider_paths) {
		failed = kp_ctx_add_files(c, paths, npaths, err);
		if (failed < 0 || add_providers(c, err) < 0)
			return -1;
		failed += (ssize_t)kp_ctx_read_entries(c, 0, c->set.n);
		if (kp_ctx_image_settle(c, err) < 0)
			return -1;
		for (size_t i = 0; i < c->set.n; i++)
			if (c->set.entries[i].error && !c->set.entries[i].provider) {
				kp_ctx_say(c, c->set.entries[i].path, c->set.entries[i].error);
			} else if (c->set.entries[i].error) {
				failed--; /* said by prune_providers() */
			}
		prune_providers(c);
	} else {
		failed = kp_ctx_read_modules(c, paths, npaths, err);
	}
	if (failed < 0 || kp_ctx_image_settle(c, err) < 0)
		return -1;
	c->read_failures = (size_t)failed;
	/* the walks' warnings (a link depmod skips with its ERROR line): said, no failure */
	kp_ctx_say_walk_warnings(c);
	if (kp_graph_build(&c->graph, &c->set, kp_ctx_base(c), c->env.jobs, err) < 0)
		return -1;
	/*
	 * After the graph's parallel loop, not before: its threads would otherwise find no
	 * arena left free by the readers and make new ones (+1.3 MB peak RSS on a whole tree).
	 */
	kp_ctx_store_pending(c);
	if (!(flags & KP_CTX_SIMULATE))
		return 0;
	if ((flags & KP_CTX_RECORD ? kp_simulate_recorded : kp_simulate)(&c->graph, &c->facts,
									 &c->sim, err) < 0)
		return -1;
	c->have_sim = true;
	return 0;
}

const struct kp_kernel_base *kp_ctx_base(const struct kp_ctx *c)
{
	return c->base_borrowed ? c->base_borrowed : c->base;
}

void kp_ctx_release(struct kp_ctx *c)
{
	for (size_t i = 0; i < c->hook.nproviders; i++)
		kp_module_free(c->hook.providers[i]);
	free(c->hook.providers);
	kp_symset_release(&c->hook.wanted);
	free(c->hook.in_set);
	free(c->hook.btf_deferred);
	if (c->have_sim)
		kp_simulation_release(&c->sim);
	kp_graph_release(&c->graph);
	kp_depmod_shadows_free(c->shadowed, c->nshadowed);
	if (c->have_depmod)
		kp_depmod_cfg_release(&c->depmod);
	kp_set_release(&c->set);
	for (size_t i = 0; i < c->nempty_dirs; i++)
		free(c->empty_dirs[i]);
	free(c->empty_dirs);
	if (c->btf_judger)
		kp_btf_judger_release(c->btf_judger);
	free(c->btf_judger);
	kp_facts_release(&c->facts);
	kp_vmlinux_btf_release(&c->vmlinux_btf); /* after the facts that borrowed it */
	kp_base_free(c->base);
	if (c->hook.have_chain)
		kp_chain_close(&c->hook.chain);
	kp_kmod_memo_flush(c->hook.kmemo); /* what libkmod answered, for the next runs */
	/* after the tree and the chain that read it; env.kmod_copy is its owner's */
	kp_kmod_copy_remove(&c->own_kmod_copy);
	if (c->have_tree)
		kp_tree_release(&c->tree);
	if (c->have_run)
		kp_running_release(&c->run);
	kp_ctx_image_release(c); /* its thread uses the memo */
	kp_keyring_release(&c->keys);
	kp_sig_memo_free(c->own_memo);
	if (c->have_efi)
		kp_efi_release(&c->efi);
	free(c->ima_policy_text);
	free(c->ima_policy_source);
	memset(c, 0, sizeof(*c));
}
