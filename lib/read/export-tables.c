// SPDX-License-Identifier: LGPL-2.1-or-later
/* The export tables of a module or vmlinux (include/linux/export.h, v2.6 … v6.12). */
#include "module.h"

const struct kp_export_table_info kp_export_tables[KP_KSYMTAB_NTABLES] = {
	[KP_KSYMTAB] = { "__ksymtab", "__kcrctab", false },
	[KP_KSYMTAB_GPL] = { "__ksymtab_gpl", "__kcrctab_gpl", true },
	[KP_KSYMTAB_GPL_FUTURE] = { "__ksymtab_gpl_future", "__kcrctab_gpl_future", false },
	[KP_KSYMTAB_UNUSED] = { "__ksymtab_unused", "__kcrctab_unused", false },
	[KP_KSYMTAB_UNUSED_GPL] = { "__ksymtab_unused_gpl", "__kcrctab_unused_gpl", true },
};

const char *kp_export_table_section(enum kp_export_table t)
{
	return t < KP_KSYMTAB_NTABLES ? kp_export_tables[t].ksymtab : "?";
}
