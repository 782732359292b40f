// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The load pipeline, in load_module()'s order (kernel/module/main.c), after IMA's appraisal of
 * the file finit_module() read (or the buffer init_module() copied, rules/ima.c):
 *   v6.4+: module_sig_check -> elf_validity_cache_copy -> early_mod_check (blacklist,
 *          module_layout CRC, vermagic, duplicate name) -> module_augment_kernel_taints ->
 *          find_module_sections -> check_export_symbol_sections (versions before 7.1) ->
 *          setup_modinfo (v6.16+: module: imports) -> simplify_symbols ->
 *          apply_relocations -> verify_exported_symbols
 *   <=6.3: O, C, K, the license's P and N come from check_modinfo() (which also refuses a
 *          livepatch module then) before add_unformed_module()'s duplicate check; E and the
 *          hard-coded names after it (check_module_license_and_versions()).
 * Global taints set before a failure stay set, as in the kernel.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/rules/rules.h"

static const struct {
	unsigned bit;
	char letter;
} taint_letters[] = {
	{ 0, 'P' },  { 1, 'F' },  { 7, 'D' },  { 10, 'C' }, { 12, 'O' }, { 13, 'E' },
	{ 15, 'K' }, { 16, 'X' }, { 17, 'T' }, { 18, 'N' }, { 19, 'J' },
};

void kp_taint_letters(unsigned long taints, char *buf, size_t len)
{
	size_t k = 0;

	for (size_t i = 0; i < KP_ARRAY_SIZE(taint_letters) && k + 1 < len; i++)
		if (taints & (1UL << taint_letters[i].bit))
			buf[k++] = taint_letters[i].letter;
	if (len)
		buf[k] = '\0';
}

const char *kp_errno_name(int err)
{
	switch (-err) {
	case 0:
		return NULL;
	case EPERM:
		return "EPERM";
	case ENOENT:
		return "ENOENT";
	case ENOEXEC:
		return "ENOEXEC";
	case EBUSY:
		return "EBUSY";
	case EEXIST:
		return "EEXIST";
	case EINVAL:
		return "EINVAL";
	case EKEYREJECTED:
		return "EKEYREJECTED";
	case -KP_ERR_OOPS:
		return "OOPS";
	case -KP_ERR_BLOCKED:
		return "BLOCKED";
	case -KP_ERR_NOT_RUN:
		return "NOT-RUN";
	case EBADMSG:
		return "EBADMSG";
	case ENOKEY:
		return "ENOKEY";
	case E2BIG:
		return "E2BIG";
	case ELOOP:
		return "ELOOP";
	case EACCES: /* IMA's appraisal (rules/ima.c) */
		return "EACCES";
	case 524: /* the kernel's ENOTSUPP (include/linux/errno.h) */
		return "ENOTSUPP";
	default:
		return "EUNKNOWN";
	}
}

const char *kp_severity_name(enum kp_severity s)
{
	return s == KP_SEV_ERROR ? "error" : s == KP_SEV_WARNING ? "warning" : "note";
}

const char *kp_consequence_name(enum kp_consequence c)
{
	switch (c) {
	case KP_CONS_LOAD_FAIL:
		return "load-fail";
	case KP_CONS_TAINT:
		return "taint";
	case KP_CONS_FEATURE_MISSING:
		return "feature-missing";
	case KP_CONS_WARN:
		break;
	}
	return "warn";
}

static __attribute__((format(printf, 2, 0))) void add_message(struct kp_verdict *v, const char *fmt,
							      va_list ap)
{
	char *s = NULL, **p;

	if (vasprintf(&s, fmt, ap) < 0)
		return;
	p = realloc(v->messages, (v->nmessages + 1) * sizeof(*p));
	if (!p) {
		free(s);
		return;
	}
	v->messages = p;
	v->messages[v->nmessages++] = s;
}

void kp_msg(struct kp_sim_ctx *c, struct kp_loading *ld, const char *fmt, ...)
{
	va_list ap;

	(void)c;
	va_start(ap, fmt);
	add_message(ld->v, fmt, ap);
	va_end(ap);
}

void kp_vmsg(struct kp_verdict *v, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_message(v, fmt, ap);
	va_end(ap);
}

int kp_finding(struct kp_verdict *v, const char *id, enum kp_severity sev, enum kp_consequence cons,
	       const char *symbol, const char *fmt, ...)
{
	struct kp_finding *f;
	va_list ap;
	char *s = NULL;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -1;
	f = realloc(v->findings, (v->nfindings + 1) * sizeof(*f));
	if (!f) {
		free(s);
		return -1;
	}
	v->findings = f;
	f = &v->findings[v->nfindings++];
	memset(f, 0, sizeof(*f));
	f->id = id;
	f->severity = sev;
	f->consequence = cons;
	f->message = s;
	f->symbol = symbol;
	return 0;
}

bool kp_test_taint(const struct kp_sim_ctx *c, unsigned bit)
{
	if (c->rd)
		*(c->late ? &c->rd->taint_late : &c->rd->taint_tested) |= 1UL << bit;
	return c->sim->global_taint & (1UL << bit);
}

/* add_taint(): kernel/panic.c; LOCKDEP_NOW_UNRELIABLE turns lock debugging off once. */
void kp_add_taint(struct kp_sim_ctx *c, struct kp_loading *ld, unsigned bit,
		  bool lockdep_unreliable)
{
	c->sim->global_taint |= 1UL << bit;
	if (c->rd)
		c->rd->taint_set |= 1UL << bit;
	if (lockdep_unreliable && !kp_once_done(c, KP_ONCE_DEBUG_LOCKS)) {
		kp_once_mark(c, KP_ONCE_DEBUG_LOCKS);
		kp_msg(c, ld, "Disabling lock debugging due to kernel taint");
	}
}

/* add_taint_module(): the module's own taint, then the global one. */
void kp_add_taint_module(struct kp_sim_ctx *c, struct kp_loading *ld, unsigned bit,
			 bool lockdep_unreliable)
{
	ld->v->taints |= 1UL << bit;
	kp_add_taint(c, ld, bit, lockdep_unreliable);
}

/* try_to_force_load(): F with CONFIG_MODULE_FORCE_LOAD, else -ENOEXEC (all versions). */
int kp_try_to_force_load(struct kp_sim_ctx *c, struct kp_loading *ld, const char *reason)
{
	if (!c->f->force_load)
		return -ENOEXEC;
	if (!kp_test_taint(c, KP_TAINT_FORCED_MODULE))
		kp_msg(c, ld, "%s: %s: kernel tainted.", ld->name, reason);
	kp_add_taint_module(c, ld, KP_TAINT_FORCED_MODULE, true);
	return 0;
}

static int load_one(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	bool taint_after_dup = c->p->has[KP_F_TAINT_AFTER_DUP];
	int err;

	if ((err = kp_rule_ima_appraise_module(c, ld)) || (err = kp_rule_module_sig_check(c, ld)) ||
	    (err = kp_rule_elf_validity(c, ld)))
		return err;
	if (kp_rule_check_modstruct_version(c, ld)) {
		kp_finding(ld->v, "module-layout", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
			   "struct module layout (module_layout CRC) differs: built for another "
			   "kernel");
		return -ENOEXEC;
	}
	if ((err = kp_rule_check_modinfo_vermagic(c, ld)))
		return err;
	if (taint_after_dup) {
		/* early_mod_check()'s lock and duplicate check, then layout_and_allocate() */
		if ((err = kp_rule_module_mutex_lock(c, ld)) ||
		    (err = kp_rule_module_patient_check_exists(c, ld)) ||
		    (err = kp_rule_layout_symtab(c, ld)))
			return err;
		ld->listed = true;
		kp_rule_module_augment_kernel_taints(c, ld);
	} else {
		/* layout_and_allocate()'s check_modinfo(), then add_unformed_module() */
		if ((err = kp_rule_check_modinfo_taints(c, ld)) ||
		    (err = kp_rule_layout_symtab(c, ld)) ||
		    (err = kp_rule_module_mutex_lock(c, ld)) ||
		    (err = kp_rule_module_patient_check_exists(c, ld)))
			return err;
		ld->listed = true;
	}
	kp_rule_find_module_sections(c, ld);
	if (!taint_after_dup)
		kp_rule_check_module_license_taints(c, ld);
	if ((err = kp_rule_check_export_symbol_sections(c, ld)))
		return err;
	if ((err = kp_rule_setup_modinfo(c, ld)))
		return err;
	if ((err = kp_rule_simplify_symbols(c, ld)) || (err = kp_rule_apply_relocations(c, ld)))
		return err;
	if ((err = kp_rule_verify_exported_symbols(c, ld)))
		return err;
	/* ... apply_relocations(), complete_formation(), then prepare_coming_module() */
	return kp_rule_btf_module_notify(c, ld);
}

/*
 * An oops in process context (kernel/exit.c make_task_dead()): the global D taint, the task
 * killed with what it held; the loader may be left stalled (stall.c) and the module in the
 * list, UNFORMED, when the oops came after add_unformed_module() (all versions).
 */
static int after_oops(struct kp_sim_ctx *c, struct kp_loading *ld, size_t i)
{
	struct kp_verdict *v = ld->v;

	c->sim->global_taint |= 1UL << KP_TAINT_DIE;
	if (c->rd)
		c->rd->taint_set |= 1UL << KP_TAINT_DIE;
	/*
	 * oops_enter()'s debug_locks_off() (kernel/panic.c, all versions) turns lock debugging
	 * off silently: no later taint prints "Disabling lock debugging" (6.1.192 oracle,
	 * strtab_modprefix_noprov: kp_prop_prov's P after the oops, no such line)
	 */
	if (!kp_once_done(c, KP_ONCE_DEBUG_LOCKS))
		kp_once_mark(c, KP_ONCE_DEBUG_LOCKS);
	if (v->hangs)
		kp_mark_stall(c, KP_STALL_HUNG, i);
	else if (v->holds_module_mutex)
		kp_mark_stall(c, KP_STALL_MUTEX, i);
	v->left_unformed = ld->listed;
	if (v->left_unformed && kp_symbol_index_add(&c->unformed_names, ld->m->name, &v->node) < 0)
		return -1;
	return 0;
}

static void note_failed_deps(struct kp_sim_ctx *c, struct kp_verdict *v)
{
	const struct kp_node *nd = &c->g->nodes[v->node];

	v->failed_dep = SIZE_MAX;
	for (size_t d = 0; d < nd->ndeps; d++) {
		const struct kp_verdict *dv = &c->sim->v[nd->deps[d]];

		kp_read_verdict(c, nd->deps[d]);
		if (dv->attempted && !dv->loads) {
			v->failed_dep = nd->deps[d];
			kp_finding(v, "dependency-failed", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
				   "depends on %s, which fails to load",
				   c->g->nodes[nd->deps[d]].mod->name);
			return;
		}
	}
}

/*
 * A module that loads although a dependency failed used it only through weak symbols:
 * simplify_symbols() leaves them 0. The dependency-failed error becomes a warning naming them.
 */
static int weak_dependency(struct kp_sim_ctx *c, struct kp_verdict *v)
{
	const struct kp_node *nd = &c->g->nodes[v->node];
	struct kp_finding *f = NULL;
	char *list = NULL, *msg = NULL;
	size_t len = 0;
	FILE *mem;

	for (size_t i = 0; i < v->nfindings; i++)
		if (!strcmp(v->findings[i].id, "dependency-failed"))
			f = &v->findings[i];
	if (!f)
		return 0;
	mem = open_memstream(&list, &len);
	if (!mem)
		return -1;
	for (size_t e = 0, k = 0; e < nd->nedges; e++) {
		const struct kp_edge *ed = &nd->edges[e];
		const struct kp_import *imp = kp_edge_import(nd, ed);

		if (ed->kind == KP_PROV_MODULE && ed->node == v->failed_dep && imp->weak)
			fprintf(mem, "%s%s", k++ ? ", " : "", imp->name);
	}
	if (fclose(mem) != 0) {
		free(list);
		return -1;
	}
	if (asprintf(&msg,
		     "%s fails to load: the weak symbols this module imports from it (%s) "
		     "stay NULL",
		     c->g->nodes[v->failed_dep].mod->name, list) < 0) {
		free(list);
		return -1;
	}
	free(list);
	free(f->message);
	f->message = msg;
	f->id = "weak-dependency-failed";
	f->severity = KP_SEV_WARNING;
	f->consequence = KP_CONS_WARN;
	return 0;
}

/*
 * Loads the @k-th module of the load order in @c (its verdict in c->sim, its record when
 * c->sim records); @seq counts the loads that succeeded. 0, or -1 when out of memory.
 */
static int load_at(struct kp_sim_ctx *c, size_t k, size_t *seq)
{
	const struct kp_graph *g = c->g;
	const struct kp_kernel_facts *facts = c->f;
	struct kp_simulation *sim = c->sim;
	size_t i = g->order[k];
	struct kp_verdict *v = &sim->v[i];
	const struct kp_module *m = g->nodes[i].mod;
	struct kp_loading ld = {
		.v = v,
		.node = &g->nodes[i],
		.m = m,
		.name = m->name,
		.info_name = m->modinfo_name ? m->modinfo_name : m->name,
		/* setup_load_info(): MODULE_INIT_IGNORE_MODVERSIONS zeroes index.vers */
		.has_versions = m->versions_format != KP_VERSIONS_NONE && m->versions_alloc &&
				!(facts->init_flags & KP_INIT_IGNORE_MODVERSIONS),
	};
	unsigned long before = sim->global_taint;

	v->node = i;
	v->attempted = true;
	v->p_from = SIZE_MAX;
	v->stalled_by = SIZE_MAX;
	if (sim->rec) {
		c->rd = &sim->rec[i];
		c->rd->taint_before = before;
		c->rd->once_before = c->once;
	}
	v->err = kp_rule_machine_hung(c, &ld);
	if (!v->err) {
		note_failed_deps(c, v);
		v->err = load_one(c, &ld);
	}
	kp_loading_release(&ld);
	if (v->err == KP_ERR_OOPS && after_oops(c, &ld, i) < 0)
		return -1;
	v->loads = v->err == 0;
	if (v->loads && v->failed_dep != SIZE_MAX && weak_dependency(c, v) < 0)
		return -1;
	if (c->rd) {
		c->rd->nmessages_load = (uint32_t)v->nmessages;
		c->rd->nfindings_load = (uint32_t)v->nfindings;
	}
	v->global_added = sim->global_taint & ~before;
	v->global_after = sim->global_taint & ~facts->initial_taint;
	if (v->loads) {
		v->load_seq = ++*seq;
		c->loaded[c->nloaded++] = i;
		if (kp_symbol_index_add(&c->live_names, m->name, NULL) < 0)
			return -1;
	}
	c->rd = NULL;
	return 0;
}

/* @c's tables for @g's loads: the live modules, facts->loaded's names among them. 0 or -1. */
static int ctx_init(struct kp_sim_ctx *c, const struct kp_graph *g,
		    const struct kp_kernel_facts *facts)
{
	c->loaded = kp_calloc(g->n ? g->n : 1, sizeof(*c->loaded));
	if (!c->loaded || kp_symbol_index_init(&c->live_names, g->n + facts->nloaded) < 0 ||
	    kp_symbol_index_init(&c->unformed_names, 4) < 0)
		return -1;
	for (size_t i = 0; i < facts->nloaded; i++)
		if (kp_symbol_index_add(&c->live_names, facts->loaded[i], NULL) < 0)
			return -1;
	return 0;
}

static void ctx_release(struct kp_sim_ctx *c)
{
	free(c->loaded);
	kp_symbol_index_release(&c->live_names);
	kp_symbol_index_release(&c->unformed_names);
}

static int simulate(const struct kp_graph *g, const struct kp_kernel_facts *facts,
		    struct kp_simulation *sim, bool record, struct kp_err *err)
{
	struct kp_sim_ctx c = { .sim = sim, .g = g, .f = facts, .p = &facts->profile };
	size_t seq = 0;

	memset(sim, 0, sizeof(*sim));
	sim->graph = g;
	sim->facts = facts;
	sim->global_taint = facts->initial_taint;
	if (facts->initial_taint & (1UL << KP_TAINT_UNSIGNED_MODULE))
		c.once |= 1u << KP_ONCE_SIG_NOTICE;
	if (facts->initial_taint &
	    ((1UL << KP_TAINT_PROPRIETARY_MODULE) | (1UL << KP_TAINT_FORCED_MODULE)))
		c.once |= 1u << KP_ONCE_DEBUG_LOCKS;
	sim->n = g->n;
	sim->v = kp_calloc(g->n ? g->n : 1, sizeof(*sim->v));
	if (record && !(sim->rec = kp_calloc(g->n ? g->n : 1, sizeof(*sim->rec))))
		goto oom;
	if (!sim->v || ctx_init(&c, g, facts) < 0)
		goto oom;
	for (size_t k = 0; k < g->n; k++)
		if (load_at(&c, k, &seq) < 0)
			goto oom;
	/* symbol_get() runs later, against everything that loaded. */
	c.late = true;
	for (size_t i = 0; i < g->n; i++) {
		c.rd = record ? &sim->rec[i] : NULL;
		if (sim->v[i].loads && kp_rule_symbol_get(&c, &sim->v[i]) < 0)
			goto oom;
	}
	c.rd = NULL;
	ctx_release(&c);
	return 0;
oom:
	ctx_release(&c);
	kp_simulation_release(sim);
	return kp_err_set(err, "out of memory");
}

int kp_simulate_one(const struct kp_graph *g, const struct kp_kernel_facts *facts,
		    const struct kp_verdict *before, size_t k, const struct kp_sim_state *st,
		    struct kp_simulation *out, struct kp_err *err)
{
	/* the loads before its place as they were (borrowed), the later ones not attempted */
	struct kp_simulation w = { .graph = g, .facts = facts, .n = g->n };
	struct kp_sim_ctx c = { .sim = &w,
				.g = g,
				.f = facts,
				.p = &facts->profile,
				.once = st->once,
				.stall = st->stall };
	size_t seq = 0, i;

	memset(out, 0, sizeof(*out));
	if (k >= g->n)
		return kp_err_set(err, "no module at place %zu of %zu", k, g->n);
	i = g->order[k];
	w.global_taint = st->taint;
	w.v = kp_calloc(g->n, sizeof(*w.v));
	w.rec = kp_calloc(g->n, sizeof(*w.rec));
	out->v = kp_calloc(g->n, sizeof(*out->v));
	if (!w.v || !w.rec || !out->v || ctx_init(&c, g, facts) < 0)
		goto oom;
	for (size_t j = 0; j < k; j++) {
		size_t p = g->order[j];

		w.v[p] = before[p];
		if (w.v[p].loads) {
			c.loaded[c.nloaded++] = p;
			seq = w.v[p].load_seq > seq ? w.v[p].load_seq : seq;
			if (kp_symbol_index_add(&c.live_names, g->nodes[p].mod->name, NULL) < 0)
				goto oom;
		} else if (w.v[p].left_unformed &&
			   kp_symbol_index_add(&c.unformed_names, g->nodes[p].mod->name,
					       &w.v[p].node) < 0) {
			goto oom;
		}
	}
	if (load_at(&c, k, &seq) < 0)
		goto oom;
	out->graph = g;
	out->facts = facts;
	out->n = g->n;
	out->global_taint = w.global_taint;
	out->v[i] = w.v[i];
	out->rec = w.rec;
	out->reads = w.reads;
	out->nreads = w.nreads;
	out->creads = w.creads;
	out->reads_incomplete = w.reads_incomplete;
	free(w.v);
	ctx_release(&c);
	return 0;
oom:
	/* only the verdict at @i is this run's own */
	if (w.v && out->v) {
		out->v[i] = w.v[i];
		out->n = g->n;
	}
	free(w.v);
	free(w.rec);
	free(w.reads);
	ctx_release(&c);
	kp_simulation_release(out);
	return kp_err_set(err, "out of memory");
}

int kp_simulate_one_late(const struct kp_graph *g, const struct kp_kernel_facts *facts,
			 const struct kp_verdict *final, unsigned long final_taint,
			 struct kp_simulation *one, size_t i, struct kp_err *err)
{
	struct kp_simulation w = *one;
	struct kp_sim_ctx c = { .sim = &w, .g = g, .f = facts, .p = &facts->profile, .late = true };
	int r = 0;

	if (!one->v[i].loads)
		return 0;
	w.v = kp_calloc(g->n, sizeof(*w.v));
	if (!w.v)
		return kp_err_set(err, "out of memory");
	memcpy(w.v, final, g->n * sizeof(*w.v));
	w.v[i] = one->v[i];
	w.global_taint = final_taint;
	c.rd = one->rec ? &one->rec[i] : NULL;
	if (kp_rule_symbol_get(&c, &w.v[i]) < 0)
		r = kp_err_set(err, "out of memory");
	one->v[i] = w.v[i];
	one->reads = w.reads;
	one->nreads = w.nreads;
	one->creads = w.creads;
	one->reads_incomplete = w.reads_incomplete;
	free(w.v);
	return r;
}

int kp_simulate(const struct kp_graph *g, const struct kp_kernel_facts *facts,
		struct kp_simulation *sim, struct kp_err *err)
{
	return simulate(g, facts, sim, false, err);
}

int kp_simulate_recorded(const struct kp_graph *g, const struct kp_kernel_facts *facts,
			 struct kp_simulation *sim, struct kp_err *err)
{
	return simulate(g, facts, sim, true, err);
}

void kp_simulation_release(struct kp_simulation *sim)
{
	for (size_t i = 0; sim->v && i < sim->n; i++) {
		struct kp_verdict *v = &sim->v[i];

		for (size_t j = 0; j < v->nmessages; j++)
			free(v->messages[j]);
		free(v->messages);
		for (size_t j = 0; j < v->nfindings; j++)
			free(v->findings[j].message);
		free(v->findings);
		free(v->symget);
	}
	free(sim->v);
	free(sim->rec);
	free(sim->reads);
	memset(sim, 0, sizeof(*sim));
}
