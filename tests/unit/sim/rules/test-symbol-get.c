// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * symbol-get.c: __symbol_get() (kernel/module/main.c): find_symbol() with gplok, then v6.6+ and
 * the stable backports of 9011e49d54dc (4.14.326, 4.19.295, 5.4.257, 5.10.195, 5.15.131,
 * 6.1.52, 6.4.15, 6.5.2) refuse anything but GPL_ONLY with "failing symbol_get of non-GPLONLY
 * symbol %s.". symbol_request() asks modprobe and tries again (two lines).
 */
#include "builder.h"

/* getter calls symbol_get(@sym) (and symbol_request() when @request). */
static void world(struct tb_world *w, const char *release, const char *sym, bool request)
{
	struct kp_module *m;

	tb_init(w, release);
	tb_std_kernel(w);
	m = tb_module(w, "getter");
	tb_symget(m, sym, KP_SYMGET_EXACT, request);
	tb_run(w);
}

static void plain_vmlinux(struct tap *t, const char *release, bool rule)
{
	struct tb_world w;
	const struct kp_symget_result *r;
	char what[128];

	world(&w, release, "printk", false);
	r = tb_symget_result(&w, "getter", "printk");
	snprintf(what, sizeof(what), "%s: symbol_get(printk) %s", release,
		 rule ? "returns NULL" : "succeeds");
	tap_ok(t, r && r->ok == !rule && !strcmp(r->owner, "vmlinux") && !r->gpl_only, "%s", what);
	snprintf(what, sizeof(what), "%s: reason", release);
	tap_is_str(t, r ? r->reason : NULL,
		   rule ? "not an EXPORT_SYMBOL_GPL export" : "exported (rule not in force)", what);
	snprintf(what, sizeof(what), "%s: dmesg", release);
	tb_is_text(t, tb_dmesg(&w, "getter"),
		   rule ? "failing symbol_get of non-GPLONLY symbol printk." : "", what);
	snprintf(what, sizeof(what), "%s: findings", release);
	tap_is_str(t, tb_findings(&w, "getter"), rule ? "symbol-get-non-gpl" : "", what);
	tb_free(&w);
}

static void gpl_and_future(struct tap *t)
{
	struct tb_world w;
	const struct kp_symget_result *r;

	world(&w, "6.12.37", "gpl_fn", false);
	r = tb_symget_result(&w, "getter", "gpl_fn");
	tap_ok(t, r && r->ok && r->gpl_only, "6.12: symbol_get(gpl_fn) succeeds");
	tap_is_str(t, r ? r->reason : NULL, "EXPORT_SYMBOL_GPL export", "6.12: GPL reason");
	tb_free(&w);

	/* EXPORT_SYMBOL_GPL_FUTURE: license WILL_BE_GPL_ONLY != GPL_ONLY (5.10 tree). */
	world(&w, "5.10.195", "fut_fn", false);
	r = tb_symget_result(&w, "getter", "fut_fn");
	tap_ok(t, r && !r->ok, "5.10.195: symbol_get(fut_fn) (GPL_FUTURE) returns NULL");
	tb_is_text(t, tb_dmesg(&w, "getter"), "failing symbol_get of non-GPLONLY symbol fut_fn.",
		   "5.10.195: GPL_FUTURE line");
	tb_free(&w);
	world(&w, "5.10.194", "fut_fn", false);
	r = tb_symget_result(&w, "getter", "fut_fn");
	tap_ok(t, r && r->ok, "5.10.194: symbol_get(fut_fn) succeeds");
	tb_free(&w);
}

static void request_twice(struct tap *t)
{
	struct tb_world w;

	world(&w, "6.1.52", "printk", true);
	tb_is_text(t, tb_dmesg(&w, "getter"),
		   "failing symbol_get of non-GPLONLY symbol printk.\n"
		   "failing symbol_get of non-GPLONLY symbol printk.",
		   "symbol_request(): the line twice");
	tb_free(&w);
}

static void not_found(struct tap *t)
{
	struct tb_world w;
	struct kp_module *p, *g;
	const struct kp_symget_result *r;

	world(&w, "6.12.37", "nowhere_fn", false);
	r = tb_symget_result(&w, "getter", "nowhere_fn");
	tap_ok(t, r && !r->ok && !r->owner, "unknown symbol: NULL, no owner");
	tap_is_str(t, r ? r->reason : NULL, "not exported", "unknown symbol: reason");
	tap_is_str(t, tb_findings(&w, "getter"), "symbol-get-not-found", "unknown: finding");
	tb_is_text(t, tb_dmesg(&w, "getter"), "", "unknown: the kernel says nothing");
	tb_free(&w);

	/* The provider of the set fails to load (unknown symbol): NULL as well. */
	tb_init(&w, "6.12.37");
	tb_std_kernel(&w);
	p = tb_module(&w, "prov");
	tb_export(p, "prov_fn", KP_KSYMTAB_GPL);
	tb_import(p, "nowhere_fn");
	g = tb_module(&w, "getter");
	tb_symget(g, "prov_fn", KP_SYMGET_EXACT, false);
	tb_run(&w);
	r = tb_symget_result(&w, "getter", "prov_fn");
	tap_is_str(t, r ? r->reason : NULL, "its module fails to load",
		   "provider fails to load: reason");
	tb_free(&w);

	/* v7.1+: a __ksymtab_gpl of a module built for an older kernel is ignored. */
	tb_init(&w, "7.2.13");
	tb_std_kernel(&w);
	p = tb_module(&w, "prov");
	tb_export(p, "prov_fn", KP_KSYMTAB_GPL);
	g = tb_module(&w, "getter");
	tb_symget(g, "prov_fn", KP_SYMGET_EXACT, false);
	tb_run(&w);
	r = tb_symget_result(&w, "getter", "prov_fn");
	tap_ok(t, tb_v(&w, "prov")->loads && r && !r->ok, "7.2: ignored __ksymtab_gpl: NULL");
	tap_is_str(t, r ? r->reason : NULL,
		   "not exported: its module's __ksymtab_gpl is ignored by this kernel",
		   "7.2: ignored __ksymtab_gpl: reason");
	tb_free(&w);
}

static void module_owners(struct tap *t)
{
	struct tb_world w;
	struct kp_module *p, *g;
	const struct kp_symget_result *r;

	/* A proprietary module's GPL export: the 2023 rule checks the macro, not the owner. */
	tb_init(&w, "6.6.0");
	tb_std_kernel(&w);
	p = tb_module(&w, "prop");
	tb_modinfo(p, "license", "Proprietary");
	tb_export(p, "prop_gpl", KP_KSYMTAB_GPL);
	tb_export(p, "prop_plain", KP_KSYMTAB);
	g = tb_module(&w, "getter");
	tb_symget(g, "prop_gpl", KP_SYMGET_EXACT, false);
	tb_symget(g, "prop_plain", KP_SYMGET_EXACT, false);
	tb_symget(g, "prop_gpl", KP_SYMGET_EXACT, false); /* a second call site */
	tb_run(&w);
	r = tb_symget_result(&w, "getter", "prop_gpl");
	tap_ok(t, r && r->ok && !strcmp(r->owner, "prop"), "P owner, GPL export: succeeds");
	r = tb_symget_result(&w, "getter", "prop_plain");
	tap_ok(t, r && !r->ok && !strcmp(r->owner, "prop"), "P owner, plain export: NULL");
	tap_is_int(t, tb_v(&w, "getter")->nsymget, 2, "one result per symbol");
	tap_is_str(t, tb_findings(&w, "getter"), "symbol-get-proprietary-gpl,symbol-get-non-gpl",
		   "findings in call-site order");
	tb_free(&w);
}

static void heuristic(struct tap *t)
{
	struct tb_world w;
	struct kp_module *g;
	const struct kp_symget_result *r;

	tb_init(&w, "6.12.37");
	tb_std_kernel(&w);
	g = tb_module(&w, "getter");
	tb_symget(g, "some string", KP_SYMGET_HEURISTIC, false);
	tb_symget(g, "printk", KP_SYMGET_HEURISTIC, false);
	tb_symget(g, NULL, KP_SYMGET_DYNAMIC, false);
	tb_run(&w);
	tap_is_int(t, tb_v(&w, "getter")->nsymget, 1, "heuristic: only candidates naming exports");
	r = tb_symget_result(&w, "getter", "printk");
	tap_ok(t, r && r->method_heuristic && !r->ok, "heuristic printk: judged, flagged");
	tap_is_str(t, tb_findings(&w, "getter"), "symbol-get-dynamic,symbol-get-non-gpl",
		   "the dynamic call site is counted (a note), not guessed at");
	tb_free(&w);
}

int main(void)
{
	static const struct {
		const char *release;
		bool rule;
	} versions[] = {
		{ "4.14.325", false },
		{ "4.14.326", true },
		{ "4.19.294", false },
		{ "4.19.295", true },
		{ "5.4.256", false },
		{ "5.4.257", true },
		{ "5.10.194", false },
		{ "5.10.195", true },
		{ "5.10.223+deb11-amd64", true },
		{ "5.15.130", false },
		{ "5.15.131", true },
		{ "6.1.51", false },
		{ "6.1.52", true },
		{ "6.4.14", false },
		{ "6.4.15", true },
		{ "6.5.1", false },
		{ "6.5.2", true },
		{ "6.6.0", true },
		{ "6.12.37", true },
		{ "7.2.13+deb14-amd64", true },
		{ "5.9.0", false },
	};
	struct tap t = { 0 };

	for (size_t i = 0; i < KP_ARRAY_SIZE(versions); i++)
		plain_vmlinux(&t, versions[i].release, versions[i].rule);
	gpl_and_future(&t);
	request_twice(&t);
	not_found(&t);
	module_owners(&t);
	heuristic(&t);
	return tap_done(&t);
}
