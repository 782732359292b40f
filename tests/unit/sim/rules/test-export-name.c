// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * export-name.c: verify_exported_symbols() reaching an export whose name the reader found
 * outside __ksymtab_strings (x86-64 PREL32): in the unused hole under the kernel text an oops
 * holding module_mutex (booted: 7.2.13, 0x60000000 below), elsewhere a warning; in table
 * order, so a duplicate before it ends the load first.
 */
#include <errno.h>
#include <string.h>

#include "builder.h"

static struct kp_module *wild_module(struct tb_world *w, const char *release, int64_t offset,
				     uint32_t index)
{
	struct kp_module *m;

	tb_init(w, release);
	tb_std_kernel(w);
	m = tb_module(w, "m");
	m->image_size = 7632;
	m->wild_export.present = true;
	m->wild_export.table = KP_KSYMTAB;
	m->wild_export.index = index;
	m->wild_export.offset = offset;
	return m;
}

static void in_the_hole(struct tap *t, const char *release)
{
	const struct kp_finding *f;
	struct tb_world w;

	wild_module(&w, release, -0x60000000, 0);
	tb_module(&w, "b");
	tb_run(&w);
	tap_ok(t, tb_v(&w, "m")->err == KP_ERR_OOPS && tb_v(&w, "m")->holds_module_mutex,
	       "%s: 0x60000000 below its string: an oops holding module_mutex", release);
	tb_is_text(t, tb_dmesg(&w, "m"),
		   "BUG: unable to handle page fault for address: (__ksymtab_strings "
		   "0x60000000 bytes before)",
		   "the fault line");
	f = tb_finding(&w, "m", "kernel-oops");
	tap_ok(t,
	       f && f->severity == KP_SEV_ERROR && f->consequence == KP_CONS_LOAD_FAIL &&
		       strstr(f->message, "__ksymtab entry 0 points 0x60000000 bytes before") &&
		       strstr(f->message, "verify_exported_symbols()"),
	       "%s: kernel-oops names the entry, the offset and the lookup", release);
	tap_ok(t,
	       tb_v(&w, "b")->err == KP_ERR_BLOCKED &&
		       tb_v(&w, "b")->stalled_by == tb_node(&w, "m"),
	       "%s: the next load blocks on module_mutex", release);
	tb_free(&w);
}

static void not_predicted(struct tap *t)
{
	static const int64_t offsets[] = { -0x5fffffff, -0x7fffff00, 0x40 };
	const struct kp_finding *f;
	struct tb_world w;

	for (size_t i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++) {
		wild_module(&w, "7.2.13", offsets[i], 0);
		tb_run(&w);
		f = tb_finding(&w, "m", "kernel-oops");
		tap_ok(t,
		       tb_v(&w, "m")->loads && !tb_v(&w, "m")->holds_module_mutex && f &&
			       f->severity == KP_SEV_WARNING && strstr(f->message, "not predicted"),
		       "offset %lld: a warning, the load goes on", (long long)offsets[i]);
		tb_is_text(t, tb_dmesg(&w, "m"), "", "no line");
		tb_free(&w);
	}
}

static void table_order(struct tap *t)
{
	struct kp_module *m;
	struct tb_world w;

	/* entry 1: printk (entry 0) is looked up first and is a duplicate */
	m = wild_module(&w, "6.12.37", -0x60000000, 1);
	tb_export(m, "printk", KP_KSYMTAB);
	tb_run(&w);
	tap_ok(t, tb_v(&w, "m")->err == -ENOEXEC && !tb_finding(&w, "m", "kernel-oops"),
	       "a duplicate before the wild entry: ENOEXEC, no oops");
	tb_free(&w);

	/* entry 0, then printk: the oops comes first */
	m = wild_module(&w, "6.12.37", -0x60000000, 0);
	tb_export(m, "printk", KP_KSYMTAB);
	tb_run(&w);
	tap_ok(t, tb_v(&w, "m")->err == KP_ERR_OOPS && !tb_finding(&w, "m", "duplicate-export"),
	       "the wild entry before a duplicate: the oops");
	tb_free(&w);

	/* in __ksymtab, after its own export: reached before __ksymtab_gpl's duplicate */
	m = wild_module(&w, "6.1.192", -0x60000000, 1);
	tb_export(m, "own_fn", KP_KSYMTAB);
	tb_export(m, "gpl_fn", KP_KSYMTAB_GPL);
	tb_run(&w);
	tap_ok(t, tb_v(&w, "m")->err == KP_ERR_OOPS,
	       "the last __ksymtab entry, before __ksymtab_gpl");
	tb_free(&w);
}

int main(void)
{
	struct tap t = { 0 };

	in_the_hole(&t, "5.10.262");
	in_the_hole(&t, "6.1.192");
	in_the_hole(&t, "6.12.118");
	in_the_hole(&t, "7.2.13");
	not_predicted(&t);
	table_order(&t);
	return tap_done(&t);
}
