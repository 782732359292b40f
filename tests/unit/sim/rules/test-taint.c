// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * taint.c: module_augment_kernel_taints() v6.4+ and, before, check_modinfo() (O, C, K, license
 * P, N; livepatch refusal after O and C) + E after add_unformed_module() + the names of
 * check_module_license_and_versions(). Lines printed once per boot (test_taint(), _once).
 */
#include <errno.h>

#include "builder.h"

static void check(struct tap *t, struct tb_world *w, const char *mod, const char *dmesg,
		  const char *taints, const char *what)
{
	char buf[160];

	snprintf(buf, sizeof(buf), "%s: dmesg", what);
	tb_is_text(t, tb_dmesg(w, mod), dmesg, buf);
	snprintf(buf, sizeof(buf), "%s: module taints", what);
	tap_is_str(t, tb_taints(w, mod), taints, buf);
}

static void oot_staging_test(struct tap *t)
{
	struct tb_world w;
	struct kp_module *a, *b;

	tb_init(&w, "6.12.37");
	a = tb_module(&w, "a");
	a->intree = false;
	tb_modinfo(a, "staging", "Y");
	tb_modinfo(a, "test", "Y");
	b = tb_module(&w, "b");
	b->intree = false;
	tb_modinfo(b, "test", "Y");
	tb_run(&w);
	check(t, &w, "a",
	      "a: loading out-of-tree module taints kernel.\n"
	      "a: module is from the staging directory, the quality is unknown, you have been "
	      "warned.\n"
	      "a: loading test module taints kernel.",
	      "CON", "6.12 OOT staging test module");
	check(t, &w, "b", "", "ON", "second OOT test module: lines once per boot");
	tap_is_str(t, tb_global(&w), "CON", "global mask");
	tb_free(&w);

	/* TAINT_TEST is v6.0+. */
	tb_init(&w, "5.19.17");
	a = tb_module(&w, "a");
	tb_modinfo(a, "test", "Y");
	tb_run(&w);
	check(t, &w, "a", "", "", "5.19 test module: no N");
	tb_free(&w);
	tb_init(&w, "6.0.0");
	a = tb_module(&w, "a");
	tb_modinfo(a, "test", "Y");
	tb_run(&w);
	check(t, &w, "a", "a: loading test module taints kernel.", "N", "6.0 test module");
	tb_free(&w);
}

static void license(struct tap *t, const char *release, const char *lic, const char *dmesg,
		    const char *taints)
{
	struct tb_world w;
	struct kp_module *m;
	char what[128];

	tb_init(&w, release);
	m = tb_module(&w, "m");
	if (lic)
		tb_modinfo(m, "license", lic);
	else
		m->license = NULL;
	tb_run(&w);
	snprintf(what, sizeof(what), "%s license %s", release, lic ? lic : "(none)");
	check(t, &w, "m", dmesg, taints, what);
	tb_free(&w);
}

static void first_license_tag(struct tap *t)
{
	struct tb_world w;
	struct kp_module *m;

	tb_init(&w, "6.12.37");
	m = tb_module(&w, "m");
	tb_modinfo(m, "license", "GPL");
	tb_modinfo(m, "license", "Proprietary");
	tb_run(&w);
	check(t, &w, "m", "", "", "get_modinfo(): the first license= tag");
	tb_free(&w);
}

static void livepatch(struct tap *t)
{
	struct tb_world w;
	struct kp_module *a, *b;

	tb_init(&w, "6.12.37");
	w.facts.livepatch = true;
	a = tb_module(&w, "a");
	tb_modinfo(a, "livepatch", "Y");
	b = tb_module(&w, "b");
	tb_modinfo(b, "livepatch", "Y");
	tb_run(&w);
	check(t, &w, "a", "a: tainting kernel with TAINT_LIVEPATCH", "K", "livepatch module");
	check(t, &w, "b", "", "K", "second livepatch module: pr_notice_once()");
	tb_free(&w);

	/* No CONFIG_LIVEPATCH: v6.4+ refuses in check_modinfo() before any taint ... */
	tb_init(&w, "6.12.37");
	a = tb_module(&w, "a");
	a->intree = false;
	tb_modinfo(a, "livepatch", "Y");
	tb_run(&w);
	tap_is_int(t, tb_v(&w, "a")->err, -ENOEXEC, "6.12 livepatch without support: ENOEXEC");
	check(t, &w, "a",
	      "a: module is marked as livepatch module, but livepatch support is disabled", "",
	      "6.12 livepatch without support");
	tap_is_str(t, tb_global(&w), "", "6.12: nothing tainted");
	tb_free(&w);
	/* ... before, check_modinfo() has set O first. */
	tb_init(&w, "6.1.129");
	a = tb_module(&w, "a");
	a->intree = false;
	tb_modinfo(a, "livepatch", "Y");
	tb_run(&w);
	tap_is_int(t, tb_v(&w, "a")->err, -ENOEXEC, "6.1 livepatch without support: ENOEXEC");
	check(t, &w, "a",
	      "a: loading out-of-tree module taints kernel.\n"
	      "a: module is marked as livepatch module, but livepatch support is disabled",
	      "O", "6.1 livepatch without support");
	tap_is_str(t, tb_global(&w), "O", "6.1: O stays set");
	tb_free(&w);
}

static void unsigned_modules(struct tap *t)
{
	struct tb_world w;

	tb_init(&w, "6.12.37");
	w.facts.module_sig = true;
	tb_module(&w, "a");
	tb_module(&w, "b");
	tb_run(&w);
	check(t, &w, "a",
	      "a: module verification failed: signature and/or required key missing - tainting "
	      "kernel",
	      "E", "unsigned module");
	check(t, &w, "b", "", "E", "second unsigned module: pr_notice_once()");
	tb_free(&w);
	/* The notice was printed before the set (initial taint E): not again. */
	tb_init(&w, "6.12.37");
	w.facts.module_sig = true;
	w.facts.initial_taint = 1UL << KP_TAINT_UNSIGNED_MODULE;
	tb_module(&w, "a");
	tb_run(&w);
	check(t, &w, "a", "", "E", "initial E: no notice");
	tb_free(&w);
}

static void names(struct tap *t, const char *release, const char *name, const char *lic,
		  const char *dmesg, const char *taints)
{
	struct tb_world w;
	struct kp_module *m;
	char what[128];

	tb_init(&w, release);
	m = tb_module(&w, name);
	if (lic)
		tb_modinfo(m, "license", lic);
	tb_run(&w);
	snprintf(what, sizeof(what), "%s %s (%s)", release, name, lic ? lic : "GPL");
	check(t, &w, name, dmesg, taints, what);
	tap_is_str(t, tb_global(&w), "P", "global P");
	tb_free(&w);
}

/* v6.4+ checks the duplicate name before tainting; before, check_modinfo() tainted first. */
static void duplicate_order(struct tap *t, const char *release, const char *global)
{
	static const char *const loaded[] = { "m" };
	struct tb_world w;
	struct kp_module *m;
	char what[64];

	tb_init(&w, release);
	w.facts.module_sig = true;
	w.facts.loaded = loaded;
	w.facts.nloaded = 1;
	m = tb_module(&w, "m");
	tb_modinfo(m, "license", "Proprietary");
	tb_run(&w);
	snprintf(what, sizeof(what), "%s: already loaded: EEXIST", release);
	tap_is_int(t, tb_v(&w, "m")->err, -EEXIST, what);
	snprintf(what, sizeof(what), "%s: global taints left by the refused load", release);
	tap_is_str(t, tb_global(&w), global, what);
	tb_free(&w);
}

int main(void)
{
	struct tap t = { 0 };

	oot_staging_test(&t);
	license(&t, "6.12.37", "Proprietary",
		"m: module license 'Proprietary' taints kernel.\n"
		"Disabling lock debugging due to kernel taint\n"
		"m: module license taints kernel.",
		"P");
	license(&t, "6.4.0", "Proprietary",
		"m: module license 'Proprietary' taints kernel.\n"
		"Disabling lock debugging due to kernel taint\n"
		"m: module license taints kernel.",
		"P");
	license(&t, "6.3.13", "Proprietary",
		"m: module license 'Proprietary' taints kernel.\n"
		"Disabling lock debugging due to kernel taint",
		"P");
	license(&t, "5.10.223", NULL,
		"m: module license 'unspecified' taints kernel.\n"
		"Disabling lock debugging due to kernel taint",
		"P");
	license(&t, "6.12.37", "GPL v2", "", "");
	license(&t, "6.12.37", "Dual MIT/GPL", "", "");
	license(&t, "6.12.37", "Dual BSD/GPL", "", "");
	license(&t, "6.12.37", "MIT",
		"m: module license 'MIT' taints kernel.\n"
		"Disabling lock debugging due to kernel taint\n"
		"m: module license taints kernel.",
		"P");
	first_license_tag(&t);
	livepatch(&t);
	unsigned_modules(&t);
	/* ndiswrapper: add_taint() only, the module keeps GPL-only symbols. */
	names(&t, "6.12.37", "ndiswrapper", NULL,
	      "Disabling lock debugging due to kernel taint\n"
	      "ndiswrapper: module license taints kernel.",
	      "");
	names(&t, "6.1.129", "ndiswrapper", NULL,
	      "Disabling lock debugging due to kernel taint\n"
	      "ndiswrapper: module license taints kernel.",
	      "");
	names(&t, "6.12.37", "ndiswrapper", "Proprietary",
	      "ndiswrapper: module license 'Proprietary' taints kernel.\n"
	      "Disabling lock debugging due to kernel taint\n"
	      "ndiswrapper: module license taints kernel.",
	      "P");
	/* Before v6.4 P is sampled after the license: the name adds no line. */
	names(&t, "6.1.129", "ndiswrapper", "Proprietary",
	      "ndiswrapper: module license 'Proprietary' taints kernel.\n"
	      "Disabling lock debugging due to kernel taint",
	      "P");
	names(&t, "6.12.37", "driverloader", NULL,
	      "Disabling lock debugging due to kernel taint\n"
	      "driverloader: module license taints kernel.",
	      "P");
	names(&t, "5.10.223", "lve", NULL,
	      "Disabling lock debugging due to kernel taint\nlve: module license taints kernel.",
	      "P");
	duplicate_order(&t, "6.1.129", "P");
	duplicate_order(&t, "6.4.0", "");
	duplicate_order(&t, "6.12.37", "");
	{
		struct tb_world w;
		struct kp_module *m;

		/* P before the set: neither the license line nor the lock debugging one. */
		tb_init(&w, "6.12.37");
		w.facts.initial_taint = 1UL << KP_TAINT_PROPRIETARY_MODULE;
		m = tb_module(&w, "m");
		tb_modinfo(m, "license", "Proprietary");
		tb_run(&w);
		check(&t, &w, "m", "", "P", "initial P");
		tap_is_int(&t, tb_v(&w, "m")->global_after, 0, "global_after excludes the initial");
		tb_free(&w);
	}
	return tap_done(&t);
}
