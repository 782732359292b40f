// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <string.h>

#include "rules.h"

/*
 * module_patient_check_exists() v6.4+ / add_unformed_module() before: a live module of that name.
 */
int kp_rule_module_patient_check_exists(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	bool live = kp_symbol_index_find(&c->live_names, ld->name);

	if (c->rd) {
		c->rd->name_read = true;
		c->rd->name_live = live;
	}
	if (!live)
		return 0;
	kp_finding(ld->v, "already-loaded", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
		   "a module named %s is already loaded", ld->name);
	return -EEXIST;
}

/*
 * verify_exported_symbols(): v2.6 … v7.2, searched with gplok=true, first duplicate ends it
 * (v7.1+: the single __ksymtab).
 */
int kp_rule_verify_exported_symbols(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	const struct kp_module *m = ld->m;

	for (size_t i = 0; i < m->nexports; i++) {
		const struct kp_export *x = &m->exports[i];
		struct kp_found fs;
		bool gpl;

		if (x->table != KP_KSYMTAB && x->table != KP_KSYMTAB_GPL)
			continue;
		if (!kp_export_class(c, x, &gpl))
			continue;
		if (!kp_find_symbol_hashed(c, x->name, x->hash, true, &fs))
			continue;
		kp_msg(c, ld, "%s: exports duplicate symbol %s (owned by %s)", ld->name, x->name,
		       fs.owner_name ? fs.owner_name : "kernel");
		kp_finding(ld->v, "duplicate-export", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, x->name,
			   "exports %s, already exported by %s", x->name,
			   fs.owner_name ? fs.owner_name : "the kernel");
		return -ENOEXEC;
	}
	return 0;
}
