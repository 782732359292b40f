// SPDX-License-Identifier: LGPL-2.1-or-later
#include "rules.h"

/*
 * layout_symtab() before v6.13 (no elf_validity_cache_strtab()), in layout_and_allocate():
 * strtab_size += strlen(&info->strtab[st_name]) for every symbol is_core_symbol() keeps, the
 * names read from the file at .strtab's offset + st_name. A kept name no NUL ends before the
 * end of a module that fills its last page runs into the guard page after the loader's
 * vmalloc'd copy: observed on 6.1.192, an oops in strlen() <- layout_symtab() <-
 * load_module(), the loader killed. That is after check_modinfo()'s taints (O) before v6.4
 * and before every module taint from v6.4 (module_augment_kernel_taints()); always before
 * the E taint and simplify_symbols(). Not modelled: a livepatch module (every name counted).
 */
int kp_rule_layout_symtab(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	const struct kp_module *m = ld->m;
	const char *line;

	if (c->p->has[KP_F_SYMSTRTAB_CHECKS] || !m->kept_name_past_end ||
	    kp_oob_read(m, c->f->page_shift, m->image_size, 1) != KP_OOB_GUARD)
		return 0;
	if ((line = kp_oob_fault_line(m->machine)))
		kp_msg(c, ld, "%s", line);
	kp_finding(ld->v, "kernel-oops", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
		   "the name of symbol %u, defined and kept by kallsyms, runs to the end of the "
		   "file, which fills its last page: this kernel reads names from the file (no "
		   "string-table check before 6.13) and layout_symtab()'s strlen() reads this "
		   "one on into the guard page after its copy of the module: the kernel oopses "
		   "(global taint D, the loading process is killed)",
		   (unsigned)m->kept_name_past_end);
	return KP_ERR_OOPS;
}
