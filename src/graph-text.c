// SPDX-License-Identifier: GPL-2.0-or-later
/* kopolicy graph --format text, and the provider names every graph format uses. */
#include "config.h"

#include "graph-output.h"
#include "json-out.h"
#include "util/module-name.h"

const char *kp_graph_kind_name(enum kp_provider_kind k)
{
	switch (k) {
	case KP_PROV_VMLINUX:
		return "vmlinux";
	case KP_PROV_MODULE:
		return "module";
	case KP_PROV_BASE_MODULE:
		return "base-module";
	case KP_PROV_LOADER:
		return "loader";
	case KP_PROV_NONE:
		break;
	}
	return "unresolved";
}

const char *kp_graph_provider_name(const struct kp_graph *g, const struct kp_edge *e, char *buf,
				   size_t len)
{
	switch (e->kind) {
	case KP_PROV_VMLINUX:
		return "vmlinux";
	case KP_PROV_MODULE:
		return g->nodes[e->node].mod->name;
	case KP_PROV_BASE_MODULE:
		kp_modname_from_path(buf, len, e->ksym->owner, KP_MODNAME_WHOLE);
		return buf;
	case KP_PROV_LOADER:
		return "loader";
	case KP_PROV_NONE:
		break;
	}
	return NULL;
}

void kp_graph_print_text(FILE *f, const struct kp_graph *g, const bool *in)
{
	for (size_t k = 0; k < g->n; k++) {
		size_t i = g->order[k];
		const struct kp_node *nd = &g->nodes[i];
		size_t nv = 0, nvg = 0, nun = 0;

		if (in && !in[i])
			continue;
		kp_escaped_fprintf(f, "%s%s\n", nd->mod->name,
				   nd->mod->license_gpl_compatible ? "" : " [proprietary]");
		fputs("  depends:", f);
		for (size_t d = 0; d < nd->ndeps; d++)
			kp_escaped_fprintf(f, " %s", g->nodes[nd->deps[d]].mod->name);
		for (size_t d = 0; d < nd->nbase_deps; d++)
			kp_escaped_fprintf(f, " %s(base)", nd->base_deps[d]);
		fputc('\n', f);
		for (size_t e = 0; e < nd->nedges; e++) {
			const struct kp_edge *ed = &nd->edges[e];

			if (ed->kind == KP_PROV_VMLINUX) {
				nv++;
				nvg += ed->gpl_only;
			} else if (ed->kind == KP_PROV_LOADER) {
				continue; /* not an import once the loader has seen it */
			} else if (ed->kind == KP_PROV_NONE) {
				nun++;
			} else {
				const char *ns = kp_edge_ns(ed);
				char buf[64];

				kp_escaped_fprintf(f, "  %s <- %s%s%s%s\n",
						   kp_edge_import(nd, ed)->name,
						   kp_graph_provider_name(g, ed, buf, sizeof(buf)),
						   ed->gpl_only ? " GPL-only" : "",
						   ns ? " ns " : "", ns ? ns : "");
			}
		}
		kp_escaped_fprintf(f, "  vmlinux: %zu imports (%zu GPL-only)\n", nv, nvg);
		if (nun) {
			fputs("  unresolved:", f);
			for (size_t e = 0; e < nd->nedges; e++) {
				const struct kp_import *imp = kp_edge_import(nd, &nd->edges[e]);

				if (nd->edges[e].kind == KP_PROV_NONE)
					kp_escaped_fprintf(f, " %s%s", imp->name,
							   imp->weak ? "(weak)" : "");
			}
			fputc('\n', f);
		}
	}
	for (size_t c = 0; c < g->ncycles; c++) {
		fputs("cycle:", f);
		for (size_t j = 0; j < g->cycles[c].len; j++)
			kp_escaped_fprintf(f, " %s", g->nodes[g->cycles[c].nodes[j]].mod->name);
		fputc('\n', f);
	}
}
