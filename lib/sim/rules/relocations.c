// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdio.h>

#include "sim/arch-relocs.h"
#include "rules.h"

/*
 * apply_relocations() (kernel/module/main.c, all versions) with the architecture's
 * apply_relocate() / apply_relocate_add() (arch/<arch>/kernel/module*.c, the tables of
 * lib/sim/arch-relocs.c): the first relocation of a type the architecture does not apply
 * stops the load with its line and errno. The relocations of .data..percpu are applied only
 * by KP_F_PERCPU_RELOCS kernels. Overflow and range checks on the values are not modelled,
 * but for a wild export name's (export-name.c), in its place in that order: arm64's
 * apply_relocate_add() returns at the first relocation it refuses, of a type or a value.
 */

/* @w's name field is relocated before @u's first use (in apply_relocations()' order). */
static bool wild_reloc_before(const struct kp_wild_export *w, const struct kp_reloc_use *u)
{
	return w->present &&
	       (w->rel_shndx < u->shndx || (w->rel_shndx == u->shndx && w->rel_index < u->index));
}

int kp_rule_apply_relocations(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	const struct kp_module *m = ld->m;
	const struct kp_kver *v = c->p->version_known ? &c->p->version : NULL;
	bool warned_config = false;

	if (m->relocs_problem)
		kp_finding(ld->v, "relocations-unchecked", KP_SEV_WARNING, KP_CONS_WARN, NULL,
			   "a relocation section could not be read (%s): its types were not "
			   "checked",
			   m->relocs_problem);
	for (size_t i = 0; i < m->nrelocs; i++) {
		const struct kp_reloc_use *u = &m->relocs[i];
		struct kp_reloc_verdict rv;
		char tname[64];

		if (u->percpu && !c->p->has[KP_F_PERCPU_RELOCS])
			continue;
		kp_arch_reloc_check(m->machine, m->is64, u->rela, u->type, v, &rv);
		if (rv.name)
			snprintf(tname, sizeof(tname), "%s (%u)", rv.name, u->type);
		else
			snprintf(tname, sizeof(tname), "type %u", u->type);
		switch (rv.outcome) {
		case KP_RELOC_APPLIED:
			continue;
		case KP_RELOC_NOT_MODELLED:
			kp_finding(ld->v, "relocations-not-modelled", KP_SEV_NOTE, KP_CONS_WARN,
				   NULL,
				   "the relocation types a %s loader applies are not modelled: "
				   "assumed to be supported",
				   m->machine ? "this architecture's" : "machine 0");
			return 0;
		case KP_RELOC_CONFIG:
			if (!warned_config)
				kp_finding(ld->v, "relocation-needs-config", KP_SEV_WARNING,
					   KP_CONS_WARN, NULL,
					   "%s in %s is applied by %s's %s only when the kernel is "
					   "built with CONFIG_%s=y (assumed); otherwise the load "
					   "fails "
					   "with %s",
					   tname, u->section, rv.arch, rv.function, rv.config,
					   kp_errno_name(rv.err));
			warned_config = true;
			continue;
		case KP_RELOC_REFUSED:
			break;
		}
		if (wild_reloc_before(&m->wild_export, u)) {
			int r = kp_rule_wild_export_reloc(c, ld);

			if (r)
				return r;
		}
		if (rv.line_fmt) {
			char line[256];

			/* the architecture's printk format, from the table of arch-relocs.c */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
			snprintf(line, sizeof(line), rv.line_fmt, ld->name, u->type);
#pragma GCC diagnostic pop
			kp_msg(c, ld, "%s%s", rv.prefix, line);
		}
		kp_finding(ld->v, "unsupported-relocation", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
			   "%s (entry %u of %s, %u use%s in the module) is not applied by %s's "
			   "%s: built with the wrong code model or as position-independent code?",
			   tname, u->index, u->section, u->count, u->count == 1 ? "" : "s", rv.arch,
			   rv.function);
		return rv.err;
	}
	/* every type applied: a wild export name's value (export-name.c), wherever it lies */
	return kp_rule_wild_export_reloc(c, ld);
}
