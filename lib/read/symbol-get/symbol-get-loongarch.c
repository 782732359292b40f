// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * LoongArch64 decoder for the symbol_get() tracer. Fixed 4-byte little-endian instructions
 * (LoongArch Reference Manual vol. 1, "Instruction formats"; binutils opcodes/loongarch-opc.c).
 *
 * Precise definitions: addi.d rd, rj, %pc_lo12(sym) with R_LARCH_PCALA_LO12 (the second half
 * of pcalau12i rd, %pc_hi20(sym) [R_LARCH_PCALA_HI20] + addi.d; the relocation of the addi.d
 * names the full address S + A, as Debian's 7.2 loong64 modules are built: explicit
 * relocations, no linker relaxation markers), move rd, rj (or rd, rj, $zero; addi.d rd, rj, 0),
 * addi.d rd, $sp|$fp, si12 (a stack buffer). Calls: bl (R_LARCH_B26), jirl $ra, rj; tail calls:
 * b (R_LARCH_B26). First argument and return value a0 ($r4); caller-saved $ra ($r1), a0-a7
 * ($r4-$r11) and t0-t8 ($r12-$r20). Stores and floating-point/vector loads write no
 * general register; any other instruction is taken to write its rd field (conservative).
 */
#include <elf.h>
#include <string.h>

#include "symbol-get-internal.h"
#include "util/util.h"

enum {
	RA = 1,
	SP = 3,
	A0 = 4,
	FP = 22,
};

/* relocation types (LoongArch ELF psABI), named here for libcs whose elf.h lacks them */
enum {
	R_LARCH_PCALA_LO12_ = 72,
	R_LARCH_RELAX_ = 100,
	R_LARCH_ALIGN_ = 102,
};

static uint32_t gpr(unsigned r)
{
	return r ? SG_REG(r) : 0;
}

/* offs16 of the 2RI16 format (bits 25:10), in bytes */
static int64_t offs16(uint32_t i)
{
	return kp_sext(i >> 10, 16) * 4;
}

/* offs21 (bits 4:0 high, 25:10 low), in bytes */
static int64_t offs21(uint32_t i)
{
	return kp_sext(((i & 31) << 16) | ((i >> 10) & 0xffff), 21) * 4;
}

/* offs26 (bits 9:0 high, 25:10 low), in bytes */
static int64_t offs26(uint32_t i)
{
	return kp_sext(((i & 0x3ff) << 16) | ((i >> 10) & 0xffff), 26) * 4;
}

/* Stores, prefetches, barriers and loads into FP/vector registers: no general register written. */
static bool writes_no_gpr(uint32_t i)
{
	switch (i & 0xffc00000) {
	case 0x29000000: /* st.b */
	case 0x29400000: /* st.h */
	case 0x29800000: /* st.w */
	case 0x29c00000: /* st.d */
	case 0x2ac00000: /* preld */
	case 0x2b000000: /* fld.s */
	case 0x2b400000: /* fst.s */
	case 0x2b800000: /* fld.d */
	case 0x2bc00000: /* fst.d */
	case 0x2c000000: /* vld */
	case 0x2c400000: /* vst */
	case 0x2c800000: /* xvld */
	case 0x2cc00000: /* xvst */
		return true;
	}
	switch (i & 0xff000000) {
	case 0x25000000: /* stptr.w */
	case 0x27000000: /* stptr.d */
		return true;
	}
	switch (i & 0xffff8000) {
	case 0x38100000: /* stx.b */
	case 0x38140000: /* stx.h */
	case 0x38180000: /* stx.w */
	case 0x381c0000: /* stx.d */
	case 0x38300000: /* fldx.s */
	case 0x38340000: /* fldx.d */
	case 0x38380000: /* fstx.s */
	case 0x383c0000: /* fstx.d */
	case 0x38400000: /* vldx */
	case 0x38440000: /* vstx */
	case 0x38480000: /* xvldx */
	case 0x384c0000: /* xvstx */
	case 0x38720000: /* dbar */
	case 0x38728000: /* ibar */
		return true;
	}
	return false;
}

static bool decode(const struct sg_code *c, uint64_t off, struct sg_insn *in)
{
	uint32_t i;
	unsigned rd, rj, rk;

	if (!sg_insn_fetch32(c, off, in, &i))
		return false;
	rd = i & 31;
	rj = (i >> 5) & 31;
	rk = (i >> 10) & 31;
	if (i == 0)
		return false; /* not an instruction (padding, data) */

	/* branches: opcode bits 31:26 = 0x10..0x1b */
	switch (i >> 26) {
	case 0x10: /* beqz rj, offs21 */
	case 0x11: /* bnez */
	case 0x12: /* bceqz / bcnez */
		in->flow = SG_CJUMP;
		sg_set_target(in, off, offs21(i), 0);
		return true;
	case 0x13: /* jirl rd, rj, offs16 */
		if (rd == 0) {
			in->flow = SG_STOP; /* ret, indirect jump or tail call */
		} else {
			in->flow = SG_CALL; /* call through a register */
			in->clobbers |= gpr(rd);
		}
		return true;
	case 0x14: /* b offs26 */
	case 0x15: /* bl offs26 */
		in->flow = (i >> 26) == 0x15 ? SG_CALL : SG_JUMP;
		sg_set_target(in, off, offs26(i), 0);
		if (in->flow == SG_CALL)
			in->clobbers |= SG_REG(RA);
		return true;
	case 0x16: /* beq rj, rd, offs16 */
	case 0x17: /* bne */
	case 0x18: /* blt */
	case 0x19: /* bge */
	case 0x1a: /* bltu */
	case 0x1b: /* bgeu */
		in->flow = SG_CJUMP;
		sg_set_target(in, off, offs16(i), 0);
		return true;
	}
	if ((i & 0xffff8000) == 0x002a0000) { /* break: BUG() */
		in->flow = SG_STOP;
		return true;
	}
	if (i == 0x06483800) { /* ertn */
		in->flow = SG_STOP;
		return true;
	}
	if ((i & 0xffc00000) == 0x02c00000) { /* addi.d rd, rj, si12 */
		if (rd == 0)
			return true;
		in->def_reg = (int8_t)rd;
		if (rd == SP)
			in->def = SG_DEF_OTHER; /* stack pointer adjustment */
		else if (rj == SP || rj == FP)
			in->def = SG_DEF_STACK; /* a buffer in the frame */
		else if (rj == 0)
			in->def = SG_DEF_CONST; /* li */
		else if (((i >> 10) & 0xfff) == 0) {
			/* addi.d rd, rj, %pc_lo12(sym) (addend 0 in the field) or a move */
			in->def = SG_DEF_ADDR_OR_COPY;
			in->src_reg = (int8_t)rj;
			in->reloc_off = off;
		} else {
			in->def = SG_DEF_OTHER; /* arithmetic */
		}
		return true;
	}
	if ((i & 0xffff8000) == 0x00150000 && (rk == 0 || rj == 0)) { /* or rd, rj, rk: move */
		if (rd == 0)
			return true;
		in->def_reg = (int8_t)rd;
		in->src_reg = (int8_t)(rk == 0 ? rj : rk);
		in->def = in->src_reg ? SG_DEF_COPY : SG_DEF_CONST;
		return true;
	}
	if (writes_no_gpr(i))
		return true;
	/* everything else (arithmetic, loads, pcalau12i, lu12i.w, csr*, atomics): writes rd */
	if (rd) {
		in->def_reg = (int8_t)rd;
		in->def = SG_DEF_OTHER;
	}
	return true;
}

static enum sg_rkind reloc_kind(uint32_t type)
{
	switch (type) {
	case R_LARCH_PCALA_LO12_:
		return SG_RK_ADDR;
	case R_LARCH_RELAX_:
	case R_LARCH_ALIGN_:
		return SG_RK_IGNORE;
	default:
		return SG_RK_OTHER; /* GOT slots, TLS, absolute halves */
	}
}

const struct sg_arch kp_sg_loongarch64 = {
	.name = "loongarch64",
	.machine = EM_LOONGARCH,
	.is64 = true,
	.arg_reg = A0,
	.ret_reg = A0,
	.call_clobbers = SG_REG(RA) | 0x1ffff0ULL,
	.decode = decode,
	.min_insn = 4,
	.reloc_kind = reloc_kind,
};
