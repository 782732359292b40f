// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sim-store.c: a recorded simulation as bytes and back. Every field of every verdict, record
 * and the pool comes back equal (the 6.1 fixtures, a built world with findings, symbol_get()
 * results and P evidence, and runs where an oops stalls the loads after it: module_mutex held,
 * a module left UNFORMED, a hung machine, built and from the strtab fixtures); the decoded
 * records answer kp_sim_reads_hold() as the originals do (a stalled verdict's: not without
 * its stall, or with another load behind it); every field of the structs stored is listed
 * (a field added fails the count); a stall index or kind out of range is refused; the
 * interface digest moves with what other loads read (an export's CRC, namespace or class, an
 * import's weak bit) and not with the rest (license, signature);
 * a damaged store (every truncation, every byte of a small store flipped, every 32-bit field
 * of a larger one set to extremes) decodes to an error or to a store whose every index is in
 * bounds, never past its bytes (the sanitizer build checks the latter).
 * With arguments (a directory of modules and its Module.symvers), the round trip of a whole
 * tree, timed by the caller: `test-store DIR SYMVERS`.
 */
#include <ftw.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "builder.h"
#include "cache/facts-serial.h"
#include "read/module-iface.h"
#include "sim/sim-store.h"
#include "sim/sim-reads.h"
#include "sim/verdict-same.h"

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* the round trip keeps the node and the load sequence too */
static bool same_verdict(const struct kp_verdict *a, const struct kp_verdict *b)
{
	return a->node == b->node && a->load_seq == b->load_seq && kp_verdict_same_output(a, b);
}

static bool same_reads(const struct kp_sim_reads *a, const struct kp_sim_reads *b)
{
	return a->taint_before == b->taint_before && a->taint_tested == b->taint_tested &&
	       a->taint_set == b->taint_set && a->taint_late == b->taint_late &&
	       a->once_before == b->once_before && a->once_read == b->once_read &&
	       a->once_set == b->once_set && a->name_read == b->name_read &&
	       a->name_live == b->name_live && a->name_unformed == b->name_unformed &&
	       a->stall_asked == b->stall_asked && a->stall_before.kind == b->stall_before.kind &&
	       a->stall_before.by == b->stall_before.by && a->stall_set.kind == b->stall_set.kind &&
	       a->stall_set.by == b->stall_set.by && a->verdicts == b->verdicts &&
	       a->nverdicts == b->nverdicts && a->late == b->late && a->nlate == b->nlate &&
	       a->nmessages_load == b->nmessages_load && a->nfindings_load == b->nfindings_load;
}

static void run_recorded(struct tb_world *w)
{
	struct kp_err err;

	tb_graph(w);
	if (w->g.n && !w->facts.vermagic && w->g.nodes[0].mod->vermagic)
		w->facts.vermagic = w->g.nodes[0].mod->vermagic;
	if (kp_simulate_recorded(&w->g, &w->facts, &w->sim, &err) < 0) {
		fprintf(stderr, "simulate: %s\n", err.msg);
		abort();
	}
	w->ran = true;
}

/* The counts of what came back different; 0 each when the store is faithful. */
struct diff {
	size_t verdicts, reads, mods, pool, order, holds;
};

static void compare(const struct tb_world *w, const struct kp_sim_stored *s, struct diff *d)
{
	const struct kp_simulation *o = &w->sim;
	struct kp_sim_state st = { .taint = w->facts.initial_taint };
	unsigned char dg[KP_SIM_IFACE_LEN];

	memset(d, 0, sizeof(*d));
	if (s->n != w->g.n || s->sim.nreads != o->nreads ||
	    s->sim.global_taint != o->global_taint) {
		d->order = SIZE_MAX;
		return;
	}
	for (size_t i = 0; i < o->nreads; i++)
		d->pool += s->sim.reads[i] != o->reads[i];
	for (size_t k = 0; k < w->g.n; k++) {
		size_t i = w->g.order[k];
		const struct kp_node *nd = &w->g.nodes[i];

		d->order += s->order[k] != i;
		d->verdicts += !same_verdict(&o->v[i], &s->sim.v[i]);
		d->reads += !same_reads(&o->rec[i], &s->sim.rec[i]);
		d->mods += !same_str(s->mods[i].path, nd->path) ||
			   !same_str(s->mods[i].name, nd->mod->name) ||
			   kp_sim_iface_digest(nd->mod, dg) < 0 ||
			   memcmp(dg, s->mods[i].iface, sizeof(dg));
		/* the same run again: every attempted load's stored reads hold */
		if (k == 0)
			st.once = o->rec[i].once_before;
		st.name_live = o->rec[i].name_read && o->rec[i].name_live;
		st.name_unformed = o->rec[i].name_read && o->rec[i].name_unformed;
		if (o->v[i].attempted &&
		    (!kp_sim_reads_hold(&s->sim, i, &st, o->v) ||
		     !kp_sim_late_reads_hold(&s->sim, i, o->global_taint, o->v)))
			d->holds++;
		kp_sim_reads_apply(&s->sim.rec[i], &st);
	}
}

/* Encodes @w's simulation, decodes it and counts what differs; the bytes in *@out. */
static void round_trip(struct tap *t, struct tb_world *w, const char *what, unsigned char **out,
		       size_t *len)
{
	struct kp_sim_stored s;
	struct kp_err err = { 0 };
	struct diff d;

	unsigned char(*dg)[KP_SIM_IFACE_LEN] = calloc(w->g.n + 1, sizeof(*dg));
	size_t bad_dg = 0;

	if (!dg)
		abort();
	tap_is_intf(t, kp_sim_store_encode(&w->g, &w->sim, out, len, dg, &err), 0, "%s: encoded",
		    what);
	tap_is_intf(t, kp_sim_store_decode(*out, *len, &s, &err), 0, "%s: decoded", what);
	if (err.msg[0])
		printf("# %s\n", err.msg);
	compare(w, &s, &d);
	for (size_t i = 0; i < s.n; i++)
		bad_dg += memcmp(dg[i], s.mods[i].iface, KP_SIM_IFACE_LEN) != 0;
	tap_is_intf(t, (long)bad_dg, 0, "%s: the digests handed back are the stored ones", what);
	free(dg);
	tap_is_intf(t, (long)d.order, 0, "%s: load order", what);
	tap_is_intf(t, (long)d.verdicts, 0, "%s: every verdict equal", what);
	tap_is_intf(t, (long)d.reads, 0, "%s: every read record equal", what);
	tap_is_intf(t, (long)d.pool, 0, "%s: the pool equal", what);
	tap_is_intf(t, (long)d.mods, 0, "%s: paths, names, interface digests", what);
	tap_is_intf(t, (long)d.holds, 0, "%s: the stored reads hold on the same run", what);
	kp_sim_stored_release(&s);
}

/* Every index of @s in bounds (a decoded store, forged or not, is safe to splice from). */
static bool in_bounds(const struct kp_sim_stored *s)
{
	for (size_t k = 0; k < s->n; k++) {
		const struct kp_verdict *v = &s->sim.v[s->order[k]];
		const struct kp_sim_reads *r = &s->sim.rec[s->order[k]];

		if (s->order[k] >= s->n || v->node != s->order[k] ||
		    (v->p_from != SIZE_MAX && v->p_from >= s->n) ||
		    (v->failed_dep != SIZE_MAX && v->failed_dep >= s->n) ||
		    (v->stalled_by != SIZE_MAX && v->stalled_by >= s->n) ||
		    (r->stall_before.kind != KP_STALL_NONE && r->stall_before.by >= s->n) ||
		    (r->stall_set.kind != KP_STALL_NONE && r->stall_set.by >= s->n) ||
		    r->stall_before.kind > KP_STALL_HUNG || r->stall_set.kind > KP_STALL_HUNG ||
		    (uint64_t)r->verdicts + r->nverdicts > s->sim.nreads ||
		    (uint64_t)r->late + r->nlate > s->sim.nreads ||
		    r->nmessages_load > v->nmessages || r->nfindings_load > v->nfindings)
			return false;
		for (size_t j = 0; j < v->nmessages; j++)
			if (!v->messages[j])
				return false;
		for (size_t j = 0; j < v->nfindings; j++)
			if (!v->findings[j].id)
				return false;
	}
	for (size_t i = 0; i < s->sim.nreads; i++)
		if (s->sim.reads[i] >= s->n)
			return false;
	return true;
}

struct forged {
	size_t tries, refused, accepted, unsafe;
};

static void try_forged(const unsigned char *p, size_t len, struct forged *f)
{
	struct kp_sim_stored s;
	struct kp_err err;

	f->tries++;
	if (kp_sim_store_decode(p, len, &s, &err) < 0) {
		f->refused++;
		return;
	}
	f->accepted++;
	f->unsafe += !in_bounds(&s);
	kp_sim_stored_release(&s);
}

/* Every truncation of @p refused; every byte flipped (every @step-th) and every 32-bit word
 * set to 0, 1, 0x7fffffff and ~0: refused or in bounds. */
static void damage(struct tap *t, const unsigned char *p, size_t len, size_t step, const char *what)
{
	unsigned char *q = malloc(len ? len : 1);
	static const uint32_t words[] = { 0, 1, 0x7fffffff, 0xffffffff };
	struct forged tr = { 0 }, fl = { 0 }, wd = { 0 }, mg = { 0 };

	if (!q)
		abort();
	for (size_t n = 0; n < len; n++) {
		memcpy(q, p, n); /* a copy of exactly @n bytes: the sanitizer sees a read past it */
		try_forged(q, n, &tr);
	}
	tap_is_intf(t, (long)tr.refused, (long)len, "%s: all %zu truncations refused", what, len);
	memcpy(q, p, len);
	for (size_t i = 0; i < 8 && i < len; i++) {
		q[i] ^= 0x20;
		try_forged(q, len, &mg);
		q[i] = p[i];
	}
	tap_is_intf(t, (long)mg.refused, 8, "%s: the magic changed: refused", what);
	for (size_t i = 0; i < len; i += step) {
		for (unsigned bit = 0; bit < 8; bit++) {
			q[i] ^= (unsigned char)(1u << bit);
			try_forged(q, len, &fl);
			q[i] = p[i];
		}
	}
	for (size_t i = 0; i + 4 <= len; i += step) {
		for (size_t w = 0; w < KP_ARRAY_SIZE(words); w++) {
			kp_store32(q + i, words[w]);
			try_forged(q, len, &wd);
			memcpy(q + i, p + i, 4);
		}
	}
	tap_is_intf(t, (long)(fl.unsafe + wd.unsafe), 0,
		    "%s: %zu bit flips (%zu refused), %zu words forged (%zu refused): "
		    "none decoded out of bounds",
		    what, fl.tries, fl.refused, wd.tries, wd.refused);
	free(q);
}

/*
 * The bytes of a struct no listed field covers: padding, or a field added since the list was
 * made. The lists are the fields sim-store.c stores (node: the store's node index); a field
 * added to the struct and not to its list (and so, likely, not to the store) changes the count.
 */
struct cover {
	unsigned char map[256];
	size_t size;
};
#define COVER(c, type, field) \
	memset((c)->map + offsetof(type, field), 1, sizeof(((type *)NULL)->field))

static size_t uncovered(const struct cover *c)
{
	size_t n = 0;

	for (size_t i = 0; i < c->size; i++)
		n += !c->map[i];
	return n;
}

static void fields(struct tap *t)
{
	struct cover v = { .size = sizeof(struct kp_verdict) };
	struct cover r = { .size = sizeof(struct kp_sim_reads) };
	struct cover f = { .size = sizeof(struct kp_finding) };
	struct cover g = { .size = sizeof(struct kp_symget_result) };
	struct cover st = { .size = sizeof(struct kp_stall) };
	bool lp64 = sizeof(void *) == 8 && sizeof(long) == 8 && sizeof(int) == 4;

	if (v.size > sizeof(v.map) || r.size > sizeof(r.map) || f.size > sizeof(f.map) ||
	    g.size > sizeof(g.map))
		abort();
	COVER(&v, struct kp_verdict, node);
	COVER(&v, struct kp_verdict, attempted);
	COVER(&v, struct kp_verdict, loads);
	COVER(&v, struct kp_verdict, err);
	COVER(&v, struct kp_verdict, taints);
	COVER(&v, struct kp_verdict, global_added);
	COVER(&v, struct kp_verdict, global_after);
	COVER(&v, struct kp_verdict, messages);
	COVER(&v, struct kp_verdict, nmessages);
	COVER(&v, struct kp_verdict, symget);
	COVER(&v, struct kp_verdict, nsymget);
	COVER(&v, struct kp_verdict, findings);
	COVER(&v, struct kp_verdict, nfindings);
	COVER(&v, struct kp_verdict, p_reason);
	COVER(&v, struct kp_verdict, p_from);
	COVER(&v, struct kp_verdict, p_symbol);
	COVER(&v, struct kp_verdict, failed_dep);
	COVER(&v, struct kp_verdict, load_seq);
	COVER(&v, struct kp_verdict, hangs);
	COVER(&v, struct kp_verdict, holds_module_mutex);
	COVER(&v, struct kp_verdict, left_unformed);
	COVER(&v, struct kp_verdict, stalled_by);

	COVER(&r, struct kp_sim_reads, taint_before);
	COVER(&r, struct kp_sim_reads, taint_tested);
	COVER(&r, struct kp_sim_reads, taint_set);
	COVER(&r, struct kp_sim_reads, taint_late);
	COVER(&r, struct kp_sim_reads, once_before);
	COVER(&r, struct kp_sim_reads, once_read);
	COVER(&r, struct kp_sim_reads, once_set);
	COVER(&r, struct kp_sim_reads, name_read);
	COVER(&r, struct kp_sim_reads, name_live);
	COVER(&r, struct kp_sim_reads, name_unformed);
	COVER(&r, struct kp_sim_reads, stall_asked);
	COVER(&r, struct kp_sim_reads, stall_before);
	COVER(&r, struct kp_sim_reads, stall_set);
	COVER(&r, struct kp_sim_reads, verdicts);
	COVER(&r, struct kp_sim_reads, nverdicts);
	COVER(&r, struct kp_sim_reads, late);
	COVER(&r, struct kp_sim_reads, nlate);
	COVER(&r, struct kp_sim_reads, nmessages_load);
	COVER(&r, struct kp_sim_reads, nfindings_load);

	COVER(&st, struct kp_stall, kind);
	COVER(&st, struct kp_stall, by);

	COVER(&f, struct kp_finding, id);
	COVER(&f, struct kp_finding, severity);
	COVER(&f, struct kp_finding, consequence);
	COVER(&f, struct kp_finding, message);
	COVER(&f, struct kp_finding, symbol);
	COVER(&f, struct kp_finding, waived);

	COVER(&g, struct kp_symget_result, symbol);
	COVER(&g, struct kp_symget_result, ok);
	COVER(&g, struct kp_symget_result, reason);
	COVER(&g, struct kp_symget_result, owner);
	COVER(&g, struct kp_symget_result, gpl_only);
	COVER(&g, struct kp_symget_result, method_heuristic);
	COVER(&g, struct kp_symget_result, dynamic);
	COVER(&g, struct kp_symget_result, when);
	COVER(&g, struct kp_symget_result, path);
	COVER(&g, struct kp_symget_result, function);
	COVER(&g, struct kp_symget_result, kernel_logs);

	if (!lp64) {
		for (int i = 0; i < 5; i++)
			tap_ok(t, 1, "fields # SKIP the padding counts are LP64's");
		return;
	}
	/* a failure here: a field was added; store it (sim-store.c), then list it above */
	tap_is_intf(t, (long)uncovered(&v), 11, "struct kp_verdict (%zu bytes): every field stored",
		    v.size);
	tap_is_intf(t, (long)uncovered(&r), 5,
		    "struct kp_sim_reads (%zu bytes): every field stored", r.size);
	tap_is_intf(t, (long)uncovered(&st), 4, "struct kp_stall (%zu bytes): every field stored",
		    st.size);
	tap_is_intf(t, (long)uncovered(&f), 7, "struct kp_finding (%zu bytes): every field stored",
		    f.size);
	tap_is_intf(t, (long)uncovered(&g), 15,
		    "struct kp_symget_result (%zu bytes): every field stored", g.size);
}

static void built(struct tap *t)
{
	struct tb_world w;
	struct kp_module *m;
	unsigned char *p;
	size_t len;

	tb_init(&w, "6.12.37");
	tb_std_kernel(&w);
	w.facts.module_sig = true;
	w.facts.vermagic = "6.12.0 SMP mod_unload ";
	m = tb_module(&w, "first");
	tb_import(m, "printk");
	m = tb_module(&w, "prov");
	tb_modinfo(m, "license", "Proprietary");
	tb_export(m, "p_fn", KP_KSYMTAB);
	tb_export(m, "p_gpl", KP_KSYMTAB_GPL);
	m = tb_module(&w, "user");
	tb_import(m, "p_fn");
	m = tb_module(&w, "getter");
	tb_symget(m, "p_gpl", KP_SYMGET_EXACT, false);
	tb_symget(m, "p_fn", KP_SYMGET_EXACT, false);
	m = tb_module(&w, "late_fail");
	tb_import(m, "nobody_exports_this");
	run_recorded(&w);
	/* what the store must carry: P evidence, a failed load, symbol_get results, findings */
	tap_is_int(t, tb_v(&w, "user")->p_reason, KP_P_INHERITED, "built: user inherits P");
	tap_is_int(t, tb_v(&w, "late_fail")->err, -2, "built: late_fail fails (ENOENT)");
	tap_is_int(t, (long)tb_v(&w, "getter")->nsymget, 2, "built: getter's two results");
	tap_ok(t, tb_v(&w, "late_fail")->nfindings > 0, "built: late_fail has findings");
	/* as kp_waivers_apply() leaves it */
	if (tb_v(&w, "late_fail")->nfindings)
		w.sim.v[tb_node(&w, "late_fail")].findings[0].waived = true;
	round_trip(t, &w, "built", &p, &len);
	damage(t, p, len, 1, "built");
	/* a store of the first layout (no stall state): refused, not read as this one */
	memcpy(p, "KPSIMST1", 8);
	{
		struct kp_sim_stored s;
		struct kp_err err = { 0 };

		tap_ok(t, kp_sim_store_decode(p, len, &s, &err) < 0, "built: KPSIMST1 refused");
		tap_is_str(t, err.msg, "stored simulation: magic", "built: KPSIMST1's error");
	}
	free(p);
	tb_free(&w);
}

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
	m->image_size = 5128;
	m->symstr_state = KP_SYMSTR_NAME_OOB;
	m->symname_past_end = 1;
	tb_import(m, "");
	m->import_name_outside = m->imports[0].symidx;
	m->import_name_outside_off = 8192 + 16;
	return m;
}

/* "m" of 8192 bytes whose import's name runs to its end (strtab_page's shape). */
static void page_world(struct tb_world *w, const char *release)
{
	struct kp_module *m;

	tb_init(w, release);
	tb_std_kernel(w);
	m = tb_module(w, "m");
	m->image_size = 8192;
	m->symstr_state = KP_SYMSTR_NAME_OOB;
	m->symname_past_end = 1;
	tb_import(m, "kp_name_page");
	m->import_name_past_end = m->imports[0].symidx;
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

/* The interface digest of module @m after @edit, against @before. */
static bool digest_moves(struct kp_module *m, const unsigned char *before)
{
	unsigned char d[KP_SIM_IFACE_LEN];

	if (kp_sim_iface_digest(m, d) < 0)
		abort();
	return memcmp(d, before, sizeof(d)) != 0;
}

static void digests(struct tap *t)
{
	struct tb_world w;
	struct kp_module *m;
	unsigned char d0[KP_SIM_IFACE_LEN];

	tb_init(&w, "6.12.37");
	m = tb_module(&w, "m");
	tb_export(m, "m_fn", KP_KSYMTAB);
	tb_export_crc(m, 0x1234);
	tb_import(m, "printk");
	tap_is_int(t, kp_sim_iface_digest(m, d0), 0, "digest");
	tap_ok(t, !digest_moves(m, d0), "digest: the same facts, the same digest");
	tb_modinfo(m, "license", "Proprietary");
	m->license = "Proprietary";
	tap_ok(t, !digest_moves(m, d0), "digest: the license is not the interface");
	m->exports[0].crc = 0x1235;
	tap_ok(t, digest_moves(m, d0), "digest: an export's CRC is");
	m->exports[0].crc = 0x1234;
	m->exports[0].gpl_only = true;
	tap_ok(t, digest_moves(m, d0), "digest: an export's class is");
	m->exports[0].gpl_only = false;
	m->exports[0].ns = "NS";
	tap_ok(t, digest_moves(m, d0), "digest: an export's namespace is");
	m->exports[0].ns = NULL;
	m->imports[0].weak = 1;
	tap_ok(t, digest_moves(m, d0), "digest: an import's weak bit is");
	m->imports[0].weak = 0;
	tap_ok(t, !digest_moves(m, d0), "digest: back to the first facts");
	/* "ab" + "c" and "a" + "bc": the lengths keep the fields apart */
	m->exports[0].name = "m_fnNS";
	tap_ok(t, digest_moves(m, d0), "digest: an export's name is");
	tb_free(&w);
}

/*
 * Every module of @w read from its file carries its interface digest (made by the reader),
 * equal to one computed from its fields now, and the facts cache's encoding gives it back
 * (read/module-iface.h, cache/facts-serial.h): a store writes it without hashing. The
 * modules whose digest did not come back the same, or that lack one.
 */
static size_t facts_digests(const struct tb_world *w)
{
	struct kp_facts_buf b = { 0 };
	size_t bad = 0;

	for (size_t i = 0; i < w->g.n; i++) {
		const struct kp_module *m = w->g.nodes[i].mod;
		unsigned char d[KP_SIM_IFACE_LEN];
		struct kp_module *back = calloc(1, sizeof(*back));

		b.len = 0;
		if (!back || !m->iface_digested || kp_sim_iface_digest(m, d) < 0 ||
		    memcmp(d, m->iface_sha256, sizeof(d)) || kp_facts_encode(m, &b) < 0) {
			bad++;
			free(back);
			continue;
		}
		back->path = m->path;
		if (kp_facts_decode(back, b.data, b.len, NULL) < 0 || !back->iface_digested ||
		    memcmp(back->iface_sha256, d, sizeof(d)))
			bad++;
		kp_module_free(back);
	}
	kp_facts_buf_release(&b);
	return bad;
}

/* CPU time of this thread (a shared machine: wall time would be the load) */
static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static struct tb_world *tree_world;
static int tree_depth; /* the deepest level of modules taken (nftw(): 1 is the directory's) */

static int add_ko(const char *path, const struct stat *st, int type, struct FTW *f)
{
	size_t n = strlen(path);

	(void)st;
	if (type == FTW_F && f->level <= tree_depth && (n > 3 && !strcmp(path + n - 3, ".ko")))
		tb_module_file(tree_world, path);
	return 0;
}

static void world_61(struct tb_world *w, const char *dir, const char *symvers, int depth)
{
	tb_init_distro(w, "6.1.192", KP_DISTRO_DEBIAN);
	w->facts.release = "6.1.0-57-amd64";
	w->facts.modversions = true;
	w->facts.module_sig = true;
	tb_base_file(w, symvers);
	tree_world = w;
	tree_depth = depth;
	if (nftw(dir, add_ko, 32, FTW_PHYS) != 0)
		abort();
	run_recorded(w);
}

int main(int argc, char **argv)
{
	struct tap t = { 0 };
	struct tb_world w;
	unsigned char *p;
	char *dir;
	size_t len;

	if (argc == 3) {
		struct kp_sim_stored s;
		struct kp_err err;
		double t0, t1, t2, enc = 0, dec = 0;

		world_61(&w, argv[1], argv[2], 64);
		tap_is_intf(&t, (long)facts_digests(&w), 0,
			    "%s: %zu digests read = computed = decoded", argv[1], w.g.n);
		round_trip(&t, &w, argv[1], &p, &len);
		free(p);
		/* what a store and a reading cost (printed, not asserted) */
		/* the fastest of 5 (printed, not asserted) */
		for (int k = 0; k < 5; k++) {
			t0 = now_ms();
			if (kp_sim_store_encode(&w.g, &w.sim, &p, &len, NULL, &err) < 0)
				abort();
			t1 = now_ms();
			if (kp_sim_store_decode(p, len, &s, &err) < 0)
				abort();
			t2 = now_ms();
			enc = k && enc < t1 - t0 ? enc : t1 - t0;
			dec = k && dec < t2 - t1 ? dec : t2 - t1;
			kp_sim_stored_release(&s);
			free(p);
		}
		printf("# %zu modules, %zu bytes stored; encoded in %.1f ms, decoded in %.1f ms\n",
		       w.g.n, len, enc, dec);
		/* what the reader's digests cost (the fastest of 5, printed, not asserted) */
		for (int k = 0; k < 5; k++) {
			unsigned char d[KP_SIM_IFACE_LEN];

			t0 = now_ms();
			for (size_t i = 0; i < w.g.n; i++)
				if (kp_module_iface_digest(w.g.nodes[i].mod, NULL, d) < 0)
					abort();
			t1 = now_ms();
			enc = k && enc < t1 - t0 ? enc : t1 - t0;
		}
		printf("# %zu interface digests made in %.1f ms (as the reader makes them)\n",
		       w.g.n, enc);
		tb_free(&w);
		return tap_done(&t);
	}
	fields(&t);
	digests(&t);
	built(&t);
	stall_built(&t);
	stall_fixture(&t, "6.1", "6.1.192", "kp_strtab_guard.ko", "BLOCKED");
	stall_fixture(&t, "6.12", "6.12.57", "kp_strtab_page.ko", "BLOCKED");
	stall_fixture(&t, "5.10", "5.10.262", "kp_strtab_page.ko", "NOT-RUN");
	/* tap_srcpath() gives one buffer: the directory copied first */
	dir = strdup(tap_srcpath("fixtures/ko/6.1"));
	if (!dir)
		abort();
	world_61(&w, dir, tap_srcpath("fixtures/ko/6.1/Module.symvers.gz"), 1);
	free(dir);
	tap_is_intf(&t, (long)w.g.n, 47, "6.1 fixtures: %zu modules", w.g.n);
	tap_is_intf(
		&t, (long)facts_digests(&w), 0,
		"6.1 fixtures: the digests read = computed = through the facts cache's encoding");
	round_trip(&t, &w, "6.1 fixtures", &p, &len);
	damage(&t, p, len, 7, "6.1 fixtures");
	free(p);
	tb_free(&w);
	return tap_done(&t);
}
