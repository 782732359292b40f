// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <string.h>

#include "rules.h"

/* elf_validity_cache_copy() v6.4+ / setup_load_info() before: structural checks, -ENOEXEC. */
int kp_rule_elf_validity(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	const struct kp_module *m = ld->m;

	if (c->p->has[KP_F_THIS_MODULE_SIZE] && m->nmodinfo_sections > 1) {
		kp_msg(c, ld, "Only one .modinfo section must exist.");
		return -ENOEXEC;
	}
	if (c->p->has[KP_F_THIS_MODULE_SIZE] && c->f->this_module_size &&
	    m->this_module_size != c->f->this_module_size) {
		kp_msg(c, ld,
		       "module %s: .gnu.linkonce.this_module section size must match the "
		       "kernel's built struct module size at run time",
		       ld->info_name);
		kp_finding(ld->v, "struct-module-size", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
			   "built for a struct module of %llu bytes, the kernel's has %llu: built "
			   "against another kernel",
			   (unsigned long long)m->this_module_size,
			   (unsigned long long)c->f->this_module_size);
		return -ENOEXEC;
	}
	if (!m->has_symtab) {
		kp_msg(c, ld, "%s: module has no symbols (stripped?)", ld->info_name);
		return -ENOEXEC;
	}
	for (size_t i = 0; i < c->f->nblacklist; i++)
		if (!strcmp(c->f->blacklist[i], ld->info_name)) {
			kp_msg(c, ld, "Module %s is blacklisted", ld->info_name);
			return -EPERM;
		}
	return 0;
}
