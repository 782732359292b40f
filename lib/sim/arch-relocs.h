/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which relocation types each architecture's module loader applies, per kernel version:
 * the data behind the unsupported-relocation rule (lib/sim/rules/relocations.c). One table
 * per architecture, taken from arch/<arch>/kernel/module*.c of the 5.10, 6.1, 6.12 and 7.2
 * trees (Debian's linux-source packages); lib/sim/arch-relocs.c names the sources.
 */
#ifndef KP_ARCH_RELOCS_H
#define KP_ARCH_RELOCS_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/profile.h"

enum kp_reloc_outcome {
	KP_RELOC_APPLIED,      /* the architecture applies the type */
	KP_RELOC_REFUSED,      /* refused: @line (may be NULL: no line) and @err */
	KP_RELOC_CONFIG,       /* applied only when the kernel has CONFIG_<@config>=y */
	KP_RELOC_NOT_MODELLED, /* an architecture kopolicy has no table for */
};

struct kp_reloc_verdict {
	enum kp_reloc_outcome outcome;
	const char *arch;     /* "x86_64", "arm64", ... ("unknown" when not modelled) */
	const char *function; /* the kernel function that decides, e.g. "apply_relocate_add()" */
	const char *name;     /* the type's name ("R_X86_64_GOTPCREL"), NULL when unknown */
	const char *prefix;   /* the file's pr_fmt() prefix of the line ("module: "), "" for none */
	const char *line_fmt; /* printf format of the kernel line: %s mod->name, %u the type */
	int err;	      /* negative errno of a refusal */
	const char *config;   /* KP_RELOC_CONFIG: the option, without CONFIG_ */
};

/*
 * What the loader of kernel @v (NULL: the newest modelled one) does with relocation @type
 * from an SHT_RELA (@rela) or SHT_REL section of a module for @machine (@is64: ELFCLASS64).
 */
void kp_arch_reloc_check(uint16_t machine, bool is64, bool rela, uint32_t type,
			 const struct kp_kver *v, struct kp_reloc_verdict *out);

/* The name of @type on @machine when kopolicy knows it, else NULL. */
const char *kp_arch_reloc_name(uint16_t machine, uint32_t type);

#endif
