// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * symbol_get()/symbol_request()/dvb_attach() targets (include/linux/module.h):
 * each compiles to a call of __symbol_get("name") with the name a string
 * literal in a SHF_STRINGS section; no undefined reference to the target remains.
 *
 * Call sites: relocations against the undefined symbol __symbol_get in an
 * executable section, on a call (or a tail-call jump) instruction; on MIPS
 * (long calls) the calls through a register holding its address.
 *
 * Method "exact" (the architectures of the backend table below: x86_64, i386,
 * arm64, 32-bit ARM, ppc64el, riscv64, s390x, mips64el, loong64): the instructions of
 * every executable section are decoded (symbol-get-<arch>.c) and, from the call,
 * the control flow is walked backwards (fall-through, branches inside and
 * across sections, through register copies, into the callers of a local
 * function whose parameter is passed on) to every instruction that sets the
 * first-argument register. An address given by a relocation that lands on a
 * valid identifier in a read-only section is a target.
 *
 * Method "dynamic": the walk ends in a stack buffer, a call's return value, a
 * load or arithmetic, or a writable variable: the name is computed at run
 * time. The printf-like format referenced by the function, if any, is
 * recorded (kp_symget.format; e.g. "cfi_cmdset_%4.4X").
 *
 * Method "heuristic": other architectures (kp_module.symget_backend is NULL),
 * and sites the walk cannot follow (undecodable code, a block reached only
 * through a jump table, a parameter of a function with no visible caller): one
 * entry per site, the identifier-like string referenced last before the call in
 * the enclosing function, if any.
 *
 * When each site runs (kp_symget.when, symbol-get-reach.c): at load when its function is
 * reached from init_module by direct calls, else when called through a pointer.
 *
 * Every byte read from the file is bounds-checked; the walk is bounded per call site
 * (SG_MAX_STEPS) and the whole analysis per module (SG_MODULE_BUDGET: walk steps and the
 * scans' symbols and relocations). The sites left when the module's budget is spent are
 * counted, not analysed (kp_module.nsymget_unanalysed): a crafted module with tens of
 * thousands of sites costs a bounded time, not minutes. Calibration: over Debian's 6.12
 * amd64, armhf, ppc64el and riscv64 trees and 5.10, 6.1, 7.2 amd64, the most any module spends
 * is 43k (i915 on 7.2); 4M is ~100 times that. (riscv64's cx23885 spent over 4M, 63 of its 159
 * sites left unanalysed, while each site's function was found by scanning the whole .symtab,
 * thousands of .L labels there: symbol-get-functions.c's index made it 4.3k.)
 * fixtures/bad/symget-bomb.ko.xz (4096 sites, each walk covering the sites before it) spends it
 * in ~0.3 s instead of 1.6 s; a 20,000-site variant (78 KB .ko.xz) in ~0.3 s instead of 42 s.
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbol-get-trace.h"

/*
 * The backends: one file each (symbol-get-<arch>.c), matched on e_machine,
 * class and byte order. A module of any other architecture gets the heuristic
 * (one entry per call site) and says so (kp_module.symget_exact).
 */
static const struct sg_arch *const backends[] = {
	&kp_sg_x86_64,	&kp_sg_i386,  &kp_sg_arm64,    &kp_sg_arm,	   &kp_sg_ppc64le,
	&kp_sg_riscv64, &kp_sg_s390x, &kp_sg_mips64el, &kp_sg_loongarch64,
};

const char *kp_symget_when_name(enum kp_symget_when w)
{
	switch (w) {
	case KP_SYMGET_AT_LOAD:
		return "load";
	case KP_SYMGET_WHEN_CALLED:
		return "called";
	case KP_SYMGET_WHEN_UNKNOWN:
		break;
	}
	return "unknown";
}

char *kp_symget_when_text(enum kp_symget_when w, const char *path, const char *function)
{
	char *s = NULL, *p;
	int n;

	switch (w) {
	case KP_SYMGET_AT_LOAD:
		if (!path)
			return strdup("at load (in .init.text)");
		/* "a b c" -> "a -> b -> c" */
		s = malloc(sizeof("at load ()") + 4 * strlen(path));
		if (!s)
			return NULL;
		p = s + sprintf(s, "at load (");
		for (; *path; path++)
			p = *path == ' ' ? stpcpy(p, " -> ") : (*p = *path, p + 1);
		strcpy(p, ")");
		return s;
	case KP_SYMGET_WHEN_CALLED:
		n = function ? asprintf(&s,
					"when called (from %s, not reached from init by "
					"direct calls)",
					function)
			     : asprintf(&s, "when called (not reached from init by direct calls)");
		return n < 0 ? NULL : s;
	case KP_SYMGET_WHEN_UNKNOWN:
		break;
	}
	return strdup("when it runs (not determined: no call graph of its code)");
}

static const struct sg_arch *arch_for(const struct kp_elf *e)
{
	for (size_t i = 0; i < KP_ARRAY_SIZE(backends); i++) {
		const struct sg_arch *a = backends[i];

		if (a->machine == e->machine && a->is64 == e->is64 &&
		    a->big_endian == e->big_endian)
			return a;
	}
	return NULL;
}

/*
 * Whether function @fn of section @sec asks for module "symbol:@name" (a
 * symbol_request()): 1 yes, 0 no, -1 out of memory. Its names are collected once
 * for all the sites in the function.
 */
static int is_request(struct sg_ctx *c, uint32_t sec, const struct fn_range *fn, const char *name,
		      size_t len)
{
	if (!c->req_valid || c->req_sec != sec || c->req_start != fn->start ||
	    c->req_end != fn->end) {
		c->req.n = 0;
		c->req.oom = false;
		sg_function_string(c->e, c->arch, sec, fn, sg_collect_request, &c->req);
		c->req_valid = !c->req.oom;
		if (c->req.oom)
			return -1;
		c->req_sec = sec;
		c->req_start = fn->start;
		c->req_end = fn->end;
	}
	for (size_t i = 0; i < c->req.n; i++)
		if (c->req.v[i].len == len && !memcmp(c->req.v[i].s, name, len))
			return 1;
	return 0;
}

/* The relocations of @sec in [@from, @to): what a scan over them looks at, for the budget. */
static uint64_t relocs_between(const struct kp_elf *e, size_t sec, uint64_t from, uint64_t to)
{
	return 1 + (sg_reloc_lower(e, sec, to) - sg_reloc_lower(e, sec, from));
}

static bool exhausted(const struct sg_ctx *c)
{
	return c->spent >= SG_MODULE_BUDGET || c->m->nsymget >= SG_MAX_ENTRIES;
}

static int report_site(struct sg_ctx *c, uint32_t sec, uint64_t site, const struct sg_result *res,
		       struct kp_err *err)
{
	struct kp_module *m = c->m;
	struct kp_elf *e = c->e;
	const char *secname = e->sections[sec].name;
	uint64_t work = 0;
	struct fn_range fn = sg_fns_enclosing(&c->fns, e, sec, site, &work);
	unsigned dyn = res->flags & (R_STACK | R_CALLRET | R_OTHER | R_WRITABLE);
	bool exact = false;

	c->spent += work + res->nt; /* the function looked up, the targets */
	for (size_t i = 0; i < res->nt; i++) {
		size_t len;
		const char *name = kp_elf_string_at(e, res->t[i].sec, res->t[i].off, &len);
		int request;

		if (!name || !kp_is_identifier(name, len)) {
			dyn |= R_OTHER;
			continue;
		}
		if (m->nsymget >= SG_MAX_ENTRIES) {
			/* the site's other targets are not recorded: the site is not analysed */
			m->nsymget_unanalysed++;
			return 0;
		}
		if (!c->req_valid || c->req_sec != sec || c->req_start != fn.start ||
		    c->req_end != fn.end)
			c->spent += relocs_between(e, sec, fn.start, fn.end);
		request = is_request(c, sec, &fn, name, len);
		if (request < 0)
			return kp_err_set(err, "out of memory");
		if (sg_add_entry(m, &c->symget_cap, name, len, NULL, secname, site, fn.name,
				 KP_SYMGET_EXACT, request, err) < 0)
			return -1;
		exact = true;
	}
	if (dyn) {
		const char *fmt;

		c->spent += relocs_between(e, sec, fn.start, fn.end);
		fmt = sg_function_string(e, c->arch, sec, &fn, sg_is_name_format, NULL);

		return sg_add_entry(m, &c->symget_cap, NULL, 0, fmt, secname, site, fn.name,
				    KP_SYMGET_DYNAMIC, false, err);
	}
	if (!exact) {
		c->spent += relocs_between(e, sec, fn.start, site);
		return sg_scan_heuristic(m, e, c->arch, sec, site, &fn, &c->symget_cap, err);
	}
	return 0;
}

static void ctx_free(struct sg_ctx *c)
{
	if (c->secs) {
		for (size_t i = 0; i < c->e->nsections; i++)
			free(c->secs[i].insns);
	}
	free(c->secs);
	sg_fns_release(&c->fns);
	free(c->edges);
	free(c->calls);
	free(c->symcls);
	free(c->req.v);
	free(c->work);
	free(c->seen);
	free(c->used);
}

/*
 * Decodes the executable sections (up to SG_MAX_CODE bytes, in section order) and
 * sorts their branches and calls by target.
 */
static int prepare(struct sg_ctx *c, struct kp_err *err)
{
	struct kp_elf *e = c->e;
	uint64_t pos = 0;

	c->secs = calloc(e->nsections ? e->nsections : 1, sizeof(*c->secs));
	c->symcls = calloc(e->nsyms ? e->nsyms : 1, sizeof(*c->symcls));
	c->seencap = SG_SEEN_MIN;
	c->seen = calloc(c->seencap, sizeof(*c->seen));
	c->used = calloc(c->seencap / 2, sizeof(*c->used));
	if (!c->secs || !c->symcls || !c->seen || !c->used)
		return kp_err_set(err, "out of memory");
	/* which sections are decoded (known before decoding: edges may go forward) */
	for (size_t sec = 1; sec < e->nsections; sec++) {
		const struct kp_reloc *rel;
		size_t nrel;

		if (!(e->sections[sec].flags & SHF_EXECINSTR) || !e->sections[sec].data)
			continue;
		if (kp_elf_relocs(e, sec, &rel, &nrel, err) < 0)
			return -1;
		if (e->sections[sec].size > SG_MAX_CODE - pos)
			continue; /* not decoded: its call sites fall back to the heuristic */
		c->secs[sec].decoded = true;
		c->secs[sec].base = (uint32_t)pos;
		pos += e->sections[sec].size;
	}
	for (size_t sec = 1; sec < e->nsections; sec++)
		if (c->secs[sec].decoded && sg_decode_section(c, sec) < 0)
			return kp_err_set(err, "out of memory");
	if (sg_sort_edges(&c->edges, &c->capedges, c->nedges, (uint32_t)pos) < 0 ||
	    sg_sort_edges(&c->calls, &c->capcalls, c->ncalls, (uint32_t)pos) < 0)
		return kp_err_set(err, "out of memory");
	free(c->symcls);
	c->symcls = NULL;
	return 0;
}

/* A call or tail-call instruction whose target field is relocation @r. */
static size_t call_insn(const struct sg_ctx *c, size_t sec, const struct kp_reloc *r)
{
	const struct sg_sec *s = &c->secs[sec];
	size_t i = sg_insn_at(s, r->offset);

	if (i == SIZE_MAX)
		return SIZE_MAX;
	if (s->insns[i].flow != SG_CALL && s->insns[i].flow != SG_JUMP)
		return SIZE_MAX;
	if (!s->insns[i].reloc_target || s->insns[i].off + s->insns[i].reloc_rel != r->offset)
		return SIZE_MAX;
	return i;
}

/* Traces call @idx of @sec (a call of __symbol_get) and reports its targets. */
static int trace_site(struct sg_ctx *c, uint32_t sec, size_t idx, struct kp_err *err)
{
	struct sg_result res = { 0 };
	int r = sg_trace(c, sec, idx, c->arch->arg_reg, c->arch->delay_slots, &res);

	c->spent += c->steps + c->examined;
	if (r == 0)
		r = report_site(c, sec, c->secs[sec].insns[idx].off, &res, err);
	else
		kp_err_set(err, "out of memory");
	free(res.t);
	return r;
}

/*
 * Delay-slot architectures (MIPS long calls): the calls through a register that
 * holds the address of __symbol_get. Returns the number of sites, -1 on error.
 */
static long register_call_sites(struct sg_ctx *c, struct kp_err *err)
{
	struct kp_elf *e = c->e;
	long n = 0;

	for (size_t sec = 1; sec < e->nsections; sec++) {
		const struct kp_section *ks = &e->sections[sec];
		struct sg_code code = { ks->data,	 ks->size, e->big_endian, e->is64,
					SG_MODE_DEFAULT, NULL,	   e->flags };

		if (!c->secs[sec].decoded)
			continue;
		for (size_t i = 0; i < c->secs[sec].n; i++) {
			const struct sg_rec *x = &c->secs[sec].insns[i];
			struct sg_result res = { 0 };
			struct sg_insn in;
			int r;

			if (x->flow != SG_CALL || x->reloc_target ||
			    !c->arch->decode(&code, x->off, &in) || in.jump_reg <= 0)
				continue;
			if (exhausted(c)) {
				/* not known to call __symbol_get, nor known not to */
				c->m->nsymget_unanalysed++;
				continue;
			}
			r = sg_trace(c, (uint32_t)sec, i, in.jump_reg, false, &res);
			c->spent += c->steps + c->examined;
			free(res.t);
			if (r < 0)
				return kp_err_set(err, "out of memory");
			if (!(res.flags & R_GETADDR))
				continue;
			if (trace_site(c, (uint32_t)sec, i, err) < 0)
				return -1;
			n++;
		}
	}
	return n;
}

int kp_read_symbol_get(struct kp_module *m, struct kp_elf *e, struct kp_err *err)
{
	struct sg_ctx c;
	uint32_t get_idx = 0, put_idx = 0;
	bool reg_sites = false; /* calls through a register found: its relocations are not sites */
	int ret = -1;

	memset(&c, 0, sizeof(c));
	c.m = m;
	c.e = e;
	c.arch = arch_for(e);
	for (size_t i = 0; i < m->nimports; i++) {
		if (!strcmp(m->imports[i].name, "__symbol_get"))
			get_idx = m->imports[i].symidx;
		else if (!strcmp(m->imports[i].name, "__symbol_put"))
			put_idx = m->imports[i].symidx;
	}
	m->symget_backend = get_idx && c.arch ? c.arch->name : NULL;
	c.get_sym = get_idx;
	if (get_idx && sg_fns_build(&c.fns, e) < 0) {
		kp_err_set(err, "out of memory");
		goto out;
	}
	if (c.arch && get_idx && prepare(&c, err) < 0)
		goto out;
	if (c.arch && get_idx && c.arch->delay_slots) {
		long n = register_call_sites(&c, err);

		if (n < 0)
			goto out;
		reg_sites = n > 0;
	}
	for (size_t sec = 1; sec < e->nsections; sec++) {
		const struct kp_reloc *rel;
		size_t nrel;

		if (!(e->sections[sec].flags & SHF_EXECINSTR) || !e->sections[sec].data)
			continue;
		if (kp_elf_relocs(e, sec, &rel, &nrel, err) < 0)
			goto out;
		for (size_t i = 0; i < nrel; i++) {
			size_t idx;

			if (put_idx && rel[i].sym == put_idx)
				m->nsymput++;
			if (!get_idx || rel[i].sym != get_idx)
				continue;
			idx = c.arch ? call_insn(&c, sec, &rel[i]) : SIZE_MAX;
			if (idx == SIZE_MAX && reg_sites)
				continue; /* the address loaded for a call through a register */
			if (exhausted(&c)) {
				m->nsymget_unanalysed++;
				continue;
			}
			if (idx == SIZE_MAX) {
				/* its function looked up, its relocations before the site read */
				uint64_t work = 0;
				struct fn_range fn =
					sg_fns_enclosing(&c.fns, e, sec, rel[i].offset, &work);

				c.spent += work + relocs_between(e, sec, fn.start, rel[i].offset);
				if (sg_scan_heuristic(m, e, c.arch, sec, rel[i].offset, &fn,
						      &c.symget_cap, err) < 0)
					goto out;
				continue;
			}
			if (trace_site(&c, (uint32_t)sec, idx, err) < 0)
				goto out;
		}
	}
	if (c.arch && get_idx && sg_reach(&c, 0, err) < 0)
		goto out;
	ret = 0;
out:
	ctx_free(&c);
	return ret;
}
