// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The context's BTF (context.h): the kernel's vmlinux BTF for the facts (loaded, or for the
 * hook deferred until a module's verdict is not in the memo), and the judge of the modules'
 * BTF against it while they are read.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file/rootfs.h"
#include "kernel/btf-judge.h"
#include "kernel/vmlinux-btf-cached.h"
#include "cache/btf-memo.h"
#include "cache/facts-cache.h"
#include "context.h"
#include "context-internal.h"

int kp_ctx_vmlinux_btf(struct kp_ctx *c, struct kp_kernel_facts *f, struct kp_err *err)
{
	const char *path = c->o.vmlinux_btf;
	char *sys = NULL, missing[sizeof(err->msg) + 64]; /* sys: a path this function owns */
	/* the BTF under the tree's root (opened once) or the running system's: opened inside */
	const struct kp_root_dir run_rd = { .path = c->have_run ? c->run.root : c->o.root,
					    .fd = -1 };
	const struct kp_root_dir *root = c->have_tree ? &c->tree.rootdir : &run_rd;
	struct kp_base_cache *cache;
	struct kp_err why = { 0 };
	int r;

	if (!f->btf_modules)
		return 0;
	if (c->hook.btf_deferred) /* kp_ctx_vmlinux_btf_deferred(): now loaded */
		path = c->hook.btf_deferred;
	if (!path && c->have_run && c->run.root) {
		sys = kp_root_path(c->run.root, "sys/kernel/btf/vmlinux");
		if (!sys)
			return kp_err_set(err, "out of memory");
		path = sys;
	}
	if (!path && c->have_tree) {
		sys = kp_tree_btf_vmlinux(&c->tree);
		path = sys;
	}
	if (!path)
		return kp_facts_vmlinux_btf(f, NULL, 0, NULL,
					    c->have_tree ? "no build/vmlinux in the tree"
							 : "no vmlinux BTF given") < 0
			       ? kp_err_set(err, "out of memory")
			       : 0;
	/* the base cache in the lazy mode (the hook) only, as for its Module.symvers and config */
	cache = c->hook.have_chain && c->env.base_cache ? c->env.base_cache(c->env.cache_data)
							: NULL;
	/*
	 * The hook with a facts cache: the BTF is loaded only when a module's verdict is not in
	 * the memo (kp_ctx_vmlinux_btf_deferred()); until then its entry's header gave the scope.
	 */
	if (cache && f == &c->facts && c->env.cache && !c->hook.btf_deferred &&
	    kp_vmlinux_btf_peek_cached(f, path, cache, root, c->vmlinux_btf.scope) == 0) {
		c->hook.btf_deferred = strdup(path);
		f->vmlinux_btf_source = kp_arena_strdup(&f->arena, path);
		free(sys);
		if (!c->hook.btf_deferred || !f->vmlinux_btf_source)
			return kp_err_set(err, "out of memory");
		c->vmlinux_btf.has_scope = true;
		return 0;
	}
	r = kp_vmlinux_btf_load_cached(f, path, cache, root, &c->vmlinux_btf, &why);
	free(sys);
	if (r == -1) {
		if (c->o.vmlinux_btf) {
			*err = why;
			return -1;
		}
		snprintf(missing, sizeof(missing), "no vmlinux BTF: %s", why.msg);
		return kp_facts_vmlinux_btf(f, NULL, 0, NULL, missing) < 0
			       ? kp_err_set(err, "out of memory")
			       : 0;
	}
	return r < 0 ? kp_err_set(err, "out of memory") : 0;
}

int kp_ctx_vmlinux_btf_deferred(struct kp_ctx *c, struct kp_err *err)
{
	int r;

	if (!c->hook.btf_deferred)
		return 0;
	c->vmlinux_btf.has_scope = false;
	c->facts.vmlinux_btf_source = NULL;
	r = kp_ctx_vmlinux_btf(c, &c->facts, err);
	free(c->hook.btf_deferred);
	c->hook.btf_deferred = NULL;
	return r;
}

/*
 * The judge of module BTF for the kernel's BTF (kernel/btf-judge.h), its verdicts kept with
 * the facts: a module's BTF is checked while it is read and its bytes dropped. NULL (out
 * of memory): the bytes are kept for the simulation's check, as without a judge.
 */
const struct kp_btf_judge *kp_ctx_btf_judge(struct kp_ctx *c)
{
	struct kp_facts_cache *fc = c->env.cache ? c->env.cache(c->env.cache_data) : NULL;
	struct kp_btf_memo *memo = NULL;
	unsigned char scope[KP_BTF_MEMO_ID_LEN];
	struct kp_btf_rules rules;
	struct kp_btf_judger *j;

	if (!c->facts.vmlinux_btf || !c->facts.btf_modules)
		return NULL;
	kp_profile_btf_rules(&c->facts.profile, &rules);
	j = c->btf_judger;
	if (j && j->vmlinux == c->facts.vmlinux_btf && !memcmp(&j->rules, &rules, sizeof(rules)))
		return &j->judge;
	if (j)
		kp_btf_judger_release(j);
	else if (!(j = c->btf_judger = malloc(sizeof(*j))))
		return NULL;
	if (fc && kp_btf_judge_scope(c->facts.vmlinux_btf, &rules, scope) == 0)
		memo = kp_facts_cache_btf_memo(fc, scope, false);
	if (kp_btf_judger_init(j, c->facts.vmlinux_btf, &rules, memo) < 0) {
		free(j);
		c->btf_judger = NULL;
		return NULL;
	}
	return &j->judge;
}
