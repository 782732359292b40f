// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Exports: the __ksymtab* tables of a relocatable module.
 *
 * An entry is struct kernel_symbol (include/linux/export.h, export-internal.h):
 *   <= 4.18, and arches without PREL32:   { ptr value; ptr name; [ptr namespace (5.4+)] }
 *   4.19+ with HAVE_ARCH_PREL32_RELOCATIONS: { s32 value; s32 name; [s32 namespace (5.4+)] }
 * In a .ko every field is 0 (RELA) or an implicit addend (REL) plus a relocation,
 * so entries are decoded through relocations, and the layout (field width, 2 or 3
 * fields) is found by checking which one makes every name field point into
 * __ksymtab_strings. When relocations are missing, the local __ksymtab_<sym>
 * labels (kept by --strip-debug) name the entries instead.
 *
 * CRCs: __kcrctab* entry i belongs to ksymtab entry i of the same table
 * (symversion() in kernel/module/version.c): a literal u32 since 5.19, a
 * relocation against the SHN_ABS symbol __crc_<sym> before, pointer-sized <= 4.9.
 * Pending layout: one __ksymtab plus __kflagstab (u8 per entry, bit 0 GPL-only).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "module-internal.h"
#include "util/symbol-index.h"

struct decoded {
	const char *name;
	size_t name_len;
	const char *ns; /* NULL or "" when none */
	size_t ns_len;
	uint32_t entry; /* its index in the table: the entries of wild names are left out */
};

/*
 * The relocation struct kernel_symbol's name field carries (include/linux/export-internal.h,
 * 5.10 … 7.2): a PREL32 offset where the arch selects HAVE_ARCH_PREL32_RELOCATIONS (config X86,
 * i386 too, and arm64: arch/x86/Kconfig, arch/arm64/Kconfig), else an absolute pointer (armhf,
 * ppc64el, s390x, riscv64). @f: the field's width, 4 or 8.
 */
static bool name_reloc(uint16_t machine, uint32_t type, unsigned f)
{
	switch (machine) {
	case EM_X86_64:
		return f == 4 && (type == R_X86_64_PC32 || type == R_X86_64_PLT32);
	case EM_386:
		return f == 4 && (type == R_386_PC32 || type == R_386_PLT32);
	case EM_AARCH64:
		return f == 4 && type == R_AARCH64_PREL32;
	case EM_ARM:
		return f == 4 && type == R_ARM_ABS32;
	case EM_PPC64:
		return f == 8 && type == R_PPC64_ADDR64;
	case EM_S390:
		return f == 8 && type == R_390_64;
	case EM_RISCV:
		return f == 8 && type == R_RISCV_64;
	default:
		return false;
	}
}

/* The name field at @field of @tab carries the relocation name_reloc() expects there. */
static bool name_field_relocated(struct kp_elf *e, size_t tab, uint64_t field, unsigned f)
{
	const struct kp_reloc *rel;
	size_t nrel, k;
	struct kp_err ignored;

	if (kp_elf_relocs(e, tab, &rel, &nrel, &ignored) < 0)
		return false;
	k = kp_reloc_lower(rel, nrel, field);
	return k < nrel && rel[k].offset == field && name_reloc(e->machine, rel[k].type, f);
}

/*
 * A name field relocated (name_reloc()) to before the start or past the end of
 * __ksymtab_strings: the loader reads its name at that address (offset_to_ptr(&name_offset) or
 * the pointer), outside the module's strings.
 */
static bool wild_name(struct kp_elf *e, size_t tab, uint64_t field, unsigned f, size_t strs,
		      const struct kp_target *nm, int64_t *offset)
{
	if (!nm->relocated || !nm->in_section || nm->shndx != strs)
		return false;
	if ((int64_t)nm->offset >= 0 && nm->offset < e->sections[strs].size)
		return false;
	if (!name_field_relocated(e, tab, field, f))
		return false;
	*offset = (int64_t)nm->offset;
	return true;
}

/*
 * A name field relocated (name_reloc()) against a symbol outside __ksymtab_strings: the name
 * is that symbol's address + the addend, as simplify_symbols() and apply_relocate[_add]() make
 * it (kernel/module/main.c, kernel/module.c before 5.17; 5.10 ... 7.2), and
 * verify_exported_symbols() and every later lookup read it there. The module's own bytes when
 * the symbol lies in a section layout_and_allocate() copies into the module (SHF_ALLOC, bytes
 * in the file, kept after init) and they hold a string there that no relocation rewrites:
 * that string, its length in @len. Else NULL, @why saying what the reader cannot tell: an
 * undefined symbol (resolved to the kernel's or another module's symbol of that name), an
 * absolute one, a section the loader does not keep as the file has it, or one the reader
 * does not load (only struct module and the export tables are read from every file).
 */
static const char *foreign_name(struct kp_elf *e, const struct kp_target *nm, size_t *len,
				const char **why)
{
	const struct kp_section *s;
	const struct kp_reloc *rel;
	struct kp_err ignored;
	const char *str;
	size_t nrel, k;

	if (!nm->sym || nm->sym->shndx == SHN_UNDEF) {
		*why = "undefined";
		return NULL;
	}
	if (!nm->in_section) {
		*why = "absolute";
		return NULL;
	}
	s = &e->sections[nm->shndx];
	if (!(s->flags & SHF_ALLOC) || kp_loader_unallocs(s->name)) {
		*why = "not copied into the module: read in the load-time copy, freed after the "
		       "load";
		return NULL;
	}
	if (s->type == SHT_NOBITS || !strncmp(s->name, ".init", 5) ||
	    !strncmp(s->name, ".exit", 5)) {
		*why = s->type == SHT_NOBITS ? "no bytes in the file: zeroed memory"
					     : "freed after init or not loaded";
		return NULL;
	}
	/* module.c's reader_wants(): a sparse image holds only these, every read the same */
	if (strcmp(s->name, ".gnu.linkonce.this_module") && strncmp(s->name, "__ksymtab", 9) &&
	    strncmp(s->name, "__kcrctab", 9) && strcmp(s->name, "__kflagstab")) {
		*why = "a section kopolicy does not read";
		return NULL;
	}
	str = kp_elf_string_at(e, nm->shndx, nm->offset, len);
	if (!str || !*len) {
		*why = "no string there";
		return NULL;
	}
	/* a relocation of up to 8 bytes that starts 7 bytes before the string reaches into it */
	if (kp_elf_relocs(e, nm->shndx, &rel, &nrel, &ignored) < 0) {
		*why = "relocations unread";
		return NULL;
	}
	k = kp_reloc_lower(rel, nrel, nm->offset > 7 ? nm->offset - 7 : 0);
	if (k < nrel && rel[k].offset <= nm->offset + *len) {
		*why = "relocated by the loader";
		return NULL;
	}
	return str;
}

/*
 * Where @w's name field (@field bytes into section @tab) is relocated in apply_relocations()'
 * order: the first relocation section for @tab by index, the first entry there at @field.
 * kp_elf_relocs() sorted them by offset across the sections and lost both.
 */
static int wild_reloc_position(struct kp_elf *e, size_t tab, uint64_t field,
			       struct kp_wild_export *w, struct kp_err *err)
{
	for (size_t i = 1; i < e->nsections; i++) {
		struct kp_reloc *r = NULL;
		size_t n = 0, k;

		if ((e->sections[i].type != SHT_REL && e->sections[i].type != SHT_RELA) ||
		    e->sections[i].info != tab)
			continue;
		if (kp_elf_reloc_section(e, i, &r, &n, err) < 0)
			return -1;
		for (k = 0; k < n && r[k].offset != field; k++)
			;
		free(r);
		if (k < n) {
			w->rel_shndx = (uint32_t)i;
			w->rel_index = (uint32_t)k;
			return 0;
		}
	}
	return kp_err_set(err, "internal error: no relocation of %s+0x%llx", e->sections[tab].name,
			  (unsigned long long)field);
}

/* try_layout()'s entries beyond __ksymtab_strings: the first left out, how many read. */
struct loose {
	struct kp_wild_export w; /* the first entry left out: wild_name()'s or foreign_name()'s */
	struct kp_target nm;	 /* foreign_name()'s: where its name field is relocated */
	const char *why;	 /* foreign_name()'s: why not read, else NULL */
	size_t nforeign;	 /* names read with foreign_name() */
};

/*
 * Decodes @n entries of @k fields of @f bytes into @out; false if this layout does not fit.
 * With @loose, names outside __ksymtab_strings are accepted: foreign_name()'s strings read,
 * the entries of the others left out of @out, the first recorded there
 * (verify_exported_symbols() reads the entries in order).
 */
static bool try_layout(struct kp_elf *e, size_t tab, size_t strs, unsigned f, unsigned k,
		       struct decoded *out, size_t n, size_t *nout, struct loose *loose)
{
	size_t j = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t base = (uint64_t)i * f * k;
		struct kp_target v, nm, ns;
		struct kp_err ignored;
		const char *why = NULL;
		int64_t off = 0;
		bool left_out;

		if (kp_elf_field_target(e, tab, base, f, &v, &ignored) < 0 ||
		    kp_elf_field_target(e, tab, base + f, f, &nm, &ignored) < 0)
			return false;
		if (v.in_section && v.shndx == strs)
			return false;
		left_out = loose && wild_name(e, tab, base + f, f, strs, &nm, &off);
		out[j].name = NULL;
		if (left_out || (nm.in_section && nm.shndx == strs)) {
			if (!left_out)
				out[j].name =
					kp_elf_string_at(e, strs, nm.offset, &out[j].name_len);
		} else if (loose && nm.relocated && name_field_relocated(e, tab, base + f, f)) {
			out[j].name = foreign_name(e, &nm, &out[j].name_len, &why);
			left_out = !out[j].name;
			loose->nforeign += !left_out;
		} else {
			return false;
		}
		if (left_out) {
			if (!loose->w.present) {
				loose->w.present = true;
				loose->w.index = (uint32_t)i;
				loose->w.offset = off;
				loose->nm = nm;
				loose->why = why;
			}
			if (k < 3)
				continue;
			if (kp_elf_field_target(e, tab, base + 2 * f, f, &ns, &ignored) < 0)
				return false;
			if (ns.relocated ? !ns.in_section || ns.shndx != strs : ns.value != 0)
				return false;
			continue;
		}
		if (!out[j].name || !out[j].name_len)
			return false;
		out[j].ns = NULL;
		out[j].entry = (uint32_t)i;
		if (k == 3) {
			if (kp_elf_field_target(e, tab, base + 2 * f, f, &ns, &ignored) < 0)
				return false;
			if (ns.relocated) {
				if (!ns.in_section || ns.shndx != strs)
					return false;
				out[j].ns = kp_elf_string_at(e, strs, ns.offset, &out[j].ns_len);
				if (!out[j].ns)
					return false;
			} else if (ns.value != 0) {
				return false;
			}
		}
		j++;
	}
	*nout = j;
	return true;
}

/*
 * foreign_name()'s reason for @l's entry, as kp_wild_export's target: "the undefined symbol
 * x", "x in .bss+0x0 (no bytes in the file)"; NULL when out of memory.
 */
static const char *foreign_target(struct kp_module *m, const struct kp_elf *e,
				  const struct loose *l)
{
	const struct kp_sym *sym = l->nm.sym;
	const char *name = sym && sym->name && *sym->name ? sym->name : NULL;
	char buf[256];

	if (!strcmp(l->why, "undefined"))
		snprintf(buf, sizeof(buf), "the undefined symbol %s", name ? name : "0");
	else if (!strcmp(l->why, "absolute"))
		snprintf(buf, sizeof(buf), "the absolute symbol %s (0x%llx)", name ? name : "",
			 (unsigned long long)l->nm.value);
	else
		snprintf(buf, sizeof(buf), "%s%s%s+0x%llx (%s)", name ? name : "",
			 name ? " in " : "", e->sections[l->nm.shndx].name,
			 (unsigned long long)l->nm.offset, l->why);
	return kp_arena_strdup(&m->arena, buf);
}

/*
 * Fallback without relocations: the __ksymtab_<sym> labels inside the table. Returns the
 * number found, or SIZE_MAX when out of memory.
 */
static size_t from_labels(const struct kp_elf *e, size_t tab, size_t strs, struct decoded *out,
			  size_t max)
{
	static const char prefix[] = "__ksymtab_";
	struct kp_symbol_index ns; /* <sym> -> its __kstrtabns_<sym> label, the first one */
	size_t n = 0;

	/* one pass over the labels, not one per export: linear in the symbol table */
	if (kp_symbol_index_init(&ns, strs ? 64 : 1) < 0)
		return SIZE_MAX;
	for (size_t j = 1; j < e->nsyms && strs; j++) {
		const struct kp_sym *l = &e->syms[j];

		if (l->shndx == strs && !strncmp(l->name, "__kstrtabns_", 12) &&
		    kp_symbol_index_add(&ns, l->name + 12, (void *)l) < 0) {
			kp_symbol_index_release(&ns);
			return SIZE_MAX;
		}
	}
	for (size_t i = 1; i < e->nsyms && n < max; i++) {
		const struct kp_sym *s = &e->syms[i];
		const struct kp_symbol_index_entry *x;

		if (s->shndx != tab || strncmp(s->name, prefix, sizeof(prefix) - 1))
			continue;
		out[n].name = s->name + sizeof(prefix) - 1;
		out[n].name_len = strlen(out[n].name);
		out[n].ns = NULL;
		out[n].entry = (uint32_t)n;
		/* __kstrtabns_<sym> names the namespace string (5.4 … 6.4). */
		x = kp_symbol_index_find(&ns, out[n].name);
		if (x) {
			const struct kp_sym *l = x->value;

			out[n].ns = kp_elf_string_at(e, strs, l->value, &out[n].ns_len);
		}
		n++;
	}
	kp_symbol_index_release(&ns);
	return n;
}

/*
 * CRCs: __kcrctab* entry i belongs to ksymtab entry i of the same table (symversion()), @nent
 * entries in all, wild names' included; @dec[i].entry is export @exp[i]'s.
 */
static int read_crcs(struct kp_module *m, struct kp_elf *e, enum kp_export_table t,
		     struct kp_export *exp, const struct decoded *dec, size_t n, size_t nent,
		     struct kp_err *err)
{
	size_t idx = kp_elf_find_section(e, kp_export_tables[t].kcrctab);
	const struct kp_section *c;
	unsigned w;

	if (!idx || nent == 0)
		return 0;
	c = &e->sections[idx];
	m->has_kcrctab[t] = true;
	if (c->size % nent || (c->size / nent != 4 && c->size / nent != 8))
		return kp_err_set(err, "%s has %llu bytes for %zu exports",
				  kp_export_tables[t].kcrctab, (unsigned long long)c->size, nent);
	w = (unsigned)(c->size / nent);
	for (size_t i = 0; i < n; i++) {
		struct kp_target tg;

		if (kp_elf_field_target(e, idx, (uint64_t)dec[i].entry * w, w, &tg, err) < 0)
			return -1;
		exp[i].has_crc = true;
		exp[i].crc = (uint32_t)tg.value;
	}
	return 0;
}

/* __kflagstab: a u8 per __ksymtab entry (@nent, wild names' included), bit 0 GPL-only. */
static int read_flags(struct kp_elf *e, struct kp_export *exp, const struct decoded *dec, size_t n,
		      size_t nent, struct kp_err *err)
{
	size_t idx = kp_elf_find_section(e, "__kflagstab");

	if (!idx)
		return 0;
	if (e->sections[idx].size != nent)
		return kp_err_set(err, "__kflagstab has %llu entries for %zu exports",
				  (unsigned long long)e->sections[idx].size, nent);
	for (size_t i = 0; i < n; i++) {
		uint64_t flags;

		if (!kp_elf_read_uint(e, idx, dec[i].entry, 1, &flags))
			return kp_err_set(err, "__kflagstab has no contents in the file");
		exp[i].gpl_only = flags & KP_KSYM_FLAG_GPL_ONLY;
	}
	return 0;
}

static int read_table(struct kp_module *m, struct kp_elf *e, enum kp_export_table t, size_t *cap,
		      const struct kp_name_pool *names, struct kp_err *err)
{
	static const unsigned layouts[][2] = { { 4, 3 }, { 4, 2 }, { 8, 3 }, { 8, 2 } };
	size_t tab = kp_elf_find_section(e, kp_export_tables[t].ksymtab);
	size_t strs = kp_elf_find_section(e, "__ksymtab_strings");
	struct decoded *dec = NULL;
	struct kp_export *got;
	const struct kp_section *s;
	size_t n = 0, nent = 0, first;
	bool ok = false;
	int r = -1;

	if (!tab)
		return 0;
	s = &e->sections[tab];
	if (s->size == 0)
		return 0;
	if (s->type == SHT_NOBITS || !s->data)
		return kp_err_set(err, "%s has no contents in the file",
				  kp_export_tables[t].ksymtab);
	/* At most one entry per 8 bytes: the smallest layout. */
	dec = kp_calloc(s->size / 8 + 1, sizeof(*dec));
	if (!dec)
		return kp_err_set(err, "out of memory");
	for (size_t l = 0; l < KP_ARRAY_SIZE(layouts) && strs && !ok; l++) {
		unsigned f = layouts[l][0], k = layouts[l][1];

		if (f == 8 && !e->is64)
			continue;
		if (s->size % (f * k))
			continue;
		nent = s->size / (f * k);
		ok = try_layout(e, tab, strs, f, k, dec, nent, &n, NULL);
	}
	/* then entries whose names lie outside the strings, in the tables the loader checks */
	for (size_t l = 0;
	     l < KP_ARRAY_SIZE(layouts) && strs && !ok && (t == KP_KSYMTAB || t == KP_KSYMTAB_GPL);
	     l++) {
		struct loose lo = { .w = { .table = t } };
		unsigned f = layouts[l][0], k = layouts[l][1];

		if ((f == 8 && !e->is64) || s->size % (f * k))
			continue;
		nent = s->size / (f * k);
		ok = try_layout(e, tab, strs, f, k, dec, nent, &n, &lo) &&
		     (lo.w.present || lo.nforeign);
		/* the first in the order verify_exported_symbols() reads: __ksymtab first */
		if (ok && lo.w.present && !m->wild_export.present) {
			if (wild_reloc_position(e, tab, (uint64_t)lo.w.index * f * k + f, &lo.w,
						err) < 0)
				goto out;
			if (lo.why && !(lo.w.target = foreign_target(m, e, &lo))) {
				kp_err_set(err, "out of memory");
				goto out;
			}
			m->wild_export = lo.w;
		}
	}
	if (!ok) {
		const struct kp_reloc *rel;
		size_t nrel = 0;

		/* Labels name entries only when nothing relocates the table (a resolved image). */
		if (kp_elf_relocs(e, tab, &rel, &nrel, err) < 0)
			goto out;
		if (nrel) {
			kp_err_set(err, "%s (%llu bytes) fits no struct kernel_symbol layout",
				   kp_export_tables[t].ksymtab, (unsigned long long)s->size);
			goto out;
		}
		n = nent = from_labels(e, tab, strs, dec, s->size / 8 + 1);
		if (n == SIZE_MAX) {
			kp_err_set(err, "out of memory");
			goto out;
		}
		if (!n) {
			kp_err_set(err,
				   "cannot decode %s (%llu bytes): no relocations or labels name "
				   "its entries",
				   kp_export_tables[t].ksymtab, (unsigned long long)s->size);
			goto out;
		}
	}

	first = m->nexports;
	for (size_t i = 0; i < n; i++) {
		struct kp_export *x =
			kp_module_push(m, &m->exports, &m->nexports, cap, sizeof(*m->exports));

		if (!x) {
			kp_err_set(err, "out of memory");
			goto out;
		}
		x->hash = kp_hash_bytes(dec[i].name, dec[i].name_len);
		x->name = kp_module_symname_hashed(m, names, dec[i].name, dec[i].name_len, x->hash);
		x->ns = dec[i].ns && dec[i].ns_len
				? kp_arena_strndup(&m->arena, dec[i].ns, dec[i].ns_len)
				: NULL;
		if (!x->name || (dec[i].ns && dec[i].ns_len && !x->ns)) {
			kp_err_set(err, "out of memory");
			goto out;
		}
		x->table = t;
		x->gpl_only = kp_export_tables[t].gpl_only;
	}
	/* no export read (every entry left out): no array to point into */
	got = m->exports ? m->exports + first : NULL;
	if (t == KP_KSYMTAB && read_flags(e, got, dec, n, nent, err) < 0)
		goto out;
	r = read_crcs(m, e, t, got, dec, n, nent, err);
out:
	free(dec);
	return r;
}

/* __kflagstab without __ksymtab entries (read_flags() reads it with them): it must be empty. */
static int read_flagstab(struct kp_module *m, struct kp_elf *e, struct kp_err *err)
{
	size_t idx = kp_elf_find_section(e, "__kflagstab");
	size_t tab = kp_elf_find_section(e, "__ksymtab");

	if (!idx)
		return 0;
	m->has_kflagstab = true;
	if ((!tab || !e->sections[tab].size) && e->sections[idx].size)
		return kp_err_set(err, "__kflagstab has %llu entries for 0 exports",
				  (unsigned long long)e->sections[idx].size);
	return 0;
}

int kp_read_exports(struct kp_module *m, struct kp_elf *e, const struct kp_name_pool *names,
		    struct kp_err *err)
{
	size_t cap = 0;

	for (int t = 0; t < KP_KSYMTAB_NTABLES; t++)
		if (read_table(m, e, (enum kp_export_table)t, &cap, names, err) < 0)
			return -1;
	return read_flagstab(m, e, err);
}
