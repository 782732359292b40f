// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * symbol_get()/symbol_request()/dvb_attach() targets (include/linux/module.h):
 * each compiles to a call of __symbol_get("name") with the name a string
 * literal in a SHF_STRINGS section; no undefined reference to the target remains.
 *
 * Method "heuristic": for every relocation against __symbol_get in an executable
 * section, the identifier-like strings referenced by relocations inside the
 * enclosing function are the candidate targets.
 */
#include <string.h>

#include "module-internal.h"

struct fn_range {
	uint64_t start;
	uint64_t end;
	const char *name;
};

static struct fn_range enclosing_function(const struct kp_elf *e, size_t sec, uint64_t off)
{
	struct fn_range r = { 0, e->sections[sec].size, NULL };

	for (size_t i = 1; i < e->nsyms; i++) {
		const struct kp_sym *s = &e->syms[i];

		if (s->shndx != sec || s->type != STT_FUNC || !s->size)
			continue;
		if (off >= s->value && off - s->value < s->size) {
			r.start = s->value;
			r.end = s->value + s->size;
			r.name = s->name;
			return r;
		}
	}
	return r;
}

/* A string starting exactly at @off of a SHF_STRINGS section, if it is an identifier. */
static const char *identifier_at(const struct kp_elf *e, size_t sec, uint64_t off, size_t *len)
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

static int add_target(struct kp_module *m, size_t *cap, const char *name, size_t len,
		      const char *secname, uint64_t site, const char *fn, struct kp_err *err)
{
	struct kp_symget *g;

	for (size_t i = 0; i < m->nsymget; i++)
		if (m->symget[i].symbol && !strncmp(m->symget[i].symbol, name, len) &&
		    m->symget[i].symbol[len] == '\0' && m->symget[i].offset == site &&
		    !strcmp(m->symget[i].section, secname))
			return 0;
	g = kp_module_push(m, &m->symget, &m->nsymget, cap, sizeof(*m->symget));
	if (!g)
		return kp_err_set(err, "out of memory");
	g->symbol = kp_arena_strndup(&m->arena, name, len);
	g->section = kp_arena_strdup(&m->arena, secname);
	g->function = fn ? kp_arena_strdup(&m->arena, fn) : NULL;
	if (!g->symbol || !g->section || (fn && !g->function))
		return kp_err_set(err, "out of memory");
	g->offset = site;
	g->method = KP_SYMGET_HEURISTIC;
	return 0;
}

static int scan_call(struct kp_module *m, struct kp_elf *e, size_t sec, const struct kp_reloc *rel,
		     size_t nrel, uint64_t site, size_t *cap, struct kp_err *err)
{
	static const int64_t deltas[] = { 0, 4, -2 }; /* plain, x86 RIP-relative, s390 PC32DBL */
	struct fn_range fn = enclosing_function(e, sec, site);

	for (size_t i = 0; i < nrel; i++) {
		struct kp_target t;

		if (rel[i].offset < fn.start || rel[i].offset >= fn.end)
			continue;
		if (kp_elf_field_target(e, sec, rel[i].offset, 4, &t, err) < 0)
			return -1;
		if (!t.in_section)
			continue;
		for (size_t d = 0; d < KP_ARRAY_SIZE(deltas); d++) {
			size_t len;
			const char *s = identifier_at(e, t.shndx, t.offset + (uint64_t)deltas[d], &len);

			if (!s)
				continue;
			if (add_target(m, cap, s, len, e->sections[sec].name, site, fn.name, err) < 0)
				return -1;
			break;
		}
	}
	return 0;
}

int kp_read_symbol_get(struct kp_module *m, struct kp_elf *e, struct kp_err *err)
{
	uint32_t get_idx = 0, put_idx = 0;
	size_t cap = 0;

	for (size_t i = 0; i < m->nimports; i++) {
		if (!strcmp(m->imports[i].name, "__symbol_get"))
			get_idx = m->imports[i].symidx;
		else if (!strcmp(m->imports[i].name, "__symbol_put"))
			put_idx = m->imports[i].symidx;
	}
	for (size_t sec = 1; sec < e->nsections; sec++) {
		const struct kp_reloc *rel;
		size_t nrel;

		if (!(e->sections[sec].flags & SHF_EXECINSTR) || !e->sections[sec].data)
			continue;
		if (kp_elf_relocs(e, sec, &rel, &nrel, err) < 0)
			return -1;
		for (size_t i = 0; i < nrel; i++) {
			if (put_idx && rel[i].sym == put_idx)
				m->nsymput++;
			if (!get_idx || rel[i].sym != get_idx)
				continue;
			if (scan_call(m, e, sec, rel, nrel, rel[i].offset, &cap, err) < 0)
				return -1;
		}
	}
	return 0;
}
