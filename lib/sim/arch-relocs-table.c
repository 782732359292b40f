// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * arch-relocs-table.c: the table arch-relocs.c looks relocation types up in
 * (arch-relocs-internal.h). The relocation types each architecture's apply_relocate() /
 * apply_relocate_add() applies. Sources:
 * arch/{x86,arm64,arm,s390,powerpc,mips,riscv,loongarch}/kernel/module*.c of Debian's
 * linux-source 5.10.223, 6.1.192, 6.12.117 and 7.2.13 (the case labels of the relocation
 * switch, the handler tables of mips and riscv), the type values from the same trees'
 * asm/elf.h. A row holds from the release in @from (0: every modelled release, 5.10 on)
 * until the release in @until (0: still in 7.2). Types first seen in a later tree carry the
 * mainline release of their commit where known: riscv's "riscv: Add remaining module
 * relocations" and the ULEB128 pair (v6.7), powerpc's pcrel support for modules (v6.4);
 * arm's place-relative and group relocations are in the 6.1 tree and not in 5.10, their
 * release in between is not pinned (taken as 6.1).
 * loongarch (LoongArch has module support from 5.19, so from the 6.1 tree on): the
 * reloc_rela_handlers[] table and the switch of apply_relocate_add() in
 * arch/loongarch/kernel/module.c of 6.1.192, 6.12.118 and 7.2.13, types from asm/elf.h;
 * module-sections.c refuses no type while counting PLT/GOT entries. Every type up to the
 * table's last index has a handler, apply_r_larch_error() ("please add its support") where
 * none is named, so a type past the end is "Unknown"; a named handler refuses in its
 * default: branch the types of its range it does not handle (SOP_POP_32_S_10_5, SUB8/16/24).
 * 32_PCREL and 64_PCREL handlers: mainline c1c2ce2d3bf9 and b1dc55a3d6a8 (v6.6; also in
 * 6.5 stable, not in Debian's 6.1.192). The PCADD types and the table's end grown from 64_PCREL
 * to TLS_DESC_PCADD_LO12 are in the 7.2 tree, not in 6.12, their release in between is not
 * pinned (taken as 7.2). 64-bit only: CONFIG_32BIT turns the 64-bit handlers into
 * apply_r_larch_error() and is not modelled.
 * Not modelled: ppc32, loongarch32, and the overflow / range / pairing checks every
 * architecture makes on the values (they depend on where the module is placed: the
 * loongarch B26 and SOP_POP ranges, its GOT and PLT entries, a PCADD_LO12 without its HI20).
 */
#include <elf.h>
#include <errno.h>
#include <stddef.h>

#include "arch-relocs-internal.h"
#include "util/util.h"

/* clang-format off */
/* x86_64 */
static const struct reloc_row x86_64_rows[] = {
	{ 0, "R_X86_64_NONE", { 0 }, { 0 }, NULL },
	{ 1, "R_X86_64_64", { 0 }, { 0 }, NULL },
	{ 2, "R_X86_64_PC32", { 0 }, { 0 }, NULL },
	{ 4, "R_X86_64_PLT32", { 0 }, { 0 }, NULL },
	{ 10, "R_X86_64_32", { 0 }, { 0 }, NULL },
	{ 11, "R_X86_64_32S", { 0 }, { 0 }, NULL },
	{ 24, "R_X86_64_PC64", { 0 }, { 0 }, NULL },
};
/* i386 */
static const struct reloc_row i386_rows[] = {
	{ 1, "R_386_32", { 0 }, { 0 }, NULL },
	{ 2, "R_386_PC32", { 0 }, { 0 }, NULL },
	{ 4, "R_386_PLT32", { 0 }, { 0 }, NULL },
};
/* arm64 */
static const struct reloc_row arm64_rows[] = {
	{ 0, "R_ARM_NONE", { 0 }, { 0 }, NULL },
	{ 256, "R_AARCH64_NONE", { 0 }, { 0 }, NULL },
	{ 257, "R_AARCH64_ABS64", { 0 }, { 0 }, NULL },
	{ 258, "R_AARCH64_ABS32", { 0 }, { 0 }, NULL },
	{ 259, "R_AARCH64_ABS16", { 0 }, { 0 }, NULL },
	{ 260, "R_AARCH64_PREL64", { 0 }, { 0 }, NULL },
	{ 261, "R_AARCH64_PREL32", { 0 }, { 0 }, NULL },
	{ 262, "R_AARCH64_PREL16", { 0 }, { 0 }, NULL },
	{ 263, "R_AARCH64_MOVW_UABS_G0", { 0 }, { 0 }, NULL },
	{ 264, "R_AARCH64_MOVW_UABS_G0_NC", { 0 }, { 0 }, NULL },
	{ 265, "R_AARCH64_MOVW_UABS_G1", { 0 }, { 0 }, NULL },
	{ 266, "R_AARCH64_MOVW_UABS_G1_NC", { 0 }, { 0 }, NULL },
	{ 267, "R_AARCH64_MOVW_UABS_G2", { 0 }, { 0 }, NULL },
	{ 268, "R_AARCH64_MOVW_UABS_G2_NC", { 0 }, { 0 }, NULL },
	{ 269, "R_AARCH64_MOVW_UABS_G3", { 0 }, { 0 }, NULL },
	{ 270, "R_AARCH64_MOVW_SABS_G0", { 0 }, { 0 }, NULL },
	{ 271, "R_AARCH64_MOVW_SABS_G1", { 0 }, { 0 }, NULL },
	{ 272, "R_AARCH64_MOVW_SABS_G2", { 0 }, { 0 }, NULL },
	{ 273, "R_AARCH64_LD_PREL_LO19", { 0 }, { 0 }, NULL },
	{ 274, "R_AARCH64_ADR_PREL_LO21", { 0 }, { 0 }, NULL },
	{ 275, "R_AARCH64_ADR_PREL_PG_HI21", { 0 }, { 0 }, NULL },
	{ 276, "R_AARCH64_ADR_PREL_PG_HI21_NC", { 0 }, { 0 }, NULL },
	{ 277, "R_AARCH64_ADD_ABS_LO12_NC", { 0 }, { 0 }, NULL },
	{ 278, "R_AARCH64_LDST8_ABS_LO12_NC", { 0 }, { 0 }, NULL },
	{ 279, "R_AARCH64_TSTBR14", { 0 }, { 0 }, NULL },
	{ 280, "R_AARCH64_CONDBR19", { 0 }, { 0 }, NULL },
	{ 282, "R_AARCH64_JUMP26", { 0 }, { 0 }, NULL },
	{ 283, "R_AARCH64_CALL26", { 0 }, { 0 }, NULL },
	{ 284, "R_AARCH64_LDST16_ABS_LO12_NC", { 0 }, { 0 }, NULL },
	{ 285, "R_AARCH64_LDST32_ABS_LO12_NC", { 0 }, { 0 }, NULL },
	{ 286, "R_AARCH64_LDST64_ABS_LO12_NC", { 0 }, { 0 }, NULL },
	{ 287, "R_AARCH64_MOVW_PREL_G0", { 0 }, { 0 }, NULL },
	{ 288, "R_AARCH64_MOVW_PREL_G0_NC", { 0 }, { 0 }, NULL },
	{ 289, "R_AARCH64_MOVW_PREL_G1", { 0 }, { 0 }, NULL },
	{ 290, "R_AARCH64_MOVW_PREL_G1_NC", { 0 }, { 0 }, NULL },
	{ 291, "R_AARCH64_MOVW_PREL_G2", { 0 }, { 0 }, NULL },
	{ 292, "R_AARCH64_MOVW_PREL_G2_NC", { 0 }, { 0 }, NULL },
	{ 293, "R_AARCH64_MOVW_PREL_G3", { 0 }, { 0 }, NULL },
	{ 299, "R_AARCH64_LDST128_ABS_LO12_NC", { 0 }, { 0 }, NULL },
};
/* arm */
static const struct reloc_row arm_rows[] = {
	{ 0, "R_ARM_NONE", { 0 }, { 0 }, NULL },
	{ 1, "R_ARM_PC24", { 0 }, { 0 }, NULL },
	{ 2, "R_ARM_ABS32", { 0 }, { 0 }, NULL },
	{ 3, "R_ARM_REL32", { 6, 1, 0 }, { 0 }, NULL },
	{ 10, "R_ARM_THM_CALL", { 0 }, { 0 }, "THUMB2_KERNEL" },
	{ 28, "R_ARM_CALL", { 0 }, { 0 }, NULL },
	{ 29, "R_ARM_JUMP24", { 0 }, { 0 }, NULL },
	{ 30, "R_ARM_THM_JUMP24", { 0 }, { 0 }, "THUMB2_KERNEL" },
	{ 38, "R_ARM_TARGET1", { 0 }, { 0 }, NULL },
	{ 40, "R_ARM_V4BX", { 0 }, { 0 }, NULL },
	{ 42, "R_ARM_PREL31", { 0 }, { 0 }, NULL },
	{ 43, "R_ARM_MOVW_ABS_NC", { 0 }, { 0 }, NULL },
	{ 44, "R_ARM_MOVT_ABS", { 0 }, { 0 }, NULL },
	{ 45, "R_ARM_MOVW_PREL_NC", { 6, 1, 0 }, { 0 }, NULL },
	{ 46, "R_ARM_MOVT_PREL", { 6, 1, 0 }, { 0 }, NULL },
	{ 47, "R_ARM_THM_MOVW_ABS_NC", { 0 }, { 0 }, "THUMB2_KERNEL" },
	{ 48, "R_ARM_THM_MOVT_ABS", { 0 }, { 0 }, "THUMB2_KERNEL" },
	{ 49, "R_ARM_THM_MOVW_PREL_NC", { 6, 1, 0 }, { 0 }, "THUMB2_KERNEL" },
	{ 50, "R_ARM_THM_MOVT_PREL", { 6, 1, 0 }, { 0 }, "THUMB2_KERNEL" },
	{ 57, "R_ARM_ALU_PC_G0_NC", { 6, 1, 0 }, { 0 }, "ARM_HAS_GROUP_RELOCS" },
	{ 59, "R_ARM_ALU_PC_G1_NC", { 6, 1, 0 }, { 0 }, "ARM_HAS_GROUP_RELOCS" },
	{ 63, "R_ARM_LDR_PC_G2", { 6, 1, 0 }, { 0 }, "ARM_HAS_GROUP_RELOCS" },
};
/* s390x */
static const struct reloc_row s390x_rows[] = {
	{ 0, "R_390_NONE", { 0 }, { 0 }, NULL },
	{ 1, "R_390_8", { 0 }, { 0 }, NULL },
	{ 2, "R_390_12", { 0 }, { 0 }, NULL },
	{ 3, "R_390_16", { 0 }, { 0 }, NULL },
	{ 4, "R_390_32", { 0 }, { 0 }, NULL },
	{ 5, "R_390_PC32", { 0 }, { 0 }, NULL },
	{ 6, "R_390_GOT12", { 0 }, { 0 }, NULL },
	{ 7, "R_390_GOT32", { 0 }, { 0 }, NULL },
	{ 8, "R_390_PLT32", { 0 }, { 0 }, NULL },
	{ 13, "R_390_GOTOFF32", { 0 }, { 0 }, NULL },
	{ 14, "R_390_GOTPC", { 0 }, { 0 }, NULL },
	{ 15, "R_390_GOT16", { 0 }, { 0 }, NULL },
	{ 16, "R_390_PC16", { 0 }, { 0 }, NULL },
	{ 17, "R_390_PC16DBL", { 0 }, { 0 }, NULL },
	{ 18, "R_390_PLT16DBL", { 0 }, { 0 }, NULL },
	{ 19, "R_390_PC32DBL", { 0 }, { 0 }, NULL },
	{ 20, "R_390_PLT32DBL", { 0 }, { 0 }, NULL },
	{ 21, "R_390_GOTPCDBL", { 0 }, { 0 }, NULL },
	{ 22, "R_390_64", { 0 }, { 0 }, NULL },
	{ 23, "R_390_PC64", { 0 }, { 0 }, NULL },
	{ 24, "R_390_GOT64", { 0 }, { 0 }, NULL },
	{ 25, "R_390_PLT64", { 0 }, { 0 }, NULL },
	{ 26, "R_390_GOTENT", { 0 }, { 0 }, NULL },
	{ 27, "R_390_GOTOFF16", { 0 }, { 0 }, NULL },
	{ 28, "R_390_GOTOFF64", { 0 }, { 0 }, NULL },
	{ 29, "R_390_GOTPLT12", { 0 }, { 0 }, NULL },
	{ 30, "R_390_GOTPLT16", { 0 }, { 0 }, NULL },
	{ 31, "R_390_GOTPLT32", { 0 }, { 0 }, NULL },
	{ 32, "R_390_GOTPLT64", { 0 }, { 0 }, NULL },
	{ 33, "R_390_GOTPLTENT", { 0 }, { 0 }, NULL },
	{ 34, "R_390_PLTOFF16", { 0 }, { 0 }, NULL },
	{ 35, "R_390_PLTOFF32", { 0 }, { 0 }, NULL },
	{ 36, "R_390_PLTOFF64", { 0 }, { 0 }, NULL },
	{ 57, "R_390_20", { 0 }, { 0 }, NULL },
	{ 58, "R_390_GOT20", { 0 }, { 0 }, NULL },
	{ 59, "R_390_GOTPLT20", { 0 }, { 0 }, NULL },
};
/* ppc64 */
static const struct reloc_row ppc64_rows[] = {
	{ 1, "R_PPC64_ADDR32", { 0 }, { 0 }, NULL },
	{ 10, "R_PPC_REL24", { 0 }, { 0 }, NULL },
	{ 26, "R_PPC64_REL32", { 0 }, { 0 }, NULL },
	{ 38, "R_PPC64_ADDR64", { 0 }, { 0 }, NULL },
	{ 44, "R_PPC64_REL64", { 0 }, { 0 }, NULL },
	{ 47, "R_PPC64_TOC16", { 0 }, { 0 }, NULL },
	{ 48, "R_PPC64_TOC16_LO", { 0 }, { 0 }, NULL },
	{ 50, "R_PPC64_TOC16_HA", { 0 }, { 0 }, NULL },
	{ 51, "R_PPC64_TOC", { 0 }, { 0 }, NULL },
	{ 63, "R_PPC64_TOC16_DS", { 0 }, { 0 }, NULL },
	{ 64, "R_PPC64_TOC16_LO_DS", { 0 }, { 0 }, NULL },
	{ 109, "R_PPC64_TOCSAVE", { 0 }, { 0 }, NULL },
	{ 116, "R_PPC64_REL24_NOTOC", { 6, 4, 0 }, { 0 }, NULL },
	{ 118, "R_PPC64_ENTRY", { 0 }, { 0 }, NULL },
	{ 132, "R_PPC64_PCREL34", { 6, 4, 0 }, { 0 }, NULL },
	{ 133, "R_PPC64_GOT_PCREL34", { 6, 4, 0 }, { 0 }, NULL },
	{ 250, "R_PPC64_REL16_LO", { 0 }, { 0 }, NULL },
	{ 252, "R_PPC64_REL16_HA", { 0 }, { 0 }, NULL },
};
/* mips */
static const struct reloc_row mips_rows[] = {
	{ 0, "R_MIPS_NONE", { 0 }, { 0 }, NULL },
	{ 2, "R_MIPS_32", { 0 }, { 0 }, NULL },
	{ 4, "R_MIPS_26", { 0 }, { 0 }, NULL },
	{ 5, "R_MIPS_HI16", { 0 }, { 0 }, NULL },
	{ 6, "R_MIPS_LO16", { 0 }, { 0 }, NULL },
	{ 10, "R_MIPS_PC16", { 0 }, { 0 }, NULL },
	{ 18, "R_MIPS_64", { 0 }, { 0 }, NULL },
	{ 28, "R_MIPS_HIGHER", { 0 }, { 0 }, NULL },
	{ 29, "R_MIPS_HIGHEST", { 0 }, { 0 }, NULL },
	{ 60, "R_MIPS_PC21_S2", { 0 }, { 0 }, NULL },
	{ 61, "R_MIPS_PC26_S2", { 0 }, { 0 }, NULL },
};
/* riscv64 */
static const struct reloc_row riscv64_rows[] = {
	{ 1, "R_RISCV_32", { 0 }, { 0 }, NULL },
	{ 2, "R_RISCV_64", { 0 }, { 0 }, NULL },
	{ 16, "R_RISCV_BRANCH", { 0 }, { 0 }, NULL },
	{ 17, "R_RISCV_JAL", { 0 }, { 0 }, NULL },
	{ 18, "R_RISCV_CALL", { 0 }, { 0 }, NULL },
	{ 19, "R_RISCV_CALL_PLT", { 0 }, { 0 }, NULL },
	{ 20, "R_RISCV_GOT_HI20", { 0 }, { 0 }, NULL },
	{ 23, "R_RISCV_PCREL_HI20", { 0 }, { 0 }, NULL },
	{ 24, "R_RISCV_PCREL_LO12_I", { 0 }, { 0 }, NULL },
	{ 25, "R_RISCV_PCREL_LO12_S", { 0 }, { 0 }, NULL },
	{ 26, "R_RISCV_HI20", { 0 }, { 0 }, NULL },
	{ 27, "R_RISCV_LO12_I", { 0 }, { 0 }, NULL },
	{ 28, "R_RISCV_LO12_S", { 0 }, { 0 }, NULL },
	{ 33, "R_RISCV_ADD8", { 6, 7, 0 }, { 0 }, NULL },
	{ 34, "R_RISCV_ADD16", { 6, 7, 0 }, { 0 }, NULL },
	{ 35, "R_RISCV_ADD32", { 0 }, { 0 }, NULL },
	{ 36, "R_RISCV_ADD64", { 0 }, { 0 }, NULL },
	{ 37, "R_RISCV_SUB8", { 6, 7, 0 }, { 0 }, NULL },
	{ 38, "R_RISCV_SUB16", { 6, 7, 0 }, { 0 }, NULL },
	{ 39, "R_RISCV_SUB32", { 0 }, { 0 }, NULL },
	{ 40, "R_RISCV_SUB64", { 0 }, { 0 }, NULL },
	{ 43, "R_RISCV_ALIGN", { 0 }, { 0 }, NULL },
	{ 44, "R_RISCV_RVC_BRANCH", { 0 }, { 0 }, NULL },
	{ 45, "R_RISCV_RVC_JUMP", { 0 }, { 0 }, NULL },
	{ 51, "R_RISCV_RELAX", { 0 }, { 0 }, NULL },
	{ 52, "R_RISCV_SUB6", { 6, 7, 0 }, { 0 }, NULL },
	{ 53, "R_RISCV_SET6", { 6, 7, 0 }, { 0 }, NULL },
	{ 54, "R_RISCV_SET8", { 6, 7, 0 }, { 0 }, NULL },
	{ 55, "R_RISCV_SET16", { 6, 7, 0 }, { 0 }, NULL },
	{ 56, "R_RISCV_SET32", { 6, 7, 0 }, { 0 }, NULL },
	{ 57, "R_RISCV_32_PCREL", { 6, 7, 0 }, { 0 }, NULL },
	{ 59, "R_RISCV_PLT32", { 6, 7, 0 }, { 0 }, NULL },
	{ 60, "R_RISCV_SET_ULEB128", { 6, 7, 0 }, { 0 }, NULL },
	{ 61, "R_RISCV_SUB_ULEB128", { 6, 7, 0 }, { 0 }, NULL },
};

/* loongarch64: the handlers reloc_rela_handlers[] names and the switch's special cases */
static const struct reloc_row loongarch64_rows[] = {
	{ 0, "R_LARCH_NONE", { 0 }, { 0 }, NULL },
	{ 1, "R_LARCH_32", { 0 }, { 0 }, NULL },
	{ 2, "R_LARCH_64", { 0 }, { 0 }, NULL },
	{ 20, "R_LARCH_MARK_LA", { 0 }, { 0 }, NULL },
	{ 21, "R_LARCH_MARK_PCREL", { 0 }, { 0 }, NULL },
	{ 22, "R_LARCH_SOP_PUSH_PCREL", { 0 }, { 0 }, NULL },
	{ 23, "R_LARCH_SOP_PUSH_ABSOLUTE", { 0 }, { 0 }, NULL },
	{ 24, "R_LARCH_SOP_PUSH_DUP", { 0 }, { 0 }, NULL },
	{ 29, "R_LARCH_SOP_PUSH_PLT_PCREL", { 0 }, { 0 }, NULL },
	{ 32, "R_LARCH_SOP_SUB", { 0 }, { 0 }, NULL },
	{ 33, "R_LARCH_SOP_SL", { 0 }, { 0 }, NULL },
	{ 34, "R_LARCH_SOP_SR", { 0 }, { 0 }, NULL },
	{ 35, "R_LARCH_SOP_ADD", { 0 }, { 0 }, NULL },
	{ 36, "R_LARCH_SOP_AND", { 0 }, { 0 }, NULL },
	{ 37, "R_LARCH_SOP_IF_ELSE", { 0 }, { 0 }, NULL },
	{ 39, "R_LARCH_SOP_POP_32_U_10_12", { 0 }, { 0 }, NULL },
	{ 40, "R_LARCH_SOP_POP_32_S_10_12", { 0 }, { 0 }, NULL },
	{ 41, "R_LARCH_SOP_POP_32_S_10_16", { 0 }, { 0 }, NULL },
	{ 42, "R_LARCH_SOP_POP_32_S_10_16_S2", { 0 }, { 0 }, NULL },
	{ 43, "R_LARCH_SOP_POP_32_S_5_20", { 0 }, { 0 }, NULL },
	{ 44, "R_LARCH_SOP_POP_32_S_0_5_10_16_S2", { 0 }, { 0 }, NULL },
	{ 45, "R_LARCH_SOP_POP_32_S_0_10_10_16_S2", { 0 }, { 0 }, NULL },
	{ 46, "R_LARCH_SOP_POP_32_U", { 0 }, { 0 }, NULL },
	{ 50, "R_LARCH_ADD32", { 0 }, { 0 }, NULL },
	{ 51, "R_LARCH_ADD64", { 0 }, { 0 }, NULL },
	{ 55, "R_LARCH_SUB32", { 0 }, { 0 }, NULL },
	{ 56, "R_LARCH_SUB64", { 0 }, { 0 }, NULL },
	{ 66, "R_LARCH_B26", { 0 }, { 0 }, NULL },
	{ 71, "R_LARCH_PCALA_HI20", { 0 }, { 0 }, NULL },
	{ 72, "R_LARCH_PCALA_LO12", { 0 }, { 0 }, NULL },
	{ 73, "R_LARCH_PCALA64_LO20", { 0 }, { 0 }, NULL },
	{ 74, "R_LARCH_PCALA64_HI12", { 0 }, { 0 }, NULL },
	{ 75, "R_LARCH_GOT_PC_HI20", { 0 }, { 0 }, NULL },
	{ 76, "R_LARCH_GOT_PC_LO12", { 0 }, { 0 }, NULL },
	{ 99, "R_LARCH_32_PCREL", { 6, 6, 0 }, { 0 }, NULL },
	{ 109, "R_LARCH_64_PCREL", { 6, 6, 0 }, { 0 }, NULL },
	{ 128, "R_LARCH_PCADD_HI20", { 7, 2, 0 }, { 0 }, NULL },
	{ 129, "R_LARCH_PCADD_LO12", { 7, 2, 0 }, { 0 }, NULL },
	{ 130, "R_LARCH_GOT_PCADD_HI20", { 7, 2, 0 }, { 0 }, NULL },
	{ 131, "R_LARCH_GOT_PCADD_LO12", { 7, 2, 0 }, { 0 }, NULL },
};

/* s390 apply_rela(): "Only needed if we want to support loading of modules linked with -shared." */
static const struct refused_row s390x_refused[] = {
	{ 9, "R_390_COPY", { 0 }, { 0 }, NULL, -ENOEXEC },
	{ 10, "R_390_GLOB_DAT", { 0 }, { 0 }, NULL, -ENOEXEC },
	{ 11, "R_390_JMP_SLOT", { 0 }, { 0 }, NULL, -ENOEXEC },
	{ 12, "R_390_RELATIVE", { 0 }, { 0 }, NULL, -ENOEXEC },
};

/* riscv apply_relocate_add() 6.7+: dynamic_linking_not_supported(), tls_not_supported() */
/* the kernel prints the relocated address where "(address)" stands */
#define RV_DYN "%s: Dynamic linking not supported in kernel modules PC = (address)"
#define RV_TLS "%s: Thread local storage not supported in kernel modules PC = (address)"
static const struct refused_row riscv64_refused[] = {
	{ 3, "R_RISCV_RELATIVE", { 6, 7, 0 }, { 0 }, RV_DYN, -EINVAL },
	{ 4, "R_RISCV_COPY", { 6, 7, 0 }, { 0 }, RV_DYN, -EINVAL },
	{ 5, "R_RISCV_JUMP_SLOT", { 6, 7, 0 }, { 0 }, RV_DYN, -EINVAL },
	{ 6, "R_RISCV_TLS_DTPMOD32", { 6, 7, 0 }, { 0 }, RV_DYN, -EINVAL },
	{ 7, "R_RISCV_TLS_DTPMOD64", { 6, 7, 0 }, { 0 }, RV_DYN, -EINVAL },
	{ 8, "R_RISCV_TLS_DTPREL32", { 6, 7, 0 }, { 0 }, RV_DYN, -EINVAL },
	{ 9, "R_RISCV_TLS_DTPREL64", { 6, 7, 0 }, { 0 }, RV_DYN, -EINVAL },
	{ 10, "R_RISCV_TLS_TPREL32", { 6, 7, 0 }, { 0 }, RV_DYN, -EINVAL },
	{ 11, "R_RISCV_TLS_TPREL64", { 6, 7, 0 }, { 0 }, RV_DYN, -EINVAL },
	{ 21, "R_RISCV_TLS_GOT_HI20", { 6, 7, 0 }, { 0 }, RV_TLS, -EINVAL },
	{ 22, "R_RISCV_TLS_GD_HI20", { 6, 7, 0 }, { 0 }, RV_TLS, -EINVAL },
	{ 29, "R_RISCV_TPREL_HI20", { 6, 7, 0 }, { 0 }, RV_TLS, -EINVAL },
	{ 30, "R_RISCV_TPREL_LO12_I", { 6, 7, 0 }, { 0 }, RV_TLS, -EINVAL },
	{ 31, "R_RISCV_TPREL_LO12_S", { 6, 7, 0 }, { 0 }, RV_TLS, -EINVAL },
	{ 32, "R_RISCV_TPREL_ADD", { 6, 7, 0 }, { 0 }, RV_TLS, -EINVAL },
	{ 58, "R_RISCV_IRELATIVE", { 6, 7, 0 }, { 0 }, RV_DYN, -EINVAL },
};

/*
 * loongarch apply_relocate_add(): apply_r_larch_error() for every type up to the table's end
 * that no handler is named for (unnamed values included), the default: branch of a handler
 * whose range holds types it does not handle (LA_UNSUP); past the end, "Unknown" (the arch's
 * default line).
 */
#define LA_ERR "%s: Unsupport relocation type %u, please add its support."
#define LA_UNSUP "%s: Unsupport relocation type %u"
static const struct refused_row loongarch64_refused[] = {
	{ 3, "R_LARCH_RELATIVE", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 4, "R_LARCH_COPY", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 5, "R_LARCH_JUMP_SLOT", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 6, "R_LARCH_TLS_DTPMOD32", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 7, "R_LARCH_TLS_DTPMOD64", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 8, "R_LARCH_TLS_DTPREL32", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 9, "R_LARCH_TLS_DTPREL64", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 10, "R_LARCH_TLS_TPREL32", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 11, "R_LARCH_TLS_TPREL64", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 12, "R_LARCH_IRELATIVE", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 13, NULL, { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 14, NULL, { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 15, NULL, { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 16, NULL, { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 17, NULL, { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 18, NULL, { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 19, NULL, { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 25, "R_LARCH_SOP_PUSH_GPREL", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 26, "R_LARCH_SOP_PUSH_TLS_TPREL", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 27, "R_LARCH_SOP_PUSH_TLS_GOT", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 28, "R_LARCH_SOP_PUSH_TLS_GD", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 30, "R_LARCH_SOP_ASSERT", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 31, "R_LARCH_SOP_NOT", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 38, "R_LARCH_SOP_POP_32_S_10_5", { 0 }, { 0 }, LA_UNSUP, -EINVAL },
	{ 47, "R_LARCH_ADD8", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 48, "R_LARCH_ADD16", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 49, "R_LARCH_ADD24", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 52, "R_LARCH_SUB8", { 0 }, { 0 }, LA_UNSUP, -EINVAL },
	{ 53, "R_LARCH_SUB16", { 0 }, { 0 }, LA_UNSUP, -EINVAL },
	{ 54, "R_LARCH_SUB24", { 0 }, { 0 }, LA_UNSUP, -EINVAL },
	{ 57, "R_LARCH_GNU_VTINHERIT", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 58, "R_LARCH_GNU_VTENTRY", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 59, NULL, { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 60, NULL, { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 61, NULL, { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 62, NULL, { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 63, NULL, { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 64, "R_LARCH_B16", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 65, "R_LARCH_B21", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 67, "R_LARCH_ABS_HI20", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 68, "R_LARCH_ABS_LO12", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 69, "R_LARCH_ABS64_LO20", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 70, "R_LARCH_ABS64_HI12", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 77, "R_LARCH_GOT64_PC_LO20", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 78, "R_LARCH_GOT64_PC_HI12", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 79, "R_LARCH_GOT_HI20", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 80, "R_LARCH_GOT_LO12", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 81, "R_LARCH_GOT64_LO20", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 82, "R_LARCH_GOT64_HI12", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 83, "R_LARCH_TLS_LE_HI20", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 84, "R_LARCH_TLS_LE_LO12", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 85, "R_LARCH_TLS_LE64_LO20", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 86, "R_LARCH_TLS_LE64_HI12", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 87, "R_LARCH_TLS_IE_PC_HI20", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 88, "R_LARCH_TLS_IE_PC_LO12", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 89, "R_LARCH_TLS_IE64_PC_LO20", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 90, "R_LARCH_TLS_IE64_PC_HI12", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 91, "R_LARCH_TLS_IE_HI20", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 92, "R_LARCH_TLS_IE_LO12", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 93, "R_LARCH_TLS_IE64_LO20", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 94, "R_LARCH_TLS_IE64_HI12", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 95, "R_LARCH_TLS_LD_PC_HI20", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 96, "R_LARCH_TLS_LD_HI20", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 97, "R_LARCH_TLS_GD_PC_HI20", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 98, "R_LARCH_TLS_GD_HI20", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 99, "R_LARCH_32_PCREL", { 0 }, { 6, 6, 0 }, LA_ERR, -EINVAL },
	{ 100, "R_LARCH_RELAX", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 101, "R_LARCH_DELETE", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 102, "R_LARCH_ALIGN", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 103, "R_LARCH_PCREL20_S2", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 104, "R_LARCH_CFA", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 105, "R_LARCH_ADD6", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 106, "R_LARCH_SUB6", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 107, "R_LARCH_ADD_ULEB128", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 108, "R_LARCH_SUB_ULEB128", { 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 109, "R_LARCH_64_PCREL", { 0 }, { 6, 6, 0 }, LA_ERR, -EINVAL },
	{ 110, "R_LARCH_CALL36", { 7, 2, 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 111, "R_LARCH_TLS_DESC_PC_HI20", { 7, 2, 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 112, "R_LARCH_TLS_DESC_PC_LO12", { 7, 2, 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 113, "R_LARCH_TLS_DESC64_PC_LO20", { 7, 2, 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 114, "R_LARCH_TLS_DESC64_PC_HI12", { 7, 2, 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 115, "R_LARCH_TLS_DESC_HI20", { 7, 2, 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 116, "R_LARCH_TLS_DESC_LO12", { 7, 2, 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 117, "R_LARCH_TLS_DESC64_LO20", { 7, 2, 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 118, "R_LARCH_TLS_DESC64_HI12", { 7, 2, 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 119, "R_LARCH_TLS_DESC_LD", { 7, 2, 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 120, "R_LARCH_TLS_DESC_CALL", { 7, 2, 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 121, "R_LARCH_TLS_LE_HI20_R", { 7, 2, 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 122, "R_LARCH_TLS_LE_ADD_R", { 7, 2, 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 123, "R_LARCH_TLS_LE_LO12_R", { 7, 2, 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 124, "R_LARCH_TLS_LD_PCREL20_S2", { 7, 2, 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 125, "R_LARCH_TLS_GD_PCREL20_S2", { 7, 2, 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 126, "R_LARCH_TLS_DESC_PCREL20_S2", { 7, 2, 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 127, "R_LARCH_CALL30", { 7, 2, 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 132, "R_LARCH_TLS_IE_PCADD_HI20", { 7, 2, 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 133, "R_LARCH_TLS_IE_PCADD_LO12", { 7, 2, 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 134, "R_LARCH_TLS_LD_PCADD_HI20", { 7, 2, 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 135, "R_LARCH_TLS_LD_PCADD_LO12", { 7, 2, 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 136, "R_LARCH_TLS_GD_PCADD_HI20", { 7, 2, 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 137, "R_LARCH_TLS_GD_PCADD_LO12", { 7, 2, 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 138, "R_LARCH_TLS_DESC_PCADD_HI20", { 7, 2, 0 }, { 0 }, LA_ERR, -EINVAL },
	{ 139, "R_LARCH_TLS_DESC_PCADD_LO12", { 7, 2, 0 }, { 0 }, LA_ERR, -EINVAL },
};

/* Names of types no table applies that modules built the wrong way carry (messages only). */
const struct refused_row kp_arch_known_names[] = {
	{ 3, "R_X86_64_GOT32", { 0 }, { 0 }, NULL, 0 },
	{ 9, "R_X86_64_GOTPCREL", { 0 }, { 0 }, NULL, 0 },
	{ 41, "R_X86_64_GOTPCRELX", { 0 }, { 0 }, NULL, 0 },
	{ 42, "R_X86_64_REX_GOTPCRELX", { 0 }, { 0 }, NULL, 0 },
	{ 311, "R_AARCH64_ADR_GOT_PAGE", { 0 }, { 0 }, NULL, 0 },
	{ 312, "R_AARCH64_LD64_GOT_LO12_NC", { 0 }, { 0 }, NULL, 0 },
};
/* clang-format on */

#define TABLE(x) x, KP_ARRAY_SIZE(x)

/* clang-format off */
const struct arch_relocs kp_arch_relocs[] = {
	/*
	 * arch/x86/kernel/module.c __write_relocate_add() (apply_relocate_add() before 6.0);
	 * pr_fmt KBUILD_MODNAME ": " (observed on 6.1: "module: m: Unknown rela relocation: 9")
	 */
	{ "x86_64", EM_X86_64, ELFCLASS64, false, true, "module: ", { 0 },
	  "%s: Unknown rela relocation: %u", -ENOEXEC, TABLE(x86_64_rows), NULL, 0 },
	/* arch/x86/kernel/module.c apply_relocate() (CONFIG_X86_32) */
	{ "i386", EM_386, ELFCLASS32, true, false, "module: ", { 0 },
	  "%s: Unknown relocation: %u", -ENOEXEC, TABLE(i386_rows), NULL, 0 },
	/*
	 * arch/arm64/kernel/module.c apply_relocate_add(); pr_fmt "Modules: " is in the 6.12
	 * tree, not in 6.1: taken from 6.5 (the arm64 module placement rework), not pinned
	 */
	{ "arm64", EM_AARCH64, ELFCLASS64, false, true, "Modules: ", { 6, 5, 0 },
	  "module %s: unsupported RELA relocation: %u", -ENOEXEC, TABLE(arm64_rows), NULL, 0 },
	/* arch/arm/kernel/module.c apply_relocate() */
	{ "arm", EM_ARM, ELFCLASS32, true, false, NULL, { 0 }, "%s: unknown relocation: %u",
	  -ENOEXEC, TABLE(arm_rows), NULL, 0 },
	/* arch/s390/kernel/module.c apply_rela() (printk: no prefix) */
	{ "s390x", EM_S390, ELFCLASS64, false, true, NULL, { 0 },
	  "module %s: unknown relocation: %u", -ENOEXEC, TABLE(s390x_rows), TABLE(s390x_refused) },
	/* arch/powerpc/kernel/module_64.c apply_relocate_add(); pr_fmt KBUILD_MODNAME ": " */
	{ "ppc64", EM_PPC64, ELFCLASS64, false, true, "module_64: ", { 0 },
	  "%s: Unknown ADD relocation: %u", -ENOEXEC, TABLE(ppc64_rows), NULL, 0 },
	/* arch/mips/kernel/module.c reloc_handler() (the reloc_handlers[] table before 6.1) */
	{ "mips", EM_MIPS, ELFCLASS32, true, false, NULL, { 0 }, "%s: Unknown relocation type %u",
	  -EINVAL, TABLE(mips_rows), NULL, 0 },
	{ "mips64", EM_MIPS, ELFCLASS64, true, true, NULL, { 0 },
	  "%s: Unknown relocation type %u", -EINVAL, TABLE(mips_rows), NULL, 0 },
	/* arch/riscv/kernel/module.c apply_relocate_add(): the reloc_handlers[] table */
	{ "riscv", EM_RISCV, 0, false, true, NULL, { 0 }, "%s: Unknown relocation type %u",
	  -EINVAL, TABLE(riscv64_rows), TABLE(riscv64_refused) },
	/*
	 * arch/loongarch/kernel/module.c apply_relocate_add(): the reloc_rela_handlers[] table
	 * (RELA only); pr_fmt "kmod: " in 6.1, 6.12 and 7.2
	 */
	{ "loongarch64", EM_LOONGARCH, ELFCLASS64, false, true, "kmod: ", { 0 },
	  "%s: Unknown relocation type %u", -EINVAL, TABLE(loongarch64_rows),
	  TABLE(loongarch64_refused) },
};
/* clang-format on */

const size_t kp_arch_nknown_names = KP_ARRAY_SIZE(kp_arch_known_names);
const size_t kp_arch_nrelocs = KP_ARRAY_SIZE(kp_arch_relocs);
