// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A graph's interface as bytes, and compared back (graph-store.h).
 */
#include <stdlib.h>
#include <string.h>

#include "graph-store.h"
#include "util/byte-reader.h"

#define MAGIC "KPGRST02"
#define NONE  KP_BW_NONE

enum {
	NODE_IN_CYCLE = 1,
	NODE_DUPLICATE_NAME = 2,
	NODE_WALKED = 4,
	NODE_PROVIDER = 8,
	EXP_GPL_ONLY = 1,
	EXP_HAS_CRC = 2,
	/* an edge's first byte: its kind in the low 3 bits, then these */
	EDGE_KIND = 7,
	EDGE_GPL_ONLY = 8,
	EDGE_WEAK = 16,
	/* a number's bytes: 7 bits each, low first, more to come while the top bit is set */
	VAR_MAX = 5,
};

/*
 * The names an encoding refers to by index: each distinct one once, in first use order. A
 * name's pointer is looked up first, the string only for a pointer not seen before: a tree's
 * names are mostly shared strings (amd64-6.1: 213,250 names written, 21,452 pointers, 21,058
 * distinct strings), and a pointer is hashed and compared without reading its string.
 */
struct ptr_slot {
	const char *name; /* NULL: empty */
	uint32_t ref;	  /* the name's index */
};

struct names {
	struct kp_symbol_index index; /* name -> its index + 1 */
	struct kp_byte_writer table;
	size_t n;
	struct ptr_slot *slots; /* open addressing, a power of two, at most half full */
	size_t nslots, used;
	unsigned shift; /* 64 - log2(nslots): a pointer's slot is its hash's top bits */
	size_t hint;	/* the first table's size at least: no rehash for a tree's names */
};

static size_t ptr_slot_of(const struct names *nm, const char *name)
{
	return (size_t)(((uint64_t)(uintptr_t)name * UINT64_C(0x9e3779b97f4a7c15)) >> nm->shift);
}

/* Room for one more pointer in @nm->slots: 0, or -1 (out of memory). */
static int ptr_reserve(struct names *nm)
{
	struct ptr_slot *old = nm->slots;
	size_t nold = nm->nslots;
	unsigned oshift = nm->shift;

	if (nm->used + 1 <= nm->nslots / 2)
		return 0;
	if (nold > SIZE_MAX / 2 / sizeof(*old) || (nold && oshift <= 33))
		return -1;
	nm->nslots = nold ? nold * 2 : 4096;
	nm->shift = nold ? oshift - 1 : 64 - 12;
	while (!nold && nm->nslots < nm->hint && nm->shift > 33) {
		nm->nslots *= 2;
		nm->shift--;
	}
	nm->slots = calloc(nm->nslots, sizeof(*nm->slots));
	if (!nm->slots) {
		nm->slots = old;
		nm->nslots = nold;
		nm->shift = oshift;
		return -1;
	}
	for (size_t i = 0; i < nold; i++) {
		size_t s;

		if (!old[i].name)
			continue;
		s = ptr_slot_of(nm, old[i].name);
		while (nm->slots[s].name)
			s = (s + 1) & (nm->nslots - 1);
		nm->slots[s] = old[i];
	}
	free(old);
	return 0;
}

/*
 * @name's index in @nm by its string (added when new), its pointer noted; @hash is
 * kp_hash_string(@name), or computed here when @hashed is false. A failure fails @w.
 */
static uint64_t name_new(struct names *nm, struct kp_byte_writer *w, const char *name,
			 uint32_t hash, bool hashed)
{
	const struct kp_symbol_index_entry *e;
	uint64_t ref;
	size_t s;

	if (ptr_reserve(nm) < 0) {
		w->failed = true;
		return NONE;
	}
	if (!hashed)
		hash = kp_hash_string(name);
	e = kp_symbol_index_find_hashed(&nm->index, name, hash);
	if (e) {
		ref = (uintptr_t)e->value - 1;
	} else {
		if (nm->n >= NONE ||
		    kp_symbol_index_add_hashed(&nm->index, name, hash,
					       (void *)(uintptr_t)(nm->n + 1)) < 0) {
			w->failed = true;
			return NONE;
		}
		/* NUL-terminated, no length: a decoded store borrows it in place */
		kp_bw_put(&nm->table, name, strlen(name) + 1);
		ref = nm->n++;
	}
	s = ptr_slot_of(nm, name);
	while (nm->slots[s].name)
		s = (s + 1) & (nm->nslots - 1);
	nm->slots[s].name = name;
	nm->slots[s].ref = (uint32_t)ref;
	nm->used++;
	return ref;
}

/* @name's index in @nm (added when new), or NONE for NULL; see name_new(). */
static inline uint64_t name_ref(struct names *nm, struct kp_byte_writer *w, const char *name,
				uint32_t hash, bool hashed)
{
	size_t s;

	if (!name)
		return NONE;
	if (nm->nslots) {
		s = ptr_slot_of(nm, name);
		while (nm->slots[s].name) {
			if (nm->slots[s].name == name)
				return nm->slots[s].ref;
			s = (s + 1) & (nm->nslots - 1);
		}
	}
	return name_new(nm, w, name, hash, hashed);
}

/*
 * The most bytes @g's nodes take (the layout after the node count: an edge's numbers at their
 * longest) and its exports' count in *@nexports, or 0 for a count over 32 bits or a size over
 * SIZE_MAX.
 */
static size_t body_size(const struct kp_graph *g, size_t *nexports)
{
	uint64_t size = 0;

	*nexports = 0;
	for (size_t i = 0; i < g->n; i++) {
		const struct kp_node *nd = &g->nodes[i];

		if (nd->mod->nexports > NONE || nd->nedges > NONE)
			return 0;
		/*
		 * flags, machine, the two counts, the edges' length; 14 bytes an export; an edge
		 * its first byte and three numbers at most
		 */
		size += 15 + (uint64_t)nd->mod->nexports * 14 +
			(uint64_t)nd->nedges * (1 + 3 * VAR_MAX);
		*nexports += nd->mod->nexports;
		if (size > SIZE_MAX)
			return 0;
	}
	return (size_t)size;
}

static unsigned char *put32(unsigned char *q, uint64_t v)
{
	kp_store32(q, (uint32_t)v);
	return q + 4;
}

/* @v (32 bits) in as few bytes as hold it, 7 bits each, low first (VAR_MAX at most). */
static unsigned char *put_var(unsigned char *q, uint64_t v)
{
	v &= 0xffffffffu;
	while (v >= 0x80) {
		*q++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*q++ = (unsigned char)v;
	return q;
}

int kp_graph_store_encode_parts(const struct kp_graph *g, struct kp_graph_store_parts *out)
{
	struct kp_byte_writer body = { 0 };
	struct names nm = { 0 };
	size_t nexports, size = body_size(g, &nexports);
	unsigned char *q = NULL, *end;

	/*
	 * distinct name pointers: each export's, and the imports' (interned: a few thousand
	 * more), at most half the slots
	 */
	nm.hint = nexports < SIZE_MAX / 8 ? nexports * 4 : 0;
	/*
	 * the body's size is bounded: it is written through a cursor, each name's index looked
	 * up, and cut to what was written
	 */
	if (g->n > NONE || (g->n && !size) || kp_symbol_index_init(&nm.index, g->n * 16) < 0)
		body.failed = true;
	else if (size)
		q = kp_bw_room(&body, size);
	end = q ? q + size : NULL;
	for (size_t i = 0; i < g->n && q && !body.failed; i++) {
		const struct kp_node *nd = &g->nodes[i];
		const struct kp_module *m = nd->mod;
		unsigned char *elen;

		*q++ = (unsigned char)((nd->in_cycle ? NODE_IN_CYCLE : 0u) |
				       (nd->duplicate_name ? NODE_DUPLICATE_NAME : 0u) |
				       (nd->walked ? NODE_WALKED : 0u) |
				       (nd->provider ? NODE_PROVIDER : 0u));
		*q++ = (unsigned char)(m->machine & 0xff);
		*q++ = (unsigned char)(m->machine >> 8);
		q = put32(q, m->nexports);
		for (size_t x = 0; x < m->nexports; x++) {
			const struct kp_export *e = &m->exports[x];

			q = put32(q, name_ref(&nm, &body, e->name, e->hash, true));
			q = put32(q, name_ref(&nm, &body, e->ns, 0, false));
			*q++ = (unsigned char)e->table;
			*q++ = (unsigned char)((e->gpl_only ? EXP_GPL_ONLY : 0u) |
					       (e->has_crc ? EXP_HAS_CRC : 0u));
			q = put32(q, e->crc);
		}
		q = put32(q, nd->nedges);
		elen = q;
		q += 4;
		for (size_t x = 0; x < nd->nedges; x++) {
			const struct kp_edge *e = &nd->edges[x];
			const struct kp_import *im = kp_edge_import(nd, e);

			*q++ = (unsigned char)((unsigned)e->kind |
					       (e->gpl_only ? EDGE_GPL_ONLY : 0u) |
					       (im->weak ? EDGE_WEAK : 0u));
			q = put_var(q, name_ref(&nm, &body, im->name, im->hash, true));
			if (e->kind == KP_PROV_MODULE) {
				q = put_var(q, e->node);
				q = put_var(q, (uint64_t)(e->exp - g->nodes[e->node].mod->exports));
			}
		}
		put32(elen, (uint64_t)(q - elen - 4));
	}
	if (size && (!q || q > end))
		body.failed = true;
	else if (q)
		body.len = (size_t)(q - body.p);
	kp_symbol_index_release(&nm.index);
	free(nm.slots);
	memset(out, 0, sizeof(*out));
	if (body.failed || nm.table.failed || nm.n > UINT32_MAX) {
		free(nm.table.p);
		free(body.p);
		return -1;
	}
	memcpy(out->head, MAGIC, 8);
	kp_store32(out->head + 8, (uint32_t)nm.n);
	kp_store32(out->mid, (uint32_t)g->n);
	out->table = nm.table.p;
	out->tlen = nm.table.len;
	out->body = body.p;
	out->blen = body.len;
	out->len = sizeof(out->head) + out->tlen + sizeof(out->mid) + out->blen;
	return 0;
}

void kp_graph_store_parts_release(struct kp_graph_store_parts *parts)
{
	free(parts->table);
	free(parts->body);
	memset(parts, 0, sizeof(*parts));
}

void kp_graph_store_encode(struct kp_byte_writer *w, const struct kp_graph *g)
{
	struct kp_graph_store_parts parts;

	if (kp_graph_store_encode_parts(g, &parts) < 0) {
		w->failed = true;
		return;
	}
	kp_bw_put(w, parts.head, sizeof(parts.head));
	kp_bw_put(w, parts.table, parts.tlen);
	kp_bw_put(w, parts.mid, sizeof(parts.mid));
	kp_bw_put(w, parts.body, parts.blen);
	kp_graph_store_parts_release(&parts);
}

int kp_graph_store_compare(const unsigned char *p, size_t len, const struct kp_graph *g,
			   size_t *flen, size_t *at)
{
	struct kp_byte_writer w = { 0 };
	size_t i = 0;

	kp_graph_store_encode(&w, g);
	if (w.failed) {
		free(w.p);
		return -1;
	}
	if (len != w.len || memcmp(p, w.p, len))
		while (i < len && i < w.len && p[i] == w.p[i])
			i++;
	else
		i = len;
	*flen = w.len;
	*at = i;
	free(w.p);
	return i == len && i == *flen ? 0 : 1;
}

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
	if (i == NONE && !need)
		return NULL;
	if (i == NONE || i >= s->nnames) {
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
	if (magic && memcmp(magic, MAGIC, 8))
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
