// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `kopolicy check` for people: grouped by outcome (fails to load, loads tainted, loads
 * without a symbol_get() target, notes), one line per finding.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "check-output.h"
#include "kernel/sig-keys.h"
#include "sim/open-record.h"

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

/* 1 if @v has a finding that print_group() lists under @cons. */
static bool listed_under(const struct kp_verdict *v, enum kp_consequence cons)
{
	if (cons == KP_CONS_LOAD_FAIL ? v->loads : !v->loads)
		return false;
	for (size_t i = 0; i < v->nfindings; i++) {
		const struct kp_finding *f = &v->findings[i];

		if (cons == KP_CONS_LOAD_FAIL || f->consequence == cons)
			return true;
	}
	return false;
}

/*
 * "Loads, tainted (P, E):" names the taints of the modules it lists, not every taint a
 * module of the group could have: an only unsigned module is under "Loads, tainted (E):".
 */
static void tainted_title(const struct kp_ctx *a, char *buf, size_t len)
{
	const unsigned long shown =
		1UL << KP_TAINT_PROPRIETARY_MODULE | 1UL << KP_TAINT_UNSIGNED_MODULE;
	unsigned long mask = 0;
	char letters[32];
	size_t k = 0;

	for (size_t i = 0; i < a->sim.n; i++)
		if (!a->graph.nodes[a->sim.v[i].node].provider &&
		    listed_under(&a->sim.v[i], KP_CONS_TAINT))
			mask |= a->sim.v[i].taints & shown;
	kp_taint_letters(mask, letters, sizeof(letters));
	k = (size_t)snprintf(buf, len, "Loads, tainted");
	for (size_t i = 0; letters[i] && k < len; i++)
		k += (size_t)snprintf(buf + k, len - k, "%s%c", i ? ", " : " (", letters[i]);
	if (k < len)
		snprintf(buf + k, len - k, "%s:", letters[0] ? ")" : "");
}

/* 1 if a note of @v before @i has the same rule and would be listed under @cons too. */
static bool seen_before(const struct kp_verdict *v, size_t i, enum kp_consequence cons)
{
	for (size_t j = 0; j < i; j++)
		if (v->findings[j].severity == KP_SEV_NOTE &&
		    (cons == KP_CONS_LOAD_FAIL || v->findings[j].consequence == cons) &&
		    !strcmp(v->findings[j].id, v->findings[i].id))
			return true;
	return false;
}

/* How many notes of @v after @i have the same rule and are listed under @cons too. */
static size_t count_after(const struct kp_verdict *v, size_t i, enum kp_consequence cons)
{
	size_t n = 0;

	for (size_t j = i + 1; j < v->nfindings; j++)
		n += v->findings[j].severity == KP_SEV_NOTE &&
		     (cons == KP_CONS_LOAD_FAIL || v->findings[j].consequence == cons) &&
		     !strcmp(v->findings[j].id, v->findings[i].id);
	return n;
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

		if (nd->provider || (cons == KP_CONS_LOAD_FAIL ? v->loads : !v->loads))
			continue;
		for (size_t i = 0; i < v->nfindings; i++) {
			const struct kp_finding *f = &v->findings[i];
			size_t more = 0;

			if (cons != KP_CONS_LOAD_FAIL && f->consequence != cons)
				continue;
			/* notes: one line per rule and module, with a count; -v lists them all */
			if (f->severity == KP_SEV_NOTE && !o->verbose) {
				if (seen_before(v, i, cons))
					continue;
				more = count_after(v, i, cons);
			}
			if (!header) {
				/* colours are ours: written as they are */
				fputs(color(o, col), o->f);
				fputs(title, o->f);
				fputs(color(o, "\033[0m"), o->f);
				fputc('\n', o->f);
				header = true;
			}
			print_module(o, nd);
			kp_escaped_fprintf(o->f, "%s%s: %s%s",
					   f->severity == KP_SEV_ERROR	   ? "E: "
					   : f->severity == KP_SEV_WARNING ? "W: "
									   : "I: ",
					   f->id, f->message, f->waived ? " [waived]" : "");
			if (more)
				fprintf(o->f, " (and %zu more %s note%s: -v lists them)", more,
					f->id, more == 1 ? "" : "s");
			fputc('\n', o->f);
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

/* check --compare: one line per difference. */
static void print_changes(const struct kp_check_out *o, const struct kp_ctx *a,
			  const struct kp_comparison *cmp)
{
	kp_escaped_fprintf(o->f, "Changes from rules %s to rules %s:\n", cmp->first, cmp->second);
	for (size_t i = 0; i < cmp->n; i++) {
		char *text = kp_change_text(a, &cmp->changes[i]);

		kp_escaped_fprintf(o->f, "  %s\n", text ? text : "(out of memory)");
		free(text);
	}
	if (!cmp->n)
		fputs("  (none)\n", o->f);
}

/* The unreadable inputs are on stderr already (one line each, as they were met). */
void kp_print_symget_later(FILE *f, int ind, const struct kp_verdict *v)
{
	bool head = false;

	for (size_t i = 0; i < v->nsymget; i++) {
		const struct kp_symget_result *r = &v->symget[i];

		if (!r->kernel_logs || r->when != KP_SYMGET_WHEN_CALLED)
			continue;
		if (!head)
			kp_escaped_fprintf(f, "%*swhen called (not at load):\n", ind, "");
		head = true;
		kp_escaped_fprintf(f, "%*s  dmesg: " KP_SYMGET_FAIL_FMT "  (from %s)\n", ind, "",
				   r->symbol, r->function ? r->function : "?");
	}
}

void kp_check_print_text(const struct kp_check_out *o, const struct kp_ctx *a,
			 const struct kp_comparison *cmp)
{
	const struct kp_kernel_facts *f = &a->facts;
	size_t nfail = 0, np = 0, nmod = 0;
	char title[64];

	if (cmp) {
		print_changes(o, a, cmp);
		return;
	}

	kp_escaped_fprintf(o->f, "kernel %s, rules %s%s\n",
			   f->release ? f->release : "(release unknown)",
			   kp_profile_rules_name(&f->profile),
			   f->missing_version_fatal ? ", Debian symbol-version policy" : "");
	if (f->secure_boot == 1)
		fprintf(o->f, "  secure boot: on%s%s\n",
			f->sb_sig_enforce ? ", signatures enforced (IMA_ARCH_POLICY)" : "",
			f->sb_lockdown ? ", lockdown (LOCK_DOWN_IN_EFI_SECURE_BOOT)" : "");
	for (size_t i = 0; f->keys && i < f->keys->nsources; i++)
		kp_escaped_fprintf(o->f, "  trusted keys: %s\n", f->keys->sources[i]);
	for (size_t i = 0; i < f->nassumptions; i++)
		kp_escaped_fprintf(o->f, "  assumed: %s\n", f->assumptions[i]);
	fputc('\n', o->f);
	print_group(o, a, KP_CONS_LOAD_FAIL, "Fails to load:", "\033[1;31m");
	tainted_title(a, title, sizeof(title));
	print_group(o, a, KP_CONS_TAINT, title, "\033[1;33m");
	print_group(o, a, KP_CONS_FEATURE_MISSING,
		    "Loads, but symbol_get() returns NULL:", "\033[1;33m");
	print_group(o, a, KP_CONS_WARN, "Notes:", "\033[1m");
	print_shadowed(o, a);

	if (o->verbose) {
		for (size_t k = 0; k < a->graph.n; k++) {
			const struct kp_verdict *v = &a->sim.v[a->graph.order[k]];
			char letters[32];
			const struct kp_node *nd = &a->graph.nodes[v->node];

			if (nd->provider)
				continue;
			kp_taint_letters(v->taints, letters, sizeof(letters));
			kp_escaped_fprintf(o->f, "%s", nd->mod->name);
			if (nd->duplicate_name)
				kp_escaped_fprintf(o->f, " (%s)", nd->path);
			if (v->hangs)
				kp_escaped_fprintf(o->f,
						   ": the kernel oopses holding printk's lock "
						   "and the machine hangs (taint D)");
			else if (v->err == KP_ERR_OOPS && v->holds_module_mutex)
				kp_escaped_fprintf(o->f, ": the kernel oopses holding module_mutex "
							 "(taint D, the loading process is killed, "
							 "later loads block)");
			else if (v->err == KP_ERR_OOPS)
				kp_escaped_fprintf(o->f,
						   ": the kernel oopses (taint D, the loading "
						   "process is killed)");
			else if (v->err == KP_ERR_BLOCKED)
				kp_escaped_fprintf(o->f,
						   ": blocks for ever (the loader is stuck "
						   "since %s's oops)",
						   kp_check_stalled_by(a, v));
			else if (v->err == KP_ERR_NOT_RUN)
				kp_escaped_fprintf(o->f,
						   ": never runs (the machine hung loading %s)",
						   kp_check_stalled_by(a, v));
			else
				kp_escaped_fprintf(o->f, ": %s", v->loads ? "loads" : "fails");
			if (!v->loads && !KP_ERR_IS_STALL(v->err))
				kp_escaped_fprintf(o->f, " (%s)", kp_errno_name(v->err));
			kp_escaped_fprintf(o->f, ", taint %s\n", letters[0] ? letters : "-");
			for (size_t i = 0; i < v->nmessages; i++)
				kp_escaped_fprintf(o->f, "    dmesg: %s%s\n", v->messages[i],
						   i < kp_msgs_shown(v)
							   ? ""
							   : " (no newline: dmesg shows it with "
							     "the kernel's next line)");
			kp_print_symget_later(o->f, 4, v);
		}
		fputc('\n', o->f);
	}
	for (size_t k = 0; k < a->graph.n; k++) {
		const struct kp_verdict *v = &a->sim.v[k];

		if (a->graph.nodes[v->node].provider)
			continue;
		nmod++;
		nfail += !v->loads;
		np += (v->taints & 1) != 0;
	}
	kp_escaped_fprintf(o->f, "%zu module%s: %zu fail%s to load, %zu proprietary (P)\n", nmod,
			   nmod == 1 ? "" : "s", nfail, nfail == 1 ? "s" : "", np);
}
