// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The symbol_get() tracer's backward walk: from a call of __symbol_get back through
 * fall-through, branches, copies and callers to what sets the first-argument register,
 * over a bounded set of visited states.
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "symbol-get-trace.h"

/* Slot of @key in a state set of @cap (a power of two) slots: linear probing from its hash. */
static size_t seen_slot(const uint64_t *seen, size_t cap, uint64_t key)
{
	size_t h = (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 20) & (cap - 1);

	while (seen[h] && seen[h] != key)
		h = (h + 1) & (cap - 1);
	return h;
}

/* Doubles the state set (kept at most half full), moving the states already seen. */
static int seen_grow(struct sg_ctx *c)
{
	size_t cap = c->seencap * 2;
	uint64_t *seen = calloc(cap, sizeof(*seen));
	size_t *used = malloc(cap / 2 * sizeof(*used));

	if (!seen || !used) {
		free(seen);
		free(used);
		return -1;
	}
	for (size_t i = 0; i < c->nseen; i++) {
		uint64_t key = c->seen[c->used[i]];
		size_t h = seen_slot(seen, cap, key);

		seen[h] = key;
		used[i] = h;
	}
	free(c->seen);
	free(c->used);
	c->seen = seen;
	c->used = used;
	c->seencap = cap;
	return 0;
}

static bool seen_insert(struct sg_ctx *c, const struct sg_state *st)
{
	uint64_t key = ((uint64_t)st->sec << 40) ^ ((uint64_t)(st->idx + 1) << 6) ^
		       (uint64_t)(st->reg & 63);
	size_t h;

	if (key == 0)
		key = 1;
	h = seen_slot(c->seen, c->seencap, key);
	if (c->seen[h])
		return false;
	c->seen[h] = key;
	c->used[c->nseen] = h;
	return true;
}

static int push_state(struct sg_ctx *c, uint32_t sec, size_t idx, int reg)
{
	struct sg_state st = { sec, reg, idx };

	if (c->nseen >= SG_MAX_STATES) {
		c->budget = true;
		return 0;
	}
	if (c->nseen >= c->seencap / 2 && seen_grow(c) < 0)
		return -1;
	if (!seen_insert(c, &st))
		return 0;
	c->nseen++;
	if (kp_grow(&c->work, &c->capwork, c->nwork + 1, sizeof(st)) < 0)
		return -1;
	c->work[c->nwork++] = st;
	return 0;
}

static int add_result_target(struct sg_result *res, uint32_t sec, uint64_t off)
{
	for (size_t i = 0; i < res->nt; i++)
		if (res->t[i].sec == sec && res->t[i].off == off)
			return 0;
	if (kp_grow(&res->t, &res->capt, res->nt + 1, sizeof(*res->t)) < 0)
		return -1;
	res->t[res->nt].sec = sec;
	res->t[res->nt].off = off;
	res->nt++;
	return 0;
}

static enum sg_rkind rkind(const struct sg_arch *arch, uint32_t type)
{
	return arch->reloc_kind ? arch->reloc_kind(type) : SG_RK_ADDR;
}

/* The first relocation at @off of @sec that is not a marker (SG_RK_IGNORE). */
static const struct kp_reloc *addr_reloc_at(const struct sg_ctx *c, size_t sec, uint64_t off)
{
	const struct kp_section *s = &c->e->sections[sec];

	for (size_t i = sg_reloc_lower(c->e, sec, off);
	     i < s->nrelocs && s->relocs[i].offset == off; i++)
		if (rkind(c->arch, s->relocs[i].type) != SG_RK_IGNORE)
			return &s->relocs[i];
	return NULL;
}

/*
 * The address named by the relocation @r of an address-defining field of @sec
 * (+ @adj): 1 and *@tsec, *@toff; 0 when it is not an address in a section.
 * SG_RK_PCREL_LO: S + A is the instruction with the high half (RISC-V auipc),
 * whose own relocation names the address.
 */
static int field_address(const struct sg_ctx *c, size_t sec, const struct kp_reloc *r, int64_t adj,
			 uint32_t *tsec, uint64_t *toff)
{
	const struct kp_sym *sym;
	enum sg_rkind k = rkind(c->arch, r->type);

	if (k == SG_RK_INDIRECT) {
		const struct kp_reloc *rel;
		struct kp_err err;
		size_t n;

		/* a constant slot (compiler-made, in .toc): where its own relocation points */
		if (sg_reloc_dest(c->e, c->arch, sec, r, 0, tsec, toff, &sym) != 1 ||
		    kp_elf_relocs(c->e, *tsec, &rel, &n, &err) < 0)
			return 0;
		sec = *tsec;
		r = addr_reloc_at(c, sec, *toff);
		if (!r || rkind(c->arch, r->type) != SG_RK_ADDR)
			return 0;
		return sg_reloc_dest(c->e, c->arch, sec, r, 0, tsec, toff, &sym) == 1;
	}
	if (k == SG_RK_PCREL_LO) {
		if (sg_reloc_dest(c->e, c->arch, sec, r, 0, tsec, toff, &sym) != 1 || *tsec != sec)
			return 0;
		r = addr_reloc_at(c, sec, *toff);
		if (!r || rkind(c->arch, r->type) != SG_RK_ADDR)
			return 0;
		k = SG_RK_ADDR;
	}
	if (k != SG_RK_ADDR)
		return 0;
	return sg_reloc_dest(c->e, c->arch, sec, r, adj, tsec, toff, &sym) == 1;
}

/* The value of @reg produced by instruction @p (at @psec): a result, or a state to follow. */
static int examine(struct sg_ctx *c, uint32_t psec, size_t pidx, int reg, struct sg_result *res,
		   bool self)
{
	struct kp_elf *e = c->e;
	const struct sg_rec *p = &c->secs[psec].insns[pidx];

	c->examined++; /* a state's predecessors can be many (a branch target): each one counts */
	/* self: the delay slot of the call being traced, before the call */
	if (!self && p->flow == SG_CALL && (c->arch->call_clobbers & SG_REG(reg))) {
		res->flags |= reg == c->arch->ret_reg ? R_CALLRET : R_OTHER;
		return 0;
	}
	if (p->def_reg == reg) {
		/* a conditional definition: the older value, if it is not executed */
		if (p->cond && push_state(c, psec, pidx, reg) < 0)
			return -1;
		switch (p->def) {
		case SG_DEF_ADDR_OR_COPY:
		case SG_DEF_ADDR: {
			const struct kp_reloc *r =
				addr_reloc_at(c, psec, (uint64_t)((int64_t)p->off + p->reloc_rel));
			uint32_t tsec;
			uint64_t toff;

			if (r && c->get_sym && r->sym == c->get_sym &&
			    rkind(c->arch, r->type) == SG_RK_ADDR) {
				res->flags |= R_GETADDR;
				return 0;
			}
			if (!r && p->def == SG_DEF_ADDR_OR_COPY) {
				if (p->src_reg < 0 || p->src_reg >= 64) {
					res->flags |= R_OTHER;
					return 0;
				}
				return push_state(c, psec, pidx, p->src_reg);
			}
			if (!r || field_address(c, psec, r, p->reloc_adj, &tsec, &toff) != 1) {
				res->flags |= R_OTHER;
				return 0;
			}
			if (e->sections[tsec].flags & SHF_WRITE) {
				res->flags |= R_WRITABLE;
				return 0;
			}
			c->examined += res->nt; /* the targets compared with */
			return add_result_target(res, tsec, toff);
		}
		case SG_DEF_COPY:
			if (p->src_reg < 0 || p->src_reg >= 64) {
				res->flags |= R_OTHER;
				return 0;
			}
			return push_state(c, psec, pidx, p->src_reg);
		case SG_DEF_STACK:
			res->flags |= R_STACK;
			return 0;
		default:
			res->flags |= R_OTHER;
			return 0;
		}
	}
	if (p->clobbers & SG_REG(reg)) {
		res->flags |= R_OTHER;
		return 0;
	}
	return push_state(c, psec, pidx, reg);
}

static int walk_state(struct sg_ctx *c, const struct sg_state *st, struct sg_result *res)
{
	const struct sg_sec *s = &c->secs[st->sec];
	const struct sg_rec *x = &s->insns[st->idx];
	uint32_t key = s->base + x->off;
	bool fstart = x->fstart;
	bool any = false;
	size_t i;

	if (st->idx > 0 && !fstart) {
		const struct sg_rec *p = &s->insns[st->idx - 1];

		if (p->off + p->len == x->off && p->flow != SG_JUMP && p->flow != SG_STOP) {
			any = true;
			if (examine(c, st->sec, st->idx - 1, st->reg, res, false) < 0)
				return -1;
		}
	}
	for (i = sg_edge_lower(c->edges, c->nedges, key); i < c->nedges && c->edges[i].key == key;
	     i++) {
		any = true;
		if (examine(c, c->edges[i].sec, c->edges[i].idx, st->reg, res, false) < 0)
			return -1;
	}
	if (fstart) {
		/* The entry of a function: an argument register comes from its callers. */
		bool callers = false;

		if (st->reg == c->arch->arg_reg) {
			for (i = sg_edge_lower(c->calls, c->ncalls, key);
			     i < c->ncalls && c->calls[i].key == key; i++) {
				callers = true;
				if (push_state(c, c->calls[i].sec, c->calls[i].idx, st->reg) < 0)
					return -1;
			}
		}
		if (!callers)
			res->flags |= R_PARAM;
		return 0;
	}
	if (!any)
		res->flags |= R_UNKNOWN;
	return 0;
}

/*
 * The values of @reg at call @idx of @sec: from its predecessors, or (@self,
 * delay slots) from the call record itself first.
 */
int sg_trace(struct sg_ctx *c, uint32_t sec, size_t idx, int reg, bool self, struct sg_result *res)
{
	for (size_t i = 0; i < c->nseen; i++)
		c->seen[c->used[i]] = 0;
	c->nwork = 0;
	c->steps = 0;
	c->examined = 0;
	c->nseen = 0;
	c->budget = false;
	if ((self ? examine(c, sec, idx, reg, res, true) : push_state(c, sec, idx, reg)) < 0)
		return -1;
	while (c->nwork) {
		struct sg_state st = c->work[--c->nwork];

		/* the site's own bound, or what is left of the module's */
		if (++c->steps > SG_MAX_STEPS ||
		    c->spent + c->steps + c->examined >= SG_MODULE_BUDGET) {
			c->budget = true;
			break;
		}
		if (walk_state(c, &st, res) < 0)
			return -1;
	}
	if (c->budget)
		res->flags |= R_BUDGET;
	return 0;
}
