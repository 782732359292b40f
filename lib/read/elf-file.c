// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Opening an ELF image: libelf over the bytes, the header's identification and section header
 * table checked, the sections (of a sparse image, the wanted ones loaded), then the symbols
 * (elf-symbols.c); the section lookups and the bounded field and string reads. Relocations
 * are in elf-relocs.c. libelf is loaded on the first image opened (dl/lazy-lib.h).
 */
#include "elf-file.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dl/lazy-lib.h"
#include "elf-file-internal.h"

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
const char *kp_elf_errmsg(void)
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

int kp_elf_load_range(const struct kp_elf *e, const struct kp_elf_source *src, uint64_t off,
		      uint64_t len, struct kp_err *err)
{
	if (off >= e->buf_len || len == 0)
		return 0;
	if (len > e->buf_len - off)
		len = e->buf_len - off;
	return src->load(src->ctx, off, len, err);
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
		bool want =
			src->want(s->name, s->type, s->flags) ||
			(kp_elf_is_reloc(s->type) && t &&
			 ((!kp_elf_is_reloc(t->type) && src->want(t->name, t->type, t->flags)) ||
			  (src->alloc_relocs && (t->flags & SHF_ALLOC))));

		if (!s->data)
			continue;
		if (!want) {
			s->data = NULL;
			s->unloaded = true;
			continue;
		}
		if (kp_elf_load_range(e, src, (uint64_t)(s->data - e->image), s->size, err) < 0)
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
		    kp_elf_load_range(e, src, sh.sh_offset, sh.sh_size, err) < 0)
			return -1;
	}
	for (size_t i = 0; i < e->nsections; i++) {
		struct kp_section *s = &e->sections[i];
		Elf_Scn *scn = elf_getscn(e->elf, i);
		GElf_Shdr sh;
		const char *name;

		if (!scn || !gelf_getshdr(scn, &sh))
			return kp_err_set(err, "bad section header %zu: %s", i, kp_elf_errmsg());
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
	/* libelf loaded on first use (dl/lazy-lib.h): a broken install is this file's error */
	if (kp_lazy_require(kp_lazy_libelf(), err) < 0)
		return -1;
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
		return kp_err_set(err, "cannot parse ELF: %s", kp_elf_errmsg());
	if (elf_kind(e->elf) != ELF_K_ELF || !gelf_getehdr(e->elf, &eh)) {
		kp_err_set(err, "invalid ELF header: %s", kp_elf_errmsg());
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
	e->flags = eh.e_flags;
	e->shoff = eh.e_shoff;
	if (elf_getshdrnum(e->elf, &e->nsections) < 0 || elf_getshdrstrndx(e->elf, &shstrndx) < 0) {
		kp_err_set(err, "invalid section header table: %s", kp_elf_errmsg());
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
			kp_err_set(err, "invalid section header 0: %s", kp_elf_errmsg());
			goto fail;
		}
		e->sec0_set = sh0.sh_type != SHT_NULL || sh0.sh_size || sh0.sh_addr;
		e->sec0_type = sh0.sh_type;
	}
	if (shstrndx >= e->nsections) {
		kp_err_set(err, "section name table index %zu is out of range", shstrndx);
		goto fail;
	}
	if (load_sections(e, shstrndx, src, err) < 0 || kp_elf_load_symbols(e, src, err) < 0)
		goto fail;
	return 0;
fail:
	kp_elf_close(e);
	return -1;
}

/* What @e holds besides libelf's handle: the sections' relocations, the symbols, copies. */
static void free_owned(struct kp_elf *e)
{
	if (e->sections) {
		for (size_t i = 0; i < e->nsections; i++)
			free(e->sections[i].relocs);
		free(e->sections);
	}
	free(e->syms);
	free(e->symstr_copy);
}

void kp_elf_close(struct kp_elf *e)
{
	free_owned(e);
	if (e->elf)
		elf_end(e->elf);
	memset(e, 0, sizeof(*e));
}

void kp_elf_abandon(struct kp_elf *e)
{
	/* libelf's handle may be mid-call: it is left (a few KiB), the rest is ours to free */
	free_owned(e);
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
