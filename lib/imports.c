// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Imports: every SHN_UNDEF symbol of .symtab, in index order, as
 * simplify_symbols() in kernel/module/main.c walks them (all versions).
 */
#include <string.h>

#include "module-internal.h"

int kp_read_imports(struct kp_module *m, const struct kp_elf *e, const struct kp_name_pool *names,
		    struct kp_err *err)
{
	m->has_symtab = e->symtab_index != 0;
	if (!e->nundef)
		return 0;
	m->imports = kp_module_array(m, e->nundef, sizeof(*m->imports));
	if (!m->imports)
		return kp_err_set(err, "out of memory");
	for (size_t i = 1; i < e->nsyms; i++) {
		const struct kp_sym *s = &e->syms[i];
		struct kp_import *imp;

		if (s->shndx != SHN_UNDEF)
			continue;
		imp = &m->imports[m->nimports++];
		imp->name = kp_module_symname(m, names, s->name, strlen(s->name));
		if (!imp->name)
			return kp_err_set(err, "out of memory");
		imp->symidx = (uint32_t)i;
		imp->weak = s->bind == STB_WEAK;
		if (!m->imports_symbol_get && !strcmp(s->name, "__symbol_get"))
			m->imports_symbol_get = true;
	}
	return 0;
}
