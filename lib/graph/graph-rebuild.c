// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A graph rebuilt from a stored interface, and two graphs compared (graph-rebuild.h).
 */
#include <stdlib.h>
#include <string.h>

#include "graph-rebuild.h"

/* Stub module @i from @sn: name, path, machine, exports (the store's); its imports later. */
static void stub(struct kp_graph_rebuilt *out, size_t i, const struct kp_graph_stored_node *sn,
		 const char *name, const char *path)
{
	struct kp_module *m = &out->stubs[i];

	/* borrowed: the caller's names and paths outlive @out (graph-rebuild.h) */
	m->name = name;
	m->path = path;
	m->machine = sn->machine;
	m->exports = sn->exports;
	m->nexports = sn->nexports;
}

/* Stub @m's imports from @sn's decoded edges: 0, or -1 (out of memory). */
static int stub_imports(struct kp_graph_rebuilt *r, struct kp_module *m,
			const struct kp_graph_stored_node *sn)
{
	struct kp_import *im;

	if (!sn->nedges)
		return 0;
	im = kp_arena_alloc(&r->arena, sn->nedges * sizeof(*im));
	if (!im)
		return -1;
	for (size_t x = 0; x < sn->nedges; x++) {
		im[x] = (struct kp_import){ .name = sn->edges[x].name,
					    .hash = sn->edges[x].hash,
					    .symidx = (uint32_t)x + 1,
					    .weak = sn->edges[x].weak };
	}
	m->imports = im;
	m->nimports = sn->nedges;
	return 0;
}

void kp_graph_rebuilt_digest(struct kp_graph_rebuilt *r, size_t i, const unsigned char *iface)
{
	_Static_assert(sizeof(r->stubs->iface_sha256) == KP_GRAPH_IFACE_LEN, "a SHA-256");

	/* a real module keeps its own (the caller checked it is the stored one) */
	if (i >= r->g.n || r->entries[i].mod != &r->stubs[i])
		return;
	memcpy(r->stubs[i].iface_sha256, iface, KP_GRAPH_IFACE_LEN);
	r->stubs[i].iface_digested = true;
}

static bool str_same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* A base record looked up by a stored name, for every other edge that imports that name. */
struct memo {
	const char *name; /* the stored name (NULL: not looked up yet) */
	const struct kp_ksym *k;
};

/* Per stored name (kp_graph_stored.nnames), a lookup each in vmlinux and the base modules. */
struct kp_rebuild_lookups {
	struct memo *vmlinux, *base_module;
	size_t n;
};

/*
 * The base record of @se's name (@se->kind KP_PROV_VMLINUX or KP_PROV_BASE_MODULE); with
 * @lk (a whole graph taken), looked up once per stored name: a tree imports the same few
 * thousand names some 140,000 times. A name is one pointer per index in a decoded store; any
 * other (an edge changed by hand) is looked up each time.
 */
static const struct kp_ksym *base_record(const struct kp_graph *g, struct kp_rebuild_lookups *lk,
					 const struct kp_graph_stored_edge *se)
{
	struct memo *m = NULL;
	const struct kp_ksym *k;

	if (lk && se->name_idx < lk->n) {
		m = se->kind == KP_PROV_BASE_MODULE ? &lk->base_module[se->name_idx]
						    : &lk->vmlinux[se->name_idx];
		if (m->name == se->name)
			return m->k;
	}
	if (se->kind == KP_PROV_BASE_MODULE)
		k = kp_graph_base_module_export(g, se->name, se->hash);
	else
		k = g->base ? kp_base_lookup_hashed(g->base, se->name, se->hash) : NULL;
	if (m) {
		m->name = se->name;
		m->k = k;
	}
	return k;
}

/*
 * The stored edge @se of node @i's import @im into @e, taken as it is: only a record of
 * the base (vmlinux, a module known from the base alone) looked up by its name (resolve_edge()
 * in graph.c, the kernel's find_symbol()), and checked: the import's name and weak bit, a
 * provider module's export of that name, a record found, a symbol the loader defines, the
 * class its provider says. NULL, or what does not hold.
 */
static const char *take_edge(const struct kp_graph *g, struct kp_rebuild_lookups *lk, size_t i,
			     const struct kp_import *im, const struct kp_graph_stored_edge *se,
			     struct kp_edge *e)
{
	const struct kp_module *pm;
	const struct kp_ksym *k = NULL;

	if (!str_same(se->name, im->name) || se->weak != (bool)im->weak)
		return "an edge's import";
	e->kind = se->kind;
	switch (se->kind) {
	case KP_PROV_MODULE:
		pm = g->nodes[se->node].mod;
		if (se->node == i || se->exp >= pm->nexports ||
		    !str_same(pm->exports[se->exp].name, se->name))
			return "an edge's export";
		e->node = se->node;
		e->exp = &pm->exports[se->exp];
		e->gpl_only = e->exp->gpl_only;
		break;
	case KP_PROV_VMLINUX:
	case KP_PROV_BASE_MODULE:
		k = base_record(g, lk, se);
		if (!k)
			return "an edge's base record";
		e->ksym = k;
		e->gpl_only = k->gpl_only;
		break;
	case KP_PROV_LOADER:
		if (!kp_loader_defines(g->nodes[i].mod->machine, se->name))
			return "an edge the loader resolves";
		break;
	case KP_PROV_NONE:
		break;
	}
	return e->gpl_only == se->gpl_only ? NULL : "an edge's class";
}

int kp_graph_rebuilt_need(struct kp_graph_rebuilt *r, size_t i, struct kp_err *err)
{
	struct kp_graph *g = &r->g;
	const struct kp_graph_stored_node *sn;
	struct kp_node *nd;
	struct kp_edge *edges = NULL;
	const char *why = NULL;

	if (i >= g->n)
		return kp_err_set(err, "stored graph: no node %zu", i);
	if (r->ready[i])
		return 0;
	if (kp_graph_stored_edges(r->s, i, err) < 0)
		return -1;
	sn = &r->s->nodes[i];
	nd = &g->nodes[i];
	/* a stub gets its imports now; a real module has its own (the stored interface) */
	if (nd->mod == &r->stubs[i] && !r->stubs[i].imports &&
	    stub_imports(r, &r->stubs[i], sn) < 0)
		return kp_err_set(err, "out of memory");
	if (nd->mod->nimports != sn->nedges)
		return kp_err_set(err, "stored graph: the edge count of node %zu", i);
	if (sn->nedges && !(edges = kp_calloc(sn->nedges, sizeof(*edges))))
		return kp_err_set(err, "out of memory");
	for (size_t x = 0; x < sn->nedges && !why; x++)
		why = take_edge(g, r->lk, i, &nd->mod->imports[x], &sn->edges[x], &edges[x]);
	if (why) {
		free(edges);
		return kp_err_set(err, "stored graph: %s of node %zu", why, i);
	}
	nd->edges = edges;
	nd->nedges = sn->nedges;
	if (kp_graph_node_deps(nd) < 0)
		return kp_err_set(err, "out of memory");
	r->ready[i] = true;
	return 0;
}

/* Every node's edges taken, then the dependencies, load order and cycles checked. */
static int take_all(struct kp_graph_rebuilt *r, const size_t *order, struct kp_err *err)
{
	struct kp_graph *g = &r->g;
	const struct kp_graph_stored *s = r->s;

	for (size_t i = 0; i < g->n; i++)
		if (kp_graph_rebuilt_need(r, i, err) < 0)
			return -1;
	if (kp_graph_finish(g, err) < 0)
		return -1;
	/* what the stored run's graph had: its cycles and load order */
	for (size_t i = 0; i < g->n; i++)
		if (g->nodes[i].in_cycle != s->nodes[i].in_cycle)
			return kp_err_set(err, "stored graph: the node flags of node %zu", i);
	for (size_t k = 0; order && k < g->n; k++)
		if (g->order[k] != order[k])
			return kp_err_set(err, "stored graph: the load order at %zu", k);
	return 0;
}

/*
 * The nodes of @s into @out (zeroed first): stubs or @real modules, the graph begun over them
 * (their names and exports indexed), the duplicate names checked against the store's. 0, or
 * -1 with @err and @out released.
 */
static int begin(struct kp_graph_rebuilt *out, struct kp_graph_stored *s, const char *const *names,
		 const char *const *paths, const struct kp_module *const *real,
		 const struct kp_kernel_base *base, struct kp_err *err)
{
	struct kp_module_set set = { 0 };
	size_t n = s->n ? s->n : 1;

	memset(out, 0, sizeof(*out));
	out->s = s;
	out->stubs = calloc(n, sizeof(*out->stubs));
	out->entries = calloc(n, sizeof(*out->entries));
	out->ready = calloc(n, sizeof(*out->ready));
	if (!out->stubs || !out->entries || !out->ready) {
		kp_graph_rebuilt_release(out);
		return kp_err_set(err, "out of memory");
	}
	for (size_t i = 0; i < s->n; i++) {
		const struct kp_graph_stored_node *sn = &s->nodes[i];
		struct kp_set_entry *e = &out->entries[i];

		if (!real || !real[i]) {
			stub(out, i, sn, names[i], paths[i]);
			e->mod = &out->stubs[i];
		} else {
			/* read only: the graph takes the set's modules as const */
			e->mod = (struct kp_module *)real[i];
		}
		/* borrowed, as the stub's (read only: the graph takes the set's paths as const) */
		e->path = (char *)paths[i];
		e->walked = sn->walked;
		e->provider = sn->provider;
	}
	set.entries = out->entries;
	set.n = set.cap = s->n;
	if (kp_graph_begin(&out->g, &set, base, err) < 0) {
		kp_graph_rebuilt_release(out);
		return -1;
	}
	for (size_t i = 0; i < s->n; i++)
		if (out->g.nodes[i].duplicate_name != s->nodes[i].duplicate_name) {
			kp_graph_rebuilt_release(out);
			return kp_err_set(err, "stored graph: the node flags of node %zu", i);
		}
	return 0;
}

int kp_graph_rebuild(struct kp_graph_rebuilt *out, struct kp_graph_stored *s,
		     const char *const *names, const char *const *paths,
		     const struct kp_module *const *real, const size_t *order,
		     const struct kp_kernel_base *base, struct kp_err *err)
{
	struct kp_rebuild_lookups *lk;

	if (begin(out, s, names, paths, real, base, err) < 0)
		return -1;
	/* large: fresh zeroed pages, only those touched faulted in */
	lk = calloc(1, sizeof(*lk));
	if (lk) {
		out->lk = lk;
		lk->n = s->nnames;
		lk->vmlinux = kp_calloc(lk->n, sizeof(*lk->vmlinux));
		lk->base_module = kp_calloc(lk->n, sizeof(*lk->base_module));
	}
	if (!lk || (lk->n && (!lk->vmlinux || !lk->base_module))) {
		kp_graph_rebuilt_release(out);
		return kp_err_set(err, "out of memory");
	}
	if (take_all(out, order, err) < 0) {
		kp_graph_rebuilt_release(out);
		return -1;
	}
	return 0;
}

int kp_graph_rebuild_lazy(struct kp_graph_rebuilt *out, struct kp_graph_stored *s,
			  const char *const *names, const char *const *paths,
			  const struct kp_module *const *real, const size_t *order,
			  const struct kp_kernel_base *base, struct kp_err *err)
{
	struct kp_graph *g = &out->g;
	bool *seen;

	if (begin(out, s, names, paths, real, base, err) < 0)
		return -1;
	/* the stored order, a permutation of the nodes (sim-store.c checked it: again, cheaply) */
	seen = calloc(g->n ? g->n : 1, sizeof(*seen));
	g->order = kp_calloc(g->n ? g->n : 1, sizeof(*g->order));
	if (!seen || !g->order) {
		free(seen);
		kp_graph_rebuilt_release(out);
		return kp_err_set(err, "out of memory");
	}
	for (size_t k = 0; k < g->n; k++) {
		if (!order || order[k] >= g->n || seen[order[k]]) {
			free(seen);
			kp_graph_rebuilt_release(out);
			return kp_err_set(err, "stored graph: the load order at %zu", k);
		}
		seen[order[k]] = true;
		g->order[k] = order[k];
	}
	free(seen);
	for (size_t i = 0; i < g->n; i++)
		g->nodes[i].in_cycle = s->nodes[i].in_cycle;
	return 0;
}

void kp_graph_rebuilt_release(struct kp_graph_rebuilt *r)
{
	kp_graph_release(&r->g);
	free(r->stubs);
	free(r->entries);
	free(r->ready);
	if (r->lk) {
		free(r->lk->vmlinux);
		free(r->lk->base_module);
		free(r->lk);
	}
	kp_arena_release(&r->arena);
	memset(r, 0, sizeof(*r));
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
