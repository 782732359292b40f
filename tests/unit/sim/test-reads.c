// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sim-reads.c: what each load read of the state earlier loads left, as
 * kp_simulate_recorded() records it, with concrete records; then the splice property on the
 * real 6.1 fixtures and a built world: one module's facts changed (signature stripped,
 * license proprietary, out of tree, a test or livepatch module, the vermagic of another
 * kernel: its load fails; an import name in the guard page: it oopses holding module_mutex
 * and every later load that reaches the lock blocks), every other module whose recorded reads hold
 * in the new run has the verdict it had (errno, taints, messages, findings, evidence, symbol_get
 * results, what it wrote to the state), and each verdict's record carries the state to the next
 * load. With arguments (a directory of modules and their Module.symvers) the same over a whole
 * tree: `test-reads DIR SYMVERS`.
 */
#include <errno.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>

#include "builder.h"

/* tb_run() with the reads recorded (kp_simulate_recorded()). */
static void run_recorded(struct tb_world *w)
{
	struct kp_err err;

	tb_graph(w);
	if (kp_simulate_recorded(&w->g, &w->facts, &w->sim, &err) < 0) {
		fprintf(stderr, "simulate: %s\n", err.msg);
		abort();
	}
	w->ran = true;
}

/* The record of module @name's load. */
static const struct kp_sim_reads *rec(const struct tb_world *w, const char *name)
{
	return &w->sim.rec[tb_node(w, name)];
}

static void records(struct tap *t)
{
	struct tb_world w;
	struct kp_module *a, *b, *c;
	const struct kp_sim_reads *ra, *rb, *rc;
	const struct kp_verdict *vb;
	const unsigned long e = 1UL << KP_TAINT_UNSIGNED_MODULE;

	tb_init(&w, "6.12.37");
	tb_std_kernel(&w);
	w.facts.module_sig = true;
	a = tb_module(&w, "a");
	tb_export(a, "a_fn", KP_KSYMTAB);
	b = tb_module(&w, "b");
	c = tb_module(&w, "c");
	tb_import(c, "a_fn");
	tb_import(c, "printk");
	(void)b;
	run_recorded(&w);
	ra = rec(&w, "a");
	rb = rec(&w, "b");
	rc = rec(&w, "c");
	vb = tb_v(&w, "b");
	tap_ok(t, !w.sim.reads_incomplete, "records complete");
	/* a: first unsigned module: reads the once-only notice, sets it and E */
	tap_is_int(t, (long)ra->taint_before, 0, "a: taint before");
	tap_is_int(t, (long)ra->taint_set, (long)e, "a: sets E");
	tap_ok(t, ra->once_read & (1u << KP_ONCE_SIG_NOTICE), "a: reads the notice flag");
	tap_is_int(t, ra->once_before, 0, "a: no flag before");
	tap_is_int(t, ra->once_set, 1u << KP_ONCE_SIG_NOTICE, "a: sets the notice flag");
	tap_ok(t, ra->name_read && !ra->name_live, "a: its name looked up, not live");
	tap_is_int(t, ra->nverdicts, 0, "a: reads no verdict");
	/* b: the notice flag already set, E already in the mask */
	tap_is_int(t, (long)rb->taint_before, (long)e, "b: taint before");
	tap_is_int(t, rb->once_before, 1u << KP_ONCE_SIG_NOTICE, "b: flag before");
	tap_is_int(t, (long)vb->global_added, 0, "b: adds nothing to the global mask");
	tap_is_int(t, (long)rb->taint_set, (long)e, "b: still sets E");
	/* c: imports from a: reads a's verdict (once), and printk from vmlinux reads none */
	tap_is_int(t, rc->nverdicts, 1, "c: reads one verdict");
	tap_is_int(t, rc->nverdicts ? (long)w.sim.reads[rc->verdicts] : -1, (long)tb_node(&w, "a"),
		   "c: a's");
	tap_is_int(t, (long)rc->taint_tested & (long)e, 0, "c: never tests E");
	tb_free(&w);

	/* A module already live (facts->loaded): the lookup says so. */
	{
		static const char *const loaded[] = { "m" };

		tb_init(&w, "6.12.37");
		w.facts.loaded = loaded;
		w.facts.nloaded = 1;
		tb_module(&w, "m");
		run_recorded(&w);
		tap_ok(t, rec(&w, "m")->name_read && rec(&w, "m")->name_live,
		       "m: the duplicate name read as live");
		tb_free(&w);
	}
	/* symbol_get() after the loads: a late read of the exporter. */
	tb_init(&w, "6.12.37");
	tb_std_kernel(&w);
	a = tb_module(&w, "a");
	tb_export(a, "a_gpl", KP_KSYMTAB_GPL);
	b = tb_module(&w, "b");
	tb_symget(b, "a_gpl", KP_SYMGET_EXACT, false);
	run_recorded(&w);
	rb = rec(&w, "b");
	tap_is_int(t, rb->nlate, 1, "b: symbol_get() reads one verdict late");
	tap_is_int(t, rb->nlate ? (long)w.sim.reads[rb->late] : -1, (long)tb_node(&w, "a"),
		   "b: a's, late");
	tb_free(&w);
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool same_finding(const struct kp_finding *x, const struct kp_finding *y)
{
	return !strcmp(x->id, y->id) && x->severity == y->severity &&
	       x->consequence == y->consequence && !strcmp(x->message, y->message) &&
	       same_str(x->symbol, y->symbol);
}

/* What a splice would keep of the load of verdict @a is @b's: its result and what it wrote. */
static bool same_load(const struct kp_verdict *a, const struct kp_sim_reads *x,
		      const struct kp_verdict *b, const struct kp_sim_reads *y)
{
	if (a->attempted != b->attempted || a->loads != b->loads || a->err != b->err ||
	    a->taints != b->taints || a->p_reason != b->p_reason || a->p_from != b->p_from ||
	    !same_str(a->p_symbol, b->p_symbol) || a->failed_dep != b->failed_dep ||
	    a->hangs != b->hangs || a->holds_module_mutex != b->holds_module_mutex ||
	    a->left_unformed != b->left_unformed || a->stalled_by != b->stalled_by ||
	    x->stall_set.kind != y->stall_set.kind ||
	    (x->stall_set.kind && x->stall_set.by != y->stall_set.by) ||
	    x->taint_set != y->taint_set || x->once_set != y->once_set ||
	    x->nmessages_load != y->nmessages_load || x->nfindings_load != y->nfindings_load)
		return false;
	for (size_t k = 0; k < x->nmessages_load; k++)
		if (strcmp(a->messages[k], b->messages[k]))
			return false;
	for (size_t k = 0; k < x->nfindings_load; k++)
		if (!same_finding(&a->findings[k], &b->findings[k]))
			return false;
	return true;
}

/* ... and of its symbol_get() results (after every load): the rest of the verdict. */
static bool same_late(const struct kp_verdict *a, const struct kp_verdict *b)
{
	if (a->nmessages != b->nmessages || a->nfindings != b->nfindings ||
	    a->nsymget != b->nsymget)
		return false;
	for (size_t k = 0; k < a->nmessages; k++)
		if (strcmp(a->messages[k], b->messages[k]))
			return false;
	for (size_t k = 0; k < a->nfindings; k++)
		if (!same_finding(&a->findings[k], &b->findings[k]))
			return false;
	for (size_t k = 0; k < a->nsymget; k++) {
		const struct kp_symget_result *x = &a->symget[k], *y = &b->symget[k];

		if (!same_str(x->symbol, y->symbol) || x->ok != y->ok ||
		    !same_str(x->reason, y->reason) || !same_str(x->owner, y->owner) ||
		    x->gpl_only != y->gpl_only || x->kernel_logs != y->kernel_logs)
			return false;
	}
	return true;
}

/* Whether a module named like node @i is live before it in @s (facts->loaded, earlier loads). */
static bool name_live(const struct tb_world *w, const struct kp_simulation *s, size_t k)
{
	const char *name = w->g.nodes[w->g.order[k]].mod->name;

	if (s->rec[w->g.order[k]].name_read)
		return s->rec[w->g.order[k]].name_live;
	for (size_t i = 0; i < w->facts.nloaded; i++)
		if (!strcmp(w->facts.loaded[i], name))
			return true;
	for (size_t j = 0; j < k; j++)
		if (s->v[w->g.order[j]].loads && !strcmp(w->g.nodes[w->g.order[j]].mod->name, name))
			return true;
	return false;
}

/* Whether an earlier load of @s left a module named like node @i UNFORMED (an oops). */
static bool name_unformed(const struct tb_world *w, const struct kp_simulation *s, size_t k)
{
	const char *name = w->g.nodes[w->g.order[k]].mod->name;

	for (size_t j = 0; j < k; j++)
		if (s->v[w->g.order[j]].left_unformed &&
		    !strcmp(w->g.nodes[w->g.order[j]].mod->name, name))
			return true;
	return false;
}

struct tally {
	size_t runs, reused, resimulated, bad, chain_bad;
};

/*
 * @was and @now: the same graph simulated before and after a change of node @changed's facts.
 * Every module but the changed one whose reads hold must have its verdict; the state carried
 * by the records must be the state the next load starts from.
 */
static void compare(const struct tb_world *w, const struct kp_simulation *was,
		    const struct kp_simulation *now, size_t changed, struct tally *ty,
		    const char *what)
{
	struct kp_sim_state st = { .taint = w->facts.initial_taint };
	size_t seq = 0;

	ty->runs++;
	for (size_t k = 0; k < w->g.n; k++) {
		size_t i = w->g.order[k];
		const struct kp_verdict *nv = &now->v[i];
		const struct kp_sim_reads *nr = &now->rec[i];

		if (k == 0)
			st.once = nr->once_before;
		if (st.taint != nr->taint_before || st.once != nr->once_before) {
			if (!ty->chain_bad++)
				fprintf(stderr,
					"# %s: the state before %s is not the records' one\n", what,
					w->g.nodes[i].mod->name);
		}
		st.name_live = name_live(w, now, k);
		st.name_unformed = name_unformed(w, now, k);
		if (i != changed && kp_sim_reads_hold(was, i, &st, now->v)) {
			bool late = kp_sim_late_reads_hold(was, i, now->global_taint, now->v);

			ty->reused++;
			if (!same_load(&was->v[i], &was->rec[i], nv, nr) ||
			    (late && !same_late(&was->v[i], nv)) ||
			    (was->rec[i].taint_set & ~st.taint) != nv->global_added) {
				if (!ty->bad++)
					fprintf(stderr,
						"# %s: %s's reads hold, its verdict differs\n",
						what, w->g.nodes[i].mod->name);
			}
		} else {
			ty->resimulated++;
		}
		/* the splice carries the state with the record of the verdict it keeps */
		kp_sim_reads_apply(nr, &st);
		if (nv->load_seq != (nv->loads ? ++seq : 0) && !ty->chain_bad++)
			fprintf(stderr, "# %s: %s's load_seq is not the count of loads\n", what,
				w->g.nodes[i].mod->name);
		if (nv->err == KP_ERR_OOPS)
			st.taint |= 1UL << KP_TAINT_DIE;
	}
	if ((st.taint & ~w->facts.initial_taint) != (now->global_taint & ~w->facts.initial_taint))
		if (!ty->chain_bad++)
			fprintf(stderr, "# %s: the final taint is not the records' one\n", what);
}

enum mutation {
	MUT_UNSIGNED,
	MUT_PROPRIETARY,
	MUT_OUT_OF_TREE,
	MUT_TEST,
	MUT_LIVEPATCH,
	MUT_VERMAGIC,
	MUT_GUARD,
	MUT_N
};
static const char *const mut_names[] = {
	"signature stripped",	     "license proprietary",
	"out of tree toggled",	     "test toggled",
	"livepatch toggled",	     "vermagic of another kernel",
	"import name in guard page",
};

/* Simulates @w again with @m changed by @mut (then put back), compared with @was. */
static void mutate(struct tb_world *w, const struct kp_simulation *was, size_t node,
		   enum mutation mut, struct tally *ty)
{
	struct kp_module *m = (struct kp_module *)w->g.nodes[node].mod;
	struct kp_signature sig = m->sig;
	const char *license = m->license;
	const char *vermagic = m->vermagic;
	bool gpl = m->license_gpl_compatible, intree = m->intree, test = m->test;
	bool livepatch = m->livepatch;
	uint32_t outside = m->import_name_outside;
	uint64_t outside_off = m->import_name_outside_off;
	struct kp_simulation now;
	struct kp_err err;
	char what[160];

	switch (mut) {
	case MUT_UNSIGNED:
		if (!m->sig.present)
			return;
		memset(&m->sig, 0, sizeof(m->sig));
		break;
	case MUT_PROPRIETARY:
		m->license = "Proprietary";
		m->license_gpl_compatible = false;
		break;
	case MUT_OUT_OF_TREE:
		m->intree = !m->intree;
		break;
	case MUT_TEST:
		m->test = !m->test;
		break;
	case MUT_LIVEPATCH:
		m->livepatch = !m->livepatch;
		break;
	case MUT_VERMAGIC:
		/* check_modinfo(): the load fails, its exports are not live */
		m->vermagic = "5.0.0 SMP mod_unload ";
		break;
	case MUT_GUARD:
		/* resolve.c: find_symbol() oopses holding module_mutex (before 6.13) */
		if (!m->nimports)
			return;
		m->import_name_outside = m->imports[0].symidx;
		m->import_name_outside_off = (m->image_size + 4095) / 4096 * 4096 + 16;
		break;
	case MUT_N:
		return;
	}
	snprintf(what, sizeof(what), "%s %s", m->name, mut_names[mut]);
	if (kp_simulate_recorded(&w->g, &w->facts, &now, &err) < 0) {
		fprintf(stderr, "simulate: %s\n", err.msg);
		abort();
	}
	compare(w, was, &now, node, ty, what);
	kp_simulation_release(&now);
	m->sig = sig;
	m->license = license;
	m->license_gpl_compatible = gpl;
	m->intree = intree;
	m->test = test;
	m->livepatch = livepatch;
	m->vermagic = vermagic;
	m->import_name_outside = outside;
	m->import_name_outside_off = outside_off;
}

/* @n verdict indices of two read pools, from @a and @b on (no pool when none was read). */
static bool same_pool(const uint32_t *x, size_t a, const uint32_t *y, size_t b, size_t n)
{
	return !n || (x && y && !memcmp(x + a, y + b, n * sizeof(*x)));
}

/*
 * Every module of @w simulated alone at its place (kp_simulate_one()), in the state the
 * full run's records carry to it and with the full run's verdicts before it, then its
 * symbol_get() calls against the full run's (kp_simulate_one_late()): the modules whose
 * verdict, record or global taint is not the full run's.
 */
static size_t alone(const struct tb_world *w, const char *what)
{
	struct kp_sim_state st = { .taint = w->facts.initial_taint };
	size_t bad = 0;

	for (size_t k = 0; k < w->g.n; k++) {
		size_t i = w->g.order[k];
		const struct kp_verdict *v = &w->sim.v[i];
		const struct kp_sim_reads *r = &w->sim.rec[i];
		struct kp_simulation one;
		struct kp_err err;
		bool same;

		st.taint = r->taint_before;
		st.once = r->once_before;
		if (kp_simulate_one(&w->g, &w->facts, w->sim.v, k, &st, &one, &err) < 0 ||
		    kp_simulate_one_late(&w->g, &w->facts, w->sim.v, w->sim.global_taint, &one, i,
					 &err) < 0) {
			fprintf(stderr, "# %s: %s\n", what, err.msg);
			abort();
		}
		same = same_load(v, r, &one.v[i], &one.rec[i]) && same_late(v, &one.v[i]) &&
		       v->global_added == one.v[i].global_added &&
		       v->global_after == one.v[i].global_after &&
		       v->load_seq == one.v[i].load_seq && one.v[i].node == i &&
		       r->taint_before == one.rec[i].taint_before &&
		       r->taint_tested == one.rec[i].taint_tested &&
		       r->once_read == one.rec[i].once_read &&
		       r->name_read == one.rec[i].name_read &&
		       r->name_live == one.rec[i].name_live &&
		       r->name_unformed == one.rec[i].name_unformed &&
		       r->stall_asked == one.rec[i].stall_asked &&
		       r->nverdicts == one.rec[i].nverdicts && r->nlate == one.rec[i].nlate &&
		       same_pool(w->sim.reads, r->verdicts, one.reads, one.rec[i].verdicts,
				 r->nverdicts) &&
		       same_pool(w->sim.reads, r->late, one.reads, one.rec[i].late, r->nlate);
		if (!same && !bad++)
			fprintf(stderr, "# %s: %s alone is not the full run's\n", what,
				w->g.nodes[i].mod->name);
		kp_simulation_release(&one);
		kp_sim_reads_apply(r, &st);
	}
	return bad;
}

/* Every module of @w (or every @step-th in load order) changed in every way. */
static void splices(struct tap *t, struct tb_world *w, size_t step, const char *what)
{
	struct tally ty = { 0 };
	char line[256];

	tap_ok(t, !w->sim.reads_incomplete, "%s: records complete", what);
	snprintf(line, sizeof(line), "%s: %zu modules simulated alone = the full run", what,
		 w->g.n);
	tap_is_int(t, alone(w, what), 0, line);
	for (size_t k = 0; k < w->g.n; k += step)
		for (int mut = 0; mut < MUT_N; mut++)
			mutate(w, &w->sim, w->g.order[k], mut, &ty);
	/* the unchanged run against itself: every verdict's reads hold */
	compare(w, &w->sim, &w->sim, SIZE_MAX, &ty, "unchanged");
	printf("# %s: %zu runs, %zu verdicts kept, %zu simulated again\n", what, ty.runs, ty.reused,
	       ty.resimulated);
	snprintf(line, sizeof(line), "%s: verdicts whose reads hold and differ", what);
	tap_is_int(t, ty.bad, 0, line);
	snprintf(line, sizeof(line), "%s: states the records do not carry", what);
	tap_is_int(t, ty.chain_bad, 0, line);
	tap_ok(t, ty.reused > ty.resimulated, "%s: most verdicts are kept", what);
}

/*
 * Built modules whose providers load without taints of their own (the 6.1 fixtures' GPL
 * providers fail on that kernel): a provider failing changes only the verdicts it is read by.
 */
static void built(struct tap *t)
{
	struct tb_world w;
	struct kp_module *m;

	tb_init(&w, "6.12.37");
	tb_std_kernel(&w);
	w.facts.module_sig = true;
	w.facts.vermagic = "6.12.0 SMP mod_unload ";
	m = tb_module(&w, "first");
	tb_import(m, "printk");
	m = tb_module(&w, "prov");
	tb_export(m, "p_fn", KP_KSYMTAB);
	tb_export(m, "p_gpl", KP_KSYMTAB_GPL);
	tb_import(m, "gpl_fn");
	m = tb_module(&w, "user");
	tb_import(m, "p_fn");
	m = tb_module(&w, "weak_user");
	tb_import_weak(m, "p_fn");
	tb_import(m, "printk");
	m = tb_module(&w, "chain");
	tb_export(m, "c_fn", KP_KSYMTAB);
	tb_import(m, "p_gpl");
	m = tb_module(&w, "chain_user");
	tb_import(m, "c_fn");
	m = tb_module(&w, "getter");
	tb_symget(m, "p_gpl", KP_SYMGET_EXACT, false);
	tb_symget(m, "c_fn", KP_SYMGET_EXACT, false);
	m = tb_module(&w, "dup_export");
	tb_export(m, "c_fn", KP_KSYMTAB);
	m = tb_module(&w, "last");
	tb_import(m, "base_fn");
	run_recorded(&w);
	tap_is_int(t, tb_v(&w, "chain_user")->err, 0, "built: chain_user loads");
	splices(t, &w, 1, "built");
	tb_free(&w);
}

/* Module "x" of 8192 bytes whose import's name runs to its end: an oops leaves it UNFORMED. */
static void page_x(struct tb_world *w)
{
	tb_import_name_past_end(tb_module(w, "x"), 8192, "kp_name_page");
}

/*
 * Three modules named x, the first two with strtab_page's oops: the first is left UNFORMED
 * and the others wait for it. When the first no longer oopses (its vermagic, its signature),
 * the second oopses and the third waits for the second: its reads must not hold as before.
 */
static void unformed(struct tap *t)
{
	struct tb_world w;

	tb_init(&w, "6.12.37");
	tb_std_kernel(&w);
	w.facts.module_sig = true;
	w.facts.vermagic = "6.12.0 SMP mod_unload ";
	tb_import(tb_module(&w, "first"), "printk");
	page_x(&w);
	page_x(&w);
	tb_import(tb_module(&w, "x"), "printk");
	tb_import(tb_module(&w, "last"), "printk");
	run_recorded(&w);
	tap_ok(t,
	       w.sim.v[1].left_unformed && w.sim.v[2].err == KP_ERR_BLOCKED &&
		       w.sim.v[2].stalled_by == 1 && w.sim.v[3].stalled_by == 1 && w.sim.v[4].loads,
	       "unformed: the first x UNFORMED, the two others wait for it, last loads");
	splices(t, &w, 1, "unformed");
	tb_free(&w);
}

/*
 * The loads after an oops that stalls the loader, each simulated alone at its place: "m" on
 * 6.1.129 oopses holding module_mutex (its import's name outside the file, strtab_guard's
 * shape) and b and c block; on 5.10.223 its oops hangs the machine (its import's name runs
 * to the end of the file, strtab_page's shape) and b never runs.
 */
static void stalls(struct tap *t)
{
	struct tb_world w;
	struct kp_module *m;
	char line[128];

	tb_init(&w, "6.1.129");
	tb_std_kernel(&w);
	m = tb_module(&w, "m");
	m->image_size = 5128;
	m->symstr_state = KP_SYMSTR_NAME_OOB;
	m->symname_past_end = 1;
	tb_import(m, "");
	m->import_name_outside = m->imports[0].symidx;
	m->import_name_outside_off = 8192 + 16;
	tb_module(&w, "b");
	tb_import(tb_module(&w, "c"), "printk");
	run_recorded(&w);
	tap_ok(t, tb_v(&w, "m")->holds_module_mutex && tb_v(&w, "c")->err == KP_ERR_BLOCKED,
	       "mutex: m holds module_mutex, c blocks");
	snprintf(line, sizeof(line), "mutex: %zu modules simulated alone = the full run", w.g.n);
	tap_is_int(t, alone(&w, "mutex"), 0, line);
	tb_free(&w);

	tb_init(&w, "5.10.223");
	tb_std_kernel(&w);
	m = tb_module(&w, "m");
	m->image_size = 8192;
	m->symstr_state = KP_SYMSTR_NAME_OOB;
	m->symname_past_end = 1;
	tb_import(m, "kp_name_page");
	m->import_name_past_end = m->imports[0].symidx;
	tb_module(&w, "b");
	run_recorded(&w);
	tap_ok(t, tb_v(&w, "m")->hangs && tb_v(&w, "b")->err == KP_ERR_NOT_RUN,
	       "hung: m hangs the machine, b never runs");
	snprintf(line, sizeof(line), "hung: %zu modules simulated alone = the full run", w.g.n);
	tap_is_int(t, alone(&w, "hung"), 0, line);
	tb_free(&w);
}

static struct tb_world *tree_world;
static int tree_depth;	     /* the deepest level of modules taken (nftw(): 1 is the directory's) */
static bool tree_compressed; /* .ko.xz, .ko.zst, .ko.gz too (the fixtures' are copies) */

/* A module's file name: .ko, or (tree_compressed) compressed as a distribution ships it. */
static bool is_module(const char *path)
{
	static const char *const ends[] = { ".ko", ".ko.xz", ".ko.zst", ".ko.gz" };
	size_t n = strlen(path);

	for (size_t i = 0; i < (tree_compressed ? KP_ARRAY_SIZE(ends) : 1); i++)
		if (n > strlen(ends[i]) && !strcmp(path + n - strlen(ends[i]), ends[i]))
			return true;
	return false;
}

static int add_ko(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)st;
	if (type == FTW_F && f->level <= tree_depth && is_module(path))
		tb_module_file(tree_world, path);
	return 0;
}

static void world_61(struct tb_world *w)
{
	tb_init_distro(w, "6.1.192", KP_DISTRO_DEBIAN);
	w->facts.release = "6.1.0-57-amd64";
	w->facts.modversions = true;
	w->facts.module_sig = true;
}

/* The graph of @w, the kernel's vermagic its first module's (a tree's), then the simulation. */
static void run_tree(struct tb_world *w)
{
	struct kp_err err;

	tb_graph(w);
	if (w->g.n && w->g.nodes[0].mod->vermagic)
		w->facts.vermagic = w->g.nodes[0].mod->vermagic;
	if (kp_simulate_recorded(&w->g, &w->facts, &w->sim, &err) < 0) {
		fprintf(stderr, "simulate: %s\n", err.msg);
		abort();
	}
	w->ran = true;
}

int main(int argc, char **argv)
{
	struct tap t = { 0 };
	struct tb_world w;

	if (argc == 3) {
		/* a whole tree: every 40th module in load order, each changed six ways */
		world_61(&w);
		tb_base_file(&w, argv[2]);
		tree_world = &w;
		tree_depth = 64;
		tree_compressed = true;
		if (nftw(argv[1], add_ko, 32, FTW_PHYS) != 0)
			abort();
		run_tree(&w);
		splices(&t, &w, 40, argv[1]);
		tb_free(&w);
		return tap_done(&t);
	}
	records(&t);
	built(&t);
	unformed(&t);
	stalls(&t);
	world_61(&w);
	tb_base_file(&w, tap_srcpath("fixtures/ko/6.1/Module.symvers.gz"));
	tree_world = &w;
	tree_depth = 1;
	if (nftw(tap_srcpath("fixtures/ko/6.1"), add_ko, 32, FTW_PHYS) != 0)
		abort();
	run_tree(&w);
	tap_is_int(&t, (long)w.g.n, 47, "6.1 fixtures: 47 modules");
	tap_is_str(&t, w.facts.vermagic, "6.1.0-57-amd64 SMP preempt mod_unload modversions ",
		   "6.1 fixtures: the kernel's vermagic");
	splices(&t, &w, 1, "6.1 fixtures");
	tb_free(&w);
	return tap_done(&t);
}
