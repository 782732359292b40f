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
 * arm64, 32-bit ARM, ppc64el, riscv64, s390x, mips64el): the instructions of
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
 * Every byte read from the file is bounds-checked; the walk is bounded.
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "read/module-internal.h"
#include "symbol-get-internal.h"

#define SG_MAX_STEPS  20000 /* states visited per call site */
#define SG_MAX_STATES 32768 /* distinct states per call site */
#define SG_SEEN_MIN   1024  /* initial slots of the state set (doubles up to 2 * SG_MAX_STATES) */
/* Executable bytes decoded per module (the largest in-tree .text is a few MiB). */
#define SG_MAX_CODE ((uint64_t)64 << 20)

struct fn_range {
	uint64_t start;
	uint64_t end;
	const char *name;
};

/*
 * A decoded instruction as kept for the walk: struct sg_insn without the branch
 * target (made an edge) and with the relocated field as an offset inside the
 * instruction. 16 bytes: one is kept per instruction of every decoded section
 * (i915: ~1M).
 */
struct sg_rec {
	uint32_t off;
	uint32_t clobbers;
	int16_t reloc_adj;
	int16_t reloc_rel; /* reloc_off - off */
	uint8_t len : 7;
	bool cond : 1; /* struct sg_insn.cond */
	int8_t def_reg;
	int8_t src_reg;
	unsigned flow : 3; /* enum sg_flow */
	unsigned def : 3;  /* enum sg_def */
	bool reloc_target : 1;
	bool fstart : 1; /* a function entry (the value of an STT_FUNC symbol) */
};

_Static_assert(sizeof(struct sg_rec) == 16, "struct sg_rec stays 16 bytes");

struct sg_sec {
	bool decoded;
	struct sg_rec *insns;
	size_t n;
	uint32_t base; /* module-wide position of offset 0: edge keys (below SG_MAX_CODE) */
};

/* A branch or call: the module-wide position of its target, and the instruction. */
struct sg_edge {
	uint32_t key; /* sg_sec.base + offset of the target */
	uint32_t sec;
	uint32_t idx;
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
	R_GETADDR = 1 << 7, /* the address of __symbol_get (a jump register) */
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

struct sg_str {
	const char *s;
	size_t len;
};

/* Strings collected from one function. */
struct sg_strings {
	struct sg_str *v;
	size_t n, cap;
	bool oom;
};

struct sg_ctx {
	struct kp_module *m;
	struct kp_elf *e;
	const struct sg_arch *arch;
	struct sg_sec *secs;
	struct sg_edge *edges; /* branches into decoded code, sorted by target */
	size_t nedges, capedges;
	struct sg_edge *calls; /* calls into decoded code, sorted by target */
	size_t ncalls, capcalls;
	uint8_t *symcls; /* per symbol: SC_* (tracing hook, noreturn), 0 not yet known (prepare) */
	/* the symbol_request() names of the function of the last site reported */
	struct sg_strings req;
	bool req_valid;
	uint32_t req_sec;
	uint64_t req_start, req_end;
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
	uint32_t get_sym; /* symbol index of __symbol_get */
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
 * read from the field (@arch->rel_addend; without it or a backend, the 4-byte
 * word). Returns 1 when the target lies in a section, 0 when the symbol is
 * undefined or absolute (*@sym set when known), -1 when unreadable.
 */
static int reloc_dest(const struct kp_elf *e, const struct sg_arch *arch, size_t sec,
		      const struct kp_reloc *r, int64_t adj, uint32_t *tsec, uint64_t *toff,
		      const struct kp_sym **sym)
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
	} else if (arch && arch->rel_addend) {
		const struct kp_section *ks = &e->sections[sec];
		struct sg_code code = { ks->data, ks->size,	   e->big_endian,
					e->is64,  SG_MODE_DEFAULT, NULL };

		if (!ks->data || !arch->rel_addend(&code, r->offset, r->type, &addend))
			return -1;
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

/*
 * A site the walk cannot follow, or a module without a backend: one entry, the
 * identifier-like string referenced last before the call inside the enclosing
 * function (where a compiler sets up the argument), or no name at all. Never
 * more than one entry per call site.
 */
static int scan_heuristic(struct kp_module *m, struct kp_elf *e, const struct sg_arch *arch,
			  size_t sec, uint64_t site, size_t *cap, struct kp_err *err)
{
	static const int64_t deltas[] = { 0, 4, -2 }; /* plain, x86 RIP-relative, s390 PC32DBL */
	const struct kp_section *s = &e->sections[sec];
	struct fn_range fn = enclosing_function(e, sec, site);
	const char *best = NULL;
	size_t best_len = 0;

	for (size_t i = reloc_lower(e, sec, fn.start); i < s->nrelocs; i++) {
		const struct kp_reloc *r = &s->relocs[i];
		const struct kp_sym *sym;
		uint32_t tsec;
		uint64_t toff;

		if (r->offset >= fn.end || r->offset >= site)
			break;
		if (reloc_dest(e, arch, sec, r, 0, &tsec, &toff, &sym) != 1)
			continue;
		for (size_t d = 0; d < KP_ARRAY_SIZE(deltas); d++) {
			size_t len;
			const char *str = identifier_at(e, tsec, toff + (uint64_t)deltas[d], &len);

			if (str) {
				best = str;
				best_len = len;
				break;
			}
		}
	}
	return add_entry(m, cap, best, best_len, NULL, s->name, site, fn.name, KP_SYMGET_HEURISTIC,
			 false, err);
}

/* A string referenced by a relocation of function @fn at one of the usual deltas. */
typedef bool (*string_pred)(const char *s, size_t len, void *arg);

static const char *function_string(struct kp_elf *e, const struct sg_arch *arch, size_t sec,
				   const struct fn_range *fn, string_pred pred, void *arg)
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
		if (reloc_dest(e, arch, sec, r, 0, &tsec, &toff, &sym) != 1)
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
static bool is_name_format(const char *s, size_t len, void *arg)
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

/* Collects the NAMEs of "symbol:NAME" (symbol_request() loads the module providing NAME). */
static bool collect_request(const char *s, size_t len, void *arg)
{
	struct sg_strings *l = arg;

	if (len <= 7 || memcmp(s, "symbol:", 7))
		return false;
	if (!grow((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v))) {
		l->oom = true;
		return true; /* stop */
	}
	l->v[l->n].s = s + 7;
	l->v[l->n].len = len - 7;
	l->n++;
	return false;
}

/* ----------------------------------------------------------- the decoder */

/* First bit set at or after @lo in bitmap @b of @size bits, UINT64_MAX if none. */
static uint64_t bits_next(const uint64_t *b, uint64_t lo, uint64_t size)
{
	while (lo < size) {
		uint64_t w = b[lo / 64] >> (lo % 64);

		if (w) {
			while (!(w & 1)) {
				w >>= 1;
				lo++;
			}
			return lo;
		}
		lo = (lo | 63) + 1;
	}
	return UINT64_MAX;
}

/* The relocation at @off (the first of several), searching forward from *@cur. */
static const struct kp_reloc *reloc_next(const struct kp_elf *e, size_t sec, size_t *cur,
					 uint64_t off)
{
	const struct kp_section *s = &e->sections[sec];
	size_t i = *cur;

	if (i > 0 && s->relocs[i - 1].offset >= off)
		i = reloc_lower(e, sec, off); /* not in increasing order: search again */
	while (i < s->nrelocs && s->relocs[i].offset < off)
		i++;
	*cur = i;
	return i < s->nrelocs && s->relocs[i].offset == off ? &s->relocs[i] : NULL;
}

/*
 * Records a branch or call from instruction @sidx of @ssec to @toff of @tsec, unless
 * the target is outside the decoded code (then no instruction of the walk is there).
 */
static int add_edge(struct sg_ctx *c, bool call, uint32_t tsec, uint64_t toff, uint32_t ssec,
		    uint32_t sidx)
{
	struct sg_edge **v = call ? &c->calls : &c->edges;
	size_t *n = call ? &c->ncalls : &c->nedges;
	size_t *cap = call ? &c->capcalls : &c->capedges;

	if (!c->secs[tsec].decoded || toff >= c->e->sections[tsec].size)
		return 0;
	if (!grow((void **)v, cap, *n + 1, sizeof(**v)))
		return -1;
	(*v)[*n].key = c->secs[tsec].base + (uint32_t)toff;
	(*v)[*n].sec = ssec;
	(*v)[*n].idx = sidx;
	(*n)++;
	return 0;
}

static bool is_tracing_hook(const char *name)
{
	static const char *const hooks[] = { "__fentry__", "mcount", "_mcount", "__gnu_mcount_nc" };

	for (size_t i = 0; name && i < KP_ARRAY_SIZE(hooks); i++)
		if (name[0] == hooks[i][0] && !strcmp(name, hooks[i]))
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
		if (name[0] == names[i][0] && !strcmp(name, names[i]))
			return true;
	return false;
}

enum { SC_KNOWN = 1, SC_HOOK = 2, SC_NORETURN = 4 };

/* Whether symbol @idx names a tracing hook or a noreturn function, looked up once per symbol. */
static unsigned sym_class(struct sg_ctx *c, size_t idx)
{
	const char *name = c->e->syms[idx].name;

	if (!c->symcls[idx])
		c->symcls[idx] = (uint8_t)(SC_KNOWN | (is_tracing_hook(name) ? SC_HOOK : 0) |
					   (is_noreturn(name) ? SC_NORETURN : 0));
	return c->symcls[idx];
}

/*
 * The control flow of branch or call @in, instruction @idx of section @sec: an edge
 * to its target (in a section: resolved relocation, or the encoded displacement).
 * Calls of tracing hooks fall through; calls of undefined noreturn functions stop.
 */
static int link_insn(struct sg_ctx *c, size_t sec, struct sg_insn *in, size_t idx, size_t *rcur)
{
	struct kp_elf *e = c->e;
	const struct kp_reloc *r;
	bool call = in->flow == SG_CALL;

	if (in->flow != SG_JUMP && in->flow != SG_CJUMP && !call)
		return 0;
	r = in->reloc_target ? reloc_next(e, sec, rcur, in->reloc_off) : NULL;
	if (r) {
		const struct kp_sym *sym;
		uint32_t tsec;
		uint64_t toff;

		int d = reloc_dest(e, c->arch, sec, r, in->reloc_adj, &tsec, &toff, &sym);

		in->has_target = false;
		if (call && sym) {
			unsigned k = sym_class(c, r->sym);

			if (k & SC_HOOK) {
				/* ftrace/coverage hooks preserve the argument registers */
				in->flow = SG_SEQ;
				return 0;
			}
			if (sym->shndx == SHN_UNDEF && (k & SC_NORETURN)) {
				in->flow = SG_STOP;
				return 0;
			}
		}
		if (d == 1 && c->arch->thumb_bit)
			toff &= ~(uint64_t)1; /* an ARM/Thumb interworking address */
		if (d == 1)
			return add_edge(c, call, tsec, toff, (uint32_t)sec, (uint32_t)idx);
		return 0;
	}
	in->reloc_target = false;
	if (in->has_target && in->target < e->sections[sec].size)
		return add_edge(c, call, (uint32_t)sec, in->target, (uint32_t)sec, (uint32_t)idx);
	return 0;
}

/*
 * Whether the relocated field of @in, if any, is close enough for struct sg_rec
 * (a 16-bit distance: inside the instruction, or its ARM literal pool word).
 */
static bool field_near(const struct sg_insn *in)
{
	int64_t d = (int64_t)in->reloc_off - (int64_t)in->off;

	if (in->def != SG_DEF_ADDR && in->def != SG_DEF_ADDR_OR_COPY && !in->reloc_target)
		return true;
	return d >= INT16_MIN && d <= INT16_MAX;
}

/* Start of function symbol @s (without the Thumb bit). */
static uint64_t func_start(const struct sg_arch *arch, const struct kp_sym *s)
{
	return arch && arch->thumb_bit ? s->value & ~(uint64_t)1 : s->value;
}

struct sg_map {
	uint64_t off;
	enum sg_mode mode;
};

static int map_cmp(const void *a, const void *b)
{
	const struct sg_map *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/*
 * The mapping symbols of section @sec ($a, $t, $d, $x, optionally followed by
 * ".suffix"), sorted: *@map, *@n. Returns false when out of memory.
 */
static bool mapping_symbols(const struct kp_elf *e, size_t sec, struct sg_map **map, size_t *n)
{
	size_t cap = 0;

	*map = NULL;
	*n = 0;
	for (size_t i = 1; i < e->nsyms; i++) {
		const struct kp_sym *s = &e->syms[i];
		const char *nm = s->name;
		enum sg_mode mode;

		/* "$x<isa>" (RISC-V) names the extensions of the code that follows */
		if (s->shndx != sec || !nm || nm[0] != '$' || !nm[1] ||
		    (nm[2] && nm[2] != '.' && nm[1] != 'x'))
			continue;
		if (nm[1] == 'a' || nm[1] == 'x')
			mode = SG_MODE_DEFAULT;
		else if (nm[1] == 't')
			mode = SG_MODE_THUMB;
		else if (nm[1] == 'd')
			mode = SG_MODE_DATA;
		else
			continue;
		if (!grow((void **)map, &cap, *n + 1, sizeof(**map)))
			return false;
		(*map)[*n].off = s->value;
		(*map)[*n].mode = mode;
		(*n)++;
	}
	if (*n > 1)
		qsort(*map, *n, sizeof(**map), map_cmp);
	return true;
}

/*
 * Decodes executable section @sec: its instructions, resynchronising after an
 * undecodable one (or one running into the next function entry) at the next
 * function entry, or the next aligned slot; and their branch and call edges.
 */
static int decode_section(struct sg_ctx *c, size_t sec)
{
	struct kp_elf *e = c->e;
	const struct kp_section *ks = &e->sections[sec];
	struct sg_sec *s = &c->secs[sec];
	unsigned state = 0;
	struct sg_code code = {
		ks->data, ks->size, e->big_endian, e->is64, SG_MODE_DEFAULT, &state
	};
	unsigned step = c->arch->min_insn;
	size_t cap, rcur = 0;
	uint64_t *fbits;	  /* bit per byte: a function (STT_FUNC symbol) starts here */
	uint64_t off = 0, nf = 0; /* nf: the first function start after off, UINT64_MAX none */
	struct sg_map *map = NULL;
	size_t nmap = 0, mi = 0;
	uint64_t mend = UINT64_MAX; /* end of the current mapping region */
	int ret = -1;

	if (ks->size > UINT32_MAX)
		return 0; /* struct sg_insn holds 32-bit offsets; such a section is not traced */
	fbits = calloc((size_t)(ks->size / 64) + 1, sizeof(*fbits));
	/*
	 * At most size / min_insn instructions; x86 code averages 3.3 (i386) to 4.2 bytes
	 * an instruction: room for size / 2, grow() covers denser code.
	 */
	cap = (size_t)(ks->size / (step > 1 ? step : 2)) + 16;
	s->insns = malloc(cap * sizeof(*s->insns));
	if (!fbits || !s->insns)
		goto out;
	if (c->arch->mapping_symbols && !mapping_symbols(e, sec, &map, &nmap))
		goto out;
	for (size_t i = 1; i < e->nsyms; i++) {
		const struct kp_sym *sym = &e->syms[i];
		uint64_t v = func_start(c->arch, sym);

		if (sym->shndx == sec && sym->type == STT_FUNC && v < ks->size)
			fbits[v / 64] |= (uint64_t)1 << (v % 64);
	}

	while (off < ks->size) {
		struct sg_insn in;
		struct sg_rec *r;

		if (nmap && (mend == UINT64_MAX || off >= mend)) {
			/* the mapping region holding off: its instruction set and end */
			while (mi + 1 < nmap && map[mi + 1].off <= off)
				mi++;
			code.mode = map[mi].off <= off ? map[mi].mode : SG_MODE_DEFAULT;
			state = 0;
			mend = map[mi].off > off ? map[mi].off
			       : mi + 1 < nmap	 ? map[mi + 1].off
						 : ks->size;
			if (code.mode == SG_MODE_DATA) {
				off = mend;
				continue;
			}
		}
		if (nf <= off)
			nf = bits_next(fbits, off + 1, ks->size);
		if (!c->arch->decode(&code, off, &in) || in.len == 0 || in.len > 127 ||
		    !field_near(&in) || off + in.len > nf || (nmap && off + in.len > mend)) {
			/* resynchronise at the next function, or the next aligned slot */
			state = 0;
			if (step > 1)
				off += step;
			else
				off = nf;
			continue;
		}
		if (link_insn(c, sec, &in, s->n, &rcur) < 0)
			goto out;
		if (!grow((void **)&s->insns, &cap, s->n + 1, sizeof(*s->insns)))
			goto out;
		r = &s->insns[s->n++];
		r->off = in.off;
		r->clobbers = in.clobbers;
		r->reloc_adj = in.reloc_adj;
		r->reloc_rel =
			(int16_t)((int64_t)in.reloc_off - (int64_t)in.off); /* field_near() */
		r->len = in.len & 127;
		r->cond = in.cond;
		r->def_reg = in.def_reg;
		r->src_reg = in.src_reg;
		r->flow = in.flow;
		r->def = in.def;
		r->reloc_target = in.reloc_target;
		r->fstart = (fbits[off / 64] >> (off % 64)) & 1;
		off += in.len;
	}
	ret = 0;
out:
	free(fbits);
	free(map);
	return ret;
}

/* Index of the first edge of @v (sorted) whose target is at or after position @key. */
static size_t edge_lower(const struct sg_edge *v, size_t n, uint32_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#define SG_RADIX_BITS 11

/* Sorts the @n edges of *@v by target (keys up to @maxkey), stably: an LSD radix sort. */
static int sort_edges(struct sg_edge **v, size_t *cap, size_t n, uint32_t maxkey)
{
	uint32_t cnt[1u << SG_RADIX_BITS];
	struct sg_edge *a = *v, *b;

	if (n < 2)
		return 0;
	b = malloc(n * sizeof(*b));
	if (!b)
		return -1;
	for (unsigned sh = 0; sh < 32 && (sh == 0 || maxkey >> sh); sh += SG_RADIX_BITS) {
		struct sg_edge *t;
		uint32_t sum = 0;

		memset(cnt, 0, sizeof(cnt));
		for (size_t i = 0; i < n; i++)
			cnt[(a[i].key >> sh) & ((1u << SG_RADIX_BITS) - 1)]++;
		for (size_t d = 0; d < KP_ARRAY_SIZE(cnt); d++) {
			uint32_t k = cnt[d];

			cnt[d] = sum;
			sum += k;
		}
		for (size_t i = 0; i < n; i++)
			b[cnt[(a[i].key >> sh) & ((1u << SG_RADIX_BITS) - 1)]++] = a[i];
		t = a;
		a = b;
		b = t;
	}
	free(b);
	*v = a;
	*cap = n;
	return 0;
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

static enum sg_rkind rkind(const struct sg_arch *arch, uint32_t type)
{
	return arch->reloc_kind ? arch->reloc_kind(type) : SG_RK_ADDR;
}

/* The first relocation at @off of @sec that is not a marker (SG_RK_IGNORE). */
static const struct kp_reloc *addr_reloc_at(const struct sg_ctx *c, size_t sec, uint64_t off)
{
	const struct kp_section *s = &c->e->sections[sec];

	for (size_t i = reloc_lower(c->e, sec, off); i < s->nrelocs && s->relocs[i].offset == off;
	     i++)
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
		if (reloc_dest(c->e, c->arch, sec, r, 0, tsec, toff, &sym) != 1 ||
		    kp_elf_relocs(c->e, *tsec, &rel, &n, &err) < 0)
			return 0;
		sec = *tsec;
		r = addr_reloc_at(c, sec, *toff);
		if (!r || rkind(c->arch, r->type) != SG_RK_ADDR)
			return 0;
		return reloc_dest(c->e, c->arch, sec, r, 0, tsec, toff, &sym) == 1;
	}
	if (k == SG_RK_PCREL_LO) {
		if (reloc_dest(c->e, c->arch, sec, r, 0, tsec, toff, &sym) != 1 || *tsec != sec)
			return 0;
		r = addr_reloc_at(c, sec, *toff);
		if (!r || rkind(c->arch, r->type) != SG_RK_ADDR)
			return 0;
		k = SG_RK_ADDR;
	}
	if (k != SG_RK_ADDR)
		return 0;
	return reloc_dest(c->e, c->arch, sec, r, adj, tsec, toff, &sym) == 1;
}

/* The value of @reg produced by instruction @p (at @psec): a result, or a state to follow. */
static int examine(struct sg_ctx *c, uint32_t psec, size_t pidx, int reg, struct sg_result *res,
		   bool self)
{
	struct kp_elf *e = c->e;
	const struct sg_rec *p = &c->secs[psec].insns[pidx];

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
	for (i = edge_lower(c->edges, c->nedges, key); i < c->nedges && c->edges[i].key == key;
	     i++) {
		any = true;
		if (examine(c, c->edges[i].sec, c->edges[i].idx, st->reg, res, false) < 0)
			return -1;
	}
	if (fstart) {
		/* The entry of a function: an argument register comes from its callers. */
		bool callers = false;

		if (st->reg == c->arch->arg_reg) {
			for (i = edge_lower(c->calls, c->ncalls, key);
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
static int trace(struct sg_ctx *c, uint32_t sec, size_t idx, int reg, bool self,
		 struct sg_result *res)
{
	for (size_t i = 0; i < c->nseen; i++)
		c->seen[c->used[i]] = 0;
	c->nwork = 0;
	c->steps = 0;
	c->nseen = 0;
	c->budget = false;
	if ((self ? examine(c, sec, idx, reg, res, true) : push_state(c, sec, idx, reg)) < 0)
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

/*
 * The backends: one file each (symbol-get-<arch>.c), matched on e_machine,
 * class and byte order. A module of any other architecture gets the heuristic
 * (one entry per call site) and says so (kp_module.symget_exact).
 */
static const struct sg_arch *const backends[] = {
	&kp_sg_x86_64,	&kp_sg_i386,	&kp_sg_arm64, &kp_sg_arm,
	&kp_sg_ppc64le, &kp_sg_riscv64, &kp_sg_s390x, &kp_sg_mips64el,
};

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
		function_string(c->e, c->arch, sec, fn, collect_request, &c->req);
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
		int request;

		if (!name || !kp_is_identifier(name, len)) {
			dyn |= R_OTHER;
			continue;
		}
		request = is_request(c, sec, &fn, name, len);
		if (request < 0)
			return kp_err_set(err, "out of memory");
		if (add_entry(m, &c->symget_cap, name, len, NULL, secname, site, fn.name,
			      KP_SYMGET_EXACT, request, err) < 0)
			return -1;
		exact = true;
	}
	if (dyn) {
		const char *fmt = function_string(e, c->arch, sec, &fn, is_name_format, NULL);

		return add_entry(m, &c->symget_cap, NULL, 0, fmt, secname, site, fn.name,
				 KP_SYMGET_DYNAMIC, false, err);
	}
	if (!exact)
		return scan_heuristic(m, e, c->arch, sec, site, &c->symget_cap, err);
	return 0;
}

static void ctx_free(struct sg_ctx *c)
{
	if (c->secs) {
		for (size_t i = 0; i < c->e->nsections; i++)
			free(c->secs[i].insns);
	}
	free(c->secs);
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
		if (c->secs[sec].decoded && decode_section(c, sec) < 0)
			return kp_err_set(err, "out of memory");
	if (sort_edges(&c->edges, &c->capedges, c->nedges, (uint32_t)pos) < 0 ||
	    sort_edges(&c->calls, &c->capcalls, c->ncalls, (uint32_t)pos) < 0)
		return kp_err_set(err, "out of memory");
	free(c->symcls);
	c->symcls = NULL;
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
	if (!s->insns[i].reloc_target || s->insns[i].off + s->insns[i].reloc_rel != r->offset)
		return SIZE_MAX;
	return i;
}

/* Traces call @idx of @sec (a call of __symbol_get) and reports its targets. */
static int trace_site(struct sg_ctx *c, uint32_t sec, size_t idx, struct kp_err *err)
{
	struct sg_result res = { 0 };
	int r = trace(c, sec, idx, c->arch->arg_reg, c->arch->delay_slots, &res);

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
		struct sg_code code = { ks->data, ks->size,	   e->big_endian,
					e->is64,  SG_MODE_DEFAULT, NULL };

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
			r = trace(c, (uint32_t)sec, i, in.jump_reg, false, &res);
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
			if (idx == SIZE_MAX) {
				if (scan_heuristic(m, e, c.arch, sec, rel[i].offset, &c.symget_cap,
						   err) < 0)
					goto out;
				continue;
			}
			if (trace_site(&c, (uint32_t)sec, idx, err) < 0)
				goto out;
		}
	}
	ret = 0;
out:
	ctx_free(&c);
	return ret;
}
