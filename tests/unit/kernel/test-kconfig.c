// SPDX-License-Identifier: GPL-2.0-or-later
/* Kernel build configuration: values, "is not set", strings, header, errors, .gz. */
#include <stdio.h>
#include <string.h>

#include "kernel/kernel-config.h"
#include "../tap.h"

#define DATA "tests/unit/kernel/data/"

static void check_config(struct tap *t, const char *file)
{
	struct kp_kconfig c = { 0 };
	struct kp_err err = { 0 };
	char *path = strdup(tap_srcpath(file));
	int r = kp_kconfig_load(&c, path, &err);

	tap_ok(t, r == 0, "load %s%s%s", file, r ? ": " : "", r ? err.msg : "");
	tap_ok(t, c.known, "%s: known", file);
	tap_is_int(t, c.modules, 1, "MODULES");
	tap_is_int(t, c.modversions, 1, "MODVERSIONS");
	tap_is_int(t, c.module_sig, 1, "MODULE_SIG");
	tap_is_int(t, c.module_sig_force, 0, "MODULE_SIG_FORCE is not set");
	tap_is_int(t, c.module_force_load, 0, "MODULE_FORCE_LOAD is not set");
	tap_is_int(t, c.livepatch, 1, "LIVEPATCH");
	tap_is_int(t, c.strict_module_rwx, 1, "STRICT_MODULE_RWX");
	tap_is_int(t, c.prel32, 1, "HAVE_ARCH_PREL32_RELOCATIONS");
	tap_is_int(t, c.allow_missing_ns, 0, "set twice: the last line (not set) wins");
	tap_is_str(t, c.module_sig_hash, "sha256", "MODULE_SIG_HASH without quotes");
	tap_is_str(t, c.localversion, "", "LOCALVERSION empty string");
	tap_is_str(t, kp_kconfig_get(&c, "CONFIG_CC_VERSION_TEXT"),
		   "gcc (Debian 12.2.0-14) 12.2.0 \"quoted\"", "escaped quotes undone");
	tap_is_str(t, kp_kconfig_get(&c, "EXT4_FS"), "m", "lookup without CONFIG_ prefix");
	tap_is_str(t, kp_kconfig_get(&c, "NR_CPUS"), "8192", "number");
	tap_is_str(t, kp_kconfig_get(&c, "MODULE_SIG_FORCE"), "n", "not set reads as n");
	tap_ok(t, kp_kconfig_get(&c, "NOT_THERE") == NULL, "absent symbol: NULL");
	tap_ok(t, !kp_kconfig_is_y(&c, "EXT4_FS"), "=m is not y");
	tap_is_str(t, c.arch, "x86", "arch from the header");
	tap_is_str(t, c.version, "6.12.118", "version from the header");
	kp_kconfig_release(&c);
	free(path);
}

/* kp_kconfig_page_shift() of a configuration made of @text, "# Linux/..." header first */
static unsigned page_shift(const char *text)
{
	struct kp_kconfig c = { 0 };
	struct kp_err err = { 0 };
	unsigned shift = 99;

	if (kp_kconfig_load_buffer(&c, "page", (const unsigned char *)text, strlen(text), &err) ==
	    0)
		shift = kp_kconfig_page_shift(&c);
	kp_kconfig_release(&c);
	return shift;
}

/* The page-size lines of Debian's configs (~/.cache/kopolicy/trees/<tree>, fetch-trees.sh). */
static void page_shifts(struct tap *t)
{
	/* amd64-6.1 (6.1.0-57-amd64): no page-size choice on x86 before v6.9: not said */
	tap_is_int(t,
		   page_shift("# Linux/x86 6.1.192 Kernel Configuration\n"
			      "CONFIG_PAGE_SIZE_LESS_THAN_64KB=y\n"
			      "CONFIG_PAGE_SIZE_LESS_THAN_256KB=y\n"),
		   0, "amd64-6.1: no page-size option: 0 (x86's fixed 4 KiB is the rules')");
	/* amd64-6.12, armhf-6.12t, riscv64-7.2, s390x-7.2: v6.9+'s PAGE_SHIFT */
	tap_is_int(t,
		   page_shift("# Linux/arm 6.12.117 Kernel Configuration\n"
			      "CONFIG_HAVE_PAGE_SIZE_4KB=y\nCONFIG_PAGE_SIZE_4KB=y\n"
			      "CONFIG_PAGE_SIZE_LESS_THAN_64KB=y\n"
			      "CONFIG_PAGE_SIZE_LESS_THAN_256KB=y\nCONFIG_PAGE_SHIFT=12\n"),
		   12, "armhf-6.12t: PAGE_SHIFT=12");
	/* arm64-16k-7.2 (7.2.13+deb14-arm64-16k) */
	tap_is_int(t,
		   page_shift("# Linux/arm64 7.2.13 Kernel Configuration\n"
			      "# CONFIG_ARM64_4K_PAGES is not set\nCONFIG_ARM64_16K_PAGES=y\n"
			      "# CONFIG_ARM64_64K_PAGES is not set\n"
			      "CONFIG_HAVE_PAGE_SIZE_16KB=y\nCONFIG_PAGE_SIZE_16KB=y\n"
			      "CONFIG_PAGE_SIZE_LESS_THAN_64KB=y\n"
			      "CONFIG_PAGE_SIZE_LESS_THAN_256KB=y\nCONFIG_PAGE_SHIFT=14\n"),
		   14, "arm64-16k-7.2: PAGE_SHIFT=14");
	/* arm64-5.10 (5.10.0-32-arm64): before PAGE_SHIFT, ARM64_4K_PAGES */
	tap_is_int(t,
		   page_shift("# Linux/arm64 5.10.223 Kernel Configuration\n"
			      "CONFIG_ARM64_PAGE_SHIFT=12\nCONFIG_ARM64_4K_PAGES=y\n"
			      "# CONFIG_ARM64_16K_PAGES is not set\n"
			      "# CONFIG_ARM64_64K_PAGES is not set\n"),
		   12, "arm64-5.10: ARM64_4K_PAGES");
	/* ppc64el-64k-7.2 (7.2.13+deb14-powerpc64le-64k) and ppc64el-7.2 (-powerpc64le) */
	tap_is_int(t,
		   page_shift("# Linux/powerpc 7.2.13 Kernel Configuration\n"
			      "# CONFIG_PPC_4K_PAGES is not set\nCONFIG_PPC_64K_PAGES=y\n"
			      "CONFIG_HAVE_PAGE_SIZE_64KB=y\nCONFIG_PAGE_SIZE_64KB=y\n"
			      "CONFIG_PAGE_SIZE_LESS_THAN_256KB=y\nCONFIG_PAGE_SHIFT=16\n"),
		   16, "ppc64el-64k-7.2: PAGE_SHIFT=16");
	tap_is_int(t,
		   page_shift("# Linux/powerpc 7.2.13 Kernel Configuration\n"
			      "CONFIG_PPC_4K_PAGES=y\n# CONFIG_PPC_64K_PAGES is not set\n"
			      "CONFIG_HAVE_PAGE_SIZE_4KB=y\nCONFIG_PAGE_SIZE_4KB=y\n"
			      "CONFIG_PAGE_SIZE_LESS_THAN_64KB=y\n"
			      "CONFIG_PAGE_SIZE_LESS_THAN_256KB=y\nCONFIG_PAGE_SHIFT=12\n"),
		   12, "ppc64el-7.2: PAGE_SHIFT=12 (4 KiB)");
	/* the pre-v6.9 shapes: arch/powerpc/Kconfig's choice alone, arch/mips/Kconfig's */
	tap_is_int(t,
		   page_shift("# Linux/powerpc 6.1.0 Kernel Configuration\n"
			      "# CONFIG_PPC_4K_PAGES is not set\nCONFIG_PPC_64K_PAGES=y\n"),
		   16, "PPC_64K_PAGES without PAGE_SHIFT: 16");
	tap_is_int(t,
		   page_shift("# Linux/mips 6.1.0 Kernel Configuration\n"
			      "# CONFIG_PAGE_SIZE_4KB is not set\nCONFIG_PAGE_SIZE_16KB=y\n"),
		   14, "mips PAGE_SIZE_16KB without PAGE_SHIFT: 14");
	/* Debian's mips64el flavours (bookworm 6.1.176-1, linux-headers-6.1.0-50-<flavour>'s
	 * .config): loongson-3 has 16 KiB pages, octeon, mips64r2el and 5kc-malta 4 KiB */
	tap_is_int(t,
		   page_shift("# Linux/mips 6.1.176 Kernel Configuration\n"
			      "CONFIG_PAGE_SIZE_16KB=y\n# CONFIG_PAGE_SIZE_64KB is not set\n"
			      "CONFIG_PAGE_SIZE_LESS_THAN_64KB=y\n"
			      "CONFIG_PAGE_SIZE_LESS_THAN_256KB=y\n"),
		   14, "mips64el-ls3-6.1 (6.1.0-50-loongson-3): PAGE_SIZE_16KB");
	tap_is_int(t,
		   page_shift("# Linux/mips 6.1.176 Kernel Configuration\n"
			      "CONFIG_PAGE_SIZE_4KB=y\n# CONFIG_PAGE_SIZE_8KB is not set\n"
			      "# CONFIG_PAGE_SIZE_16KB is not set\n"
			      "# CONFIG_PAGE_SIZE_32KB is not set\n"
			      "# CONFIG_PAGE_SIZE_64KB is not set\n"
			      "CONFIG_PAGE_SIZE_LESS_THAN_64KB=y\n"
			      "CONFIG_PAGE_SIZE_LESS_THAN_256KB=y\n"),
		   12, "6.1.0-50-octeon: PAGE_SIZE_4KB");
	/* loong64-7.2 (linux-headers-7.2.13+deb14-loong64's .config): 16 KiB */
	tap_is_int(t,
		   page_shift("# Linux/loongarch 7.2.13 Kernel Configuration\n"
			      "CONFIG_HAVE_PAGE_SIZE_16KB=y\nCONFIG_PAGE_SIZE_16KB=y\n"
			      "CONFIG_PAGE_SIZE_LESS_THAN_64KB=y\n"
			      "CONFIG_PAGE_SIZE_LESS_THAN_256KB=y\nCONFIG_PAGE_SHIFT=14\n"),
		   14, "loong64-7.2: PAGE_SHIFT=14");
	/* the other choices, as the kernel's page.h / arch/Kconfig PAGE_SHIFT map them
	 * (5.10.223, 6.1.192, 6.12.117, 7.2.13 sources) */
	static const struct {
		const char *line;
		unsigned shift;
	} choices[] = {
		{ "CONFIG_PAGE_SIZE_8KB=y\n", 13 },	    /* arch/Kconfig: sh, cnMIPS */
		{ "CONFIG_PAGE_SIZE_32KB=y\n", 15 },	    /* arch/Kconfig: cnMIPS only */
		{ "CONFIG_PAGE_SIZE_256KB=y\n", 18 },	    /* hexagon, powerpc 44x */
		{ "CONFIG_PPC_16K_PAGES=y\n", 14 },	    /* 6.1 PPC_PAGE_SHIFT */
		{ "CONFIG_PPC_256K_PAGES=y\n", 18 },	    /* 6.1 PPC_PAGE_SHIFT */
		{ "CONFIG_PARISC_PAGE_SIZE_16KB=y\n", 14 }, /* parisc page.h */
		{ "CONFIG_PARISC_PAGE_SIZE_64KB=y\n", 16 },
		{ "CONFIG_IA64_PAGE_SIZE_8KB=y\n", 13 }, /* ia64 page.h (5.10, 6.1) */
		{ "CONFIG_IA64_PAGE_SIZE_64KB=y\n", 16 },
		{ "CONFIG_ARC_PAGE_SIZE_8K=y\n", 13 }, /* arc uapi/asm/page.h */
		{ "CONFIG_ARC_PAGE_SIZE_16K=y\n", 14 },
		{ "CONFIG_MICROBLAZE_64K_PAGES=y\n", 16 }, /* 5.10 microblaze page.h */
		{ "CONFIG_ANDES_PAGE_SIZE_8KB=y\n", 13 },  /* 5.10 nds32 page.h */
		{ "CONFIG_ALPHA=y\n", 13 },		   /* fixed 8 KiB before v6.9 */
		{ "CONFIG_SPARC64=y\n", 13 },
		{ "CONFIG_OPENRISC=y\n", 13 },
		{ "CONFIG_SUN3=y\n", 13 },
		{ "CONFIG_COLDFIRE=y\n", 13 },
	};
	for (size_t i = 0; i < sizeof(choices) / sizeof(choices[0]); i++) {
		char text[160], what[64];

		snprintf(text, sizeof(text), "# Linux/x 6.1.0 Kernel Configuration\n%s",
			 choices[i].line);
		snprintf(what, sizeof(what), "%.*s alone", (int)strlen(choices[i].line) - 1,
			 choices[i].line);
		tap_is_int(t, page_shift(text), choices[i].shift, what);
	}
	tap_is_int(t,
		   page_shift("# Linux/sparc64 6.12.0 Kernel Configuration\n"
			      "CONFIG_SPARC64=y\nCONFIG_PAGE_SIZE_8KB=y\nCONFIG_PAGE_SHIFT=13\n"),
		   13, "sparc64 v6.9+: PAGE_SHIFT=13");
	tap_is_int(t, page_shift("# Linux/x86 5.10.0 Kernel Configuration\nCONFIG_X86_64=y\n"), 0,
		   "x86 5.10: no page-size option: 0");
	tap_is_int(t, page_shift("CONFIG_PAGE_SHIFT=4k\nCONFIG_PAGE_SIZE_4KB=y\n"), 0,
		   "a PAGE_SHIFT that is not a number: 0 (not known), the choice not trusted");
	tap_is_int(t, page_shift("CONFIG_PAGE_SHIFT=40\n"), 0, "PAGE_SHIFT out of 12..18: 0");
}

int main(void)
{
	struct tap t = { 0 };
	struct kp_kconfig c = { 0 };
	struct kp_err err = { 0 };
	static const char bad_string[] = "CONFIG_A=\"unterminated\n";
	char *path;

	check_config(&t, DATA "config");
	check_config(&t, DATA "config.gz");

	path = strdup(tap_srcpath(DATA "config-bad"));
	tap_ok(&t, kp_kconfig_load(&c, path, &err) < 0, "malformed config refused");
	tap_ok(&t, strstr(err.msg, path) && strstr(err.msg, ":2: expected CONFIG_NAME=value"),
	       "error names file and line: %s", err.msg);
	kp_kconfig_release(&c);
	free(path);

	tap_ok(&t,
	       kp_kconfig_load_buffer(&c, "buf", (const unsigned char *)bad_string,
				      sizeof(bad_string) - 1, &err) < 0 &&
		       strstr(err.msg, "buf:1: unterminated string value of CONFIG_A"),
	       "unterminated string: %s", err.msg);
	kp_kconfig_release(&c);
	tap_ok(&t,
	       kp_kconfig_load_buffer(&c, "empty", (const unsigned char *)"# x\n", 4, &err) < 0 &&
		       strstr(err.msg, "not a kernel configuration"),
	       "no CONFIG_ lines: %s", err.msg);
	kp_kconfig_release(&c);
	page_shifts(&t);
	return tap_done(&t);
}
