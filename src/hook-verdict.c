// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kopolicy hook's verdict (cmd-hook.c): the policy's action for each consequence the
 * simulation predicts for the chain (load failure, proprietary, inherited P, symbol_get()),
 * each said on stderr, and the exit status. A module of the chain is judged under its
 * modprobe name (its file's, as the install line and the policy's module lines name it) and,
 * when struct module in the file names it otherwise, under that name too, the stricter
 * action winning: a name the file gives itself never earns it another module's exception.
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hook-internal.h"
#include "system/modprobe-chain.h"
#include "system/running.h"
#include "util/module-name.h"

static const struct kp_finding *finding(const struct kp_verdict *v, const char *id)
{
	for (size_t i = 0; i < v->nfindings; i++)
		if (!strcmp(v->findings[i].id, id))
			return &v->findings[i];
	return NULL;
}

/* Why @v fails: its first load-failure finding, a failed dependency only last. */
static const char *failure_reason(const struct kp_verdict *v)
{
	const char *dep = NULL;

	for (size_t i = 0; i < v->nfindings; i++) {
		if (v->findings[i].consequence != KP_CONS_LOAD_FAIL)
			continue;
		if (strcmp(v->findings[i].id, "dependency-failed"))
			return v->findings[i].message;
		if (!dep)
			dep = v->findings[i].message;
	}
	return dep ? dep : "the kernel refuses it";
}

static bool is_target(const struct hook *h, const char *name)
{
	for (size_t i = 0; i < h->a.hook.chain.n; i++)
		if (h->a.hook.chain.mods[i].target && !strcmp(h->a.hook.chain.mods[i].name, name))
			return true;
	return false;
}

/* The names a module of the graph is judged under (names_of()). */
struct names {
	const char *modprobe; /* the chain's, from its file name; a module off the chain: its own */
	const char *own; /* struct module's when it differs (whoever built the file chose it) */
};

/*
 * Whether struct module's name @own is kbuild's for the file's name @file: KBUILD_MODNAME,
 * the file's name with '-' and ',' as '_' (util/module-name.h; riscv64's thead,th1520-aon.ko
 * is thead_th1520_aon), which names no other module.
 */
static bool kbuild_name_of(const char *file, const char *own)
{
	char fixed[256];

	kp_modname_from_path(fixed, sizeof(fixed), file, KP_MODNAME_WHOLE);
	return strlen(file) < sizeof(fixed) && kp_modname_eq(fixed, own);
}

/*
 * @m's names: the chain module read into its set entry (same path) gives the modprobe name;
 * a module read for another reason (a loaded provider) has its own only.
 */
static struct names names_of(const struct hook *h, const struct kp_module *m)
{
	struct names n = { m->name, NULL };
	const char *path = NULL;

	for (size_t j = 0; j < h->a.set.n && !path; j++)
		if (h->a.set.entries[j].mod == m)
			path = h->a.set.entries[j].path;
	for (size_t i = 0; path && h->a.hook.in_set && i < h->a.hook.chain.n; i++) {
		const struct kp_chain_module *cm = &h->a.hook.chain.mods[i];

		if (!h->a.hook.in_set[i] || !cm->path || strcmp(cm->path, path))
			continue;
		n.modprobe = cm->name;
		if (!kbuild_name_of(cm->name, m->name))
			n.own = m->name;
		break;
	}
	return n;
}

/* The policy's action for consequence @c of @n: the stricter of its names' (the first's line). */
static enum kp_hook_action policy_action(const struct hook *h, const struct names *n,
					 enum kp_hook_consequence c, size_t *line)
{
	enum kp_hook_action act = kp_hook_policy_action(&h->policy, n->modprobe, c, line);
	size_t own_line;

	if (n->own) {
		enum kp_hook_action own = kp_hook_policy_action(&h->policy, n->own, c, &own_line);

		if (own > act) {
			act = own;
			*line = own_line;
		}
	}
	return act;
}

static enum kp_hook_action consider(struct hook *h, const struct names *n,
				    enum kp_hook_consequence c, const char *what,
				    const char *detail)
{
	char from[PATH_MAX + 32], subject[640] = "";
	size_t line;
	enum kp_hook_action act = policy_action(h, n, c, &line);
	const char *module = n->modprobe;

	if (act == KP_HOOK_IGNORE)
		return act;
	hook_source_of(h, line, from, sizeof(from));
	if (!is_target(h, module) || strcmp(module, h->asked) || n->own)
		snprintf(subject, sizeof(subject), "%s%s%s%s%s ",
			 is_target(h, module) ? "" : "dependency ", module,
			 n->own ? " (struct module names it " : "", n->own ? n->own : "",
			 n->own ? ")" : "");
	hook_say(h, "%s: %s%s%s%s [%s, %s]", act == KP_HOOK_BLOCK ? "load blocked" : "warning",
		 subject, what ? what : "", what ? ": " : "", detail, kp_hook_consequence_name(c),
		 from);
	return act;
}

static void print_chain(const struct hook *h)
{
	char letters[32];

	hook_say(h, "kernel %s; exports from %s; %zu loaded module%s; chain from %s:",
		 h->a.run.release, h->a.hook.exports_from, h->a.run.nmodules,
		 h->a.run.nmodules == 1 ? "" : "s",
		 h->a.hook.chain.source == KP_CHAIN_LIBKMOD ? "libkmod (depmod indexes)"
							    : "modules.dep (text)");
	for (size_t i = 0; i < h->a.hook.chain.n; i++) {
		const struct kp_chain_module *cm = &h->a.hook.chain.mods[i];
		const struct kp_loaded_module *lm = kp_running_find(&h->a.run, cm->name);

		hook_say(h, "  %s %s%s%s%s%s%s", cm->name, cm->builtin ? "(built in)" : cm->relpath,
			 lm ? ", loaded, taint " : "", lm ? (*lm->taint ? lm->taint : "none") : "",
			 !lm && kp_ctx_chain_described(&h->a, cm)
				 ? ", not read (in-tree: Module.symvers)"
				 : "",
			 cm->blacklisted ? ", blacklisted in modprobe.d" : "",
			 cm->target ? "" : " (dependency)");
	}
	for (size_t i = 0; i < h->a.keys.nsources; i++)
		hook_say(h, "trusted keys: %s", h->a.keys.sources[i]);
	for (size_t i = 0; i < h->a.facts.nassumptions; i++)
		hook_say(h, "assumed: %s", h->a.facts.assumptions[i]);
	for (size_t k = 0; k < h->a.graph.n; k++) {
		size_t i = h->a.graph.order[k];
		const struct kp_verdict *v = &h->a.sim.v[i];

		kp_taint_letters(v->taints, letters, sizeof(letters));
		if (v->loads)
			hook_say(h, "%s: loads, module taint %s", h->a.graph.nodes[i].mod->name,
				 letters[0] ? letters : "none");
		else
			hook_say(h, "%s: fails with %s", h->a.graph.nodes[i].mod->name,
				 kp_errno_name(v->err));
		for (size_t j = 0; j < v->nmessages; j++)
			hook_say(h, "  kernel: %s", v->messages[j]);
		for (size_t j = 0; j < v->nsymget; j++) {
			const struct kp_symget_result *r = &v->symget[j];
			char *when = kp_symget_when_text(r->when, r->path, r->function);

			hook_say(h, "  symbol_get(%s) = %s (%s), runs %s", r->symbol,
				 r->ok ? "ok" : "NULL", r->reason, when ? when : "(out of memory)");
			free(when);
		}
		if (h->a.graph.nodes[i].mod->symget_skipped)
			hook_say(h, "  symbol_get() call sites not traced: %s", h->untraced);
	}
}

/*
 * A module whose symbol_get() call sites were not all analysed (the reader's budget ran
 * out): what symbol-get asks for it cannot be decided. Ignored: nothing; warn: a warning;
 * block: undecided, the on-error mode decides (fail-closed blocks). Returns the action
 * taken; *@closed set when the on-error mode blocks.
 */
static enum kp_hook_action unanalysed(struct hook *h, const struct names *n,
				      const struct kp_finding *f, bool *closed)
{
	char from[PATH_MAX + 32];
	size_t line;
	enum kp_hook_action act = policy_action(h, n, KP_HOOK_SYMBOL_GET, &line);
	enum kp_hook_on_error mode;

	if (act != KP_HOOK_BLOCK)
		return act == KP_HOOK_WARN ? consider(h, n, KP_HOOK_SYMBOL_GET, NULL, f->message)
					   : act;
	mode = hook_on_error_mode(h, from, sizeof(from));
	hook_say(h, "cannot decide symbol-get for %s: %s; %s (on-error %s, %s)", n->modprobe,
		 f->message,
		 mode == KP_HOOK_FAIL_CLOSED ? "blocking the load" : "letting the load go on",
		 kp_hook_on_error_name(mode), from);
	*closed = *closed || mode == KP_HOOK_FAIL_CLOSED;
	return KP_HOOK_WARN;
}

int hook_decide(struct hook *h)
{
	enum kp_hook_action worst = KP_HOOK_IGNORE;
	bool closed = false; /* something undecided and the on-error mode blocks */

	if (h->verbose)
		print_chain(h);
	for (size_t k = 0; k < h->a.graph.n; k++) {
		size_t i = h->a.graph.order[k];
		const struct kp_verdict *v = &h->a.sim.v[i];
		const struct names n = names_of(h, h->a.graph.nodes[i].mod);
		const struct kp_finding *f;
		enum kp_hook_action act;
		char what[64];

		if (!v->loads) {
			snprintf(what, sizeof(what), "would fail to load with %s",
				 kp_errno_name(v->err));
			act = consider(h, &n, KP_HOOK_LOAD_FAILURE, what, failure_reason(v));
			worst = act > worst ? act : worst;
		}
		if ((f = finding(v, "license-taint"))) {
			act = consider(h, &n, KP_HOOK_PROPRIETARY, "is proprietary", f->message);
			worst = act > worst ? act : worst;
		}
		if ((f = finding(v, "inherit-taint"))) {
			act = consider(h, &n, KP_HOOK_INHERIT_TAINT, "would inherit P", f->message);
			worst = act > worst ? act : worst;
		}
		for (size_t j = 0; j < v->nfindings; j++) {
			if (strcmp(v->findings[j].id, "symbol-get-non-gpl"))
				continue;
			act = consider(h, &n, KP_HOOK_SYMBOL_GET, NULL, v->findings[j].message);
			worst = act > worst ? act : worst;
		}
		if ((f = finding(v, "symbol-get-not-analysed"))) {
			act = unanalysed(h, &n, f, &closed);
			worst = act > worst ? act : worst;
		}
	}
	if (worst == KP_HOOK_BLOCK)
		return KP_EXIT_FINDINGS;
	return closed ? KP_EXIT_ERROR : KP_EXIT_OK;
}
