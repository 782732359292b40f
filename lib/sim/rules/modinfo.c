// SPDX-License-Identifier: LGPL-2.1-or-later
/* setup_modinfo() in kernel/module/main.c. */
#include <errno.h>
#include <string.h>

#include "rules.h"

/*
 * setup_modinfo(): v6.16+ refuses an explicit import of a "module:" namespace (those are
 * granted by name only), -EPERM on the first such import_ns= tag. No check before 6.16.
 */
int kp_rule_setup_modinfo(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	if (!c->p->has[KP_F_MODULE_NAMESPACES])
		return 0;
	for (size_t i = 0; i < ld->m->nimport_ns; i++) {
		const char *ns = ld->m->import_ns[i];

		if (strncmp(ns, "module:", 7))
			continue;
		kp_msg(c, ld, "%s: module tries to import module namespace: %s", ld->name, ns);
		kp_finding(ld->v, "module-namespace-import", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
			   "MODULE_IMPORT_NS(\"%s\"): module namespaces cannot be imported, they "
			   "are granted by module name",
			   ns);
		return -EPERM;
	}
	return 0;
}
