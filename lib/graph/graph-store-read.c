// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A graph's interface read back from its bytes, every count, index and name checked
 * (graph-store.h), and a stored interface compared with a graph (the splice's check).
 */
#include <stdlib.h>
#include <string.h>

#include "graph-store-format.h"
#include "graph-store.h"
#include "util/byte-reader.h"

/* A count of items each at least @min bytes long: no more than the bytes left allow. */
static size_t get_count(struct kp_byte_reader *r, size_t min, const char *what)
{
	uint32_t n = kp_br_get32(r, what);

	if (!r->bad && (size_t)n > (r->len - r->off) / min)
		r->bad = what;
	return r->bad ? 0 : n;
}

/* A string borrowed in place: its bytes up to its NUL, which must be there. */
static const char *get_str(struct kp_byte_reader *r, const char *what)
{
	const unsigned char *q, *nul;

	if (r->bad)
		return NULL;
	q = r->p + r->off;
	nul = memchr(q, '\0', r->len - r->off);
	if (!nul) {
		r->bad = what;
		return NULL;
	}
	r->off += (size_t)(nul - q) + 1;
	return (const char *)q;
}

/*
 * A number put_var() wrote: at most VAR_MAX bytes, 32 bits, in its fewest bytes (a store
 * byte for byte a fresh encoding's); sets @r->bad to @what otherwise.
 */
static uint32_t get_var(struct kp_byte_reader *r, const char *what)
{
	uint64_t v = 0;

	for (unsigned k = 0; k < VAR_MAX && !r->bad; k++) {
		const unsigned char *q = kp_br_take(r, 1, what);

		if (!q)
			break;
		v |= (uint64_t)(*q & 0x7f) << (7 * k);
		if (!(*q & 0x80)) {
			if ((k && !*q) || v > 0xffffffffu)
				break;
			return (uint32_t)v;
		}
	}
	if (!r->bad)
		r->bad = what;
	return 0;
}

/* @n items of @size, not zeroed: the decoder writes each whole before it is read. */
static void *get_array(struct kp_byte_reader *r, struct kp_arena *arena, size_t n, size_t size)
{
	void *a;

	if (r->bad || !n)
		return NULL;
	a = kp_arena_alloc(arena, n * size);
	if (!a)
		r->bad = "out of memory";
	return a;
}

/*
 * The name of index @i of @s: NULL for none (an error when @need), else the name, its hash in
 * *@hash (computed on first use: most names are only an import's, read when that import's
 * node is) and its index in *@idx. Sets @r->bad to @what when out of the table.
 */
static inline const char *name_at(struct kp_byte_reader *r, struct kp_graph_stored *s, uint32_t i,
				  bool need, uint32_t *hash, uint32_t *idx, const char *what)
{
	if (i == GS_NONE && !need)
		return NULL;
	if (i == GS_NONE || i >= s->nnames) {
		r->bad = what;
		return NULL;
	}
	if (!s->hashed[i]) {
		s->hashes[i] = kp_hash_string(s->names[i]);
		s->hashed[i] = true;
	}
	*hash = s->hashes[i];
	*idx = i;
	return s->names[i];
}

/*
 * A node's exports: their bytes taken at once (get_count() knows each is 14), then read
 * through a cursor, every name index and enum checked.
 */
static void get_exports(struct kp_byte_reader *r, struct kp_graph_stored *s,
			struct kp_graph_stored_node *sn)
{
	const unsigned char *q;

	sn->nexports = get_count(r, 14, "export count");
	sn->exports = get_array(r, &s->arena, sn->nexports, sizeof(*sn->exports));
	if (r->bad || !sn->nexports || !(q = kp_br_take(r, sn->nexports * 14, "export")))
		return;
	for (size_t x = 0; x < sn->nexports; x++, q += 14) {
		const char *name, *ns;
		unsigned table = q[8], flags = q[9];
		uint32_t hash = 0, idx, nshash;

		name = name_at(r, s, kp_load32(q, false), true, &hash, &idx, "export name");
		ns = r->bad ? NULL
			    : name_at(r, s, kp_load32(q + 4, false), false, &nshash, &idx,
				      "export namespace");
		if (!r->bad && (table >= KP_KSYMTAB_NTABLES || (flags & ~3u)))
			r->bad = "export table or flags";
		if (r->bad)
			return;
		sn->exports[x] = (struct kp_export){ .name = name,
						     .ns = ns,
						     .table = (enum kp_export_table)table,
						     .gpl_only = flags & EXP_GPL_ONLY,
						     .has_crc = flags & EXP_HAS_CRC,
						     .crc = kp_load32(q + 10, false),
						     .hash = hash };
	}
}

/*
 * A node's edges located, not decoded: their count (each at least 2 bytes) and their bytes'
 * length, those bytes kept for kp_graph_stored_edges().
 */
static void skip_edges(struct kp_byte_reader *r, struct kp_graph_stored_node *sn)
{
	uint32_t elen;

	sn->nedges = get_count(r, 2, "edge count");
	elen = kp_br_get32(r, "edges' length");
	if (!r->bad &&
	    ((size_t)elen < sn->nedges * 2 || (size_t)elen > sn->nedges * (1 + 3 * VAR_MAX)))
		r->bad = "edges' length";
	sn->ebytes = kp_br_take(r, elen, "edges");
	sn->elen = r->bad ? 0 : elen;
	sn->edges_read = !sn->nedges;
}

/*
 * Node @sn's edges decoded from their bytes: each one's first byte and numbers bounds-checked,
 * its name, kind, flags, provider node and export checked; the bytes used up exactly.
 */
static void get_edges(struct kp_byte_reader *r, struct kp_graph_stored *s,
		      struct kp_graph_stored_edge *edges, size_t nedges)
{
	for (size_t x = 0; x < nedges && !r->bad; x++) {
		struct kp_graph_stored_edge *e = &edges[x];
		unsigned flags = kp_br_get8(r, "edge kind or flags"), kind = flags & EDGE_KIND;
		const char *name;
		uint32_t hash = 0, idx = 0, node = 0, exp = 0, ni;

		if (!r->bad && (kind > KP_PROV_LOADER || (flags & ~31u)))
			r->bad = "edge kind or flags";
		ni = get_var(r, "import name");
		if (r->bad)
			return;
		name = name_at(r, s, ni, true, &hash, &idx, "import name");
		if (r->bad)
			return;
		if (kind == KP_PROV_MODULE) {
			node = get_var(r, "edge node");
			exp = get_var(r, "edge export");
			if (r->bad)
				return;
			if (node >= s->n) {
				r->bad = "edge node";
				return;
			}
			/* an edge's export is one of its provider's */
			if (exp >= s->nodes[node].nexports) {
				r->bad = "edge export";
				return;
			}
		}
		*e = (struct kp_graph_stored_edge){ .name = name,
						    .hash = hash,
						    .name_idx = idx,
						    .kind = (enum kp_provider_kind)kind,
						    .gpl_only = flags & EDGE_GPL_ONLY,
						    .weak = flags & EDGE_WEAK,
						    .node = node,
						    .exp = exp };
	}
	if (!r->bad && r->off != r->len)
		r->bad = "edges' length";
}

int kp_graph_stored_edges(struct kp_graph_stored *s, size_t i, struct kp_err *err)
{
	struct kp_graph_stored_node *sn;
	struct kp_graph_stored_edge *edges;
	struct kp_byte_reader r;

	if (i >= s->n)
		return kp_err_set(err, "stored graph: no node %zu", i);
	sn = &s->nodes[i];
	if (sn->edges_read)
		return 0;
	r = (struct kp_byte_reader){ .p = sn->ebytes, .len = sn->elen };
	edges = get_array(&r, &s->arena, sn->nedges, sizeof(*edges));
	if (!r.bad)
		get_edges(&r, s, edges, sn->nedges);
	if (r.bad)
		return kp_err_set(err, "stored graph: %s of node %zu", r.bad, i);
	sn->edges = edges;
	sn->edges_read = true;
	return 0;
}

int kp_graph_store_open(const unsigned char *p, size_t len, struct kp_graph_stored *out,
			struct kp_err *err)
{
	struct kp_byte_reader r = { .p = p, .len = len };
	const unsigned char *magic;
	size_t n, nn;

	memset(out, 0, sizeof(*out));
	magic = kp_br_take(&r, 8, "header");
	if (magic && memcmp(magic, GS_MAGIC, 8))
		r.bad = "magic";
	/* a name takes at least its NUL */
	nn = get_count(&r, 1, "name count");
	out->names = get_array(&r, &out->arena, nn, sizeof(*out->names));
	out->hashes = get_array(&r, &out->arena, nn, sizeof(*out->hashes));
	out->hashed = get_array(&r, &out->arena, nn, sizeof(*out->hashed));
	if (!r.bad && nn)
		memset(out->hashed, 0, nn * sizeof(*out->hashed));
	for (size_t i = 0; i < nn && !r.bad; i++)
		out->names[i] = get_str(&r, "name");
	out->nnames = r.bad ? 0 : nn;
	/* a node takes at least 15 bytes */
	n = get_count(&r, 15, "node count");
	out->nodes = get_array(&r, &out->arena, n, sizeof(*out->nodes));
	out->n = r.bad ? 0 : n;
	for (size_t i = 0; i < out->n && !r.bad; i++) {
		struct kp_graph_stored_node *sn = &out->nodes[i];
		unsigned flags = kp_br_get8(&r, "node flags");

		if (!r.bad && (flags & ~15u))
			r.bad = "node flags";
		*sn = (struct kp_graph_stored_node){ 0 };
		sn->in_cycle = flags & NODE_IN_CYCLE;
		sn->duplicate_name = flags & NODE_DUPLICATE_NAME;
		sn->walked = flags & NODE_WALKED;
		sn->provider = flags & NODE_PROVIDER;
		sn->machine = (uint16_t)kp_br_get8(&r, "machine");
		sn->machine |= (uint16_t)(kp_br_get8(&r, "machine") << 8);
		get_exports(&r, out, sn);
		skip_edges(&r, sn);
	}
	if (!r.bad && r.off != len)
		r.bad = "bytes after the end";
	if (r.bad) {
		kp_graph_stored_release(out);
		return kp_err_set(err, "stored graph: %s", r.bad);
	}
	return 0;
}

int kp_graph_store_decode(const unsigned char *p, size_t len, struct kp_graph_stored *out,
			  struct kp_err *err)
{
	if (kp_graph_store_open(p, len, out, err) < 0)
		return -1;
	for (size_t i = 0; i < out->n; i++)
		if (kp_graph_stored_edges(out, i, err) < 0) {
			kp_graph_stored_release(out);
			return -1;
		}
	return 0;
}

void kp_graph_stored_release(struct kp_graph_stored *s)
{
	kp_arena_release(&s->arena);
	memset(s, 0, sizeof(*s));
}

/* Whether two strings, either NULL, are the same. */
static bool str_same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

const char *kp_exports_differ(const struct kp_export *a, size_t na, const struct kp_export *b,
			      size_t nb)
{
	if (na != nb)
		return "export count";
	for (size_t x = 0; x < na; x++) {
		const struct kp_export *p = &a[x], *q = &b[x];

		if (!str_same(p->name, q->name) || !str_same(p->ns, q->ns) ||
		    p->table != q->table || p->gpl_only != q->gpl_only ||
		    p->has_crc != q->has_crc || p->crc != q->crc)
			return "an export";
	}
	return NULL;
}

static const char *edges_differ(const struct kp_graph_stored_node *sn, const struct kp_graph *g,
				const struct kp_node *nd)
{
	if (sn->nedges != nd->nedges)
		return "edge count";
	for (size_t x = 0; x < nd->nedges; x++) {
		const struct kp_graph_stored_edge *a = &sn->edges[x];
		const struct kp_edge *b = &nd->edges[x];
		const struct kp_import *im = kp_edge_import(nd, b);

		if (!str_same(a->name, im->name) || a->kind != b->kind ||
		    a->gpl_only != b->gpl_only || a->weak != (bool)im->weak)
			return "an edge";
		if (b->kind == KP_PROV_MODULE &&
		    (a->node != b->node ||
		     a->exp != (size_t)(b->exp - g->nodes[b->node].mod->exports)))
			return "an edge's provider";
	}
	return NULL;
}

const char *kp_graph_stored_differs(struct kp_graph_stored *s, const struct kp_graph *g,
				    size_t *node)
{
	const char *what = NULL;
	struct kp_err err;

	*node = 0;
	if (s->n != g->n)
		return "node count";
	for (size_t i = 0; i < g->n && !what; i++) {
		const struct kp_graph_stored_node *sn = &s->nodes[i];
		const struct kp_node *nd = &g->nodes[i];

		*node = i;
		if (kp_graph_stored_edges(s, i, &err) < 0)
			what = "edges that do not decode";
		else if (sn->in_cycle != nd->in_cycle || sn->duplicate_name != nd->duplicate_name ||
			 sn->walked != nd->walked || sn->provider != nd->provider ||
			 sn->machine != nd->mod->machine)
			what = "node flags";
		else if (!(what = kp_exports_differ(sn->exports, sn->nexports, nd->mod->exports,
						    nd->mod->nexports)))
			what = edges_differ(sn, g, nd);
	}
	return what;
}
