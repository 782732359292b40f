// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * graph-store.c: a graph's interface as bytes, and compared back. A built world (exports
 * with namespaces, CRCs and every class, imports resolved to a module of the set, vmlinux
 * and nobody, a weak one) and the 6.1 fixtures: encoded, decoded and compared the
 * same; each stored field changed in the graph is a difference the comparison names (the
 * node flags, an export's class, CRC and namespace, an import's weak bit, an edge's class
 * and provider); a damaged store (every truncation, every byte of a small store flipped,
 * every 32-bit field set to extremes) decodes to an error or to a store whose every edge
 * names a node and an export that exist, and comparing it reads nothing past it (the
 * sanitizer build checks that). Read lazily (kp_graph_store_open(), kp_graph_rebuild_lazy()):
 * the stored load order and cycle flags, no edge until a node is asked for, then that node's
 * edges and dependencies the graph's and no other's; a node's damaged edges refused only when
 * it is asked for; a KPGRST01 store refused. The encoder's parts (a cold run's store is
 * written from them) joined are its bytes.
 */
#include <ftw.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "builder.h"
#include "graph/graph-rebuild.h"
#include "graph/graph-store.h"
#include "util/symbol-index.h"

/* @g's interface encoded into *@p of *@len bytes (aborts on failure). */
static void encode(const struct kp_graph *g, unsigned char **p, size_t *len)
{
	struct kp_byte_writer w = { 0 };

	kp_graph_store_encode(&w, g);
	if (w.failed)
		abort();
	*p = w.p;
	*len = w.len;
}

/*
 * The layout of graph-store.h written the plainest way, a name looked up by its string each
 * time (the first encoder): the encoder's bytes must be these, however it finds a name.
 */
struct ref_names {
	struct kp_symbol_index index;
	struct kp_byte_writer table;
	size_t n;
};

static uint32_t ref_name(struct ref_names *nm, const char *name)
{
	const struct kp_symbol_index_entry *e;

	if (!name)
		return KP_BW_NONE;
	e = kp_symbol_index_find(&nm->index, name);
	if (e)
		return (uint32_t)((uintptr_t)e->value - 1);
	if (kp_symbol_index_add(&nm->index, name, (void *)(uintptr_t)(nm->n + 1)) < 0)
		abort();
	kp_bw_put(&nm->table, name, strlen(name) + 1);
	return (uint32_t)nm->n++;
}

/* @v in 7-bit groups, low first, the top bit set while more follow. */
static void ref_var(struct kp_byte_writer *w, uint32_t v)
{
	while (v >= 0x80) {
		kp_bw_put8(w, (v & 0x7f) | 0x80);
		v >>= 7;
	}
	kp_bw_put8(w, v);
}

static void ref_encode(const struct kp_graph *g, unsigned char **p, size_t *len)
{
	struct kp_byte_writer w = { 0 }, body = { 0 };
	struct ref_names nm = { 0 };

	if (kp_symbol_index_init(&nm.index, 64) < 0)
		abort();
	for (size_t i = 0; i < g->n; i++) {
		const struct kp_node *nd = &g->nodes[i];
		const struct kp_module *m = nd->mod;
		size_t at;

		kp_bw_put8(&body, (nd->in_cycle ? 1u : 0u) | (nd->duplicate_name ? 2u : 0u) |
					  (nd->walked ? 4u : 0u) | (nd->provider ? 8u : 0u));
		kp_bw_put8(&body, m->machine & 0xff);
		kp_bw_put8(&body, m->machine >> 8);
		kp_bw_put32(&body, m->nexports);
		for (size_t x = 0; x < m->nexports; x++) {
			const struct kp_export *e = &m->exports[x];

			kp_bw_put32(&body, ref_name(&nm, e->name));
			kp_bw_put32(&body, ref_name(&nm, e->ns));
			kp_bw_put8(&body, (unsigned)e->table);
			kp_bw_put8(&body, (e->gpl_only ? 1u : 0u) | (e->has_crc ? 2u : 0u));
			kp_bw_put32(&body, e->crc);
		}
		kp_bw_put32(&body, nd->nedges);
		at = body.len;
		kp_bw_put32(&body, 0);
		for (size_t x = 0; x < nd->nedges; x++) {
			const struct kp_edge *e = &nd->edges[x];
			const struct kp_import *im = kp_edge_import(nd, e);

			kp_bw_put8(&body, (unsigned)e->kind | (e->gpl_only ? 8u : 0u) |
						  (im->weak ? 16u : 0u));
			ref_var(&body, ref_name(&nm, im->name));
			if (e->kind == KP_PROV_MODULE) {
				ref_var(&body, e->node);
				ref_var(&body, (uint32_t)(e->exp - g->nodes[e->node].mod->exports));
			}
		}
		if (!body.failed)
			kp_store32(body.p + at, (uint32_t)(body.len - at - 4));
	}
	kp_bw_put(&w, "KPGRST02", 8);
	kp_bw_put32(&w, nm.n);
	kp_bw_put(&w, nm.table.p, nm.table.len);
	kp_bw_put32(&w, g->n);
	kp_bw_put(&w, body.p, body.len);
	if (w.failed || body.failed || nm.table.failed)
		abort();
	kp_symbol_index_release(&nm.index);
	free(nm.table.p);
	free(body.p);
	*p = w.p;
	*len = w.len;
}

/* Whether @p of @len bytes is ref_encode()'s bytes for @g; its name count in *@names. */
static bool is_ref_encoding(const unsigned char *p, size_t len, const struct kp_graph *g,
			    uint32_t *names)
{
	unsigned char *q;
	size_t qlen;
	bool same;

	ref_encode(g, &q, &qlen);
	same = qlen == len && !memcmp(p, q, len);
	*names = len >= 12 ? kp_load32(p + 8, false) : 0;
	free(q);
	return same;
}

/*
 * Whether kp_graph_store_encode_parts()'s four parts, one after another, are @p of @len bytes
 * (kp_graph_store_encode()'s): the bytes a cold run's store is written from.
 */
static bool parts_join(const unsigned char *p, size_t len, const struct kp_graph *g)
{
	struct kp_graph_store_parts parts;
	struct kp_byte_writer w = { 0 };
	bool same;

	if (kp_graph_store_encode_parts(g, &parts) < 0)
		return false;
	kp_bw_put(&w, parts.head, sizeof(parts.head));
	kp_bw_put(&w, parts.table, parts.tlen);
	kp_bw_put(&w, parts.mid, sizeof(parts.mid));
	kp_bw_put(&w, parts.body, parts.blen);
	same = !w.failed && parts.len == len && w.len == len && !memcmp(w.p, p, len);
	kp_graph_store_parts_release(&parts);
	free(w.p);
	return same;
}

/* What the comparison of @g's store with @g says ("" for the same), "refused" when not read. */
static const char *stored_vs(const unsigned char *p, size_t len, const struct kp_graph *g,
			     char *buf, size_t size)
{
	struct kp_graph_stored s;
	struct kp_err err;
	const char *what;
	size_t node;

	if (kp_graph_store_decode(p, len, &s, &err) < 0)
		return "refused";
	what = kp_graph_stored_differs(&s, g, &node);
	if (what)
		snprintf(buf, size, "%s of %s", what, g->nodes[node].mod->name);
	else
		snprintf(buf, size, "%s", "");
	kp_graph_stored_release(&s);
	return buf;
}

/*
 * @g rebuilt from the decoded store @s (of @g->n nodes) with the load order @order, the
 * module of node @keep (SIZE_MAX: none) used as it is and the others stubs: what
 * kp_graph_differs() says against @g ("" for the same), or "not rebuilt: why".
 */
static const char *rebuilt_from(struct kp_graph_stored *s, const struct kp_graph *g,
				const size_t *order, size_t keep, char *buf, size_t size)
{
	const char **names = calloc(g->n + 1, sizeof(*names));
	const char **paths = calloc(g->n + 1, sizeof(*paths));
	const struct kp_module **real = calloc(g->n + 1, sizeof(*real));
	struct kp_graph_rebuilt rb;
	struct kp_err err;
	const char *what;
	size_t node;

	if (!names || !paths || !real || s->n != g->n)
		abort();
	for (size_t i = 0; i < g->n; i++) {
		names[i] = g->nodes[i].mod->name;
		paths[i] = g->nodes[i].path;
		real[i] = i == keep ? g->nodes[i].mod : NULL;
	}
	if (kp_graph_rebuild(&rb, s, names, paths, real, order, g->base, &err) < 0) {
		/* the message cut to the caller's buffer (%.*s: no truncation warning) */
		snprintf(buf, size, "not rebuilt: %.*s", (int)(size > 14 ? size - 14 : 0), err.msg);
	} else {
		what = kp_graph_differs(&rb.g, g, &node);
		snprintf(buf, size, "%s%s%s", what ? what : "", what ? " of " : "",
			 what ? g->nodes[node].mod->name : "");
		/* the stubs carry no facts but the interface */
		for (size_t i = 0; i < rb.g.n; i++)
			if (i != keep &&
			    (rb.g.nodes[i].mod->license || rb.g.nodes[i].mod->nmodinfo))
				snprintf(buf, size, "node %zu has facts", i);
		kp_graph_rebuilt_release(&rb);
	}
	free(names);
	free(paths);
	free(real);
	return buf;
}

/* @g rebuilt from its store @p (@len bytes): rebuilt_from() with @g's load order. */
static const char *rebuilt_vs(const unsigned char *p, size_t len, const struct kp_graph *g,
			      size_t keep, char *buf, size_t size)
{
	struct kp_graph_stored s;
	struct kp_err err;

	if (kp_graph_store_decode(p, len, &s, &err) < 0)
		abort();
	rebuilt_from(&s, g, g->order, keep, buf, size);
	kp_graph_stored_release(&s);
	return buf;
}

/* Every edge of @s names a node and an export that exist. */
static bool in_bounds(const struct kp_graph_stored *s)
{
	for (size_t i = 0; i < s->n; i++)
		for (size_t x = 0; x < s->nodes[i].nedges; x++) {
			const struct kp_graph_stored_edge *e = &s->nodes[i].edges[x];

			if (!e->name || e->kind > KP_PROV_LOADER ||
			    (e->kind == KP_PROV_MODULE &&
			     (e->node >= s->n || e->exp >= s->nodes[e->node].nexports)))
				return false;
		}
	return true;
}

struct forged {
	size_t tries, refused, unsafe, rebuilt;
};

static void try_forged(const unsigned char *p, size_t len, const struct kp_graph *g,
		       struct forged *f)
{
	struct kp_graph_stored s;
	struct kp_err err;
	size_t node;

	f->tries++;
	if (kp_graph_store_decode(p, len, &s, &err) < 0) {
		f->refused++;
		return;
	}
	f->unsafe += !in_bounds(&s);
	(void)kp_graph_stored_differs(&s, g, &node);
	/* a store that decodes is rebuilt from (its edges taken as they are): an error or a graph
	 */
	if (s.n == g->n && in_bounds(&s)) {
		char buf[256];

		f->rebuilt += strncmp(rebuilt_from(&s, g, g->order, SIZE_MAX, buf, sizeof(buf)),
				      "not rebuilt", 11) != 0;
	}
	kp_graph_stored_release(&s);
}

/* Every truncation refused; every byte flipped (every @step-th) and every 32-bit word set to
 * 0, 1, 0x7fffffff and ~0: refused or in bounds. */
static void damage(struct tap *t, const unsigned char *p, size_t len, size_t step,
		   const struct kp_graph *g, const char *what)
{
	static const uint32_t words[] = { 0, 1, 0x7fffffff, 0xffffffff };
	unsigned char *q = malloc(len ? len : 1);
	struct forged tr = { 0 }, fl = { 0 }, wd = { 0 };

	if (!q)
		abort();
	for (size_t n = 0; n < len; n++) {
		memcpy(q, p, n); /* a copy of exactly @n bytes: the sanitizer sees a read past it */
		try_forged(q, n, g, &tr);
	}
	tap_is_intf(t, (long)tr.refused, (long)len, "%s: all %zu truncations refused", what, len);
	memcpy(q, p, len);
	for (size_t i = 0; i < len; i += step)
		for (unsigned bit = 0; bit < 8; bit++) {
			q[i] ^= (unsigned char)(1u << bit);
			try_forged(q, len, g, &fl);
			q[i] = p[i];
		}
	for (size_t i = 0; i + 4 <= len; i += step)
		for (size_t w = 0; w < KP_ARRAY_SIZE(words); w++) {
			kp_store32(q + i, words[w]);
			try_forged(q, len, g, &wd);
			memcpy(q + i, p + i, 4);
		}
	tap_is_intf(
		t, (long)(fl.unsafe + wd.unsafe), 0,
		"%s: %zu bit flips (%zu refused, %zu rebuilt), %zu words forged (%zu refused, %zu "
		"rebuilt): none decoded out of bounds",
		what, fl.tries, fl.refused, fl.rebuilt, wd.tries, wd.refused, wd.rebuilt);
	free(q);
}

/* The first edge of node @i of kind @kind, or NULL. */
static struct kp_edge *edge_of(struct kp_graph *g, size_t i, enum kp_provider_kind kind)
{
	for (size_t x = 0; x < g->nodes[i].nedges; x++)
		if (g->nodes[i].edges[x].kind == kind)
			return &g->nodes[i].edges[x];
	return NULL;
}

/*
 * @g's store @p (@len bytes) decoded, then each stored field a rebuild checks forged in it
 * (node @u's module edge @me, its vmlinux edge @ve, its edge to nobody, its flags): the
 * rebuild refuses it; an edge's provider dropped (taken as it is): the comparison says so.
 */
static void forged_rebuild(struct tap *t, const struct kp_graph *g, const unsigned char *p,
			   size_t len, size_t u, size_t me, size_t ve)
{
	struct kp_graph_stored_edge *m, *v, *none = NULL;
	size_t *order = malloc(g->n * sizeof(*order));
	struct kp_graph_stored s;
	char buf[256], want[256];
	struct kp_err err;

	if (!order || g->n < 2 || kp_graph_store_decode(p, len, &s, &err) < 0)
		abort();
	m = &s.nodes[u].edges[me];
	v = &s.nodes[u].edges[ve];
	for (size_t x = 0; x < s.nodes[u].nedges; x++)
		if (s.nodes[u].edges[x].kind == KP_PROV_NONE)
			none = &s.nodes[u].edges[x];
	if (!none || m->kind != KP_PROV_MODULE || !m->gpl_only)
		abort();
#define FORGED(expr, restore, keep, ord, why)                                              \
	do {                                                                               \
		expr;                                                                      \
		snprintf(want, sizeof(want), "not rebuilt: stored graph: %s %zu", why, u); \
		tap_is_str(t, rebuilt_from(&s, g, ord, keep, buf, sizeof(buf)), want,      \
			   "forged: " #expr ": not rebuilt");                              \
		restore;                                                                   \
	} while (0)
	FORGED(m->exp ^= 1, m->exp ^= 1, SIZE_MAX, g->order, "an edge's export of node");
	FORGED(m->node = (uint32_t)u, m->node = g->nodes[u].edges[me].node, SIZE_MAX, g->order,
	       "an edge's export of node");
	FORGED(m->gpl_only ^= 1, m->gpl_only ^= 1, SIZE_MAX, g->order, "an edge's class of node");
	FORGED(none->kind = KP_PROV_VMLINUX, none->kind = KP_PROV_NONE, SIZE_MAX, g->order,
	       "an edge's base record of node");
	FORGED(v->kind = KP_PROV_BASE_MODULE, v->kind = KP_PROV_VMLINUX, SIZE_MAX, g->order,
	       "an edge's base record of node");
	FORGED(none->kind = KP_PROV_LOADER, none->kind = KP_PROV_NONE, SIZE_MAX, g->order,
	       "an edge the loader resolves of node");
	FORGED(none->weak ^= 1, none->weak ^= 1, u, g->order, "an edge's import of node");
	FORGED(s.nodes[u].nedges--, s.nodes[u].nedges++, u, g->order, "the edge count of node");
	FORGED(s.nodes[u].in_cycle ^= 1, s.nodes[u].in_cycle ^= 1, SIZE_MAX, g->order,
	       "the node flags of node");
	FORGED(s.nodes[u].duplicate_name ^= 1, s.nodes[u].duplicate_name ^= 1, SIZE_MAX, g->order,
	       "the node flags of node");
#undef FORGED
	memcpy(order, g->order, g->n * sizeof(*order));
	order[0] = g->order[1];
	order[1] = g->order[0];
	snprintf(want, sizeof(want), "not rebuilt: stored graph: the load order at 0");
	tap_is_str(t, rebuilt_from(&s, g, order, SIZE_MAX, buf, sizeof(buf)), want,
		   "forged: the load order: not rebuilt");
	/* the store is trusted for what it says: an edge dropped is a graph the oracle tells */
	m->kind = KP_PROV_NONE;
	m->gpl_only = false;
	tap_is_str(t, rebuilt_from(&s, g, g->order, SIZE_MAX, buf, sizeof(buf)), "an edge of user",
		   "forged: a module edge made an edge to nobody: the comparison");
	kp_graph_stored_release(&s);
	free(order);
}

/* Whether node @i of @a (rebuilt) has node @i of @b's edges and dependencies. */
static bool same_node(const struct kp_graph *a, const struct kp_graph *b, size_t i)
{
	const struct kp_node *p = &a->nodes[i], *q = &b->nodes[i];

	if (p->nedges != q->nedges || p->ndeps != q->ndeps || p->nbase_deps != q->nbase_deps)
		return false;
	for (size_t x = 0; x < p->nedges; x++) {
		const struct kp_edge *e = &p->edges[x], *f = &q->edges[x];

		if (e->kind != f->kind || e->gpl_only != f->gpl_only ||
		    strcmp(kp_edge_import(p, e)->name, kp_edge_import(q, f)->name) ||
		    (e->kind == KP_PROV_MODULE &&
		     (e->node != f->node || strcmp(e->exp->name, f->exp->name))) ||
		    ((e->kind == KP_PROV_VMLINUX || e->kind == KP_PROV_BASE_MODULE) &&
		     e->ksym != f->ksym))
			return false;
	}
	for (size_t d = 0; d < p->ndeps; d++)
		if (p->deps[d] != q->deps[d])
			return false;
	return true;
}

/*
 * @g's store @p (@len bytes) opened and rebuilt lazily (graph-rebuild.h): its load order and
 * cycle flags @g's, no node with an edge; node @u asked for: its edges and dependencies are
 * @g's, asked again nothing changes, every other node still without. Then @u's edge bytes
 * damaged (its first edge's kind past the last): the store opens and rebuilds lazily, another
 * node is taken, @u is refused. A KPGRST01 store: refused.
 */
static void lazy(struct tap *t, const struct kp_graph *g, const unsigned char *p, size_t len,
		 size_t u, const char *what)
{
	const char **names = calloc(g->n + 1, sizeof(*names));
	const char **paths = calloc(g->n + 1, sizeof(*paths));
	unsigned char *q = malloc(len);
	struct kp_graph_stored s;
	struct kp_graph_rebuilt rb;
	struct kp_err err = { 0 };
	size_t with = 0, other = u ? 0 : 1, at;
	bool order = true, cyc = true;
	char want[160];

	if (!names || !paths || !q || g->n < 2)
		abort();
	for (size_t i = 0; i < g->n; i++) {
		names[i] = g->nodes[i].mod->name;
		paths[i] = g->nodes[i].path;
	}
	if (kp_graph_store_open(p, len, &s, &err) < 0 ||
	    kp_graph_rebuild_lazy(&rb, &s, names, paths, NULL, g->order, g->base, &err) < 0)
		abort();
	for (size_t i = 0; i < g->n; i++) {
		order &= rb.g.order[i] == g->order[i];
		cyc &= rb.g.nodes[i].in_cycle == g->nodes[i].in_cycle;
		with += rb.g.nodes[i].nedges || rb.g.nodes[i].ndeps;
	}
	tap_ok(t, order && cyc && !with && !rb.g.ncycles,
	       "%s: rebuilt lazily: the load order and cycle flags the store's, no edge", what);
	tap_ok(t,
	       kp_graph_rebuilt_need(&rb, u, &err) == 0 && same_node(&rb.g, g, u) &&
		       kp_graph_rebuilt_need(&rb, u, &err) == 0 && same_node(&rb.g, g, u),
	       "%s: node %zu asked for (twice): its %zu edges and %zu dependencies the graph's",
	       what, u, g->nodes[u].nedges, g->nodes[u].ndeps);
	with = 0;
	for (size_t i = 0; i < g->n; i++)
		with += i != u &&
			(rb.g.nodes[i].nedges || s.nodes[i].edges_read != !s.nodes[i].nedges);
	tap_is_intf(t, (long)with, 0, "%s: the other nodes' edges not decoded, none taken", what);
	kp_graph_rebuilt_release(&rb);
	at = (size_t)(s.nodes[u].ebytes - p);
	kp_graph_stored_release(&s);
	memcpy(q, p, len);
	q[at] = KP_PROV_LOADER + 1;
	if (kp_graph_store_open(q, len, &s, &err) < 0 ||
	    kp_graph_rebuild_lazy(&rb, &s, names, paths, NULL, g->order, g->base, &err) < 0)
		abort();
	tap_ok(t, kp_graph_rebuilt_need(&rb, other, &err) == 0 && same_node(&rb.g, g, other),
	       "%s: node %zu's edges damaged: node %zu is taken", what, u, other);
	snprintf(want, sizeof(want), "stored graph: edge kind or flags of node %zu", u);
	err.msg[0] = '\0';
	tap_ok(t, kp_graph_rebuilt_need(&rb, u, &err) < 0 && !strcmp(err.msg, want),
	       "%s: node %zu's edges damaged: refused when asked for (%s)", what, u, err.msg);
	kp_graph_rebuilt_release(&rb);
	kp_graph_stored_release(&s);
	memcpy(q, p, len);
	q[7] = '1';
	err.msg[0] = '\0';
	tap_ok(t,
	       kp_graph_store_open(q, len, &s, &err) < 0 && !strcmp(err.msg, "stored graph: magic"),
	       "%s: a KPGRST01 store refused (%s)", what, err.msg);
	free(q);
	free(names);
	free(paths);
}

/* The store of @g, then each stored field changed in @g: the comparison names it. */
static void changes(struct tap *t, struct tb_world *w, const char *user, const char *prov)
{
	struct kp_graph *g = &w->g;
	size_t u = tb_node(w, user), pv = tb_node(w, prov);
	struct kp_module *pm = (struct kp_module *)g->nodes[pv].mod;
	struct kp_import *im = (struct kp_import *)g->nodes[u].mod->imports;
	struct kp_edge *me = edge_of(g, u, KP_PROV_MODULE);
	struct kp_edge *ve = edge_of(g, u, KP_PROV_VMLINUX);
	const struct kp_export *was_exp;
	const char *ns;
	char buf[256], want[256];
	unsigned char *p;
	size_t len, flen, at;

	if (!me || !ve || pm->nexports < 2)
		abort();
	encode(g, &p, &len);
	tap_is_str(t, stored_vs(p, len, g, buf, sizeof(buf)), "", "built: the store is the graph");
	tap_is_str(t, rebuilt_vs(p, len, g, SIZE_MAX, buf, sizeof(buf)), "",
		   "built: rebuilt from the store, every node a stub: the graph");
	tap_is_str(t, rebuilt_vs(p, len, g, pv, buf, sizeof(buf)), "",
		   "built: rebuilt from the store, the provider's module as it is: the graph");
	tap_ok(t, kp_graph_store_compare(p, len, g, &flen, &at) == 0 && flen == len && at == len,
	       "built: the store copied is a fresh encoding, byte for byte (%zu bytes)", len);
	tap_ok(t,
	       kp_graph_store_compare(p, len - 1, g, &flen, &at) == 1 && flen == len &&
		       at == len - 1,
	       "built: the store cut by a byte: differs at its end");
	damage(t, p, len, 1, g, "built");
#define CHANGED(field, expr, restore, who)                                               \
	do {                                                                             \
		expr;                                                                    \
		snprintf(want, sizeof(want), "%s of %s", field, who);                    \
		tap_is_str(t, stored_vs(p, len, g, buf, sizeof(buf)), want,              \
			   "built: " #expr " is a difference");                          \
		tap_ok(t,                                                                \
		       kp_graph_store_compare(p, len, g, &flen, &at) == 1 && at < len && \
			       at < flen,                                                \
		       "built: " #expr ": the store copied differs (at byte %zu)", at);  \
		restore;                                                                 \
	} while (0)
	CHANGED("node flags", g->nodes[u].in_cycle ^= 1, g->nodes[u].in_cycle ^= 1, user);
	CHANGED("node flags", g->nodes[pv].walked ^= 1, g->nodes[pv].walked ^= 1, prov);
	CHANGED("an export", pm->exports[0].gpl_only ^= 1, pm->exports[0].gpl_only ^= 1, prov);
	CHANGED("an export", pm->exports[0].crc ^= 1, pm->exports[0].crc ^= 1, prov);
	CHANGED("an export", pm->exports[0].has_crc ^= 1, pm->exports[0].has_crc ^= 1, prov);
	ns = pm->exports[0].ns;
	CHANGED("an export", pm->exports[0].ns = ns ? NULL : "NS", pm->exports[0].ns = ns, prov);
	CHANGED("export count", pm->nexports--, pm->nexports++, prov);
	CHANGED("an edge", me->gpl_only ^= 1, me->gpl_only ^= 1, user);
	/* the rebuild resolves the stored imports again: the graph's own edge changed differs */
	me->gpl_only ^= 1;
	tap_is_str(t, rebuilt_vs(p, len, g, SIZE_MAX, buf, sizeof(buf)), "an edge of user",
		   "built: an edge's class changed in the graph: the rebuilt one differs");
	me->gpl_only ^= 1;
	CHANGED("an edge", ve->kind = KP_PROV_NONE, ve->kind = KP_PROV_VMLINUX, user);
	CHANGED("an edge", im[me - g->nodes[u].edges].weak ^= 1,
		im[me - g->nodes[u].edges].weak ^= 1, user);
	was_exp = me->exp;
	CHANGED("an edge's provider", me->exp = &pm->exports[was_exp == pm->exports ? 1 : 0],
		me->exp = was_exp, user);
#undef CHANGED
	tap_is_str(t, stored_vs(p, len, g, buf, sizeof(buf)), "", "built: restored, the same");
	tap_ok(t, kp_graph_store_compare(p, len, g, &flen, &at) == 0,
	       "built: restored, the store copied is a fresh encoding");
	forged_rebuild(t, g, p, len, u, (size_t)(me - g->nodes[u].edges),
		       (size_t)(ve - g->nodes[u].edges));
	lazy(t, g, p, len, u, "built");
	free(p);
}

static void built(struct tap *t)
{
	struct tb_world w;
	struct kp_module *m;
	unsigned char *p;
	uint32_t names;
	size_t len;
	bool same;

	tb_init(&w, "6.12.37");
	tb_symvers(&w, "0x00000001\tprintk\tvmlinux\tEXPORT_SYMBOL\t\n"
		       "0x00000002\tkmalloc\tvmlinux\tEXPORT_SYMBOL_GPL\tMM\n");
	m = tb_module(&w, "prov");
	tb_modinfo(m, "license", "GPL");
	tb_export(m, "prov_a", KP_KSYMTAB_GPL);
	tb_export_ns(m, "PROV");
	tb_export_crc(m, 0x1234);
	tb_export(m, "prov_b", KP_KSYMTAB);
	tb_import(m, "printk");
	m = tb_module(&w, "user");
	tb_modinfo(m, "license", "GPL");
	tb_import(m, "printk");
	tb_import(m, "prov_a");
	tb_import(m, "prov_b");
	tb_import_weak(m, "nobody_has_it");
	tb_export(m, "user_c", KP_KSYMTAB);
	m = tb_module(&w, "cyc");
	tb_modinfo(m, "license", "GPL");
	tb_import(m, "user_c");
	tb_import(m, "kmalloc");
	tb_export(m, "cyc_d", KP_KSYMTAB_GPL);
	tb_graph(&w);
	encode(&w.g, &p, &len);
	/* printk, kmalloc, PROV, prov_a, prov_b, user_c, nobody_has_it, cyc_d: each once */
	same = is_ref_encoding(p, len, &w.g, &names);
	tap_ok(t, same && names == 8,
	       "built: the plain encoder's bytes (%zu), each of the %u names once", len, names);
	tap_ok(t, parts_join(p, len, &w.g), "built: the encoder's parts joined are its bytes");
	free(p);
	changes(t, &w, "user", "prov");
	tb_free(&w);
}

/*
 * More name pointers than the encoder's first pointer table holds (7,980: 40 modules import
 * 3,000 names, each name by two of them, 20 export 99 each): it grows, each name once.
 */
static void many_names(struct tap *t)
{
	/* the builder keeps the names' pointers: each import its own copy of the string */
	static char strs[40 * 250][24];
	struct tb_world w;
	unsigned char *p;
	uint32_t names;
	size_t len, ns = 0;
	bool same;

	tb_init(&w, "6.12.37");
	for (int k = 0; k < 40; k++) {
		struct kp_module *m;

		snprintf(strs[ns], sizeof(strs[ns]), "many_%d", k);
		m = tb_module(&w, strs[ns++]);
		for (int j = 0; j < 150; j++) {
			snprintf(strs[ns], sizeof(strs[ns]), "nobody_%d", (k % 20) * 150 + j);
			tb_import(m, strs[ns++]);
		}
		for (int j = 0; j < 99 && k < 20; j++) {
			snprintf(strs[ns], sizeof(strs[ns]), "own_%d_%d", k, j);
			tb_export(m, strs[ns++], KP_KSYMTAB);
		}
	}
	tb_graph(&w);
	encode(&w.g, &p, &len);
	same = is_ref_encoding(p, len, &w.g, &names);
	tap_is_intf(t, same ? (long)names : -1L, 3000 + 20 * 99,
		    "many names: the plain encoder's bytes (%zu), %u names", len, names);
	free(p);
	tb_free(&w);
}

static struct tb_world *tree_world;

static int add_ko(const char *path, const struct stat *st, int type, struct FTW *f)
{
	size_t n = strlen(path);

	(void)st;
	if (type == FTW_F && f->level <= 1 && n > 3 && !strcmp(path + n - 3, ".ko"))
		tb_module_file(tree_world, path);
	return 0;
}

static void fixtures(struct tap *t)
{
	struct tb_world w;
	char buf[256], *dir;
	unsigned char *p;
	size_t len, medges = 0, flen, at;
	uint32_t names;
	bool same;

	tb_init_distro(&w, "6.1.192", KP_DISTRO_DEBIAN);
	w.facts.modversions = true;
	tb_base_file(&w, tap_srcpath("fixtures/ko/6.1/Module.symvers.gz"));
	/* tap_srcpath() gives one buffer: the directory copied first */
	dir = strdup(tap_srcpath("fixtures/ko/6.1"));
	if (!dir)
		abort();
	tree_world = &w;
	if (nftw(dir, add_ko, 32, FTW_PHYS) != 0)
		abort();
	free(dir);
	tb_graph(&w);
	for (size_t i = 0; i < w.g.n; i++)
		for (size_t x = 0; x < w.g.nodes[i].nedges; x++)
			medges += w.g.nodes[i].edges[x].kind == KP_PROV_MODULE;
	tap_is_intf(t, (long)w.g.n, 47, "6.1 fixtures: %zu modules", w.g.n);
	tap_ok(t, medges > 0, "6.1 fixtures: %zu edges to modules of the set", medges);
	encode(&w.g, &p, &len);
	tap_is_str(t, stored_vs(p, len, &w.g, buf, sizeof(buf)), "",
		   "6.1 fixtures: the store is the graph");
	tap_is_str(
		t, rebuilt_vs(p, len, &w.g, SIZE_MAX, buf, sizeof(buf)), "",
		"6.1 fixtures: rebuilt from the store over the base, every node a stub: the graph");
	tap_is_str(t, rebuilt_vs(p, len, &w.g, 3, buf, sizeof(buf)), "",
		   "6.1 fixtures: rebuilt, node 3's module as it is: the graph");
	tap_ok(t, kp_graph_store_compare(p, len, &w.g, &flen, &at) == 0 && flen == len,
	       "6.1 fixtures: the store copied is a fresh encoding, byte for byte (%zu bytes)",
	       len);
	same = is_ref_encoding(p, len, &w.g, &names);
	tap_is_intf(t, same ? (long)names : -1L, 24,
		    "6.1 fixtures: the plain encoder's bytes (%zu), %u names", len, names);
	tap_ok(t, parts_join(p, len, &w.g),
	       "6.1 fixtures: the encoder's parts joined are its bytes (%zu)", len);
	damage(t, p, len, 13, &w.g, "6.1 fixtures");
	for (size_t i = 0; i < w.g.n; i++)
		if (w.g.nodes[i].ndeps) {
			lazy(t, &w.g, p, len, i, "6.1 fixtures");
			break;
		}
	free(p);
	tb_free(&w);
}

int main(void)
{
	struct tap t = { 0 };

	built(&t);
	many_names(&t);
	fixtures(&t);
	return tap_done(&t);
}
