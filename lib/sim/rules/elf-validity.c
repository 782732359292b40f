// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "rules.h"
#include "sim/open-record.h"

/*
 * elf_validity_cache_index_versions() v6.14+: the extended version tables come in pairs and
 * every CRC has a name. (The kernel's lines have no module name and no newline.)
 */
static int ext_versions_valid(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	const char *why;

	if (!c->p->has[KP_F_EXT_MODVERSIONS])
		return 0;
	switch (ld->m->ext_versions_state) {
	case KP_EXT_VERSIONS_ONE_MISSING:
		why = "extended version crc+name presence does not match";
		break;
	case KP_EXT_VERSIONS_FEW_NAMES:
		why = "more extended version crcs than names";
		break;
	default:
		return 0;
	}
	kp_msg(c, ld, "%s", why);
	kp_finding(ld->v, "bad-extended-versions", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
		   "__version_ext_crcs/__version_ext_names are malformed: %s%s", why,
		   kp_msg_unterminated(why) ? KP_OPEN_RECORD_NOTE : "");
	return -ENOEXEC;
}

static const char *symstr_why(enum kp_symstr_state st)
{
	switch (st) {
	case KP_SYMSTR_EMPTY:
		return "empty symbol string table";
	case KP_SYMSTR_NO_LEADING_NUL:
		return "symbol string table missing leading NUL";
	case KP_SYMSTR_UNTERMINATED:
		return "symbol string table isn't NUL terminated";
	case KP_SYMSTR_NAME_OOB:
		return "symbol name out of bounds in string table";
	default:
		return NULL;
	}
}

/*
 * Before v6.13 setup_load_info() points info->strtab at the file copy at .strtab's sh_offset
 * and simplify_symbols() / layout_symtab() read info->strtab + st_name unbounded, in the
 * buffer that holds the whole file (a signature trailer too): the reader gave each symbol
 * the name found there, so the load goes on with those names. Only a name no NUL ends
 * inside the file makes the kernel read past its buffer (kernel_read_file()'s vmalloc()):
 * into the rest of the last page, zeroed when init_on_alloc is on (Debian's
 * CONFIG_INIT_ON_ALLOC_DEFAULT_ON), then the guard page. A strong undefined symbol's name
 * into the guard page is a certain oops (resolve.c; a hang before 5.13), so is the name of a
 * symbol kallsyms keeps (layout-symtab.c); a weak undefined symbol's is an oops or quietly
 * not found, as the exports find_symbol() searches then decide (resolve.c); other names there
 * are not predictable.
 */
static void symstr_unchecked(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	const struct kp_module *m = ld->m;
	enum kp_oob past = kp_oob_read(m, c->f->page_shift, m->image_size, 1);
	bool guard = past == KP_OOB_GUARD;
	/* an import's name starting in the guard page: find_symbol() faults on it (resolve.c) */
	bool guard_start =
		m->import_name_outside &&
		kp_oob_read(m, c->f->page_shift, m->import_name_outside_off, 1) == KP_OOB_GUARD;
	/*
	 * the one such name is read whole or decided when it is read (an import, a kept
	 * symbol): the finding of resolve.c or layout-symtab.c says what comes of it
	 */
	bool decided =
		m->symname_past_end == 1 &&
		((guard && (m->import_name_past_end || m->kept_name_past_end)) || guard_start);

	if (decided)
		;
	else if (m->symname_past_end && past == KP_OOB_UNKNOWN)
		kp_finding(ld->v, "bad-symbol-strtab", KP_SEV_WARNING, KP_CONS_WARN, NULL,
			   "%u symbol name%s, read where this kernel reads them (the file at the "
			   "string table's offset + st_name), no NUL ends before the end of the "
			   "file: it reads on past its buffer, into the rest of the last page "
			   "(zeroed if init_on_alloc is on) or, if the file fills that page, into "
			   "the guard page after it (an oops wherever it reads a whole name): "
			   "which depends on the kernel's page size, not known (give "
			   "--kernel-config); the names are shown up to the end of the file and "
			   "the outcome is not predictable",
			   m->symname_past_end, m->symname_past_end == 1 ? "" : "s");
	else if (m->symname_past_end && !guard)
		kp_finding(ld->v, "bad-symbol-strtab", KP_SEV_WARNING, KP_CONS_WARN, NULL,
			   "%u symbol name%s, read where this kernel reads them (the file at the "
			   "string table's offset + st_name), no NUL ends before the end of the "
			   "file: it reads on past its buffer into the rest of the last page, "
			   "zeroed if init_on_alloc is on (Debian's default): the names are shown "
			   "up to the end of the file (with init_on_alloc=0 the page's leftover "
			   "bytes follow, or an oops in the guard page after it)",
			   m->symname_past_end, m->symname_past_end == 1 ? "" : "s");
	else if (m->symname_past_end)
		kp_finding(
			ld->v, "bad-symbol-strtab", KP_SEV_WARNING, KP_CONS_WARN, NULL,
			"%u symbol name%s, read where this kernel reads them (the file at the "
			"string table's offset + st_name), no NUL ends before the end of the "
			"file, which fills its last page: it reads on into the guard page after "
			"its buffer wherever it reads a whole name (an oops); for these names "
			"(a symbol kallsyms drops, one starting past the file, or more than one) "
			"that depends on what the loader compares them with: the names are shown "
			"up to the end of the file and the outcome is not predictable",
			m->symname_past_end, m->symname_past_end == 1 ? "" : "s");
	if (m->symstr_state != KP_SYMSTR_OK && (decided || !m->symname_past_end))
		kp_finding(ld->v, "bad-symbol-strtab", KP_SEV_WARNING, KP_CONS_WARN, NULL,
			   "the symbol string table is malformed (%s) and this kernel does not "
			   "check it: it reads each name from the file at the table's offset + "
			   "st_name, past the table's end where need be (v6.13+ refuses the "
			   "module)",
			   symstr_why(m->symstr_state));
}

/* elf_validity_cache_strtab() v6.13+: the symbol string table's shape. */
static int symstr_valid(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	const char *why;

	if (!c->p->has[KP_F_SYMSTRTAB_CHECKS]) {
		symstr_unchecked(c, ld);
		return 0;
	}
	why = symstr_why(ld->m->symstr_state);
	if (!why)
		return 0;
	/* KP_SYMSTR_NAME_OOB's pr_err() has no newline: dmesg shows it later (open-record.h) */
	kp_msg(c, ld, "%s", why);
	kp_finding(ld->v, "bad-symbol-strtab", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL, "%s%s", why,
		   kp_msg_unterminated(why) ? KP_OPEN_RECORD_NOTE : "");
	return -ENOEXEC;
}

#define KP_SHN_XINDEX 0xffff

/* The raw e_shstrndx the kernel indexes with: SHN_UNDEF or past the raw e_shnum is refused. */
static bool shstrndx_bad(const struct kp_module *m)
{
	return m->raw_shstrndx == 0 || m->raw_shstrndx >= m->raw_shnum;
}

static int shstrndx_fail(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	const struct kp_module *m = ld->m;

	if (c->p->has[KP_F_ELF_CHECK_MSGS])
		kp_msg(c, ld,
		       "Invalid ELF section name index: %d || e_shstrndx (%d) >= e_shnum (%d)",
		       m->raw_shstrndx, m->raw_shstrndx, m->raw_shnum);
	kp_finding(ld->v, "bad-section-headers", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
		   "the ELF header's e_shstrndx (%u) is not below its e_shnum (%u)%s: the loader "
		   "does not follow extended section numbering",
		   m->raw_shstrndx, m->raw_shnum,
		   m->raw_shnum == 0 || m->raw_shstrndx == KP_SHN_XINDEX ? " (extended numbering)"
									 : "");
	return -ENOEXEC;
}

static int sec0_fail(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	if (c->p->has[KP_F_ELF_CHECK_MSGS])
		kp_msg(c, ld,
		       "ELF Spec violation: section 0 type(%d)!=SH_NULL or non-zero len or addr",
		       (int)ld->m->sec0_type);
	kp_finding(ld->v, "bad-section-headers", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
		   "section 0 is not null (type %u, or a size or address: extended numbering "
		   "keeps the section count in its sh_size)",
		   ld->m->sec0_type);
	return -ENOEXEC;
}

/*
 * elf_validity_check() v5.12, stable 5.4.110/5.10.28 (v6.13, 6.12.117+: _cache_sechdrs()
 * then _secstrings()): the raw e_shstrndx against the raw e_shnum and section 0 all-null,
 * silent before v5.17. Older kernels index the section headers with e_shstrndx unchecked.
 */
static int sechdrs_valid(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	const struct kp_module *m = ld->m;

	if (!c->p->has[KP_F_ELF_SECHDR_CHECKS]) {
		if (shstrndx_bad(m))
			kp_finding(ld->v, "bad-section-headers", KP_SEV_WARNING, KP_CONS_WARN, NULL,
				   "the ELF header's e_shstrndx (%u) is not below its e_shnum (%u) "
				   "and this kernel does not check it: it reads section headers "
				   "past the table (the outcome is not predictable)",
				   m->raw_shstrndx, m->raw_shnum);
		return 0;
	}
	if (c->p->has[KP_F_SEC0_BEFORE_SHSTRNDX] && m->sec0_set)
		return sec0_fail(c, ld);
	if (shstrndx_bad(m))
		return shstrndx_fail(c, ld);
	if (m->sec0_set)
		return sec0_fail(c, ld);
	return 0;
}

/* elf_validity_cache_copy() v6.4+ / setup_load_info() before: structural checks, -ENOEXEC. */
int kp_rule_elf_validity(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	const struct kp_module *m = ld->m;

	if (sechdrs_valid(c, ld))
		return -ENOEXEC;
	if (c->p->has[KP_F_THIS_MODULE_SIZE] && m->nmodinfo_sections > 1) {
		kp_msg(c, ld, "Only one .modinfo section must exist.");
		return -ENOEXEC;
	}
	if (c->p->has[KP_F_THIS_MODULE_SIZE] && c->f->this_module_size &&
	    m->this_module_size != c->f->this_module_size) {
		kp_msg(c, ld,
		       "module %s: .gnu.linkonce.this_module section size must match the "
		       "kernel's built struct module size at run time",
		       ld->info_name);
		kp_finding(ld->v, "struct-module-size", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
			   "built for a struct module of %llu bytes, the kernel's has %llu: built "
			   "against another kernel",
			   (unsigned long long)m->this_module_size,
			   (unsigned long long)c->f->this_module_size);
		return -ENOEXEC;
	}
	if (!m->has_symtab) {
		kp_msg(c, ld, "%s: module has no symbols (stripped?)", ld->info_name);
		return -ENOEXEC;
	}
	if (ext_versions_valid(c, ld) || symstr_valid(c, ld))
		return -ENOEXEC;
	for (size_t i = 0; i < c->f->nblacklist; i++)
		if (!strcmp(c->f->blacklist[i], ld->info_name)) {
			kp_msg(c, ld, "Module %s is blacklisted", ld->info_name);
			kp_finding(ld->v, "blacklisted", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
				   "module_blacklist= on the kernel command line names %s",
				   ld->info_name);
			return -EPERM;
		}
	return 0;
}
