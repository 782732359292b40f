/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ELF access over a module's bytes with libelf: section table, symbols and
 * relocations for any class, byte order and machine. Every offset taken from
 * the file is bounds-checked here so the readers above never are surprised.
 * No kernel policy lives in this file.
 */
#ifndef KP_ELF_FILE_H
#define KP_ELF_FILE_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "module.h"
#include "util/util.h"

struct kp_reloc {
	uint64_t offset;
	uint32_t type;
	uint32_t sym;
	int64_t addend; /* RELA addend; REL addends are read from the field */
};

/* The first of @n relocations sorted by offset at or after @offset (@n when none). */
size_t kp_reloc_lower(const struct kp_reloc *r, size_t n, uint64_t offset);

struct kp_section {
	const char *name;   /* "" when the name is unreadable */
	uint32_t name_hash; /* kp_hash_string(name): lookups by name compare this first */
	uint32_t type;
	uint64_t flags;
	uint64_t addr;
	uint64_t size;
	uint32_t link;
	uint32_t info;
	const unsigned char *data; /* raw file bytes, NULL for NOBITS/out of bounds/not loaded */
	bool unloaded;		   /* a sparse image left it out (see struct kp_elf_source) */
	struct kp_reloc *relocs;   /* loaded on demand, sorted by offset */
	size_t nrelocs;
	bool relocs_loaded;
	bool rela;
};

struct kp_sym {
	const char *name;
	uint64_t value;
	uint64_t size;
	uint32_t shndx; /* SHN_UNDEF, SHN_ABS, ... or a section index (extended indices resolved) */
	uint8_t bind;
	uint8_t type;
};

struct kp_elf {
	Elf *elf;
	const unsigned char *image;
	size_t len;
	/* The loader's buffer: the image and what follows it in the file (>= len, see below) */
	size_t buf_len;
	bool is64;
	bool big_endian;
	uint16_t machine;
	uint16_t type;	/* e_type */
	uint32_t flags; /* e_flags: the instruction set variant (EF_MIPS_MACH, ...) */
	/* The raw header fields the kernel compares (0 and SHN_XINDEX: extended numbering). */
	uint16_t raw_shnum, raw_shstrndx;
	/* Section 0 is not all-null (type, size or address set): its sh_type. */
	bool sec0_set;
	uint32_t sec0_type;
	uint64_t shoff;	  /* e_shoff: where the section header table starts */
	size_t nsections; /* the real count (extended numbering resolved) */
	struct kp_section *sections;
	size_t symtab_index; /* 0: none */
	struct kp_sym *syms;
	/* The buffer from .strtab's offset on, NUL-terminated: names read past the table */
	char *symstr_copy;
	enum kp_symstr_state symstr_state; /* what elf_validity_cache_strtab() (v6.13+) says */
	/* Symbols (not 0) whose name no NUL ends before the end of the buffer (load_symbols) */
	size_t symname_past_end;
	/* The first SHN_UNDEF one (strong or weak) whose name starts inside the buffer (index) */
	size_t undef_name_past_end;
	/* The first defined one kallsyms keeps (layout_symtab()'s strlen()) (.symtab index) */
	size_t kept_name_past_end;
	/* The first SHN_UNDEF one whose name starts past the buffer (.symtab index), and where */
	size_t undef_name_outside;
	uint64_t undef_name_outside_off; /* .strtab's offset + st_name: a file offset */
	size_t nsyms;
	size_t nundef; /* symbols with SHN_UNDEF, not counting the null symbol 0 */
};

/* Opens @image (kept borrowed, must outlive @e). */
int kp_elf_open(struct kp_elf *e, const unsigned char *image, size_t len, struct kp_err *err);

/*
 * A file brought into memory piece by piece: @image has the file's full length but only
 * what load() copied in is valid. kp_elf_open_sparse() loads the ELF header, the section
 * header table, the section names, each section want() selects plus the relocation
 * sections that apply to them; every other section has data == NULL and unloaded set.
 * Whatever the caller reads outside those (a signature trailer) it loads itself.
 */
struct kp_elf_source {
	/* Copies bytes [@off, @off + @len) of the file into the image; 0, or -1 with @err. */
	int (*load)(void *ctx, uint64_t off, uint64_t len, struct kp_err *err);
	void *ctx;
	bool (*want)(const char *name, uint32_t type, uint64_t flags);
	/* Also every relocation section that applies to an SHF_ALLOC section. */
	bool alloc_relocs;
};
int kp_elf_open_sparse(struct kp_elf *e, const unsigned char *image, size_t len,
		       const struct kp_elf_source *src, struct kp_err *err);
/*
 * A module as the kernel's loader holds it: @image has @buf_len bytes, the ELF image its
 * first @len (a signature trailer follows). The loader before v6.13 reads a symbol name
 * outside .strtab up to a NUL anywhere in that buffer (module_sig_check() shortens
 * info->len, which bounds only the ELF checks): such names run on into the trailer.
 * @src NULL: all of @image is in memory; else as kp_elf_open_sparse().
 */
int kp_elf_open_module(struct kp_elf *e, const unsigned char *image, size_t len, size_t buf_len,
		       const struct kp_elf_source *src, struct kp_err *err);
void kp_elf_close(struct kp_elf *e);
/* After a jump out of a call on @e (kp_bytes_guard()): frees our arrays, leaves libelf's. */
void kp_elf_abandon(struct kp_elf *e);

/* Index of the first section called @name, 0 if none. */
size_t kp_elf_find_section(const struct kp_elf *e, const char *name);
/* Number of sections called @name (the loader insists some are unique). */
size_t kp_elf_count_sections(const struct kp_elf *e, const char *name);

/*
 * The relocations that apply to section @idx, sorted by offset. Returns NULL
 * with *@n = 0 when there are none; -1 on a malformed relocation section.
 */
int kp_elf_relocs(struct kp_elf *e, size_t idx, const struct kp_reloc **out, size_t *n,
		  struct kp_err *err);

/*
 * The entries of relocation section @ridx (SHT_REL or SHT_RELA) in file order, in a new
 * array the caller frees (NULL with *@n = 0 for an empty section); -1 with @err when the
 * section is malformed or not loaded.
 */
int kp_elf_reloc_section(struct kp_elf *e, size_t ridx, struct kp_reloc **out, size_t *n,
			 struct kp_err *err);

/* Where a pointer-like field of @width bytes at @offset in section @idx points. */
struct kp_target {
	bool relocated;	 /* a relocation applies to the field */
	bool in_section; /* the target lies in a section: shndx/offset valid */
	uint32_t shndx;
	uint64_t offset;	  /* offset within section shndx */
	uint64_t value;		  /* absolute value (SHN_ABS symbol + addend, or the raw field) */
	const struct kp_sym *sym; /* symbol the relocation names, if any */
};

int kp_elf_field_target(struct kp_elf *e, size_t idx, uint64_t offset, unsigned width,
			struct kp_target *t, struct kp_err *err);

/* Reads an unsigned field of @width (1, 2, 4 or 8) bytes; false if out of bounds. */
bool kp_elf_read_uint(const struct kp_elf *e, size_t idx, uint64_t offset, unsigned width,
		      uint64_t *val);

/* A NUL-terminated string at @offset of section @idx, or NULL if not terminated in bounds. */
const char *kp_elf_string_at(const struct kp_elf *e, size_t idx, uint64_t offset, size_t *len);

const char *kp_elf_machine_name(uint16_t machine);

#endif
