// SPDX-License-Identifier: GPL-2.0-or-later
/* kopolicy graph --format dot: the dependency graph for Graphviz. */
#include "config.h"

#include <string.h>

#include "graph-output.h"
#include "json-out.h"

/* A quoted DOT id: '"' as \", the rest escaped like every text output (kp_escape_write()). */
static void dot_id_part(FILE *f, const char *s)
{
	for (const char *q; (q = strchr(s, '"')); s = q + 1) {
		kp_escape_write(f, s, (size_t)(q - s));
		fputs("\\\"", f);
	}
	kp_escape_write(f, s, strlen(s));
}

static void dot_id(FILE *f, const char *s)
{
	fputc('"', f);
	dot_id_part(f, s);
	fputc('"', f);
}

void kp_graph_print_dot(FILE *f, const struct kp_graph *g, const bool *in)
{
	fputs("digraph kopolicy {\n"
	      "\trankdir=LR;\n"
	      "\tnode [shape=box, style=filled, fillcolor=\"#e8f0fe\", fontname=\"sans\"];\n"
	      "\tedge [fontname=\"sans\", fontsize=9];\n"
	      "\t// red box: proprietary module; red edge: uses GPL-only exports;\n"
	      "\t// dashed: unresolved imports; dotted: a module known only from the kernel base\n",
	      f);
	for (size_t i = 0; i < g->n; i++) {
		const struct kp_node *nd = &g->nodes[i];
		size_t nun = 0;

		if (in && !in[i])
			continue;
		fputc('\t', f);
		dot_id(f, nd->mod->name);
		fputs(nd->mod->license_gpl_compatible ? " [];\n"
						      : " [fillcolor=\"#f4c7c3\", color=red];\n",
		      f);
		for (size_t d = 0; d < nd->ndeps; d++) {
			size_t p = nd->deps[d], nsym = 0, ngpl = 0;

			if (in && !in[p])
				continue;
			for (size_t e = 0; e < nd->nedges; e++)
				if (nd->edges[e].kind == KP_PROV_MODULE && nd->edges[e].node == p) {
					nsym++;
					ngpl += nd->edges[e].gpl_only;
				}
			fputc('\t', f);
			dot_id(f, nd->mod->name);
			fputs(" -> ", f);
			dot_id(f, g->nodes[p].mod->name);
			fprintf(f, " [label=\"%zu%s\"%s];\n", nsym, ngpl ? " GPL" : "",
				ngpl ? ", color=red, penwidth=2" : "");
		}
		for (size_t d = 0; d < nd->nbase_deps; d++) {
			fputc('\t', f);
			dot_id(f, nd->base_deps[d]);
			fputs(" [style=dotted];\n\t", f);
			dot_id(f, nd->mod->name);
			fputs(" -> ", f);
			dot_id(f, nd->base_deps[d]);
			fputs(" [style=dotted];\n", f);
		}
		for (size_t e = 0; e < nd->nedges; e++)
			nun += nd->edges[e].kind == KP_PROV_NONE && !nd->edges[e].imp->weak;
		if (nun) {
			fputs("\t\"unresolved:", f);
			dot_id_part(f, nd->mod->name);
			fprintf(f,
				"\" [label=\"%zu unresolved\", shape=note, "
				"style=dashed, fillcolor=white];\n\t",
				nun);
			dot_id(f, nd->mod->name);
			fputs(" -> \"unresolved:", f);
			dot_id_part(f, nd->mod->name);
			fputs("\" [style=dashed, color=gray40];\n", f);
		}
	}
	fputs("}\n", f);
}
