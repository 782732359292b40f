// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libelf loaded on first use (lazy-lib.h): the stubs of the functions the program calls, with
 * libelf.h's and gelf.h's prototypes.
 */
#include "lazy-stubs-internal.h"

#include <gelf.h>
#include <libelf.h>

#define KP_LAZY_FNS(F, V, Z, VZ) \
	F(Elf *, elf_begin, (int a, Elf_Cmd b, Elf *c), (a, b, c)) \
	Z(int, elf_end, (Elf *a), (a), 0) \
	F(const char *, elf_errmsg, (int a), (a)) \
	F(int, elf_errno, (void), ()) \
	F(Elf_Data *, elf_getdata, (Elf_Scn *a, Elf_Data *b), (a, b)) \
	F(Elf_Scn *, elf_getscn, (Elf *a, size_t b), (a, b)) \
	F(int, elf_getshdrnum, (Elf *a, size_t *b), (a, b)) \
	F(int, elf_getshdrstrndx, (Elf *a, size_t *b), (a, b)) \
	F(Elf_Kind, elf_kind, (Elf *a), (a)) \
	F(Elf *, elf_memory, (char *a, size_t b), (a, b)) \
	F(Elf_Scn *, elf_nextscn, (Elf *a, Elf_Scn *b), (a, b)) \
	F(char *, elf_strptr, (Elf *a, size_t b, size_t c), (a, b, c)) \
	F(unsigned int, elf_version, (unsigned int a), (a)) \
	F(size_t, gelf_fsize, (Elf *a, Elf_Type b, size_t c, unsigned int d), (a, b, c, d)) \
	F(GElf_Ehdr *, gelf_getehdr, (Elf *a, GElf_Ehdr *b), (a, b)) \
	F(GElf_Rel *, gelf_getrel, (Elf_Data *a, int b, GElf_Rel *c), (a, b, c)) \
	F(GElf_Rela *, gelf_getrela, (Elf_Data *a, int b, GElf_Rela *c), (a, b, c)) \
	F(GElf_Shdr *, gelf_getshdr, (Elf_Scn *a, GElf_Shdr *b), (a, b)) \
	F(GElf_Sym *, gelf_getsymshndx, (Elf_Data *a, Elf_Data *b, int c, GElf_Sym *d, \
		Elf32_Word *e), (a, b, c, d, e))

KP_LAZY_TABLE;
KP_LAZY_LIB(libelf, "libelf", KP_LIBELF_SONAME, NULL)
KP_LAZY_STUBS
