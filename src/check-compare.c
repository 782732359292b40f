// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kopolicy check --compare A,B: the module set simulated under two rule sets, and what
 * differs (load outcome, P, symbol_get() results) as a list every output format prints.
 * Also the list of inputs that could not be read, which every format carries.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check-output.h"

static int add_change(struct kp_comparison *cmp, size_t node, enum kp_change_kind kind,
		      const char *from, const char *to, const char *symbol)
{
	struct kp_change *grown = realloc(cmp->changes, (cmp->n + 1) * sizeof(*grown));

	if (!grown)
		return -1;
	cmp->changes = grown;
	grown[cmp->n] = (struct kp_change){ .node = node, .kind = kind, .from = from, .to = to };
	if (symbol && !(grown[cmp->n].symbol = strdup(symbol)))
		return -1;
	cmp->n++;
	return 0;
}

static const char *outcome(const struct kp_verdict *v)
{
	return v->loads ? "loads" : kp_errno_name(v->err) ? kp_errno_name(v->err) : "fails";
}

/* The differences of one module between its verdicts @x (rules A) and @y (rules B). */
static int diff_module(struct kp_comparison *cmp, size_t node, const struct kp_verdict *x,
		       const struct kp_verdict *y)
{
	if (x->loads != y->loads) {
		if (add_change(cmp, node, KP_CHANGE_LOAD, outcome(x), outcome(y), NULL) < 0)
			return -1;
	} else if ((x->taints ^ y->taints) & (1UL << KP_TAINT_PROPRIETARY_MODULE)) {
		bool p = y->taints & (1UL << KP_TAINT_PROPRIETARY_MODULE);

		if (add_change(cmp, node, KP_CHANGE_TAINT, p ? "-" : "P", p ? "P" : "-", NULL) < 0)
			return -1;
	}
	for (size_t j = 0; j < x->nsymget; j++)
		for (size_t l = 0; l < y->nsymget; l++)
			if (!strcmp(x->symget[j].symbol, y->symget[l].symbol) &&
			    x->symget[j].ok != y->symget[l].ok &&
			    add_change(cmp, node, KP_CHANGE_SYMBOL_GET,
				       x->symget[j].ok ? "ok" : "NULL",
				       y->symget[l].ok ? "ok" : "NULL", x->symget[j].symbol) < 0)
				return -1;
	return 0;
}

int kp_compare_rules(const struct kp_ctx *a, const char *spec, struct kp_comparison *cmp)
{
	const char *comma = strchr(spec, ',');
	struct kp_kernel_facts fa = a->facts, fb = a->facts;
	struct kp_simulation sa, sb;
	struct kp_err err = { 0 };
	int rc = 0;

	memset(cmp, 0, sizeof(*cmp));
	if (!comma || (size_t)(comma - spec) >= sizeof(cmp->first) ||
	    strlen(comma + 1) >= sizeof(cmp->second)) {
		kp_cli_error(NULL, "--compare takes two rule sets, e.g. 2020,2023");
		return KP_EXIT_ERROR;
	}
	snprintf(cmp->first, sizeof(cmp->first), "%.*s", (int)(comma - spec), spec);
	snprintf(cmp->second, sizeof(cmp->second), "%s", comma + 1);
	if (kp_profile_apply_rules(&fa.profile, cmp->first) < 0 ||
	    kp_profile_apply_rules(&fb.profile, cmp->second) < 0) {
		kp_cli_error(NULL, "--compare: unknown rule set in '%s'", spec);
		return KP_EXIT_ERROR;
	}
	if (kp_simulate(&a->graph, &fa, &sa, &err) < 0) {
		kp_cli_error(NULL, "%s", err.msg);
		return KP_EXIT_ERROR;
	}
	if (kp_simulate(&a->graph, &fb, &sb, &err) < 0) {
		kp_cli_error(NULL, "%s", err.msg);
		kp_simulation_release(&sa);
		return KP_EXIT_ERROR;
	}
	for (size_t k = 0; k < a->graph.n && !rc; k++) {
		size_t i = a->graph.order[k];

		if (a->graph.nodes[i].provider)
			continue; /* resolved against, not reported (--provider) */
		if (diff_module(cmp, i, &sa.v[i], &sb.v[i]) < 0) {
			kp_cli_error(NULL, "out of memory");
			rc = KP_EXIT_ERROR;
		}
	}
	kp_simulation_release(&sa);
	kp_simulation_release(&sb);
	if (rc)
		kp_comparison_release(cmp);
	return rc;
}

void kp_comparison_release(struct kp_comparison *cmp)
{
	for (size_t i = 0; i < cmp->n; i++)
		free(cmp->changes[i].symbol);
	free(cmp->changes);
	memset(cmp, 0, sizeof(*cmp));
}

char *kp_change_text(const struct kp_ctx *a, const struct kp_change *ch)
{
	const char *name = a->graph.nodes[ch->node].mod->name;
	char *s = NULL;
	int r;

	switch (ch->kind) {
	case KP_CHANGE_LOAD:
		r = asprintf(&s, "%s: %s -> %s", name, ch->from, ch->to);
		break;
	case KP_CHANGE_TAINT:
		r = asprintf(&s, "%s: %s P", name, strcmp(ch->to, "P") ? "no longer" : "becomes");
		break;
	default:
		r = asprintf(&s, "%s: symbol_get(%s) %s -> %s", name, ch->symbol, ch->from, ch->to);
		break;
	}
	return r < 0 ? NULL : s;
}

size_t kp_check_input_errors(const struct kp_ctx *a, struct kp_input_error **out)
{
	size_t n = a->nempty_dirs, k = 0;
	struct kp_input_error *e;

	*out = NULL;
	/* a provider that could not be read was said on stderr: not an input of the report */
	for (size_t i = 0; i < a->set.n; i++)
		n += !a->set.entries[i].mod && !a->set.entries[i].provider;
	n += a->set.nwarnings;
	if (!n || !(e = calloc(n, sizeof(*e))))
		return 0;
	for (size_t i = 0; i < a->nempty_dirs; i++)
		e[k++] = (struct kp_input_error){ a->empty_dirs[i], KP_CTX_EMPTY_DIR, false };
	for (size_t i = 0; i < a->set.n; i++)
		if (!a->set.entries[i].mod && !a->set.entries[i].provider)
			e[k++] = (struct kp_input_error){ a->set.entries[i].path,
							  a->set.entries[i].error
								  ? a->set.entries[i].error
								  : "not read",
							  false };
	for (size_t i = 0; i < a->set.nwarnings; i++)
		e[k++] = (struct kp_input_error){ a->set.warnings[i].path, a->set.warnings[i].what,
						  true };
	*out = e;
	return k;
}
