// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The module reader on the committed kbuild fixtures (fixtures/ko) and broken files
 * (fixtures/bad). Its symbol_get() call sites: test-reader-symget.c.
 */
#include <dirent.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "open-fixture.h"
#include "read/module.h"
#include "same-module.h"
#include "tap.h"

static void test_gpl_provider(struct tap *t, const char *rel, enum kp_compression comp)
{
	struct kp_module *m = open_fixture(t, rel);
	static const struct {
		const char *name;
		bool gpl;
		const char *ns;
		uint32_t crc;
	} want[] = {
		{ "kp_gpl_prov_plain", false, NULL, 0x4939de36 },
		{ "kp_gpl_prov_var", false, NULL, 0xbf8b4656 },
		{ "kp_gpl_prov_gplonly", true, NULL, 0xc1bb5f9e },
		{ "kp_gpl_prov_ns", true, "KP_NS", 0x5a1c53f9 },
	};

	if (!m)
		return;
	tap_is_int(t, m->compression, comp, "compression");
	tap_is_str(t, m->name, "kp_gpl_prov", "this_module name");
	tap_is_str(t, m->modinfo_name, "kp_gpl_prov", "modinfo name");
	tap_is_str(t, m->license, "GPL", "license");
	tap_ok(t, m->license_gpl_compatible, "GPL is GPL-compatible");
	tap_is_str(t, m->vermagic, "6.12.118+deb12-amd64 SMP preempt mod_unload modversions ",
		   "vermagic");
	tap_ok(t, !m->intree, "out of tree");
	tap_ok(t, m->is64 && !m->big_endian && m->machine == 62, "ELF64 LE x86_64");
	tap_is_int(t, m->nexports, 4, "exports");
	for (size_t i = 0; i < 4 && i < m->nexports; i++) {
		tap_is_str(t, m->exports[i].name, want[i].name, "export name");
		tap_is_int(t, m->exports[i].gpl_only, want[i].gpl, "gpl_only");
		tap_is_str(t, m->exports[i].ns, want[i].ns, "namespace");
		tap_ok(t, m->exports[i].has_crc && m->exports[i].crc == want[i].crc, "crc 0x%08x",
		       m->exports[i].crc);
	}
	tap_is_int(t, m->nimports, 2, "imports");
	if (m->nimports == 2) {
		tap_is_str(t, m->imports[0].name, "__fentry__", "import 0");
		tap_is_str(t, m->imports[1].name, "__x86_return_thunk", "import 1");
	}
	tap_is_int(t, m->versions_format, KP_VERSIONS_FIXED, "__versions layout");
	tap_is_int(t, m->nversions, 3, "__versions entries");
	if (m->nversions == 3) {
		tap_is_str(t, m->versions[2].name, "module_layout", "last version entry");
		tap_is_int(t, m->versions[2].crc, 0x2f9b2b9a, "module_layout crc");
	}
	tap_ok(t, !m->sig.present, "unsigned");
	kp_module_free(m);
}

static void test_symtab_order(struct tap *t)
{
	struct kp_module *m = open_fixture(t, "fixtures/ko/6.12/kp_weak_gplonly_then_prop.ko");
	static const char *const order[] = { "kp_gpl_prov_gplonly", "__fentry__",
					     "__x86_return_thunk", "kp_prop_plain" };

	if (!m)
		return;
	tap_is_int(t, m->nimports, 4, "imports of kp_weak_gplonly_then_prop");
	for (size_t i = 0; i < 4 && i < m->nimports; i++)
		tap_is_str(t, m->imports[i].name, order[i], ".symtab order");
	if (m->nimports == 4) {
		tap_ok(t, m->imports[0].weak, "kp_gpl_prov_gplonly is weak");
		tap_ok(t, !m->imports[3].weak, "kp_prop_plain is not weak");
	}
	tap_is_int(t, m->ndepends, 2, "depends");
	if (m->ndepends == 2) {
		tap_is_str(t, m->depends[0], "kp_gpl_prov", "depends[0]");
		tap_is_str(t, m->depends[1], "kp_prop_prov", "depends[1]");
	}
	kp_module_free(m);
}

static void test_licenses(struct tap *t)
{
	struct kp_module *m = open_fixture(t, "fixtures/ko/6.12/kp_multi_license.ko");

	if (m) {
		tap_is_str(t, m->license, "GPL", "first license= wins");
		tap_ok(t, m->license_gpl_compatible, "multi-license module is GPL-compatible");
		kp_module_free(m);
	}
	m = open_fixture(t, "fixtures/ko/6.12/kp_nolicense.ko");
	if (m) {
		tap_ok(t, m->license == NULL, "no license= tag");
		tap_ok(t, !m->license_gpl_compatible, "no license is not GPL-compatible");
		kp_module_free(m);
	}
	m = open_fixture(t, "fixtures/ko/6.12/kp_prop_prov.ko");
	if (m) {
		tap_is_str(t, m->license, "Proprietary", "rewritten license");
		tap_ok(t, !m->license_gpl_compatible, "Proprietary is not GPL-compatible");
		kp_module_free(m);
	}
	m = open_fixture(t, "fixtures/ko/6.12/kp_ns_ok.ko");
	if (m) {
		tap_is_int(t, m->nimport_ns, 1, "import_ns count");
		if (m->nimport_ns)
			tap_is_str(t, m->import_ns[0], "KP_NS", "import_ns");
		kp_module_free(m);
	}
}

/* The raw header fields the loader compares (fixtures/bad/ext-shnum0.ko, extended numbering). */
static void test_raw_section_header(struct tap *t)
{
	struct kp_module *m = open_fixture(t, "fixtures/bad/ext-shnum0.ko");
	struct kp_module *p = open_fixture(t, "fixtures/ko/6.12/kp_plain.ko");

	if (m && p) {
		tap_ok(t,
		       m->raw_shnum == 0 && m->raw_shstrndx == 0xffff && m->sec0_set &&
			       m->shnum == p->shnum,
		       "extended numbering read (%u sections), raw e_shnum %u, e_shstrndx %u",
		       m->shnum, m->raw_shnum, m->raw_shstrndx);
		tap_ok(t,
		       p->raw_shnum == p->shnum && p->raw_shstrndx < p->raw_shnum && !p->sec0_set,
		       "an ordinary module: raw e_shnum %u = %u sections, section 0 null",
		       p->raw_shnum, p->shnum);
	}
	kp_module_free(m);
	kp_module_free(p);
}

static void test_bad(struct tap *t)
{
	static const struct {
		const char *file;
		const char *error;
	} bad[] = {
		{ "empty.ko", "empty file" },
		{ "text.ko", "not an ELF file" },
		{ "trunc-header.ko", "beyond the end of the file" },
		{ "trunc-half.ko", "beyond the end of the file" },
		{ "shoff-oob.ko", "beyond the end of the file" },
		{ "exec-type.ko", "not a kernel module" },
		{ "shstrndx-oob.ko", "out of range" },
		{ "modinfo-past-eof.ko", "extends past the end of the file" },
		{ "symtab-bad-link.ko", "invalid string table link" },
		{ "versions-bad-size.ko", "__versions" },
		{ "ksymtab-odd-size.ko", "__ksymtab" },
		{ "all-nobits.ko", "debuginfo-only" },
		{ "trunc.ko.xz", "truncated xz stream" },
		{ "corrupt.ko.xz", "corrupt xz data" },
		{ "trunc.ko.zst", "truncated zstd stream" },
		{ "trunc.ko.gz", "truncated gzip stream" },
		{ "not-elf.ko.gz", "not an ELF file" },
		{ "bomb.ko.xz", "not an ELF file" },
		{ "elf32be-garbage.ko", "beyond the end of the file" },
	};

	for (size_t i = 0; i < KP_ARRAY_SIZE(bad); i++) {
		char rel[128];
		struct kp_module *m = NULL;
		struct kp_err err = { 0 };
		int r;

		snprintf(rel, sizeof(rel), "fixtures/bad/%s", bad[i].file);
		r = kp_module_open(tap_srcpath(rel), NULL, &m, &err);
		tap_ok(t, r < 0 && !m && strstr(err.msg, bad[i].error), "%s: %s", bad[i].file,
		       err.msg);
		kp_module_free(m);
	}
	{
		struct kp_module *m = NULL;
		struct kp_err err = { 0 };
		struct kp_open_opts o = { .max_size = 1 << 20 };
		int r = kp_module_open(tap_srcpath("fixtures/ko/6.12/kp_gpl_prov.ko"), &o, &m,
				       &err);

		/* 1 MiB is plenty for the fixture: the cap does not get in the way. */
		tap_ok(t, r == 0, "size cap above the module's size");
		kp_module_free(m);
		o.max_size = 4096;
		r = kp_module_open(tap_srcpath("fixtures/ko/6.12/kp_gpl_prov.ko.xz"), &o, &m, &err);
		tap_ok(t, r < 0 && strstr(err.msg, "exceeds the limit"), "cap refuses: %s",
		       err.msg);
	}
}

/*
 * The file's bytes as one in-memory buffer (kp_module_open_buffer: every section present)
 * and the file read sparse (kp_module_open_with: only the sections the readers want) give
 * the same facts or the same error, as fuzz/fuzz-reader checks.
 */
static void test_buffer_agrees(struct tap *t, const char *path, const char *label)
{
	struct kp_module *a = NULL, *b = NULL;
	struct kp_decoders *dec = kp_decoders_new();
	struct kp_err ea = { 0 }, eb = { 0 };
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0;
	FILE *f = fopen(path, "rb");
	int ra, rb;

	while (f && !ferror(f) && !feof(f)) {
		unsigned char *nb = len == cap ? realloc(buf, cap = cap ? 2 * cap : 65536) : buf;

		if (!nb)
			break;
		buf = nb;
		len += fread(buf + len, 1, cap - len, f);
	}
	if (f)
		fclose(f);
	ra = kp_module_open_buffer(path, buf ? buf : (unsigned char *)"", len, NULL, &a, &ea);
	rb = kp_module_open_with(path, NULL, dec, &b, &eb);
	tap_ok(t, buf && dec && ra == rb && (ra < 0 || kp_same_module(a, b)),
	       "%s: buffer and sparse readings agree (%s)", label, ra < 0 ? ea.msg : "read");
	kp_module_free(a);
	kp_module_free(b);
	kp_decoders_free(dec);
	free(buf);
}

/*
 * A whole mapped image (kp_module_open) and a reading thread's sparse pread() image
 * (kp_module_open_with) give the same facts or the same error.
 */
static void test_paths_agree(struct tap *t, const char *path, const char *label)
{
	struct kp_module *a = NULL, *b = NULL;
	struct kp_decoders *dec = kp_decoders_new();
	struct kp_err ea = { 0 }, eb = { 0 };
	int ra = kp_module_open(path, NULL, &a, &ea);
	int rb = kp_module_open_with(path, NULL, dec, &b, &eb);

	tap_ok(t, dec && ra == rb && (ra < 0 ? !strcmp(ea.msg, eb.msg) : kp_same_module(a, b)),
	       "%s: mapped and sparse readings agree (%s)", label, ra < 0 ? ea.msg : "read");
	if (ra != rb || (ra < 0 && strcmp(ea.msg, eb.msg)))
		printf("#   mapped: %s, sparse: %s\n", ra < 0 ? ea.msg : "ok",
		       rb < 0 ? eb.msg : "ok");
	kp_module_free(a);
	kp_module_free(b);
	kp_decoders_free(dec);
	test_buffer_agrees(t, path, label);
}

static void test_all_paths_agree(struct tap *t)
{
	static const char *const dirs[] = { "fixtures/ko/6.12",	      "fixtures/ko/6.1",
					    "fixtures/ko/6.1-i386",   "fixtures/ko/6.1-s390x",
					    "fixtures/ko/6.12-arm64", "fixtures/bad",
					    "fixtures/ko/6.1/strtab" };

	for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
		char dir[4096];
		struct dirent **names;
		int n;

		snprintf(dir, sizeof(dir), "%s", tap_srcpath(dirs[d]));
		n = scandir(dir, &names, NULL, alphasort);
		tap_ok(t, n > 2, "%s lists", dirs[d]);
		for (int i = 0; i < n; i++) {
			char path[8192], label[512];

			if (strstr(names[i]->d_name, ".ko") && !strstr(names[i]->d_name, ".sh")) {
				snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
				snprintf(label, sizeof(label), "%s/%s", dirs[d], names[i]->d_name);
				test_paths_agree(t, path, label);
			}
			free(names[i]);
		}
		if (n > 0)
			free(names);
	}
}

/*
 * Found by fuzzing: a section is read by its name whatever its type. A .modinfo typed
 * SHT_RELA must still be loaded by the sparse path (it was left out as a relocation
 * section applying to an unwanted one).
 */
static void test_typed_modinfo(struct tap *t)
{
	const char *src = tap_srcpath("fixtures/ko/6.12/kp_plain.ko");
	char tmpl[] = "/tmp/kp-test-reader-XXXXXX";
	unsigned char *d = NULL;
	size_t len = 0;
	bool done = false;
	FILE *f = fopen(src, "rb");
	int fd;

	if (f) {
		fseek(f, 0, SEEK_END);
		len = (size_t)ftell(f);
		rewind(f);
		d = malloc(len);
		if (d && fread(d, 1, len, f) != len)
			len = 0;
		fclose(f);
	}
	if (d && len > sizeof(Elf64_Ehdr)) {
		Elf64_Ehdr eh;
		Elf64_Shdr str;

		memcpy(&eh, d, sizeof(eh));
		memcpy(&str, d + eh.e_shoff + (size_t)eh.e_shstrndx * sizeof(Elf64_Shdr),
		       sizeof(str));
		for (size_t i = 1; i < eh.e_shnum && !done; i++) {
			unsigned char *p = d + eh.e_shoff + i * sizeof(Elf64_Shdr);
			Elf64_Shdr sh;

			memcpy(&sh, p, sizeof(sh));
			if (strcmp((const char *)d + str.sh_offset + sh.sh_name, ".modinfo"))
				continue;
			sh.sh_type = SHT_RELA;
			sh.sh_info = 1; /* "applies to" the first section */
			memcpy(p, &sh, sizeof(sh));
			done = true;
		}
	}
	fd = done ? mkstemp(tmpl) : -1;
	tap_ok(t, fd >= 0 && write(fd, d, len) == (ssize_t)len, "wrote a .modinfo typed SHT_RELA");
	if (fd >= 0) {
		struct kp_module *m = NULL;
		struct kp_decoders *dec = kp_decoders_new();
		struct kp_err err = { 0 };

		int r;

		close(fd);
		test_paths_agree(t, tmpl, "typed .modinfo");
		r = kp_module_open_with(tmpl, NULL, dec, &m, &err);
		tap_ok(t, r == 0 && m->license && !strcmp(m->license, "GPL"),
		       "sparse path reads its license: %s", r == 0 ? m->license : err.msg);
		kp_module_free(m);
		kp_decoders_free(dec);
		unlink(tmpl);
	}
	free(d);
}

/* relocs.c: the relocation types apply_relocations() hands to the architecture. */
static void test_relocs(struct tap *t)
{
	struct kp_module *m = open_fixture(t, "fixtures/ko/6.1/kp_bad_reloc.ko");
	const struct kp_reloc_use *got = NULL;
	bool debug_seen = false;

	if (!m)
		return;
	for (size_t i = 0; i < m->nrelocs; i++) {
		if (m->relocs[i].type == 9)
			got = &m->relocs[i];
		debug_seen |= !strncmp(m->relocs[i].section, ".rela.debug", 11);
	}
	tap_ok(t,
	       got && got->rela && !got->percpu && got->count == 1 &&
		       !strcmp(got->section, ".rela.init.text") && got->index == 1,
	       "kp_bad_reloc: R_X86_64_GOTPCREL once, entry 1 of .rela.init.text");
	tap_ok(t, !debug_seen && !m->relocs_problem,
	       "kp_bad_reloc: no relocation of a non-SHF_ALLOC section listed");
	tap_ok(t, m->shoff > 0 && m->shoff < m->file_size, "e_shoff read: %llu",
	       (unsigned long long)m->shoff);
	kp_module_free(m);
}

/*
 * Symbol names as the loader before v6.13 reads them: setup_load_info() sets info->strtab to
 * the file copy at .strtab's sh_offset, simplify_symbols() reads info->strtab + st_name up to
 * a NUL, never bounded by sh_size (kernel/module/main.c, 5.10 ... 6.12).
 */
static void test_strtab_names(struct tap *t, const char *rel, enum kp_symstr_state st,
			      const char *third, uint32_t past_end)
{
	struct kp_module *m = open_fixture(t, rel);

	tap_ok(t,
	       m && m->symstr_state == st && m->symname_past_end == past_end && m->nimports == 3 &&
		       !strcmp(m->imports[0].name, "__fentry__") &&
		       !strcmp(m->imports[1].name, "__x86_return_thunk") &&
		       !strcmp(m->imports[2].name, third),
	       "%s: string table state %d, imports __fentry__, __x86_return_thunk, \"%s\", "
	       "%u name(s) past the end of the file",
	       rel, (int)st, third, past_end);
	kp_module_free(m);
}

/* import_name_past_end: msleep's .symtab index when its name runs to the end of the file */
static void test_name_past_end(struct tap *t, const char *rel, bool past)
{
	struct kp_module *m = open_fixture(t, rel);

	tap_ok(t,
	       m && m->nimports == 3 && m->image_size == m->file_size &&
		       m->import_name_past_end == (past ? m->imports[2].symidx : 0),
	       "%s: import_name_past_end %s", rel, past ? "is the third import" : "0");
	kp_module_free(m);
}

/*
 * import_name_outside: msleep's .symtab index and the file offset its name starts at, when
 * that is past the end of the file (@off; 0: the name starts inside it)
 */
static void test_name_outside(struct tap *t, const char *rel, uint64_t off)
{
	struct kp_module *m = open_fixture(t, rel);

	tap_ok(t,
	       m && m->nimports == 3 &&
		       m->import_name_outside == (off ? m->imports[2].symidx : 0) &&
		       m->import_name_outside_off == off,
	       "%s: import_name_outside %s, at %llu", rel, off ? "is the third import" : "0",
	       (unsigned long long)off);
	kp_module_free(m);
}

int main(void)
{
	struct tap t = { 0 };

	test_relocs(&t);

	test_gpl_provider(&t, "fixtures/ko/6.12/kp_gpl_prov.ko", KP_COMP_NONE);
	test_gpl_provider(&t, "fixtures/ko/6.12/kp_gpl_prov.ko.xz", KP_COMP_XZ);
	test_gpl_provider(&t, "fixtures/ko/6.12/kp_gpl_prov.ko.zst", KP_COMP_ZSTD);
	test_gpl_provider(&t, "fixtures/ko/6.12/kp_gpl_prov.ko.gz", KP_COMP_GZIP);
	test_symtab_order(&t);
	test_licenses(&t);
	test_raw_section_header(&t);
	test_bad(&t);
	test_all_paths_agree(&t);
	test_typed_modinfo(&t);
	/* sh_size 0: every name is read from the bytes at the table's offset */
	test_strtab_names(&t, "fixtures/ko/6.12/kp_strtab_empty.ko", KP_SYMSTR_EMPTY, "msleep", 0);
	test_strtab_names(&t, "fixtures/ko/6.1/kp_strtab_empty.ko", KP_SYMSTR_EMPTY, "msleep", 0);
	/* sh_size one short: the last name, msleep, ends with the NUL just past the table */
	test_strtab_names(&t, "fixtures/ko/6.12/kp_strtab_nonterm.ko", KP_SYMSTR_UNTERMINATED,
			  "msleep", 0);
	/* st_name = size + 0x100: a NUL there, the empty name */
	test_strtab_names(&t, "fixtures/bad/sym-name-oob.ko", KP_SYMSTR_NAME_OOB, "", 0);
	/* st_name at bytes appended to the file, no NUL before its end */
	test_strtab_names(&t, "fixtures/bad/sym-name-tail.ko", KP_SYMSTR_NAME_OOB, "kp_name_tail",
			  1);
	/* the 6.1 oracle's strtab_page: the name is the file's last 12 bytes (8192 in all) */
	test_strtab_names(&t, "fixtures/ko/6.1/strtab/kp_strtab_page.ko", KP_SYMSTR_NAME_OOB,
			  "kp_name_page", 1);
	test_name_past_end(&t, "fixtures/ko/6.1/strtab/kp_strtab_page.ko", true);
	/*
	 * strtab_sig: "msl" ends the ELF image, the trailer after it begins "eep\0": the kernel
	 * reads the name on into it (module_sig_check() shortens info->len, not the buffer)
	 */
	test_strtab_names(&t, "fixtures/ko/6.1/strtab/kp_strtab_sig.ko", KP_SYMSTR_NAME_OOB,
			  "msleep", 0);
	test_name_past_end(&t, "fixtures/ko/6.1/strtab/kp_strtab_sig.ko", false);
	/*
	 * strtab_gap, strtab_guard: msleep's name starts 16 bytes past the 5128-byte file, or 16
	 * bytes into the page after its last page (the guard page after the loader's copy)
	 */
	test_strtab_names(&t, "fixtures/ko/6.1/strtab/kp_strtab_guard.ko", KP_SYMSTR_NAME_OOB, "",
			  1);
	test_name_outside(&t, "fixtures/ko/6.1/strtab/kp_strtab_guard.ko", 8192 + 16);
	test_name_outside(&t, "fixtures/ko/6.1/strtab/kp_strtab_gap.ko", 5128 + 16);
	test_name_outside(&t, "fixtures/ko/6.1/strtab/kp_strtab_page.ko", 0);
	test_name_past_end(&t, "fixtures/ko/6.1/strtab/kp_strtab_guard.ko", false);
	return tap_done(&t);
}
