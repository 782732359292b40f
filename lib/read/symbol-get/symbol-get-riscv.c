// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * RISC-V (RV64GC) backend for the symbol_get() tracer: 4-byte instructions
 * and 2-byte compressed ones (the C extension), little-endian.
 *
 * Precise definitions: addi rd, rs, %pcrel_lo(label) [R_RISCV_PCREL_LO12_I,
 * whose label is the auipc carrying R_RISCV_PCREL_HI20 against the string]
 * (the same encoding without a relocation is mv rd, rs, a copy), c.mv,
 * addi/c.addi4spn from sp or s0 (a stack buffer), lui/li constants.
 * Calls: auipc ra + jalr ra [R_RISCV_CALL_PLT on the auipc], jal ra, jalr;
 * tail calls: auipc t1 + jalr zero, jal zero. Every other instruction writing
 * an integer register is decoded as clobbering rd. First argument a0 (x10),
 * return a0, caller-saved ra, t0-t6, a0-a7.
 */
#include <elf.h>
#include <string.h>

#include "symbol-get-internal.h"
#include "util/util.h"

#ifndef EM_RISCV
#define EM_RISCV 243
#endif

enum { RA = 1, SP = 2, FP = 8, A0 = 10 };

/* R_RISCV_* (RISC-V ELF psABI) */
enum {
	R_PCREL_HI20 = 23,
	R_PCREL_LO12_I = 24,
	R_PCREL_LO12_S = 25,
	R_HI20 = 26,
	R_LO12_I = 27,
	R_LO12_S = 28,
	R_RELAX = 51,
	R_ALIGN = 43,
};

static uint32_t xreg(unsigned r)
{
	return r ? SG_REG(r) : 0;
}

static void def(struct sg_insn *in, unsigned rd, enum sg_def d)
{
	if (rd == 0)
		return;
	in->def_reg = (int8_t)rd;
	in->def = (uint8_t)d;
}

static int64_t imm_j(uint32_t i)
{
	return kp_sext(((i >> 31) & 1) << 20 | ((i >> 12) & 0xff) << 12 | ((i >> 20) & 1) << 11 |
			       ((i >> 21) & 0x3ff) << 1,
		       21);
}

static int64_t imm_b(uint32_t i)
{
	return kp_sext(((i >> 31) & 1) << 12 | ((i >> 7) & 1) << 11 | ((i >> 25) & 0x3f) << 5 |
			       ((i >> 8) & 15) << 1,
		       13);
}

/* auipc rX + jalr rd, imm(rX): a call (rd = ra) or a tail call (rd = zero), 8 bytes. */
static bool call_pair(const struct sg_code *c, uint64_t off, uint32_t i, struct sg_insn *in)
{
	unsigned rx = (i >> 7) & 31;
	uint32_t j, rd;

	if (rx == 0 || c->size - off < 8 || (kp_load16(c->data + off + 4, false) & 3) != 3)
		return false;
	j = kp_load32(c->data + off + 4, false);
	if ((j & 0x707f) != 0x0067 || ((j >> 15) & 31) != rx)
		return false;
	rd = (j >> 7) & 31;
	in->len = 8;
	in->flow = rd == 0 ? SG_JUMP : SG_CALL;
	in->clobbers = xreg(rx) | xreg(rd);
	sg_set_target(in, off, (int64_t)(int32_t)(i & 0xfffff000) + kp_sext(j >> 20, 12), 0);
	return true;
}

static bool decode32(const struct sg_code *c, uint64_t off, uint32_t i, struct sg_insn *in)
{
	unsigned rd = (i >> 7) & 31, rs1 = (i >> 15) & 31, f3 = (i >> 12) & 7;

	in->len = 4;
	switch (i & 0x7f) {
	case 0x37: /* lui */
		def(in, rd, SG_DEF_CONST);
		return true;
	case 0x17: /* auipc: the high half; the address is named at the low half */
		if (call_pair(c, off, i, in))
			return true;
		def(in, rd, SG_DEF_OTHER);
		return true;
	case 0x6f: /* jal */
		in->flow = rd == 0 ? SG_JUMP : SG_CALL;
		in->clobbers = xreg(rd);
		sg_set_target(in, off, imm_j(i), 0);
		return true;
	case 0x67: /* jalr */
		if (f3)
			return false;
		if (rd == 0) {
			in->flow = SG_STOP; /* ret, or an indirect (tail) jump */
		} else {
			in->flow = SG_CALL;
			in->clobbers = xreg(rd);
		}
		return true;
	case 0x63: /* beq ... bgeu */
		if (f3 == 2 || f3 == 3)
			return false;
		in->flow = SG_CJUMP;
		sg_set_target(in, off, imm_b(i), 0);
		return true;
	case 0x13:	       /* op-imm */
		if (f3 == 0) { /* addi */
			int64_t imm = kp_sext(i >> 20, 12);

			if (rs1 == SP || rs1 == FP) {
				def(in, rd, SG_DEF_STACK);
			} else if (rs1 == 0) {
				def(in, rd, SG_DEF_CONST); /* li */
			} else if (imm == 0) {
				def(in, rd, SG_DEF_ADDR_OR_COPY); /* mv, or addi %pcrel_lo */
				in->src_reg = (int8_t)rs1;
				in->reloc_off = (uint32_t)off;
			} else {
				def(in, rd, SG_DEF_OTHER);
			}
			return true;
		}
		in->clobbers = xreg(rd);
		return true;
	case 0x03: /* loads (a %pcrel_lo load reads memory: not an address) */
	case 0x1b: /* op-imm-32 */
	case 0x33: /* op */
	case 0x3b: /* op-32 */
	case 0x2f: /* atomics */
	case 0x53: /* op-fp: fcvt/fmv/fcmp write an integer rd; others an f register */
	case 0x57: /* vector: vset{i}vl{i} write rd */
		in->clobbers = xreg(rd);
		return true;
	case 0x07: /* load-fp */
	case 0x23: /* stores */
	case 0x27: /* store-fp */
	case 0x0f: /* fence, fence.i, cbo.* */
	case 0x43: /* fused multiply-add (f registers) */
	case 0x47:
	case 0x4b:
	case 0x4f:
		return true;
	case 0x73: /* system */
		if (f3 == 4)
			return false;
		if (f3) {
			in->clobbers = xreg(rd); /* csr* */
			return true;
		}
		if (i == 0x00100073 || i == 0x30200073 || i == 0x10200073)
			in->flow = SG_STOP; /* ebreak (BUG()), mret, sret */
		else if (i == 0x00000073)
			in->clobbers = SG_REG(A0) | SG_REG(A0 + 1); /* ecall: SBI result */
		return true;
	default:
		return false; /* custom or reserved opcodes */
	}
}

static bool decode16(const struct sg_code *c, uint64_t off, uint32_t i, struct sg_insn *in)
{
	unsigned f3 = (i >> 13) & 7, rd = (i >> 7) & 31, rs2 = (i >> 2) & 31;
	unsigned rdp = 8 + ((i >> 2) & 7), rs1p = 8 + ((i >> 7) & 7);

	(void)c;
	in->len = 2;
	if (i == 0)
		return false; /* illegal: padding or data */
	switch (i & 3) {
	case 0:
		if (f3 == 0) { /* c.addi4spn rd', sp, imm */
			def(in, rdp, SG_DEF_STACK);
		} else if (f3 == 2 || f3 == 3 || f3 == 4) { /* c.lw, c.ld, Zcb loads */
			in->clobbers = xreg(rdp);
		}
		return true; /* c.fld, c.sw, c.sd, c.fsd */
	case 1:
		switch (f3) {
		case 0: /* c.addi, c.nop */
		case 1: /* c.addiw */
			in->clobbers = xreg(rd);
			return true;
		case 2: /* c.li */
			def(in, rd, SG_DEF_CONST);
			return true;
		case 3: /* c.addi16sp, c.lui */
			if (rd != SP)
				def(in, rd, SG_DEF_CONST);
			return true;
		case 4: /* arithmetic on rd' (and Zcb) */
			in->clobbers = xreg(rs1p);
			return true;
		case 5: /* c.j */
			in->flow = SG_JUMP;
			sg_set_target(in, off,
				      kp_sext(((i >> 12) & 1) << 11 | ((i >> 11) & 1) << 4 |
						      ((i >> 9) & 3) << 8 | ((i >> 8) & 1) << 10 |
						      ((i >> 7) & 1) << 6 | ((i >> 6) & 1) << 7 |
						      ((i >> 3) & 7) << 1 | ((i >> 2) & 1) << 5,
					      12),
				      0);
			return true;
		default: /* c.beqz, c.bnez */
			in->flow = SG_CJUMP;
			sg_set_target(in, off,
				      kp_sext(((i >> 12) & 1) << 8 | ((i >> 10) & 3) << 3 |
						      ((i >> 5) & 3) << 6 | ((i >> 3) & 3) << 1 |
						      ((i >> 2) & 1) << 5,
					      9),
				      0);
			return true;
		}
	case 2:
		switch (f3) {
		case 0: /* c.slli */
		case 2: /* c.lwsp */
		case 3: /* c.ldsp */
			in->clobbers = xreg(rd);
			return true;
		case 4:
			if (!(i & 0x1000)) {
				if (rs2 == 0) { /* c.jr: ret or an indirect (tail) jump */
					in->flow = SG_STOP;
				} else { /* c.mv */
					def(in, rd, SG_DEF_COPY);
					in->src_reg = (int8_t)rs2;
				}
			} else if (rd == 0 && rs2 == 0) { /* c.ebreak */
				in->flow = SG_STOP;
			} else if (rs2 == 0) { /* c.jalr */
				in->flow = SG_CALL;
				in->clobbers = SG_REG(RA);
			} else { /* c.add */
				in->clobbers = xreg(rd);
			}
			return true;
		default: /* c.fldsp, c.fsdsp, c.swsp, c.sdsp */
			return true;
		}
	default:
		return false;
	}
}

static bool decode(const struct sg_code *c, uint64_t off, struct sg_insn *in)
{
	uint32_t i;

	if (!sg_insn_begin(c, off, 2, in))
		return false;
	i = kp_load16(c->data + off, false);
	if ((i & 3) != 3)
		return decode16(c, off, i, in);
	if ((i & 0x1f) == 0x1f || c->size - off < 4)
		return false; /* 48-bit and longer encodings */
	i |= (uint32_t)kp_load16(c->data + off + 2, false) << 16;
	return decode32(c, off, i, in);
}

static enum sg_rkind reloc_kind(uint32_t type)
{
	switch (type) {
	case R_PCREL_LO12_I:
		return SG_RK_PCREL_LO;
	case R_PCREL_HI20:
	case R_LO12_I:
	case R_HI20:
		return SG_RK_ADDR;
	case R_RELAX:
	case R_ALIGN:
		return SG_RK_IGNORE;
	default:
		return SG_RK_OTHER;
	}
}

const struct sg_arch kp_sg_riscv64 = {
	.name = "riscv64",
	.machine = EM_RISCV,
	.is64 = true,
	.arg_reg = A0,
	.ret_reg = A0,
	.call_clobbers =
		SG_REG(RA) | SG_REG(5) | SG_REG(6) | SG_REG(7) | 0x3fc00ULL | 0xf0000000ULL,
	.decode = decode,
	.min_insn = 2,
	.reloc_kind = reloc_kind,
	.mapping_symbols = true,
};
