// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The symbol_get() tracer's fallback for sites the walk cannot follow and modules
 * without a backend (method "heuristic"; symbol-get.c describes the methods).
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "symbol-get-trace.h"

/*
 * A site the walk cannot follow, or a module without a backend: one entry, the
 * identifier-like string referenced last before the call inside the enclosing
 * function (where a compiler sets up the argument), or no name at all. Never
 * more than one entry per call site.
 */
int sg_scan_heuristic(struct kp_module *m, struct kp_elf *e, const struct sg_arch *arch, size_t sec,
		      uint64_t site, const struct fn_range *fn, size_t *cap, struct kp_err *err)
{
	static const int64_t deltas[] = { 0, 4, -2 }; /* plain, x86 RIP-relative, s390 PC32DBL */
	const struct kp_section *s = &e->sections[sec];
	const char *best = NULL;
	size_t best_len = 0;

	for (size_t i = sg_reloc_lower(e, sec, fn->start); i < s->nrelocs; i++) {
		const struct kp_reloc *r = &s->relocs[i];
		const struct kp_sym *sym;
		uint32_t tsec;
		uint64_t toff;

		if (r->offset >= fn->end || r->offset >= site)
			break;
		if (sg_reloc_dest(e, arch, sec, r, 0, &tsec, &toff, &sym) != 1)
			continue;
		for (size_t d = 0; d < KP_ARRAY_SIZE(deltas); d++) {
			size_t len;
			const char *str =
				sg_identifier_at(e, tsec, toff + (uint64_t)deltas[d], &len);

			if (str) {
				best = str;
				best_len = len;
				break;
			}
		}
	}
	return sg_add_entry(m, cap, best, best_len, NULL, s->name, site, fn->name,
			    KP_SYMGET_HEURISTIC, false, err);
}

/* A string referenced by a relocation of function @fn at one of the usual deltas. */

const char *sg_function_string(struct kp_elf *e, const struct sg_arch *arch, size_t sec,
			       const struct fn_range *fn, string_pred pred, void *arg)
{
	static const int64_t deltas[] = { 0, 4, -2 };
	const struct kp_section *s = &e->sections[sec];

	for (size_t i = sg_reloc_lower(e, sec, fn->start); i < s->nrelocs; i++) {
		const struct kp_reloc *r = &s->relocs[i];
		const struct kp_sym *sym;
		uint32_t tsec;
		uint64_t toff;

		if (r->offset >= fn->end)
			break;
		if (sg_reloc_dest(e, arch, sec, r, 0, &tsec, &toff, &sym) != 1)
			continue;
		if (!(e->sections[tsec].flags & SHF_STRINGS))
			continue;
		for (size_t d = 0; d < KP_ARRAY_SIZE(deltas); d++) {
			uint64_t o = toff + (uint64_t)deltas[d];
			size_t len;
			const char *str;

			if (o >= e->sections[tsec].size)
				continue;
			if (o > 0 && e->sections[tsec].data &&
			    e->sections[tsec].data[o - 1] != '\0')
				continue;
			str = kp_elf_string_at(e, tsec, o, &len);
			if (str && pred(str, len, arg))
				return str;
		}
	}
	return NULL;
}

static bool is_ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* A printf format that can produce an identifier: identifier characters and conversions. */
bool sg_is_name_format(const char *s, size_t len, void *arg)
{
	bool conv = false;

	(void)arg;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '%') {
			size_t j = i + 1;

			while (j < len && strchr("-+ #0123456789.hlzjt", s[j]))
				j++;
			if (j >= len || !strchr("diouxXsc", s[j]))
				return false;
			conv = true;
			i = j;
		} else if (!is_ident_char(s[i])) {
			return false;
		}
	}
	return conv;
}

/* Collects the NAMEs of "symbol:NAME" (symbol_request() loads the module providing NAME). */
bool sg_collect_request(const char *s, size_t len, void *arg)
{
	struct sg_strings *l = arg;

	if (len <= 7 || memcmp(s, "symbol:", 7))
		return false;
	if (kp_grow(&l->v, &l->cap, l->n + 1, sizeof(*l->v))) {
		l->oom = true;
		return true; /* stop */
	}
	l->v[l->n].s = s + 7;
	l->v[l->n].len = len - 7;
	l->n++;
	return false;
}
