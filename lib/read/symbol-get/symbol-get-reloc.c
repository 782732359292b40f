// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Relocation helpers of the symbol_get() tracer: where a relocation points, identifiers in
 * string sections, and recording a target in the module's facts.
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "symbol-get-trace.h"

/* First relocation at or after @off, as an index. */
size_t sg_reloc_lower(const struct kp_elf *e, size_t sec, uint64_t off)
{
	const struct kp_section *s = &e->sections[sec];

	return kp_reloc_lower(s->relocs, s->nrelocs, off);
}

/*
 * Where relocation @r of section @sec points: S + A + @adj. REL addends are
 * read from the field (@arch->rel_addend; without it or a backend, the 4-byte
 * word). Returns 1 when the target lies in a section, 0 when the symbol is
 * undefined or absolute (*@sym set when known), -1 when unreadable.
 */
int sg_reloc_dest(const struct kp_elf *e, const struct sg_arch *arch, size_t sec,
		  const struct kp_reloc *r, int64_t adj, uint32_t *tsec, uint64_t *toff,
		  const struct kp_sym **sym)
{
	const struct kp_sym *s;
	int64_t addend;

	*sym = NULL;
	if (!r->sym || r->sym >= e->nsyms)
		return -1;
	s = &e->syms[r->sym];
	*sym = s;
	if (e->sections[sec].rela) {
		addend = r->addend;
	} else if (arch && arch->rel_addend) {
		const struct kp_section *ks = &e->sections[sec];
		struct sg_code code = { ks->data,	 ks->size, e->big_endian, e->is64,
					SG_MODE_DEFAULT, NULL,	   e->flags };

		if (!ks->data || !arch->rel_addend(&code, r->offset, r->type, &addend))
			return -1;
	} else {
		uint64_t raw;

		if (!kp_elf_read_uint(e, sec, r->offset, 4, &raw))
			return -1;
		addend = (int32_t)raw;
	}
	if (s->shndx == SHN_UNDEF || s->shndx >= SHN_LORESERVE || s->shndx >= e->nsections)
		return 0;
	*tsec = s->shndx;
	*toff = s->value + (uint64_t)addend + (uint64_t)adj;
	return 1;
}

/* A string starting exactly at @off of a SHF_STRINGS section, if it is an identifier. */
const char *sg_identifier_at(const struct kp_elf *e, size_t sec, uint64_t off, size_t *len)
{
	const struct kp_section *s = &e->sections[sec];
	const char *str;

	if (!(s->flags & SHF_STRINGS) || !s->data || off >= s->size)
		return NULL;
	if (off > 0 && s->data[off - 1] != '\0')
		return NULL;
	str = kp_elf_string_at(e, sec, off, len);
	if (!str || !kp_is_identifier(str, *len))
		return NULL;
	return str;
}

int sg_add_entry(struct kp_module *m, size_t *cap, const char *name, size_t len, const char *format,
		 const char *secname, uint64_t site, const char *fn, enum kp_symget_method method,
		 bool request, struct kp_err *err)
{
	struct kp_symget *g;

	for (size_t i = 0; i < m->nsymget; i++) {
		const struct kp_symget *o = &m->symget[i];

		if (o->offset != site || strcmp(o->section, secname) || o->method != method)
			continue;
		if (name && o->symbol && !strncmp(o->symbol, name, len) && o->symbol[len] == '\0')
			return 0;
		if (!name && !o->symbol)
			return 0;
	}
	g = kp_module_push(m, &m->symget, &m->nsymget, cap, sizeof(*m->symget));
	if (!g)
		return kp_err_set(err, "out of memory");
	memset(g, 0, sizeof(*g));
	g->symbol = name ? kp_arena_strndup(&m->arena, name, len) : NULL;
	g->format = format ? kp_arena_strdup(&m->arena, format) : NULL;
	g->section = kp_arena_strdup(&m->arena, secname);
	g->function = fn ? kp_arena_strdup(&m->arena, fn) : NULL;
	if ((name && !g->symbol) || (format && !g->format) || !g->section || (fn && !g->function))
		return kp_err_set(err, "out of memory");
	g->offset = site;
	g->method = method;
	g->request = request;
	return 0;
}
