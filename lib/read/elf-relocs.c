// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The relocations of an ELF image: read per relocation section or gathered per target section
 * and sorted by offset, and where a relocated pointer field points.
 */
#include <stdlib.h>
#include <string.h>

#include "elf-file-internal.h"

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
		return kp_err_set(err, "cannot read %s: %s", rs->name, kp_elf_errmsg());
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
				return kp_err_set(err, "cannot read %s: %s", rs->name,
						  kp_elf_errmsg());
			r->offset = ra.r_offset;
			split_info(e, ra.r_info, &r->sym, &r->type);
			r->addend = ra.r_addend;
		} else {
			GElf_Rel rl;

			if (!gelf_getrel(d, (int)i, &rl))
				return kp_err_set(err, "cannot read %s: %s", rs->name,
						  kp_elf_errmsg());
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
	if (ridx == 0 || ridx >= e->nsections || !kp_elf_is_reloc(e->sections[ridx].type))
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
