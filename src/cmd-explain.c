// SPDX-License-Identifier: GPL-2.0-or-later
/* kopolicy explain: the causal chain behind one module's predicted outcome. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ctx-options.h"

static void explain_usage(FILE *f)
{
	fputs("Usage: kopolicy explain [OPTIONS] MODULE FILE|DIR...\n"
	      "Why MODULE (a module name, or one of the files) loads or fails, why it is\n"
	      "proprietary (P), and what its symbol_get() calls return, following the chain\n"
	      "through the modules it depends on. The files are the set it is loaded with.\n"
	      "\n" KP_ANALYSIS_HELP,
	      f);
}

static void explain_p(FILE *f, const struct kp_ctx *a, size_t i, unsigned depth)
{
	const struct kp_verdict *v = &a->sim.v[i];
	const struct kp_module *m = a->graph.nodes[i].mod;

	kp_escaped_fprintf(f, "%*s", (int)(2 * depth + 2), "");
	switch (v->p_reason) {
	case KP_P_LICENSE:
		if (m->license)
			kp_escaped_fprintf(f,
					   "%s is proprietary: license '%s' is not GPL-compatible "
					   "(include/linux/license.h)\n",
					   m->name, m->license);
		else
			kp_escaped_fprintf(f,
					   "%s is proprietary: it has no license (the kernel says "
					   "'unspecified')\n",
					   m->name);
		break;
	case KP_P_NAME:
		kp_escaped_fprintf(f, "%s is proprietary: the loader taints modules named %s\n",
				   m->name, m->name);
		break;
	case KP_P_INHERITED:
		if (v->p_from == SIZE_MAX) {
			kp_escaped_fprintf(
				f,
				"%s inherits P: imports %s from a proprietary module already "
				"loaded\n",
				m->name, v->p_symbol);
			break;
		}
		kp_escaped_fprintf(
			f, "%s inherits P: imports %s from %s (2020 rule, inherit_taint())\n",
			m->name, v->p_symbol, a->graph.nodes[v->p_from].mod->name);
		explain_p(f, a, v->p_from, depth + 1);
		break;
	default:
		kp_escaped_fprintf(f, "%s is not proprietary\n", m->name);
	}
}

static void explain_one(FILE *f, const struct kp_ctx *a, size_t i, unsigned depth)
{
	const struct kp_verdict *v = &a->sim.v[i];
	const struct kp_module *m = a->graph.nodes[i].mod;
	char letters[32];

	kp_taint_letters(v->taints, letters, sizeof(letters));
	kp_escaped_fprintf(f, "%*s%s (%s): %s", (int)(2 * depth), "", m->name,
			   a->graph.nodes[i].path, v->loads ? "loads" : "fails to load");
	if (!v->loads)
		kp_escaped_fprintf(f, " with %s (%d)", kp_errno_name(v->err), v->err);
	kp_escaped_fprintf(f, ", module taint %s\n", letters[0] ? letters : "none");
	if (v->taints & (1UL << KP_TAINT_PROPRIETARY_MODULE))
		explain_p(f, a, i, depth);
	for (size_t k = 0; k < v->nfindings; k++)
		if (v->findings[k].consequence == KP_CONS_LOAD_FAIL)
			kp_escaped_fprintf(f, "%*s- %s: %s\n", (int)(2 * depth + 2), "",
					   v->findings[k].id, v->findings[k].message);
	for (size_t k = 0; k < v->nmessages; k++)
		kp_escaped_fprintf(f, "%*sdmesg: %s\n", (int)(2 * depth + 2), "", v->messages[k]);
	for (size_t k = 0; k < v->nsymget; k++)
		kp_escaped_fprintf(f, "%*ssymbol_get(%s) = %s: %s%s%s\n", (int)(2 * depth + 2), "",
				   v->symget[k].symbol, v->symget[k].ok ? "ok" : "NULL",
				   v->symget[k].reason, v->symget[k].owner ? ", owner " : "",
				   v->symget[k].owner ? v->symget[k].owner : "");
	if (v->failed_dep != SIZE_MAX && depth < 32) {
		kp_escaped_fprintf(f, "%*sbecause a dependency fails:\n", (int)(2 * depth + 2), "");
		explain_one(f, a, v->failed_dep, depth + 2);
	}
}

int cmd_explain(struct kp_cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' }, KP_CLI_COMMON_LONGOPTS, KP_ANALYSIS_LONGOPTS, {}
	};
	const char *target;
	struct kp_ctx_opts o;
	struct kp_ctx a;
	size_t idx = SIZE_MAX;
	int c, rc;

	kp_ctx_opts_init(&o);
	while ((c = getopt_long(argc, argv, "hj:k:b:", opts, NULL)) != -1) {
		if (kp_cli_common_option(cli, c, optarg) || kp_ctx_option(&o, c, optarg))
			continue;
		if (c == 'h') {
			explain_usage(stdout);
			return KP_EXIT_OK;
		}
		return kp_cli_bad_option("explain", "hj:k:b:", argv);
	}
	if (argc - optind < (o.basedir ? 1 : 2)) {
		kp_cli_error(NULL, "explain: give the module, then the module files");
		explain_usage(stderr);
		return KP_EXIT_ERROR;
	}
	target = argv[optind];
	kp_cli_ctx_init(&a, cli, &o);
	rc = kp_cli_ctx_load(&a, argv + optind + 1, argc - optind - 1, KP_CTX_SIMULATE);
	if (rc)
		goto out;
	for (size_t i = 0; i < a.graph.n && idx == SIZE_MAX; i++)
		if (!strcmp(a.graph.nodes[i].mod->name, target) ||
		    !strcmp(a.graph.nodes[i].path, target))
			idx = i;
	if (idx == SIZE_MAX) {
		kp_cli_error(NULL, "explain: no module %s among the files given", target);
		rc = KP_EXIT_ERROR;
		goto out;
	}
	explain_one(stdout, &a, idx, 0);
	rc = a.read_failures ? KP_EXIT_ERROR : KP_EXIT_OK;
out:
	kp_ctx_release(&a);
	return rc;
}
