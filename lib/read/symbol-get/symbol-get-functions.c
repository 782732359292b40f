// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The functions of a module sorted by section and start, to find the function enclosing a
 * call site without scanning the whole .symtab per site (riscv64 modules keep thousands of
 * local .L symbols: a scan per site made cx23885's 159 sites cost more than its budget).
 * The answer is the linear scan's: of the sized STT_FUNC symbols of the section containing the
 * offset, the first in .symtab order.
 */
#include <elf.h>
#include <stdlib.h>

#include "symbol-get-trace.h"

static int cmp_fn(const void *a, const void *b)
{
	const struct sg_fn *x = a, *y = b;

	if (x->shndx != y->shndx)
		return x->shndx < y->shndx ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->sym < y->sym ? -1 : x->sym > y->sym;
}

int sg_fns_build(struct sg_fns *f, const struct kp_elf *e)
{
	size_t n = 0;

	f->v = NULL;
	f->n = 0;
	for (size_t i = 1; i < e->nsyms; i++)
		if (e->syms[i].type == STT_FUNC && e->syms[i].size)
			n++;
	if (!n)
		return 0;
	f->v = calloc(n, sizeof(*f->v));
	if (!f->v)
		return -1;
	for (size_t i = 1; i < e->nsyms; i++) {
		const struct kp_sym *s = &e->syms[i];

		if (s->type != STT_FUNC || !s->size)
			continue;
		f->v[f->n].shndx = s->shndx;
		f->v[f->n].sym = (uint32_t)i;
		f->v[f->n].start = s->value;
		/* an end past 2^64 (a crafted size) is clamped: nothing lies beyond it */
		f->v[f->n].end = s->value + s->size < s->value ? UINT64_MAX : s->value + s->size;
		f->n++;
	}
	qsort(f->v, f->n, sizeof(*f->v), cmp_fn);
	/* the running maximum of the ends within each section: where a backward scan may stop */
	for (size_t i = 0; i < f->n; i++) {
		uint64_t prev = i && f->v[i - 1].shndx == f->v[i].shndx ? f->v[i - 1].maxend : 0;

		f->v[i].maxend = f->v[i].end > prev ? f->v[i].end : prev;
	}
	return 0;
}

void sg_fns_release(struct sg_fns *f)
{
	free(f->v);
	f->v = NULL;
	f->n = 0;
}

struct fn_range sg_fns_enclosing(const struct sg_fns *f, const struct kp_elf *e, size_t sec,
				 uint64_t off, uint64_t *work)
{
	struct fn_range r = { 0, e->sections[sec].size, NULL };
	const struct sg_fn *best = NULL;
	size_t lo = 0, hi = f->n;

	/* the first function after (sec, off) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct sg_fn *x = &f->v[mid];

		++*work;
		if (x->shndx < sec || (x->shndx == sec && x->start <= off))
			lo = mid + 1;
		else
			hi = mid;
	}
	/* back over the functions starting at or before @off that may still reach past it */
	for (size_t i = lo; i-- > 0;) {
		const struct sg_fn *x = &f->v[i];

		++*work;
		if (x->shndx != sec || x->maxend <= off)
			break;
		if (off < x->end && (!best || x->sym < best->sym))
			best = x;
	}
	if (best) {
		r.start = best->start;
		r.end = best->end;
		r.name = e->syms[best->sym].name;
	}
	return r;
}
