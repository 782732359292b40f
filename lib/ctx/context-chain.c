// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The context's lazy mode (kp_ctx_load_chain()): what modprobe would load for one name on
 * the running system, read the cheap way for `kopolicy hook`, which runs inside modprobe on
 * every hooked load: the chain from the depmod indexes (modprobe-chain.c), only its modules
 * that are neither built in, loaded nor described by Module.symvers, only the kernel exports
 * they can look up (context-chain-exports.c), the loaded providers they need
 * (context-chain-providers.c), never kallsyms unless nothing else describes the kernel; then
 * the running kernel's facts and the set's BTF verdicts (context-chain-facts.c). This file:
 * the running system opened, the chain resolved and its modules read into the set. libkmod's
 * answers for the name (the blacklist, the chain, symbols' owners, modules' paths) come from
 * the facts cache's memo of them while everything libkmod reads is the same
 * (cache/kmod-memo.h): a warm hook makes no libkmod call.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cache/facts-cache.h"
#include "context.h"
#include "context-chain.h"
#include "context-machine.h"
#include "file/rootfs.h"
#include "system/out-of-tree.h"

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
	if (kp_tree_open_memo(&c->tree, c->o.root, c->run.release, kp_ctx_kmod_copy(c),
			      c->hook.kmemo, &why) < 0)
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
			    kp_ctx_set_exports(c, sym))
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

int kp_ctx_load_chain(struct kp_ctx *c, const char *name, struct kp_err *err)
{
	struct kp_facts_cache *fc = c->env.cache ? c->env.cache(c->env.cache_data) : NULL;
	bool added = true;

	/* libkmod's answers for @name, replayed while everything it reads is the same */
	c->hook.kmemo = fc ? kp_facts_cache_kmod_memo(fc, name) : NULL;
	if (!c->have_run && kp_ctx_open_live(c, err) < 0)
		return -1;
	/* the indexes whose state passed the check before are not walked again */
	if (kp_chain_open(&c->hook.chain, c->o.root, c->tree.moddir,
			  (const char *const *)c->tree.builtin, c->tree.nbuiltin,
			  (const char *const *)c->tree.modprobe_blacklist,
			  c->tree.nmodprobe_blacklist, kp_ctx_kmod_copy(c),
			  fc ? kp_facts_cache_index_memo(fc) : NULL, c->hook.kmemo, err) < 0)
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
		if (kp_ctx_chain_wanted(c) < 0)
			return kp_err_set(err, "out of memory");
		if (kp_ctx_chain_exports(c, err) < 0)
			return -1;
		added = false;
		if (c->hook.skip_in_tree && needed_deps(c, &added, err) < 0)
			return -1;
	}
	if (kp_ctx_chain_providers(c, err) < 0 || kp_ctx_chain_facts(c, err) < 0)
		return -1;
	if (kp_ctx_chain_judge_btf(c, err) < 0)
		return -1;
	if (kp_graph_build(&c->graph, &c->set, c->base, 1, err) < 0 ||
	    kp_simulate(&c->graph, &c->facts, &c->sim, err) < 0)
		return -1;
	c->have_sim = true;
	return 0;
}
