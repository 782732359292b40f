// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * resolve.c: simplify_symbols() (every st_shndx branch, the last error wins), resolve_symbol(),
 * ignore_undef_symbol() (_GLOBAL_OFFSET_TABLE_ v5.12 / stable 5.10.20), the Unknown symbol
 * line, verify_namespace_is_imported() (v5.4+) and verify_module_namespace() (v6.16+).
 */
#include <elf.h>
#include <errno.h>

#include "builder.h"

static struct kp_module *one(struct tb_world *w, const char *release)
{
	tb_init(w, release);
	tb_std_kernel(w);
	return tb_module(w, "m");
}

/*
 * Module "m" of an @image_size-byte file whose import kp_name_page has a name running to the
 * file's end (after an import early_missing when @early): the strtab_page fixture's shape.
 */
static struct kp_module *name_page_module(struct tb_world *w, const char *release,
					  size_t image_size, bool early)
{
	struct kp_module *m = one(w, release);

	if (early)
		tb_import(m, "early_missing");
	tb_import_name_past_end(m, image_size, "kp_name_page");
	return m;
}

static void unknown(struct tap *t)
{
	struct tb_world w;
	struct kp_module *m;

	m = one(&w, "6.12.37");
	tb_import(m, "nowhere");
	tb_expect(t, &w, -ENOENT, "m: Unknown symbol nowhere (err -2)", "unknown-symbol",
		  "6.12 unknown");
	m = one(&w, "5.10.223");
	tb_import(m, "nowhere");
	tb_expect(t, &w, -ENOENT, "m: Unknown symbol nowhere (err -2)", "unknown-symbol",
		  "5.10 unknown");
	/* Older copies printed PTR_ERR(NULL) (loader-rules.md 6.1). */
	m = one(&w, "5.4.0");
	tb_import(m, "nowhere");
	tb_expect(t, &w, -ENOENT, "m: Unknown symbol nowhere (err 0)", "unknown-symbol",
		  "5.4 unknown");
	m = one(&w, "6.12.37");
	tb_import_weak(m, "nowhere");
	tb_import(m, "printk");
	tb_expect(t, &w, 0, "", "", "weak unknown: left 0");
}

static void got(struct tap *t, const char *release, uint16_t machine, bool exempt)
{
	struct tb_world w;
	struct kp_module *m = one(&w, release);
	char what[64];

	m->machine = machine;
	tb_import(m, "_GLOBAL_OFFSET_TABLE_");
	snprintf(what, sizeof(what), "%s machine %u _GLOBAL_OFFSET_TABLE_", release, machine);
	if (exempt)
		tb_expect(t, &w, 0, "", "", what);
	else
		tb_expect(t, &w, -ENOENT, "m: Unknown symbol _GLOBAL_OFFSET_TABLE_ (err -2)",
			  "unknown-symbol", what);
}

static void gpl_only(struct tap *t)
{
	struct tb_world w;
	struct kp_module *m;

	m = one(&w, "6.1.129");
	tb_modinfo(m, "license", "Proprietary");
	tb_import(m, "gpl_fn");
	tb_expect(t, &w, -ENOENT,
		  "m: module license 'Proprietary' taints kernel.\n"
		  "Disabling lock debugging due to kernel taint\n"
		  "m: Unknown symbol gpl_fn (err -2)",
		  "license-taint,gpl-only-symbol", "P module, GPL-only import (6.1)");

	/* EXPORT_SYMBOL_GPL_FUTURE before 5.12: visible to P modules, with a warning. */
	m = one(&w, "5.10.223");
	tb_modinfo(m, "license", "Proprietary");
	tb_import(m, "fut_fn");
	tb_expect(t, &w, 0,
		  "m: module license 'Proprietary' taints kernel.\n"
		  "Disabling lock debugging due to kernel taint\n"
		  "Symbol fut_fn is being used by a non-GPL module, which will not be allowed in "
		  "the future",
		  "license-taint", "P module, GPL_FUTURE import (5.10)");
	/* 5.12+: the table is gone, the export with it. */
	m = one(&w, "5.12.0");
	tb_import(m, "fut_fn");
	tb_expect(t, &w, -ENOENT, "m: Unknown symbol fut_fn (err -2)", "unknown-symbol",
		  "GPL_FUTURE import (5.12)");
}

static void namespaces(struct tap *t)
{
	struct tb_world w;
	struct kp_module *m;

	m = one(&w, "6.12.37");
	tb_import(m, "ns_fn");
	tb_expect(t, &w, -EINVAL,
		  "m: module uses symbol (ns_fn) from namespace MY_NS, but does not import it.\n"
		  "m: Unknown symbol ns_fn (err -22)",
		  "missing-namespace", "namespace not imported (6.12)");
	m = one(&w, "6.12.37");
	tb_import_weak(m, "ns_fn"); /* the weak exemption does not cover ERR_PTR results */
	tb_expect(t, &w, -EINVAL,
		  "m: module uses symbol (ns_fn) from namespace MY_NS, but does not import it.\n"
		  "m: Unknown symbol ns_fn (err -22)",
		  "missing-namespace", "weak import, namespace not imported");
	m = one(&w, "6.12.37");
	tb_modinfo(m, "import_ns", "OTHER");
	tb_modinfo(m, "import_ns", "MY_NS");
	tb_import(m, "ns_fn");
	tb_expect(t, &w, 0, "", "", "second import_ns= tag imports it");
	m = one(&w, "6.12.37");
	w.facts.allow_missing_ns = true;
	tb_import(m, "ns_fn");
	tb_expect(t, &w, 0,
		  "m: module uses symbol (ns_fn) from namespace MY_NS, but does not import it.", "",
		  "MODULE_ALLOW_MISSING_NAMESPACE_IMPORTS: warning only");
	m = one(&w, "5.3.18");
	tb_import(m, "ns_fn");
	tb_expect(t, &w, 0, "", "", "5.3: no namespaces");
	m = one(&w, "5.4.0");
	tb_import(m, "ns_fn");
	tb_expect(t, &w, -EINVAL,
		  "m: module uses symbol (ns_fn) from namespace MY_NS, but does not import it.\n"
		  "m: Unknown symbol ns_fn (err -22)",
		  "missing-namespace", "5.4: namespaces");
}

/* prov exports mod_fn to "module:@pattern"; user-mod (mod->name @user) imports it. */
static void module_ns(struct tap *t, const char *release, const char *pattern, const char *user,
		      bool granted)
{
	struct tb_world w;
	struct kp_module *p, *u;
	char what[160], line[256];

	tb_init(&w, release);
	p = tb_module(&w, "prov");
	if (w.facts.profile.has[KP_F_KFLAGSTAB])
		tb_export_flag(p, "mod_fn", true);
	else
		tb_export(p, "mod_fn", KP_KSYMTAB_GPL);
	tb_export_ns(p, pattern);
	u = tb_module(&w, user);
	tb_import(u, "mod_fn");
	tb_run(&w);
	snprintf(what, sizeof(what), "%s: %s granted to %s: %s", release, pattern, user,
		 granted ? "yes" : "no");
	tap_is_int(t, tb_v(&w, user)->err, granted ? 0 : -EINVAL, what);
	snprintf(line, sizeof(line),
		 "%s: module uses symbol (mod_fn) from namespace %s, but does not import it.\n"
		 "%s: Unknown symbol mod_fn (err -22)",
		 user, pattern, user);
	tb_is_text(t, tb_dmesg(&w, user), granted ? "" : line, "dmesg");
	tb_free(&w);
}

static void specials(struct tap *t)
{
	struct tb_world w;
	struct kp_module *m;

	m = one(&w, "6.12.37");
	tb_special(m, "shared_buf", SHN_COMMON);
	tb_expect(t, &w, -ENOEXEC, "m: please compile with -fno-common", "common-symbol",
		  "SHN_COMMON");
	m = one(&w, "6.12.37");
	tb_special(m, "__gnu_lto_slim", SHN_COMMON);
	tb_special(m, "klp_sym", 0xff20); /* SHN_LIVEPATCH */
	tb_special(m, "in_range", 39);
	tb_expect(t, &w, 0, "", "", "__gnu_lto common, SHN_LIVEPATCH, last section: ignored");
	/* The last error wins, every symbol is still visited. */
	m = one(&w, "6.12.37");
	tb_special(m, "shared_buf", SHN_COMMON);
	tb_import(m, "nowhere");
	tb_expect(t, &w, -ENOENT,
		  "m: please compile with -fno-common\nm: Unknown symbol nowhere (err -2)",
		  "common-symbol,unknown-symbol", "common then unknown: ENOENT");
	m = one(&w, "6.12.37");
	tb_import(m, "nowhere");
	tb_special(m, "shared_buf", SHN_COMMON);
	tb_expect(t, &w, -ENOEXEC,
		  "m: Unknown symbol nowhere (err -2)\nm: please compile with -fno-common",
		  "unknown-symbol,common-symbol", "unknown then common: ENOEXEC");
}

static void shndx(struct tap *t, const char *release, bool check)
{
	struct tb_world w;
	struct kp_module *m = one(&w, release);
	char what[64];
	const struct kp_finding *f;

	tb_special(m, "bad_sym", 99);
	/* sechdrs[99].sh_addr is byte 12000 + 99 * 64 + 16 = 18352 of a buffer of 20480 */
	m->image_size = 20000;
	m->shoff = 12000;
	tb_run(&w);
	snprintf(what, sizeof(what), "%s: st_shndx 99 of 40 sections", release);
	tap_is_int(t, tb_v(&w, "m")->err, check ? -ENOEXEC : 0, what);
	tb_is_text(t, tb_dmesg(&w, "m"),
		   check ? "m: Symbol bad_sym has an invalid section index 99 (max 39)" : "",
		   "dmesg");
	f = tb_finding(&w, "m", "invalid-section-index");
	tap_ok(t, f && f->severity == (check ? KP_SEV_ERROR : KP_SEV_WARNING),
	       "invalid-section-index is %s", check ? "an error" : "a warning");
	tb_free(&w);
}

/*
 * Without the check the read of sechdrs[st_shndx].sh_addr lands in the buffer (garbage, the
 * load goes on), in the guard page after it (the kernel oopses) or further (unpredictable).
 */
static void shndx_oops(struct tap *t)
{
	struct tb_world w;
	struct kp_module *m;
	const struct kp_finding *f;

	m = one(&w, "5.10.223");
	m->image_size = 5176; /* the 5.10 kp_bad_shndx fixture: shoff 3448, 27 sections */
	m->shoff = 3448;
	m->shnum = 27;
	tb_special(m, "marker", 74); /* 3448 + 74 * 64 + 16 = 8200: in the guard page */
	tb_import(m, "later_missing");
	tb_run(&w);
	tap_is_int(t, tb_v(&w, "m")->err, KP_ERR_OOPS, "5.10: the read hits the guard page: oops");
	tap_is_str(t, kp_errno_name(tb_v(&w, "m")->err), "OOPS", "errno name OOPS");
	tb_is_text(t, tb_dmesg(&w, "m"),
		   "BUG: unable to handle page fault for address: (past the module image)",
		   "the fault line; nothing after it (the process is killed)");
	tap_is_str(t, tb_findings(&w, "m"), "kernel-oops", "kernel-oops only");
	f = tb_finding(&w, "m", "kernel-oops");
	tap_ok(t, f && f->severity == KP_SEV_ERROR && strstr(f->message, "sechdrs[74]"),
	       "kernel-oops is an error naming the read");
	tap_ok(t, strchr(tb_global(&w), 'D') != NULL, "global taint D: '%s'", tb_global(&w));
	tb_free(&w);

	m = one(&w, "5.10.223");
	m->image_size = 5176;
	m->shoff = 3448;
	m->shnum = 27;
	tb_special(m, "marker", 29); /* 3448 + 29 * 64 + 16 = 5320 < 8192: inside */
	tb_expect(t, &w, 0, "", "invalid-section-index", "5.10: inside the buffer, loads");

	m = one(&w, "5.10.223");
	m->image_size = 5176;
	m->shoff = 3448;
	m->shnum = 27;
	tb_special(m, "marker", 200); /* 16264: past the guard page */
	tb_run(&w);
	f = tb_finding(&w, "m", "kernel-oops");
	tap_ok(t, tb_v(&w, "m")->err == 0 && f && f->severity == KP_SEV_WARNING,
	       "5.10: past the guard page: a kernel-oops warning, the outcome open");
	tb_free(&w);

	/* ELFCLASS32: 40-byte headers, sh_addr at 12 */
	m = one(&w, "5.10.223");
	m->machine = EM_386;
	m->is64 = false;
	m->image_size = 4000;
	m->shoff = 3000;
	m->shnum = 20;
	tb_special(m, "marker", 28); /* 3000 + 28 * 40 + 12 = 4132: guard page */
	tb_run(&w);
	tap_is_int(t, tb_v(&w, "m")->err, KP_ERR_OOPS, "i386: 40-byte headers, oops");
	tb_free(&w);

	/* ppc64el, the kernel's page size (oob-read.c): byte 8200 is inside one 64 KiB page */
	m = one(&w, "5.10.223");
	m->machine = EM_PPC64;
	m->image_size = 5176;
	m->shoff = 3448;
	m->shnum = 27;
	tb_special(m, "marker", 74);
	w.facts.page_shift = 16;
	tb_expect(t, &w, 0, "", "invalid-section-index", "ppc64: 64 KiB pages, inside");
	/* ... and in the guard page after a 4 KiB one (sid's powerpc64le 7.2: PAGE_SHIFT=12) */
	m = one(&w, "5.10.223");
	m->machine = EM_PPC64;
	m->image_size = 5176;
	m->shoff = 3448;
	m->shnum = 27;
	tb_special(m, "marker", 74);
	w.facts.page_shift = 12;
	tb_expect(t, &w, KP_ERR_OOPS, "", "kernel-oops", "ppc64: 4 KiB pages, the guard page");
	/* page size not known: 4 and 64 KiB disagree, a warning, the outcome open */
	m = one(&w, "5.10.223");
	m->machine = EM_PPC64;
	m->image_size = 5176;
	m->shoff = 3448;
	m->shnum = 27;
	tb_special(m, "marker", 74);
	tb_run(&w);
	f = tb_finding(&w, "m", "kernel-oops");
	tap_ok(t,
	       tb_v(&w, "m")->err == 0 && f && f->severity == KP_SEV_WARNING &&
		       strstr(f->message, "at byte 8200 of a 5176-byte image") &&
		       strstr(f->message, "page size, which is not known"),
	       "ppc64, page size unknown: a kernel-oops warning naming the byte, the outcome open");
	tb_free(&w);

	/* a kernel with the check refuses before reading */
	m = one(&w, "6.12.80");
	m->image_size = 5176;
	m->shoff = 3448;
	m->shnum = 27;
	tb_special(m, "marker", 74);
	tb_expect(t, &w, -ENOEXEC, "m: Symbol marker has an invalid section index 74 (max 26)",
		  "invalid-section-index", "6.12.80: refused, no oops");
}

/*
 * simplify_symbols() before v6.13: a strong import whose name, read from the file, runs to
 * the end of a module that fills its last page is read on into the guard page (the 6.1
 * oracle's strtab_page: an oops in vsnprintf() under the Unknown symbol printk).
 */
static void name_oops(struct tap *t)
{
	struct tb_world w;
	struct kp_module *m;
	const struct kp_finding *f;

	m = name_page_module(&w, "6.1.129", 8192, true);
	tb_import(m, "later_missing");
	tb_run(&w);
	tap_is_int(t, tb_v(&w, "m")->err, KP_ERR_OOPS, "6.1: the name runs into the guard page");
	tb_is_text(t, tb_dmesg(&w, "m"),
		   "m: Unknown symbol early_missing (err -2)\n"
		   "BUG: unable to handle page fault for address: (past the module image)",
		   "the earlier import's line, then the fault; nothing after it");
	f = tb_finding(&w, "m", "kernel-oops");
	tap_ok(t,
	       f && f->severity == KP_SEV_ERROR && !strcmp(f->symbol, "kp_name_page") &&
		       strstr(f->message, "simplify_symbols()") &&
		       strstr(f->message, "fills its last page"),
	       "kernel-oops is an error naming the symbol and the function");
	f = tb_finding(&w, "m", "bad-symbol-strtab");
	tap_ok(t,
	       f && f->severity == KP_SEV_WARNING && strstr(f->message, "malformed") &&
		       !strstr(f->message, "not predictable"),
	       "the strtab warning names the malformation only");
	tap_ok(t, strchr(tb_global(&w), 'D') != NULL, "global taint D: '%s'", tb_global(&w));
	tb_free(&w);

	/* the same name in a file that leaves the rest of its last page (zeroed): no oops */
	name_page_module(&w, "6.1.129", 8000, false);
	tb_run(&w);
	tap_is_int(t, tb_v(&w, "m")->err, -ENOENT, "6.1: rest of the page: Unknown symbol");
	f = tb_finding(&w, "m", "bad-symbol-strtab");
	tap_ok(t, !tb_finding(&w, "m", "kernel-oops") && f && strstr(f->message, "init_on_alloc"),
	       "no kernel-oops; the warning says the page is zeroed with init_on_alloc");
	tb_free(&w);

	/* v6.13+ refuses the module before any name is read */
	name_page_module(&w, "6.13.0", 8192, false);
	tb_run(&w);
	tap_is_int(t, tb_v(&w, "m")->err, -ENOEXEC, "6.13: elf_validity_cache_strtab() refuses");
	tap_ok(t, !tb_finding(&w, "m", "kernel-oops"), "6.13: no oops");
	tb_free(&w);
}

/*
 * The name to the page's end begins an export find_symbol() searches (find-prefix.c): its
 * strcmp() faults first, holding module_mutex (the 2026-12-06 oracle's strtab_prefix_then,
 * strtab_modprefix_then: 5.10.262, 6.1.192, 6.12.118), and before 5.13 nothing hangs.
 */
static void name_prefix(struct tap *t, const char *release, const char *name, bool prop, bool prov,
			bool faults)
{
	struct tb_world w;
	struct kp_module *m, *p = NULL;
	const struct kp_finding *f;
	bool hang = !faults && strncmp(release, "5.10", 4) == 0;

	tb_init(&w, release);
	tb_std_kernel(&w);
	if (prov) {
		p = tb_module(&w, "prov");
		tb_modinfo(p, "license", "GPL");
		tb_export(p, "prov_fn", KP_KSYMTAB);
		tb_import(p, "printk");
	}
	m = tb_module(&w, "m");
	tb_modinfo(m, "license", prop ? "Proprietary" : "GPL");
	tb_import_name_past_end(m, 8192, name);
	tb_run(&w);
	f = tb_finding(&w, "m", hang ? "kernel-hang" : "kernel-oops");
	tap_ok(t, tb_v(&w, "m")->err == KP_ERR_OOPS && f && f->severity == KP_SEV_ERROR,
	       "%s %s%s: an oops (%s)", release, name, prop ? " (P)" : "",
	       hang ? "kernel-hang" : "kernel-oops");
	tap_ok(t, tb_v(&w, "m")->holds_module_mutex == faults && tb_v(&w, "m")->hangs == hang,
	       "%s %s: %s", release, name,
	       faults ? "in find_symbol(), module_mutex held, no hang"
	       : hang ? "in printk: the machine hangs"
		      : "in printk: no lock held");
	if (faults)
		tap_ok(t, f && strstr(f->message, "begins") && strstr(f->message, "find_symbol()"),
		       "%s %s: the finding names the export it begins", release, name);
	tb_free(&w);
}

/*
 * The same for a weak undefined symbol: simplify_symbols() resolves it with find_symbol() too
 * (2026-12-06 oracle, strtab_weakprefix_then: the oops and the next load blocked on 5.10.262,
 * 6.1.192, 6.12.118). A name that begins nothing is not found, quietly (strtab_weakpage_then:
 * the module loads); 6.13+ refuses the name before (elf-validity.c).
 */
static void name_weak(struct tap *t, const char *release, const char *name, bool faults)
{
	struct tb_world w;
	struct kp_module *m;
	const struct kp_finding *f;

	m = one(&w, release);
	m->image_size = 8192;
	m->symstr_state = KP_SYMSTR_NAME_OOB;
	m->symname_past_end = 1;
	tb_import_weak(m, name);
	tb_import(m, "printk");
	m->import_name_past_end = m->imports[0].symidx;
	tb_run(&w);
	if (faults) {
		f = tb_finding(&w, "m", "kernel-oops");
		tap_ok(t,
		       tb_v(&w, "m")->err == KP_ERR_OOPS && tb_v(&w, "m")->holds_module_mutex &&
			       !tb_v(&w, "m")->hangs && f &&
			       strstr(f->message, "weak undefined symbol") &&
			       strstr(f->message, "find_symbol()"),
		       "%s weak %s: the oops in find_symbol(), module_mutex held, no hang", release,
		       name);
		tb_free(&w);
		return;
	}
	f = NULL; /* the one naming the symbol (elf-validity.c's names none) */
	for (size_t i = 0; i < tb_v(&w, "m")->nfindings; i++)
		if (tb_v(&w, "m")->findings[i].symbol &&
		    !strcmp(tb_v(&w, "m")->findings[i].symbol, name))
			f = &tb_v(&w, "m")->findings[i];
	tap_ok(t,
	       tb_v(&w, "m")->loads && !tb_v(&w, "m")->nmessages &&
		       !tb_finding(&w, "m", "kernel-oops") && f &&
		       !strcmp(f->id, "bad-symbol-strtab") && f->severity == KP_SEV_WARNING &&
		       strstr(f->message, "not found") && !strstr(f->message, "not predictable"),
	       "%s weak %s: not found, no line, loads; the warning says so", release, name);
	tb_free(&w);
}

/*
 * The same name before v5.13 (the 5.10.262 oracle's strtab_page): the fault is inside the
 * "Unknown symbol" printk, which 5.10 formats holding logbuf_lock with interrupts off: the
 * machine hangs and no fault line is ever logged. 5.13 is the first without the lock.
 */
static void name_hang(struct tap *t, const char *version, bool hangs)
{
	struct tb_world w;
	const struct kp_finding *f;

	name_page_module(&w, version, 8192, true);
	tb_run(&w);
	tap_ok(t, tb_v(&w, "m")->err == KP_ERR_OOPS, "%s: an oops", version);
	tap_ok(t, tb_v(&w, "m")->hangs == hangs, "%s: hangs %d", version, hangs);
	tb_is_text(t, tb_dmesg(&w, "m"),
		   hangs ? "m: Unknown symbol early_missing (err -2)"
			 : "m: Unknown symbol early_missing (err -2)\n"
			   "BUG: unable to handle page fault for address: (past the module image)",
		   hangs ? "5.10: the earlier import's line, no fault line (never logged)"
			 : "5.13: the earlier import's line, then the fault");
	f = tb_finding(&w, "m", hangs ? "kernel-hang" : "kernel-oops");
	tap_ok(t,
	       f && f->severity == KP_SEV_ERROR && f->consequence == KP_CONS_LOAD_FAIL &&
		       !strcmp(f->symbol, "kp_name_page") &&
		       (!hangs || strstr(f->message, "logbuf_lock")),
	       "%s: %s is a load-failing error naming the symbol", version,
	       hangs ? "kernel-hang" : "kernel-oops");
	tap_ok(t, !tb_finding(&w, "m", hangs ? "kernel-oops" : "kernel-hang"),
	       "%s: not the other finding", version);
	tap_ok(t, strchr(tb_global(&w), 'D') != NULL, "global taint D: '%s'", tb_global(&w));
	tb_free(&w);
}

/*
 * An import name starting at byte 8208 of a 5128-byte arm64 file (the 6.1 kp_strtab_guard's
 * shape): the guard page after a 4 KiB page, the rest of a 16 KiB one (oob-read.c).
 */
static void name_start_page_size(struct tap *t)
{
	static const unsigned shifts[] = { 12, 14, 0 };
	struct tb_world w;
	const struct kp_finding *f;

	for (size_t i = 0; i < 3; i++) {
		struct kp_module *m = one(&w, "6.1.129");

		m->machine = EM_AARCH64;
		tb_import_name_outside(m, 5128, 8208, false);
		w.facts.page_shift = shifts[i];
		tb_run(&w);
		f = tb_finding(&w, "m", "kernel-oops");
		if (shifts[i] == 12)
			tap_ok(t,
			       tb_v(&w, "m")->err == KP_ERR_OOPS &&
				       tb_v(&w, "m")->holds_module_mutex && f &&
				       f->severity == KP_SEV_ERROR,
			       "arm64, 4 KiB pages: the guard page, an oops holding module_mutex");
		else if (shifts[i] == 14)
			tap_ok(t, tb_v(&w, "m")->err == -ENOENT && !f,
			       "arm64, 16 KiB pages: the zeroed rest of the page, ENOENT, no oops");
		else
			tap_ok(t,
			       tb_v(&w, "m")->err == -ENOENT &&
				       !tb_v(&w, "m")->holds_module_mutex && f &&
				       f->severity == KP_SEV_WARNING &&
				       strstr(f->message,
					      "starts at byte 8208 of a 5128-byte file") &&
				       strstr(f->message, "page size, which is not known"),
			       "arm64, page size unknown: a kernel-oops warning, the outcome open");
		tb_free(&w);
	}
}

int main(void)
{
	struct tap t = { 0 };

	unknown(&t);
	got(&t, "5.10.19", EM_X86_64, false);
	got(&t, "5.10.20", EM_X86_64, true);
	got(&t, "5.10.223+deb11-amd64", EM_X86_64, true);
	got(&t, "5.11.0", EM_X86_64, false);
	got(&t, "5.12.0", EM_386, true);
	got(&t, "6.12.37", EM_X86_64, true);
	got(&t, "6.12.37", EM_AARCH64, false);
	{
		struct tb_world w;
		struct kp_module *m = one(&w, "6.1.129");

		m->machine = EM_PPC64;
		tb_import(m, ".TOC.");
		tb_expect(&t, &w, 0, "", "", "ppc64 .TOC.");
	}
	gpl_only(&t);
	namespaces(&t);
	module_ns(&t, "6.16.0", "module:user", "user", true);
	module_ns(&t, "6.16.0", "module:other,user", "user", true);
	module_ns(&t, "6.16.0", "module:us*", "user", true);
	module_ns(&t, "6.16.0", "module:my-drv", "my_drv", true); /* mod_strncmp(): - == _ */
	module_ns(&t, "6.16.0", "module:use", "user", false);	  /* no glob: exact length */
	module_ns(&t, "6.16.0", "module:other", "user", false);
	module_ns(&t, "6.15.0", "module:user", "user", false); /* an ordinary namespace */
	module_ns(&t, "7.2.13", "module:user", "user", true);
	specials(&t);
	shndx_oops(&t);
	name_oops(&t);
	name_start_page_size(&t);
	name_prefix(&t, "6.1.129", "prin", false, false, true);	  /* vmlinux's printk */
	name_prefix(&t, "5.10.223", "prin", false, false, true);  /* no hang: not in printk */
	name_prefix(&t, "6.1.129", "gpl_", false, false, true);	  /* vmlinux's GPL-only gpl_fn */
	name_prefix(&t, "6.1.129", "gpl_", true, false, false);	  /* P: the GPL table skipped */
	name_prefix(&t, "5.10.223", "gpl_", true, false, false);  /* ... the printk's hang */
	name_prefix(&t, "6.1.129", "base_", false, false, true);  /* Module.symvers' base-mod */
	name_prefix(&t, "6.1.129", "prov_", false, true, true);	  /* a loaded set module */
	name_prefix(&t, "6.1.129", "prov_", false, false, false); /* no such module */
	name_prefix(&t, "6.1.129", "prinz", false, false, false); /* begins nothing */
	name_weak(&t, "6.12.37", "prin", true);			  /* vmlinux's printk */
	name_weak(&t, "5.10.223", "prin", true);		  /* no hang: not in printk */
	name_weak(&t, "6.1.129", "printk", true); /* the whole name, then the page */
	name_weak(&t, "6.12.37", "prinz", false); /* begins nothing: loads */
	name_weak(&t, "5.10.223", "kp_name_weakpage", false);
	name_hang(&t, "5.10.223", true);
	name_hang(&t, "5.12.19", true);
	name_hang(&t, "5.13.0", false);
	shndx(&t, "6.1.167", false);
	shndx(&t, "6.1.168", true);
	shndx(&t, "6.12.79", false);
	shndx(&t, "6.12.80", true);
	shndx(&t, "6.16.0", false);
	shndx(&t, "7.0.0", true);
	return tap_done(&t);
}
