// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The hook's loaded providers (context-chain.h): the loaded modules whose exports the chain
 * needs and the base does not describe, read by the file modprobe would load under their
 * names, their exports added to the base as Module.symvers lines.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "context-chain.h"
#include "cache/facts-cache.h"
#include "file/rootfs.h"
#include "system/out-of-tree.h"
#include "util/module-name.h"

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

bool kp_ctx_set_exports(const struct kp_ctx *c, const char *sym)
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
int kp_ctx_chain_providers(struct kp_ctx *c, struct kp_err *err)
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

			if (!sym || kp_base_lookup_owner(c->base, sym, NULL) ||
			    kp_ctx_set_exports(c, sym))
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
