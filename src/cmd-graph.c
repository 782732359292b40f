// SPDX-License-Identifier: GPL-2.0-or-later
/* kopolicy graph: who provides every import, module dependencies, cycles (text, json, dot). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ctx-options.h"
#include "graph-output.h"
#include "module-lookup.h"

static void graph_usage(FILE *f)
{
	fputs("Usage: kopolicy graph [OPTIONS] FILE|DIR...\n"
	      "The dependency graph of a module set over the kernel's exports: the provider and\n"
	      "export class of every import, dependencies, load order, cycles, unresolved "
	      "imports.\n"
	      "\n"
	      "  -f, --format F     text (default), json or dot (Graphviz)\n"
	      "      --focus MODULE only MODULE (a file, module name, file name or modprobe\n"
	      "                     alias) and the modules within --depth of it\n"
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
	struct kp_ctx_opts o;
	struct kp_ctx a;
	int c, rc;

	kp_ctx_opts_init(&o);
	while ((c = getopt_long(argc, argv, "f:hj:k:b:", opts, NULL)) != -1) {
		if (kp_cli_common_option(cli, c, optarg) || kp_ctx_option(&o, c, optarg))
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
	if (optind >= argc && !o.basedir) {
		kp_cli_error(NULL, "graph: no module files given");
		graph_usage(stderr);
		return KP_EXIT_ERROR;
	}
	/* DOT colours what the loader does (P inherited, failures): simulate for it */
	kp_cli_ctx_init(&a, cli, &o);
	rc = kp_cli_ctx_load(&a, argv + optind, argc - optind,
			     !strcmp(format, "dot") ? KP_CTX_SIMULATE : 0);
	if (rc)
		goto out;
	if (focus) {
		const char *how;
		size_t i = kp_cli_find_module(&a, focus, &how);

		if (i == SIZE_MAX) {
			kp_cli_error(NULL,
				     "--focus: no module %s in the set (by file, module name, file "
				     "name or modprobe alias)",
				     focus);
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
		if (kp_graph_print_json(stdout, &a.graph, in, pretty, cli->jobs)) {
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
		kp_graph_print_dot(stdout, &a.graph, in, vof);
		free(vof);
	} else {
		kp_graph_print_text(stdout, &a.graph, in);
	}
	rc = a.graph.ncycles ? KP_EXIT_FINDINGS : KP_EXIT_OK;
	for (size_t i = 0; i < a.graph.n; i++) {
		const struct kp_node *nd = &a.graph.nodes[i];

		for (size_t e = 0; e < nd->nedges; e++)
			if (nd->edges[e].kind == KP_PROV_NONE &&
			    !kp_edge_import(nd, &nd->edges[e])->weak)
				rc = KP_EXIT_FINDINGS;
	}
	if (a.read_failures)
		rc = KP_EXIT_ERROR;
out:
	free(in);
	kp_ctx_release(&a);
	return rc;
}
