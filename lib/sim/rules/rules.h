/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internal interface of the rule files. Each rule is a function named after
 * the kernel function it models, with the kernel versions in a one-line
 * comment at its definition; lib/sim/loader.c calls them in the kernel's order.
 */
#ifndef KP_RULES_H
#define KP_RULES_H

#include "util/symbol-index.h"
#include "sim/loader.h"

struct kp_sim_ctx {
	struct kp_simulation *sim;
	const struct kp_graph *g;
	const struct kp_kernel_facts *f;
	const struct kp_profile *p;
	size_t *loaded; /* verdict indices of live modules, oldest first */
	size_t nloaded;
	struct kp_symbol_index live_names; /* names of live modules: the set's and facts->loaded */
	/* names of modules an oops left MODULE_STATE_UNFORMED, each with its verdict (size_t *) */
	struct kp_symbol_index unformed_names;
	/* what an earlier oops left of the loader: read through kp_read_stall() */
	struct kp_stall stall;
	unsigned once; /* the once-only flags, 1 << KP_ONCE_* (sim-reads.h): kp_once_done() */
	/*
	 * What the current load reads and writes (sim-reads.h), NULL outside a load; the
	 * pointer is const where the context is, the record is not.
	 */
	struct kp_sim_reads *rd;
	bool late; /* symbol_get() after the loads: reads go to rd's late part */
};

/* A once-only flag consulted: whether it is set (the read recorded). */
bool kp_once_done(const struct kp_sim_ctx *c, enum kp_once f);
/* A once-only flag set (the write recorded). */
void kp_once_mark(struct kp_sim_ctx *c, enum kp_once f);
/* An earlier verdict (@node) read by the current load, or by symbol_get() after the loads. */
void kp_read_verdict(const struct kp_sim_ctx *c, size_t node);
/*
 * Whether earlier oopses left the loader stalled as @kind (the load that did in *@by), asked
 * by the current load (recorded: only a change of that answer changes its verdict).
 */
bool kp_read_stall(const struct kp_sim_ctx *c, enum kp_stall_kind kind, size_t *by);
/* The current load (verdict @by) left the loader stalled (recorded). */
void kp_mark_stall(struct kp_sim_ctx *c, enum kp_stall_kind kind, size_t by);

/* One module being loaded: struct load_info + struct module as far as the rules need. */
struct kp_loading {
	struct kp_verdict *v;
	const struct kp_node *node;
	const struct kp_module *m;
	const char *name;      /* mod->name (.gnu.linkonce.this_module) */
	const char *info_name; /* info->name: modinfo name=, else mod->name */
	bool has_versions;     /* info->index.vers != 0 */
	bool using_gplonly_symbols;
	bool sig_ok;	 /* info->sig_ok: module_sig_check() verified the signature */
	bool listed;	 /* add_unformed_module() put it in the module list (UNFORMED) */
	size_t ver_hint; /* where find_version() starts (a speed-up, not a kernel state) */
	/* find_version()'s index of a long list, built on the hint's first miss (a speed-up) */
	struct kp_symbol_index ver_index;
	const struct kp_version *ver_index_of; /* the list it indexes; NULL: none */
};

/* What load_one() leaves in @ld besides the verdict (find_version()'s index). */
void kp_loading_release(struct kp_loading *ld);

/* What find_symbol() found. */
struct kp_found {
	const char *name;
	uint32_t name_hash; /* kp_hash_string(name) */
	bool gpl_only;
	bool gpl_future;
	const char *ns;
	bool has_crc;
	uint32_t crc;
	enum kp_provider_kind kind;
	size_t owner;		/* KP_PROV_MODULE: verdict index */
	const char *owner_name; /* NULL for vmlinux */
	bool owner_proprietary; /* owner->taints has P */
	char owner_buf[64];	/* storage for a base module's name */
};

/* Message and taint helpers (loader.c). */
void kp_msg(struct kp_sim_ctx *c, struct kp_loading *ld, const char *fmt, ...) kp_printf_fmt(3, 4);
/* A message printed outside a load (symbol_get() at run time). */
void kp_vmsg(struct kp_verdict *v, const char *fmt, ...) kp_printf_fmt(2, 3);
void kp_add_taint(struct kp_sim_ctx *c, struct kp_loading *ld, unsigned bit,
		  bool lockdep_unreliable);
void kp_add_taint_module(struct kp_sim_ctx *c, struct kp_loading *ld, unsigned bit,
			 bool lockdep_unreliable);
bool kp_test_taint(const struct kp_sim_ctx *c, unsigned bit);
int kp_finding(struct kp_verdict *v, const char *id, enum kp_severity sev, enum kp_consequence cons,
	       const char *symbol, const char *fmt, ...) kp_printf_fmt(6, 7);
int kp_try_to_force_load(struct kp_sim_ctx *c, struct kp_loading *ld, const char *reason);

/* find-symbol.c */
bool kp_export_class(const struct kp_sim_ctx *c, const struct kp_export *x, bool *gpl_only);
bool kp_find_symbol(const struct kp_sim_ctx *c, const char *name, bool gplok, struct kp_found *out);
/* The same with @hash == kp_hash_string(@name) (struct kp_export.hash). */
bool kp_find_symbol_hashed(const struct kp_sim_ctx *c, const char *name, uint32_t hash, bool gplok,
			   struct kp_found *out);
/*
 * kp_find_symbol() given what the kernel's exports hold for @name (@k: kp_base_lookup() of
 * the graph's base, NULL when nothing), e.g. from kp_import_base_hit(); @hash is
 * kp_hash_string(@name) (struct kp_import.hash).
 */
bool kp_find_symbol_k(const struct kp_sim_ctx *c, const char *name, uint32_t hash,
		      const struct kp_ksym *k, bool gplok, struct kp_found *out);
/* Whether find_symbol() searches a table of class @t (@gpl_only) for a caller with @gplok. */
bool kp_table_allowed(const struct kp_sim_ctx *c, enum kp_export_table t, bool gpl_only,
		      bool gplok);
/* kp_base_lookup() of import @imp of the module @ld loads, from its graph edge when it has one. */
const struct kp_ksym *kp_import_base_hit(const struct kp_sim_ctx *c, const struct kp_loading *ld,
					 const struct kp_import *imp);

/* find-prefix.c: an export find_symbol() compares a name ending at an unmapped page with */
#define KP_PREFIX_OWNER_MAX 64
struct kp_prefix_hit {
	const char *name;  /* the export, which begins with the name's bytes */
	const char *owner; /* "vmlinux" or the module's name */
	char owner_buf[KP_PREFIX_OWNER_MAX];
};
/*
 * Whether a table find_symbol() searches, while the module of node @nd loads, holds an export
 * beginning with the @len bytes.
 */
bool kp_find_symbol_prefix(const struct kp_sim_ctx *c, const struct kp_node *nd, const char *prefix,
			   size_t len, bool gplok, struct kp_prefix_hit *hit);

/* ima.c: before load_module(), when finit_module() reads the file (or init_module() copies it) */
int kp_rule_ima_appraise_module(struct kp_sim_ctx *c, struct kp_loading *ld);
/* signing.c */
int kp_rule_module_sig_check(struct kp_sim_ctx *c, struct kp_loading *ld);
/* version.c */
int kp_rule_check_modstruct_version(struct kp_sim_ctx *c, struct kp_loading *ld);
int kp_rule_check_modinfo_vermagic(struct kp_sim_ctx *c, struct kp_loading *ld);
bool kp_rule_check_version(struct kp_sim_ctx *c, struct kp_loading *ld, const char *symname,
			   const struct kp_found *fs);
/* export-sections.c */
void kp_rule_find_module_sections(struct kp_sim_ctx *c, struct kp_loading *ld);
int kp_rule_check_export_symbol_sections(struct kp_sim_ctx *c, struct kp_loading *ld);
/* modinfo.c */
int kp_rule_setup_modinfo(struct kp_sim_ctx *c, struct kp_loading *ld);
/* elf-validity.c */
int kp_rule_elf_validity(struct kp_sim_ctx *c, struct kp_loading *ld);
/* taint.c: v6.4+ one call; before, two around the duplicate check */
int kp_rule_module_augment_kernel_taints(struct kp_sim_ctx *c, struct kp_loading *ld);
int kp_rule_check_modinfo_taints(struct kp_sim_ctx *c, struct kp_loading *ld);
void kp_rule_check_module_license_taints(struct kp_sim_ctx *c, struct kp_loading *ld);
/* duplicate.c */
int kp_rule_module_patient_check_exists(struct kp_sim_ctx *c, struct kp_loading *ld);
int kp_rule_verify_exported_symbols(struct kp_sim_ctx *c, struct kp_loading *ld);
/* export-name.c: an export's name outside the module's strings */
int kp_rule_wild_export_name(struct kp_sim_ctx *c, struct kp_loading *ld);
int kp_rule_wild_export_reloc(struct kp_sim_ctx *c, struct kp_loading *ld);
/* inherit-taint.c */
bool kp_rule_inherit_taint(struct kp_sim_ctx *c, struct kp_loading *ld, const struct kp_found *fs,
			   const char *name);
/* resolve.c */
int kp_rule_simplify_symbols(struct kp_sim_ctx *c, struct kp_loading *ld);
/* layout_symtab() before v6.13: a kept symbol's name into the guard page (layout-symtab.c) */
int kp_rule_layout_symtab(struct kp_sim_ctx *c, struct kp_loading *ld);
/* stall.c: a machine an earlier load hung; the module_mutex an earlier oops left held */
int kp_rule_machine_hung(struct kp_sim_ctx *c, struct kp_loading *ld);
int kp_rule_module_mutex_lock(struct kp_sim_ctx *c, struct kp_loading *ld);
/* oob-read.c: a read of @width bytes at offset @off of the module image the kernel holds */
enum kp_oob {
	KP_OOB_INSIDE, /* inside the page-rounded buffer: leftover bytes, no fault */
	KP_OOB_GUARD,  /* in the guard page after it: the kernel oopses */
	KP_OOB_BEYOND, /* further: whatever is mapped there decides */
	/* the kernel's page size is not known and the answer depends on it */
	KP_OOB_UNKNOWN,
};
/* @page_shift: the kernel's (kp_kernel_facts.page_shift), 0 if unknown */
enum kp_oob kp_oob_read(const struct kp_module *m, unsigned page_shift, uint64_t off,
			unsigned width);
const char *kp_oob_fault_line(uint16_t machine);
/* relocations.c */
int kp_rule_apply_relocations(struct kp_sim_ctx *c, struct kp_loading *ld);
/* btf.c */
int kp_rule_btf_module_notify(struct kp_sim_ctx *c, struct kp_loading *ld);
/* symbol-get.c */
int kp_rule_symbol_get(struct kp_sim_ctx *c, struct kp_verdict *v);

#endif
