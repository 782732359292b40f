// SPDX-License-Identifier: LGPL-2.1-or-later
#include "elf-file.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>


static pthread_once_t libelf_once = PTHREAD_ONCE_INIT;
static bool libelf_ok;

static void libelf_init(void)
{
	libelf_ok = elf_version(EV_CURRENT) != EV_NONE;
}

/*
 * libelf's last error, taken (elf_errno() clears it): the text belongs to this call, never
 * to a file read before. open_image() clears it first too.
 */
static const char *elf_error(void)
{
	int n = elf_errno();
	const char *m = n ? elf_errmsg(n) : NULL;

	return m ? m : "unknown libelf error";
}

const char *kp_elf_machine_name(uint16_t machine)
{
	switch (machine) {
	case EM_X86_64:
		return "x86_64";
	case EM_386:
		return "i386";
	case EM_AARCH64:
		return "aarch64";
	case EM_ARM:
		return "arm";
	case EM_S390:
		return "s390";
	case EM_PPC64:
		return "ppc64";
	case EM_PPC:
		return "ppc";
	case EM_RISCV:
		return "riscv";
	case EM_MIPS:
		return "mips";
	case EM_LOONGARCH:
		return "loongarch";
	case EM_SPARCV9:
		return "sparc64";
	case EM_SPARC:
		return "sparc";
	case EM_PARISC:
		return "parisc";
	case EM_SH:
		return "sh";
	case EM_68K:
		return "m68k";
	case EM_ALPHA:
		return "alpha";
	default:
		return "unknown";
	}
}

/* Loads [@off, @off + @len) of a sparse image, clamped to the buffer. */
static int load_range(const struct kp_elf *e, const struct kp_elf_source *src, uint64_t off,
		      uint64_t len, struct kp_err *err)
{
	if (off >= e->buf_len || len == 0)
		return 0;
	if (len > e->buf_len - off)
		len = e->buf_len - off;
	return src->load(src->ctx, off, len, err);
}

static bool is_reloc(uint32_t type)
{
	return type == SHT_REL || type == SHT_RELA;
}

/* Sparse images: which sections to bring in; the rest stay unloaded. */
static int load_wanted(struct kp_elf *e, const struct kp_elf_source *src, struct kp_err *err)
{
	for (size_t i = 1; i < e->nsections; i++) {
		struct kp_section *s = &e->sections[i];
		const struct kp_section *t = s->info < e->nsections ? &e->sections[s->info] : NULL;
		/*
		 * Wanted by its own name, or a relocation section applying to a wanted one, or
		 * (alloc_relocs) to any SHF_ALLOC section whatever its type, as
		 * apply_relocations() (kernel/module/main.c) reads them.
		 */
		bool want = src->want(s->name, s->type, s->flags) ||
			    (is_reloc(s->type) && t &&
			     ((!is_reloc(t->type) && src->want(t->name, t->type, t->flags)) ||
			      (src->alloc_relocs && (t->flags & SHF_ALLOC))));

		if (!s->data)
			continue;
		if (!want) {
			s->data = NULL;
			s->unloaded = true;
			continue;
		}
		if (load_range(e, src, (uint64_t)(s->data - e->image), s->size, err) < 0)
			return -1;
	}
	return 0;
}

static int load_sections(struct kp_elf *e, size_t shstrndx, const struct kp_elf_source *src,
			 struct kp_err *err)
{
	e->sections = kp_calloc(e->nsections, sizeof(*e->sections));
	if (!e->sections)
		return kp_err_set(err, "out of memory");
	if (src) {
		GElf_Shdr sh;

		/* The names first: elf_strptr() reads the section name table. */
		if (gelf_getshdr(elf_getscn(e->elf, shstrndx), &sh) && sh.sh_type != SHT_NOBITS &&
		    load_range(e, src, sh.sh_offset, sh.sh_size, err) < 0)
			return -1;
	}
	for (size_t i = 0; i < e->nsections; i++) {
		struct kp_section *s = &e->sections[i];
		Elf_Scn *scn = elf_getscn(e->elf, i);
		GElf_Shdr sh;
		const char *name;

		if (!scn || !gelf_getshdr(scn, &sh))
			return kp_err_set(err, "bad section header %zu: %s", i, elf_error());
		name = elf_strptr(e->elf, shstrndx, sh.sh_name);
		s->name = name ? name : "";
		s->name_hash = kp_hash_string(s->name);
		s->type = sh.sh_type;
		s->flags = sh.sh_flags;
		s->addr = sh.sh_addr;
		s->size = sh.sh_size;
		s->link = sh.sh_link;
		s->info = sh.sh_info;
		if (i == 0 || sh.sh_type == SHT_NOBITS || sh.sh_type == SHT_NULL)
			continue;
		if (sh.sh_offset > e->len || sh.sh_size > e->len - sh.sh_offset)
			return kp_err_set(err,
					  "section %s (index %zu) extends past the end of the file",
					  s->name[0] ? s->name : "?", i);
		s->data = e->image + sh.sh_offset;
	}
	return src ? load_wanted(e, src, err) : 0;
}

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
		if (src && load_range(e, src, tab_off, e->buf_len - tab_off, err) < 0)
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

static int load_symbols(struct kp_elf *e, const struct kp_elf_source *src, struct kp_err *err)
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
		return kp_err_set(err, "cannot read .symtab: %s", elf_error());
	entsize = gelf_fsize(e->elf, ELF_T_SYM, 1, EV_CURRENT);
	if (!entsize || d->d_size % entsize)
		return kp_err_set(err, ".symtab size %zu is not a multiple of the symbol size",
				  (size_t)d->d_size);
	if (xndx_idx) {
		xd = elf_getdata(elf_getscn(e->elf, xndx_idx), NULL);
		if (!xd)
			return kp_err_set(err, "cannot read .symtab_shndx: %s", elf_error());
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
			return kp_err_set(err, "cannot read symbol %zu: %s", i, elf_error());
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
		if (past && s->shndx == SHN_UNDEF && s->bind != STB_WEAK && !e->undef_name_past_end)
			e->undef_name_past_end = i;
		if (past && !e->kept_name_past_end && kallsyms_keeps(e, s))
			e->kept_name_past_end = i;
		e->nundef += i > 0 && s->shndx == SHN_UNDEF;
	}
	return 0;
}

/*
 * Sparse images: the header and the section header table, before libelf sees them (it
 * converts a foreign-endian table as soon as it opens the file). Raw Elf{32,64}_Ehdr
 * fields; anything odd is left for the checks in open_image() to report.
 */
static int load_header(const unsigned char *image, size_t len, const struct kp_elf_source *src,
		       struct kp_err *err)
{
	uint64_t shoff, entsz, nsh;
	bool is64, big;

	if (src->load(src->ctx, 0, len < 64 ? len : 64, err) < 0)
		return -1;
	if (len < 52 || memcmp(image, ELFMAG, SELFMAG))
		return 0;
	is64 = image[EI_CLASS] == ELFCLASS64;
	big = image[EI_DATA] == ELFDATA2MSB;
	if (is64 && len < 64)
		return 0;
	shoff = is64 ? kp_load64(image + 0x28, big) : kp_load32(image + 0x20, big);
	nsh = kp_load16(image + (is64 ? 0x3c : 0x30), big);
	entsz = is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	if (shoff == 0 || shoff >= len)
		return 0;
	if (src->load(src->ctx, shoff, entsz > len - shoff ? len - shoff : entsz, err) < 0)
		return -1;
	/* Extended numbering: the count is section 0's sh_size. */
	if (nsh == 0 && entsz <= len - shoff)
		nsh = is64 ? kp_load64(image + shoff + 0x20, big)
			   : kp_load32(image + shoff + 0x14, big);
	if (nsh > (len - shoff) / entsz)
		nsh = (len - shoff) / entsz;
	return nsh > 1 ? src->load(src->ctx, shoff, nsh * entsz, err) : 0;
}

static int open_image(struct kp_elf *e, const unsigned char *image, size_t len, size_t buf_len,
		      const struct kp_elf_source *src, struct kp_err *err);

int kp_elf_open(struct kp_elf *e, const unsigned char *image, size_t len, struct kp_err *err)
{
	return open_image(e, image, len, len, NULL, err);
}

int kp_elf_open_sparse(struct kp_elf *e, const unsigned char *image, size_t len,
		       const struct kp_elf_source *src, struct kp_err *err)
{
	memset(e, 0, sizeof(*e));
	if (load_header(image, len, src, err) < 0)
		return -1;
	return open_image(e, image, len, len, src, err);
}

int kp_elf_open_module(struct kp_elf *e, const unsigned char *image, size_t len, size_t buf_len,
		       const struct kp_elf_source *src, struct kp_err *err)
{
	if (buf_len < len)
		buf_len = len;
	if (!src)
		return open_image(e, image, len, buf_len, NULL, err);
	memset(e, 0, sizeof(*e));
	if (load_header(image, len, src, err) < 0)
		return -1;
	return open_image(e, image, len, buf_len, src, err);
}

static int open_image(struct kp_elf *e, const unsigned char *image, size_t len, size_t buf_len,
		      const struct kp_elf_source *src, struct kp_err *err)
{
	GElf_Ehdr eh;
	size_t shstrndx;

	memset(e, 0, sizeof(*e));
	pthread_once(&libelf_once, libelf_init);
	if (!libelf_ok)
		return kp_err_set(err, "libelf initialisation failed");
	if (len < EI_NIDENT || memcmp(image, ELFMAG, SELFMAG))
		return kp_err_set(err, "not an ELF file");
	/* The identification bytes, checked here: libelf's words for them vary by version. */
	if (image[EI_CLASS] != ELFCLASS32 && image[EI_CLASS] != ELFCLASS64)
		return kp_err_set(err, "invalid ELF header: unknown class %u (EI_CLASS)",
				  image[EI_CLASS]);
	if (image[EI_DATA] != ELFDATA2LSB && image[EI_DATA] != ELFDATA2MSB)
		return kp_err_set(err, "invalid ELF header: unknown byte order %u (EI_DATA)",
				  image[EI_DATA]);
	if (image[EI_VERSION] != EV_CURRENT)
		return kp_err_set(err, "invalid ELF header: unknown version %u (EI_VERSION)",
				  image[EI_VERSION]);
	(void)elf_errno(); /* no error left over from an earlier file */
	e->image = image;
	e->len = len;
	e->buf_len = buf_len;
	/* libelf may byte-swap converted sections in place: the image is ours to change. */
	e->elf = elf_memory((char *)image, len);
	if (!e->elf)
		return kp_err_set(err, "cannot parse ELF: %s", elf_error());
	if (elf_kind(e->elf) != ELF_K_ELF || !gelf_getehdr(e->elf, &eh)) {
		kp_err_set(err, "invalid ELF header: %s", elf_error());
		goto fail;
	}
	{
		uint64_t nsh = eh.e_shnum ? eh.e_shnum : 1; /* 0: extended count in section 0 */
		uint64_t entsz = eh.e_ident[EI_CLASS] == ELFCLASS64 ? sizeof(Elf64_Shdr)
								    : sizeof(Elf32_Shdr);

		if (eh.e_shoff == 0) {
			kp_err_set(err, "ELF file has no section header table");
			goto fail;
		}
		if (eh.e_shoff > len || nsh * entsz > len - eh.e_shoff) {
			kp_err_set(err,
				   "truncated or corrupt: the section header table (offset %llu, "
				   "%llu entries) lies beyond the end of the file (%zu bytes)",
				   (unsigned long long)eh.e_shoff, (unsigned long long)nsh, len);
			goto fail;
		}
	}
	e->is64 = eh.e_ident[EI_CLASS] == ELFCLASS64;
	e->big_endian = eh.e_ident[EI_DATA] == ELFDATA2MSB;
	e->machine = eh.e_machine;
	e->type = eh.e_type;
	e->shoff = eh.e_shoff;
	if (elf_getshdrnum(e->elf, &e->nsections) < 0 || elf_getshdrstrndx(e->elf, &shstrndx) < 0) {
		kp_err_set(err, "invalid section header table: %s", elf_error());
		goto fail;
	}
	if (e->nsections == 0) {
		kp_err_set(err, "ELF file has no sections");
		goto fail;
	}
	e->raw_shnum = eh.e_shnum;
	e->raw_shstrndx = eh.e_shstrndx;
	{
		GElf_Shdr sh0;

		if (!gelf_getshdr(elf_getscn(e->elf, 0), &sh0)) {
			kp_err_set(err, "invalid section header 0: %s", elf_error());
			goto fail;
		}
		e->sec0_set = sh0.sh_type != SHT_NULL || sh0.sh_size || sh0.sh_addr;
		e->sec0_type = sh0.sh_type;
	}
	if (shstrndx >= e->nsections) {
		kp_err_set(err, "section name table index %zu is out of range", shstrndx);
		goto fail;
	}
	if (load_sections(e, shstrndx, src, err) < 0 || load_symbols(e, src, err) < 0)
		goto fail;
	return 0;
fail:
	kp_elf_close(e);
	return -1;
}

void kp_elf_close(struct kp_elf *e)
{
	if (e->sections) {
		for (size_t i = 0; i < e->nsections; i++)
			free(e->sections[i].relocs);
		free(e->sections);
	}
	free(e->syms);
	free(e->symstr_copy);
	if (e->elf)
		elf_end(e->elf);
	memset(e, 0, sizeof(*e));
}

void kp_elf_abandon(struct kp_elf *e)
{
	/* libelf's handle may be mid-call: it is left (a few KiB), the rest is ours to free */
	if (e->sections) {
		for (size_t i = 0; i < e->nsections; i++)
			free(e->sections[i].relocs);
		free(e->sections);
	}
	free(e->syms);
	free(e->symstr_copy);
	memset(e, 0, sizeof(*e));
}

size_t kp_elf_find_section(const struct kp_elf *e, const char *name)
{
	uint32_t h = kp_hash_string(name);

	for (size_t i = 1; i < e->nsections; i++)
		if (e->sections[i].name_hash == h && !strcmp(e->sections[i].name, name))
			return i;
	return 0;
}

size_t kp_elf_count_sections(const struct kp_elf *e, const char *name)
{
	uint32_t h = kp_hash_string(name);
	size_t n = 0;

	for (size_t i = 1; i < e->nsections; i++)
		n += e->sections[i].name_hash == h && !strcmp(e->sections[i].name, name);
	return n;
}

/* Assemblers emit relocations in offset order: nothing to sort then (glibc's sort is stable). */
static bool relocs_sorted(const struct kp_reloc *r, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (r[i].offset < r[i - 1].offset)
			return false;
	return true;
}

static int reloc_cmp(const void *a, const void *b)
{
	const struct kp_reloc *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/*
 * r_info's symbol and type. MIPS64 (n64) stores r_sym as a 32-bit word followed by
 * the bytes r_ssym, r_type3, r_type2, r_type (MIPS64 ELF supplement), not
 * ELF64_R_INFO(sym, type); libelf does not translate it. Only r_type is kept.
 */
static void split_info(const struct kp_elf *e, uint64_t info, uint32_t *sym, uint32_t *type)
{
	if (e->machine == EM_MIPS && e->is64) {
		*sym = e->big_endian ? (uint32_t)(info >> 32) : (uint32_t)info;
		*type = e->big_endian ? (uint32_t)(info & 0xff) : (uint32_t)(info >> 56);
		return;
	}
	*sym = (uint32_t)GELF_R_SYM(info);
	*type = (uint32_t)GELF_R_TYPE(info);
}

static int append_relocs(struct kp_elf *e, struct kp_section *target, size_t ridx, size_t *cap,
			 struct kp_err *err)
{
	const struct kp_section *rs = &e->sections[ridx];
	bool rela = rs->type == SHT_RELA;
	Elf_Data *d = elf_getdata(elf_getscn(e->elf, ridx), NULL);
	size_t entsize = gelf_fsize(e->elf, rela ? ELF_T_RELA : ELF_T_REL, 1, EV_CURRENT);
	size_t n;

	if (!d)
		return kp_err_set(err, "cannot read %s: %s", rs->name, elf_error());
	if (!entsize || d->d_size % entsize)
		return kp_err_set(err, "%s size is not a multiple of the relocation size",
				  rs->name);
	n = d->d_size / entsize;
	if (kp_grow(&target->relocs, cap, target->nrelocs + n, sizeof(*target->relocs)) < 0)
		return kp_err_set(err, "out of memory");
	for (size_t i = 0; i < n; i++) {
		struct kp_reloc *r = &target->relocs[target->nrelocs];

		if (rela) {
			GElf_Rela ra;

			if (!gelf_getrela(d, (int)i, &ra))
				return kp_err_set(err, "cannot read %s: %s", rs->name, elf_error());
			r->offset = ra.r_offset;
			split_info(e, ra.r_info, &r->sym, &r->type);
			r->addend = ra.r_addend;
		} else {
			GElf_Rel rl;

			if (!gelf_getrel(d, (int)i, &rl))
				return kp_err_set(err, "cannot read %s: %s", rs->name, elf_error());
			r->offset = rl.r_offset;
			split_info(e, rl.r_info, &r->sym, &r->type);
			r->addend = 0;
		}
		if (r->sym >= e->nsyms && r->sym != 0)
			return kp_err_set(err, "%s: relocation %zu names symbol %u of %zu",
					  rs->name, i, r->sym, e->nsyms);
		target->nrelocs++;
	}
	target->rela = rela;
	return 0;
}

int kp_elf_reloc_section(struct kp_elf *e, size_t ridx, struct kp_reloc **out, size_t *n,
			 struct kp_err *err)
{
	struct kp_section tmp = { 0 };
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	if (ridx == 0 || ridx >= e->nsections || !is_reloc(e->sections[ridx].type))
		return kp_err_set(err, "internal error: section %zu is not a relocation section",
				  ridx);
	if (e->sections[ridx].unloaded)
		return kp_err_set(err, "internal error: %s was not loaded", e->sections[ridx].name);
	if (e->sections[ridx].size == 0)
		return 0;
	if (append_relocs(e, &tmp, ridx, &cap, err) < 0) {
		free(tmp.relocs);
		return -1;
	}
	*out = tmp.relocs;
	*n = tmp.nrelocs;
	return 0;
}

int kp_elf_relocs(struct kp_elf *e, size_t idx, const struct kp_reloc **out, size_t *n,
		  struct kp_err *err)
{
	struct kp_section *s;
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	if (idx == 0 || idx >= e->nsections)
		return 0;
	s = &e->sections[idx];
	if (!s->relocs_loaded) {
		s->relocs_loaded = true;
		for (size_t i = 1; i < e->nsections; i++) {
			const struct kp_section *rs = &e->sections[i];

			if ((rs->type != SHT_REL && rs->type != SHT_RELA) || rs->info != idx)
				continue;
			if (rs->link != e->symtab_index)
				return kp_err_set(err, "%s does not refer to .symtab", rs->name);
			if (rs->unloaded)
				return kp_err_set(err, "internal error: %s was not loaded",
						  rs->name);
			if (append_relocs(e, s, i, &cap, err) < 0)
				return -1;
		}
		if (s->nrelocs > 1 && !relocs_sorted(s->relocs, s->nrelocs))
			qsort(s->relocs, s->nrelocs, sizeof(*s->relocs), reloc_cmp);
	}
	*out = s->relocs;
	*n = s->nrelocs;
	return 0;
}

bool kp_elf_read_uint(const struct kp_elf *e, size_t idx, uint64_t offset, unsigned width,
		      uint64_t *val)
{
	const struct kp_section *s;

	if (idx == 0 || idx >= e->nsections)
		return false;
	s = &e->sections[idx];
	if (!s->data || offset > s->size || width > s->size - offset)
		return false;
	switch (width) {
	case 1:
		*val = s->data[offset];
		return true;
	case 2:
		*val = kp_load16(s->data + offset, e->big_endian);
		return true;
	case 4:
		*val = kp_load32(s->data + offset, e->big_endian);
		return true;
	case 8:
		*val = kp_load64(s->data + offset, e->big_endian);
		return true;
	default:
		return false;
	}
}

const char *kp_elf_string_at(const struct kp_elf *e, size_t idx, uint64_t offset, size_t *len)
{
	const struct kp_section *s;
	const unsigned char *nul;

	if (idx == 0 || idx >= e->nsections)
		return NULL;
	s = &e->sections[idx];
	if (!s->data || offset >= s->size)
		return NULL;
	nul = memchr(s->data + offset, '\0', s->size - offset);
	if (!nul)
		return NULL;
	if (len)
		*len = (size_t)(nul - (s->data + offset));
	return (const char *)s->data + offset;
}

size_t kp_reloc_lower(const struct kp_reloc *r, size_t n, uint64_t offset)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r[mid].offset < offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct kp_reloc *find_reloc(const struct kp_reloc *r, size_t n, uint64_t offset)
{
	size_t i = kp_reloc_lower(r, n, offset);

	return i < n && r[i].offset == offset ? &r[i] : NULL;
}

int kp_elf_field_target(struct kp_elf *e, size_t idx, uint64_t offset, unsigned width,
			struct kp_target *t, struct kp_err *err)
{
	const struct kp_reloc *relocs, *r;
	uint64_t raw = 0;
	size_t n;

	memset(t, 0, sizeof(*t));
	if (kp_elf_relocs(e, idx, &relocs, &n, err) < 0)
		return -1;
	if (!kp_elf_read_uint(e, idx, offset, width, &raw))
		return kp_err_set(err, "field at %s+0x%llx is out of bounds", e->sections[idx].name,
				  (unsigned long long)offset);
	r = find_reloc(relocs, n, offset);
	if (!r) {
		t->value = raw;
		return 0;
	}
	t->relocated = true;
	{
		const struct kp_sym *sym = r->sym ? &e->syms[r->sym] : NULL;
		/* REL keeps the addend in the field; sign-extend 32-bit ones. */
		int64_t addend = e->sections[idx].rela ? r->addend
				 : width == 4	       ? (int64_t)(int32_t)raw
						       : (int64_t)raw;
		uint64_t base = sym ? sym->value : 0;

		t->sym = sym;
		if (sym && sym->shndx != SHN_UNDEF && sym->shndx < e->nsections &&
		    sym->shndx < SHN_LORESERVE) {
			t->in_section = true;
			t->shndx = sym->shndx;
			t->offset = base + (uint64_t)addend;
		}
		t->value = base + (uint64_t)addend;
	}
	return 0;
}
