// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * When each symbol_get() call site runs: the module's call graph, built from the decoder's
 * branch and call edges (symbol-get-cfg.c: direct calls and jumps, through relocations to
 * local functions, x86_64 PLT32/PC32, arm64 CALL26/JUMP26, ... or encoded displacements),
 * walked forward from the function the loader calls, do_init_module() -> do_one_initcall(
 * mod->init) (kernel/module/main.c, all versions): mod->init is the init_module alias that
 * module_init(fn) defines (include/linux/module.h).
 *
 * A site in a function reached from init by direct calls and jumps (tail calls, .cold parts)
 * runs at load: KP_SYMGET_AT_LOAD, with the shortest path. A site in an .init.text section
 * also runs only during the load (the loader frees .init.text after init returns). Any other
 * site runs when something calls its function through a pointer (file_operations, probe and
 * parameter callbacks, timers, work items) or from the module's exit: KP_SYMGET_WHEN_CALLED.
 * Unknown when the site or init is in code not decoded (no backend for the architecture,
 * a section over the decoding limit).
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "symbol-get-trace.h"

/* One function: an STT_FUNC symbol of a decoded section, at a module-wide position. */
struct reach_fn {
	uint32_t start; /* sg_sec.base + st_value */
	uint32_t end;
	const char *name;
};

struct reach_arc {
	uint32_t from, to; /* indices of struct reach_fn */
};

static int fn_cmp(const void *a, const void *b)
{
	const struct reach_fn *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? 1 : x->end > y->end ? -1 : 0; /* the largest first */
}

static int arc_cmp(const void *a, const void *b)
{
	const struct reach_arc *x = a, *y = b;

	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

/* The loader's entry points are aliases: the function's own name says more. */
static bool is_alias_name(const char *name)
{
	return !strcmp(name, "init_module") || !strcmp(name, "cleanup_module");
}

/* Index of the function holding module-wide position @pos, UINT32_MAX if none. */
static uint32_t fn_at(const struct reach_fn *fn, size_t n, uint32_t pos)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (fn[mid].start <= pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && pos < fn[lo - 1].end ? (uint32_t)(lo - 1) : UINT32_MAX;
}

/* The functions of the decoded sections, sorted, one per start (aliases merged). */
static int collect_functions(const struct sg_ctx *c, struct reach_fn **out, size_t *nout)
{
	const struct kp_elf *e = c->e;
	struct reach_fn *fn = NULL;
	size_t n = 0, cap = 0, k = 0;

	for (size_t i = 1; i < e->nsyms; i++) {
		const struct kp_sym *s = &e->syms[i];
		uint64_t v = c->arch->thumb_bit ? s->value & ~(uint64_t)1 : s->value;

		if (s->type != STT_FUNC || !s->size || !s->name || s->shndx >= e->nsections ||
		    !c->secs[s->shndx].decoded || v >= e->sections[s->shndx].size ||
		    s->size > e->sections[s->shndx].size - v)
			continue;
		if (kp_grow(&fn, &cap, n + 1, sizeof(*fn)) < 0) {
			free(fn);
			return -1;
		}
		fn[n].start = c->secs[s->shndx].base + (uint32_t)v;
		fn[n].end = fn[n].start + (uint32_t)s->size;
		fn[n].name = s->name;
		n++;
	}
	if (n > 1)
		qsort(fn, n, sizeof(*fn), fn_cmp);
	for (size_t i = 0; i < n; i++) {
		if (k && fn[k - 1].start == fn[i].start) {
			if (is_alias_name(fn[k - 1].name) && !is_alias_name(fn[i].name))
				fn[k - 1].name = fn[i].name;
			continue;
		}
		fn[k++] = fn[i];
	}
	*out = fn;
	*nout = k;
	return 0;
}

/* The arcs caller -> callee of the edges @v (calls or jumps) that leave a function. */
static int add_arcs(const struct sg_ctx *c, const struct sg_edge *v, size_t nv,
		    const struct reach_fn *fn, size_t nfn, struct reach_arc **arcs, size_t *n,
		    size_t *cap)
{
	for (size_t i = 0; i < nv; i++) {
		const struct sg_sec *s = &c->secs[v[i].sec];
		uint32_t from = fn_at(fn, nfn, s->base + s->insns[v[i].idx].off);
		uint32_t to = fn_at(fn, nfn, v[i].key);

		if (from == UINT32_MAX || to == UINT32_MAX || from == to)
			continue;
		if (kp_grow(arcs, cap, *n + 1, sizeof(**arcs)) < 0)
			return -1;
		(*arcs)[*n].from = from;
		(*arcs)[*n].to = to;
		(*n)++;
	}
	return 0;
}

/* The path init -> ... -> @f as names separated by ' ', in the module's arena. */
static const char *path_of(struct kp_module *m, const struct reach_fn *fn, const uint32_t *parent,
			   uint32_t f)
{
	size_t len = 0;
	char *s, *p;

	for (uint32_t x = f; x != UINT32_MAX; x = parent[x])
		len += strlen(fn[x].name) + 1;
	s = kp_arena_alloc(&m->arena, len);
	if (!s)
		return NULL;
	p = s + len - 1;
	*p = '\0';
	for (uint32_t x = f; x != UINT32_MAX; x = parent[x]) {
		size_t l = strlen(fn[x].name);

		p -= l;
		memcpy(p, fn[x].name, l);
		if (p > s)
			*--p = ' ';
	}
	return s;
}

/* The section index of the site of @g, 0 if none of that name is decoded. */
static size_t site_section(const struct sg_ctx *c, const struct kp_symget *g)
{
	for (size_t sec = 1; sec < c->e->nsections; sec++)
		if (c->secs[sec].decoded && !strcmp(c->e->sections[sec].name, g->section) &&
		    g->offset < c->e->sections[sec].size)
			return sec;
	return 0;
}

static bool is_init_section(const char *name)
{
	return !strncmp(name, ".init.text", 10);
}

int sg_reach(struct sg_ctx *c, size_t first, struct kp_err *err)
{
	struct kp_module *m = c->m;
	const struct kp_elf *e = c->e;
	struct reach_fn *fn = NULL;
	struct reach_arc *arcs = NULL;
	size_t nfn = 0, narcs = 0, cap = 0, *arc_start = NULL;
	uint32_t *parent = NULL, *queue = NULL, init = UINT32_MAX;
	bool *seen = NULL, init_known = false;
	int ret = -1;

	if (first >= m->nsymget)
		return 0;
	if (collect_functions(c, &fn, &nfn) < 0 ||
	    add_arcs(c, c->calls, c->ncalls, fn, nfn, &arcs, &narcs, &cap) < 0 ||
	    add_arcs(c, c->edges, c->nedges, fn, nfn, &arcs, &narcs, &cap) < 0)
		goto oom;
	if (narcs > 1)
		qsort(arcs, narcs, sizeof(*arcs), arc_cmp);
	arc_start = calloc(nfn + 1, sizeof(*arc_start));
	parent = malloc((nfn ? nfn : 1) * sizeof(*parent));
	queue = malloc((nfn ? nfn : 1) * sizeof(*queue));
	seen = calloc(nfn ? nfn : 1, sizeof(*seen));
	if (!arc_start || !parent || !queue || !seen)
		goto oom;
	for (size_t i = 0, a = 0; i <= nfn; i++) {
		while (a < narcs && arcs[a].from < i)
			a++;
		arc_start[i] = a;
	}
	c->spent += nfn + narcs;

	/* init_module: the function mod->init points to */
	init_known = true;
	for (size_t i = 1; i < e->nsyms; i++) {
		const struct kp_sym *s = &e->syms[i];
		uint64_t v = c->arch->thumb_bit ? s->value & ~(uint64_t)1 : s->value;

		if (!s->name || strcmp(s->name, "init_module") || s->shndx == SHN_UNDEF)
			continue;
		if (s->shndx >= e->nsections || !c->secs[s->shndx].decoded ||
		    v >= e->sections[s->shndx].size) {
			init_known = false;
			break;
		}
		init = fn_at(fn, nfn, c->secs[s->shndx].base + (uint32_t)v);
		init_known = init != UINT32_MAX;
		break;
	}
	/* breadth first: the shortest path from init to each function */
	if (init != UINT32_MAX) {
		size_t head = 0, tail = 0;

		seen[init] = true;
		parent[init] = UINT32_MAX;
		queue[tail++] = init;
		while (head < tail) {
			uint32_t f = queue[head++];

			for (size_t a = arc_start[f]; a < arc_start[f + 1]; a++) {
				uint32_t t = arcs[a].to;

				if (seen[t])
					continue;
				seen[t] = true;
				parent[t] = f;
				queue[tail++] = t;
			}
		}
	}

	for (size_t i = first; i < m->nsymget; i++) {
		struct kp_symget *g = &m->symget[i];
		size_t sec = site_section(c, g);
		uint32_t f;

		g->when = KP_SYMGET_WHEN_UNKNOWN;
		g->path = NULL;
		if (!sec || !init_known)
			continue;
		f = fn_at(fn, nfn, c->secs[sec].base + (uint32_t)g->offset);
		if (f != UINT32_MAX && seen[f]) {
			g->when = KP_SYMGET_AT_LOAD;
			if (!(g->path = path_of(m, fn, parent, f)))
				goto oom;
		} else if (is_init_section(g->section)) {
			g->when = KP_SYMGET_AT_LOAD;
		} else {
			g->when = KP_SYMGET_WHEN_CALLED;
		}
	}
	ret = 0;
	goto out;
oom:
	kp_err_set(err, "out of memory");
out:
	free(fn);
	free(arcs);
	free(arc_start);
	free(parent);
	free(queue);
	free(seen);
	return ret;
}
