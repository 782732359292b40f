// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * loader.c: kp_simulate() runs the rules in load_module()'s order; failed dependencies,
 * weak-only dependencies, the load sequence, per-step global taint, and the name tables.
 */
#include <errno.h>
#include <elf.h>

#include "builder.h"

static void check_order(struct tap *t)
{
	static const char *const bl[] = { "m" };
	static const char *const loaded[] = { "m" };
	struct tb_world w;
	struct kp_module *m;

	/* module_sig_check() before the ELF checks. */
	tb_init(&w, "6.12.37");
	w.facts.module_sig = w.facts.sig_enforce = true;
	m = tb_module(&w, "m");
	m->has_symtab = false;
	tb_run(&w);
	tap_is_int(t, tb_v(&w, "m")->err, -EKEYREJECTED, "signature before ELF validity");
	tb_free(&w);
	/* blacklisted() before check_modstruct_version(). */
	tb_init(&w, "6.12.37");
	tb_std_kernel(&w);
	w.facts.modversions = true;
	w.facts.blacklist = bl;
	w.facts.nblacklist = 1;
	m = tb_module(&w, "m");
	tb_version(m, "module_layout", 1);
	tb_run(&w);
	tap_is_int(t, tb_v(&w, "m")->err, -EPERM, "blacklist before module_layout");
	tb_free(&w);
	/* check_modinfo() (vermagic) before the duplicate name, v6.4+ and before. */
	tb_init(&w, "6.12.37");
	w.facts.vermagic = "7.0.0 SMP mod_unload ";
	w.facts.loaded = loaded;
	w.facts.nloaded = 1;
	tb_module(&w, "m");
	tb_run(&w);
	tap_is_int(t, tb_v(&w, "m")->err, -ENOEXEC, "vermagic before the duplicate name");
	tb_free(&w);
	/* setup_modinfo() before simplify_symbols(). */
	tb_init(&w, "6.16.0");
	m = tb_module(&w, "m");
	tb_modinfo(m, "import_ns", "module:x");
	tb_import(m, "nowhere");
	tb_run(&w);
	tap_is_int(t, tb_v(&w, "m")->err, -EPERM, "setup_modinfo before simplify_symbols");
	tb_free(&w);
	/* simplify_symbols() before verify_exported_symbols(). */
	tb_init(&w, "6.12.37");
	tb_std_kernel(&w);
	m = tb_module(&w, "m");
	tb_export(m, "printk", KP_KSYMTAB);
	tb_import(m, "nowhere");
	tb_run(&w);
	tap_is_int(t, tb_v(&w, "m")->err, -ENOENT, "simplify_symbols before duplicate exports");
	tb_free(&w);
}

static void dependencies(struct tap *t)
{
	struct tb_world w;
	struct kp_module *a, *b, *c, *d;
	const struct kp_verdict *v;
	const struct kp_finding *f;

	tb_init(&w, "6.12.37");
	a = tb_module(&w, "a");
	tb_export(a, "a_fn", KP_KSYMTAB);
	tb_export(a, "a_weak", KP_KSYMTAB);
	tb_import(a, "nowhere");
	b = tb_module(&w, "b");
	tb_import(b, "a_fn");
	c = tb_module(&w, "c");
	tb_import_weak(c, "a_weak");
	tb_import_weak(c, "a_fn");
	d = tb_module(&w, "d");
	(void)d;
	tb_run(&w);
	v = tb_v(&w, "b");
	tap_is_int(t, v->err, -ENOENT, "b: its provider failed: ENOENT");
	tap_is_int(t, v->failed_dep, tb_node(&w, "a"), "b: failed_dep is a");
	tap_is_str(t, tb_findings(&w, "b"), "dependency-failed,unknown-symbol", "b: findings");
	tb_is_text(t, tb_dmesg(&w, "b"), "b: Unknown symbol a_fn (err -2)", "b: dmesg");
	v = tb_v(&w, "c");
	tap_ok(t, v->loads, "c: weak imports only: loads");
	f = tb_finding(&w, "c", "weak-dependency-failed");
	tap_ok(t, f && f->severity == KP_SEV_WARNING, "c: weak-dependency-failed warning");
	tap_is_str(t, f ? f->message : NULL,
		   "a fails to load: the weak symbols this module imports from it (a_weak, a_fn) "
		   "stay NULL",
		   "c: names the weak symbols in .symtab order");
	tap_ok(t,
	       tb_v(&w, "c")->load_seq == 1 && tb_v(&w, "d")->load_seq == 2 &&
		       tb_v(&w, "a")->load_seq == 0,
	       "load_seq counts successful loads only");
	tb_free(&w);
}

static void global_taint(struct tap *t)
{
	struct tb_world w;
	struct kp_module *a, *b;

	tb_init(&w, "6.12.37");
	w.facts.initial_taint = 1UL << KP_TAINT_UNSIGNED_MODULE;
	a = tb_module(&w, "a");
	a->intree = false;
	b = tb_module(&w, "b");
	tb_modinfo(b, "license", "Proprietary");
	tb_import(b, "nowhere");
	tb_run(&w);
	tap_is_int(t, tb_v(&w, "a")->global_added, 1UL << KP_TAINT_OOT_MODULE, "a adds O");
	tap_is_int(t, tb_v(&w, "b")->global_added, 1UL << KP_TAINT_PROPRIETARY_MODULE,
		   "b adds P although it fails (taints stay set)");
	tap_is_int(t, tb_v(&w, "b")->global_after,
		   (1UL << KP_TAINT_OOT_MODULE) | (1UL << KP_TAINT_PROPRIETARY_MODULE),
		   "global_after without the initial E");
	tap_is_str(t, tb_global(&w), "POE", "global mask");
	tb_is_text(t, tb_dmesg(&w, "b"),
		   "b: module license 'Proprietary' taints kernel.\n"
		   "Disabling lock debugging due to kernel taint\n"
		   "b: module license taints kernel.\n"
		   "b: Unknown symbol nowhere (err -2)",
		   "b: dmesg");
	tb_free(&w);
}

static void names(struct tap *t)
{
	char buf[32];

	kp_taint_letters(~0UL, buf, sizeof(buf));
	tap_is_str(t, buf, "PFDCOEKXTNJ", "every module taint letter, in bit order");
	kp_taint_letters((1UL << 0) | (1UL << 13), buf, 2);
	tap_is_str(t, buf, "P", "truncated to the buffer");
	tap_is_str(t, kp_errno_name(0), NULL, "errno 0");
	tap_is_str(t, kp_errno_name(-EKEYREJECTED), "EKEYREJECTED", "EKEYREJECTED");
	tap_is_str(t, kp_errno_name(-ENOEXEC), "ENOEXEC", "ENOEXEC");
	tap_is_str(t, kp_errno_name(-ENOSPC), "EUNKNOWN", "an errno the loader never returns");
	tap_is_str(t, kp_severity_name(KP_SEV_WARNING), "warning", "severity");
	tap_is_str(t, kp_consequence_name(KP_CONS_FEATURE_MISSING), "feature-missing",
		   "consequence");
}

int main(void)
{
	struct tap t = { 0 };

	check_order(&t);
	dependencies(&t);
	global_taint(&t);
	names(&t);
	return tap_done(&t);
}
