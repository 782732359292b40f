// SPDX-License-Identifier: LGPL-2.1-or-later
/* What each load read of the state earlier loads left (sim-reads.h): recording and checking. */
#include <stdlib.h>

#include "sim/rules/rules.h"

bool kp_once_done(const struct kp_sim_ctx *c, enum kp_once f)
{
	if (c->rd && !c->late)
		c->rd->once_read |= 1u << f;
	return c->once & (1u << f);
}

void kp_once_mark(struct kp_sim_ctx *c, enum kp_once f)
{
	if (c->rd && !c->late)
		c->rd->once_set |= 1u << f;
	c->once |= 1u << f;
}

/*
 * During a load, a verdict not attempted yet (later in load order) and the loading module's
 * own read as "not live" whatever happens later: not recorded, the load order is the key's.
 */
void kp_read_verdict(const struct kp_sim_ctx *c, size_t node)
{
	struct kp_simulation *sim = c->sim;
	struct kp_sim_reads *rd = c->rd;
	uint32_t *n;

	if (!rd || sim->reads_incomplete)
		return;
	if (!c->late && (!sim->v[node].attempted || &sim->rec[node] == rd))
		return;
	n = c->late ? &rd->nlate : &rd->nverdicts;
	/* find_symbol() reads the same exporters again for each import of the same name */
	if (*n && sim->reads[sim->nreads - 1] == node)
		return;
	if (node > UINT32_MAX || sim->nreads >= UINT32_MAX ||
	    kp_grow(&sim->reads, &sim->creads, sim->nreads + 1, sizeof(*sim->reads)) < 0) {
		sim->reads_incomplete = true;
		return;
	}
	if (!*n)
		*(c->late ? &rd->late : &rd->verdicts) = (uint32_t)sim->nreads;
	sim->reads[sim->nreads++] = (uint32_t)node;
	(*n)++;
}

/*
 * What a later load can read of verdict @a and @b: the same (left_unformed: the UNFORMED
 * module a load of its name waits for, duplicate.c).
 */
static bool same_verdict(const struct kp_verdict *a, const struct kp_verdict *b)
{
	return a->attempted == b->attempted && a->loads == b->loads && a->taints == b->taints &&
	       a->left_unformed == b->left_unformed;
}

/* The @count verdicts recorded from @first in @was->reads: each the same in @now_v. */
static bool read_verdicts_same(const struct kp_simulation *was, uint32_t first, uint32_t count,
			       const struct kp_verdict *now_v)
{
	for (uint32_t k = 0; k < count; k++) {
		size_t n = was->reads[first + k];

		if (!same_verdict(&was->v[n], &now_v[n]))
			return false;
	}
	return true;
}

bool kp_sim_reads_hold(const struct kp_simulation *was, size_t i, const struct kp_sim_state *now,
		       const struct kp_verdict *now_v)
{
	const struct kp_sim_reads *r = was->rec ? &was->rec[i] : NULL;

	if (!r || was->reads_incomplete || !was->v[i].attempted)
		return false;
	if (((r->taint_before ^ now->taint) & r->taint_tested) ||
	    ((r->once_before ^ now->once) & r->once_read))
		return false;
	if (r->name_read &&
	    (r->name_live != now->name_live || r->name_unformed != now->name_unformed))
		return false;
	/* each question asked (is the loader stalled so?) has the same answer, by the same load */
	if ((r->stall_asked & ((1u << r->stall_before.kind) ^ (1u << now->stall.kind))) ||
	    ((r->stall_asked & (1u << now->stall.kind)) && now->stall.kind != KP_STALL_NONE &&
	     r->stall_before.by != now->stall.by))
		return false;
	return read_verdicts_same(was, r->verdicts, r->nverdicts, now_v);
}

bool kp_sim_late_reads_hold(const struct kp_simulation *was, size_t i, unsigned long final_taint,
			    const struct kp_verdict *now_v)
{
	const struct kp_sim_reads *r = was->rec ? &was->rec[i] : NULL;

	if (!r || was->reads_incomplete || ((was->global_taint ^ final_taint) & r->taint_late))
		return false;
	return read_verdicts_same(was, r->late, r->nlate, now_v);
}

void kp_sim_reads_apply(const struct kp_sim_reads *r, struct kp_sim_state *s)
{
	s->taint |= r->taint_set;
	s->once |= r->once_set;
	if (r->stall_set.kind != KP_STALL_NONE)
		s->stall = r->stall_set;
}

bool kp_read_stall(const struct kp_sim_ctx *c, enum kp_stall_kind kind, size_t *by)
{
	if (c->rd && !c->late) {
		c->rd->stall_asked |= 1u << kind;
		c->rd->stall_before = c->stall;
	}
	*by = c->stall.by;
	return c->stall.kind == kind;
}

void kp_mark_stall(struct kp_sim_ctx *c, enum kp_stall_kind kind, size_t by)
{
	c->stall.kind = kind;
	c->stall.by = by;
	if (c->rd && !c->late)
		c->rd->stall_set = c->stall;
}
