/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The symbol_get() tracer's own parts (symbol-get.c describes the method): what the
 * driver (symbol-get.c), the relocation and reporting helpers (symbol-get-reloc.c), the
 * control-flow decoder (symbol-get-cfg.c), the backward walk (symbol-get-walk.c) and
 * the heuristic fallback (symbol-get-heuristic.c) share. The per-architecture backends
 * see only symbol-get-internal.h.
 */
#ifndef KP_SYMBOL_GET_TRACE_H
#define KP_SYMBOL_GET_TRACE_H

#include "read/module-internal.h"
#include "symbol-get-internal.h"

#define SG_MAX_STEPS  20000 /* states visited per call site */
#define SG_MAX_STATES 32768 /* distinct states per call site */
#define SG_SEEN_MIN   1024  /* initial slots of the state set (doubles up to 2 * SG_MAX_STATES) */
/*
 * The analysis budget of one module: walk steps, plus per call site the symbols and the
 * relocations of its function the scans look at. Deterministic (work, not time), so a
 * module's facts are the same on every run and can be cached. The sites after it runs out
 * are counted as not analysed (kp_module.nsymget_unanalysed). See SG_MODULE_BUDGET's
 * calibration in symbol-get.c.
 */
#define SG_MODULE_BUDGET ((uint64_t)4 << 20)
/* Entries recorded per module (in-tree at most 164, cx23885): what later passes compare. */
#define SG_MAX_ENTRIES 4096
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

/* A sized STT_FUNC symbol (symbol-get-functions.c). */
struct sg_fn {
	uint64_t start, end;
	uint64_t maxend; /* the largest end of this and the section's functions before it */
	uint32_t shndx;
	uint32_t sym; /* its .symtab index: of two enclosing functions the lower one is named */
};

/* The module's functions sorted by (section, start, symbol index). */
struct sg_fns {
	struct sg_fn *v;
	size_t n;
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
	struct sg_fns fns;     /* the functions, to name a site's (sg_fns_enclosing()) */
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
	size_t steps;	 /* states taken from the work list, this walk */
	size_t examined; /* predecessors examined, this walk */
	uint64_t spent;	 /* of SG_MODULE_BUDGET, by the walks and scans before this one */
	size_t symget_cap;
	uint32_t get_sym; /* symbol index of __symbol_get */
};

/* Whether a string referenced by a function is the one looked for. */
typedef bool (*string_pred)(const char *s, size_t len, void *arg);

/* relocations and results (symbol-get-reloc.c) */
const char *sg_identifier_at(const struct kp_elf *e, size_t sec, uint64_t off, size_t *len);
int sg_reloc_dest(const struct kp_elf *e, const struct sg_arch *arch, size_t sec,
		  const struct kp_reloc *r, int64_t adj, uint32_t *tsec, uint64_t *toff,
		  const struct kp_sym **sym);
size_t sg_reloc_lower(const struct kp_elf *e, size_t sec, uint64_t off);

/* the functions (symbol-get-functions.c) */
/* 0, or -1 when out of memory. */
int sg_fns_build(struct sg_fns *f, const struct kp_elf *e);
void sg_fns_release(struct sg_fns *f);
/*
 * The function of section @sec enclosing @off (the first sized STT_FUNC of .symtab that does),
 * else the whole section with no name; adds the entries looked at to *@work (the budget).
 */
struct fn_range sg_fns_enclosing(const struct sg_fns *f, const struct kp_elf *e, size_t sec,
				 uint64_t off, uint64_t *work);
int sg_add_entry(struct kp_module *m, size_t *cap, const char *name, size_t len, const char *format,
		 const char *secname, uint64_t site, const char *fn, enum kp_symget_method method,
		 bool request, struct kp_err *err);

/* the heuristic (symbol-get-heuristic.c) */
bool sg_collect_request(const char *s, size_t len, void *arg);
int sg_scan_heuristic(struct kp_module *m, struct kp_elf *e, const struct sg_arch *arch, size_t sec,
		      uint64_t site, const struct fn_range *fn, size_t *cap, struct kp_err *err);
const char *sg_function_string(struct kp_elf *e, const struct sg_arch *arch, size_t sec,
			       const struct fn_range *fn, string_pred pred, void *arg);
bool sg_is_name_format(const char *s, size_t len, void *arg);

/* the decoder (symbol-get-cfg.c) */
int sg_decode_section(struct sg_ctx *c, size_t sec);
size_t sg_insn_at(const struct sg_sec *s, uint64_t off);
int sg_sort_edges(struct sg_edge **v, size_t *cap, size_t n, uint32_t maxkey);
size_t sg_edge_lower(const struct sg_edge *v, size_t n, uint32_t key);

/* the walk (symbol-get-walk.c) */
int sg_trace(struct sg_ctx *c, uint32_t sec, size_t idx, int reg, bool self, struct sg_result *res);

/* when each site runs (symbol-get-reach.c): sets kp_symget.when/path of entries @first.. */
int sg_reach(struct sg_ctx *c, size_t first, struct kp_err *err);

#endif
