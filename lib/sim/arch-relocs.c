// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What each architecture's apply_relocate() / apply_relocate_add() does with a relocation
 * type (arch/ARCH/kernel/module*.c, 5.10 to 7.2): applied, applied with a CONFIG option, or
 * refused with the architecture's line; the types and their sources: arch-relocs-table.c.
 */
#include "arch-relocs-internal.h"

#include <elf.h>
#include <errno.h>
#include <stddef.h>

#include "util/util.h"

/* include/linux/moduleloader.h: the stubs of an architecture without REL or RELA support. */
#define NO_HANDLER_FMT "module %s: REL relocation unsupported"

static bool in_range(const struct kp_kver *from, const struct kp_kver *until,
		     const struct kp_kver *v)
{
	if (!v) /* the newest modelled kernel */
		return until->major == 0;
	if (from->major && kp_kver_cmp(v, from) < 0)
		return false;
	return until->major == 0 || kp_kver_cmp(v, until) < 0;
}

static const struct arch_relocs *find_arch(uint16_t machine, bool is64)
{
	for (size_t i = 0; i < kp_arch_nrelocs; i++) {
		const struct arch_relocs *a = &kp_arch_relocs[i];

		if (a->machine == machine &&
		    (!a->elfclass || a->elfclass == (is64 ? ELFCLASS64 : ELFCLASS32)))
			return a;
	}
	return NULL;
}

const char *kp_arch_reloc_name(uint16_t machine, uint32_t type)
{
	for (size_t i = 0; i < kp_arch_nrelocs; i++) {
		const struct arch_relocs *a = &kp_arch_relocs[i];

		if (a->machine != machine)
			continue;
		for (size_t k = 0; k < a->nrows; k++)
			if (a->rows[k].type == type)
				return a->rows[k].name;
		for (size_t k = 0; k < a->nrefused; k++)
			if (a->refused[k].type == type)
				return a->refused[k].name;
	}
	if (machine == EM_X86_64 || machine == EM_AARCH64)
		for (size_t k = 0; k < kp_arch_nknown_names; k++)
			if (kp_arch_known_names[k].type == type &&
			    (machine == EM_AARCH64) == (type >= 256))
				return kp_arch_known_names[k].name;
	return NULL;
}

void kp_arch_reloc_check(uint16_t machine, bool is64, bool rela, uint32_t type,
			 const struct kp_kver *v, struct kp_reloc_verdict *out)
{
	const struct arch_relocs *a = find_arch(machine, is64);

	*out = (struct kp_reloc_verdict){ .outcome = KP_RELOC_NOT_MODELLED,
					  .arch = "unknown",
					  .prefix = "" };
	if (!a)
		return;
	out->arch = a->arch;
	if (a->prefix && (!v || !a->prefix_from.major || kp_kver_cmp(v, &a->prefix_from) >= 0))
		out->prefix = a->prefix;
	out->name = kp_arch_reloc_name(machine, type);
	out->function = rela ? "apply_relocate_add()" : "apply_relocate()";
	if (!(rela ? a->rela : a->rel)) {
		out->prefix = ""; /* printk() */
		out->outcome = KP_RELOC_REFUSED;
		out->line_fmt = NO_HANDLER_FMT;
		out->err = -ENOEXEC;
		return;
	}
	for (size_t k = 0; k < a->nrows; k++) {
		const struct reloc_row *r = &a->rows[k];

		if (r->type != type || !in_range(&r->from, &r->until, v))
			continue;
		out->outcome = r->config ? KP_RELOC_CONFIG : KP_RELOC_APPLIED;
		out->config = r->config;
		if (r->config) {
			out->line_fmt = a->unknown_fmt;
			out->err = a->unknown_err;
		}
		return;
	}
	out->outcome = KP_RELOC_REFUSED;
	out->line_fmt = a->unknown_fmt;
	out->err = a->unknown_err;
	for (size_t k = 0; k < a->nrefused; k++) {
		const struct refused_row *r = &a->refused[k];

		if (r->type == type && in_range(&r->from, &r->until, v)) {
			out->line_fmt = r->line_fmt;
			out->err = r->err;
			return;
		}
	}
}
