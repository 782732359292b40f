// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Imports: every SHN_UNDEF symbol of .symtab, in index order, as
 * simplify_symbols() in kernel/module/main.c walks them (all versions).
 */
#include <string.h>

#include "module-internal.h"

int kp_read_imports(struct kp_module *m, const struct kp_elf *e, struct kp_err *err)
{
	size_t cap = 0;

	m->has_symtab = e->symtab_index != 0;
	for (size_t i = 1; i < e->nsyms; i++) {
		const struct kp_sym *s = &e->syms[i];
		struct kp_import *imp;

		if (s->shndx != SHN_UNDEF)
			continue;
		imp = kp_module_push(m, &m->imports, &m->nimports, &cap, sizeof(*m->imports));
		if (!imp)
			return kp_err_set(err, "out of memory");
		imp->name = kp_arena_strdup(&m->arena, s->name);
		if (!imp->name)
			return kp_err_set(err, "out of memory");
		imp->symidx = (uint32_t)i;
		imp->weak = s->bind == STB_WEAK;
		if (!m->imports_symbol_get && !strcmp(s->name, "__symbol_get"))
			m->imports_symbol_get = true;
	}
	return 0;
}
