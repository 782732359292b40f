// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * export-sections.c: find_module_sections() v7.1+ (obsolete __ksymtab_gpl/__kcrctab_gpl
 * ignored with a warning), check_export_symbol_sections() v7.1+ (__kflagstab required),
 * check_export_symbol_versions() / check_module_license_and_versions() before (an export table
 * without its __kcrctab is try_to_force_load(); GPL_FUTURE before v5.12).
 */
#include <errno.h>

#include "builder.h"

static struct kp_module *one(struct tb_world *w, const char *release, bool modversions)
{
	tb_init(w, release);
	w->facts.modversions = modversions;
	return tb_module(w, "m");
}

static void kflagstab(struct tap *t)
{
	struct tb_world w;
	struct kp_module *m;

	m = one(&w, "7.2.13", false);
	tb_export(m, "a_fn", KP_KSYMTAB);
	tb_expect(t, &w, -ENOEXEC, "m: no flags for exported symbols", "no-export-flags",
		  "7.2: __ksymtab without __kflagstab");
	m = one(&w, "7.0.0", false);
	tb_export(m, "a_fn", KP_KSYMTAB);
	tb_expect(t, &w, 0, "", "", "7.0: no __kflagstab needed");
	m = one(&w, "7.1.0", false);
	tb_export_flag(m, "a_fn", false);
	tb_export_flag(m, "b_fn", true);
	tb_expect(t, &w, 0, "", "", "7.1: __ksymtab + __kflagstab");
	m = one(&w, "7.2.13", true);
	tb_export(m, "g_fn", KP_KSYMTAB_GPL);
	tb_export_crc(m, 0x1234);
	tb_expect(t, &w, 0,
		  "m: ignoring obsolete section __ksymtab_gpl\n"
		  "m: ignoring obsolete section __kcrctab_gpl",
		  "obsolete-export-table", "7.2: a module built for 7.0 with GPL exports only");
	m = one(&w, "7.0.0", true);
	tb_export(m, "g_fn", KP_KSYMTAB_GPL);
	tb_export_crc(m, 0x1234);
	tb_expect(t, &w, 0, "", "", "7.0: __ksymtab_gpl is the GPL table");
}

static void crcs(struct tap *t)
{
	struct tb_world w;
	struct kp_module *m;

	m = one(&w, "6.12.37", true);
	tb_export(m, "a_fn", KP_KSYMTAB);
	tb_expect(t, &w, -ENOEXEC, "", "", "6.12 MODVERSIONS: __ksymtab without __kcrctab");
	m = one(&w, "6.12.37", true);
	w.facts.force_load = true;
	tb_export(m, "a_fn", KP_KSYMTAB);
	tb_expect(t, &w, 0,
		  "m: no versions for exported symbols: kernel tainted.\n"
		  "Disabling lock debugging due to kernel taint",
		  "", "6.12 force load: F");
	m = one(&w, "6.12.37", false);
	tb_export(m, "a_fn", KP_KSYMTAB);
	tb_expect(t, &w, 0, "", "", "no MODVERSIONS: CRCs not needed");
	m = one(&w, "6.1.129", true);
	tb_export(m, "a_fn", KP_KSYMTAB);
	tb_export_crc(m, 1);
	tb_export(m, "g_fn", KP_KSYMTAB_GPL);
	tb_expect(t, &w, -ENOEXEC, "", "", "6.1: __ksymtab_gpl without __kcrctab_gpl");
	m = one(&w, "7.2.13", true);
	tb_export_flag(m, "a_fn", true);
	tb_expect(t, &w, -ENOEXEC, "", "", "7.2: __ksymtab without __kcrctab");
	m = one(&w, "5.10.223", true);
	tb_export(m, "f_fn", KP_KSYMTAB_GPL_FUTURE);
	tb_expect(t, &w, -ENOEXEC, "", "", "5.10: __ksymtab_gpl_future without its __kcrctab");
	m = one(&w, "5.12.0", true);
	tb_export(m, "f_fn", KP_KSYMTAB_GPL_FUTURE);
	tb_expect(t, &w, 0, "", "", "5.12: the GPL_FUTURE table is not read");
}

int main(void)
{
	struct tap t = { 0 };

	kflagstab(&t);
	crcs(&t);
	return tap_done(&t);
}
