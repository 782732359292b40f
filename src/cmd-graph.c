// SPDX-License-Identifier: GPL-2.0-or-later
/* kopolicy graph: who provides every import, module dependencies, cycles (text, json, dot). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "json-out.h"

static void graph_usage(FILE *f)
{
	fputs("Usage: kopolicy graph [OPTIONS] FILE|DIR...\n"
	      "The dependency graph of a module set over the kernel's exports: the provider and\n"
	      "export class of every import, dependencies, load order, cycles, unresolved "
	      "imports.\n"
	      "\n"
	      "  -f, --format F     text (default), json or dot (Graphviz)\n"
	      "      --focus MODULE only MODULE and the modules within --depth of it\n"
	      "      --depth N      with --focus: how many dependency steps (default 1)\n"
	      "      --pretty       indent JSON\n"
	      "\n" KP_ANALYSIS_HELP
	      "\nExit status: 0 success, 1 a dependency cycle or unresolved non-weak import,\n"
	      "2 usage or input errors.\n",
	      f);
}

/* Marks the nodes within @depth steps of @start, along dependencies in both directions. */
static bool *focus_set(const struct kp_graph *g, size_t start, unsigned depth)
{
	bool *in = calloc(g->n ? g->n : 1, sizeof(*in));
	bool *next = calloc(g->n ? g->n : 1, sizeof(*next));

	if (!in || !next) {
		free(in);
		free(next);
		return NULL;
	}
	in[start] = true;
	for (unsigned d = 0; d < depth; d++) {
		memcpy(next, in, g->n * sizeof(*in));
		for (size_t i = 0; i < g->n; i++)
			for (size_t k = 0; k < g->nodes[i].ndeps; k++) {
				size_t p = g->nodes[i].deps[k];

				if (in[i])
					next[p] = true;
				if (in[p])
					next[i] = true;
			}
		memcpy(in, next, g->n * sizeof(*in));
	}
	free(next);
	return in;
}

static const char *kind_name(enum kp_provider_kind k)
{
	switch (k) {
	case KP_PROV_VMLINUX:
		return "vmlinux";
	case KP_PROV_MODULE:
		return "module";
	case KP_PROV_BASE_MODULE:
		return "base-module";
	case KP_PROV_NONE:
		break;
	}
	return "unresolved";
}

static const char *provider_name(const struct kp_graph *g, const struct kp_edge *e, char *buf,
				 size_t len)
{
	switch (e->kind) {
	case KP_PROV_VMLINUX:
		return "vmlinux";
	case KP_PROV_MODULE:
		return g->nodes[e->node].mod->name;
	case KP_PROV_BASE_MODULE:
		kp_base_owner_modname(e->ksym->owner, buf, len);
		return buf;
	case KP_PROV_NONE:
		break;
	}
	return NULL;
}

static void print_text(FILE *f, const struct kp_graph *g, const bool *in)
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
			} else if (ed->kind == KP_PROV_NONE) {
				nun++;
			} else {
				char buf[64];

				kp_escaped_fprintf(f, "  %s <- %s%s%s%s\n", ed->imp->name,
						   provider_name(g, ed, buf, sizeof(buf)),
						   ed->gpl_only ? " GPL-only" : "",
						   ed->ns ? " ns " : "", ed->ns ? ed->ns : "");
			}
		}
		kp_escaped_fprintf(f, "  vmlinux: %zu imports (%zu GPL-only)\n", nv, nvg);
		if (nun) {
			fputs("  unresolved:", f);
			for (size_t e = 0; e < nd->nedges; e++)
				if (nd->edges[e].kind == KP_PROV_NONE)
					kp_escaped_fprintf(f, " %s%s", nd->edges[e].imp->name,
							   nd->edges[e].imp->weak ? "(weak)" : "");
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

struct json_items {
	const struct kp_graph *g;
	const bool *in;
	bool pretty;
};

/* The imports array as text (plain output): the same bytes as the objects below. */
static struct json_object *imports_text(struct kp_jb *b, const struct kp_graph *g,
					const struct kp_node *nd)
{
	struct kp_jtext t = { 0 };

	kp_jtext_lit(&t, "[");
	for (size_t e = 0; e < nd->nedges && !t.failed; e++) {
		const struct kp_edge *ed = &nd->edges[e];
		char buf[64];

		kp_jtext_lit(&t, e ? ",{\"symbol\":" : "{\"symbol\":");
		kp_jtext_str(&t, ed->imp->name);
		kp_jtext_lit(&t, ",\"weak\":");
		kp_jtext_bool(&t, ed->imp->weak);
		kp_jtext_lit(&t, ",\"kind\":");
		kp_jtext_str(&t, kind_name(ed->kind));
		kp_jtext_lit(&t, ",\"provider\":");
		kp_jtext_str(&t, provider_name(g, ed, buf, sizeof(buf)));
		kp_jtext_lit(&t, ",\"gpl_only\":");
		kp_jtext_bool(&t, ed->gpl_only);
		kp_jtext_lit(&t, ",\"namespace\":");
		kp_jtext_str(&t, ed->ns);
		kp_jtext_lit(&t, ",\"crc\":");
		kp_jtext_crc(&t, ed->has_crc, ed->crc);
		kp_jtext_lit(&t, "}");
	}
	kp_jtext_lit(&t, "]");
	return kp_jb_text(b, &t);
}

/* The module at place @k of the load order, or NULL when --focus leaves it out. */
static struct json_object *module_json(struct kp_jb *b, size_t k, void *data)
{
	const struct json_items *it = data;
	const struct kp_graph *g = it->g;
	size_t i = g->order[k];
	const struct kp_node *nd = &g->nodes[i];
	struct json_object *m, *deps, *unres, *edges, *bdeps;

	if (it->in && !it->in[i])
		return NULL;
	m = kp_jb_object(b);
	kp_jb_add(b, m, "name", kp_jb_string(b, nd->mod->name));
	kp_jb_add(b, m, "path", kp_jb_string(b, nd->path));
	kp_jb_add(b, m, "license", kp_jb_string(b, nd->mod->license));
	kp_jb_add(b, m, "license_gpl_compatible", kp_jb_bool(b, nd->mod->license_gpl_compatible));
	deps = kp_jb_array(b);
	for (size_t d = 0; d < nd->ndeps; d++)
		kp_jb_push(b, deps, kp_jb_string(b, g->nodes[nd->deps[d]].mod->name));
	bdeps = kp_jb_array(b);
	for (size_t d = 0; d < nd->nbase_deps; d++)
		kp_jb_push(b, bdeps, kp_jb_string(b, nd->base_deps[d]));
	unres = kp_jb_array(b);
	edges = it->pretty ? kp_jb_array(b) : imports_text(b, g, nd);
	for (size_t e = 0; e < nd->nedges && !kp_jb_failed(b); e++) {
		const struct kp_edge *ed = &nd->edges[e];
		struct json_object *eo, *sym;
		char buf[64];

		if (!it->pretty) {
			if (ed->kind == KP_PROV_NONE) {
				struct json_object *u = kp_jb_object(b);

				kp_jb_add(b, u, "name", kp_jb_string(b, ed->imp->name));
				kp_jb_add(b, u, "weak", kp_jb_bool(b, ed->imp->weak));
				kp_jb_push(b, unres, u);
			}
			continue;
		}
		eo = kp_jb_object(b);
		sym = kp_jb_string(b, ed->imp->name);

		kp_jb_add(b, eo, "symbol", sym);
		kp_jb_add(b, eo, "weak", kp_jb_bool(b, ed->imp->weak));
		kp_jb_add(b, eo, "kind", kp_jb_static(b, kind_name(ed->kind)));
		kp_jb_add(b, eo, "provider",
			  ed->kind == KP_PROV_VMLINUX
				  ? kp_jb_static(b, "vmlinux")
				  : kp_jb_string(b, provider_name(g, ed, buf, sizeof(buf))));
		kp_jb_add(b, eo, "gpl_only", kp_jb_bool(b, ed->gpl_only));
		kp_jb_add(b, eo, "namespace", kp_jb_string(b, ed->ns));
		kp_jb_add(b, eo, "crc", kp_jb_crc(b, ed->has_crc, ed->crc));
		kp_jb_push(b, edges, eo);
		if (ed->kind == KP_PROV_NONE) {
			struct json_object *u = kp_jb_object(b);

			kp_jb_add(b, u, "name", json_object_get(sym));
			kp_jb_add(b, u, "weak", kp_jb_bool(b, ed->imp->weak));
			kp_jb_push(b, unres, u);
		}
	}
	kp_jb_add(b, m, "depends", deps);
	kp_jb_add(b, m, "base_depends", bdeps);
	kp_jb_add(b, m, "unresolved", unres);
	kp_jb_add(b, m, "imports", edges);
	return m;
}

static int print_json(FILE *f, const struct kp_graph *g, const bool *in, bool pretty, unsigned jobs)
{
	struct json_items it = { .g = g, .in = in, .pretty = pretty };
	struct json_object *cycles, *dups;
	struct kp_jb *b;
	int rc;

	/* Streamed a window of modules at a time: a whole tree never sits in memory as JSON. */
	fputs("{\"schema_version\":1,\"modules\":[", f);
	if (kp_json_stream(f, g->n, module_json, &it, pretty, jobs))
		return -1;
	b = kp_jb_new();
	if (!b)
		return -1;
	cycles = kp_jb_array(b);
	for (size_t c = 0; c < g->ncycles; c++) {
		struct json_object *cy = kp_jb_array(b);

		for (size_t j = 0; j < g->cycles[c].len; j++)
			kp_jb_push(b, cy,
				   kp_jb_string(b, g->nodes[g->cycles[c].nodes[j]].mod->name));
		kp_jb_push(b, cycles, cy);
	}
	dups = kp_jb_array(b);
	for (size_t i = 0; i < g->n; i++) {
		struct json_object *d, *paths;

		if (!g->nodes[i].duplicate_name || kp_graph_find(g, g->nodes[i].mod->name) != i)
			continue;
		d = kp_jb_object(b);
		kp_jb_add(b, d, "name", kp_jb_string(b, g->nodes[i].mod->name));
		paths = kp_jb_array(b);
		for (size_t j = i; j < g->n; j++)
			if (!strcmp(g->nodes[j].mod->name, g->nodes[i].mod->name))
				kp_jb_push(b, paths, kp_jb_string(b, g->nodes[j].path));
		kp_jb_add(b, d, "paths", paths);
		kp_jb_push(b, dups, d);
	}
	if (kp_jb_failed(b)) {
		json_object_put(cycles);
		json_object_put(dups);
		rc = -1;
	} else {
		fputs("],\"cycles\":", f);
		rc = kp_json_emit(f, cycles, pretty);
		fputs(",\"duplicate_names\":", f);
		rc |= kp_json_emit(f, dups, pretty);
		fputs("}\n", f);
	}
	kp_jb_free(b);
	return rc;
}

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
static void print_dot(FILE *f, const struct kp_graph *g, const bool *in,
		      const struct kp_verdict *const *vof)
{
	fputs("digraph kopolicy {\n"
	      "\trankdir=LR;\n"
	      "\tnode [shape=box, style=filled, fillcolor=\"#e8f0fe\", fontname=\"sans\"];\n"
	      "\tedge [fontname=\"sans\", fontsize=9];\n"
	      "\t// nodes are files (\"file:PATH\"), labelled with the module name (and the path\n"
	      "\t// when names collide); red: proprietary by license; orange: P inherited (2020\n"
	      "\t// rule); double border: fails to load; red edge: uses GPL-only exports;\n"
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
		if (own_p)
			fputs(", fillcolor=\"#f4c7c3\", color=red", f);
		else if (inh_p)
			fputs(", fillcolor=\"#fde2b8\", color=darkorange", f);
		if (v && !v->loads)
			fputs(", peripheries=2", f);
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
			nun += nd->edges[e].kind == KP_PROV_NONE && !nd->edges[e].imp->weak;
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

int cmd_graph(struct kp_cli *cli, int argc, char **argv)
{
	static const struct option opts[] = { { "format", required_argument, NULL, 'f' },
					      { "focus", required_argument, NULL, 0x300 },
					      { "depth", required_argument, NULL, 0x301 },
					      { "pretty", no_argument, NULL, 0x302 },
					      { "help", no_argument, NULL, 'h' },
					      KP_CLI_COMMON_LONGOPTS,
					      KP_ANALYSIS_LONGOPTS,
					      {} };
	const char *format = "text", *focus = NULL;
	unsigned depth = 1;
	bool pretty = false, *in = NULL;
	struct kp_analysis a;
	int c, rc;

	kp_analysis_init(&a);
	while ((c = getopt_long(argc, argv, "f:hj:k:b:", opts, NULL)) != -1) {
		if (kp_cli_common_option(cli, c, optarg) || kp_analysis_option(&a, c, optarg))
			continue;
		switch (c) {
		case 'f':
			format = optarg;
			break;
		case 0x300:
			focus = optarg;
			break;
		case 0x301: {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (*end || v < 0 || v > 1000) {
				kp_cli_error(NULL, "--depth takes a number from 0 to 1000");
				return KP_EXIT_ERROR;
			}
			depth = (unsigned)v;
			break;
		}
		case 0x302:
			pretty = true;
			break;
		case 'h':
			graph_usage(stdout);
			return KP_EXIT_OK;
		default:
			return kp_cli_bad_option("graph", "f:hj:k:b:", argv);
		}
	}
	if (strcmp(format, "text") && strcmp(format, "json") && strcmp(format, "dot")) {
		kp_cli_error(NULL, "unknown format '%s' (text, json or dot)", format);
		return KP_EXIT_ERROR;
	}
	if (optind >= argc && !a.basedir) {
		kp_cli_error(NULL, "graph: no module files given");
		graph_usage(stderr);
		return KP_EXIT_ERROR;
	}
	/* DOT colours what the loader does (P inherited, failures): simulate for it */
	rc = kp_analysis_run(&a, cli, argv + optind, argc - optind, !strcmp(format, "dot"));
	if (rc)
		goto out;
	if (focus) {
		size_t i = kp_graph_find(&a.graph, focus);

		if (i == SIZE_MAX) {
			kp_cli_error(NULL, "--focus: no module named %s in the set", focus);
			rc = KP_EXIT_ERROR;
			goto out;
		}
		in = focus_set(&a.graph, i, depth);
		if (!in) {
			kp_cli_error(NULL, "out of memory");
			rc = KP_EXIT_ERROR;
			goto out;
		}
	}
	if (!strcmp(format, "json")) {
		if (print_json(stdout, &a.graph, in, pretty, cli->jobs)) {
			kp_cli_error(NULL, "out of memory");
			rc = KP_EXIT_ERROR;
			goto out;
		}
	} else if (!strcmp(format, "dot")) {
		const struct kp_verdict **vof = calloc(a.graph.n ? a.graph.n : 1, sizeof(*vof));

		if (!vof) {
			kp_cli_error(NULL, "out of memory");
			rc = KP_EXIT_ERROR;
			goto out;
		}
		for (size_t i = 0; i < a.sim.n; i++)
			if (a.sim.v[i].node < a.graph.n)
				vof[a.sim.v[i].node] = &a.sim.v[i];
		print_dot(stdout, &a.graph, in, vof);
		free(vof);
	} else {
		print_text(stdout, &a.graph, in);
	}
	rc = a.graph.ncycles ? KP_EXIT_FINDINGS : KP_EXIT_OK;
	for (size_t i = 0; i < a.graph.n; i++)
		for (size_t e = 0; e < a.graph.nodes[i].nedges; e++)
			if (a.graph.nodes[i].edges[e].kind == KP_PROV_NONE &&
			    !a.graph.nodes[i].edges[e].imp->weak)
				rc = KP_EXIT_FINDINGS;
	if (a.read_failures)
		rc = KP_EXIT_ERROR;
out:
	free(in);
	kp_analysis_free(&a);
	return rc;
}
