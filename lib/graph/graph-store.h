/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A graph's interface as bytes, and compared back: per node what a splice (issue 28, layer
 * 5) reads of the modules it keeps without their facts: the node's flags, the module's
 * machine (kp_loader_defines()), its exports (name,
 * namespace, table, GPL class, CRC: what find_symbol() and the duplicate-export check read)
 * and its imports with their resolved edges (provider kind, class, and for a module of the
 * set its node and export). The load order is the simulation store's (sim/sim-store.h).
 *
 * Layout, little-endian; a string is its bytes and a NUL (none inside), so that a decoded
 * store borrows it in place; a name is the index (32 bits, 0xffffffff for none) of a string
 * of the name table, where each distinct export, namespace and import name is once (a tree
 * imports the same few thousand names some 185,000 times); a number (var) is 7 bits a byte,
 * low first, the top bit set while more follow, in its fewest bytes (5 at most, 32 bits):
 *
 *   magic "KPGRST02", name count (32), the names (strings), node count (32)
 *   per node, in node order:
 *     flags (8: in_cycle, duplicate_name, walked, provider), the module's ELF machine (16)
 *     exports: count (32), each: name, namespace (names), table (8),
 *              flags (8: gpl_only, has_crc), crc (32)
 *     edges: count (32), their bytes' length (32), each: kind and flags (8: the kind in the
 *            low 3 bits, then gpl_only, weak), the import's name index (var), and for a
 *            module of the set its node and export index (vars)
 *
 * The edges' length lets a reader skip them: kp_graph_store_open() reads the names, the
 * nodes' flags and exports and no edge; a node's edges are decoded when asked for
 * (kp_graph_stored_edges(): a used splice asks for the few nodes it simulates again and what
 * they read, graph-rebuild.h). KPGRST01 (each string its length and bytes, each edge 6 or 14
 * bytes, no edges' length) is refused: the splice falls back to the recompute. amd64-6.1's
 * part: 1.37 MB (its names 0.44 MB, its 184,890 edges 0.67 MB), KPGRST01's 2.19 MB.
 *
 * The decoder trusts nothing: every length, enum and index is bounds-checked (an edge's
 * export must be one of its provider's, a node's edges must fill their length exactly), and
 * no byte may follow the end.
 */
#ifndef KP_GRAPH_STORE_H
#define KP_GRAPH_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph/graph.h"
#include "util/byte-writer.h"
#include "util/util.h"

struct kp_graph_stored_edge {
	const char *name;  /* the import's */
	uint32_t hash;	   /* kp_hash_string(name) */
	uint32_t name_idx; /* @name's index in the store's name table (kp_graph_stored.nnames) */
	enum kp_provider_kind kind;
	bool gpl_only, weak;
	uint32_t node, exp; /* KP_PROV_MODULE: the provider's node and its export's index */
};

struct kp_graph_stored_node {
	bool in_cycle, duplicate_name, walked, provider;
	uint16_t machine;
	struct kp_export *exports; /* hash set (kp_hash_string()) */
	size_t nexports;
	struct kp_graph_stored_edge *edges; /* NULL until decoded (@edges_read) or none */
	size_t nedges;			    /* known from the start */
	bool edges_read;		    /* @edges decoded (kp_graph_stored_edges()) */
	const unsigned char *ebytes;	    /* the edges' bytes, in the store's (borrowed) */
	size_t elen;
};

/*
 * A decoded store: its names borrowed from the store's bytes (which outlive it), the rest in
 * its arena, released in one call.
 */
struct kp_graph_stored {
	size_t n;
	size_t nnames;	    /* the name table's: one pointer per name, the same for each use */
	const char **names; /* borrowed in place (NUL-terminated in the store) */
	uint32_t *hashes;   /* kp_hash_string() of each name once @hashed */
	bool *hashed;
	struct kp_graph_stored_node *nodes; /* indexed like the graph's nodes */
	struct kp_arena arena;
};

/* @g's interface appended to @w (a failure sets @w->failed). */
void kp_graph_store_encode(struct kp_byte_writer *w, const struct kp_graph *g);
/*
 * The same bytes as the four parts they are made of, for a writer that writes them from where
 * they lie (a cold run's store: no copy of the table and the body into one buffer): the head
 * (magic, name count), the name table, the node count, the body; @len in all.
 */
struct kp_graph_store_parts {
	unsigned char head[12], mid[4];
	unsigned char *table, *body; /* malloc()ed, owned */
	size_t tlen, blen, len;
};
/* @g's interface as @out's parts (zeroed first): 0; -1 out of memory or a count over 32 bits. */
int kp_graph_store_encode_parts(const struct kp_graph *g, struct kp_graph_store_parts *out);
/* Frees what @parts owns (not @parts); zeroes it. */
void kp_graph_store_parts_release(struct kp_graph_store_parts *parts);
/*
 * Whether @p of @len bytes (an interface copied from an earlier store) is byte for byte what
 * kp_graph_store_encode() writes for @g: 0; 1, the fresh encoding's length in *@flen and the
 * first byte that differs in *@at; or -1 (out of memory, or a count over 32 bits).
 */
int kp_graph_store_compare(const unsigned char *p, size_t len, const struct kp_graph *g,
			   size_t *flen, size_t *at);
/*
 * The store @p of @len bytes (which must outlive @out: its names and edges are read in place)
 * into @out (zeroed first), every node's edges decoded: 0, or -1 with @err saying why.
 */
int kp_graph_store_decode(const unsigned char *p, size_t len, struct kp_graph_stored *out,
			  struct kp_err *err);
/*
 * kp_graph_store_decode() without the edges: the names, the nodes' flags and exports, each
 * node's edges' count and bytes checked to lie inside the store; 0, or -1 with @err.
 */
int kp_graph_store_open(const unsigned char *p, size_t len, struct kp_graph_stored *out,
			struct kp_err *err);
/*
 * Node @i's edges of @s (opened) decoded into its @edges, once: 0, or -1 with @err (an edge
 * that does not hold: @s is left as it was, its other nodes usable).
 */
int kp_graph_stored_edges(struct kp_graph_stored *s, size_t i, struct kp_err *err);
/* Empties @s (kp_graph_store_decode()'s, failed or not) and leaves it zeroed. */
void kp_graph_stored_release(struct kp_graph_stored *s);
/* Whether two export arrays hold the same exports in order; else what differs (static). */
const char *kp_exports_differ(const struct kp_export *a, size_t na, const struct kp_export *b,
			      size_t nb);
/*
 * Whether @s is @g's interface, field for field (every node's edges decoded first); else
 * NULL, or what first differs (a static string) with its node in *@node.
 */
const char *kp_graph_stored_differs(struct kp_graph_stored *s, const struct kp_graph *g,
				    size_t *node);

#endif
