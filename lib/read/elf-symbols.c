// SPDX-License-Identifier: LGPL-2.1-or-later
/* The symbol table of an ELF image and the names its string table gives them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf-file-internal.h"

/*
 * The loader before v6.13 (no elf_validity_cache_strtab()) takes a symbol's name as
 * info->strtab + st_name, info->strtab being the file copy at .strtab's sh_offset
 * (setup_load_info()), never bounded by sh_size (kernel/module/main.c simplify_symbols(),
 * kallsyms.c layout_symtab()): a name outside the table is the file's bytes there, up to a
 * NUL wherever one ends it, in the buffer holding the whole file (kernel_read_file() or
 * copy_module_from_user(): a signature trailer too; module_sig_check() shortens info->len,
 * which bounds only the ELF checks). What the names of a malformed table read as.
 */
struct symnames {
	const struct kp_section *strsec;
	size_t tab_end; /* names starting below it end with a NUL inside the table */
	size_t budget;	/* bytes of names outside the table still to scan */
};

/* Bytes of names read outside the table: past this the file is refused, not scanned on. */
static size_t symname_budget(size_t len)
{
	return len < SIZE_MAX / 4 - 65536 ? 2 * len + 65536 : SIZE_MAX / 2;
}

/*
 * @st_name read from the file (a name outside the table or running past its end): sets
 * *@name; counts in e->symname_past_end a name no NUL ends before the end of the buffer (the
 * kernel reads on past it) or that starts past it. Returns 1 for a name that starts inside
 * the buffer and runs to its end, 0 for another.
 */
static int file_symname(struct kp_elf *e, const struct kp_elf_source *src, struct symnames *sn,
			size_t i, uint32_t st_name, const char **name, struct kp_err *err)
{
	size_t tab_off = (size_t)(sn->strsec->data - e->image);
	size_t rest, n;

	if (st_name >= e->buf_len - tab_off) {
		*name = "";
		e->symname_past_end += i > 0;
		return 0;
	}
	if (!e->symstr_copy) {
		/* [tab_off, end of the buffer) and a NUL; a sparse image loads it first */
		if (src && kp_elf_load_range(e, src, tab_off, e->buf_len - tab_off, err) < 0)
			return -1;
		e->symstr_copy = malloc(e->buf_len - tab_off + 1);
		if (!e->symstr_copy)
			return kp_err_set(err, "out of memory");
		memcpy(e->symstr_copy, e->image + tab_off, e->buf_len - tab_off);
		e->symstr_copy[e->buf_len - tab_off] = '\0';
	}
	rest = e->buf_len - tab_off - st_name;
	n = strnlen(e->symstr_copy + st_name, rest <= sn->budget ? rest : sn->budget + 1);
	if (n > sn->budget)
		return kp_err_set(
			err,
			"symbol %zu: the names read outside the symbol string table add up "
			"to more than %zu bytes",
			i, symname_budget(e->buf_len));
	sn->budget -= n;
	*name = e->symstr_copy + st_name;
	e->symname_past_end += i > 0 && n == rest;
	return i > 0 && n == rest;
}

/*
 * is_core_symbol() (CONFIG_KALLSYMS_ALL, as Debian's kernels): a defined symbol with a name
 * in an SHF_ALLOC section that is not an init one (".init*"): layout_symtab() counts its name.
 */
static bool kallsyms_keeps(const struct kp_elf *e, const struct kp_sym *s)
{
	const struct kp_section *sec;

	if (s->shndx == SHN_UNDEF || s->shndx >= e->nsections)
		return false;
	sec = &e->sections[s->shndx];
	return (sec->flags & SHF_ALLOC) && strncmp(sec->name, ".init", 5) != 0;
}

int kp_elf_load_symbols(struct kp_elf *e, const struct kp_elf_source *src, struct kp_err *err)
{
	size_t idx = 0, xndx_idx = 0;
	const struct kp_section *symsec, *strsec;
	struct symnames sn;
	Elf_Data *d, *xd = NULL;
	size_t entsize;

	for (size_t i = 1; i < e->nsections; i++) {
		if (e->sections[i].type == SHT_SYMTAB && !idx)
			idx = i;
		if (e->sections[i].type == SHT_SYMTAB_SHNDX)
			xndx_idx = i;
	}
	e->symtab_index = idx;
	if (!idx)
		return 0;
	symsec = &e->sections[idx];
	if (symsec->link == 0 || symsec->link >= e->nsections)
		return kp_err_set(err, ".symtab has an invalid string table link %u", symsec->link);
	strsec = &e->sections[symsec->link];
	if (strsec->type != SHT_STRTAB || !strsec->data)
		return kp_err_set(err, ".symtab string table (section %u) is not a string table",
				  symsec->link);
	if (strsec->size == 0)
		e->symstr_state = KP_SYMSTR_EMPTY;
	else if (strsec->data[0] != '\0')
		e->symstr_state = KP_SYMSTR_NO_LEADING_NUL;
	else if (strsec->data[strsec->size - 1] != '\0')
		e->symstr_state = KP_SYMSTR_UNTERMINATED;
	sn.strsec = strsec;
	sn.tab_end = strsec->size;
	while (sn.tab_end && strsec->data[sn.tab_end - 1] != '\0')
		sn.tab_end--;
	sn.budget = symname_budget(e->buf_len);
	d = elf_getdata(elf_getscn(e->elf, idx), NULL);
	if (!d)
		return kp_err_set(err, "cannot read .symtab: %s", kp_elf_errmsg());
	entsize = gelf_fsize(e->elf, ELF_T_SYM, 1, EV_CURRENT);
	if (!entsize || d->d_size % entsize)
		return kp_err_set(err, ".symtab size %zu is not a multiple of the symbol size",
				  (size_t)d->d_size);
	if (xndx_idx) {
		xd = elf_getdata(elf_getscn(e->elf, xndx_idx), NULL);
		if (!xd)
			return kp_err_set(err, "cannot read .symtab_shndx: %s", kp_elf_errmsg());
	}
	e->nsyms = d->d_size / entsize;
	if (!e->nsyms)
		return 0;
	e->syms = kp_calloc(e->nsyms, sizeof(*e->syms));
	if (!e->syms)
		return kp_err_set(err, "out of memory");
	for (size_t i = 0; i < e->nsyms; i++) {
		struct kp_sym *s = &e->syms[i];
		GElf_Sym sym;
		Elf32_Word xndx = 0;

		if (!gelf_getsymshndx(d, xd, (int)i, &sym, &xndx))
			return kp_err_set(err, "cannot read symbol %zu: %s", i, kp_elf_errmsg());
		/* v6.13+ refuses a name that starts outside the table */
		if (sym.st_name >= strsec->size && e->symstr_state == KP_SYMSTR_OK)
			e->symstr_state = KP_SYMSTR_NAME_OOB;
		int past = 0;

		if (sym.st_name < sn.tab_end)
			s->name = (const char *)strsec->data + sym.st_name;
		else if ((past = file_symname(e, src, &sn, i, sym.st_name, &s->name, err)) < 0)
			return -1;
		s->value = sym.st_value;
		s->size = sym.st_size;
		s->shndx = sym.st_shndx == SHN_XINDEX ? xndx : sym.st_shndx;
		s->bind = GELF_ST_BIND(sym.st_info);
		s->type = GELF_ST_TYPE(sym.st_info);
		if (past && s->shndx == SHN_UNDEF && !e->undef_name_past_end)
			e->undef_name_past_end = i;
		if (past && !e->kept_name_past_end && kallsyms_keeps(e, s))
			e->kept_name_past_end = i;
		if (i > 0 && s->shndx == SHN_UNDEF && !e->undef_name_outside &&
		    sym.st_name >= e->buf_len - (size_t)(strsec->data - e->image)) {
			e->undef_name_outside = i;
			e->undef_name_outside_off =
				(uint64_t)(strsec->data - e->image) + sym.st_name;
		}
		e->nundef += i > 0 && s->shndx == SHN_UNDEF;
	}
	return 0;
}
