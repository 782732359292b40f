// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Imports: every SHN_UNDEF symbol of .symtab, in index order, as
 * simplify_symbols() in kernel/module/main.c walks them (all versions).
 */
#include <string.h>

#include "module-internal.h"

/* True for the defined symbols simplify_symbols() does not simply relocate. */
static bool is_special(const struct kp_elf *e, const struct kp_sym *s)
{
	if (s->shndx == SHN_UNDEF || s->shndx == SHN_ABS)
		return false;
	return s->shndx == SHN_COMMON || s->shndx == KP_SHN_LIVEPATCH || s->shndx >= e->nsections;
}

/* The symbols the st_shndx switch of simplify_symbols() rejects or skips (all versions). */
static int read_special(struct kp_module *m, const struct kp_elf *e,
			const struct kp_name_pool *names, struct kp_err *err)
{
	size_t n = 0, k = 0;

	for (size_t i = 1; i < e->nsyms; i++)
		n += is_special(e, &e->syms[i]);
	if (!n)
		return 0;
	m->special_syms = kp_module_array(m, n, sizeof(*m->special_syms));
	if (!m->special_syms)
		return kp_err_set(err, "out of memory");
	for (size_t i = 1; i < e->nsyms; i++) {
		const struct kp_sym *s = &e->syms[i];
		struct kp_special_sym *x;

		if (!is_special(e, s))
			continue;
		x = &m->special_syms[k++];
		x->name = kp_module_symname(m, names, s->name, strlen(s->name));
		if (!x->name)
			return kp_err_set(err, "out of memory");
		x->symidx = (uint32_t)i;
		x->shndx = s->shndx;
	}
	m->nspecial_syms = k;
	return 0;
}

const char *kp_module_symname_hashed(struct kp_module *m, const struct kp_name_pool *names,
				     const char *name, size_t len, uint32_t hash)
{
	const char *shared = NULL;

	if (names)
		shared = names->find_hashed ? names->find_hashed(names->ctx, name, len, hash)
					    : names->find(names->ctx, name, len);
	return shared ? shared : kp_arena_strndup(&m->arena, name, len);
}

int kp_read_imports(struct kp_module *m, const struct kp_elf *e, const struct kp_name_pool *names,
		    struct kp_err *err)
{
	m->has_symtab = e->symtab_index != 0;
	m->shnum = (uint32_t)e->nsections;
	m->raw_shnum = e->raw_shnum;
	m->raw_shstrndx = e->raw_shstrndx;
	m->sec0_set = e->sec0_set;
	m->sec0_type = e->sec0_type;
	m->shoff = e->shoff;
	m->symstr_state = e->symstr_state;
	m->symname_past_end =
		e->symname_past_end > UINT32_MAX ? UINT32_MAX : (uint32_t)e->symname_past_end;
	m->import_name_past_end = e->undef_name_past_end <= KP_IMPORT_MAX_SYMIDX
					  ? (uint32_t)e->undef_name_past_end
					  : 0;
	m->kept_name_past_end =
		e->kept_name_past_end <= UINT32_MAX ? (uint32_t)e->kept_name_past_end : 0;
	m->import_name_outside =
		e->undef_name_outside <= KP_IMPORT_MAX_SYMIDX ? (uint32_t)e->undef_name_outside : 0;
	m->import_name_outside_off = m->import_name_outside ? e->undef_name_outside_off : 0;
	if (read_special(m, e, names, err) < 0)
		return -1;
	if (!e->nundef)
		return 0;
	m->imports = kp_module_array(m, e->nundef, sizeof(*m->imports));
	if (!m->imports)
		return kp_err_set(err, "out of memory");
	for (size_t i = 1; i < e->nsyms; i++) {
		const struct kp_sym *s = &e->syms[i];
		struct kp_import *imp;
		size_t len;

		if (s->shndx != SHN_UNDEF)
			continue;
		if (i > KP_IMPORT_MAX_SYMIDX) /* 48 GiB of .symtab: not a module */
			return kp_err_set(err, ".symtab has more than %u symbols",
					  KP_IMPORT_MAX_SYMIDX);
		imp = &m->imports[m->nimports++];
		len = strlen(s->name);
		imp->hash = kp_hash_bytes(s->name, len);
		imp->name = kp_module_symname_hashed(m, names, s->name, len, imp->hash);
		if (!imp->name)
			return kp_err_set(err, "out of memory");
		imp->symidx = (uint32_t)i & KP_IMPORT_MAX_SYMIDX;
		imp->weak = s->bind == STB_WEAK;
		if (!m->imports_symbol_get && !strcmp(s->name, "__symbol_get"))
			m->imports_symbol_get = true;
	}
	return 0;
}
