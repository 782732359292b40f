// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * elf-validity.c: elf_validity_cache_copy() v6.4+ (one .modinfo, struct module size),
 * elf_validity_cache_strtab() v6.13+, elf_validity_cache_index_versions() v6.14+, the
 * stripped-module check and blacklisted() (module_blacklist=, on info->name).
 */
#include <errno.h>

#include "builder.h"

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

static void strtab(struct tap *t, enum kp_symstr_state st, const char *line)
{
	struct tb_world w;
	struct kp_module *m;
	const struct kp_finding *f;

	m = one(&w, "6.13.0");
	m->symstr_state = st;
	tb_expect(t, &w, -ENOEXEC, line, "bad-symbol-strtab", "6.13 strtab check");
	m = one(&w, "6.12.37");
	m->symstr_state = st;
	tb_run(&w);
	f = tb_finding(&w, "m", "bad-symbol-strtab");
	tap_ok(t, tb_v(&w, "m")->loads && f && f->severity == KP_SEV_WARNING,
	       "6.12: not checked, a warning (%s)", line[0] ? line : "name out of bounds");
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
	strtab(&t, KP_SYMSTR_EMPTY, "empty symbol string table");
	strtab(&t, KP_SYMSTR_NO_LEADING_NUL, "symbol string table missing leading NUL");
	strtab(&t, KP_SYMSTR_UNTERMINATED, "symbol string table isn't NUL terminated");
	/* pr_err() without a newline: nothing is logged until the next printk */
	strtab(&t, KP_SYMSTR_NAME_OOB, "");
	ext_versions(&t, KP_EXT_VERSIONS_ONE_MISSING,
		     "extended version crc+name presence does not match");
	ext_versions(&t, KP_EXT_VERSIONS_FEW_NAMES, "more extended version crcs than names");
	blacklist(&t);
	return tap_done(&t);
}
