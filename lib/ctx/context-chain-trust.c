// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The hook's chain loaded (kp_ctx_load_chain()): whether the module files kmod opens by name
 * once the hook answers are the ones judged (system/module-trust.h). Every module of the chain
 * kmod loads is tested: the ones read into the set and the in-tree dependencies left to
 * Module.symvers alike (kmod opens both by path); built-in and loaded ones are not loaded.
 */
#include "config.h"

#include "context.h"

int kp_ctx_chain_trusted(const struct kp_ctx *c, struct kp_untrusted *bad, struct kp_err *err)
{
	struct kp_module_trust t;
	int r = 1;

	if (!c->hook.have_chain || !c->set.n)
		return 1; /* nothing kmod loads */
	if (kp_module_trust_init(&t, &c->hook.chain.rootdir, err) < 0)
		return -1;
	for (size_t i = 0; r == 1 && i < c->hook.chain.n; i++) {
		const struct kp_chain_module *cm = &c->hook.chain.mods[i];

		if (cm->builtin || !cm->path || kp_running_find(&c->run, cm->name))
			continue;
		r = kp_module_trust_check(&t, cm->path, bad, err);
	}
	kp_module_trust_release(&t);
	return r;
}
