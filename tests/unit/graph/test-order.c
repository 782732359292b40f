// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Loader ordering: modules loaded dependencies first, P inherited transitively along the
 * chain, the .symtab order of resolution deciding between "inherits P" and "refused"
 * (262e6ae7081d), cycles; in memory and with the real kbuild fixtures of 5.10, 6.12 and 7.2.
 */
#include <errno.h>

#include "builder.h"

/* Named in reverse: the load order must put providers first. */
static void chain(struct tap *t, const char *release, bool rule, bool named)
{
	struct tb_world w;
	struct kp_module *m;
	char what[128];

	tb_init(&w, release);
	tb_std_kernel(&w);
	m = tb_module(&w, "d"); /* b_fn then gpl_fn */
	tb_import(m, "b_fn");
	tb_import(m, "gpl_fn");
	m = tb_module(&w, "c"); /* gpl_fn then b_fn */
	tb_import(m, "gpl_fn");
	tb_import(m, "b_fn");
	m = tb_module(&w, "b");
	tb_import(m, "a_fn");
	tb_export(m, "b_fn", KP_KSYMTAB);
	m = tb_module(&w, "a");
	tb_import(m, "prop_fn");
	tb_export(m, "a_fn", KP_KSYMTAB);
	m = tb_module(&w, "prop");
	tb_modinfo(m, "license", "Proprietary");
	tb_export(m, "prop_fn", KP_KSYMTAB);
	tb_run(&w);

	snprintf(what, sizeof(what), "%s: load order prop, a, b, d, c", release);
	tap_ok(t,
	       w.g.order[0] == 4 && w.g.order[1] == 3 && w.g.order[2] == 2 && w.g.order[3] == 0 &&
		       w.g.order[4] == 1,
	       "%s", what);
	snprintf(what, sizeof(what), "%s: a, b taints", release);
	tap_is_str(t, tb_taints(&w, "a"), rule ? "P" : "", what);
	tap_is_str(t, tb_taints(&w, "b"), rule ? "P" : "", what);
	if (rule && named) {
		tap_ok(t,
		       tb_v(&w, "b")->p_from == tb_node(&w, "a") &&
			       tb_v(&w, "a")->p_from == tb_node(&w, "prop"),
		       "%s: b inherits from a, a from prop", release);
		tb_is_text(
			t, tb_dmesg(&w, "b"),
			"b: module uses symbols a_fn from proprietary module a, inheriting taint.",
			"b's line names a, not prop");
	}
	snprintf(what, sizeof(what), "%s: c (GPL-only first) %s", release,
		 rule ? "refused" : "loads");
	tap_is_int(t, tb_v(&w, "c")->err, rule ? -ENOENT : 0, what);
	snprintf(what, sizeof(what), "%s: d (P import first) %s", release,
		 rule ? "inherits, then gpl_fn unknown" : "loads");
	tap_is_int(t, tb_v(&w, "d")->err, rule ? -ENOENT : 0, what);
	if (rule && named)
		tb_is_text(t, tb_dmesg(&w, "d"),
			   "d: module uses symbols b_fn from proprietary module b, inheriting "
			   "taint.\nd: Unknown symbol gpl_fn (err -2)",
			   "d: dmesg");
	tap_is_str(t, tb_global(&w), "P", "only prop's license sets the global P");
	tb_free(&w);
}

static void cycle(struct tap *t)
{
	struct tb_world w;
	struct kp_module *a, *b;

	tb_init(&w, "6.12.37");
	a = tb_module(&w, "a");
	tb_export(a, "a_fn", KP_KSYMTAB);
	tb_import(a, "b_fn");
	b = tb_module(&w, "b");
	tb_export(b, "b_fn", KP_KSYMTAB);
	tb_import(b, "a_fn");
	tb_run(&w);
	tap_ok(t, w.g.ncycles == 1 && w.g.order[0] == 0 && w.g.order[1] == 1,
	       "a <-> b: one cycle, command-line order");
	tb_is_text(t, tb_dmesg(&w, "a"), "a: Unknown symbol b_fn (err -2)",
		   "a first: b is not loaded yet");
	tap_ok(t, tb_v(&w, "a")->err == -ENOENT && tb_v(&w, "b")->err == -ENOENT, "neither loads");
	tap_is_str(t, tb_findings(&w, "b"), "dependency-failed,unknown-symbol", "b: findings");
	tb_free(&w);
}

struct expect {
	const char *name;
	int err;
	const char *taints;
	const char *dmesg;
};

/* The real fixtures of one kernel (fixtures/ko/<dir>, out-of-tree: O), with its Module.symvers. */
static void fixtures(struct tap *t, const char *dir, const char *version, const char *release,
		     bool modversions, const struct expect *e, size_t n)
{
	static const char *const mods[] = {
		"kp_use_prop_chain",
		"kp_use_prop",
		"kp_gplonly_then_prop",
		"kp_prop_then_gplonly",
		"kp_prop_then_weak_gplonly",
		"kp_weak_gplonly_then_prop",
		"kp_gpl_prov",
		"kp_prop_prov",
	};
	struct tb_world w;
	char path[256];

	tb_init_distro(&w, version, KP_DISTRO_DEBIAN);
	w.facts.release = release;
	w.facts.modversions = modversions;
	snprintf(path, sizeof(path), "fixtures/ko/%s/Module.symvers.gz", dir);
	tb_base_file(&w, tap_srcpath(path));
	for (size_t i = 0; i < KP_ARRAY_SIZE(mods); i++) {
		snprintf(path, sizeof(path), "fixtures/ko/%s/%s.ko", dir, mods[i]);
		tb_module_file(&w, tap_srcpath(path));
	}
	tb_run(&w);
	/* modprobe -a in the order named: kp_use_prop_chain's providers first, depth first */
	tap_ok(t, w.g.order[0] == 7 && w.g.order[1] == 1 && w.g.order[2] == 0,
	       "%s: modprobe's order: kp_prop_prov, kp_use_prop, kp_use_prop_chain", dir);
	for (size_t i = 0; i < n; i++) {
		char what[128];

		snprintf(what, sizeof(what), "%s %s: errno", dir, e[i].name);
		tap_is_int(t, tb_v(&w, e[i].name)->err, e[i].err, what);
		snprintf(what, sizeof(what), "%s %s: taints", dir, e[i].name);
		tap_is_str(t, tb_taints(&w, e[i].name), e[i].taints, what);
		snprintf(what, sizeof(what), "%s %s: dmesg", dir, e[i].name);
		tb_is_text(t, tb_dmesg(&w, e[i].name), e[i].dmesg, what);
	}
	tb_free(&w);
}

#define INHERIT(m, sym, owner)                                                          \
	m ": module uses symbols " sym "from proprietary module " owner ", inheriting " \
	  "taint."
#define REFUSED(m, sym, owner) \
	m ": module using GPL-only symbols uses symbols " sym "from proprietary module " owner "."

static const struct expect e612[] = {
	{ "kp_prop_prov", 0, "PO",
	  "kp_prop_prov: loading out-of-tree module taints kernel.\n"
	  "kp_prop_prov: module license 'Proprietary' taints kernel.\n"
	  "Disabling lock debugging due to kernel taint\n"
	  "kp_prop_prov: module license taints kernel." },
	{ "kp_use_prop", 0, "PO", INHERIT("kp_use_prop", "kp_prop_plain ", "kp_prop_prov") },
	{ "kp_use_prop_chain", 0, "PO",
	  INHERIT("kp_use_prop_chain", "kp_use_prop_fn ", "kp_use_prop") },
	{ "kp_gplonly_then_prop", -ENOENT, "O",
	  REFUSED("kp_gplonly_then_prop", "kp_prop_plain ",
		  "kp_prop_prov") "\n"
				  "kp_gplonly_then_prop: Unknown symbol kp_prop_plain (err -2)" },
	{ "kp_prop_then_gplonly", -ENOENT, "PO",
	  INHERIT("kp_prop_then_gplonly", "kp_prop_plain ",
		  "kp_prop_prov") "\n"
				  "kp_prop_then_gplonly: Unknown symbol ktime_get (err -2)" },
	{ "kp_prop_then_weak_gplonly", 0, "PO",
	  INHERIT("kp_prop_then_weak_gplonly", "kp_prop_plain ", "kp_prop_prov") },
	{ "kp_weak_gplonly_then_prop", -ENOENT, "O",
	  REFUSED("kp_weak_gplonly_then_prop", "kp_prop_plain ",
		  "kp_prop_prov") "\n"
				  "kp_weak_gplonly_then_prop: Unknown symbol kp_prop_plain (err "
				  "-2)" },
};

/* 5.10: the lines without the symbol (v5.19 added it), no second license line (v6.4). */
static const struct expect e510[] = {
	{ "kp_prop_prov", 0, "PO",
	  "kp_prop_prov: loading out-of-tree module taints kernel.\n"
	  "kp_prop_prov: module license 'Proprietary' taints kernel.\n"
	  "Disabling lock debugging due to kernel taint" },
	{ "kp_use_prop_chain", 0, "PO", INHERIT("kp_use_prop_chain", "", "kp_use_prop") },
	{ "kp_gplonly_then_prop", -ENOENT, "O",
	  REFUSED("kp_gplonly_then_prop", "",
		  "kp_prop_prov") "\n"
				  "kp_gplonly_then_prop: Unknown symbol kp_prop_plain (err -2)" },
	{ "kp_prop_then_gplonly", -ENOENT, "PO",
	  INHERIT("kp_prop_then_gplonly", "",
		  "kp_prop_prov") "\n"
				  "kp_prop_then_gplonly: Unknown symbol ktime_get (err -2)" },
};

int main(void)
{
	struct tap t = { 0 };

	chain(&t, "5.8.18", false, false);
	chain(&t, "5.4.118", true, false);
	chain(&t, "6.12.37", true, true);
	cycle(&t);
	/* The kernels' vermagic (fixtures/ko/<dir>/kernel.txt) says whether MODVERSIONS is on. */
	fixtures(&t, "6.12", "6.12.118", "6.12.118+deb12-amd64", true, e612, KP_ARRAY_SIZE(e612));
	fixtures(&t, "7.2", "7.2.13", "7.2.13+deb14-amd64", false, e612, KP_ARRAY_SIZE(e612));
	fixtures(&t, "5.10", "5.10.223", "5.10.0-46-amd64", true, e510, KP_ARRAY_SIZE(e510));
	return tap_done(&t);
}
