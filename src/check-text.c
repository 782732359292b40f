// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `kopolicy check` for people: grouped by outcome (fails to load, loads tainted, loads
 * without a symbol_get() target, notes), one line per finding.
 */
#include "config.h"

#include <string.h>

#include "check-output.h"
#include "kernel/sig-keys.h"

static const char *color(const struct kp_check_out *o, const char *code)
{
	return o->color ? code : "";
}

/* The module's name, and its file when another module of the set has the same name. */
static void print_module(const struct kp_check_out *o, const struct kp_node *nd)
{
	if (nd->duplicate_name)
		kp_escaped_fprintf(o->f, "  %s (%s): ", nd->mod->name, nd->path);
	else
		kp_escaped_fprintf(o->f, "  %s: ", nd->mod->name);
}

/*
 * One group of the report. Grouped by outcome: a module that fails to load is listed under
 * "Fails to load" with all its findings (the reason chain, a P taint included) and never
 * under a "Loads ..." group; the modules that load are grouped by consequence.
 */
static void print_group(const struct kp_check_out *o, const struct kp_ctx *a,
			enum kp_consequence cons, const char *title, const char *col)
{
	bool header = false;

	for (size_t k = 0; k < a->graph.n; k++) {
		const struct kp_verdict *v = &a->sim.v[a->graph.order[k]];
		const struct kp_node *nd = &a->graph.nodes[v->node];

		if (cons == KP_CONS_LOAD_FAIL ? v->loads : !v->loads)
			continue;
		for (size_t i = 0; i < v->nfindings; i++) {
			const struct kp_finding *f = &v->findings[i];

			if (cons != KP_CONS_LOAD_FAIL && f->consequence != cons)
				continue;
			if (f->severity == KP_SEV_NOTE && !o->verbose)
				continue;
			if (!header) {
				/* colours are ours: written as they are */
				fputs(color(o, col), o->f);
				fputs(title, o->f);
				fputs(color(o, "\033[0m"), o->f);
				fputc('\n', o->f);
				header = true;
			}
			print_module(o, nd);
			kp_escaped_fprintf(o->f, "%s%s: %s%s\n",
					   f->severity == KP_SEV_ERROR	   ? "E: "
					   : f->severity == KP_SEV_WARNING ? "W: "
									   : "I: ",
					   f->id, f->message, f->waived ? " [waived]" : "");
		}
	}
	if (header)
		fputc('\n', o->f);
}

/* Files of the tree depmod does not use: modprobe never loads them under that name. */
static void print_shadowed(const struct kp_check_out *o, const struct kp_ctx *a)
{
	if (!a->nshadowed)
		return;
	fprintf(o->f, "Not used by modprobe (depmod chooses another file):\n");
	for (size_t i = 0; i < a->nshadowed; i++) {
		const struct kp_depmod_shadow *sh = &a->shadowed[i];

		if (sh->winner)
			fprintf(o->f, "  %s: %s: depmod uses %s%s\n", sh->name, sh->path,
				sh->winner,
				sh->tie ? " (no search line prefers either: the first one found)"
					: "");
		else
			fprintf(o->f, "  %s: %s: in a directory depmod skips\n", sh->name,
				sh->path);
	}
	fputc('\n', o->f);
}

void kp_check_print_text(const struct kp_check_out *o, const struct kp_ctx *a)
{
	const struct kp_kernel_facts *f = &a->facts;
	size_t nfail = 0, np = 0;

	kp_escaped_fprintf(o->f, "kernel %s, rules %s%s\n",
			   f->release ? f->release : "(release unknown)",
			   kp_profile_rules_name(&f->profile),
			   f->missing_version_fatal ? ", Debian symbol-version policy" : "");
	for (size_t i = 0; f->keys && i < f->keys->nsources; i++)
		kp_escaped_fprintf(o->f, "  trusted keys: %s\n", f->keys->sources[i]);
	for (size_t i = 0; i < f->nassumptions; i++)
		kp_escaped_fprintf(o->f, "  assumed: %s\n", f->assumptions[i]);
	fputc('\n', o->f);
	print_group(o, a, KP_CONS_LOAD_FAIL, "Fails to load:", "\033[1;31m");
	print_group(o, a, KP_CONS_TAINT, "Loads, tainted (P, E):", "\033[1;33m");
	print_group(o, a, KP_CONS_FEATURE_MISSING,
		    "Loads, but symbol_get() returns NULL:", "\033[1;33m");
	print_group(o, a, KP_CONS_WARN, "Notes:", "\033[1m");
	print_shadowed(o, a);

	if (o->verbose) {
		for (size_t k = 0; k < a->graph.n; k++) {
			const struct kp_verdict *v = &a->sim.v[a->graph.order[k]];
			char letters[32];
			const struct kp_node *nd = &a->graph.nodes[v->node];

			kp_taint_letters(v->taints, letters, sizeof(letters));
			kp_escaped_fprintf(o->f, "%s", nd->mod->name);
			if (nd->duplicate_name)
				kp_escaped_fprintf(o->f, " (%s)", nd->path);
			if (v->err == KP_ERR_OOPS)
				kp_escaped_fprintf(o->f, ": the kernel oopses (taint D, the loading "
							 "process is killed)");
			else
				kp_escaped_fprintf(o->f, ": %s", v->loads ? "loads" : "fails");
			if (!v->loads && v->err != KP_ERR_OOPS)
				kp_escaped_fprintf(o->f, " (%s)", kp_errno_name(v->err));
			kp_escaped_fprintf(o->f, ", taint %s\n", letters[0] ? letters : "-");
			for (size_t i = 0; i < v->nmessages; i++)
				kp_escaped_fprintf(o->f, "    dmesg: %s\n", v->messages[i]);
		}
		fputc('\n', o->f);
	}
	for (size_t k = 0; k < a->graph.n; k++) {
		const struct kp_verdict *v = &a->sim.v[k];

		nfail += !v->loads;
		np += (v->taints & 1) != 0;
	}
	kp_escaped_fprintf(o->f, "%zu module%s: %zu fail%s to load, %zu proprietary (P)\n",
			   a->graph.n, a->graph.n == 1 ? "" : "s", nfail, nfail == 1 ? "s" : "",
			   np);
}
