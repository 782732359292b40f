// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * duplicate.c: module_patient_check_exists() v6.4+ / add_unformed_module() (-EEXIST for a live
 * module of the same name) and verify_exported_symbols() (-ENOEXEC on the first export that
 * find_symbol() already knows, GPL-only ones included).
 */
#include <errno.h>

#include "builder.h"

static void already_loaded(struct tap *t)
{
	static const char *const loaded[] = { "snd" };
	struct tb_world w;

	/* Loaded before the set (running system). */
	tb_init(&w, "6.12.37");
	w.facts.loaded = loaded;
	w.facts.nloaded = 1;
	tb_module(&w, "snd");
	tb_run(&w);
	tap_is_int(t, tb_v(&w, "snd")->err, -EEXIST, "name already loaded: EEXIST");
	tap_is_str(t, tb_findings(&w, "snd"), "already-loaded", "finding");
	tb_is_text(t, tb_dmesg(&w, "snd"), "", "the kernel says nothing");
	tb_free(&w);

	/* Twice in the set: the second one. */
	tb_init(&w, "5.10.223");
	tb_module(&w, "dup");
	tb_module(&w, "dup");
	tb_run(&w);
	tap_ok(t, w.sim.v[0].loads && w.sim.v[1].err == -EEXIST, "second copy in the set: EEXIST");
	tap_ok(t, w.g.nodes[0].duplicate_name && w.g.nodes[1].duplicate_name,
	       "graph marks both duplicate_name");
	tb_free(&w);
}

static void exports(struct tap *t)
{
	struct tb_world w;
	struct kp_module *a, *b;

	tb_init(&w, "6.12.37");
	tb_std_kernel(&w);
	a = tb_module(&w, "a");
	/* The reader's order, as the kernel's arr[]: __ksymtab, then __ksymtab_gpl. */
	tb_export(a, "own_fn", KP_KSYMTAB);
	tb_export(a, "printk", KP_KSYMTAB);
	tb_export(a, "gpl_fn", KP_KSYMTAB_GPL); /* vmlinux has both */
	tb_run(&w);
	tap_is_int(t, tb_v(&w, "a")->err, -ENOEXEC, "exports a vmlinux symbol: ENOEXEC");
	tb_is_text(t, tb_dmesg(&w, "a"), "a: exports duplicate symbol printk (owned by kernel)",
		   "the first duplicate ends it");
	tb_free(&w);

	tb_init(&w, "6.12.37");
	a = tb_module(&w, "a");
	tb_export(a, "shared_fn", KP_KSYMTAB_GPL);
	b = tb_module(&w, "b");
	tb_export(b, "shared_fn", KP_KSYMTAB);
	tb_run(&w);
	tap_ok(t, tb_v(&w, "a")->loads, "first exporter loads");
	tap_is_int(t, tb_v(&w, "b")->err, -ENOEXEC, "second exporter: ENOEXEC");
	tb_is_text(t, tb_dmesg(&w, "b"), "b: exports duplicate symbol shared_fn (owned by a)",
		   "owned by the module");
	tap_is_str(t, tb_findings(&w, "b"), "duplicate-export", "finding");
	tb_free(&w);

	/* An exporter that failed is not live: no duplicate. */
	tb_init(&w, "6.12.37");
	a = tb_module(&w, "a");
	tb_export(a, "shared_fn", KP_KSYMTAB);
	tb_import(a, "nowhere");
	b = tb_module(&w, "b");
	tb_export(b, "shared_fn", KP_KSYMTAB);
	tb_run(&w);
	tap_ok(t, !tb_v(&w, "a")->loads && tb_v(&w, "b")->loads,
	       "the first exporter failed: the second loads");
	tb_free(&w);

	/* v7.1+: a __ksymtab_gpl export is not seen, so it duplicates nothing. */
	tb_init(&w, "7.2.13");
	tb_std_kernel(&w);
	a = tb_module(&w, "a");
	tb_export(a, "gpl_fn", KP_KSYMTAB_GPL);
	tb_run(&w);
	tap_ok(t, tb_v(&w, "a")->loads, "7.2: an ignored __ksymtab_gpl duplicates nothing");
	tb_free(&w);
}

int main(void)
{
	struct tap t = { 0 };

	already_loaded(&t);
	exports(&t);
	return tap_done(&t);
}
