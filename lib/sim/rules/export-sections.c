// SPDX-License-Identifier: LGPL-2.1-or-later
/* The module's own export tables: find_module_sections() and the checks that follow it. */
#include <errno.h>

#include "rules.h"

static size_t count_table(const struct kp_module *m, enum kp_export_table t)
{
	size_t n = 0;

	for (size_t i = 0; i < m->nexports; i++)
		n += m->exports[i].table == t;
	return n;
}

/* find_module_sections(): v7.1+ warns about and ignores the obsolete GPL tables. */
void kp_rule_find_module_sections(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	const struct kp_module *m = ld->m;

	if (!c->p->has[KP_F_KFLAGSTAB])
		return;
	if (count_table(m, KP_KSYMTAB_GPL)) {
		kp_msg(c, ld, "%s: ignoring obsolete section __ksymtab_gpl", ld->name);
		kp_finding(ld->v, "obsolete-export-table", KP_SEV_WARNING, KP_CONS_WARN, NULL,
			   "its %zu EXPORT_SYMBOL_GPL exports are in __ksymtab_gpl, which this "
			   "kernel ignores: built for a kernel before 7.1, they are not exported",
			   count_table(m, KP_KSYMTAB_GPL));
	}
	if (m->has_kcrctab[KP_KSYMTAB_GPL])
		kp_msg(c, ld, "%s: ignoring obsolete section __kcrctab_gpl", ld->name);
}

/*
 * check_export_symbol_sections() v7.1+ (__kflagstab required, then the MODVERSIONS part);
 * check_export_symbol_versions() v6.4–v7.0, check_module_license_and_versions() before:
 * an export table without its __kcrctab is try_to_force_load().
 */
int kp_rule_check_export_symbol_sections(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	const struct kp_module *m = ld->m;
	size_t nplain = count_table(m, KP_KSYMTAB);
	bool missing_crcs;

	if (c->p->has[KP_F_KFLAGSTAB]) {
		if (nplain && !m->has_kflagstab) {
			kp_msg(c, ld, "%s: no flags for exported symbols", ld->name);
			kp_finding(ld->v, "no-export-flags", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
				   "exports %zu symbols without a __kflagstab: built for a kernel "
				   "before 7.1",
				   nplain);
			return -ENOEXEC;
		}
		missing_crcs = nplain && !m->has_kcrctab[KP_KSYMTAB];
	} else {
		missing_crcs = (nplain && !m->has_kcrctab[KP_KSYMTAB]) ||
			       (count_table(m, KP_KSYMTAB_GPL) && !m->has_kcrctab[KP_KSYMTAB_GPL]);
		if (!c->p->has[KP_F_NO_LEGACY_TABLES])
			missing_crcs = missing_crcs || (count_table(m, KP_KSYMTAB_GPL_FUTURE) &&
							!m->has_kcrctab[KP_KSYMTAB_GPL_FUTURE]);
	}
	if (!c->f->modversions || !missing_crcs)
		return 0;
	return kp_try_to_force_load(c, ld, "no versions for exported symbols");
}
