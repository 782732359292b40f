// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kopolicy explain: the causal chain behind one module's predicted outcome, with the facts
 * that decide it (the GPL-only symbols it uses, what it imports from proprietary modules)
 * and what to do about each finding. Text, or JSON with --json.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "check-output.h"
#include "ctx-options.h"
#include "json-out.h"
#include "module-lookup.h"

#define EXPLAIN_MAX_DEPTH 32
#define LIST_SHOWN	  8 /* symbols named in a text line; JSON lists them all */

static void explain_usage(FILE *f)
{
	fputs("Usage: kopolicy explain [OPTIONS] MODULE [FILE|DIR...]\n"
	      "Why MODULE loads or fails, why it is proprietary (P), and what its symbol_get()\n"
	      "calls return, following the chain through the modules it depends on; the facts\n"
	      "that decide it (the GPL-only symbols it uses, what it imports from proprietary\n"
	      "modules) and a fix for each finding. MODULE is a file of the set, a module name\n"
	      "('-' and '_' alike), a file name, or with -b/--running whatever modprobe\n"
	      "resolves it to (modprobe.d and modules.alias aliases). The files are the set it\n"
	      "is loaded with; with -b ROOT or --running and no FILE, the whole tree.\n"
	      "\n"
	      "      --json         the explanation as JSON (schema in kopolicy(1))\n"
	      "      --pretty       indent JSON\n"
	      "\n" KP_ANALYSIS_HELP,
	      f);
}

/* What decides the 2020 rule for a module: its GPL-only imports and its imports from P. */
struct deciding {
	const char **gpl_only; /* resolved GPL-only imports, .symtab order */
	size_t ngpl_only;
	const char **from_p; /* imports from proprietary modules, .symtab order */
	size_t *from_p_node;
	size_t nfrom_p;
};

static bool is_p(const struct kp_verdict *v)
{
	return v->taints & (1UL << KP_TAINT_PROPRIETARY_MODULE);
}

static int deciding_facts(const struct kp_ctx *a, size_t i, struct deciding *d)
{
	const struct kp_node *nd = &a->graph.nodes[i];

	memset(d, 0, sizeof(*d));
	d->gpl_only = calloc(nd->nedges + 1, sizeof(*d->gpl_only));
	d->from_p = calloc(nd->nedges + 1, sizeof(*d->from_p));
	d->from_p_node = calloc(nd->nedges + 1, sizeof(*d->from_p_node));
	if (!d->gpl_only || !d->from_p || !d->from_p_node)
		return -1;
	for (size_t e = 0; e < nd->nedges; e++) {
		const struct kp_edge *ed = &nd->edges[e];
		const char *sym = kp_edge_import(nd, ed)->name;

		if (ed->kind != KP_PROV_NONE && ed->gpl_only)
			d->gpl_only[d->ngpl_only++] = sym;
		if (ed->kind == KP_PROV_MODULE && is_p(&a->sim.v[ed->node]) && ed->node != i) {
			d->from_p_node[d->nfrom_p] = ed->node;
			d->from_p[d->nfrom_p++] = sym;
		}
	}
	return 0;
}

static void deciding_release(struct deciding *d)
{
	free(d->gpl_only);
	free(d->from_p);
	free(d->from_p_node);
}

/* "a, b, c and 5 more" */
static void print_list(FILE *f, const char *const *names, size_t n)
{
	for (size_t k = 0; k < n && k < LIST_SHOWN; k++)
		kp_escaped_fprintf(f, "%s%s", k ? ", " : "", names[k]);
	if (n > LIST_SHOWN)
		fprintf(f, " and %zu more", n - LIST_SHOWN);
}

/* The one sentence that decides the 2020 rule's verdict for this module. */
static void print_verdict_fact(FILE *f, const struct kp_ctx *a, size_t i, const struct deciding *d,
			       int indent)
{
	const struct kp_verdict *v = &a->sim.v[i];
	const char *name = a->graph.nodes[i].mod->name;

	fprintf(f, "%*sdeciding fact: ", indent, "");
	if (v->p_reason == KP_P_LICENSE || v->p_reason == KP_P_NAME) {
		kp_escaped_fprintf(f,
				   "%s is proprietary itself: EXPORT_SYMBOL_GPL exports are "
				   "invisible to it%s\n",
				   name, d->ngpl_only ? "" : ", and it uses none (it can load)");
	} else if (d->nfrom_p && d->ngpl_only) {
		kp_escaped_fprintf(f, "%s uses GPL-only symbols (", name);
		print_list(f, d->gpl_only, d->ngpl_only);
		kp_escaped_fprintf(f,
				   ") and imports %s from proprietary module %s: the 2020 rule "
				   "(inherit_taint()) refuses a proprietary import once GPL-only "
				   "symbols are in use, and the first of them met in .symtab order "
				   "decides\n",
				   d->from_p[0], a->graph.nodes[d->from_p_node[0]].mod->name);
	} else if (d->nfrom_p) {
		kp_escaped_fprintf(f,
				   "%s imports %s from proprietary module %s and so becomes "
				   "proprietary (P), but it uses no GPL-only symbol: the 2020 rule "
				   "has nothing to refuse, it loads\n",
				   name, d->from_p[0], a->graph.nodes[d->from_p_node[0]].mod->name);
	} else if (d->ngpl_only) {
		kp_escaped_fprintf(f, "%s uses %zu GPL-only symbol%s (", name, d->ngpl_only,
				   d->ngpl_only == 1 ? "" : "s");
		print_list(f, d->gpl_only, d->ngpl_only);
		fputs(") and imports nothing from a proprietary module: the 2020 rule does not "
		      "apply\n",
		      f);
	} else {
		kp_escaped_fprintf(f,
				   "%s uses no GPL-only symbol and imports nothing from a "
				   "proprietary module\n",
				   name);
	}
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
		if (depth < EXPLAIN_MAX_DEPTH)
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
	int ind = (int)(2 * depth + 2);
	struct deciding d;
	char letters[32];

	kp_taint_letters(v->taints, letters, sizeof(letters));
	kp_escaped_fprintf(f, "%*s%s (%s): %s", (int)(2 * depth), "", m->name,
			   a->graph.nodes[i].path, v->loads ? "loads" : "fails to load");
	if (!v->loads && KP_ERR_IS_STALL(v->err)) /* no errno: an oops, a block, no run */
		kp_escaped_fprintf(f, " (%s)", kp_errno_name(v->err));
	else if (!v->loads)
		kp_escaped_fprintf(f, " with %s (%d)", kp_errno_name(v->err), v->err);
	kp_escaped_fprintf(f, ", module taint %s\n", letters[0] ? letters : "none");
	if (is_p(v))
		explain_p(f, a, i, depth);
	if (deciding_facts(a, i, &d) == 0)
		print_verdict_fact(f, a, i, &d, ind);
	deciding_release(&d);
	for (size_t k = 0; k < v->nfindings; k++) {
		const struct kp_finding *fi = &v->findings[k];
		char *fix;

		if (fi->severity == KP_SEV_NOTE && fi->consequence != KP_CONS_TAINT)
			continue;
		kp_escaped_fprintf(f, "%*s- %s: %s\n", ind, "", fi->id, fi->message);
		fix = kp_finding_fix(a, v, fi);
		if (fix)
			kp_escaped_fprintf(f, "%*s  fix: %s\n", ind, "", fix);
		free(fix);
	}
	for (size_t k = 0; k < v->nmessages; k++)
		kp_escaped_fprintf(f, "%*sdmesg: %s\n", ind, "", v->messages[k]);
	kp_print_symget_later(f, ind, v);
	for (size_t k = 0; k < v->nsymget; k++) {
		const struct kp_symget_result *r = &v->symget[k];
		char *when = kp_symget_when_text(r->when, r->path, r->function);

		kp_escaped_fprintf(f, "%*ssymbol_get(%s) = %s: %s%s%s; runs %s\n", ind, "",
				   r->symbol, r->ok ? "ok" : "NULL", r->reason,
				   r->owner ? ", owner " : "", r->owner ? r->owner : "",
				   when ? when : "(out of memory)");
		free(when);
	}
	if (v->failed_dep != SIZE_MAX && depth < EXPLAIN_MAX_DEPTH) {
		kp_escaped_fprintf(f, "%*sbecause a dependency fails:\n", ind, "");
		explain_one(f, a, v->failed_dep, depth + 2);
	}
}

static const char *p_reason_name(enum kp_p_reason r)
{
	switch (r) {
	case KP_P_LICENSE:
		return "license";
	case KP_P_NAME:
		return "name";
	case KP_P_INHERITED:
		return "inherited";
	case KP_P_PRELOADED:
		return "loaded";
	default:
		return NULL;
	}
}

static struct json_object *string_array(const char *const *s, size_t n)
{
	struct json_object *arr = json_object_new_array();

	for (size_t i = 0; i < n; i++)
		json_object_array_add(arr, kp_json_string(s[i]));
	return arr;
}

static struct json_object *explain_json(const struct kp_ctx *a, size_t i, unsigned depth)
{
	const struct kp_verdict *v = &a->sim.v[i];
	const struct kp_node *nd = &a->graph.nodes[i];
	struct json_object *o = json_object_new_object(), *arr;
	struct deciding d;
	char letters[32];

	kp_json_add(o, "name", kp_json_string(nd->mod->name));
	kp_json_add(o, "path", kp_json_string(nd->path));
	kp_json_add(o, "license", kp_json_string(nd->mod->license));
	kp_json_add(o, "loads", json_object_new_boolean(v->loads));
	kp_json_add(o, "errno",
		    kp_errno_name(v->err) ? json_object_new_string(kp_errno_name(v->err)) : NULL);
	kp_taint_letters(v->taints, letters, sizeof(letters));
	kp_json_add(o, "taint", json_object_new_string(letters));
	kp_json_add(o, "p_reason",
		    p_reason_name(v->p_reason) ? json_object_new_string(p_reason_name(v->p_reason))
					       : NULL);
	if (v->p_reason == KP_P_INHERITED) {
		kp_json_add(o, "p_symbol", kp_json_string(v->p_symbol));
		kp_json_add(o, "p_from",
			    v->p_from != SIZE_MAX && depth < EXPLAIN_MAX_DEPTH
				    ? explain_json(a, v->p_from, depth + 1)
				    : NULL);
	}
	if (deciding_facts(a, i, &d) == 0) {
		kp_json_add(o, "gpl_only_symbols", string_array(d.gpl_only, d.ngpl_only));
		arr = json_object_new_array();
		for (size_t k = 0; k < d.nfrom_p; k++) {
			struct json_object *e = json_object_new_object();

			kp_json_add(e, "symbol", kp_json_string(d.from_p[k]));
			kp_json_add(e, "provider",
				    kp_json_string(a->graph.nodes[d.from_p_node[k]].mod->name));
			json_object_array_add(arr, e);
		}
		kp_json_add(o, "imports_from_proprietary", arr);
	}
	deciding_release(&d);
	kp_json_add(o, "findings", kp_check_findings_json(a, v));
	kp_json_add(o, "messages", string_array((const char *const *)v->messages, v->nmessages));
	kp_json_add(o, "symbol_get", kp_check_symget_json(v));
	kp_json_add(o, "failed_dependency",
		    v->failed_dep != SIZE_MAX && depth < EXPLAIN_MAX_DEPTH
			    ? explain_json(a, v->failed_dep, depth + 1)
			    : NULL);
	return o;
}

int cmd_explain(struct kp_cli *cli, int argc, char **argv)
{
	static const struct option opts[] = { { "help", no_argument, NULL, 'h' },
					      { "json", no_argument, NULL, 0x400 },
					      { "pretty", no_argument, NULL, 0x401 },
					      KP_CLI_COMMON_LONGOPTS,
					      KP_ANALYSIS_LONGOPTS,
					      {} };
	const char *target, *how;
	bool json = false, pretty = false;
	struct kp_ctx_opts o;
	struct kp_ctx a;
	size_t idx;
	int c, rc;

	kp_ctx_opts_init(&o);
	while ((c = getopt_long(argc, argv, "hj:k:b:", opts, NULL)) != -1) {
		if (kp_cli_common_option(cli, c, optarg) || kp_ctx_option(&o, c, optarg))
			continue;
		if (c == 'h') {
			explain_usage(stdout);
			return KP_EXIT_OK;
		}
		if (c == 0x400 || c == 0x401) {
			json = true;
			pretty |= c == 0x401;
			continue;
		}
		return kp_cli_bad_option("explain", "hj:k:b:", argv);
	}
	if (argc - optind < (o.basedir || o.running ? 1 : 2)) {
		kp_cli_error(NULL, "explain: give the module, then the module files (or -b ROOT)");
		explain_usage(stderr);
		return KP_EXIT_ERROR;
	}
	target = argv[optind];
	kp_cli_ctx_init(&a, cli, &o);
	rc = kp_cli_ctx_load(&a, argv + optind + 1, argc - optind - 1, KP_CTX_SIMULATE);
	if (rc)
		goto out;
	idx = kp_cli_find_module(&a, target, &how);
	if (idx == SIZE_MAX) {
		if (argc - optind > 1)
			kp_cli_error(NULL,
				     "explain: no module %s among the files given (by file, "
				     "module name or file name)",
				     target);
		else
			kp_cli_error(NULL,
				     "explain: no module %s in %s (by module name, file name or "
				     "what modprobe resolves it to)",
				     target,
				     a.have_tree && a.tree.moddir ? a.tree.moddir : "the tree");
		rc = KP_EXIT_ERROR;
		goto out;
	}
	if (json) {
		struct json_object *root = json_object_new_object();

		kp_json_add(root, "schema_version", json_object_new_int(KP_CHECK_SCHEMA_VERSION));
		kp_json_add(root, "asked", kp_json_string(target));
		kp_json_add(root, "matched_by", json_object_new_string(how));
		kp_json_add(root, "release", kp_json_string(a.facts.release));
		kp_json_add(root, "rules",
			    json_object_new_string(kp_profile_rules_name(&a.facts.profile)));
		kp_json_add(root, "module", explain_json(&a, idx, 0));
		kp_json_emit(stdout, root, pretty);
		fputc('\n', stdout);
	} else {
		explain_one(stdout, &a, idx, 0);
	}
	rc = a.read_failures ? KP_EXIT_ERROR : KP_EXIT_OK;
out:
	kp_ctx_release(&a);
	return rc;
}
