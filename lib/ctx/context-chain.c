// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The context's lazy mode (kp_ctx_load_chain()): what modprobe would load for one name on
 * the running system, read the cheap way for `kopolicy hook`, which runs inside modprobe on
 * every hooked load: the chain from the depmod indexes (modprobe-chain.c), only its modules
 * that are neither built in, loaded nor described by Module.symvers, only the kernel exports
 * they can look up, the loaded providers they need, never kallsyms unless nothing else
 * describes the kernel.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "context.h"
#include "context-machine.h"
#include "cache/btf-memo.h"
#include "cache/facts-cache.h"
#include "file/rootfs.h"
#include "kernel/btf-judge.h"
#include "kernel/filtered-exports.h"
#include "kernel/kernel-base-cached.h"
#include "system/out-of-tree.h"
#include "util/module-name.h"

static int want(struct kp_ctx *c, const char *sym)
{
	return sym ? kp_symset_add(&c->hook.wanted, sym) : 0;
}

static int collect_wanted(struct kp_ctx *c)
{
	if (want(c, "module_layout") < 0)
		return -1;
	for (size_t i = 0; i < c->set.n; i++) {
		const struct kp_module *m = c->set.entries[i].mod;

		/* the exact names are not enough: any export may begin with its bytes */
		if (m->import_name_past_end)
			c->hook.want_every_export = true;
		for (size_t j = 0; j < m->nimports; j++)
			if (want(c, m->imports[j].name) < 0)
				return -1;
		for (size_t j = 0; j < m->nexports; j++)
			if (want(c, m->exports[j].name) < 0)
				return -1;
		for (size_t j = 0; j < m->nsymget; j++)
			if (want(c, m->symget[j].symbol) < 0)
				return -1;
	}
	return 0;
}

static struct kp_base_cache *base_cache(const struct kp_ctx *c)
{
	return c->env.base_cache ? c->env.base_cache(c->env.cache_data) : NULL;
}

/*
 * The kernel's exports: explicit --kernel files, else Module.symvers, else /proc/kallsyms;
 * from the last two only the chain's wanted names unless it wants every export.
 */
static int load_exports(struct kp_ctx *c, struct kp_err *err)
{
	const struct kp_symset *wanted = c->hook.want_every_export ? NULL : &c->hook.wanted;

	kp_base_free(c->base);
	c->base = NULL;
	if (kp_base_new(&c->base) < 0)
		return kp_err_set(err, "out of memory");
	if (c->o.nkernels) {
		struct kp_base_stats st;

		for (size_t i = 0; i < c->o.nkernels; i++)
			if (kp_base_load(c->base, c->o.kernels[i], err) < 0)
				return -1;
		kp_base_stats(c->base, &st);
		c->hook.exports_from = c->o.kernels[0];
		c->hook.base_has_modules = st.nmodule > 0;
	} else if (c->tree.symvers_path) {
		if (kp_base_load_symvers_cached(c->base, &c->tree.rootdir, c->tree.symvers_path,
						base_cache(c), wanted, err) < 0)
			return -1;
		c->hook.exports_from = c->tree.symvers_path;
		c->hook.base_has_modules = true;
	} else {
		char *ks = kp_root_path(c->o.root, "proc/kallsyms");
		const struct kp_root_dir rd = { .path = c->o.root, .fd = -1 };
		struct kp_err why = { 0 };

		/* inside the root: the tree's directory opened once, else the root at this use */
		if (!ks || kp_base_load_filtered_in(c->base, c->tree.root ? &c->tree.rootdir : &rd,
						    ks, true, wanted, &why) < 0) {
			kp_err_set(err,
				   "no kernel exports: no Module.symvers for %s (install "
				   "linux-headers-%s or give --kernel) and %s",
				   c->run.release, c->run.release, ks ? why.msg : "out of memory");
			free(ks);
			return -1;
		}
		free(ks);
		c->hook.exports_from = "/proc/kallsyms";
	}
	return kp_base_set_kernel_release(c->base, c->run.release, err);
}

static bool is_provider(const struct kp_ctx *c, const char *name)
{
	for (size_t i = 0; i < c->hook.nproviders; i++)
		if (!strcmp(c->hook.providers[i]->name, name))
			return true;
	return false;
}

static bool ns_listed(const char *const *list, size_t n, const char *ns)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(list[i], ns))
			return true;
	return false;
}

/*
 * A loaded module is judged by the file modprobe would load under its name; 7.1+ lists what
 * the live module imports in /sys/module/<name>/import_ns. Namespaces that differ mean the
 * file is another build than the loaded one (an update not yet loaded, another variant of
 * the driver): its exports stand in for the live ones, and the log says so.
 */
static int check_live_import_ns(struct kp_ctx *c, const char *name, const char *path,
				const struct kp_module *m, struct kp_err *err)
{
	const struct kp_loaded_module *lm = kp_running_find(&c->run, name);
	bool same = true;
	char msg[1024];
	size_t k;

	if (!lm || !lm->import_ns_from_sysfs || !c->env.log)
		return 0;
	for (size_t i = 0; i < lm->nimport_ns && same; i++)
		same = ns_listed(m->import_ns, m->nimport_ns, lm->import_ns[i]);
	for (size_t i = 0; i < m->nimport_ns && same; i++)
		same = ns_listed(lm->import_ns, lm->nimport_ns, m->import_ns[i]);
	if (same)
		return 0;
	k = (size_t)snprintf(msg, sizeof(msg), "warning: the loaded %s imports namespaces {", name);
	for (size_t i = 0; i < lm->nimport_ns && k < sizeof(msg); i++)
		k += (size_t)snprintf(msg + k, sizeof(msg) - k, "%s%s", i ? " " : "",
				      lm->import_ns[i]);
	if (k < sizeof(msg))
		k += (size_t)snprintf(msg + k, sizeof(msg) - k,
				      "} (sys/module/%s/import_ns), this file {", name);
	for (size_t i = 0; i < m->nimport_ns && k < sizeof(msg); i++)
		k += (size_t)snprintf(msg + k, sizeof(msg) - k, "%s%s", i ? " " : "",
				      m->import_ns[i]);
	if (k < sizeof(msg))
		snprintf(msg + k, sizeof(msg) - k,
			 "}: it is not the build that is loaded; its exports stand in for the "
			 "live module's");
	c->env.log(c->env.log_data, path, msg);
	(void)err;
	return 0;
}

static int add_provider(struct kp_ctx *c, const char *name, const char *path, struct kp_err *err)
{
	/*
	 * a loaded module is read for its exports: its symbol_get() sites are not judged; the
	 * file is opened inside --root by descriptors, as the set's modules are: under the
	 * set's root directory opened once (kp_set_set_root()), else the root at this use
	 */
	struct kp_root_dir rd = { .path = c->o.root, .fd = -1 };
	bool pinned = c->set.root && c->o.root && !strcmp(c->set.root, c->o.root);
	struct kp_open_opts oo = { .max_size = c->env.max_size,
				   .no_symbol_get = true,
				   .root = pinned ? &c->set.rootdir : &rd };
	struct kp_facts_cache *cache = c->env.cache ? c->env.cache(c->env.cache_data) : NULL;
	struct kp_err why = { 0 };
	size_t need = c->hook.nproviders + 1;
	struct kp_module *m;
	char *real;
	int r;

	if (kp_grow(&c->hook.providers, &c->hook.providers_cap, need, sizeof(*c->hook.providers)) <
	    0)
		return kp_err_set(err, "out of memory");
	/* the file as the system at --root sees it: a link followed inside the root */
	real = kp_root_resolve_path(c->o.root, path);
	if (!real && errno == ELOOP)
		return kp_err_set(err,
				  "cannot read loaded module %s: %s: cannot resolve inside the "
				  "root: %s",
				  name, path, strerror(ELOOP));
	if (!real)
		return kp_err_set(err, "out of memory");
	/* not deferred: a provider never waits in the cache, kp_module_free() frees it */
	r = kp_set_open_module(cache, real, &oo, NULL, &m, &why);
	free(real);
	if (r < 0)
		return kp_err_set(err, "cannot read loaded module %s: %s", name, why.msg);
	c->hook.providers[c->hook.nproviders++] = m;
	return check_live_import_ns(c, name, path, m, err);
}

static bool base_has(const struct kp_kernel_base *b, const char *sym, const char *modname)
{
	for (const struct kp_ksym *k = kp_base_lookup_owner(b, sym, NULL); k;
	     k = kp_base_next_same_name(b, k)) {
		char own[64];

		if (k->vmlinux)
			continue;
		kp_modname_from_path(own, sizeof(own), k->owner, KP_MODNAME_WHOLE);
		if (!strcmp(own, modname))
			return true;
	}
	return false;
}

static const char *export_word(const struct kp_export *e)
{
	if (e->table == KP_KSYMTAB_UNUSED_GPL)
		return "EXPORT_UNUSED_SYMBOL_GPL";
	if (e->gpl_only)
		return "EXPORT_SYMBOL_GPL";
	switch (e->table) {
	case KP_KSYMTAB_GPL_FUTURE:
		return "EXPORT_SYMBOL_GPL_FUTURE";
	case KP_KSYMTAB_UNUSED:
		return "EXPORT_UNUSED_SYMBOL";
	default:
		return "EXPORT_SYMBOL";
	}
}

/* The exports of loaded modules the base does not know, as Module.symvers lines. */
static int load_provider_exports(struct kp_ctx *c, struct kp_err *err)
{
	char *buf = NULL;
	size_t blen = 0, bcap = 0;
	int r = 0;

	for (size_t i = 0; i < c->hook.nproviders && r == 0; i++) {
		const struct kp_module *m = c->hook.providers[i];

		for (size_t j = 0; j < m->nexports && r == 0; j++) {
			const struct kp_export *e = &m->exports[j];
			size_t need = strlen(e->name) + 2 * strlen(m->name) +
				      (e->ns ? strlen(e->ns) : 0) + 64;
			int n;

			if (base_has(c->base, e->name, m->name))
				continue;
			if (kp_grow(&buf, &bcap, blen + need, 1) < 0) {
				r = -1;
				break;
			}
			n = snprintf(buf + blen, bcap - blen, "0x%08x\t%s\tloaded/%s\t%s\t%s\n",
				     e->has_crc ? e->crc : 0, e->name, m->name, export_word(e),
				     e->ns ? e->ns : "");
			if (n < 0 || (size_t)n >= bcap - blen)
				r = -1;
			else
				blen += (size_t)n;
		}
	}
	if (r < 0) {
		free(buf);
		return kp_err_set(err, "out of memory");
	}
	if (blen && kp_base_load_symvers_buffer(c->base, "loaded modules",
						(const unsigned char *)buf, blen, err) < 0)
		r = -1;
	free(buf);
	return r;
}

static bool set_exports(const struct kp_ctx *c, const char *sym)
{
	for (size_t i = 0; i < c->set.n; i++) {
		const struct kp_module *m = c->set.entries[i].mod;

		for (size_t j = 0; m && j < m->nexports; j++)
			if (!strcmp(m->exports[j].name, sym))
				return true;
	}
	return false;
}

/*
 * A chain module's import name runs into the guard page (want_every_export): find_symbol()
 * (kernel/module/main.c, 5.10 to 6.12; 6.13+ refuses such a name before) compares it with
 * the exports of every live module too, so every loaded module the base does not describe is
 * read, by the file modules.dep gives its name. One the indexes do not list (its file removed
 * or renamed since, insmod of a file elsewhere) cannot be: an in-tree one Module.symvers
 * lists (its line's module path ends in the loaded name) is described by those lines, which
 * the simulation searches for a live module (sim/rules/find-prefix.c); the line says which.
 */
static int read_every_loaded(struct kp_ctx *c, struct kp_err *err)
{
	static const char nofile[] = "no file in modules.dep";
	static const char unknown[] = "its exports unknown: an import name of the chain that "
				      "runs into the guard page may begin one";
	char *pm = NULL;
	int r = 0;

	for (size_t i = 0; i < c->run.nmodules && r == 0; i++) {
		const char *name = c->run.modules[i].name, *path, *rel, *owner;
		char msg[1024];

		if (is_provider(c, name))
			continue;
		r = kp_chain_module_path(&c->hook.chain, name, &path, &rel, err);
		if (r < 0 || (path && c->hook.base_has_modules && kp_relpath_is_in_tree(rel)))
			continue;
		if (path) {
			r = add_provider(c, name, path, err);
			continue;
		}
		if (!c->env.log)
			continue;
		if (!pm && !(pm = kp_root_path(c->o.root, "proc/modules"))) {
			r = kp_err_set(err, "out of memory");
			continue;
		}
		owner = c->hook.base_has_modules ? kp_base_module_owner(c->base, name) : NULL;
		if (owner)
			snprintf(msg, sizeof(msg),
				 "loaded module %s: %s, its exports from %s (lines of %s)", name,
				 nofile, c->hook.exports_from, owner);
		else
			snprintf(msg, sizeof(msg), "loaded module %s: %s, %s", name, nofile,
				 unknown);
		c->env.log(c->env.log_data, pm, msg);
	}
	free(pm);
	return r;
}

/*
 * Loaded modules whose exports matter: the chain's loaded dependencies the base does
 * not describe, and the loaded owners of symbol_get() targets (modules.symbols); every
 * loaded module when a name runs into the guard page (read_every_loaded()).
 */
static int read_providers(struct kp_ctx *c, struct kp_err *err)
{
	for (size_t i = 0; i < c->hook.chain.n; i++) {
		const struct kp_chain_module *cm = &c->hook.chain.mods[i];

		if (cm->builtin || !kp_running_find(&c->run, cm->name) || is_provider(c, cm->name))
			continue;
		if (c->hook.base_has_modules && kp_relpath_is_in_tree(cm->relpath))
			continue;
		if (add_provider(c, cm->name, cm->path, err) < 0)
			return -1;
	}
	for (size_t i = 0; i < c->set.n; i++) {
		const struct kp_module *m = c->set.entries[i].mod;

		for (size_t j = 0; j < m->nsymget; j++) {
			const char *sym = m->symget[j].symbol, *owner, *path, *rel;

			if (!sym || kp_base_lookup_owner(c->base, sym, NULL) || set_exports(c, sym))
				continue;
			if (kp_chain_symbol_owner(&c->hook.chain, sym, &owner, err) < 0)
				return -1;
			if (!owner || !kp_running_find(&c->run, owner) || is_provider(c, owner))
				continue;
			if (kp_chain_module_path(&c->hook.chain, owner, &path, &rel, err) < 0)
				return -1;
			if (path && add_provider(c, owner, path, err) < 0)
				return -1;
		}
	}
	if (c->hook.want_every_export && read_every_loaded(c, err) < 0)
		return -1;
	return load_provider_exports(c, err);
}

/* The target kernel: the running one, with any explicit overrides given. */
static int build_facts(struct kp_ctx *c, struct kp_err *err)
{
	struct kp_kernel_facts *f = &c->facts;
	struct kp_facts_opts *o = &c->o.fo;
	const char **loaded, **prop;
	char *procfg = NULL;
	size_t np = 0;
	int r;

	o->release = c->run.release;
	if (!o->config_path && c->tree.config_path) {
		o->config_path = c->tree.config_path;
		o->config_root = &c->tree.rootdir; /* opened inside the tree's root */
	} else if (!o->config_path) {
		struct stat st;

		/* the running system's, opened inside its root (kp_running's pinned directory) */
		procfg = kp_root_path(c->o.root, "proc/config.gz");
		if (procfg && kp_stat_in(&c->run.rootdir, procfg, &st) == 0 &&
		    S_ISREG(st.st_mode)) {
			o->config_path = procfg;
			o->config_root = &c->run.rootdir;
		}
	}
	if (o->sig_enforce < 0 && c->run.sig_enforce >= 0)
		o->sig_enforce = c->run.sig_enforce;
	if (o->lockdown < 0 && c->run.lockdown)
		o->lockdown = strcmp(c->run.lockdown, "none") ? 1 : 0;
	if (!o->cmdline)
		o->cmdline = c->run.cmdline;
	o->base_cache = base_cache(c);
	r = kp_facts_build(f, o, c->base, err);
	if (o->config_path == procfg)
		o->config_path = NULL;
	free(procfg);
	if (r < 0 || kp_ctx_machine_facts(c, err) < 0 || kp_ctx_vmlinux_btf(c, f, err) < 0)
		return -1;
	loaded = kp_arena_alloc(&f->arena, (c->run.nmodules + 1) * sizeof(*loaded));
	prop = kp_arena_alloc(&f->arena, (c->run.nmodules + 1) * sizeof(*prop));
	if (!loaded || !prop)
		return kp_err_set(err, "out of memory");
	for (size_t i = 0; i < c->run.nmodules; i++) {
		loaded[i] = c->run.modules[i].name;
		if (c->run.modules[i].proprietary)
			prop[np++] = c->run.modules[i].name;
	}
	f->loaded = loaded;
	f->nloaded = c->run.nmodules;
	f->loaded_proprietary = prop;
	f->nloaded_proprietary = np;
	f->initial_taint = c->run.have_tainted ? c->run.tainted : 0;
	return 0;
}

bool kp_ctx_chain_described(const struct kp_ctx *c, const struct kp_chain_module *cm)
{
	return c->hook.skip_in_tree && !cm->target && !cm->builtin &&
	       !c->hook.in_set[cm - c->hook.chain.mods] && kp_relpath_is_in_tree(cm->relpath);
}

int kp_ctx_open_live(struct kp_ctx *c, struct kp_err *err)
{
	struct kp_err why = { 0 };

	if (kp_running_open_opts(&c->run, c->o.root, c->o.fo.release, 0, NULL, err) < 0)
		return -1;
	c->have_run = true;
	{
		/* the chain reads its modules before its facts: keep .BTF if it can be checked */
		char *sys = kp_root_path(c->o.root, "sys/kernel/btf/vmlinux");

		c->hook.keep_btf = c->o.vmlinux_btf || (sys && kp_is_file(sys));
		free(sys);
	}
	/* no tree for the running release: an unknown kernel; else what failed in it */
	if (kp_tree_open(&c->tree, c->o.root, c->run.release, kp_ctx_kmod_copy(c), &why) < 0)
		return kp_err_errno(err, why.errnum, "%s%s",
				    why.errnum == ENOENT ? "unknown kernel: " : "", why.msg);
	c->have_tree = true;
	/* the chain's module files as the system at --root sees them (module-set.h) */
	if (kp_set_set_root(&c->set, c->o.root) < 0)
		return kp_err_set(err, "out of memory");
	/* the signature verdicts and image certificates kept with the facts, as check uses them */
	kp_ctx_attach_sig_memo(c);
	/*
	 * The running kernel's keys as /proc/keys lists them, --kernel-image, --trusted-cert
	 * (not the installed vmlinuz: decompressing it costs seconds on every modprobe).
	 */
	if (!c->o.no_kernel_keys && kp_keyring_add_proc_keys(&c->keys, &c->run.rootdir, err) < 0)
		return -1;
	for (size_t i = 0; i < c->o.nkernel_images; i++)
		if (kp_keyring_add_kernel_image(
			    &c->keys, c->o.kernel_images[i],
			    c->env.max_size ? c->env.max_size : KP_DEFAULT_MAX_SIZE, err) < 0)
			return kp_err_prefix(err, c->o.kernel_images[i]);
	for (size_t i = 0; i < c->o.ntrusted_certs; i++)
		if (kp_keyring_add_cert_file(&c->keys, c->o.trusted_certs[i], err) < 0)
			return kp_err_prefix(err, c->o.trusted_certs[i]);
	/* Secure Boot, db/dbx and MOK from the EFI variables, the DKMS key by name */
	if (kp_ctx_machine_keys(c, c->o.root ? c->o.root : "/", true, true, err) < 0)
		return -1;
	if (c->keys.nsources)
		c->o.fo.keys = &c->keys;
	return 0;
}

/*
 * The chain reads before its facts are built: the files' security.ima is read when an IMA
 * policy may appraise them (one was read, or the command line selects a built-in one).
 */
static bool chain_ima_xattr(const struct kp_ctx *c)
{
	const char *cmdline = c->o.fo.cmdline ? c->o.fo.cmdline : c->run.cmdline;

	return c->o.fo.ima_policy ||
	       (cmdline && (strstr(cmdline, "ima_policy=") || strstr(cmdline, "ima_appraise_tcb")));
}

/* Reads the set's unread entries; fails on the first that cannot be read. */
static int read_set(struct kp_ctx *c, struct kp_err *err)
{
	struct kp_read_opts ro = {
		.open = { .max_size = c->env.max_size,
			  .sig_digest = (kp_keyring_empty(&c->keys) ? 0 : KP_SIG_DIGEST) |
					(c->keys.nblacklist ? KP_SIG_FILE_SHA256 : 0),
			  .keep_btf = c->hook.keep_btf,
			  .no_symbol_get = c->o.no_symbol_get,
			  .ima_xattr = chain_ima_xattr(c) },
		.cache = c->env.cache ? c->env.cache(c->env.cache_data) : NULL,
	};
	size_t n = 0;

	for (size_t i = 0; i < c->set.n; i++)
		n += !c->set.entries[i].mod && !c->set.entries[i].error;
	ro.jobs = c->env.jobs ? c->env.jobs : (n < 4 ? (unsigned)(n ? n : 1) : 4);
	kp_set_read(&c->set, &ro);
	for (size_t i = 0; i < c->set.n; i++)
		if (c->set.entries[i].error)
			return kp_err_set(err, "%s: %s", c->set.entries[i].path,
					  c->set.entries[i].error);
	return 0;
}

static int add_to_set(struct kp_ctx *c, size_t i, struct kp_err *err)
{
	const struct kp_chain_module *cm = &c->hook.chain.mods[i];
	/* as the system at --root sees it: a symlinked module followed inside the root */
	char *real = kp_root_resolve_path(c->o.root, cm->path);
	bool file = real && kp_is_file(real);

	free(real);
	if (!real && errno == ELOOP)
		return kp_err_set(err, "%s: cannot resolve inside the root: %s", cm->path,
				  strerror(ELOOP));
	if (!real)
		return kp_err_set(err, "out of memory");
	if (!file)
		return kp_err_set(err, "%s: no such module file", cm->path);
	if (kp_set_add_path(&c->set, cm->path) < 0)
		return kp_err_set(err, "out of memory");
	c->hook.in_set[i] = true;
	return 0;
}

/*
 * In-tree dependencies left to Module.symvers that a module of the set still needs (an
 * import nobody provides whose owner, per modules.symbols, is one of them: Module.symvers
 * is not that tree's): added to the set. *@added tells whether any was.
 */
static int needed_deps(struct kp_ctx *c, bool *added, struct kp_err *err)
{
	size_t nread = c->set.n; /* entries added below are read in the next round */

	*added = false;
	for (size_t s = 0; s < nread; s++) {
		const struct kp_module *m = c->set.entries[s].mod;

		for (size_t j = 0; m && j < m->nimports; j++) {
			const char *sym = m->imports[j].name, *owner;

			if (m->imports[j].weak || kp_base_lookup_owner(c->base, sym, NULL) ||
			    set_exports(c, sym))
				continue;
			if (kp_chain_symbol_owner(&c->hook.chain, sym, &owner, err) < 0)
				return -1;
			if (!owner)
				continue;
			for (size_t i = 0; i < c->hook.chain.n; i++)
				if (!strcmp(c->hook.chain.mods[i].name, owner) &&
				    kp_ctx_chain_described(c, &c->hook.chain.mods[i]) &&
				    !kp_running_find(&c->run, owner)) {
					if (add_to_set(c, i, err) < 0)
						return -1;
					*added = true;
				}
		}
	}
	return 0;
}

/*
 * The set's module BTF judged against the kernel's BTF before the simulation, its verdicts
 * kept with the facts as check keeps them (kernel/btf-judge.h): a module's BTF checked once,
 * then its verdict from the memo, searched in its file (a few modules: the file of
 * thousands of verdicts is not read whole; cache/btf-memo.h). Only when the base cache's BTF
 * entry gave the memo's scope (hashing 4.9 MB on every call would cost more than it saves)
 * and there is a facts cache; otherwise, or when memory runs out, the simulation checks the
 * kept bytes as before. The kernel's BTF, when kp_ctx_vmlinux_btf() left it unloaded, is
 * loaded only for a module whose verdict the memo does not have.
 */
static int judge_set_btf(struct kp_ctx *c, struct kp_err *err)
{
	struct kp_facts_cache *fc = c->env.cache ? c->env.cache(c->env.cache_data) : NULL;
	struct kp_btf_judger j;
	struct kp_btf_memo *memo = NULL;
	struct kp_btf_rules rules;
	bool missed = false;

	if (!c->facts.btf_modules || !c->vmlinux_btf.has_scope)
		return 0;
	kp_profile_btf_rules(&c->facts.profile, &rules);
	if (fc)
		memo = kp_facts_cache_btf_memo(fc, c->vmlinux_btf.scope, true);
	for (int pass = 0; pass < 2; pass++) {
		if (!memo || kp_btf_judger_init(&j, c->facts.vmlinux_btf, &rules, memo) < 0)
			break;
		missed = false;
		for (size_t i = 0; i < c->set.n; i++) {
			struct kp_module *m = c->set.entries[i].mod;

			if (m && kp_module_judge_kept_btf(m, &j.judge) == 0 && m->has_btf &&
			    !m->btf_judged)
				missed = true;
		}
		kp_btf_judger_release(&j);
		if (!missed || c->facts.vmlinux_btf || !c->hook.btf_deferred)
			break;
		/* a verdict not in the memo: the kernel's BTF now, the misses checked */
		if (kp_ctx_vmlinux_btf_deferred(c, err) < 0)
			return -1;
	}
	/* no memo, or out of memory: the simulation checks the kept bytes against the BTF */
	return (!memo || missed) && c->hook.btf_deferred ? kp_ctx_vmlinux_btf_deferred(c, err) : 0;
}

int kp_ctx_load_chain(struct kp_ctx *c, const char *name, struct kp_err *err)
{
	bool added = true;

	if (!c->have_run && kp_ctx_open_live(c, err) < 0)
		return -1;
	if (kp_chain_open(&c->hook.chain, c->o.root, c->tree.moddir,
			  (const char *const *)c->tree.builtin, c->tree.nbuiltin,
			  (const char *const *)c->tree.modprobe_blacklist,
			  c->tree.nmodprobe_blacklist, kp_ctx_kmod_copy(c), err) < 0)
		return -1;
	c->hook.have_chain = true;
	if (kp_chain_resolve(&c->hook.chain, name, err) < 0)
		return -1;
	c->hook.in_set = kp_calloc(c->hook.chain.n ? c->hook.chain.n : 1, sizeof(*c->hook.in_set));
	if (!c->hook.in_set)
		return kp_err_set(err, "out of memory");
	c->hook.skip_in_tree = !c->o.read_in_tree && !c->o.nkernels && c->tree.symvers_path;
	for (size_t i = 0; i < c->hook.chain.n; i++) {
		const struct kp_chain_module *cm = &c->hook.chain.mods[i];

		if (cm->builtin || kp_running_find(&c->run, cm->name) ||
		    kp_ctx_chain_described(c, cm))
			continue;
		if (add_to_set(c, i, err) < 0)
			return -1;
	}
	if (!c->set.n)
		return 0; /* nothing to load */
	/* Bounded: each round adds at least one module of the chain to the set. */
	for (size_t round = 0; added && round <= c->hook.chain.n; round++) {
		if (read_set(c, err) < 0)
			return -1;
		if (collect_wanted(c) < 0)
			return kp_err_set(err, "out of memory");
		if (load_exports(c, err) < 0)
			return -1;
		added = false;
		if (c->hook.skip_in_tree && needed_deps(c, &added, err) < 0)
			return -1;
	}
	if (read_providers(c, err) < 0 || build_facts(c, err) < 0)
		return -1;
	if (judge_set_btf(c, err) < 0)
		return -1;
	if (kp_graph_build(&c->graph, &c->set, c->base, 1, err) < 0 ||
	    kp_simulate(&c->graph, &c->facts, &c->sim, err) < 0)
		return -1;
	c->have_sim = true;
	return 0;
}
