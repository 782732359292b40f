/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The relocation types of each architecture's loader (arch-relocs-table.c, its sources named
 * there), as arch-relocs.c looks them up. Private to lib/sim/.
 */
#ifndef KP_SIM_ARCH_RELOCS_INTERNAL_H
#define KP_SIM_ARCH_RELOCS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch-relocs.h"

/* A type the architecture applies, from release @from until @until (0: every one). */
struct reloc_row {
	uint32_t type;
	const char *name;
	struct kp_kver from, until;
	const char *config; /* applied only with CONFIG_<config>=y (arm), else NULL */
};

/* A type the architecture names and refuses with its own line (or none). */
struct refused_row {
	uint32_t type;
	const char *name;
	struct kp_kver from, until;
	const char *line_fmt; /* NULL: refused without a line */
	int err;
};

/* One architecture: its tables and what its loader prints for a type it does not know. */
struct arch_relocs {
	const char *arch;
	uint16_t machine;
	int elfclass; /* 0: either; ELFCLASS32 / ELFCLASS64 */
	/* CONFIG_MODULES_USE_ELF_REL / _RELA: apply_relocate() / apply_relocate_add() exist */
	bool rel, rela;
	/*
	 * pr_fmt() of the architecture's file, in front of its pr_err() lines (not of printk()
	 * ones): from @prefix_from on (0: all versions); NULL: none.
	 */
	const char *prefix;
	struct kp_kver prefix_from;
	const char *unknown_fmt; /* the default: branch of the switch */
	int unknown_err;
	const struct reloc_row *rows;
	size_t nrows;
	const struct refused_row *refused;
	size_t nrefused;
};

/* The architectures modelled: kp_arch_nrelocs entries. */
extern const struct arch_relocs kp_arch_relocs[];
extern const size_t kp_arch_nrelocs;
/* Names of types no table applies that modules built the wrong way carry (messages only). */
extern const struct refused_row kp_arch_known_names[];
extern const size_t kp_arch_nknown_names;

#endif
