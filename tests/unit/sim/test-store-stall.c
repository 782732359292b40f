// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sim-store.c, runs where an oops stalls the loads after it (module_mutex held, a module left
 * UNFORMED, a hung machine; built and from the strtab fixtures): every field of every verdict
 * and record comes back equal; a damaged store decodes to an error or in bounds; a stall index
 * or kind out of range is refused, naming the field; the decoded records answer
 * kp_sim_reads_hold() as the originals do (a stalled verdict's: not without its stall, or with
 * another load behind it). The rest of the store: test-store.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "builder.h"
#include "sim/sim-store.h"
#include "sim/sim-reads.h"
#include "store-check.h"

/* Encodes @w's simulation and decodes it: the error is @want ("": it decoded). */
static void decodes_as(struct tap *t, struct tb_world *w, const char *want, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void decodes_as(struct tap *t, struct tb_world *w, const char *want, const char *fmt, ...)
{
	struct kp_sim_stored s;
	struct kp_err err = { 0 };
	unsigned char *p;
	char what[256];
	va_list ap;
	size_t n;

	if (kp_sim_store_encode(&w->g, &w->sim, &p, &n, NULL, &err) < 0)
		abort();
	if (kp_sim_store_decode(p, n, &s, &err) == 0)
		err.msg[0] = '\0';
	kp_sim_stored_release(&s);
	free(p);
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	tap_is_str(t, err.msg, want, what);
}

/*
 * Stores of @w (a run with a stall: verdict @blocked stalled by @by) with the stall state
 * forged out of range, one field at a time: each refused, naming the field.
 */
static void forged_stalls(struct tap *t, struct tb_world *w, size_t blocked, size_t by,
			  const char *what)
{
	struct kp_verdict *v = &w->sim.v[blocked], *o = &w->sim.v[by];
	struct kp_sim_reads *r = &w->sim.rec[blocked], *ro = &w->sim.rec[by];
	const struct kp_verdict sv = *v, so = *o;
	const struct kp_sim_reads sr = *r, sro = *ro;
	decodes_as(t, w, "", "%s: the store decodes", what);
	v->stalled_by = w->g.n;
	decodes_as(t, w, "stored simulation: stalled by", "%s: stalled_by past the modules", what);
	v->stalled_by = SIZE_MAX;
	decodes_as(t, w, "stored simulation: stalled by", "%s: a blocked verdict stalled by none",
		   what);
	*v = sv;
	o->stalled_by = blocked;
	decodes_as(t, w, "stored simulation: stalled by",
		   "%s: a verdict not blocked stalled by one", what);
	*o = so;
	r->stall_before.by = w->g.n;
	decodes_as(t, w, "stored simulation: stall before", "%s: the stall read past the modules",
		   what);
	r->stall_before.by = SIZE_MAX;
	if (r->stall_before.kind == KP_STALL_NONE) /* a stall of no kind is by none */
		r->stall_before.kind = KP_STALL_MUTEX;
	decodes_as(t, w, "stored simulation: stall before", "%s: the stall read by none", what);
	r->stall_before = sr.stall_before;
	r->stall_before.kind = (enum kp_stall_kind)(KP_STALL_HUNG + 1);
	decodes_as(t, w, "stored simulation: stall before", "%s: a stall kind past the enum", what);
	*r = sr;
	r->stall_asked |= 1u << (KP_STALL_HUNG + 1);
	decodes_as(t, w, "stored simulation: read record flags",
		   "%s: a stall kind asked past the enum", what);
	*r = sr;
	ro->stall_set.by = w->g.n + 7;
	decodes_as(t, w, "stored simulation: stall set", "%s: the stall left past the modules",
		   what);
	ro->stall_set.by = sro.stall_set.by;
	ro->stall_set.kind = (enum kp_stall_kind)7;
	decodes_as(t, w, "stored simulation: stall set", "%s: the stall left of no kind", what);
	*ro = sro;
	decodes_as(t, w, "", "%s: restored, the store decodes", what);
}

/*
 * The stored reads of a stalled verdict still say what stalled it: they hold from the state
 * it was simulated in and not from one without the stall or with another load behind it.
 */
static void stall_holds(struct tap *t, struct tb_world *w, size_t blocked, const char *what)
{
	struct kp_sim_stored s;
	struct kp_err err;
	unsigned char *p;
	size_t len;
	const struct kp_sim_reads *r = &w->sim.rec[blocked];
	struct kp_sim_state st = {
		.taint = r->taint_before,
		.once = r->once_before,
		.name_live = r->name_live,
		.name_unformed = r->name_unformed,
		.stall = r->stall_before,
	};

	if (kp_sim_store_encode(&w->g, &w->sim, &p, &len, NULL, &err) < 0 ||
	    kp_sim_store_decode(p, len, &s, &err) < 0)
		abort();
	tap_ok(t, kp_sim_reads_hold(&s.sim, blocked, &st, w->sim.v),
	       "%s: the stalled verdict's stored reads hold in its state", what);
	if (r->name_unformed) {
		st.name_unformed = false;
		tap_ok(t, !kp_sim_reads_hold(&s.sim, blocked, &st, w->sim.v),
		       "%s: not with its name no longer UNFORMED", what);
	} else {
		st.stall.kind = KP_STALL_NONE;
		tap_ok(t, !kp_sim_reads_hold(&s.sim, blocked, &st, w->sim.v),
		       "%s: not without the stall", what);
		st.stall = r->stall_before;
		st.stall.by = blocked;
		tap_ok(t, !kp_sim_reads_hold(&s.sim, blocked, &st, w->sim.v),
		       "%s: not stalled by another load", what);
	}
	kp_sim_stored_release(&s);
	free(p);
}

/* A stalled run of @w: round trip, damage, forged stall fields, what the reads hold. */
static void stalled(struct tap *t, struct tb_world *w, size_t blocked, const char *what)
{
	unsigned char *p;
	size_t len, by = w->sim.v[blocked].stalled_by;

	tap_ok(t, by < w->g.n, "%s: verdict %zu stalled by %zu", what, blocked, by);
	if (by >= w->g.n)
		return;
	round_trip(t, w, what, &p, &len);
	copied_again(t, p, len, what);
	damage(t, p, len, 1, what);
	free(p);
	forged_stalls(t, w, blocked, by, what);
	stall_holds(t, w, blocked, what);
}

/* "m" of 5128 bytes importing a name that starts in the guard page (test-stall.c's shape). */
static struct kp_module *guard_world(struct tb_world *w, const char *release)
{
	struct kp_module *m;

	tb_init(w, release);
	tb_std_kernel(w);
	m = tb_module(w, "m");
	tb_import_name_outside(m, 5128, 8192 + 16, false);
	return m;
}

/* "m" of 8192 bytes whose import's name runs to its end (strtab_page's shape). */
static void page_world(struct tb_world *w, const char *release)
{
	tb_init(w, release);
	tb_std_kernel(w);
	tb_import_name_past_end(tb_module(w, "m"), 8192, "kp_name_page");
}

static void stall_built(struct tap *t)
{
	struct tb_world w;

	/* module_mutex held: b and c block in mutex_lock() */
	guard_world(&w, "6.1.129");
	tb_module(&w, "b");
	tb_import(tb_module(&w, "c"), "printk");
	run_recorded(&w);
	tap_ok(t,
	       tb_v(&w, "m")->holds_module_mutex && tb_v(&w, "b")->err == KP_ERR_BLOCKED &&
		       tb_v(&w, "c")->err == KP_ERR_BLOCKED &&
		       w.sim.rec[tb_node(&w, "b")].stall_before.kind == KP_STALL_MUTEX,
	       "built mutex: m holds module_mutex, b and c block");
	stalled(t, &w, tb_node(&w, "b"), "built mutex");
	tb_free(&w);

	/* m left UNFORMED: the second m waits for it, b loads */
	page_world(&w, "6.1.129");
	tb_module(&w, "m");
	tb_module(&w, "b");
	run_recorded(&w);
	tap_ok(t,
	       w.sim.v[0].left_unformed && w.sim.v[1].err == KP_ERR_BLOCKED &&
		       w.sim.rec[1].name_unformed && tb_v(&w, "b")->loads,
	       "built unformed: the second m waits for the first, UNFORMED; b loads");
	stalled(t, &w, 1, "built unformed");
	tb_free(&w);

	/* 5.10: the machine hangs, b never runs */
	page_world(&w, "5.10.223");
	tb_module(&w, "b");
	run_recorded(&w);
	tap_ok(t,
	       tb_v(&w, "m")->hangs && tb_v(&w, "b")->err == KP_ERR_NOT_RUN &&
		       w.sim.rec[tb_node(&w, "m")].stall_set.kind == KP_STALL_HUNG,
	       "built hung: m hangs the machine, b never runs");
	stalled(t, &w, tb_node(&w, "b"), "built hung");
	tb_free(&w);
}

/* The committed strtab fixtures of @series (release @release) then later modules. */
static void stall_fixture(struct tap *t, const char *series, const char *release, const char *first,
			  const char *want)
{
	static const char *const later[] = { "kp_gpl_prov.ko", "kp_plain.ko", "kp_use_prop.ko" };
	char path[512], what[128];
	struct tb_world w;
	size_t blocked = SIZE_MAX;

	tb_init_distro(&w, release, KP_DISTRO_DEBIAN);
	w.facts.modversions = true;
	w.facts.module_sig = true;
	snprintf(path, sizeof(path), "fixtures/ko/%s/Module.symvers.gz", series);
	tb_base_file(&w, tap_srcpath(path));
	snprintf(path, sizeof(path), "fixtures/ko/%s/strtab/%s", series, first);
	tb_module_file(&w, tap_srcpath(path));
	for (size_t i = 0; i < KP_ARRAY_SIZE(later); i++) {
		snprintf(path, sizeof(path), "fixtures/ko/%s/%s", series, later[i]);
		tb_module_file(&w, tap_srcpath(path));
	}
	run_recorded(&w);
	snprintf(what, sizeof(what), "%s %s", series, first);
	for (size_t k = 0; k < w.g.n && blocked == SIZE_MAX; k++)
		if (KP_ERR_IS_STALL(w.sim.v[w.g.order[k]].err) &&
		    w.sim.v[w.g.order[k]].err != KP_ERR_OOPS)
			blocked = w.g.order[k];
	tap_is_str(t, blocked < w.g.n ? kp_errno_name(w.sim.v[blocked].err) : "none", want, what);
	if (blocked < w.g.n)
		stalled(t, &w, blocked, what);
	tb_free(&w);
}

int main(void)
{
	struct tap t = { 0 };

	stall_built(&t);
	stall_fixture(&t, "6.1", "6.1.192", "kp_strtab_guard.ko", "BLOCKED");
	stall_fixture(&t, "6.12", "6.12.57", "kp_strtab_page.ko", "BLOCKED");
	stall_fixture(&t, "5.10", "5.10.262", "kp_strtab_page.ko", "NOT-RUN");
	return tap_done(&t);
}
