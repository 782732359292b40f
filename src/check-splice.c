// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `check --format json` through the result cache: the recorded simulation stored beside the
 * output (sim/sim-store.h), and, on a miss that found the entry of the same command with
 * changed inputs, what a splice of that stored simulation would keep. Nothing here changes
 * an output: the run is recomputed whole, and the splice is only measured against it (the
 * KOPOLICY_CACHE_STATS line "splice: ..."): a candidate only when every input of the
 * stored entry that changed is a module file of the stored set (run-cache.h
 * kp_run_cache_changes()); those modules are simulated again (their facts are not part of
 * their reads: the state is carried past them with their new records), the others kept
 * while their stored reads hold in the new run; a kept verdict that differs from the
 * recomputed one would be a wrong splice and is listed.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "cache/run-cache.h"
#include "file/inputs.h"
#include "check-output.h"
#include "sim/sim-reads.h"
#include "sim/sim-store.h"
#include "sim/verdict-same.h"

/*
 * What the live and unformed module names say of the @k-th module in load order before it
 * loads (*@st's name_live and name_unformed, as duplicate.c looks them up): this run's own
 * lookup when it made one, else searched (a load that failed before it looked). A name an
 * oops left UNFORMED is only looked for when no live module has it.
 */
static void name_state(const struct kp_ctx *a, size_t k, struct kp_sim_state *st)
{
	const struct kp_graph *g = &a->graph;
	const struct kp_sim_reads *r = &a->sim.rec[g->order[k]];
	const char *name = g->nodes[g->order[k]].mod->name;

	st->name_live = false;
	st->name_unformed = false;
	if (r->name_read) {
		st->name_live = r->name_live;
		st->name_unformed = r->name_unformed;
		return;
	}
	for (size_t i = 0; name && i < a->facts.nloaded; i++)
		if (!strcmp(a->facts.loaded[i], name))
			st->name_live = true;
	for (size_t j = 0; name && j < k; j++) {
		const struct kp_node *nd = &g->nodes[g->order[j]];
		const struct kp_verdict *v = &a->sim.v[g->order[j]];

		if (!nd->mod->name || strcmp(nd->mod->name, name))
			continue;
		st->name_live |= v->loads;
		st->name_unformed |= v->left_unformed;
	}
	st->name_unformed &= !st->name_live;
}

/*
 * The stored simulation @was against this run's (@a, its interface digests @now indexed
 * like the nodes): why a splice falls back, else the count of verdicts it keeps and those
 * of them that differ, in @note.
 */
/*
 * Marks in @changed (indexed like the nodes) the modules whose files are among the inputs
 * @ch that no longer hold; NULL when every one of them is a module file of the stored set
 * (a splice candidate: only those are read again), else why not into @note.
 */
static const char *mark_changed(const struct kp_graph *g, const struct kp_inputs_changed *ch,
				bool *changed, char *note, size_t len)
{
	if (!ch || !ch->whole) {
		snprintf(note, len, "splice: falls back: the changed inputs are not all known");
		return note;
	}
	for (size_t p = 0; p < ch->npaths; p++) {
		size_t i = 0;

		while (i < g->n && (!g->nodes[i].path || strcmp(g->nodes[i].path, ch->paths[p])))
			i++;
		if (i == g->n) {
			snprintf(note, len,
				 "splice: falls back: %.160s changed, not a module of the stored "
				 "set",
				 ch->paths[p]);
			return note;
		}
		changed[i] = true;
	}
	return NULL;
}

/* Appends @name to the list @names (@size bytes, @nlen used) while it fits. */
static void add_name(char *names, size_t size, size_t *nlen, const char *name)
{
	int w = snprintf(names + *nlen, size - *nlen, "%s%s", *nlen ? " " : "", name);

	if (w > 0 && (size_t)w < size - *nlen)
		*nlen += (size_t)w;
}

static void measure(const struct kp_ctx *a, const struct kp_sim_stored *was,
		    const unsigned char (*now)[KP_SIM_IFACE_LEN],
		    const struct kp_inputs_changed *ch, char *note, size_t len)
{
	const struct kp_graph *g = &a->graph;
	struct kp_sim_state st = { .taint = a->facts.initial_taint };
	size_t kept = 0, differ = 0, attempted = 0, nchanged = 0;
	char names[160] = "", cnames[160] = "";
	size_t nlen = 0, clen = 0;
	bool *changed;

	if (was->n != g->n) {
		snprintf(note, len, "splice: falls back: %zu modules, %zu stored", g->n, was->n);
		return;
	}
	for (size_t k = 0; k < g->n; k++) {
		size_t i = g->order[k];
		const struct kp_node *nd = &g->nodes[i];

		if (was->order[k] != i || !nd->path || !nd->mod->name ||
		    strcmp(was->mods[i].path, nd->path) ||
		    strcmp(was->mods[i].name, nd->mod->name)) {
			snprintf(note, len,
				 "splice: falls back: the module set or load order changed");
			return;
		}
		if (memcmp(was->mods[i].iface, now[i], KP_SIM_IFACE_LEN)) {
			snprintf(note, len, "splice: falls back: the interface of %.160s changed",
				 nd->mod->name);
			return;
		}
	}
	changed = calloc(g->n ? g->n : 1, sizeof(*changed));
	if (!changed) {
		snprintf(note, len, "splice: falls back: out of memory");
		return;
	}
	if (mark_changed(g, ch, changed, note, len)) {
		free(changed);
		return;
	}
	for (size_t k = 0; k < g->n; k++) {
		size_t i = g->order[k];
		const struct kp_sim_reads *r;

		if (k == 0)
			st.once = a->sim.rec[i].once_before;
		name_state(a, k, &st);
		attempted += a->sim.v[i].attempted;
		if (changed[i]) {
			/* its file changed: its facts are not in its reads, simulated again */
			nchanged++;
			add_name(cnames, sizeof(cnames), &clen, g->nodes[i].mod->name);
			r = &a->sim.rec[i];
		} else if (kp_sim_reads_hold(&was->sim, i, &st, a->sim.v) &&
			   kp_sim_late_reads_hold(&was->sim, i, a->sim.global_taint, a->sim.v)) {
			struct kp_verdict v = was->sim.v[i];

			kept++;
			r = &was->sim.rec[i];
			v.global_added = r->taint_set & ~st.taint;
			v.global_after = (st.taint | r->taint_set) & ~a->facts.initial_taint;
			/* a kept verdict that differs would be a wrong splice: listed, never 1 */
			if (!kp_verdict_same_output(&v, &a->sim.v[i])) {
				add_name(names, sizeof(names), &nlen, g->nodes[i].mod->name);
				r = &a->sim.rec[i];
				differ++;
			}
		} else {
			r = &a->sim.rec[i];
		}
		/* the D taint of an oops is in its record's taint_set (loader.c after_oops()) */
		kp_sim_reads_apply(r, &st);
	}
	free(changed);
	snprintf(note, len,
		 "splice: %zu of %zu verdicts kept, %zu simulated again (%zu module files "
		 "changed: %s; %zu kept and differing: %s); not used yet, recomputed",
		 kept - differ, attempted, attempted - (kept - differ), nchanged,
		 nchanged ? cnames : "none", differ, differ ? names : "none");
}

void kp_check_splice_store(const struct kp_cli *cli, const struct kp_ctx *a, bool strict_ran)
{
	unsigned char(*digests)[KP_SIM_IFACE_LEN];
	struct kp_sim_stored was;
	const unsigned char *prev;
	unsigned char *p;
	struct kp_err err;
	size_t len, plen;
	char note[512];

	if (!kp_run_cache_recording(cli->runs) || !a->sim.rec)
		return;
	if (strict_ran) {
		/* the strict pass's verdicts feed the findings: not stored, no splice */
		kp_run_cache_note(cli->runs, "splice: not stored: the strict-rules pass ran");
		return;
	}
	digests = calloc(a->graph.n ? a->graph.n : 1, sizeof(*digests));
	if (!digests || kp_sim_store_encode(&a->graph, &a->sim, &p, &len, digests, &err) < 0) {
		snprintf(note, sizeof(note), "splice: not stored: %.200s",
			 digests ? err.msg : "out of memory");
		kp_run_cache_note(cli->runs, note);
		free(digests);
		return;
	}
	prev = kp_run_cache_previous(cli->runs, &plen);
	if (prev) {
		if (kp_sim_store_decode(prev, plen, &was, &err) < 0)
			snprintf(note, sizeof(note), "splice: falls back: %.200s", err.msg);
		else
			measure(a, &was, (const unsigned char(*)[KP_SIM_IFACE_LEN])digests,
				kp_run_cache_changes(cli->runs), note, sizeof(note));
		kp_sim_stored_release(&was);
		kp_run_cache_note(cli->runs, note);
	}
	free(digests);
	kp_run_cache_keep(cli->runs, p, len);
}
