// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The hook's kernel exports (context-chain.h): the names the chain's modules can look up,
 * and the kernel's exports of those names only, from --kernel files, Module.symvers or
 * /proc/kallsyms.
 */
#include "config.h"

#include <stdlib.h>

#include "context.h"
#include "context-chain.h"
#include "file/rootfs.h"
#include "kernel/filtered-exports.h"
#include "kernel/kernel-base-cached.h"

static int want(struct kp_ctx *c, const char *sym)
{
	return sym ? kp_symset_add(&c->hook.wanted, sym) : 0;
}

int kp_ctx_chain_wanted(struct kp_ctx *c)
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

struct kp_base_cache *kp_ctx_base_cache(const struct kp_ctx *c)
{
	return c->env.base_cache ? c->env.base_cache(c->env.cache_data) : NULL;
}

/*
 * The kernel's exports: explicit --kernel files, else Module.symvers, else /proc/kallsyms;
 * from the last two only the chain's wanted names unless it wants every export.
 */
int kp_ctx_chain_exports(struct kp_ctx *c, struct kp_err *err)
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
						kp_ctx_base_cache(c), wanted, err) < 0)
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
