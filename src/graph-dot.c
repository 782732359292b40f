// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kopolicy graph --format dot: the dependency graph for Graphviz. Nodes are files (same-named
 * modules stay distinct), coloured by what the loader does with them; a legend is drawn.
 */
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

/* The DOT node id of a module: its file, so that same-named modules stay distinct. */
static void dot_node_id(FILE *f, const struct kp_node *nd)
{
	fputs("\"file:", f);
	dot_id_part(f, nd->path);
	fputc('"', f);
}

/* The legend, drawn in the picture: one sample per node and edge style. */
static void print_dot_legend(FILE *f)
{
	fputs("\tsubgraph cluster_legend {\n"
	      "\t\tlabel=\"legend\"; fontname=\"sans\"; style=rounded; color=gray60;\n"
	      "\t\t\"legend:gpl\" [label=\"module (GPL-compatible)\"];\n"
	      "\t\t\"legend:p\" [label=\"proprietary: own license (P)\", fillcolor=\"#f4c7c3\", "
	      "color=red];\n"
	      "\t\t\"legend:inh\" [label=\"P inherited (2020 rule)\", fillcolor=\"#fde2b8\", "
	      "color=darkorange];\n"
	      "\t\t\"legend:fail\" [label=\"fails to load\", peripheries=2, color=red];\n"
	      "\t\t\"legend:base\" [label=\"kernel base module\", style=dotted];\n"
	      "\t\t\"legend:unres\" [label=\"unresolved imports\", shape=note, style=dashed, "
	      "fillcolor=white];\n"
	      "\t\t\"legend:gpl\" -> \"legend:p\" [label=\"N GPL: uses GPL-only exports\", "
	      "color=red, penwidth=2];\n"
	      "\t\t\"legend:inh\" -> \"legend:base\" [label=\"N: imports\"];\n"
	      "\t}\n",
	      f);
}

/* @vof: the verdict of each node (NULL: no simulation, no taint or load colours). */
void kp_graph_print_dot(FILE *f, const struct kp_graph *g, const bool *in,
			const struct kp_verdict *const *vof)
{
	fputs("digraph kopolicy {\n"
	      "\trankdir=LR;\n"
	      "\tnode [shape=box, style=filled, fillcolor=\"#e8f0fe\", fontname=\"sans\"];\n"
	      "\tedge [fontname=\"sans\", fontsize=9];\n"
	      "\t// nodes are files (\"file:PATH\"), labelled with the module name (and the path\n"
	      "\t// when names collide); red: proprietary by license; orange: P inherited (2020\n"
	      "\t// rule); double red border: fails to load; red edge: uses GPL-only exports;\n"
	      "\t// dashed: unresolved imports; dotted: a module known only from the kernel base\n",
	      f);
	print_dot_legend(f);
	for (size_t i = 0; i < g->n; i++) {
		const struct kp_node *nd = &g->nodes[i];
		const struct kp_verdict *v = vof ? vof[i] : NULL;
		bool own_p = !nd->mod->license_gpl_compatible;
		bool inh_p = !own_p && v && (v->taints & 1);
		size_t nun = 0;

		if (in && !in[i])
			continue;
		fputc('\t', f);
		dot_node_id(f, nd);
		fputs(" [label=\"", f);
		dot_id_part(f, nd->mod->name);
		if (nd->duplicate_name) {
			fputs("\\n", f);
			dot_id_part(f, nd->path);
		}
		if (inh_p)
			fputs("\\nP inherited", f);
		if (v && !v->loads)
			fprintf(f, "\\nfails: %s", kp_errno_name(v->err));
		fputc('"', f);
		/* the fill says P; the border says P too, or a failed load (red, doubled) */
		if (own_p)
			fputs(", fillcolor=\"#f4c7c3\"", f);
		else if (inh_p)
			fputs(", fillcolor=\"#fde2b8\"", f);
		if (v && !v->loads)
			fputs(", color=red, peripheries=2", f);
		else if (own_p)
			fputs(", color=red", f);
		else if (inh_p)
			fputs(", color=darkorange", f);
		fputs("];\n", f);
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
			dot_node_id(f, nd);
			fputs(" -> ", f);
			dot_node_id(f, &g->nodes[p]);
			fprintf(f, " [label=\"%zu%s\"%s];\n", nsym, ngpl ? " GPL" : "",
				ngpl ? ", color=red, penwidth=2" : "");
		}
		for (size_t d = 0; d < nd->nbase_deps; d++) {
			fputs("\t\"base:", f);
			dot_id_part(f, nd->base_deps[d]);
			fputs("\" [label=", f);
			dot_id(f, nd->base_deps[d]);
			fputs(", style=dotted];\n\t", f);
			dot_node_id(f, nd);
			fputs(" -> \"base:", f);
			dot_id_part(f, nd->base_deps[d]);
			fputs("\" [style=dotted];\n", f);
		}
		for (size_t e = 0; e < nd->nedges; e++)
			nun += nd->edges[e].kind == KP_PROV_NONE &&
			       !kp_edge_import(nd, &nd->edges[e])->weak;
		if (nun) {
			fputs("\t\"unresolved:", f);
			dot_id_part(f, nd->path);
			fprintf(f,
				"\" [label=\"%zu unresolved\", shape=note, "
				"style=dashed, fillcolor=white];\n\t",
				nun);
			dot_node_id(f, nd);
			fputs(" -> \"unresolved:", f);
			dot_id_part(f, nd->path);
			fputs("\" [style=dashed, color=gray40];\n", f);
		}
	}
	fputs("}\n", f);
}
