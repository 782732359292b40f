// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The hook's facts (context-chain.h): the running kernel's, with the explicit overrides, and
 * the set's module BTF judged against the kernel's BTF, that BTF loaded only when a verdict
 * is missing (its deferral, context-btf.c).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "context.h"
#include "context-chain.h"
#include "context-machine.h"
#include "cache/btf-memo.h"
#include "cache/facts-cache.h"
#include "file/bytes.h"
#include "file/rootfs.h"
#include "kernel/btf-judge.h"

/* The target kernel: the running one, with any explicit overrides given. */
int kp_ctx_chain_facts(struct kp_ctx *c, struct kp_err *err)
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
	o->base_cache = kp_ctx_base_cache(c);
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
int kp_ctx_chain_judge_btf(struct kp_ctx *c, struct kp_err *err)
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
