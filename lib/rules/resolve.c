// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Symbol resolution: simplify_symbols(), resolve_symbol(),
 * verify_namespace_is_imported() and ref_module() of kernel/module/main.c.
 */
#include <elf.h>
#include <errno.h>
#include <string.h>

#include "rules.h"

/*
 * verify_namespace_is_imported(): v5.4+ (fatal unless
 * CONFIG_MODULE_ALLOW_MISSING_NAMESPACE_IMPORTS).
 */
static int verify_namespace_is_imported(struct kp_sim_ctx *c, struct kp_loading *ld,
					const char *name, const char *ns)
{
	if (!c->p->has[KP_F_NAMESPACES] || !ns || !ns[0])
		return 0;
	for (size_t i = 0; i < ld->m->nimport_ns; i++)
		if (!strcmp(ld->m->import_ns[i], ns))
			return 0;
	kp_msg(c, ld, "%s: module uses symbol (%s) from namespace %s, but does not import it.",
	       ld->name, name, ns);
	if (c->f->allow_missing_ns)
		return 0;
	kp_finding(ld->v, "missing-namespace", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, name,
		   "uses %s from namespace %s without MODULE_IMPORT_NS(%s)", name, ns, ns);
	return -EINVAL;
}

enum resolved { RESOLVED, NOT_FOUND, REJECTED };

/*
 * resolve_symbol(), v5.9 … v6.12: find, using_gplonly, inherit_taint, CRC, namespace,
 * ref_module.
 */
static enum resolved resolve_symbol(struct kp_sim_ctx *c, struct kp_loading *ld, const char *name,
				    int *err)
{
	bool gplok = !(ld->v->taints & (1UL << KP_TAINT_PROPRIETARY_MODULE));
	struct kp_found fs;

	if (!kp_find_symbol(c, name, gplok, &fs))
		return NOT_FOUND;
	if (fs.gpl_only)
		ld->using_gplonly_symbols = true;
	if (!kp_rule_inherit_taint(c, ld, &fs, name))
		return NOT_FOUND;
	if (!kp_rule_check_version(c, ld, name, &fs)) {
		*err = -EINVAL;
		return REJECTED;
	}
	*err = verify_namespace_is_imported(c, ld, name, fs.ns);
	if (*err)
		return REJECTED;
	/* ref_module(): owners in the simulation are live; nothing to wait for. */
	if (fs.gpl_future && !gplok)
		kp_msg(c, ld,
		       "Symbol %s is being used by a non-GPL module, which will not be "
		       "allowed in the future",
		       name);
	return RESOLVED;
}

static bool ignore_undef_symbol(const struct kp_sim_ctx *c, uint16_t machine, const char *name)
{
	/* arch hooks: x86 _GLOBAL_OFFSET_TABLE_ (v5.12+), ppc64 .TOC. */
	if ((machine == EM_386 || machine == EM_X86_64) && c->p->has[KP_F_GOT_EXEMPT] &&
	    !strcmp(name, "_GLOBAL_OFFSET_TABLE_"))
		return true;
	if (machine == EM_PPC64 && !strcmp(name, ".TOC."))
		return true;
	return false;
}

/*
 * simplify_symbols(): every SHN_UNDEF symbol in .symtab order; the last error wins (all versions).
 */
int kp_rule_simplify_symbols(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	const struct kp_module *m = ld->m;
	int ret = 0;

	for (size_t i = 0; i < m->nimports; i++) {
		const struct kp_import *imp = &m->imports[i];
		enum resolved r;
		int err = 0;

		r = resolve_symbol(c, ld, imp->name, &err);
		if (r == RESOLVED)
			continue;
		if (r == NOT_FOUND && (imp->weak || ignore_undef_symbol(c, m->machine, imp->name)))
			continue;
		if (r == NOT_FOUND)
			err = -ENOENT;
		ret = err;
		if (c->p->has[KP_F_ERRNO_IN_UNKNOWN])
			kp_msg(c, ld, "%s: Unknown symbol %s (err %d)", ld->name, imp->name, err);
		else
			kp_msg(c, ld, "%s: Unknown symbol %s (err %d)", ld->name, imp->name,
			       r == NOT_FOUND ? 0 : err);
		if (r == NOT_FOUND) {
			bool gplok = !(ld->v->taints & (1UL << KP_TAINT_PROPRIETARY_MODULE));
			struct kp_found any;

			if (!gplok && kp_find_symbol(c, imp->name, true, &any) && any.gpl_only)
				kp_finding(ld->v, "gpl-only-symbol", KP_SEV_ERROR,
					   KP_CONS_LOAD_FAIL, imp->name,
					   "%s is EXPORT_SYMBOL_GPL and the module is "
					   "proprietary (P): not visible to it",
					   imp->name);
			else if (!kp_find_symbol(c, imp->name, true, &any))
				kp_finding(ld->v, "unknown-symbol", KP_SEV_ERROR, KP_CONS_LOAD_FAIL,
					   imp->name,
					   "%s is not exported by the kernel or any loaded "
					   "module",
					   imp->name);
		}
	}
	return ret;
}
