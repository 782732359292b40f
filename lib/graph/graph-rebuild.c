// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A graph rebuilt from a stored interface, and two graphs compared (graph-rebuild.h).
 */
#include <stdlib.h>
#include <string.h>

#include "graph-rebuild.h"

/* Stub module @i from @sn: name, path, machine, exports (the store's), imports. */
static int stub(struct kp_graph_rebuilt *out, size_t i, const struct kp_graph_stored_node *sn,
		const char *name, const char *path)
{
	struct kp_module *m = &out->stubs[i];

	m->name = kp_arena_strdup(&out->arena, name);
	m->path = kp_arena_strdup(&out->arena, path);
	if (!m->name || !m->path)
		return -1;
	m->machine = sn->machine;
	m->exports = sn->exports;
	m->nexports = sn->nexports;
	m->nimports = sn->nedges;
	if (!sn->nedges)
		return 0;
	m->imports = kp_arena_alloc(&out->arena, sn->nedges * sizeof(*m->imports));
	if (!m->imports)
		return -1;
	for (size_t x = 0; x < sn->nedges; x++) {
		m->imports[x] = (struct kp_import){ .name = sn->edges[x].name,
						    .hash = kp_hash_string(sn->edges[x].name),
						    .symidx = (uint32_t)x + 1,
						    .weak = sn->edges[x].weak };
	}
	return 0;
}

int kp_graph_rebuild(struct kp_graph_rebuilt *out, const struct kp_graph_stored *s,
		     const char *const *names, const char *const *paths,
		     const struct kp_module *const *real, const struct kp_kernel_base *base,
		     struct kp_err *err)
{
	struct kp_module_set set = { 0 };
	size_t n = s->n ? s->n : 1;

	memset(out, 0, sizeof(*out));
	out->stubs = calloc(n, sizeof(*out->stubs));
	out->entries = calloc(n, sizeof(*out->entries));
	if (!out->stubs || !out->entries)
		goto oom;
	for (size_t i = 0; i < s->n; i++) {
		const struct kp_graph_stored_node *sn = &s->nodes[i];
		struct kp_set_entry *e = &out->entries[i];

		if (!real || !real[i]) {
			if (stub(out, i, sn, names[i], paths[i]) < 0)
				goto oom;
			e->mod = &out->stubs[i];
		} else {
			/* read only: kp_graph_build() takes the set's modules as const */
			e->mod = (struct kp_module *)real[i];
		}
		e->path = (char *)out->stubs[i].path;
		if (!e->path && !(e->path = kp_arena_strdup(&out->arena, paths[i])))
			goto oom;
		e->walked = sn->walked;
		e->provider = sn->provider;
	}
	set.entries = out->entries;
	set.n = set.cap = s->n;
	/* one thread: a splice rebuilds while nothing else runs, and the result is the same */
	if (kp_graph_build(&out->g, &set, base, 1, err) < 0) {
		kp_graph_rebuilt_release(out);
		return -1;
	}
	return 0;
oom:
	kp_graph_rebuilt_release(out);
	return kp_err_set(err, "out of memory");
}

void kp_graph_rebuilt_release(struct kp_graph_rebuilt *r)
{
	kp_graph_release(&r->g);
	free(r->stubs);
	free(r->entries);
	kp_arena_release(&r->arena);
	memset(r, 0, sizeof(*r));
}

static bool str_same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static const char *edges_differ(const struct kp_graph *ga, const struct kp_node *a,
				const struct kp_graph *gb, const struct kp_node *b)
{
	if (a->nedges != b->nedges)
		return "edge count";
	for (size_t x = 0; x < a->nedges; x++) {
		const struct kp_edge *p = &a->edges[x], *q = &b->edges[x];

		if (p->kind != q->kind || p->gpl_only != q->gpl_only ||
		    !str_same(kp_edge_import(a, p)->name, kp_edge_import(b, q)->name) ||
		    kp_edge_import(a, p)->weak != kp_edge_import(b, q)->weak)
			return "an edge";
		switch (p->kind) {
		case KP_PROV_MODULE:
			if (p->node != q->node || p->exp - ga->nodes[p->node].mod->exports !=
							  q->exp - gb->nodes[q->node].mod->exports)
				return "an edge's provider";
			break;
		case KP_PROV_VMLINUX:
		case KP_PROV_BASE_MODULE:
			if (p->ksym != q->ksym)
				return "an edge's base record";
			break;
		case KP_PROV_NONE:
		case KP_PROV_LOADER:
			break;
		}
	}
	return NULL;
}

static const char *deps_differ(const struct kp_node *a, const struct kp_node *b)
{
	if (a->ndeps != b->ndeps || a->nbase_deps != b->nbase_deps)
		return "dependency count";
	for (size_t d = 0; d < a->ndeps; d++)
		if (a->deps[d] != b->deps[d])
			return "a dependency";
	for (size_t d = 0; d < a->nbase_deps; d++)
		if (!str_same(a->base_deps[d], b->base_deps[d]))
			return "a base dependency";
	return NULL;
}

const char *kp_graph_differs(const struct kp_graph *a, const struct kp_graph *b, size_t *node)
{
	const char *what = NULL;

	*node = 0;
	if (a->n != b->n || a->base != b->base)
		return "node count or base";
	for (size_t i = 0; i < a->n && !what; i++) {
		const struct kp_node *p = &a->nodes[i], *q = &b->nodes[i];

		*node = i;
		if (!str_same(p->mod->name, q->mod->name) || !str_same(p->path, q->path))
			what = "name or path";
		else if (p->in_cycle != q->in_cycle || p->duplicate_name != q->duplicate_name ||
			 p->walked != q->walked || p->provider != q->provider ||
			 p->mod->machine != q->mod->machine)
			what = "node flags";
		else if (!(what = kp_exports_differ(p->mod->exports, p->mod->nexports,
						    q->mod->exports, q->mod->nexports)) &&
			 !(what = edges_differ(a, p, b, q)))
			what = deps_differ(p, q);
	}
	if (what)
		return what;
	for (size_t k = 0; k < a->n; k++)
		if (a->order[k] != b->order[k]) {
			*node = a->order[k];
			return "load order";
		}
	if (a->ncycles != b->ncycles)
		return "cycle count";
	for (size_t c = 0; c < a->ncycles; c++) {
		if (a->cycles[c].len != b->cycles[c].len ||
		    memcmp(a->cycles[c].nodes, b->cycles[c].nodes,
			   a->cycles[c].len * sizeof(*a->cycles[c].nodes)))
			return "a cycle";
	}
	return NULL;
}
