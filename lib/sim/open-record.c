// SPDX-License-Identifier: LGPL-2.1-or-later
#include "open-record.h"

#include <string.h>

#include "graph/graph.h"

/* The loader's pr_err()s whose format has no "\n" (kernel/module/main.c). */
static const char *const unterminated[] = {
	/* elf_validity_cache_strtab(), v6.13+ */
	"symbol name out of bounds in string table",
	/* elf_validity_cache_index_versions(), v6.14+ */
	"extended version crc+name presence does not match",
	"more extended version crcs than names",
};

bool kp_msg_unterminated(const char *msg)
{
	for (size_t i = 0; i < sizeof(unterminated) / sizeof(unterminated[0]); i++)
		if (!strcmp(msg, unterminated[i]))
			return true;
	return false;
}

size_t kp_msgs_shown(const struct kp_verdict *v)
{
	if (v->nmessages && kp_msg_unterminated(v->messages[v->nmessages - 1]))
		return v->nmessages - 1;
	return v->nmessages;
}

const char *kp_open_record_before(const struct kp_simulation *sim, const struct kp_verdict *v)
{
	const struct kp_verdict *last = NULL; /* the latest earlier load that printed */
	const struct kp_graph *g = sim->graph;

	if (!g || !v->nmessages || v < sim->v || v >= sim->v + sim->n)
		return NULL;
	for (size_t k = 0; k < g->n; k++) {
		const struct kp_verdict *e = &sim->v[g->order[k]];

		if (e == v)
			break;
		if (e->nmessages)
			last = e;
	}
	if (!last || !kp_msg_unterminated(last->messages[last->nmessages - 1]))
		return NULL;
	return last->messages[last->nmessages - 1];
}
