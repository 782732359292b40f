// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * store-check.c: what test-store and test-store-stall ask of a stored simulation (see
 * store-check.h): every field back equal after a round trip, and a damaged store refused or
 * decoded with every index in bounds.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "builder.h"
#include "sim/sim-store.h"
#include "sim/sim-reads.h"
#include "sim/verdict-same.h"
#include "store-check.h"

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
	       a->stall_set.by == b->stall_set.by && a->nverdicts == b->nverdicts &&
	       a->nlate == b->nlate && a->nmessages_load == b->nmessages_load &&
	       a->nfindings_load == b->nfindings_load;
}

void run_recorded(struct tb_world *w)
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

/*
 * The verdicts read by record @a in @pa and by @b in @pb that differ (a record's ranges, not
 * their places: each record's are stored with it, the pool is gathered again).
 */
static size_t pool_diff(const struct kp_sim_reads *a, const uint32_t *pa,
			const struct kp_sim_reads *b, const uint32_t *pb)
{
	size_t d = 0;

	if (a->nverdicts != b->nverdicts || a->nlate != b->nlate)
		return 1;
	for (uint32_t j = 0; j < a->nverdicts; j++)
		d += pa[a->verdicts + j] != pb[b->verdicts + j];
	for (uint32_t j = 0; j < a->nlate; j++)
		d += pa[a->late + j] != pb[b->late + j];
	return d;
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
	for (size_t k = 0; k < w->g.n; k++) {
		size_t i = w->g.order[k];
		const struct kp_node *nd = &w->g.nodes[i];

		d->order += s->order[k] != i;
		d->verdicts += !same_verdict(&o->v[i], &s->sim.v[i]);
		d->reads += !same_reads(&o->rec[i], &s->sim.rec[i]);
		d->pool += pool_diff(&o->rec[i], o->reads, &s->sim.rec[i], s->sim.reads);
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

void round_trip(struct tap *t, struct tb_world *w, const char *what, unsigned char **out,
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

void copied_again(struct tap *t, const unsigned char *p, size_t len, const char *what)
{
	struct kp_sim_stored s;
	struct kp_sim_store_writer sw;
	struct kp_err err = { 0 };
	unsigned char *q = NULL;
	size_t qlen = 0, npolicy = 0;

	if (kp_sim_store_decode(p, len, &s, &err) < 0) {
		tap_ok(t, false, "%s: decoded to be copied: %s", what, err.msg);
		return;
	}
	kp_sim_store_begin(&sw, s.n, s.sim.global_taint, 0);
	for (size_t k = 0; k < s.n; k++) {
		size_t i = s.order[k];

		kp_sim_store_put_state(&sw, i, &s.sim.v[i], &s.sim.rec[i]);
		kp_sim_store_copy_body(&sw, &s.mods[i]);
		kp_sim_store_put_policy(&sw, &s.sim.v[i]);
		for (size_t j = 0; j < s.sim.v[i].nfindings; j++)
			npolicy += kp_finding_is_policy(&s.sim.v[i].findings[j]);
	}
	tap_is_intf(t, kp_sim_store_finish(&sw, &q, &qlen, &err), 0,
		    "%s: written again from the copied bodies (%zu policy findings)", what,
		    npolicy);
	tap_ok(t, q && qlen == len && !memcmp(q, p, len),
	       "%s: the copy is the store, byte for byte (%zu bytes, %zu)", what, qlen, len);
	free(q);
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

void damage(struct tap *t, const unsigned char *p, size_t len, size_t step, const char *what)
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
