// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * find-symbol.c: find_symbol() (kernel/module/main.c v5.9 … v7.2): vmlinux first, then live
 * modules newest first, a GPL-only table skipped when !gplok; before v5.12 the GPL_FUTURE and
 * UNUSED tables; v7.1+ one __ksymtab with __kflagstab bits. Driven directly through the rule
 * interface (sim/rules/rules.h) on a run simulation.
 */
#include "builder.h"
#include "sim/rules/rules.h"

static struct kp_sim_ctx ctx(struct tb_world *w)
{
	struct kp_sim_ctx c = {
		.sim = &w->sim, .g = &w->g, .f = &w->facts, .p = &w->facts.profile
	};

	return c;
}

static void vmlinux_tables(struct tap *t)
{
	struct tb_world w;
	struct kp_sim_ctx c;
	struct kp_found fs;

	tb_init(&w, "5.10.223");
	tb_std_kernel(&w);
	tb_run(&w);
	c = ctx(&w);
	tap_ok(t,
	       kp_find_symbol(&c, "gpl_fn", true, &fs) && fs.gpl_only &&
		       fs.kind == KP_PROV_VMLINUX && fs.has_crc && fs.crc == 0x22222222,
	       "gpl_fn, gplok: vmlinux, GPL-only, CRC");
	tap_ok(t, !kp_find_symbol(&c, "gpl_fn", false, &fs), "gpl_fn, !gplok: not found");
	tap_ok(t, kp_find_symbol(&c, "fut_fn", false, &fs) && fs.gpl_future && !fs.gpl_only,
	       "5.10: fut_fn, !gplok: found as GPL_FUTURE");
	tap_ok(t, kp_find_symbol(&c, "ns_fn", true, &fs) && fs.ns && !strcmp(fs.ns, "MY_NS"),
	       "ns_fn: namespace MY_NS");
	tap_ok(t, !kp_find_symbol(&c, "nowhere", true, &fs), "nowhere: not found");
	tb_free(&w);

	tb_init(&w, "5.12.0");
	tb_std_kernel(&w);
	tb_run(&w);
	c = ctx(&w);
	tap_ok(t, !kp_find_symbol(&c, "fut_fn", true, &fs), "5.12: GPL_FUTURE table gone");
	tb_free(&w);
}

static void newest_first(struct tap *t)
{
	struct tb_world w;
	struct kp_sim_ctx c;
	struct kp_found fs;
	struct kp_module *a, *b;

	/* Two live exporters (the kernel refuses the second; here forced for the search order). */
	tb_init(&w, "6.12.37");
	a = tb_module(&w, "a");
	tb_export(a, "x_fn", KP_KSYMTAB);
	b = tb_module(&w, "b");
	tb_export(b, "x_fn", KP_KSYMTAB_GPL);
	tb_run(&w);
	w.sim.v[1].loads = true;
	w.sim.v[1].load_seq = 2;
	c = ctx(&w);
	tap_ok(t,
	       kp_find_symbol(&c, "x_fn", true, &fs) && fs.kind == KP_PROV_MODULE &&
		       !strcmp(fs.owner_name, "b") && fs.gpl_only,
	       "newest live module first (list_add_rcu() at the head)");
	tap_ok(t, kp_find_symbol(&c, "x_fn", false, &fs) && !strcmp(fs.owner_name, "a"),
	       "!gplok: b's GPL-only entry skipped, the search goes on to a");
	w.sim.v[1].loads = false;
	tap_ok(t, kp_find_symbol(&c, "x_fn", true, &fs) && !strcmp(fs.owner_name, "a"),
	       "a module that failed is not searched");
	tb_free(&w);
}

static void base_modules(struct tap *t)
{
	static const char *const prop[] = { "base_mod" };
	struct tb_world w;
	struct kp_sim_ctx c;
	struct kp_found fs;
	struct kp_module *m;

	tb_init(&w, "6.12.37");
	tb_std_kernel(&w);
	w.facts.loaded_proprietary = prop;
	w.facts.nloaded_proprietary = 1;
	tb_run(&w);
	c = ctx(&w);
	tap_ok(t,
	       kp_find_symbol(&c, "base_gpl", true, &fs) && fs.kind == KP_PROV_BASE_MODULE &&
		       !strcmp(fs.owner_name, "base_mod") && fs.owner_proprietary && fs.gpl_only,
	       "Module.symvers module export: owner base_mod (KBUILD_MODNAME), P from facts");
	tb_free(&w);

	/* A set module of the same name hides the base's entries: the set's reading wins. */
	tb_init(&w, "6.12.37");
	tb_std_kernel(&w);
	m = tb_module(&w, "base_mod");
	tb_export(m, "base_fn", KP_KSYMTAB);
	tb_run(&w);
	c = ctx(&w);
	tap_ok(t, kp_find_symbol(&c, "base_fn", true, &fs) && fs.kind == KP_PROV_MODULE,
	       "the set's base_mod exports base_fn");
	tap_ok(t, !kp_find_symbol(&c, "base_gpl", true, &fs),
	       "base_gpl of the base's base_mod is hidden");
	tb_free(&w);
}

static void kflagstab(struct tap *t)
{
	struct tb_world w;
	struct kp_sim_ctx c;
	struct kp_found fs;
	struct kp_module *m;
	bool gpl = false;

	tb_init(&w, "7.2.13");
	m = tb_module(&w, "m");
	tb_export_flag(m, "flag_gpl", true);
	tb_export_flag(m, "flag_plain", false);
	tb_export(m, "old_gpl", KP_KSYMTAB_GPL);
	tb_run(&w);
	c = ctx(&w);
	tap_ok(t, kp_find_symbol(&c, "flag_gpl", true, &fs) && fs.gpl_only,
	       "7.2: __kflagstab GPL bit");
	tap_ok(t, !kp_find_symbol(&c, "flag_gpl", false, &fs), "7.2: GPL bit hidden from !gplok");
	tap_ok(t, kp_find_symbol(&c, "flag_plain", false, &fs) && !fs.gpl_only, "7.2: plain");
	tap_ok(t, !kp_find_symbol(&c, "old_gpl", true, &fs), "7.2: __ksymtab_gpl ignored");
	tap_ok(t, !kp_export_class(&c, &m->exports[2], &gpl), "kp_export_class: not visible");
	tb_free(&w);

	tb_init(&w, "7.0.0");
	m = tb_module(&w, "m");
	tb_export(m, "old_gpl", KP_KSYMTAB_GPL);
	tb_export(m, "unused_gpl", KP_KSYMTAB_UNUSED_GPL);
	tb_run(&w);
	c = ctx(&w);
	tap_ok(t, kp_find_symbol(&c, "old_gpl", true, &fs) && fs.gpl_only,
	       "7.0: __ksymtab_gpl is GPL-only");
	tap_ok(t, !kp_find_symbol(&c, "unused_gpl", true, &fs), "7.0: no unused tables");
	tb_free(&w);

	tb_init(&w, "5.10.223");
	m = tb_module(&w, "m");
	tb_export(m, "unused_gpl", KP_KSYMTAB_UNUSED_GPL);
	tb_run(&w);
	c = ctx(&w);
	tap_ok(t, kp_find_symbol(&c, "unused_gpl", true, &fs) && fs.gpl_only,
	       "5.10: __ksymtab_unused_gpl is GPL-only");
	tb_free(&w);
}

int main(void)
{
	struct tap t = { 0 };

	vmlinux_tables(&t);
	newest_first(&t);
	base_modules(&t);
	kflagstab(&t);
	return tap_done(&t);
}
