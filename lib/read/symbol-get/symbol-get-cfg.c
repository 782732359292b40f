// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The symbol_get() tracer's decoder: every executable section decoded with the
 * architecture's backend into 16-byte records, with branch and call edges sorted by target
 * (the control-flow graph the backward walk follows).
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "symbol-get-trace.h"

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
		i = sg_reloc_lower(e, sec, off); /* not in increasing order: search again */
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
	if (kp_grow(v, cap, *n + 1, sizeof(**v)) < 0)
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

		int d = sg_reloc_dest(e, c->arch, sec, r, in->reloc_adj, &tsec, &toff, &sym);

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
		if (kp_grow(map, &cap, *n + 1, sizeof(**map)) < 0)
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
int sg_decode_section(struct sg_ctx *c, size_t sec)
{
	struct kp_elf *e = c->e;
	const struct kp_section *ks = &e->sections[sec];
	struct sg_sec *s = &c->secs[sec];
	unsigned state = 0;
	struct sg_code code = { ks->data,	 ks->size, e->big_endian, e->is64,
				SG_MODE_DEFAULT, &state,   e->flags };
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
		if (kp_grow(&s->insns, &cap, s->n + 1, sizeof(*s->insns)) < 0)
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
size_t sg_edge_lower(const struct sg_edge *v, size_t n, uint32_t key)
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
int sg_sort_edges(struct sg_edge **v, size_t *cap, size_t n, uint32_t maxkey)
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
size_t sg_insn_at(const struct sg_sec *s, uint64_t off)
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
