// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A graph's interface as bytes (graph-store.h; graph-store-format.h), and a store compared
 * with a graph's encoding; read back checked: graph-store-read.c.
 */
#include <stdlib.h>
#include <string.h>

#include "graph-store-format.h"
#include "graph-store.h"

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
		return GS_NONE;
	}
	if (!hashed)
		hash = kp_hash_string(name);
	e = kp_symbol_index_find_hashed(&nm->index, name, hash);
	if (e) {
		ref = (uintptr_t)e->value - 1;
	} else {
		if (nm->n >= GS_NONE ||
		    kp_symbol_index_add_hashed(&nm->index, name, hash,
					       (void *)(uintptr_t)(nm->n + 1)) < 0) {
			w->failed = true;
			return GS_NONE;
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

/* @name's index in @nm (added when new), or GS_NONE for NULL; see name_new(). */
static inline uint64_t name_ref(struct names *nm, struct kp_byte_writer *w, const char *name,
				uint32_t hash, bool hashed)
{
	size_t s;

	if (!name)
		return GS_NONE;
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

		if (nd->mod->nexports > GS_NONE || nd->nedges > GS_NONE)
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
	if (g->n > GS_NONE || (g->n && !size) || kp_symbol_index_init(&nm.index, g->n * 16) < 0)
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
	memcpy(out->head, GS_MAGIC, 8);
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
