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
		fprintf(f, "%s%s\n", nd->mod->name,
			nd->mod->license_gpl_compatible ? "" : " [proprietary]");
		fputs("  depends:", f);
		for (size_t d = 0; d < nd->ndeps; d++)
			fprintf(f, " %s", g->nodes[nd->deps[d]].mod->name);
		for (size_t d = 0; d < nd->nbase_deps; d++)
			fprintf(f, " %s(base)", nd->base_deps[d]);
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

				fprintf(f, "  %s <- %s%s%s%s\n", ed->imp->name,
					provider_name(g, ed, buf, sizeof(buf)),
					ed->gpl_only ? " GPL-only" : "", ed->ns ? " ns " : "",
					ed->ns ? ed->ns : "");
			}
		}
		fprintf(f, "  vmlinux: %zu imports (%zu GPL-only)\n", nv, nvg);
		if (nun) {
			fputs("  unresolved:", f);
			for (size_t e = 0; e < nd->nedges; e++)
				if (nd->edges[e].kind == KP_PROV_NONE)
					fprintf(f, " %s%s", nd->edges[e].imp->name,
						nd->edges[e].imp->weak ? "(weak)" : "");
			fputc('\n', f);
		}
	}
	for (size_t c = 0; c < g->ncycles; c++) {
		fputs("cycle:", f);
		for (size_t j = 0; j < g->cycles[c].len; j++)
			fprintf(f, " %s", g->nodes[g->cycles[c].nodes[j]].mod->name);
		fputc('\n', f);
	}
}

static void print_json(FILE *f, const struct kp_graph *g, const bool *in, bool pretty)
{
	struct json_object *cycles = json_object_new_array(), *dups = json_object_new_array();
	bool first = true;

	/* Streamed a module at a time: a whole tree never sits in memory as a JSON tree. */
	fputs("{\"schema_version\":1,\"modules\":[", f);
	for (size_t k = 0; k < g->n; k++) {
		size_t i = g->order[k];
		const struct kp_node *nd = &g->nodes[i];
		struct json_object *m, *deps, *unres, *edges, *bdeps;

		if (in && !in[i])
			continue;
		m = json_object_new_object();
		deps = json_object_new_array();
		bdeps = json_object_new_array();
		unres = json_object_new_array();
		edges = json_object_new_array();
		kp_json_add(m, "name", kp_json_string(nd->mod->name));
		kp_json_add(m, "path", kp_json_string(nd->path));
		kp_json_add(m, "license", kp_json_string(nd->mod->license));
		kp_json_add(m, "license_gpl_compatible",
			    json_object_new_boolean(nd->mod->license_gpl_compatible));
		for (size_t d = 0; d < nd->ndeps; d++)
			json_object_array_add(deps,
					      kp_json_string(g->nodes[nd->deps[d]].mod->name));
		for (size_t d = 0; d < nd->nbase_deps; d++)
			json_object_array_add(bdeps, kp_json_string(nd->base_deps[d]));
		for (size_t e = 0; e < nd->nedges; e++) {
			const struct kp_edge *ed = &nd->edges[e];
			struct json_object *eo = json_object_new_object();
			char buf[64];

			kp_json_add(eo, "symbol", kp_json_string(ed->imp->name));
			kp_json_add(eo, "weak", json_object_new_boolean(ed->imp->weak));
			kp_json_add(eo, "kind", json_object_new_string(kind_name(ed->kind)));
			kp_json_add(eo, "provider",
				    kp_json_string(provider_name(g, ed, buf, sizeof(buf))));
			kp_json_add(eo, "gpl_only", json_object_new_boolean(ed->gpl_only));
			kp_json_add(eo, "namespace", kp_json_string(ed->ns));
			kp_json_add(eo, "crc", kp_json_crc(ed->has_crc, ed->crc));
			json_object_array_add(edges, eo);
			if (ed->kind == KP_PROV_NONE) {
				struct json_object *u = json_object_new_object();

				kp_json_add(u, "name", kp_json_string(ed->imp->name));
				kp_json_add(u, "weak", json_object_new_boolean(ed->imp->weak));
				json_object_array_add(unres, u);
			}
		}
		kp_json_add(m, "depends", deps);
		kp_json_add(m, "base_depends", bdeps);
		kp_json_add(m, "unresolved", unres);
		kp_json_add(m, "imports", edges);
		fputs(first ? "\n" : ",\n", f);
		first = false;
		kp_json_emit(f, m, pretty);
	}
	for (size_t c = 0; c < g->ncycles; c++) {
		struct json_object *cy = json_object_new_array();

		for (size_t j = 0; j < g->cycles[c].len; j++)
			json_object_array_add(
				cy, kp_json_string(g->nodes[g->cycles[c].nodes[j]].mod->name));
		json_object_array_add(cycles, cy);
	}
	for (size_t i = 0; i < g->n; i++) {
		struct json_object *d;

		if (!g->nodes[i].duplicate_name || kp_graph_find(g, g->nodes[i].mod->name) != i)
			continue;
		d = json_object_new_object();
		kp_json_add(d, "name", kp_json_string(g->nodes[i].mod->name));
		{
			struct json_object *paths = json_object_new_array();

			for (size_t j = i; j < g->n; j++)
				if (!strcmp(g->nodes[j].mod->name, g->nodes[i].mod->name))
					json_object_array_add(paths,
							      kp_json_string(g->nodes[j].path));
			kp_json_add(d, "paths", paths);
		}
		json_object_array_add(dups, d);
	}
	fputs("],\"cycles\":", f);
	kp_json_emit(f, cycles, pretty);
	fputs(",\"duplicate_names\":", f);
	kp_json_emit(f, dups, pretty);
	fputs("}\n", f);
}

static void dot_id(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void print_dot(FILE *f, const struct kp_graph *g, const bool *in)
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
			fprintf(f,
				"\t\"unresolved:%s\" [label=\"%zu unresolved\", shape=note, "
				"style=dashed, fillcolor=white];\n\t",
				nd->mod->name, nun);
			dot_id(f, nd->mod->name);
			fprintf(f, " -> \"unresolved:%s\" [style=dashed, color=gray40];\n",
				nd->mod->name);
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
			graph_usage(stderr);
			return KP_EXIT_ERROR;
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
	rc = kp_analysis_run(&a, cli, argv + optind, argc - optind, false);
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
	if (!strcmp(format, "json"))
		print_json(stdout, &a.graph, in, pretty);
	else if (!strcmp(format, "dot"))
		print_dot(stdout, &a.graph, in);
	else
		print_text(stdout, &a.graph, in);
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
