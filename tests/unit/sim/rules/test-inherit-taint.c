// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * inherit-taint.c: inherit_taint() (262e6ae7081d, v5.9; stable 4.4.269 … 5.4.118), its messages
 * (the symbol named since v5.19), the refusal of a module that already uses GPL-only symbols,
 * and the .symtab order that decides between the two (kernel/module/main.c resolve_symbol()).
 */
#include <errno.h>

#include "builder.h"
#include "tap.h"

/* prop (Proprietary, exports prop_fn) and user importing @first then @second (NULL: none). */
static void world(struct tb_world *w, const char *release, const char *first, const char *second,
		  bool second_weak)
{
	struct kp_module *p, *u;

	tb_init(w, release);
	tb_std_kernel(w);
	p = tb_module(w, "prop");
	tb_modinfo(p, "license", "Proprietary");
	if (w->facts.profile.has[KP_F_KFLAGSTAB])
		tb_export_flag(p, "prop_fn", false); /* v7.1+: __ksymtab + __kflagstab */
	else
		tb_export(p, "prop_fn", KP_KSYMTAB);
	u = tb_module(w, "user");
	tb_import(u, first);
	if (second && second_weak)
		tb_import_weak(u, second);
	else if (second)
		tb_import(u, second);
	tb_run(w);
}

static void no_rule(struct tap *t, const char *release)
{
	struct tb_world w;
	char what[128];

	world(&w, release, "prop_fn", NULL, false);
	snprintf(what, sizeof(what), "%s: user of a P module stays untainted", release);
	tap_is_str(t, tb_taints(&w, "user"), "", what);
	snprintf(what, sizeof(what), "%s: no inherit line", release);
	tb_is_text(t, tb_dmesg(&w, "user"), "", what);
	tap_ok(t, tb_v(&w, "user")->loads, "%s: user loads", release);
	tb_free(&w);
}

static void inherits(struct tap *t, const char *release, const char *line)
{
	struct tb_world w;
	const struct kp_verdict *v;
	char what[128];

	world(&w, release, "prop_fn", NULL, false);
	v = tb_v(&w, "user");
	snprintf(what, sizeof(what), "%s: user inherits P", release);
	tap_is_str(t, tb_taints(&w, "user"), "P", what);
	snprintf(what, sizeof(what), "%s: inherit line", release);
	tb_is_text(t, tb_dmesg(&w, "user"), line, what);
	snprintf(what, sizeof(what), "%s: finding", release);
	tap_is_str(t, tb_findings(&w, "user"), "inherit-taint", what);
	tap_ok(t,
	       v->loads && v->p_reason == KP_P_INHERITED && v->p_from == tb_node(&w, "prop") &&
		       v->p_symbol && !strcmp(v->p_symbol, "prop_fn"),
	       "%s: evidence: inherited from prop through prop_fn", release);
	/* set_bit() on mod->taints only: the global mask is prop's P alone. */
	tap_is_int(t, v->global_added, 0, "inheriting adds nothing to the global mask");
	tb_free(&w);
}

static void gpl_then_prop(struct tap *t)
{
	struct tb_world w;
	const struct kp_verdict *v;

	/* v6.12: gpl_fn sets using_gplonly_symbols, then the P import is refused. */
	world(&w, "6.12.37", "gpl_fn", "prop_fn", false);
	v = tb_v(&w, "user");
	tap_is_int(t, v->err, -ENOENT, "GPL-only then P import: ENOENT");
	tb_is_text(t, tb_dmesg(&w, "user"),
		   "user: module using GPL-only symbols uses symbols prop_fn from proprietary "
		   "module prop.\nuser: Unknown symbol prop_fn (err -2)",
		   "GPL-only then P import: the kernel's lines");
	tap_is_str(t, tb_findings(&w, "user"), "gpl-proprietary-mix", "finding");
	tap_is_str(t, tb_taints(&w, "user"), "", "the refused module gets no P");
	tb_free(&w);

	/* v5.10: the same refusal, the line without the symbol. */
	world(&w, "5.10.223", "gpl_fn", "prop_fn", false);
	tb_is_text(t, tb_dmesg(&w, "user"),
		   "user: module using GPL-only symbols uses symbols from proprietary module "
		   "prop.\nuser: Unknown symbol prop_fn (err -2)",
		   "5.10: refusal line without the symbol");
	tb_free(&w);

	/* Before the rule (5.8): both resolve, nothing inherited. */
	world(&w, "5.8.18", "gpl_fn", "prop_fn", false);
	tap_ok(t, tb_v(&w, "user")->loads, "5.8: GPL-only + P import loads");
	tap_is_str(t, tb_taints(&w, "user"), "", "5.8: no P");
	tb_free(&w);
}

static void prop_then_gpl(struct tap *t)
{
	struct tb_world w;
	const struct kp_verdict *v;

	/* The P import first: user inherits P, then gpl_fn is invisible (gplok false). */
	world(&w, "6.12.37", "prop_fn", "gpl_fn", false);
	v = tb_v(&w, "user");
	tap_is_int(t, v->err, -ENOENT, "P then GPL-only import: ENOENT");
	tb_is_text(t, tb_dmesg(&w, "user"),
		   "user: module uses symbols prop_fn from proprietary module prop, inheriting "
		   "taint.\nuser: Unknown symbol gpl_fn (err -2)",
		   "P then GPL-only: the kernel's lines");
	tap_is_str(t, tb_findings(&w, "user"), "inherit-taint,gpl-only-symbol",
		   "P then GPL-only: findings");
	tap_is_str(t, tb_taints(&w, "user"), "P", "P then GPL-only: P was set before the failure");
	tb_free(&w);

	/* A weak GPL-only import after the P one: left NULL, the module loads with P. */
	world(&w, "6.12.37", "prop_fn", "gpl_fn", true);
	v = tb_v(&w, "user");
	tap_ok(t, v->loads, "P then weak GPL-only: loads");
	tb_is_text(t, tb_dmesg(&w, "user"),
		   "user: module uses symbols prop_fn from proprietary module prop, inheriting "
		   "taint.",
		   "P then weak GPL-only: only the inherit line");
	tb_free(&w);
}

static void already_proprietary(struct tap *t)
{
	struct tb_world w;
	struct kp_module *p, *u;

	tb_init(&w, "6.12.37");
	tb_std_kernel(&w);
	p = tb_module(&w, "prop");
	tb_modinfo(p, "license", "Proprietary");
	tb_export(p, "prop_fn", KP_KSYMTAB);
	u = tb_module(&w, "user");
	tb_modinfo(u, "license", "Proprietary");
	tb_import(u, "prop_fn");
	tb_run(&w);
	/* test_bit(P, &mod->taints): no second line; the license one is once per boot. */
	tb_is_text(t, tb_dmesg(&w, "user"), "", "a P module importing from a P module: silent");
	tap_is_int(t, tb_v(&w, "user")->p_reason, KP_P_LICENSE, "P from its own license");
	tb_free(&w);
}

static void base_owner(struct tap *t)
{
	static const char *const prop_loaded[] = { "base_mod" };
	struct tb_world w;
	struct kp_module *u;

	/* An owner loaded before the set (running system): P known from facts. */
	tb_init(&w, "6.1.129");
	tb_std_kernel(&w);
	w.facts.loaded_proprietary = prop_loaded;
	w.facts.nloaded_proprietary = 1;
	u = tb_module(&w, "user");
	tb_import(u, "base_fn");
	tb_run(&w);
	tb_is_text(t, tb_dmesg(&w, "user"),
		   "user: module uses symbols base_fn from proprietary module base_mod, "
		   "inheriting taint.",
		   "a proprietary base module passes P on");
	tap_is_int(t, tb_v(&w, "user")->p_from, SIZE_MAX, "no set node to point to");
	tb_free(&w);

	/* The same base module not known as proprietary: nothing. */
	tb_init(&w, "6.1.129");
	tb_std_kernel(&w);
	u = tb_module(&w, "user");
	tb_import(u, "base_fn");
	tb_run(&w);
	tap_is_str(t, tb_taints(&w, "user"), "", "a GPL base module passes nothing");
	tb_free(&w);
}

int main(void)
{
	struct tap t = { 0 };

	no_rule(&t, "5.8.18");
	no_rule(&t, "5.4.117"); /* before the stable backport */
	no_rule(&t, "4.19.190");
	inherits(&t, "5.4.118",
		 "user: module uses symbols from proprietary module prop, inheriting taint.");
	inherits(&t, "4.19.191",
		 "user: module uses symbols from proprietary module prop, inheriting taint.");
	inherits(&t, "5.9.0",
		 "user: module uses symbols from proprietary module prop, inheriting taint.");
	inherits(&t, "5.10.223+deb11-amd64",
		 "user: module uses symbols from proprietary module prop, inheriting taint.");
	inherits(&t, "5.18.19",
		 "user: module uses symbols from proprietary module prop, inheriting taint.");
	inherits(&t, "5.19.0",
		 "user: module uses symbols prop_fn from proprietary module prop, inheriting "
		 "taint.");
	inherits(&t, "6.12.37",
		 "user: module uses symbols prop_fn from proprietary module prop, inheriting "
		 "taint.");
	inherits(&t, "7.2.13+deb14-amd64",
		 "user: module uses symbols prop_fn from proprietary module prop, inheriting "
		 "taint.");
	gpl_then_prop(&t);
	prop_then_gpl(&t);
	already_proprietary(&t);
	base_owner(&t);
	return tap_done(&t);
}
