// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * relocations.c: apply_relocations() with each architecture's apply_relocate() /
 * apply_relocate_add() (the tables of lib/sim/arch-relocs.c): the first relocation type the
 * architecture does not apply fails the load with its line and errno, after the symbols
 * resolved and the taints were set; version ranges, the generic no-REL/no-RELA stubs, the
 * s390 silent refusals, the arm config-dependent types, .data..percpu.
 */
#include <elf.h>
#include <errno.h>

#include "builder.h"

#ifndef EM_LOONGARCH
#define EM_LOONGARCH 258
#endif

static struct kp_module *one(struct tb_world *w, const char *release, uint16_t machine, bool is64)
{
	struct kp_module *m;

	tb_init(w, release);
	m = tb_module(w, "m");
	m->machine = machine;
	m->is64 = is64;
	return m;
}

static void x86_64(struct tap *t)
{
	struct tb_world w;
	struct kp_module *m;
	const struct kp_finding *f;

	m = one(&w, "6.12.37", EM_X86_64, true);
	tb_reloc(m, 4, true, ".rela.text", false);  /* R_X86_64_PLT32 */
	tb_reloc(m, 24, true, ".rela.text", false); /* R_X86_64_PC64 */
	tb_expect(t, &w, 0, "", "", "x86_64: PLT32 and PC64 applied");

	m = one(&w, "6.12.37", EM_X86_64, true);
	m->intree = false;
	tb_reloc(m, 2, true, ".rela.text", false);	/* R_X86_64_PC32 */
	tb_reloc(m, 9, true, ".rela.init.text", false); /* R_X86_64_GOTPCREL */
	tb_reloc(m, 42, true, ".rela.text", false);	/* R_X86_64_REX_GOTPCRELX */
	tb_run(&w);
	tap_is_int(t, tb_v(&w, "m")->err, -ENOEXEC, "x86_64 GOTPCREL: ENOEXEC");
	tb_is_text(t, tb_dmesg(&w, "m"),
		   "m: loading out-of-tree module taints kernel.\n"
		   "module: m: Unknown rela relocation: 9",
		   "x86_64 GOTPCREL: taints first, then the first unknown type's line");
	tap_is_str(t, tb_taints(&w, "m"), "O", "x86_64 GOTPCREL: the O taint stays");
	f = tb_finding(&w, "m", "unsupported-relocation");
	tap_ok(t,
	       f && f->severity == KP_SEV_ERROR && f->consequence == KP_CONS_LOAD_FAIL &&
		       strstr(f->message, "R_X86_64_GOTPCREL (9)") &&
		       strstr(f->message, ".rela.init.text") &&
		       strstr(f->message, "x86_64's apply_relocate_add()"),
	       "x86_64 GOTPCREL: the finding names the type, section and function");
	tb_free(&w);

	/* simplify_symbols() comes first: its error wins */
	m = one(&w, "6.12.37", EM_X86_64, true);
	tb_import(m, "no_such_symbol");
	tb_reloc(m, 9, true, ".rela.text", false);
	tb_expect(t, &w, -ENOENT, "m: Unknown symbol no_such_symbol (err -2)", "unknown-symbol",
		  "x86_64: an unknown symbol is reported before the relocations");

	/* .data..percpu: relocated by the 7.2 loader only */
	m = one(&w, "6.12.37", EM_X86_64, true);
	tb_reloc(m, 9, true, ".rela.data..percpu", true);
	tb_expect(t, &w, 0, "", "", "6.12: .data..percpu relocations are skipped");
	m = one(&w, "7.2.13+deb14-amd64", EM_X86_64, true);
	tb_reloc(m, 9, true, ".rela.data..percpu", true);
	tb_expect(t, &w, -ENOEXEC, "module: m: Unknown rela relocation: 9",
		  "unsupported-relocation", "7.2: .data..percpu relocations are applied");
	m = one(&w, "5.10.223", EM_X86_64, true);
	tb_reloc(m, 9, true, ".rela.text", false);
	tb_expect(t, &w, -ENOEXEC, "module: m: Unknown rela relocation: 9",
		  "unsupported-relocation", "5.10: GOTPCREL refused");
	/* an SHT_REL section on x86_64: the generic stub (its text says REL for both) */
	m = one(&w, "6.1.129", EM_X86_64, true);
	tb_reloc(m, 2, false, ".rel.text", false);
	tb_expect(t, &w, -ENOEXEC, "module m: REL relocation unsupported", "unsupported-relocation",
		  "x86_64: no apply_relocate()");
}

static void i386_arm(struct tap *t)
{
	struct tb_world w;
	struct kp_module *m;

	m = one(&w, "6.1.129", EM_386, false);
	tb_reloc(m, 2, false, ".rel.text", false); /* R_386_PC32 */
	tb_reloc(m, 4, false, ".rel.text", false); /* R_386_PLT32 */
	tb_expect(t, &w, 0, "", "", "i386: PC32, PLT32 applied");
	m = one(&w, "6.1.129", EM_386, false);
	tb_reloc(m, 3, false, ".rel.text", false); /* R_386_GOT32 */
	tb_expect(t, &w, -ENOEXEC, "module: m: Unknown relocation: 3", "unsupported-relocation",
		  "i386: GOT32 refused");
	m = one(&w, "6.1.129", EM_386, false);
	tb_reloc(m, 2, true, ".rela.text", false);
	tb_expect(t, &w, -ENOEXEC, "module m: REL relocation unsupported", "unsupported-relocation",
		  "i386: no apply_relocate_add()");

	/* arm: place-relative types from the 6.1 tree on, Thumb-2 ones need the config */
	m = one(&w, "5.10.223", EM_ARM, false);
	tb_reloc(m, 3, false, ".rel.text", false); /* R_ARM_REL32 */
	tb_expect(t, &w, -ENOEXEC, "m: unknown relocation: 3", "unsupported-relocation",
		  "arm 5.10: REL32 refused");
	m = one(&w, "6.1.129", EM_ARM, false);
	tb_reloc(m, 3, false, ".rel.text", false);
	tb_expect(t, &w, 0, "", "", "arm 6.1: REL32 applied");
	m = one(&w, "6.1.129", EM_ARM, false);
	tb_reloc(m, 10, false, ".rel.text", false); /* R_ARM_THM_CALL */
	tb_expect(t, &w, 0, "", "relocation-needs-config",
		  "arm: THM_CALL needs CONFIG_THUMB2_KERNEL (a warning)");
}

static void arm64_riscv_ppc(struct tap *t)
{
	struct tb_world w;
	struct kp_module *m;
	const struct kp_finding *f;

	/* the OpenAFS libafs case (nixpkgs issue 284501) */
	m = one(&w, "6.12.37", EM_AARCH64, true);
	tb_reloc(m, 283, true, ".rela.text", false); /* R_AARCH64_CALL26 */
	tb_reloc(m, 311, true, ".rela.text", false); /* R_AARCH64_ADR_GOT_PAGE */
	tb_run(&w);
	tap_is_int(t, tb_v(&w, "m")->err, -ENOEXEC, "arm64 ADR_GOT_PAGE: ENOEXEC");
	tb_is_text(t, tb_dmesg(&w, "m"), "Modules: module m: unsupported RELA relocation: 311",
		   "arm64 ADR_GOT_PAGE: the kernel's line (pr_fmt \"Modules: \")");
	f = tb_finding(&w, "m", "unsupported-relocation");
	tap_ok(t, f && strstr(f->message, "R_AARCH64_ADR_GOT_PAGE (311)"), "arm64: the type named");
	tb_free(&w);
	m = one(&w, "6.1.129", EM_AARCH64, true);
	tb_reloc(m, 311, true, ".rela.text", false);
	tb_expect(t, &w, -ENOEXEC, "module m: unsupported RELA relocation: 311",
		  "unsupported-relocation", "arm64 6.1: no pr_fmt prefix yet");

	m = one(&w, "6.1.129", EM_RISCV, true);
	tb_reloc(m, 34, true, ".rela.text", false); /* R_RISCV_ADD16 */
	tb_expect(t, &w, -EINVAL, "m: Unknown relocation type 34", "unsupported-relocation",
		  "riscv 6.1: ADD16 refused with EINVAL");
	m = one(&w, "6.12.37", EM_RISCV, true);
	tb_reloc(m, 34, true, ".rela.text", false);
	tb_expect(t, &w, 0, "", "", "riscv 6.12: ADD16 applied (6.7+)");
	m = one(&w, "7.2.13+deb14-riscv64", EM_RISCV, true);
	tb_reloc(m, 29, true, ".rela.text", false); /* R_RISCV_TPREL_HI20 */
	tb_expect(t, &w, -EINVAL,
		  "m: Thread local storage not supported in kernel modules PC = (address)",
		  "unsupported-relocation", "riscv 7.2: TLS types get their own line");
	m = one(&w, "6.1.129", EM_RISCV, true);
	tb_reloc(m, 29, true, ".rela.text", false);
	tb_expect(t, &w, -EINVAL, "m: Unknown relocation type 29", "unsupported-relocation",
		  "riscv 6.1: TLS type unknown");

	m = one(&w, "6.1.129", EM_PPC64, true);
	tb_reloc(m, 132, true, ".rela.text", false); /* R_PPC64_PCREL34 */
	tb_expect(t, &w, -ENOEXEC, "module_64: m: Unknown ADD relocation: 132",
		  "unsupported-relocation", "ppc64 6.1: PCREL34 refused");
	m = one(&w, "6.12.37", EM_PPC64, true);
	tb_reloc(m, 132, true, ".rela.text", false);
	tb_reloc(m, 1, true, ".rela.data", false); /* R_PPC64_ADDR32 */
	tb_expect(t, &w, 0, "", "", "ppc64 6.12: PCREL34 and ADDR32 applied");
}

static void s390_mips_other(struct tap *t)
{
	struct tb_world w;
	struct kp_module *m;

	m = one(&w, "6.1.129", EM_S390, true);
	tb_reloc(m, 9, true, ".rela.text", false); /* R_390_COPY */
	tb_expect(t, &w, -ENOEXEC, "", "unsupported-relocation",
		  "s390x: COPY refused without a line");
	m = one(&w, "6.1.129", EM_S390, true);
	tb_reloc(m, 37, true, ".rela.text", false); /* R_390_TLS_LOAD */
	tb_expect(t, &w, -ENOEXEC, "module m: unknown relocation: 37", "unsupported-relocation",
		  "s390x: TLS_LOAD unknown");
	m = one(&w, "6.1.129", EM_S390, true);
	tb_reloc(m, 26, true, ".rela.text", false); /* R_390_GOTENT */
	tb_expect(t, &w, 0, "", "", "s390x: GOTENT applied");

	m = one(&w, "6.1.129", EM_MIPS, false);
	tb_reloc(m, 2, true, ".rela.text", false);
	tb_expect(t, &w, -ENOEXEC, "module m: REL relocation unsupported", "unsupported-relocation",
		  "mips32: no apply_relocate_add()");
	m = one(&w, "6.1.129", EM_MIPS, true);
	tb_reloc(m, 4, true, ".rela.text", false); /* R_MIPS_26 */
	tb_reloc(m, 9, true, ".rela.text", false); /* R_MIPS_GOT16 */
	tb_expect(t, &w, -EINVAL, "m: Unknown relocation type 9", "unsupported-relocation",
		  "mips64: GOT16 refused with EINVAL");

	m = one(&w, "6.12.37", EM_PPC, false);
	tb_reloc(m, 9999, true, ".rela.text", false);
	tb_expect(t, &w, 0, "", "relocations-not-modelled", "ppc32: not modelled, loads (a note)");
	m = one(&w, "7.2.13+deb14-loong64", EM_LOONGARCH, false);
	tb_reloc(m, 9999, true, ".rela.text", false);
	tb_expect(t, &w, 0, "", "relocations-not-modelled",
		  "loongarch32: not modelled, loads (a note)");

	m = one(&w, "6.12.37", EM_X86_64, true);
	m->relocs_problem = ".rela.text: relocation 3 names symbol 900 of 40";
	tb_expect(t, &w, 0, "", "relocations-unchecked",
		  "an unreadable relocation section: warning");
}

/* arch/loongarch/kernel/module.c apply_relocate_add(): reloc_rela_handlers[] of 6.1/6.12/7.2 */
static void loongarch(struct tap *t)
{
	static const char rel72[] = "7.2.13+deb14-loong64";
	struct tb_world w;
	struct kp_module *m;
	const struct kp_finding *f;

	/* the types Debian's 7.2 loong64 modules use (readelf -r over the whole tree) */
	m = one(&w, rel72, EM_LOONGARCH, true);
	tb_reloc(m, 2, true, ".rela.data", false);	   /* R_LARCH_64 */
	tb_reloc(m, 66, true, ".rela.text", false);	   /* R_LARCH_B26 */
	tb_reloc(m, 71, true, ".rela.text", false);	   /* R_LARCH_PCALA_HI20 */
	tb_reloc(m, 72, true, ".rela.text", false);	   /* R_LARCH_PCALA_LO12 */
	tb_reloc(m, 73, true, ".rela.text", false);	   /* R_LARCH_PCALA64_LO20 */
	tb_reloc(m, 74, true, ".rela.text", false);	   /* R_LARCH_PCALA64_HI12 */
	tb_reloc(m, 75, true, ".rela.text", false);	   /* R_LARCH_GOT_PC_HI20 */
	tb_reloc(m, 76, true, ".rela.text", false);	   /* R_LARCH_GOT_PC_LO12 */
	tb_reloc(m, 99, true, ".rela__jump_table", false); /* R_LARCH_32_PCREL */
	tb_reloc(m, 109, true, ".rela.eh_frame", false);   /* R_LARCH_64_PCREL */
	tb_expect(t, &w, 0, "", "", "loongarch 7.2: Debian's types applied");
	/* the old stack-based types and PLT_PCREL (a switch case in 6.12+) */
	m = one(&w, rel72, EM_LOONGARCH, true);
	tb_reloc(m, 29, true, ".rela.text", false); /* R_LARCH_SOP_PUSH_PLT_PCREL */
	tb_reloc(m, 37, true, ".rela.text", false); /* R_LARCH_SOP_IF_ELSE */
	tb_reloc(m, 46, true, ".rela.text", false); /* R_LARCH_SOP_POP_32_U */
	tb_reloc(m, 56, true, ".rela.text", false); /* R_LARCH_SUB64 */
	tb_expect(t, &w, 0, "", "", "loongarch 7.2: SOP types, SUB64 applied");

	/* apply_r_larch_error(): no handler named for the type */
	m = one(&w, rel72, EM_LOONGARCH, true);
	tb_reloc(m, 66, true, ".rela.text", false);
	tb_reloc(m, 83, true, ".rela.text", false); /* R_LARCH_TLS_LE_HI20 */
	tb_run(&w);
	tap_is_int(t, tb_v(&w, "m")->err, -EINVAL, "loongarch TLS_LE_HI20: EINVAL");
	tb_is_text(t, tb_dmesg(&w, "m"),
		   "kmod: m: Unsupport relocation type 83, please add its support.",
		   "loongarch TLS_LE_HI20: apply_r_larch_error()'s line, pr_fmt \"kmod: \"");
	f = tb_finding(&w, "m", "unsupported-relocation");
	tap_ok(t,
	       f && f->consequence == KP_CONS_LOAD_FAIL &&
		       strstr(f->message, "R_LARCH_TLS_LE_HI20 (83)") &&
		       strstr(f->message, "loongarch64's apply_relocate_add()"),
	       "loongarch TLS_LE_HI20: the finding names the type and function");
	tb_free(&w);
	m = one(&w, rel72, EM_LOONGARCH, true);
	tb_reloc(m, 15, true, ".rela.text", false); /* no name: a gap in the table */
	tb_expect(t, &w, -EINVAL, "kmod: m: Unsupport relocation type 15, please add its support.",
		  "unsupported-relocation", "loongarch: an unnamed value inside the table");
	/* a named handler's default: branch */
	m = one(&w, rel72, EM_LOONGARCH, true);
	tb_reloc(m, 52, true, ".rela.text", false); /* R_LARCH_SUB8 (apply_r_larch_add_sub) */
	tb_expect(t, &w, -EINVAL, "kmod: m: Unsupport relocation type 52", "unsupported-relocation",
		  "loongarch SUB8: apply_r_larch_add_sub() refuses it");
	m = one(&w, "6.1.129", EM_LOONGARCH, true);
	tb_reloc(m, 38, true, ".rela.text", false); /* R_LARCH_SOP_POP_32_S_10_5 */
	tb_expect(t, &w, -EINVAL, "kmod: m: Unsupport relocation type 38", "unsupported-relocation",
		  "loongarch 6.1 SOP_POP_32_S_10_5: apply_r_larch_sop_imm_field() refuses it");

	/* past the table's end: 64_PCREL (109) until 6.12, TLS_DESC_PCADD_LO12 (139) in 7.2 */
	m = one(&w, rel72, EM_LOONGARCH, true);
	tb_reloc(m, 140, true, ".rela.text", false);
	tb_expect(t, &w, -EINVAL, "kmod: m: Unknown relocation type 140", "unsupported-relocation",
		  "loongarch 7.2: 140 past the table");
	m = one(&w, "6.12.37", EM_LOONGARCH, true);
	tb_reloc(m, 110, true, ".rela.text", false); /* R_LARCH_CALL36 */
	tb_expect(t, &w, -EINVAL, "kmod: m: Unknown relocation type 110", "unsupported-relocation",
		  "loongarch 6.12: CALL36 past the table");
	m = one(&w, rel72, EM_LOONGARCH, true);
	tb_reloc(m, 110, true, ".rela.text", false);
	tb_expect(t, &w, -EINVAL, "kmod: m: Unsupport relocation type 110, please add its support.",
		  "unsupported-relocation", "loongarch 7.2: CALL36 in the table, no handler");

	/* added later: 64_PCREL from 6.6 (b1dc55a3d6a8), PCADD_HI20 in the 7.2 tree */
	m = one(&w, "6.1.129", EM_LOONGARCH, true);
	tb_reloc(m, 109, true, ".rela.eh_frame", false);
	tb_expect(t, &w, -EINVAL, "kmod: m: Unsupport relocation type 109, please add its support.",
		  "unsupported-relocation", "loongarch 6.1: 64_PCREL refused");
	m = one(&w, "6.12.37", EM_LOONGARCH, true);
	tb_reloc(m, 109, true, ".rela.eh_frame", false);
	tb_expect(t, &w, 0, "", "", "loongarch 6.12: 64_PCREL applied");
	m = one(&w, "6.12.37", EM_LOONGARCH, true);
	tb_reloc(m, 128, true, ".rela.text", false); /* R_LARCH_PCADD_HI20 */
	tb_expect(t, &w, -EINVAL, "kmod: m: Unknown relocation type 128", "unsupported-relocation",
		  "loongarch 6.12: PCADD_HI20 unknown");
	m = one(&w, rel72, EM_LOONGARCH, true);
	tb_reloc(m, 128, true, ".rela.text", false);
	tb_reloc(m, 131, true, ".rela.text", false); /* R_LARCH_GOT_PCADD_LO12 */
	tb_expect(t, &w, 0, "", "", "loongarch 7.2: PCADD_HI20, GOT_PCADD_LO12 applied");

	/* RELA only: the generic apply_relocate() stub */
	m = one(&w, rel72, EM_LOONGARCH, true);
	tb_reloc(m, 2, false, ".rel.data", false);
	tb_expect(t, &w, -ENOEXEC, "module m: REL relocation unsupported", "unsupported-relocation",
		  "loongarch: an SHT_REL section");
}

int main(void)
{
	struct tap t = { 0 };

	x86_64(&t);
	i386_arm(&t);
	arm64_riscv_ppc(&t);
	s390_mips_other(&t);
	loongarch(&t);
	return tap_done(&t);
}
