// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdlib.h>
#include <string.h>

#include "rules.h"

static struct kp_symget_result *push(struct kp_verdict *v, size_t *cap)
{
	struct kp_symget_result *r;

	if (kp_grow(&v->symget, cap, v->nsymget + 1, sizeof(*v->symget)) < 0)
		return NULL;
	r = &v->symget[v->nsymget++];
	memset(r, 0, sizeof(*r));
	return r;
}

/*
 * Why find_symbol() found no set module's export @name: its module failed to load, or (v7.1+)
 * the module loaded but its __ksymtab_gpl is one find_module_sections() ignores.
 */
static const char *not_found_reason(const struct kp_sim_ctx *c, const char *name)
{
	const struct kp_symbol_index_entry *e = kp_symbol_index_find(&c->g->exports, name);
	bool ignored = false;

	for (; e; e = kp_symbol_index_next(e)) {
		const struct kp_export_ref *r = e->value;
		bool gpl;

		kp_read_verdict(c, r->node);
		if (!c->sim->v[r->node].loads)
			return "its module fails to load";
		ignored = ignored || !kp_export_class(c, r->exp, &gpl);
	}
	return ignored ? "not exported: its module's __ksymtab_gpl is ignored by this kernel"
		       : "not exported";
}

/*
 * The call sites whose name is computed at run time (sprintf() into a buffer, a name from a
 * table): what they return cannot be predicted, so they are counted and said, never guessed.
 */
static void dynamic_sites(struct kp_verdict *v, const struct kp_module *m)
{
	const char *format = NULL;
	size_t n = 0;

	for (size_t i = 0; i < m->nsymget; i++)
		if (!m->symget[i].symbol && m->symget[i].method == KP_SYMGET_DYNAMIC) {
			n++;
			format = format ? format : m->symget[i].format;
		}
	if (n && format)
		kp_finding(v, "symbol-get-dynamic", KP_SEV_NOTE, KP_CONS_WARN, NULL,
			   "%zu symbol_get() call(s) with a name computed at run time (format "
			   "'%s'): not analysed, what they return is not predicted",
			   n, format);
	else if (n)
		kp_finding(v, "symbol-get-dynamic", KP_SEV_NOTE, KP_CONS_WARN, NULL,
			   "%zu symbol_get() call(s) with a name computed at run time: not "
			   "analysed, what they return is not predicted",
			   n);
}

/* Earlier first: a site at load runs before one whose time is unknown, before one called later. */
static int when_rank(enum kp_symget_when w)
{
	return w == KP_SYMGET_AT_LOAD ? 0 : w == KP_SYMGET_WHEN_UNKNOWN ? 1 : 2;
}

/* Of @m's sites calling @sym (from the @i-th on), the one that runs first. */
static const struct kp_symget *first_site(const struct kp_module *m, size_t i, const char *sym)
{
	const struct kp_symget *best = &m->symget[i];

	for (size_t j = i + 1; j < m->nsymget; j++) {
		const struct kp_symget *s = &m->symget[j];

		if (s->symbol && !strcmp(s->symbol, sym) &&
		    when_rank(s->when) < when_rank(best->when))
			best = s;
	}
	return best;
}

/* __symbol_get(): v6.6+ and stable 4.14.326…6.5.2 (9011e49d54dc) require a GPL-only export. */
int kp_rule_symbol_get(struct kp_sim_ctx *c, struct kp_verdict *v)
{
	const struct kp_module *m = c->g->nodes[v->node].mod;
	size_t cap = 0;

	dynamic_sites(v, m);

	/* what the reader left (lib/read/symbol-get/: the module's analysis budget) */
	if (m->nsymget_unanalysed)
		kp_finding(v, "symbol-get-not-analysed", KP_SEV_WARNING, KP_CONS_WARN, NULL,
			   "%zu symbol_get() call site(s) not analysed: the module's analysis "
			   "budget ran out; their targets, and whether they return NULL, are "
			   "not predicted",
			   m->nsymget_unanalysed);

	for (size_t i = 0; i < m->nsymget; i++) {
		const struct kp_symget *s = &m->symget[i], *site;
		struct kp_symget_result *r;
		struct kp_found fs;
		bool dup = false;
		char *when;

		if (!s->symbol)
			continue;
		for (size_t j = 0; j < v->nsymget && !dup; j++)
			dup = !strcmp(v->symget[j].symbol, s->symbol);
		if (dup)
			continue;
		/* A heuristic candidate counts only when it names an export. */
		if (s->method == KP_SYMGET_HEURISTIC && !kp_find_symbol(c, s->symbol, true, &fs) &&
		    !kp_symbol_index_find(&c->g->exports, s->symbol))
			continue;
		r = push(v, &cap);
		if (!r)
			return -1;
		r->symbol = s->symbol;
		r->method_heuristic = s->method == KP_SYMGET_HEURISTIC;
		site = first_site(m, i, s->symbol);
		r->when = site->when;
		r->path = site->path;
		r->function = site->function;
		when = kp_symget_when_text(r->when, r->path, r->function);
		if (!when)
			return -1;
		if (!kp_find_symbol(c, s->symbol, true, &fs)) {
			r->ok = false;
			r->reason = not_found_reason(c, s->symbol);
			kp_finding(v, "symbol-get-not-found", KP_SEV_WARNING,
				   KP_CONS_FEATURE_MISSING, s->symbol,
				   "symbol_get(%s) returns NULL: %s; it runs %s", s->symbol,
				   r->reason, when);
			free(when);
			continue;
		}
		r->owner = fs.owner_name ? fs.owner_name : "vmlinux";
		r->gpl_only = fs.gpl_only;
		if (c->p->has[KP_F_SYMBOL_GET_GPL] && (!fs.gpl_only || fs.gpl_future)) {
			r->ok = false;
			r->reason = "not an EXPORT_SYMBOL_GPL export";
			r->kernel_logs = true;
			/*
			 * Logged when the call runs: at load only for a site reached from init.
			 * symbol_request() asks modprobe for "symbol:x" and tries again: twice.
			 */
			for (int t = 0;
			     r->when != KP_SYMGET_WHEN_CALLED && t < (site->request ? 2 : 1); t++)
				kp_vmsg(v, KP_SYMGET_FAIL_FMT, s->symbol);
			kp_finding(
				v, "symbol-get-non-gpl", KP_SEV_WARNING, KP_CONS_FEATURE_MISSING,
				s->symbol,
				"symbol_get(%s) returns NULL: %s exports it with "
				"EXPORT_SYMBOL, not EXPORT_SYMBOL_GPL (2023 rule); the kernel logs "
				"\"" KP_SYMGET_FAIL_FMT "\" %s",
				s->symbol, r->owner, s->symbol, when);
			free(when);
			continue;
		}
		free(when);
		r->ok = true;
		r->reason =
			fs.gpl_only ? "EXPORT_SYMBOL_GPL export" : "exported (rule not in force)";
		if (fs.owner_proprietary && fs.gpl_only)
			kp_finding(
				v, "symbol-get-proprietary-gpl", KP_SEV_NOTE, KP_CONS_WARN,
				s->symbol,
				"symbol_get(%s) succeeds although its owner %s is proprietary: the "
				"2023 rule checks the export macro, not the owner's license",
				s->symbol, r->owner);
	}
	return 0;
}
