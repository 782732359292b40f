// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The context-less splice (check-splice-load.h): its own thin context holding the kernel's
 * facts and the modules it reads (the changed ones, then any the splice simulates again),
 * nothing borrowed from a run's.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "check-splice-load.h"
#include "cache/run-cache.h"
#include "check-splice-run.h"
#include "check-splice-sim.h"
#include "graph/graph-rebuild.h"

/* The thin context and what the splice borrows from it. */
struct thin {
	struct kp_ctx c;
	const struct kp_sim_stored *was;
	const struct kp_module **mods; /* indexed like the nodes: those read (borrowed) */
	bool inited;		       /* @c initialised (kp_cli_ctx_init()) */
	size_t said;		       /* lines the context said (each one a fall back) */
	char first[200];	       /* the first of them */
};

/* The context's log: counted and kept, never printed (the recompute says them). */
static void thin_log(void *data, const char *path, const char *msg)
{
	struct thin *th = data;

	if (!th->said++)
		snprintf(th->first, sizeof(th->first), "%.80s%s%.100s", path ? path : "",
			 path ? ": " : "", msg);
}

/*
 * The module files @idx (@n stored nodes) read into @th's set as the set reader reads them,
 * each the stored module (its name and interface digest): @mods[idx[k]] set. 0, or -1 with
 * @err.
 */
static int read_stored(struct thin *th, const size_t *idx, size_t n, const struct kp_module **mods,
		       struct kp_err *err)
{
	size_t from = th->c.set.n, failed;

	for (size_t k = 0; k < n; k++) {
		char *path = (char *)th->was->mods[idx[k]].path;

		if (kp_ctx_add_files(&th->c, &path, 1, err) < 0)
			return -1;
	}
	if (th->c.set.n != from + n || th->said)
		return kp_err_set(err, "%s", th->said ? th->first : "a module file is not one");
	failed = kp_ctx_read_range(&th->c, from, th->c.set.n);
	for (size_t k = 0; k < n; k++) {
		const struct kp_set_entry *e = &th->c.set.entries[from + k];
		const struct kp_sim_stored_module *sm = &th->was->mods[idx[k]];

		if (failed || th->said || !e->mod || e->error)
			return kp_err_set(err, "%.100s: %.120s", sm->path,
					  e->error   ? e->error
					  : th->said ? th->first
						     : "not read");
		if (!e->mod->name || strcmp(e->mod->name, sm->name))
			return kp_err_set(err, "%.100s: its name changed", sm->path);
		if (!e->mod->iface_digested ||
		    memcmp(e->mod->iface_sha256, sm->iface, KP_SIM_IFACE_LEN))
			return kp_err_set(err, "the interface of %.100s changed", sm->name);
		mods[idx[k]] = e->mod;
	}
	return 0;
}

/* kp_splice_run.fetch: a kept module simulated again, read by its stored path. */
static const struct kp_module *fetch(void *data, size_t i, struct kp_err *err)
{
	struct thin *th = data;

	return read_stored(th, &i, 1, th->mods, err) < 0 ? NULL : th->mods[i];
}

/*
 * The nodes whose files are among the changed inputs @ch, marked in @changed and listed in
 * @idx (*@n of them); NULL, or why not a splice (@why).
 */
static const char *mark(const struct kp_sim_stored *was, const struct kp_inputs_changed *ch,
			bool *changed, size_t *idx, size_t *n, char *why, size_t len)
{
	*n = 0;
	if (!ch || !ch->whole)
		return "the changed inputs are not all known";
	for (size_t p = 0; p < ch->npaths; p++) {
		size_t i = 0;

		while (i < was->n && strcmp(was->mods[i].path, ch->paths[p]))
			i++;
		if (i == was->n) {
			snprintf(why, len, "%.160s changed, not a module of the stored set",
				 ch->paths[p]);
			return why;
		}
		if (!changed[i])
			idx[(*n)++] = i;
		changed[i] = true;
	}
	return NULL;
}

/*
 * The blocks of the modules @s simulated again (their verdicts rendered with no policy
 * finding, the open record left to the report) over @view, into @fresh: 0, or -1.
 */
static int render_again(const struct kp_ctx *view, const struct kp_splice_run *s,
			struct kp_check_block *fresh)
{
	for (size_t i = 0; i < view->graph.n; i++) {
		struct kp_jtext b = { 0 };

		if (!s->again[i] || view->graph.nodes[i].provider)
			continue;
		kp_check_block_text(&b, view, &s->sv[i], NULL, &fresh[i]);
		fresh[i].text = b.buf;
		fresh[i].len = b.len;
		if (b.failed || !fresh[i].policy_last)
			return -1;
	}
	return 0;
}

/*
 * The kernel's facts into @th's context, the result cache's recorder detached meanwhile:
 * those reads are the stored entry's, carried over unchanged when the splice is used (the
 * changed modules, read after, are recorded with their digests). 0, or -1 with @err.
 */
static int load_kernel(struct thin *th, const struct kp_ctxless_in *in, struct kp_err *err)
{
	int r;

	kp_run_cache_pause(in->cli->runs, true);
	r = kp_ctx_load_kernel_facts(&th->c, err);
	kp_run_cache_pause(in->cli->runs, false);
	return r;
}

/*
 * The store the next run splices from (@in's keep) into @out: the simulation part of the
 * splice @s over @rb (its stubs given the stored interface digests, so that it hashes as
 * the modules they stand for: a recompute's bytes), the previous store's graph part, the
 * report part from what was written (@cap). 0, or -1 with why (@why, @len bytes).
 */
static int make_store(const struct kp_splice_stored *st, struct kp_graph_rebuilt *rb,
		      const struct kp_splice_run *s, unsigned long final_taint,
		      const struct kp_check_capture *cap, struct kp_ctxless_out *out, char *why,
		      size_t len)
{
	unsigned char *sim = NULL;
	const char *no = NULL;
	struct kp_err err;
	size_t simlen = 0;
	int r;

	for (size_t i = 0; i < st->was.n; i++)
		kp_graph_rebuilt_digest(rb, i, st->was.mods[i].iface);
	if (kp_splice_sim_encode(&rb->g, s, final_taint, &sim, &simlen, &err) < 0) {
		snprintf(why, len, "the new store: %.200s", err.msg);
		return -1;
	}
	/* @sim is the pieces' now */
	r = kp_splice_store_pieces(&rb->g, sim, simlen, st->gp, st->glen, cap, st->rep.base_rc,
				   st->rep.fail_on, &out->store, &no);
	if (r < 0)
		snprintf(why, len, "the new store: %.200s", no);
	return r;
}

int kp_check_splice_ctxless(const struct kp_ctxless_in *in, struct kp_ctxless_out *out, char *why,
			    size_t len)
{
	const struct kp_sim_stored *was = &in->st->was;
	struct kp_check_capture ncap = { 0 }, *cap = NULL;
	size_t nlen = 0;
	size_t n = was->n ? was->n : 1, nidx = 0;
	struct thin *th = calloc(1, sizeof(*th));
	struct kp_ctx *view = calloc(1, sizeof(*view));
	struct kp_splice_run s = { 0 };
	struct kp_graph_rebuilt rb = { 0 };
	bool *changed = calloc(n, sizeof(*changed));
	size_t *idx = calloc(n, sizeof(*idx));
	const char **mnames = calloc(n, sizeof(*mnames)), **mpaths = calloc(n, sizeof(*mpaths));
	const struct kp_module **mods = calloc(n, sizeof(*mods));
	struct kp_check_block *fresh = calloc(n, sizeof(*fresh));
	const char *no = NULL;
	unsigned long final_taint;
	struct kp_err err = { 0 };
	int r = -1;

	memset(out, 0, sizeof(*out));
	if (!th || !view || !changed || !idx || !mnames || !mpaths || !mods || !fresh) {
		snprintf(why, len, "out of memory");
		goto out;
	}
	th->was = was;
	th->mods = mods;
	if ((no = mark(was, in->ch, changed, idx, &nidx, why, len))) {
		if (no != why)
			snprintf(why, len, "%s", no);
		goto out;
	}
	kp_cli_ctx_init(&th->c, in->cli, in->opts);
	th->inited = true;
	th->c.env.log = thin_log;
	th->c.env.log_data = th;
	th->c.env.progress = NULL;
	if (in->uncached)
		th->c.env.cache = NULL;
	if (load_kernel(th, in, &err) < 0) {
		snprintf(why, len, "the kernel: %.200s", err.msg);
		goto out;
	}
	if (th->said) {
		snprintf(why, len, "the kernel's load said: %.200s", th->first);
		goto out;
	}
	/* the report is stdout's bytes alone: a stored run's stderr lines are not in the store */
	if (!in->quiet) {
		snprintf(why, len, "the stored run wrote to stderr");
		goto out;
	}
	/* the strict-rules pass would add findings of its own: not in the store */
	if (!th->c.facts.profile.has[KP_F_INHERIT_TAINT] ||
	    !th->c.facts.profile.has[KP_F_SYMBOL_GET_GPL]) {
		snprintf(why, len, "the target lacks a rule the strict pass adds");
		goto out;
	}
	if (read_stored(th, idx, nidx, mods, &err) < 0) {
		snprintf(why, len, "%.200s", err.msg);
		goto out;
	}
	for (size_t i = 0; i < was->n; i++) {
		mnames[i] = was->mods[i].name;
		mpaths[i] = was->mods[i].path;
	}
	/* lazily: only the nodes the run simulates again and what it walks get their edges */
	if (kp_graph_rebuild_lazy(&rb, &in->st->gs, mnames, mpaths, mods, was->order,
				  kp_ctx_base(&th->c), &err) < 0) {
		snprintf(why, len, "rebuilding the graph: %.200s", err.msg);
		goto out;
	}
	s.facts = &th->c.facts;
	s.rb = &rb;
	s.mods = mods;
	s.fetch = fetch;
	s.fetch_data = th;
	if (kp_splice_run_init(&s, was, th->c.facts.loaded, th->c.facts.nloaded) < 0) {
		snprintf(why, len, "out of memory");
		goto out;
	}
	if (kp_splice_run(&s, changed, &final_taint, &err) < 0) {
		snprintf(why, len, "%.200s", err.msg);
		goto out;
	}
	/* a view, not a context: the rebuilt graph and the thin facts, released by their owners */
	view->graph = rb.g;
	view->facts = th->c.facts;
	/* the new store's report part: kp_splice_report_write() fills the capture */
	if (in->keep)
		cap = &ncap;
	if (render_again(view, &s, fresh) < 0 ||
	    kp_splice_report_write(&out->t, &in->st->rep, &rb.g, s.sv, fresh, cap, &out->rc, &err) <
		    0 ||
	    out->t.failed) {
		snprintf(why, len, "the report: out of memory");
		goto out;
	}
	if (in->keep && make_store(in->st, &rb, &s, final_taint, &ncap, out, why, len) < 0)
		goto out;
	for (size_t k = 0; k < nidx; k++)
		kp_splice_add_name(out->names, sizeof(out->names), &nlen, was->mods[idx[k]].name);
	out->n = was->n;
	for (size_t i = 0; i < was->n; i++)
		out->again += s.again[i];
	out->changed = nidx;
	r = 0;
out:
	if (r < 0) {
		free(out->t.buf);
		memset(&out->t, 0, sizeof(out->t));
		kp_splice_store_pieces_release(&out->store);
	}
	kp_check_capture_release(&ncap, was->n);
	for (size_t i = 0; fresh && i < was->n; i++)
		free(fresh[i].text);
	kp_splice_run_release(&s);
	kp_graph_rebuilt_release(&rb); /* before the modules it points to */
	if (th && th->inited)
		kp_ctx_release(&th->c);
	free(th);
	free(view);
	free(changed);
	free(idx);
	free(mnames);
	free(mpaths);
	free(mods);
	free(fresh);
	return r;
}
