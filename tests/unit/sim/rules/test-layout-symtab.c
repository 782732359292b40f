// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * layout-symtab.c: layout_symtab() before v6.13 reads the name of every symbol kallsyms keeps
 * from the file; one that runs to the end of a module filling its last page runs into the
 * guard page (the 6.1.192 oracle's strtab_defpage: an oops in strlen() <- layout_symtab()).
 */
#include <elf.h>
#include <errno.h>
#include <string.h>

#include "builder.h"

static struct kp_module *one(struct tb_world *w, const char *release, uint64_t size)
{
	struct kp_module *m;

	tb_init(w, release);
	tb_std_kernel(w);
	m = tb_module(w, "m");
	m->image_size = size;
	m->symname_past_end = 1;
	m->kept_name_past_end = 10;
	return m;
}

static void guard(struct tap *t, const char *release)
{
	struct tb_world w;
	const struct kp_finding *f;

	tb_import(one(&w, release, 8192), "later_missing");
	tb_run(&w);
	tap_ok(t, tb_v(&w, "m")->err == KP_ERR_OOPS && !tb_v(&w, "m")->hangs,
	       "%s: the kept name runs into the guard page: an oops, no hang", release);
	tb_is_text(t, tb_dmesg(&w, "m"),
		   "BUG: unable to handle page fault for address: (past the module image)",
		   "the fault line only: simplify_symbols() is never reached");
	tap_is_str(t, tb_findings(&w, "m"), "kernel-oops", "kernel-oops only");
	f = tb_finding(&w, "m", "kernel-oops");
	tap_ok(t,
	       f && f->severity == KP_SEV_ERROR && f->consequence == KP_CONS_LOAD_FAIL &&
		       !f->symbol && strstr(f->message, "symbol 10") &&
		       strstr(f->message, "layout_symtab()"),
	       "%s: kernel-oops is a load-failing error naming layout_symtab()", release);
	tap_ok(t, strchr(tb_global(&w), 'D') != NULL, "global taint D: '%s'", tb_global(&w));
	tb_free(&w);
}

int main(void)
{
	struct tap t = { 0 };
	struct tb_world w;
	struct kp_module *m;
	const struct kp_finding *f;

	guard(&t, "5.10.223");
	guard(&t, "6.1.129");
	guard(&t, "6.12.37");

	/* the rest of the last page (zeroed with init_on_alloc): the name ends, the load goes on */
	one(&w, "6.1.129", 8000);
	tb_run(&w);
	tap_ok(&t, tb_v(&w, "m")->err == 0, "6.1: rest of the page: loads");
	tap_is_str(&t, tb_findings(&w, "m"), "bad-symbol-strtab", "the strtab warning only");
	tb_free(&w);

	/*
	 * The kernel's page size (oob-read.c): an 8192-byte arm64 module whose kept name runs to
	 * its end fills a 4 KiB page, not a 16 or 64 KiB one.
	 */
	m = one(&w, "6.1.129", 8192);
	m->machine = EM_AARCH64;
	w.facts.page_shift = 12;
	tb_run(&w);
	tap_ok(&t, tb_v(&w, "m")->err == KP_ERR_OOPS && tb_finding(&w, "m", "kernel-oops"),
	       "arm64, 4 KiB pages: the guard page, an oops");
	tb_is_text(&t, tb_dmesg(&w, "m"), "", "arm64: no x86 fault line");
	tb_free(&w);
	m = one(&w, "6.1.129", 8192);
	m->machine = EM_AARCH64;
	w.facts.page_shift = 14;
	tb_run(&w);
	tap_ok(&t, tb_v(&w, "m")->err == 0, "arm64, 16 KiB pages: the rest of the page: loads");
	tap_is_str(&t, tb_findings(&w, "m"), "bad-symbol-strtab", "16 KiB: the strtab warning");
	f = tb_finding(&w, "m", "bad-symbol-strtab");
	tap_ok(&t, f && strstr(f->message, "into the rest of the last page, zeroed"),
	       "16 KiB: the warning says the rest of the last page");
	tb_free(&w);
	m = one(&w, "6.1.129", 8192);
	m->machine = EM_AARCH64; /* page size not known: 4, 16 or 64 KiB disagree */
	tb_run(&w);
	tap_ok(&t, tb_v(&w, "m")->err == 0 && !tb_finding(&w, "m", "kernel-oops"),
	       "arm64, page size unknown: no oops claimed");
	f = tb_finding(&w, "m", "bad-symbol-strtab");
	tap_ok(&t,
	       f && f->severity == KP_SEV_WARNING &&
		       strstr(f->message, "depends on the kernel's page size, not known") &&
		       strstr(f->message, "not predictable"),
	       "page size unknown: a warning that says the outcome is not predictable");
	tb_free(&w);
	m = one(&w, "6.1.129", 65536);
	m->machine = EM_AARCH64; /* fills a 64 KiB page, so every smaller one */
	tb_run(&w);
	tap_ok(&t, tb_v(&w, "m")->err == KP_ERR_OOPS,
	       "arm64, page size unknown, 65536 bytes: the guard page under every page size");
	tb_free(&w);
	m = one(&w, "6.1.129", 8192);
	w.facts.page_shift = 16; /* x86 with a 64 KiB config: the config's page size counts */
	tb_run(&w);
	tap_ok(&t, tb_v(&w, "m")->err == 0, "page_shift 16 given: the rest of the page: loads");
	tb_free(&w);

	/* v6.13+: elf_validity_cache_strtab() refuses the module before any name is read */
	m = one(&w, "6.13.0", 8192);
	m->symstr_state = KP_SYMSTR_NAME_OOB;
	tb_run(&w);
	tap_ok(&t, tb_v(&w, "m")->err == -ENOEXEC && !tb_finding(&w, "m", "kernel-oops"),
	       "6.13: refused (ENOEXEC), no oops");
	tb_free(&w);
	return tap_done(&t);
}
