// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * elf-validity.c: elf_validity_cache_copy() v6.4+ (one .modinfo, struct module size),
 * elf_validity_cache_strtab() v6.13+, elf_validity_cache_index_versions() v6.14+, the
 * stripped-module check and blacklisted() (module_blacklist=, on info->name); the raw header's
 * e_shstrndx/e_shnum and section 0 (elf_validity_check() v5.12+, _cache_sechdrs() v6.13+).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "builder.h"
#include "sim/open-record.h"

static struct kp_module *one(struct tb_world *w, const char *release)
{
	tb_init(w, release);
	return tb_module(w, "m");
}

static void modinfo_and_size(struct tap *t)
{
	struct tb_world w;
	struct kp_module *m;

	m = one(&w, "6.12.37");
	m->nmodinfo_sections = 2;
	tb_expect(t, &w, -ENOEXEC, "Only one .modinfo section must exist.", "",
		  "6.12: two .modinfo");
	m = one(&w, "6.1.129");
	m->nmodinfo_sections = 2;
	tb_expect(t, &w, 0, "", "", "6.1: two .modinfo not checked");
	m = one(&w, "6.12.37");
	w.facts.this_module_size = 1344;
	m->this_module_size = 1280;
	tb_modinfo(m, "name", "m_info");
	tb_expect(t, &w, -ENOEXEC,
		  "module m_info: .gnu.linkonce.this_module section size must match the kernel's "
		  "built struct module size at run time",
		  "struct-module-size", "6.12: struct module size differs (info->name)");
	m = one(&w, "6.12.37");
	m->this_module_size = 1280; /* the kernel's size unknown: no check */
	tb_expect(t, &w, 0, "", "", "6.12: kernel size unknown");
	m = one(&w, "6.3.13");
	w.facts.this_module_size = 1344;
	m->this_module_size = 1280;
	tb_expect(t, &w, 0, "", "", "6.3: size not checked");
	m = one(&w, "6.12.37");
	m->has_symtab = false;
	tb_expect(t, &w, -ENOEXEC, "m: module has no symbols (stripped?)", "", "no .symtab");
}

/*
 * Before v6.13 setup_load_info() points info->strtab at the file copy at .strtab's sh_offset
 * and simplify_symbols() reads info->strtab + st_name unbounded: the reader's names are the
 * ones the kernel reads, the load goes on. A name no NUL ends in the file reads on into the
 * rest of the last page (zeroed with init_on_alloc: the name as shown) or, for a file that
 * fills its last page, into the guard page (not predictable unless resolve.c knows the oops).
 */
static void strtab(struct tap *t, enum kp_symstr_state st, const char *line, const char *why)
{
	struct tb_world w;
	struct kp_module *m;
	const struct kp_finding *f;
	char want[512];

	m = one(&w, "6.13.0");
	m->symstr_state = st;
	tb_expect(t, &w, -ENOEXEC, line, "bad-symbol-strtab", "6.13 strtab check");
	m = one(&w, "6.12.37");
	m->symstr_state = st;
	tb_run(&w);
	f = tb_finding(&w, "m", "bad-symbol-strtab");
	snprintf(want, sizeof(want),
		 "the symbol string table is malformed (%s) and this kernel does not check it: it "
		 "reads each name from the file at the table's offset + st_name, past the table's "
		 "end where need be (v6.13+ refuses the module)",
		 why);
	tap_ok(t,
	       tb_v(&w, "m")->loads && f && f->severity == KP_SEV_WARNING &&
		       !strcmp(f->message, want),
	       "6.12: not checked, the names as the file has them, a warning (%s)", why);
	tb_free(&w);
	/* a name no NUL ends inside the file: 4000 bytes leave the rest of the page */
	m = one(&w, "6.12.37");
	m->symstr_state = st;
	m->symname_past_end = 2;
	m->image_size = 4000;
	tb_run(&w);
	f = tb_finding(&w, "m", "bad-symbol-strtab");
	tap_ok(t,
	       tb_v(&w, "m")->loads && f && f->severity == KP_SEV_WARNING &&
		       strstr(f->message, "2 symbol names, read where this kernel reads them") &&
		       strstr(f->message, "into the rest of the last page") &&
		       strstr(f->message, "zeroed if init_on_alloc is on") &&
		       strstr(f->message, "shown up to the end of the file") &&
		       !strstr(f->message, "not predictable"),
	       "6.12: a name past the file's end (rest of the page, zeroed): as shown (%s)", why);
	tb_free(&w);
	m = one(&w, "5.10.0");
	m->symstr_state = st;
	m->symname_past_end = 1;
	m->image_size = 8192; /* fills its pages: the guard page comes next */
	tb_run(&w);
	f = tb_finding(&w, "m", "bad-symbol-strtab");
	tap_ok(t,
	       f && f->severity == KP_SEV_WARNING &&
		       strstr(f->message, "1 symbol name, read where") &&
		       strstr(f->message, "into the guard page after its buffer") &&
		       strstr(f->message, "not predictable"),
	       "5.10: a name past a page-filling image: the guard page, not predictable (%s)", why);
	tb_free(&w);
}

static void ext_versions(struct tap *t, enum kp_ext_versions_state st, const char *line)
{
	struct tb_world w;
	struct kp_module *m;

	m = one(&w, "6.14.0");
	m->ext_versions_state = st;
	tb_expect(t, &w, -ENOEXEC, line, "bad-extended-versions", "6.14 extended versions");
	m = one(&w, "6.13.0");
	m->ext_versions_state = st;
	tb_expect(t, &w, 0, "", "", "6.13: extended versions not read");
}

/*
 * A line without a newline: its finding says where dmesg shows it (the next line anyone
 * prints, which may be an init()'s: the 7.2.13 oracle, strtab_weakpage_then); one with a
 * newline says nothing of it.
 */
static void open_line_note(struct tap *t)
{
	struct tb_world w;
	struct kp_module *m;
	const struct kp_finding *f;

	m = one(&w, "6.13.0");
	m->symstr_state = KP_SYMSTR_NAME_OOB;
	tb_run(&w);
	f = tb_finding(&w, "m", "bad-symbol-strtab");
	tap_ok(t,
	       f &&
		       !strcmp(f->message,
			       "symbol name out of bounds in string table" KP_OPEN_RECORD_NOTE) &&
		       strstr(f->message, "the init() of a module loaded in between"),
	       "6.13: the out-of-bounds line's finding says dmesg may show it earlier");
	tb_free(&w);
	m = one(&w, "6.14.0");
	m->ext_versions_state = KP_EXT_VERSIONS_FEW_NAMES;
	tb_run(&w);
	f = tb_finding(&w, "m", "bad-extended-versions");
	tap_ok(t,
	       f && strstr(f->message, "than names (the kernel prints this line without a newline"),
	       "6.14: the extended versions line's finding too");
	tb_free(&w);
	m = one(&w, "6.13.0");
	m->symstr_state = KP_SYMSTR_EMPTY;
	tb_run(&w);
	f = tb_finding(&w, "m", "bad-symbol-strtab");
	tap_ok(t, f && !strcmp(f->message, "empty symbol string table"),
	       "6.13: a line with a newline: no such note");
	tb_free(&w);
}

/* The raw header fields: 0/SHN_XINDEX (extended numbering) are refused, not followed. */
static void sechdrs(struct tap *t)
{
	struct tb_world w;
	struct kp_module *m;
	const struct kp_finding *f;
	/* e_shnum = 0 (the count in section 0's sh_size), e_shstrndx = SHN_XINDEX */
	static const char *const releases[] = { "6.1.129", "6.12.37", "5.17.0" };

	for (size_t i = 0; i < KP_ARRAY_SIZE(releases); i++) {
		char what[64];

		snprintf(what, sizeof(what), "%s: extended numbering, name index line",
			 releases[i]);
		m = one(&w, releases[i]);
		m->raw_shnum = 0;
		m->raw_shstrndx = 0xffff;
		m->sec0_set = true;
		tb_expect(t, &w, -ENOEXEC,
			  "Invalid ELF section name index: 65535 || e_shstrndx (65535) >= e_shnum "
			  "(0)",
			  "bad-section-headers", what);
	}
	m = one(&w, "6.13.0");
	m->raw_shnum = 0;
	m->raw_shstrndx = 0xffff;
	m->sec0_set = true;
	tb_expect(t, &w, -ENOEXEC,
		  "ELF Spec violation: section 0 type(0)!=SH_NULL or non-zero len or addr",
		  "bad-section-headers",
		  "6.13: section 0 checked first (its sh_size is the count)");
	m = one(&w, "6.12.118");
	m->raw_shnum = 0;
	m->raw_shstrndx = 0xffff;
	m->sec0_set = true;
	tb_expect(t, &w, -ENOEXEC,
		  "ELF Spec violation: section 0 type(0)!=SH_NULL or non-zero len or addr",
		  "bad-section-headers", "6.12.118: the split is in 6.12.117 and later");
	m = one(&w, "7.2.13");
	m->raw_shstrndx = 0xffff; /* e_shnum 40, the index in section 0's sh_link */
	tb_expect(t, &w, -ENOEXEC,
		  "Invalid ELF section name index: 65535 || e_shstrndx (65535) >= e_shnum (40)",
		  "bad-section-headers", "7.2: SHN_XINDEX with a section 0 left null");
	m = one(&w, "6.12.37");
	m->raw_shstrndx = 0;
	tb_expect(t, &w, -ENOEXEC,
		  "Invalid ELF section name index: 0 || e_shstrndx (0) >= e_shnum (40)",
		  "bad-section-headers", "6.12: SHN_UNDEF");
	m = one(&w, "6.12.37");
	m->sec0_set = true;
	m->sec0_type = 1;
	tb_expect(t, &w, -ENOEXEC,
		  "ELF Spec violation: section 0 type(1)!=SH_NULL or non-zero len or addr",
		  "bad-section-headers", "6.12: section 0 not null");
	m = one(&w, "5.16.20");
	m->raw_shnum = 0;
	m->raw_shstrndx = 0xffff;
	m->sec0_set = true;
	tb_expect(t, &w, -ENOEXEC, "", "bad-section-headers", "5.16: refused without a line");
	m = one(&w, "5.10.223");
	m->raw_shnum = 0;
	m->raw_shstrndx = 0xffff;
	tb_expect(t, &w, -ENOEXEC, "", "bad-section-headers", "5.10.223: refused without a line");
	m = one(&w, "5.10.27");
	m->raw_shnum = 0;
	m->raw_shstrndx = 0xffff;
	tb_run(&w);
	f = tb_finding(&w, "m", "bad-section-headers");
	tap_ok(t, tb_v(&w, "m")->loads && f && f->severity == KP_SEV_WARNING,
	       "5.10.27: not checked, said to be unpredictable");
	tb_free(&w);
	m = one(&w, "7.2.13");
	tb_expect(t, &w, 0, "", "", "7.2: raw e_shstrndx 39 < e_shnum 40 loads");
}

static void blacklist(struct tap *t)
{
	static const char *const names[] = { "other", "m_info" };
	struct tb_world w;
	struct kp_module *m;

	m = one(&w, "6.12.37");
	tb_modinfo(m, "name", "m_info");
	w.facts.blacklist = names;
	w.facts.nblacklist = 2;
	tb_expect(t, &w, -EPERM, "Module m_info is blacklisted", "blacklisted",
		  "module_blacklist= names info->name");
	m = one(&w, "5.10.223");
	w.facts.blacklist = names;
	w.facts.nblacklist = 1;
	tb_expect(t, &w, 0, "", "", "not on the list");
}

int main(void)
{
	struct tap t = { 0 };

	modinfo_and_size(&t);
	strtab(&t, KP_SYMSTR_EMPTY, "empty symbol string table", "empty symbol string table");
	strtab(&t, KP_SYMSTR_NO_LEADING_NUL, "symbol string table missing leading NUL",
	       "symbol string table missing leading NUL");
	strtab(&t, KP_SYMSTR_UNTERMINATED, "symbol string table isn't NUL terminated",
	       "symbol string table isn't NUL terminated");
	/*
	 * pr_err() without a newline: the load prints it, dmesg shows it with the next printk
	 * (the output's kp_open_record_before(); the last line is not shown with its own load)
	 */
	strtab(&t, KP_SYMSTR_NAME_OOB, "symbol name out of bounds in string table",
	       "symbol name out of bounds in string table");
	tap_ok(&t,
	       kp_msg_unterminated("symbol name out of bounds in string table") &&
		       kp_msg_unterminated("more extended version crcs than names") &&
		       !kp_msg_unterminated("empty symbol string table"),
	       "the loader lines without a newline");
	ext_versions(&t, KP_EXT_VERSIONS_ONE_MISSING,
		     "extended version crc+name presence does not match");
	ext_versions(&t, KP_EXT_VERSIONS_FEW_NAMES, "more extended version crcs than names");
	open_line_note(&t);
	sechdrs(&t);
	blacklist(&t);
	return tap_done(&t);
}
