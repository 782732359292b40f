// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * 64-bit PowerPC little-endian (ELFv2) backend for the symbol_get() tracer.
 * Fixed 4-byte instructions; fields in IBM numbering: RT/RS bits 6-10,
 * RA 11-15, RB 16-20.
 *
 * Precise definitions: addi rT, rA, sym@toc@l [R_PPC64_TOC16_LO, the second
 * half of addis rA, r2, sym@toc@ha: S + A is the address] (or @l with
 * R_PPC64_ADDR16_LO); ld rT, slot@toc@l(rA) [R_PPC64_TOC16_LO_DS against a
 * .toc slot whose R_PPC64_ADDR64 names the address]; mr rA, rS (or rA, rS, rS), addi rT, r1, imm (a
 * stack buffer), li/lis constants. Every other instruction is decoded as writing its RT and RA
 * fields (the update forms, the logical and rotate forms) unless it is a branch, a compare or a
 * trap. Calls: bl [R_PPC64_REL24], bctrl; tail calls: b. First argument r3, return r3, caller-saved
 * r0, r3-r12.
 */
#include <elf.h>
#include <string.h>

#include "symbol-get-internal.h"
#include "util/util.h"

#ifndef EM_PPC64
#define EM_PPC64 21
#endif

enum { SP = 1, R3 = 3 };

/* R_PPC64_* (64-bit ELF ABI for the Power Architecture) */
enum {
	R_ADDR16_LO = 4,
	R_ADDR16_HA = 6,
	R_TOC16_LO = 48,
	R_ADDR64 = 38,
	R_TOC16_HA = 50,
	R_TOC16_LO_DS = 64,
};

/* bc/bclr/bcctr: whether BO says "branch always". */
static bool bo_always(uint32_t i)
{
	return (((i >> 21) & 0x14) == 0x14);
}

static bool decode(const struct sg_code *c, uint64_t off, struct sg_insn *in)
{
	uint32_t i;
	unsigned op, rt, ra, rb, xo;

	if (!sg_insn_fetch32(c, off, in, &i))
		return false;
	op = i >> 26;
	rt = (i >> 21) & 31;
	ra = (i >> 16) & 31;
	rb = (i >> 11) & 31;
	xo = (i >> 1) & 1023;

	switch (op) {
	case 18: /* b, bl */
		in->flow = (i & 1) ? SG_CALL : SG_JUMP;
		if (i & 2)
			return false; /* absolute */
		sg_set_target(in, off, kp_sext(i & 0x03fffffc, 26), 0);
		return true;
	case 16: /* bc */
		if (i & 3)
			return false; /* absolute or linking */
		in->flow = bo_always(i) ? SG_JUMP : SG_CJUMP;
		sg_set_target(in, off, kp_sext(i & 0xfffc, 16), 0);
		return true;
	case 19:
		if (xo == 16 || xo == 528 || xo == 560) { /* bclr, bcctr, bctar */
			if (i & 1)
				in->flow = SG_CALL;
			else if (bo_always(i))
				in->flow = SG_STOP; /* blr, bctr (indirect tail call) */
			/* else a conditional return: falls through */
			return true;
		}
		if (xo == 18 || xo == 274 || xo == 50) /* rfid, hrfid, rfi */
			in->flow = SG_STOP;
		return true; /* condition register logic, isync */
	case 2:		     /* tdi */
	case 3:		     /* twi */
		if (rt == 31)
			in->flow = SG_STOP; /* unconditional trap: BUG() */
		return true;
	case 10: /* cmpli */
	case 11: /* cmpi */
		return true;
	case 14: /* addi */
		if (ra == 0) {
			in->def_reg = (int8_t)rt;
			in->def = SG_DEF_CONST; /* li */
		} else if (ra == SP) {
			in->def_reg = (int8_t)rt;
			in->def = SG_DEF_STACK;
		} else if ((i & 0xffff) == 0) {
			in->def_reg = (int8_t)rt;
			in->def = SG_DEF_ADDR_OR_COPY; /* @toc@l / @l, or rT = rA */
			in->src_reg = (int8_t)ra;
			in->reloc_off = (uint32_t)off; /* little-endian: the low halfword */
		} else {
			in->def_reg = (int8_t)rt;
			in->def = SG_DEF_OTHER;
		}
		return true;
	case 15: /* addis: the high half */
		in->def_reg = (int8_t)rt;
		in->def = ra == 0 ? SG_DEF_CONST : SG_DEF_OTHER;
		return true;
	case 31:
		if (xo == 444 && rt == rb) { /* mr rA, rS */
			in->def_reg = (int8_t)ra;
			in->def = SG_DEF_COPY;
			in->src_reg = (int8_t)rt;
			return true;
		}
		if (xo == 4 && rt == 31) { /* tw 31: trap */
			in->flow = SG_STOP;
			return true;
		}
		if (xo == 0 || xo == 32 || xo == 4 || xo == 68) /* cmp, cmpl, tw, td */
			return true;
		in->clobbers = SG_REG(rt) | SG_REG(ra);
		return true;
	case 58: /* ld, ldu, lwa */
		if ((i & 3) == 0 && ra != SP) {
			/* ld rT, sym@toc@l(rA): a .toc slot holding an address */
			in->def_reg = (int8_t)rt;
			in->def = SG_DEF_ADDR;
			in->reloc_off = (uint32_t)off;
			return true;
		}
		in->clobbers = SG_REG(rt) | SG_REG(ra);
		return true;
	case 56: /* lq */
		in->clobbers = SG_REG(rt) | SG_REG((rt + 1) & 31) | SG_REG(ra);
		return true;
	case 17: /* sc */
		in->clobbers = 0x1ff9;
		return true;
	case 1: /* prefixed (ISA 3.1) */
	case 0:
		return false;
	default:
		/*
		 * Loads write RT (and RA for the update forms), stores RA for
		 * the update forms, the immediate logical and rotate forms RA,
		 * the arithmetic forms RT: both fields, conservatively.
		 * Floating point and vector forms: FPR/VR fields, harmlessly.
		 */
		in->clobbers = SG_REG(rt) | SG_REG(ra);
		if (op == 46) /* lmw */
			in->clobbers |= ~(uint32_t)0 << rt;
		return true;
	}
}

static enum sg_rkind reloc_kind(uint32_t type)
{
	switch (type) {
	case R_TOC16_LO:
	case R_TOC16_HA:
	case R_ADDR16_LO:
	case R_ADDR16_HA:
	case R_ADDR64: /* in a .toc slot */
		return SG_RK_ADDR;
	case R_TOC16_LO_DS:
		return SG_RK_INDIRECT;
	default:
		return SG_RK_OTHER;
	}
}

const struct sg_arch kp_sg_ppc64le = {
	.name = "ppc64el",
	.machine = EM_PPC64,
	.is64 = true,
	.arg_reg = R3,
	.ret_reg = R3,
	.call_clobbers = 0x1ff9, /* r0, r3-r12 */
	.decode = decode,
	.min_insn = 4,
	.reloc_kind = reloc_kind,
};
