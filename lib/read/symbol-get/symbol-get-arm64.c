// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * AArch64 decoder for the symbol_get() tracer. Fixed 4-byte instructions.
 *
 * Precise definitions: add Xd, Xn, #:lo12:sym with R_AARCH64_ADD_ABS_LO12_NC
 * (the second half of adrp Xd, sym [R_AARCH64_ADR_PREL_PG_HI21] + add; the
 * relocation of the add names the full address S + A), mov Xd, Xm (orr
 * Xd, xzr, Xm), add Xd, sp|x29, #imm (a stack buffer), movz/movn constants.
 * Calls: bl (R_AARCH64_CALL26), blr; tail calls: b (R_AARCH64_JUMP26).
 * First argument x0, return x0, caller-saved x0-x18 and x30.
 */
#include <elf.h>
#include <string.h>

#include "symbol-get-internal.h"
#include "util/util.h"

static uint64_t gpr(unsigned r)
{
	return r < 31 ? SG_REG(r) : 0;
}

static bool decode(const struct sg_code *c, uint64_t off, struct sg_insn *in)
{
	uint32_t i;
	unsigned rd, rn, rt2;

	if (!sg_insn_fetch32(c, off, in, &i))
		return false;
	rd = i & 31;
	rn = (i >> 5) & 31;
	rt2 = (i >> 10) & 31;

	/* branches, exceptions, system */
	if ((i & 0x7c000000) == 0x14000000) { /* b / bl */
		in->flow = (i & 0x80000000) ? SG_CALL : SG_JUMP;
		sg_set_target(in, off, kp_sext(i, 26) * 4, 0);
		if (in->flow == SG_CALL)
			in->clobbers |= SG_REG(30);
		return true;
	}
	if ((i & 0xff000010) == 0x54000000) { /* b.cond */
		in->flow = (i & 15) == 14 ? SG_JUMP : SG_CJUMP;
		sg_set_target(in, off, kp_sext(i >> 5, 19) * 4, 0);
		return true;
	}
	if ((i & 0x7e000000) == 0x34000000) { /* cbz / cbnz */
		in->flow = SG_CJUMP;
		sg_set_target(in, off, kp_sext(i >> 5, 19) * 4, 0);
		return true;
	}
	if ((i & 0x7e000000) == 0x36000000) { /* tbz / tbnz */
		in->flow = SG_CJUMP;
		sg_set_target(in, off, kp_sext(i >> 5, 14) * 4, 0);
		return true;
	}
	if ((i & 0xfe000000) == 0xd6000000) { /* br, blr, ret, eret (and PAC forms) */
		unsigned opc = (i >> 21) & 15;

		if (opc == 1) {
			in->flow = SG_CALL;
			in->clobbers |= SG_REG(30);
		} else {
			in->flow = SG_STOP;
		}
		return true;
	}
	if ((i & 0xffe0001f) == 0xd4200000) { /* brk: BUG() */
		in->flow = SG_STOP;
		return true;
	}
	if ((i & 0xfff00000) == 0xd5300000) { /* mrs */
		in->clobbers |= gpr(rd);
		return true;
	}
	if ((i & 0xffc00000) == 0xd5000000 || (i & 0xfe000000) == 0xd4000000 ||
	    (i & 0xffc00000) == 0xd5000000)
		return true;		      /* hints, barriers, msr, svc/hvc/smc */
	if ((i & 0xfff80000) == 0xd5080000) { /* sys/sysl */
		if (i & 0x00200000)
			in->clobbers |= gpr(rd);
		return true;
	}

	/* data processing, immediate */
	if ((i & 0x1c000000) == 0x10000000) {
		if ((i & 0xff800000) == 0x91000000) { /* add Xd, Xn, #imm{, lsl 12} */
			if (rd == 31)
				return true; /* sp adjustment */
			in->def_reg = (int8_t)rd;
			if (rn == 31 || rn == 29) {
				in->def = SG_DEF_STACK; /* sp or frame pointer based buffer */
			} else {
				/* add Xd, Xn, #:lo12:sym: the driver needs the relocation here */
				in->def = SG_DEF_ADDR;
				in->reloc_off = off;
				in->reloc_adj = 0;
			}
			return true;
		}
		if ((i & 0x1f000000) == 0x10000000) { /* adr / adrp */
			in->def_reg = rd < 31 ? (int8_t)rd : -1;
			in->def = SG_DEF_OTHER;
			return true;
		}
		if ((i & 0x1f800000) == 0x12800000) { /* movn/movz/movk */
			unsigned opc = (i >> 29) & 3;

			in->def_reg = rd < 31 ? (int8_t)rd : -1;
			in->def = opc == 3 ? SG_DEF_OTHER : SG_DEF_CONST;
			return true;
		}
		in->clobbers |= gpr(rd);
		return true;
	}
	/* loads and stores */
	if ((i & 0x0a000000) == 0x08000000) {
		bool simd = (i >> 26) & 1;
		bool load = false;
		bool pair = (i & 0x3a000000) == 0x28000000;

		if ((i & 0x3b000000) == 0x18000000) { /* ldr literal */
			if (!simd && ((i >> 30) & 3) != 3)
				in->clobbers |= gpr(rd);
			return true;
		}
		if (pair) {
			load = (i >> 22) & 1;
			if (load && !simd)
				in->clobbers |= gpr(rd) | gpr(rt2);
			if (((i >> 23) & 3) == 1 || ((i >> 23) & 3) == 3)
				in->clobbers |= gpr(rn);
			return true;
		}
		if ((i & 0x3b000000) == 0x38000000 || (i & 0x3b000000) == 0x39000000) {
			unsigned opc = (i >> 22) & 3;
			unsigned size = (i >> 30) & 3;

			load = opc != 0 && !(size == 3 && opc == 2); /* prfm */
			if ((i & 0x3b200000) == 0x38200000 && ((i >> 10) & 3) == 0) {
				/* atomic memory operations: write Rt */
				if (!simd)
					in->clobbers |= gpr(rd);
				return true;
			}
			if (load && !simd)
				in->clobbers |= gpr(rd);
			if ((i & 0x3b200000) == 0x38000000 &&
			    (((i >> 10) & 3) == 1 || ((i >> 10) & 3) == 3))
				in->clobbers |= gpr(rn);
			return true;
		}
		/* exclusives, acquire/release, CAS, SIMD structures: assume Rt and Rs written */
		if (!simd)
			in->clobbers |= gpr(rd) | gpr((i >> 16) & 31) | gpr(rt2);
		return true;
	}
	/* data processing, register */
	if ((i & 0x0e000000) == 0x0a000000) {
		if ((i & 0x7fe0ffe0) == 0x2a0003e0) { /* mov Wd|Xd, Wm|Xm (orr with zr) */
			if (rd < 31) {
				in->def_reg = (int8_t)rd;
				in->def = SG_DEF_COPY;
				in->src_reg = (int8_t)((i >> 16) & 31);
				if (in->src_reg == 31)
					in->def = SG_DEF_CONST;
			}
			return true;
		}
		in->clobbers |= gpr(rd);
		return true;
	}
	/* SIMD and floating point: only the moves to a general register matter */
	if ((i & 0x0e000000) == 0x0e000000) {
		if ((i & 0x5f20fc00) == 0x1e200000 || (i & 0x9fe08400) == 0x0e000400 ||
		    (i & 0xbfe0fc00) == 0x0e003c00 || (i & 0xbfe0fc00) == 0x0e002c00)
			in->clobbers |= gpr(rd);
		return true;
	}
	return false;
}

const struct sg_arch kp_sg_arm64 = {
	.name = "arm64",
	.machine = EM_AARCH64,
	.is64 = true,
	.arg_reg = 0,
	.ret_reg = 0,
	.call_clobbers = 0x7ffffULL | SG_REG(30),
	.decode = decode,
	.min_insn = 4,
};
