// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * version.c: check_modstruct_version() (module_layout), check_version() (match, mismatch,
 * exporter without CRC, no __versions -> try_to_force_load(), missing entry: upstream warns
 * once and accepts, Debian rejects; v6.14+ extended versions), check_modinfo()'s vermagic
 * (same_magic() skips the release with MODVERSIONS and __versions; none -> force load).
 */
#include <errno.h>

#include "builder.h"

static struct kp_module *one(struct tb_world *w, const char *release)
{
	struct kp_module *m;

	tb_init(w, release);
	tb_std_kernel(w);
	w->facts.modversions = true;
	m = tb_module(w, "m");
	tb_version(m, "module_layout", 0x33333333);
	return m;
}

static void crcs(struct tap *t)
{
	struct tb_world w;
	struct kp_module *m;

	m = one(&w, "6.12.37");
	m->versions[0].crc = 0x33333334;
	tb_expect(t, &w, -ENOEXEC, "m: disagrees about version of symbol module_layout",
		  "crc-mismatch,module-layout", "module_layout CRC differs");
	m = one(&w, "6.12.37");
	tb_version(m, "printk", 0x11111111);
	tb_import(m, "printk");
	tb_expect(t, &w, 0, "", "", "CRCs match");
	m = one(&w, "6.12.37");
	tb_version(m, "printk", 0xdeadbeef);
	tb_import(m, "printk");
	tb_expect(t, &w, -EINVAL,
		  "m: disagrees about version of symbol printk\nm: Unknown symbol printk (err -22)",
		  "crc-mismatch", "printk CRC differs");
	m = one(&w, "6.12.37");
	w.facts.modversions = false;
	tb_version(m, "printk", 0xdeadbeef);
	tb_import(m, "printk");
	tb_expect(t, &w, 0, "", "", "no CONFIG_MODVERSIONS: CRCs not compared");
	/* An export without a CRC (Module.symvers 0x0): "OK, we're already tainted". */
	tb_init(&w, "6.12.37");
	w.facts.modversions = true;
	tb_symvers(&w, "0x00000000\tnocrc_fn\tvmlinux\tEXPORT_SYMBOL\t\n");
	m = tb_module(&w, "m");
	tb_version(m, "nocrc_fn", 0x1);
	tb_import(m, "nocrc_fn");
	tb_run(&w);
	tap_ok(t, tb_v(&w, "m")->loads, "exporter without CRC: accepted");
	tb_free(&w);
}

static void no_versions(struct tap *t)
{
	struct tb_world w;
	struct kp_module *m;

	/* No __versions at all: check_modstruct_version() already force-loads. */
	m = one(&w, "6.12.37");
	m->nversions = 0;
	m->versions_format = KP_VERSIONS_NONE;
	tb_import(m, "printk");
	tb_expect(t, &w, -ENOEXEC, "", "module-layout", "no __versions, no force load");
	m = one(&w, "6.12.37");
	m->nversions = 0;
	m->versions_format = KP_VERSIONS_NONE;
	w.facts.force_load = true;
	tb_import(m, "printk");
	tb_run(&w);
	tap_ok(t, tb_v(&w, "m")->loads, "no __versions, CONFIG_MODULE_FORCE_LOAD: loads");
	tb_is_text(t, tb_dmesg(&w, "m"),
		   "m: module_layout: kernel tainted.\n"
		   "Disabling lock debugging due to kernel taint",
		   "force load: the first symbol names the line, once");
	tap_is_str(t, tb_taints(&w, "m"), "F", "F");
	tb_free(&w);
	/* __versions not SHF_ALLOC: the loader has no index.vers. */
	m = one(&w, "6.12.37");
	m->versions_alloc = false;
	tb_expect(t, &w, -ENOEXEC, "", "module-layout", "non-ALLOC __versions count as none");
}

static void missing_entry(struct tap *t)
{
	struct tb_world w;
	struct kp_module *m;

	m = one(&w, "6.12.37");
	tb_import(m, "printk");
	tb_import(m, "gpl_fn");
	tb_expect(t, &w, 0, "m: no symbol version for printk", "",
		  "upstream: warned once, accepted");
	m = one(&w, "6.12.37+deb13-amd64");
	tb_import(m, "printk");
	tb_import(m, "gpl_fn");
	tb_expect(t, &w, -EINVAL,
		  "m: no symbol version for printk\nm: Unknown symbol printk (err -22)\n"
		  "m: no symbol version for gpl_fn\nm: Unknown symbol gpl_fn (err -22)",
		  "missing-symbol-version,missing-symbol-version", "Debian: every one rejected");
	m = one(&w, "5.10.223+deb11-amd64");
	tb_modinfo(m, "name", "m_info");
	tb_import(m, "printk");
	tb_expect(t, &w, -EINVAL,
		  "m_info: no symbol version for printk\nm: Unknown symbol printk (err -22)",
		  "missing-symbol-version", "Debian 5.10: info->name in the version line");
	m = one(&w, "6.12.37+deb13-amd64");
	m->nversions = 0;
	tb_version(m, "printk", 0x11111111);
	tb_expect(t, &w, -ENOEXEC, "m: no symbol version for module_layout",
		  "missing-symbol-version,module-layout", "Debian: module_layout missing");
}

static void extended(struct tap *t)
{
	struct tb_world w;
	struct kp_module *m;

	/* v6.14+: with extended versions only those are read. */
	m = one(&w, "6.14.0+deb14-amd64");
	tb_version(m, "printk", 0xdeadbeef); /* ignored */
	tb_ext_version(m, "module_layout", 0x33333333);
	tb_ext_version(m, "printk", 0x11111111);
	tb_import(m, "printk");
	tb_import(m, "gpl_fn");
	tb_expect(t, &w, 0, "m: no extended symbol version for gpl_fn", "",
		  "6.14 extended: match, a missing one accepted even on Debian");
	m = one(&w, "6.14.0");
	tb_ext_version(m, "module_layout", 0x33333333);
	tb_ext_version(m, "printk", 0x1);
	tb_import(m, "printk");
	tb_expect(t, &w, -EINVAL,
		  "m: disagrees about version of symbol printk\nm: Unknown symbol printk (err -22)",
		  "crc-mismatch", "6.14 extended CRC differs");
	/* 6.13 does not read them: __versions decides. */
	m = one(&w, "6.13.0");
	tb_version(m, "printk", 0xdeadbeef);
	tb_ext_version(m, "printk", 0x11111111);
	tb_import(m, "printk");
	tb_expect(t, &w, -EINVAL,
		  "m: disagrees about version of symbol printk\nm: Unknown symbol printk (err -22)",
		  "crc-mismatch", "6.13: __versions only");
}

static void vermagic(struct tap *t)
{
	struct tb_world w;
	struct kp_module *m;

	m = one(&w, "6.12.37");
	w.facts.vermagic = "6.12.38 SMP mod_unload ";
	tb_expect(t, &w, 0, "", "", "MODVERSIONS + __versions: the release is not compared");
	m = one(&w, "6.12.37");
	w.facts.vermagic = "6.12.0 SMP preempt mod_unload ";
	tb_expect(t, &w, -ENOEXEC,
		  "m: version magic '6.12.0 SMP mod_unload ' should be '6.12.0 SMP preempt "
		  "mod_unload '",
		  "vermagic-mismatch", "the rest of vermagic differs");
	m = one(&w, "6.12.37");
	w.facts.modversions = false;
	w.facts.vermagic = "6.12.38 SMP mod_unload ";
	tb_expect(t, &w, -ENOEXEC,
		  "m: version magic '6.12.0 SMP mod_unload ' should be '6.12.38 SMP mod_unload '",
		  "vermagic-mismatch", "no MODVERSIONS: the whole string");
	m = one(&w, "6.12.37");
	m->vermagic = NULL;
	tb_expect(t, &w, -ENOEXEC, "", "no-vermagic", "no vermagic, no force load");
	m = one(&w, "6.12.37");
	m->vermagic = NULL;
	w.facts.force_load = true;
	tb_expect(t, &w, 0,
		  "m: bad vermagic: kernel tainted.\nDisabling lock debugging due to kernel taint",
		  "", "no vermagic, force load: F");
}

/* Module "m" importing sym0..sym99 with __versions in reverse order, sym@bad's CRC off by one. */
static struct kp_module *reversed(struct tb_world *w, const char *symvers, char (*names)[16],
				  int bad)
{
	struct kp_module *m;

	tb_init(w, "6.12.37");
	tb_symvers(w, symvers);
	w->facts.modversions = true;
	m = tb_module(w, "m");
	tb_version(m, "module_layout", 0x33333333);
	for (int i = 99; i >= 0; i--)
		tb_version(m, names[i], (uint32_t)(0x1000 + i + (i == bad)));
	for (int i = 0; i < 100; i++)
		tb_import(m, names[i]);
	return m;
}

/*
 * A long __versions in another order than .symtab (modpost follows the objects' tables, the
 * link reorders them): find_version()'s index takes over at the hint's first miss and must
 * find what the kernel's walk finds, the first entry of a name.
 */
static void long_list(struct tap *t)
{
	static char names[100][16], text[100 * 64 + 128];
	struct tb_world w;
	struct kp_module *m;
	size_t off;

	off = (size_t)snprintf(text, sizeof(text),
			       "0x33333333\tmodule_layout\tvmlinux\tEXPORT_SYMBOL\t\n");
	for (int i = 0; i < 100; i++) {
		snprintf(names[i], sizeof(names[i]), "sym%d", i);
		off += (size_t)snprintf(text + off, sizeof(text) - off,
					"0x%08x\t%s\tvmlinux\tEXPORT_SYMBOL\t\n", 0x1000 + i,
					names[i]);
	}
	reversed(&w, text, names, -1);
	tb_expect(t, &w, 0, "", "", "100 versions in reverse order: all found");
	reversed(&w, text, names, 57);
	tb_expect(t, &w, -EINVAL,
		  "m: disagrees about version of symbol sym57\n"
		  "m: Unknown symbol sym57 (err -22)",
		  "crc-mismatch", "100 versions in reverse order: sym57's CRC differs");
	/* a name twice (not distinct): the walk's first entry decides, the hint is not used */
	m = reversed(&w, text, names, -1);
	tb_version(m, names[3], 0xbad);
	m->versions_distinct = false;
	tb_expect(t, &w, 0, "", "", "a name twice: its first entry is the one compared");
}

/*
 * modprobe --force (finit_module() MODULE_INIT_IGNORE_MODVERSIONS | _VERMAGIC, all versions):
 * no __versions (every CRC check force-loads), no vermagic ("bad vermagic"), and
 * module_sig_check() treats the module as mangled: its signature is not verified.
 */
static void forced(struct tap *t)
{
	struct tb_world w;
	struct kp_module *m;

	/* a correctly built, signed module: forced, it loads F and E instead of clean */
	m = one(&w, "6.12.37");
	w.facts.force_load = true;
	w.facts.module_sig = true;
	w.facts.signatures_trusted = true;
	w.facts.vermagic = "6.12.0 SMP mod_unload modversions ";
	w.facts.init_flags = KP_INIT_IGNORE_MODVERSIONS | KP_INIT_IGNORE_VERMAGIC;
	tb_modinfo(m, "vermagic", "6.12.0 SMP mod_unload modversions ");
	tb_version(m, "printk", 0x11111111);
	tb_import(m, "printk");
	tb_signed(m, "sha256", "rsa");
	tb_run(&w);
	tap_ok(t, tb_v(&w, "m")->loads, "--force: loads (CONFIG_MODULE_FORCE_LOAD)");
	tb_is_text(t, tb_dmesg(&w, "m"),
		   "m: module_layout: kernel tainted.\n"
		   "Disabling lock debugging due to kernel taint\n"
		   "m: module verification failed: signature and/or required key missing - "
		   "tainting kernel",
		   "--force: F from module_layout (before the vermagic), the signature not "
		   "checked (E)");
	tap_is_str(t, tb_taints(&w, "m"), "FE", "--force: F and E");
	tap_is_str(t, tb_findings(&w, "m"), "forced-unverified", "--force: forced-unverified");
	tb_free(&w);

	/* the same, signatures enforced: the valid signature does not help */
	m = one(&w, "6.12.37");
	w.facts.force_load = true;
	w.facts.module_sig = true;
	w.facts.sig_enforce = true;
	w.facts.signatures_trusted = true;
	w.facts.init_flags = KP_INIT_IGNORE_MODVERSIONS | KP_INIT_IGNORE_VERMAGIC;
	tb_signed(m, "sha256", "rsa");
	tb_expect(t, &w, -EKEYREJECTED, "Loading of unsigned module is rejected",
		  "forced-unverified,signature-required", "--force, sig_enforce: EKEYREJECTED");

	/* without CONFIG_MODULE_FORCE_LOAD a forced load fails at the vermagic */
	m = one(&w, "6.12.37");
	w.facts.init_flags = KP_INIT_IGNORE_VERMAGIC;
	tb_expect(t, &w, -ENOEXEC, "", "no-vermagic", "--force-vermagic, no FORCE_LOAD: ENOEXEC");

	/* --force-modversion only: a CRC mismatch no longer matters, but F */
	m = one(&w, "6.12.37");
	w.facts.force_load = true;
	w.facts.init_flags = KP_INIT_IGNORE_MODVERSIONS;
	tb_version(m, "printk", 0xdeadbeef);
	tb_import(m, "printk");
	tb_run(&w);
	tap_ok(t, tb_v(&w, "m")->loads && !strcmp(tb_taints(&w, "m"), "F"),
	       "--force-modversion: the CRC mismatch is forced (F)");
	tb_free(&w);
}

int main(void)
{
	struct tap t = { 0 };

	forced(&t);
	crcs(&t);
	long_list(&t);
	no_versions(&t);
	missing_entry(&t);
	extended(&t);
	vermagic(&t);
	return tap_done(&t);
}
