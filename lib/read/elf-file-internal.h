/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the ELF reader's files share (elf-file.c opens an image, elf-symbols.c reads its
 * symbols, elf-relocs.c its relocations). Private to lib/read/.
 */
#ifndef KP_READ_ELF_FILE_INTERNAL_H
#define KP_READ_ELF_FILE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "elf-file.h"
#include "util/util.h"

/* libelf's last error text, taken (elf_errno() clears it); never NULL. */
const char *kp_elf_errmsg(void);

/* Loads [@off, @off + @len) of a sparse image, clamped to the buffer. */
int kp_elf_load_range(const struct kp_elf *e, const struct kp_elf_source *src, uint64_t off,
		      uint64_t len, struct kp_err *err);

static inline bool kp_elf_is_reloc(uint32_t type)
{
	return type == SHT_REL || type == SHT_RELA;
}

/*
 * The first SHT_SYMTAB's symbols and their names into e->syms (elf-symbols.c), after the
 * sections are in; @src NULL for an image wholly in memory. 0, or -1 with @err.
 */
int kp_elf_load_symbols(struct kp_elf *e, const struct kp_elf_source *src, struct kp_err *err);

#endif
