// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * symbol_get()/symbol_request()/dvb_attach() targets (include/linux/module.h):
 * each compiles to a call of __symbol_get("name") with the name a string
 * literal in a SHF_STRINGS section; no undefined reference to the target remains.
 *
 * Call sites: relocations against the undefined symbol __symbol_get in an
 * executable section, on a call (or a tail-call jump) instruction.
 *
 * Method "exact" (x86_64, i386, arm64, s390x): the instructions of every
 * executable section are decoded (symbol-get-<arch>.c) and, from the call,
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
 * Method "heuristic": other architectures, and sites the walk cannot follow
 * (undecodable code, a block reached only through a jump table, a parameter
 * of a function with no visible caller): the identifier-like strings
 * referenced by relocations inside the enclosing function are the candidates.
 *
 * Every byte read from the file is bounds-checked; the walk is bounded.
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "module-internal.h"
#include "symbol-get-internal.h"

#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif

#define SG_MAX_STEPS 20000 /* states visited per call site */
/* Executable bytes decoded per module (the largest in-tree .text is a few MiB). */
#define SG_MAX_CODE ((uint64_t)64 << 20)

struct fn_range {
	uint64_t start;
	uint64_t end;
	const char *name;
};

struct sg_sec {
	bool decoded;
	struct sg_insn *insns;
	size_t n;
	uint64_t *fstarts; /* sorted STT_FUNC starts in this section */
	size_t nfstarts;
};

struct sg_edge {
	uint32_t tsec;
	uint32_t ssec;
	uint64_t toff;
	size_t sidx;
};

struct sg_state {
	uint32_t sec;
	int32_t reg;
	size_t idx;
};

enum {
	R_STACK = 1 << 0,
	R_CALLRET = 1 << 1,
	R_OTHER = 1 << 2,
	R_WRITABLE = 1 << 3,
	R_UNKNOWN = 1 << 4, /* a path the walk could not follow */
	R_PARAM = 1 << 5,   /* reached the entry of a function with no known caller */
	R_BUDGET = 1 << 6,
};

struct sg_target {
	uint32_t sec;
	uint64_t off;
};

struct sg_result {
	unsigned flags;
	struct sg_target *t;
	size_t nt, capt;
};

struct sg_ctx {
	struct kp_module *m;
	struct kp_elf *e;
	const struct sg_arch *arch;
	struct sg_sec *secs;
	struct sg_edge *edges; /* branches, sorted by target */
	size_t nedges, capedges;
	struct sg_edge *calls; /* calls, sorted by target */
	size_t ncalls, capcalls;
	bool oom;
	/* walk scratch */
	struct sg_state *work;
	size_t nwork, capwork;
	uint64_t *seen; /* open-addressing set of packed states, 0 = empty */
	size_t *used;	/* slots of seen in use, to clear them between walks */
	size_t seencap;
	size_t nseen;
	bool budget;
	size_t steps;
	size_t symget_cap;
};

/* ---------------------------------------------------------------- helpers */

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *np;

	if (need <= *cap)
		return true;
	ncap = *cap ? *cap : 16;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2 / elem)
			return false;
		ncap *= 2;
	}
	np = realloc(*p, ncap * elem);
	if (!np)
		return false;
	*p = np;
	*cap = ncap;
	return true;
}

static const struct kp_reloc *reloc_at(const struct kp_elf *e, size_t sec, uint64_t off)
{
	const struct kp_section *s = &e->sections[sec];
	size_t lo = 0, hi = s->nrelocs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->relocs[mid].offset < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->nrelocs && s->relocs[lo].offset == off ? &s->relocs[lo] : NULL;
}

/* First relocation at or after @off, as an index. */
static size_t reloc_lower(const struct kp_elf *e, size_t sec, uint64_t off)
{
	const struct kp_section *s = &e->sections[sec];
	size_t lo = 0, hi = s->nrelocs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->relocs[mid].offset < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Where relocation @r of section @sec points: S + A + @adj. REL addends are
 * read from the 4-byte field (i386, the only REL architecture traced).
 * Returns 1 when the target lies in a section, 0 when the symbol is undefined
 * or absolute (*@sym set when known), -1 when unreadable.
 */
static int reloc_dest(const struct kp_elf *e, size_t sec, const struct kp_reloc *r, int64_t adj,
		      uint32_t *tsec, uint64_t *toff, const struct kp_sym **sym)
{
	const struct kp_sym *s;
	int64_t addend;

	*sym = NULL;
	if (!r->sym || r->sym >= e->nsyms)
		return -1;
	s = &e->syms[r->sym];
	*sym = s;
	if (e->sections[sec].rela) {
		addend = r->addend;
	} else {
		uint64_t raw;

		if (!kp_elf_read_uint(e, sec, r->offset, 4, &raw))
			return -1;
		addend = (int32_t)raw;
	}
	if (s->shndx == SHN_UNDEF || s->shndx >= SHN_LORESERVE || s->shndx >= e->nsections)
		return 0;
	*tsec = s->shndx;
	*toff = s->value + (uint64_t)addend + (uint64_t)adj;
	return 1;
}

static struct fn_range enclosing_function(const struct kp_elf *e, size_t sec, uint64_t off)
{
	struct fn_range r = { 0, e->sections[sec].size, NULL };

	for (size_t i = 1; i < e->nsyms; i++) {
		const struct kp_sym *s = &e->syms[i];

		if (s->shndx != sec || s->type != STT_FUNC || !s->size)
			continue;
		if (off >= s->value && off - s->value < s->size) {
			r.start = s->value;
			r.end = s->value + s->size;
			r.name = s->name;
			return r;
		}
	}
	return r;
}

/* A string starting exactly at @off of a SHF_STRINGS section, if it is an identifier. */
static const char *identifier_at(const struct kp_elf *e, size_t sec, uint64_t off, size_t *len)
{
	const struct kp_section *s = &e->sections[sec];
	const char *str;

	if (!(s->flags & SHF_STRINGS) || !s->data || off >= s->size)
		return NULL;
	if (off > 0 && s->data[off - 1] != '\0')
		return NULL;
	str = kp_elf_string_at(e, sec, off, len);
	if (!str || !kp_is_identifier(str, *len))
		return NULL;
	return str;
}

static int add_entry(struct kp_module *m, size_t *cap, const char *name, size_t len,
		     const char *format, const char *secname, uint64_t site, const char *fn,
		     enum kp_symget_method method, bool request, struct kp_err *err)
{
	struct kp_symget *g;

	for (size_t i = 0; i < m->nsymget; i++) {
		const struct kp_symget *o = &m->symget[i];

		if (o->offset != site || strcmp(o->section, secname) || o->method != method)
			continue;
		if (name && o->symbol && !strncmp(o->symbol, name, len) && o->symbol[len] == '\0')
			return 0;
		if (!name && !o->symbol)
			return 0;
	}
	g = kp_module_push(m, &m->symget, &m->nsymget, cap, sizeof(*m->symget));
	if (!g)
		return kp_err_set(err, "out of memory");
	memset(g, 0, sizeof(*g));
	g->symbol = name ? kp_arena_strndup(&m->arena, name, len) : NULL;
	g->format = format ? kp_arena_strdup(&m->arena, format) : NULL;
	g->section = kp_arena_strdup(&m->arena, secname);
	g->function = fn ? kp_arena_strdup(&m->arena, fn) : NULL;
	if ((name && !g->symbol) || (format && !g->format) || !g->section || (fn && !g->function))
		return kp_err_set(err, "out of memory");
	g->offset = site;
	g->method = method;
	g->request = request;
	return 0;
}

/* ------------------------------------------------------------- heuristic */

static int scan_heuristic(struct kp_module *m, struct kp_elf *e, size_t sec, uint64_t site,
			  size_t *cap, struct kp_err *err)
{
	static const int64_t deltas[] = { 0, 4, -2 }; /* plain, x86 RIP-relative, s390 PC32DBL */
	const struct kp_section *s = &e->sections[sec];
	struct fn_range fn = enclosing_function(e, sec, site);

	for (size_t i = reloc_lower(e, sec, fn.start); i < s->nrelocs; i++) {
		const struct kp_reloc *r = &s->relocs[i];
		const struct kp_sym *sym;
		uint32_t tsec;
		uint64_t toff;

		if (r->offset >= fn.end)
			break;
		if (reloc_dest(e, sec, r, 0, &tsec, &toff, &sym) != 1)
			continue;
		for (size_t d = 0; d < KP_ARRAY_SIZE(deltas); d++) {
			size_t len;
			const char *str = identifier_at(e, tsec, toff + (uint64_t)deltas[d], &len);

			if (!str)
				continue;
			if (add_entry(m, cap, str, len, NULL, s->name, site, fn.name,
				      KP_SYMGET_HEURISTIC, false, err) < 0)
				return -1;
			break;
		}
	}
	return 0;
}

/* A string referenced by a relocation of function @fn at one of the usual deltas. */
typedef bool (*string_pred)(const char *s, size_t len, const void *arg);

static const char *function_string(struct kp_elf *e, size_t sec, const struct fn_range *fn,
				   string_pred pred, const void *arg)
{
	static const int64_t deltas[] = { 0, 4, -2 };
	const struct kp_section *s = &e->sections[sec];

	for (size_t i = reloc_lower(e, sec, fn->start); i < s->nrelocs; i++) {
		const struct kp_reloc *r = &s->relocs[i];
		const struct kp_sym *sym;
		uint32_t tsec;
		uint64_t toff;

		if (r->offset >= fn->end)
			break;
		if (reloc_dest(e, sec, r, 0, &tsec, &toff, &sym) != 1)
			continue;
		if (!(e->sections[tsec].flags & SHF_STRINGS))
			continue;
		for (size_t d = 0; d < KP_ARRAY_SIZE(deltas); d++) {
			uint64_t o = toff + (uint64_t)deltas[d];
			size_t len;
			const char *str;

			if (o >= e->sections[tsec].size)
				continue;
			if (o > 0 && e->sections[tsec].data &&
			    e->sections[tsec].data[o - 1] != '\0')
				continue;
			str = kp_elf_string_at(e, tsec, o, &len);
			if (str && pred(str, len, arg))
				return str;
		}
	}
	return NULL;
}

static bool is_ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* A printf format that can produce an identifier: identifier characters and conversions. */
static bool is_name_format(const char *s, size_t len, const void *arg)
{
	bool conv = false;

	(void)arg;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '%') {
			size_t j = i + 1;

			while (j < len && strchr("-+ #0123456789.hlzjt", s[j]))
				j++;
			if (j >= len || !strchr("diouxXsc", s[j]))
				return false;
			conv = true;
			i = j;
		} else if (!is_ident_char(s[i])) {
			return false;
		}
	}
	return conv;
}

static bool is_symbol_request_string(const char *s, size_t len, const void *arg)
{
	const char *name = arg;

	return len > 7 && !memcmp(s, "symbol:", 7) && strlen(name) == len - 7 &&
	       !memcmp(s + 7, name, len - 7);
}

/* ----------------------------------------------------------- the decoder */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool is_fstart(const struct sg_sec *s, uint64_t off)
{
	size_t lo = 0, hi = s->nfstarts;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->fstarts[mid] < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->nfstarts && s->fstarts[lo] == off;
}

static uint64_t next_fstart(const struct sg_sec *s, uint64_t off)
{
	size_t lo = 0, hi = s->nfstarts;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->fstarts[mid] <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->nfstarts ? s->fstarts[lo] : UINT64_MAX;
}

static int add_edge(struct sg_ctx *c, bool call, uint32_t tsec, uint64_t toff, uint32_t ssec,
		    size_t sidx)
{
	struct sg_edge **v = call ? &c->calls : &c->edges;
	size_t *n = call ? &c->ncalls : &c->nedges;
	size_t *cap = call ? &c->capcalls : &c->capedges;

	if (!grow((void **)v, cap, *n + 1, sizeof(**v)))
		return -1;
	(*v)[*n].tsec = tsec;
	(*v)[*n].toff = toff;
	(*v)[*n].ssec = ssec;
	(*v)[*n].sidx = sidx;
	(*n)++;
	return 0;
}

static bool is_tracing_hook(const char *name)
{
	static const char *const hooks[] = { "__fentry__", "mcount", "_mcount", "__gnu_mcount_nc" };

	for (size_t i = 0; name && i < KP_ARRAY_SIZE(hooks); i++)
		if (!strcmp(name, hooks[i]))
			return true;
	return false;
}

/* Functions that never return (as objtool's list): no fall through after a call to them. */
static bool is_noreturn(const char *name)
{
	static const char *const names[] = {
		"__stack_chk_fail",
		"__fortify_panic",
		"fortify_panic",
		"panic",
		"do_exit",
		"do_group_exit",
		"make_task_dead",
		"kthread_exit",
		"kthread_complete_and_exit",
		"__module_put_and_kthread_exit",
		"usercopy_abort",
		"__ubsan_handle_builtin_unreachable",
		"btrfs_assertfail",
		"__invalid_creds",
		"__reiserfs_panic",
		"lbug_with_loc",
		"mpt_halt_firmware",
		"nmi_panic_self_stop",
		"panic_smp_self_stop",
		"rewind_stack_and_make_dead",
		"machine_real_restart",
		"kunit_try_catch_throw",
		"__tdx_hypercall_failed",
		"sev_es_terminate",
		"snp_abort",
		"hv_ghcb_terminate",
	};

	for (size_t i = 0; name && i < KP_ARRAY_SIZE(names); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

static int decode_section(struct sg_ctx *c, size_t sec)
{
	struct kp_elf *e = c->e;
	const struct kp_section *ks = &e->sections[sec];
	struct sg_sec *s = &c->secs[sec];
	struct sg_code code = { ks->data, ks->size, e->big_endian, e->is64 };
	size_t cap = 0, fcap = 0;
	uint64_t off = 0;

	s->decoded = true;
	if (ks->size > UINT32_MAX)
		return 0; /* struct sg_insn holds 32-bit offsets; such a section is not traced */
	for (size_t i = 1; i < e->nsyms; i++) {
		if (e->syms[i].shndx != sec || e->syms[i].type != STT_FUNC ||
		    e->syms[i].value >= ks->size)
			continue;
		if (!grow((void **)&s->fstarts, &fcap, s->nfstarts + 1, sizeof(uint64_t)))
			return -1;
		s->fstarts[s->nfstarts++] = e->syms[i].value;
	}
	if (s->nfstarts > 1)
		qsort(s->fstarts, s->nfstarts, sizeof(uint64_t), cmp_u64);

	while (off < ks->size) {
		struct sg_insn in;
		uint64_t nf = next_fstart(s, off);

		if (!c->arch->decode(&code, off, &in) || in.len == 0 ||
		    (nf != UINT64_MAX && off + in.len > nf)) {
			/* resynchronise at the next function, or the next aligned slot */
			if (c->arch->min_insn > 1)
				off += c->arch->min_insn;
			else
				off = nf;
			continue;
		}
		if (!grow((void **)&s->insns, &cap, s->n + 1, sizeof(in)))
			return -1;
		s->insns[s->n++] = in;
		off += in.len;
	}

	for (size_t i = 0; i < s->n; i++) {
		struct sg_insn *in = &s->insns[i];
		const struct kp_reloc *r;
		bool call = in->flow == SG_CALL;

		if (in->flow != SG_JUMP && in->flow != SG_CJUMP && !call)
			continue;
		r = in->reloc_target ? reloc_at(e, sec, in->reloc_off) : NULL;
		if (r) {
			const struct kp_sym *sym;
			uint32_t tsec;
			uint64_t toff;

			int d = reloc_dest(e, sec, r, in->reloc_adj, &tsec, &toff, &sym);

			in->has_target = false;
			if (call && sym && is_tracing_hook(sym->name)) {
				/* ftrace/coverage hooks preserve the argument registers */
				in->flow = SG_SEQ;
				continue;
			}
			if (call && sym && sym->shndx == SHN_UNDEF && is_noreturn(sym->name)) {
				in->flow = SG_STOP;
				continue;
			}
			if (d == 1 && add_edge(c, call, tsec, toff, (uint32_t)sec, i) < 0)
				return -1;
			continue;
		}
		in->reloc_target = false;
		if (in->has_target && in->target < ks->size &&
		    add_edge(c, call, (uint32_t)sec, in->target, (uint32_t)sec, i) < 0)
			return -1;
	}
	return 0;
}

static int cmp_edge(const void *a, const void *b)
{
	const struct sg_edge *x = a, *y = b;

	if (x->tsec != y->tsec)
		return x->tsec < y->tsec ? -1 : 1;
	if (x->toff != y->toff)
		return x->toff < y->toff ? -1 : 1;
	if (x->ssec != y->ssec)
		return x->ssec < y->ssec ? -1 : 1;
	return x->sidx < y->sidx ? -1 : x->sidx > y->sidx;
}

static size_t edge_lower(const struct sg_edge *v, size_t n, uint32_t sec, uint64_t off)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].tsec < sec || (v[mid].tsec == sec && v[mid].toff < off))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Index of the instruction containing @off, or SIZE_MAX. */
static size_t insn_at(const struct sg_sec *s, uint64_t off)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->insns[mid].off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return SIZE_MAX;
	lo--;
	return off - s->insns[lo].off < s->insns[lo].len ? lo : SIZE_MAX;
}

/* ------------------------------------------------------------- the walk */

static bool seen_insert(struct sg_ctx *c, const struct sg_state *st)
{
	uint64_t key = ((uint64_t)st->sec << 40) ^ ((uint64_t)(st->idx + 1) << 6) ^
		       (uint64_t)(st->reg & 63);
	size_t h;

	if (key == 0)
		key = 1;
	h = (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 20) & (c->seencap - 1);
	while (c->seen[h]) {
		if (c->seen[h] == key)
			return false;
		h = (h + 1) & (c->seencap - 1);
	}
	c->seen[h] = key;
	c->used[c->nseen] = h;
	return true;
}

static int push_state(struct sg_ctx *c, uint32_t sec, size_t idx, int reg)
{
	struct sg_state st = { sec, reg, idx };

	if (c->nseen >= c->seencap / 2) {
		c->budget = true;
		return 0;
	}
	if (!seen_insert(c, &st))
		return 0;
	c->nseen++;
	if (!grow((void **)&c->work, &c->capwork, c->nwork + 1, sizeof(st)))
		return -1;
	c->work[c->nwork++] = st;
	return 0;
}

static int add_result_target(struct sg_result *res, uint32_t sec, uint64_t off)
{
	for (size_t i = 0; i < res->nt; i++)
		if (res->t[i].sec == sec && res->t[i].off == off)
			return 0;
	if (!grow((void **)&res->t, &res->capt, res->nt + 1, sizeof(*res->t)))
		return -1;
	res->t[res->nt].sec = sec;
	res->t[res->nt].off = off;
	res->nt++;
	return 0;
}

/* The value of @reg produced by instruction @p (at @psec): a result, or a state to follow. */
static int examine(struct sg_ctx *c, uint32_t psec, size_t pidx, int reg, struct sg_result *res)
{
	struct kp_elf *e = c->e;
	const struct sg_insn *p = &c->secs[psec].insns[pidx];

	if (p->flow == SG_CALL && (c->arch->call_clobbers & SG_REG(reg))) {
		res->flags |= reg == c->arch->ret_reg ? R_CALLRET : R_OTHER;
		return 0;
	}
	if (p->def_reg == reg) {
		switch (p->def) {
		case SG_DEF_ADDR: {
			const struct kp_reloc *r = reloc_at(e, psec, p->reloc_off);
			const struct kp_sym *sym;
			uint32_t tsec;
			uint64_t toff;

			if (!r || reloc_dest(e, psec, r, p->reloc_adj, &tsec, &toff, &sym) != 1) {
				res->flags |= R_OTHER;
				return 0;
			}
			if (e->sections[tsec].flags & SHF_WRITE) {
				res->flags |= R_WRITABLE;
				return 0;
			}
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
	const struct sg_insn *x = &s->insns[st->idx];
	bool fstart = is_fstart(s, x->off);
	bool any = false;
	size_t i;

	if (st->idx > 0 && !fstart) {
		const struct sg_insn *p = &s->insns[st->idx - 1];

		if (p->off + p->len == x->off && p->flow != SG_JUMP && p->flow != SG_STOP) {
			any = true;
			if (examine(c, st->sec, st->idx - 1, st->reg, res) < 0)
				return -1;
		}
	}
	for (i = edge_lower(c->edges, c->nedges, st->sec, x->off);
	     i < c->nedges && c->edges[i].tsec == st->sec && c->edges[i].toff == x->off; i++) {
		any = true;
		if (examine(c, c->edges[i].ssec, c->edges[i].sidx, st->reg, res) < 0)
			return -1;
	}
	if (fstart) {
		/* The entry of a function: an argument register comes from its callers. */
		bool callers = false;

		if (st->reg == c->arch->arg_reg) {
			for (i = edge_lower(c->calls, c->ncalls, st->sec, x->off);
			     i < c->ncalls && c->calls[i].tsec == st->sec &&
			     c->calls[i].toff == x->off;
			     i++) {
				callers = true;
				if (push_state(c, c->calls[i].ssec, c->calls[i].sidx, st->reg) < 0)
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

static int trace(struct sg_ctx *c, uint32_t sec, size_t idx, struct sg_result *res)
{
	for (size_t i = 0; i < c->nseen; i++)
		c->seen[c->used[i]] = 0;
	c->nwork = 0;
	c->steps = 0;
	c->nseen = 0;
	c->budget = false;
	if (push_state(c, sec, idx, c->arch->arg_reg) < 0)
		return -1;
	while (c->nwork) {
		struct sg_state st = c->work[--c->nwork];

		if (++c->steps > SG_MAX_STEPS) {
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

/* ---------------------------------------------------------------- driver */

static const struct sg_arch *arch_for(const struct kp_elf *e)
{
	switch (e->machine) {
	case EM_X86_64:
		return e->is64 ? kp_sg_arch_x86_64() : NULL;
	case EM_386:
		return e->is64 ? NULL : kp_sg_arch_i386();
	case EM_AARCH64:
		return e->is64 && !e->big_endian ? kp_sg_arch_arm64() : NULL;
	case EM_S390:
		return e->is64 && e->big_endian ? kp_sg_arch_s390x() : NULL;
	default:
		return NULL;
	}
}

static int report_site(struct sg_ctx *c, uint32_t sec, uint64_t site, const struct sg_result *res,
		       struct kp_err *err)
{
	struct kp_module *m = c->m;
	struct kp_elf *e = c->e;
	const char *secname = e->sections[sec].name;
	struct fn_range fn = enclosing_function(e, sec, site);
	unsigned dyn = res->flags & (R_STACK | R_CALLRET | R_OTHER | R_WRITABLE);
	bool exact = false;

	for (size_t i = 0; i < res->nt; i++) {
		size_t len;
		const char *name = kp_elf_string_at(e, res->t[i].sec, res->t[i].off, &len);
		bool request;

		if (!name || !kp_is_identifier(name, len)) {
			dyn |= R_OTHER;
			continue;
		}
		request = function_string(e, sec, &fn, is_symbol_request_string, name) != NULL;
		if (add_entry(m, &c->symget_cap, name, len, NULL, secname, site, fn.name,
			      KP_SYMGET_EXACT, request, err) < 0)
			return -1;
		exact = true;
	}
	if (dyn) {
		const char *fmt = function_string(e, sec, &fn, is_name_format, NULL);

		return add_entry(m, &c->symget_cap, NULL, 0, fmt, secname, site, fn.name,
				 KP_SYMGET_DYNAMIC, false, err);
	}
	if (!exact)
		return scan_heuristic(m, e, sec, site, &c->symget_cap, err);
	return 0;
}

static void ctx_free(struct sg_ctx *c)
{
	if (c->secs) {
		for (size_t i = 0; i < c->e->nsections; i++) {
			free(c->secs[i].insns);
			free(c->secs[i].fstarts);
		}
	}
	free(c->secs);
	free(c->edges);
	free(c->calls);
	free(c->work);
	free(c->seen);
	free(c->used);
}

static int prepare(struct sg_ctx *c, struct kp_err *err)
{
	struct kp_elf *e = c->e;

	c->secs = calloc(e->nsections ? e->nsections : 1, sizeof(*c->secs));
	c->seencap = 1u << 16;
	c->seen = calloc(c->seencap, sizeof(*c->seen));
	c->used = calloc(c->seencap / 2, sizeof(*c->used));
	if (!c->secs || !c->seen || !c->used)
		return kp_err_set(err, "out of memory");
	uint64_t budget = SG_MAX_CODE;

	for (size_t sec = 1; sec < e->nsections; sec++) {
		const struct kp_reloc *rel;
		size_t nrel;

		if (!(e->sections[sec].flags & SHF_EXECINSTR) || !e->sections[sec].data)
			continue;
		if (kp_elf_relocs(e, sec, &rel, &nrel, err) < 0)
			return -1;
		if (e->sections[sec].size > budget)
			continue; /* not decoded: its call sites fall back to the heuristic */
		budget -= e->sections[sec].size;
		if (decode_section(c, sec) < 0)
			return kp_err_set(err, "out of memory");
	}
	if (c->nedges > 1)
		qsort(c->edges, c->nedges, sizeof(*c->edges), cmp_edge);
	if (c->ncalls > 1)
		qsort(c->calls, c->ncalls, sizeof(*c->calls), cmp_edge);
	return 0;
}

/* A call or tail-call instruction whose target field is relocation @r. */
static size_t call_insn(const struct sg_ctx *c, size_t sec, const struct kp_reloc *r)
{
	const struct sg_sec *s = &c->secs[sec];
	size_t i = insn_at(s, r->offset);

	if (i == SIZE_MAX)
		return SIZE_MAX;
	if (s->insns[i].flow != SG_CALL && s->insns[i].flow != SG_JUMP)
		return SIZE_MAX;
	if (!s->insns[i].reloc_target || s->insns[i].reloc_off != r->offset)
		return SIZE_MAX;
	return i;
}

int kp_read_symbol_get(struct kp_module *m, struct kp_elf *e, struct kp_err *err)
{
	struct sg_ctx c;
	uint32_t get_idx = 0, put_idx = 0;
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
	if (c.arch && get_idx && prepare(&c, err) < 0)
		goto out;
	for (size_t sec = 1; sec < e->nsections; sec++) {
		const struct kp_reloc *rel;
		size_t nrel;

		if (!(e->sections[sec].flags & SHF_EXECINSTR) || !e->sections[sec].data)
			continue;
		if (kp_elf_relocs(e, sec, &rel, &nrel, err) < 0)
			goto out;
		for (size_t i = 0; i < nrel; i++) {
			struct sg_result res = { 0 };
			size_t idx;
			int r;

			if (put_idx && rel[i].sym == put_idx)
				m->nsymput++;
			if (!get_idx || rel[i].sym != get_idx)
				continue;
			idx = c.arch ? call_insn(&c, sec, &rel[i]) : SIZE_MAX;
			if (idx == SIZE_MAX) {
				if (scan_heuristic(m, e, sec, rel[i].offset, &c.symget_cap, err) <
				    0)
					goto out;
				continue;
			}
			r = trace(&c, (uint32_t)sec, idx, &res);
			if (r == 0)
				r = report_site(&c, (uint32_t)sec, c.secs[sec].insns[idx].off, &res,
						err);
			else
				kp_err_set(err, "out of memory");
			free(res.t);
			if (r < 0)
				goto out;
		}
	}
	ret = 0;
out:
	ctx_free(&c);
	return ret;
}
