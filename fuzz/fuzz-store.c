// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the splice store a result-cache entry carries (src/check-splice-store.c):
 * "KPSPLIC2", the simulation's part (sim/sim-store.c), the graph's part (graph/graph-store.c),
 * each after its 64-bit length, then the report's part (src/check-splice-report.c) to the end.
 * The input is split as kp_splice_store_decode() splits it and each part given to its decoder
 * whatever the others said, so a damaged simulation part does not hide the graph's decoder;
 * then the whole input goes through kp_splice_store_decode() itself.
 * Seeds: stores cut from the entries of `check --format json` runs (fuzz/corpus/store).
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
	struct kp_sim_stored was;
	const uint8_t *sim, *graph;
	size_t off = 8, simlen = 0, glen = 0, n = 0;
	struct kp_err err;

	if (size < 8)
		return 0;
	sim = part(data, size, &off, &simlen);
	graph = part(data, size, &off, &glen);
	if (sim && kp_sim_store_decode(sim, simlen, &was, &err) == 0) {
		n = was.n;
		kp_sim_stored_release(&was);
	}
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
	/* the report's node count: the simulation's, else the magic's last byte (not checked here)
	 */
	if (!n)
		n = data[7] & 7;
	if (kp_splice_report_decode(data + off, size - off, n, &rep, &err) == 0)
		kp_splice_report_release(&rep);
	/* and the whole input through the store's own framing, as a splice reads an entry's */
	{
		struct kp_splice_stored st;

		kp_splice_store_decode(data, size, &st, &err);
		kp_splice_stored_release(&st);
	}
	return 0;
}
