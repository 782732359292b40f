// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * export-name.c: verify_exported_symbols() reaching an export whose name the reader found
 * outside __ksymtab_strings (x86-64 PREL32): in the unused hole under the kernel text an oops
 * holding module_mutex (booted: 7.2.13, 0x60000000 below), elsewhere a warning; in table
 * order, so a duplicate before it ends the load first. Other arches: a warning, but arm64's
 * apply_relocate_add() refusing a name surely outside s32 (relocation-overflow).
 */
#include <elf.h>
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

/* Other arches: a warning (what lies there is the memory map's), arm64's s32 check refuses. */
static void other_arches(struct tap *t)
{
	static const struct {
		uint16_t machine;
		bool is64;
		const char *field;
	} arches[] = {
		{ EM_386, false, "a PREL32 offset (R_386_PC32)" },
		{ EM_AARCH64, true, "a PREL32 offset (R_AARCH64_PREL32)" },
		{ EM_ARM, false, "an absolute pointer (R_ARM_ABS32)" },
		{ EM_PPC64, true, "an absolute pointer (R_PPC64_ADDR64)" },
		{ EM_S390, true, "an absolute pointer (R_390_64)" },
		{ EM_RISCV, true, "an absolute pointer (R_RISCV_64)" },
	};
	const struct kp_finding *f;
	struct kp_module *m;
	struct tb_world w;

	for (size_t i = 0; i < sizeof(arches) / sizeof(arches[0]); i++) {
		m = wild_module(&w, "6.12.118", -0x60000000, 0);
		m->machine = arches[i].machine;
		m->is64 = arches[i].is64;
		tb_run(&w);
		f = tb_finding(&w, "m", "kernel-oops");
		tap_ok(t,
		       tb_v(&w, "m")->loads && !tb_v(&w, "m")->holds_module_mutex && f &&
			       f->severity == KP_SEV_WARNING &&
			       strstr(f->message, arches[i].field) &&
			       strstr(f->message, "not predicted") &&
			       !strstr(f->message, "fits s32"),
		       "%s: 0x60000000 below: a warning, the load goes on", arches[i].field);
		tb_free(&w);
	}

	/* arm64, farther than s32 + the module's size: apply_relocate_add() refuses it */
	m = wild_module(&w, "6.12.118", -0x90000000LL, 1);
	m->machine = EM_AARCH64;
	tb_run(&w);
	f = tb_finding(&w, "m", "relocation-overflow");
	tap_ok(t,
	       tb_v(&w, "m")->err == -ENOEXEC && !tb_finding(&w, "m", "kernel-oops") && f &&
		       f->severity == KP_SEV_ERROR &&
		       strstr(f->message, "__ksymtab entry 1 points 0x90000000 bytes before"),
	       "arm64 0x90000000 below: relocation-overflow, ENOEXEC");
	tb_is_text(t, tb_dmesg(&w, "m"),
		   "Modules: module m: overflow in relocation type 261 val (__ksymtab_strings "
		   "0x90000000 bytes before)",
		   "arm64 6.12: the line with pr_fmt's \"Modules: \"");
	tb_free(&w);

	m = wild_module(&w, "6.1.192", 0x80000000LL + 7632, 0);
	m->machine = EM_AARCH64;
	tb_run(&w);
	tb_is_text(t, tb_dmesg(&w, "m"),
		   "module m: overflow in relocation type 261 val (__ksymtab_strings 0x80001dd0 "
		   "bytes past the start of)",
		   "arm64 6.1, past the end: the line without a prefix");
	tb_free(&w);

	/* within the module's size of the limit: it depends on the layout, a warning saying so */
	m = wild_module(&w, "6.12.118", -0x80000000LL, 0);
	m->machine = EM_AARCH64;
	tb_run(&w);
	f = tb_finding(&w, "m", "kernel-oops");
	tap_ok(t,
	       tb_v(&w, "m")->loads && f && f->severity == KP_SEV_WARNING &&
		       strstr(f->message, "fits s32") &&
		       !tb_finding(&w, "m", "relocation-overflow"),
	       "arm64 0x80000000 below: a warning that names the overflow");
	tb_free(&w);

	/* x86-64: no overflow check (PC32 truncated): the same distance is a warning */
	wild_module(&w, "6.12.118", -0x90000000LL, 0);
	tb_run(&w);
	tap_ok(t, tb_v(&w, "m")->loads && !tb_finding(&w, "m", "relocation-overflow"),
	       "x86-64 0x90000000 below: no relocation-overflow");
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
	other_arches(&t);
	return tap_done(&t);
}
