// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the splice store a result-cache entry carries (src/check-splice-store.c)
 * over the entry's output, which its report part points into. The input: the output's length
 * (32), the output, then the store: "KPSPLIC3", the simulation's part (sim/sim-store.c), the
 * graph's part (graph/graph-store.c), each after its 64-bit length, then the report's part
 * (src/check-splice-report-store.c) to the end. The store is split as
 * kp_splice_store_decode() splits it and each part given to its decoder whatever the others
 * said, so a damaged simulation part does not hide the graph's decoder; then the whole store
 * goes through kp_splice_store_decode() itself. Every block the report decoder accepts lies
 * inside the output. Seeds: outputs and stores cut from the entries of `check --format json`
 * runs (fuzz/corpus/store).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "check-splice.h"
#include "check-splice-store.h"
#include "graph/graph-store.h"
#include "sim/sim-store.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The part at *@off: its 64-bit length, then its bytes (cut at the end of the input). */
static const uint8_t *part(const uint8_t *data, size_t size, size_t *off, size_t *len)
{
	uint64_t n;

	if (size - *off < 8)
		return NULL;
	n = kp_load64(data + *off, false);
	*off += 8;
	*len = n > size - *off ? size - *off : (size_t)n;
	*off += *len;
	return data + *off - *len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kp_splice_report rep;
	struct kp_graph_stored gs;
	struct kp_sim_stored was = { 0 };
	const uint8_t *sim, *graph, *op;
	size_t off = 8, simlen = 0, glen = 0, n = 0, olen;
	struct kp_err err;

	if (size < 4)
		return 0;
	olen = kp_load32(data, false);
	if (olen > size - 4)
		olen = size - 4;
	op = data + 4;
	data += 4 + olen;
	size -= 4 + olen;
	if (size < 8)
		return 0;
	sim = part(data, size, &off, &simlen);
	graph = part(data, size, &off, &glen);
	if (sim && kp_sim_store_decode(sim, simlen, &was, &err) == 0)
		n = was.n;
	if (graph && kp_graph_store_decode(graph, glen, &gs, &err) == 0) {
		/*
		 * the decoder's references hold: every edge's node and export exist, its name is
		 * one of the name table's (what graph-rebuild.c's lookups are kept by)
		 */
		for (size_t i = 0; i < gs.n; i++)
			for (size_t x = 0; x < gs.nodes[i].nedges; x++) {
				const struct kp_graph_stored_edge *e = &gs.nodes[i].edges[x];

				if (e->kind == KP_PROV_MODULE &&
				    (e->node >= gs.n || e->exp >= gs.nodes[e->node].nexports))
					__builtin_trap();
				if (e->name_idx >= gs.nnames || !e->name)
					__builtin_trap();
			}
		kp_graph_stored_release(&gs);
	}
	/* the report's node count and load order: the simulation's, else the identity over the
	 * magic's last byte (not checked here) */
	if (!n) {
		static const size_t id[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };

		kp_sim_stored_release(&was);
		n = data[7] & 7;
		was.order = (size_t *)id;
	}
	if (kp_splice_report_decode(data + off, size - off, n, was.order, op, olen, &rep, &err) ==
	    0) {
		if (rep.headlen + rep.taillen > olen)
			__builtin_trap();
		for (size_t i = 0; i < rep.n; i++)
			if (rep.blocks[i].text &&
			    ((const uint8_t *)rep.blocks[i].text < op ||
			     (const uint8_t *)rep.blocks[i].text + rep.blocks[i].len > op + olen))
				__builtin_trap();
		kp_splice_report_release(&rep);
	}
	if (was.order && was.n)
		kp_sim_stored_release(&was);
	/* and the whole input through the store's own framing, as a splice reads an entry's */
	{
		struct kp_splice_stored st;

		kp_splice_store_decode(data, size, op, olen, &st, &err);
		kp_splice_stored_release(&st);
	}
	return 0;
}
