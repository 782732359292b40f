// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * 32-bit ARM (armhf, armel) backend for the symbol_get() tracer: ARM (A32)
 * and Thumb-2 (T32) code, told apart by the $a/$t/$d mapping symbols;
 * little-endian; SHT_REL relocations (addends in the fields).
 *
 * Precise definitions: movt/movw rD, #:upper16:/#:lower16:sym
 * [R_ARM_MOVT_ABS / R_ARM_MOVW_ABS_NC, R_ARM_THM_*: the relocation names the
 * full address], ldr rD, [pc, #imm] (a literal pool word with R_ARM_ABS32),
 * mov rD, rM, add rD, sp|fp, #imm (a stack buffer), mov constants. Every
 * other instruction is decoded as writing the register fields it may write;
 * a conditional instruction (ARM condition field, Thumb-2 IT block) may also
 * leave its destination alone (sg_insn.cond). Calls: bl/blx [R_ARM_CALL, R_ARM_THM_CALL],
 * blx rM; tail calls: b [R_ARM_JUMP24, R_ARM_THM_JUMP24]. First argument r0,
 * return r0, caller-saved r0-r3, r12 and lr.
 */
#include <elf.h>
#include <string.h>

#include "symbol-get-internal.h"
#include "util/util.h"

enum { R0 = 0, FP = 11, IP = 12, SP = 13, LR = 14, PC = 15 };

/* R_ARM_* (ELF for the Arm Architecture) */
enum {
	R_PC24 = 1,
	R_ABS32 = 2,
	R_THM_CALL = 10,
	R_CALL = 28,
	R_JUMP24 = 29,
	R_THM_JUMP24 = 30,
	R_MOVW_ABS_NC = 43,
	R_MOVT_ABS = 44,
	R_THM_MOVW_ABS_NC = 47,
	R_THM_MOVT_ABS = 48,
	R_THM_JUMP19 = 51,
};

static void def(struct sg_insn *in, unsigned rd, enum sg_def d)
{
	in->def_reg = (int8_t)rd;
	in->def = (uint8_t)d;
}

/* A conditional instruction may leave its destination alone (sg_insn.cond). */
static void make_conditional(struct sg_insn *in)
{
	if (in->def_reg >= 0)
		in->cond = true;
	if (in->flow == SG_STOP || (in->flow == SG_JUMP && !in->has_target))
		in->flow = SG_SEQ; /* a conditional return falls through */
	else if (in->flow == SG_JUMP)
		in->flow = SG_CJUMP;
}

/* Loads of a register list: pc in it is a return. */
static void load_list(struct sg_insn *in, uint32_t list)
{
	in->clobbers |= list & 0x7fff;
	if (list & 0x8000)
		in->flow = SG_STOP;
}

/* ------------------------------------------------------------------ A32 */

static bool decode_a32(const struct sg_code *c, uint64_t off, struct sg_insn *in)
{
	uint32_t i, cond;
	unsigned rd, rn, rm;

	if ((off & 3) || !sg_word32(c, off, &i))
		return false;
	in->len = 4;
	cond = i >> 28;
	rd = (i >> 12) & 15;
	rn = (i >> 16) & 15;
	rm = i & 15;
	if (cond == 15) {
		if ((i & 0x0e000000) == 0x0a000000) { /* blx imm */
			in->flow = SG_CALL;
			sg_set_target(in, off, kp_sext(i, 24) * 4 + ((i >> 23) & 2), 8);
			return true;
		}
		return (i & 0x0e500000) != 0x08100000; /* rfe: not followed */
	}
	if ((i & 0x0fffffff) == 0x07f001f0 || (i & 0x0ff000f0) == 0x07f000f0) {
		in->flow = SG_STOP; /* udf: BUG() */
		return true;
	}
	if ((i & 0x0fb00000) == 0x03200000)
		return true;		      /* msr #imm, hints (nop, yield, ...) */
	if ((i & 0x0e000000) == 0x0a000000) { /* b, bl */
		in->flow = (i & 0x01000000) ? SG_CALL : SG_JUMP;
		sg_set_target(in, off, kp_sext(i, 24) * 4 + 8, 8);
	} else if ((i & 0x0ffffff0) == 0x012fff10) { /* bx rM */
		in->flow = SG_STOP;
	} else if ((i & 0x0ffffff0) == 0x012fff30) { /* blx rM */
		in->flow = SG_CALL;
	} else if ((i & 0x0e000000) == 0x08000000) { /* ldm/stm */
		if (i & 0x00100000)
			load_list(in, i & 0xffff);
		if (i & 0x00200000)
			in->clobbers |= SG_REG(rn);
	} else if ((i & 0x0c000000) == 0x04000000) { /* ldr/str, media */
		bool load = i & 0x00100000;

		if ((i & 0x02000010) == 0x02000010) { /* media: bitfield, extend, ... */
			in->clobbers |= SG_REG(rd) | SG_REG(rn);
		} else if (load && rn == PC && (i & 0x03600000) == 0x01000000 &&
			   !(i & 0x00400000)) {
			/* ldr rD, [pc, #+-imm12]: a literal pool word */
			int64_t imm = (int64_t)(i & 0xfff);

			def(in, rd, SG_DEF_ADDR);
			in->reloc_off =
				(uint32_t)(off + 8 + (uint64_t)((i & 0x00800000) ? imm : -imm));
			if (rd == PC)
				return false;
		} else {
			if (load && rd == PC)
				in->flow = SG_STOP; /* pop {pc}, ldr pc, [...] */
			else if (load)
				in->clobbers |= SG_REG(rd);
			if (!(i & 0x01000000) || (i & 0x00200000))
				in->clobbers |= SG_REG(rn); /* writeback */
		}
	} else if ((i & 0x0c000000) == 0x0c000000) { /* coprocessor, svc */
		if ((i & 0x0f000000) == 0x0f000000)
			in->clobbers |= 0x500f; /* svc */
		else
			in->clobbers |=
				SG_REG(rd) | SG_REG(rn); /* mrc, vmov, mrrc, ldc writeback */
	} else if ((i & 0x0f0000f0) == 0x00000090 || (i & 0x0e000090) == 0x00000090 ||
		   (i & 0x0f900000) == 0x01000000) {
		/* multiply, extra load/store (ldrd: rd + 1), misc (mrs, clz, ...) */
		in->clobbers |= SG_REG(rd) | SG_REG((rd + 1) & 15) | SG_REG(rn);
	} else if ((i & 0x0ff00000) == 0x03000000 || (i & 0x0ff00000) == 0x03400000) {
		def(in, rd, SG_DEF_ADDR); /* movw, movt */
		in->reloc_off = (uint32_t)off;
	} else { /* data processing */
		unsigned opc = (i >> 21) & 15;

		if (opc >= 8 && opc <= 11 && (i & 0x00100000))
			return true; /* tst, teq, cmp, cmn */
		if (rd == PC) {
			in->flow = SG_STOP; /* mov pc, lr; add pc, ... (a jump table) */
		} else if ((i & 0x0fef0ff0) == 0x01a00000) { /* mov rD, rM */
			def(in, rd, SG_DEF_COPY);
			in->src_reg = (int8_t)rm;
		} else if ((opc == 4 || opc == 2) && (i & 0x02000000) && (rn == SP || rn == FP)) {
			def(in, rd, SG_DEF_STACK); /* add/sub rD, sp|fp, #imm */
		} else if ((opc == 13 || opc == 15) && (i & 0x02000000)) {
			def(in, rd, SG_DEF_CONST); /* mov/mvn rD, #imm */
		} else {
			in->clobbers |= SG_REG(rd);
		}
	}
	if (cond != 14)
		make_conditional(in);
	return true;
}

/* ------------------------------------------------------------------ T32 */

static bool decode_t16(uint64_t off, uint32_t h, struct sg_insn *in)
{
	unsigned r8 = (h >> 8) & 7, r0 = h & 7;

	in->len = 2;
	switch (h >> 11) {
	case 0:
		if ((h & 0xffc0) == 0) { /* movs rD, rM (lsls #0) */
			def(in, r0, SG_DEF_COPY);
			in->src_reg = (int8_t)((h >> 3) & 7);
			return true;
		}
		/* fall through */
	case 1:
	case 2:
	case 3: /* shifts, add/sub */
		in->clobbers |= SG_REG(r0);
		return true;
	case 4: /* movs rD, #imm8 */
		def(in, r8, SG_DEF_CONST);
		return true;
	case 5: /* cmp */
		return true;
	case 6:
	case 7: /* adds/subs #imm8 */
		in->clobbers |= SG_REG(r8);
		return true;
	case 8:
		if ((h & 0xfc00) == 0x4000) { /* data processing */
			unsigned op = (h >> 6) & 15;

			if (op != 8 && op != 10 && op != 11)
				in->clobbers |= SG_REG(r0);
			return true;
		}
		{
			unsigned rdn = (h & 7) | ((h >> 4) & 8), rm = (h >> 3) & 15;

			switch ((h >> 8) & 3) {
			case 0: /* add */
				if (rdn == PC)
					in->flow = SG_STOP;
				else
					in->clobbers |= SG_REG(rdn);
				return true;
			case 1: /* cmp */
				return true;
			case 2: /* mov */
				if (rdn == PC) {
					in->flow = SG_STOP;
				} else {
					def(in, rdn, SG_DEF_COPY);
					in->src_reg = (int8_t)rm;
				}
				return true;
			default: /* bx, blx */
				in->flow = (h & 0x80) ? SG_CALL : SG_STOP;
				return true;
			}
		}
	case 9: /* ldr rT, [pc, #imm8 * 4] */
		def(in, r8, SG_DEF_ADDR);
		in->reloc_off = (uint32_t)(((off + 4) & ~(uint64_t)3) + (h & 0xff) * 4);
		return true;
	case 10:
	case 11: /* load/store, register offset */
		if (((h >> 9) & 7) >= 3)
			in->clobbers |= SG_REG(r0);
		return true;
	case 12:
	case 13:
	case 14:
	case 15:
	case 16:
	case 17: /* ldr/str, ldrb/strb, ldrh/strh #imm */
		if (h & 0x0800)
			in->clobbers |= SG_REG(r0);
		return true;
	case 18:
	case 19: /* ldr/str [sp, #imm] */
		if (h & 0x0800)
			in->clobbers |= SG_REG(r8);
		return true;
	case 20: /* adr */
		def(in, r8, SG_DEF_OTHER);
		return true;
	case 21: /* add rD, sp, #imm */
		def(in, r8, SG_DEF_STACK);
		return true;
	case 22:
	case 23:			      /* miscellaneous */
		if ((h & 0xf500) == 0xb100) { /* cbz, cbnz */
			in->flow = SG_CJUMP;
			in->has_target = true;
			in->target =
				(uint32_t)(off + 4 + (((h >> 9) & 1) << 6) + ((h >> 3) & 31) * 2);
			return true;
		}
		if ((h & 0xfe00) == 0xbc00) { /* pop */
			load_list(in, (h & 0xff) | ((h & 0x100) << 7));
			return true;
		}
		if ((h & 0xff00) == 0xbe00) { /* bkpt */
			in->flow = SG_STOP;
			return true;
		}
		if ((h & 0xff00) == 0xb200 || (h & 0xff00) == 0xba00)
			in->clobbers |= SG_REG(r0); /* extend, rev */
		return true; /* sp adjustment, push, it (see decode), hints */
	case 24:
	case 25: /* stm, ldm */
		if (h & 0x0800)
			in->clobbers |= h & 0xff;
		in->clobbers |= SG_REG(r8);
		return true;
	case 26:
	case 27: /* b<cond>, udf, svc */
		if (((h >> 8) & 15) == 14) {
			in->flow = SG_STOP;
		} else if (((h >> 8) & 15) == 15) {
			in->clobbers |= 0x500f;
		} else {
			in->flow = SG_CJUMP;
			in->has_target = true;
			in->target = (uint32_t)(off + 4 + (uint64_t)(kp_sext(h & 0xff, 8) * 2));
		}
		return true;
	case 28: /* b */
		in->flow = SG_JUMP;
		in->has_target = true;
		in->target = (uint32_t)(off + 4 + (uint64_t)(kp_sext(h & 0x7ff, 11) * 2));
		return true;
	default:
		return false;
	}
}

static int64_t t32_branch_imm(uint32_t h1, uint32_t h2, bool cond)
{
	uint32_t s = (h1 >> 10) & 1, j1 = (h2 >> 13) & 1, j2 = (h2 >> 11) & 1;

	if (cond)
		return kp_sext(
			s << 20 | j2 << 19 | j1 << 18 | (h1 & 0x3f) << 12 | (h2 & 0x7ff) << 1, 21);
	return kp_sext(s << 24 | (uint32_t) !(j1 ^ s) << 23 | (uint32_t) !(j2 ^ s) << 22 |
			       (h1 & 0x3ff) << 12 | (h2 & 0x7ff) << 1,
		       25);
}

static bool decode_t32(uint64_t off, uint32_t h1, uint32_t h2, struct sg_insn *in)
{
	unsigned rn = h1 & 15, rt = (h2 >> 12) & 15, rd8 = (h2 >> 8) & 15;

	in->len = 4;
	if ((h1 & 0xf800) == 0xf000 && (h2 & 0x8000)) { /* branches, misc control */
		if ((h2 & 0x5000) == 0x5000 || (h2 & 0x5000) == 0x4000) { /* bl, blx */
			in->flow = SG_CALL;
			sg_set_target(in, off, 4 + t32_branch_imm(h1, h2, false), 4);
		} else if ((h2 & 0x5000) == 0x1000) { /* b.w */
			in->flow = SG_JUMP;
			sg_set_target(in, off, 4 + t32_branch_imm(h1, h2, false), 4);
		} else if (((h1 >> 6) & 15) < 14) { /* b<cond>.w */
			in->flow = SG_CJUMP;
			sg_set_target(in, off, 4 + t32_branch_imm(h1, h2, true), 4);
		} else if ((h1 & 0xfff0) == 0xf7f0 && (h2 & 0xf000) == 0xa000) {
			in->flow = SG_STOP; /* udf.w */
		} else {
			in->clobbers |= SG_REG(rd8); /* mrs; msr, hints, barriers write none */
		}
		return true;
	}
	if ((h1 & 0xf800) == 0xf000) { /* data processing, immediate */
		if ((h1 & 0xfbf0) == 0xf240 || (h1 & 0xfbf0) == 0xf2c0) { /* movw, movt */
			def(in, rd8, SG_DEF_ADDR);
			in->reloc_off = (uint32_t)off;
		} else if (rd8 == PC) {
			return true; /* tst, teq, cmp, cmn */
		} else if (rn == SP && ((h1 & 0xfbe0) == 0xf100 || (h1 & 0xfbf0) == 0xf200)) {
			def(in, rd8, SG_DEF_STACK); /* add.w/addw rD, sp, #imm */
		} else {
			in->clobbers |= SG_REG(rd8);
		}
		return true;
	}
	if ((h1 & 0xfe40) == 0xe800) { /* ldm, stm */
		if (h1 & 0x10)
			load_list(in, h2);
		if (h1 & 0x20)
			in->clobbers |= SG_REG(rn);
		return true;
	}
	if ((h1 & 0xfe00) == 0xe800) { /* exclusives, ldrd/strd, tbb/tbh */
		if ((h1 & 0xfff0) == 0xe8d0 && (h2 & 0xffe0) == 0xf000) {
			in->flow = SG_STOP; /* a jump table */
			return true;
		}
		in->clobbers |= SG_REG(rt) | SG_REG(rd8) | SG_REG(rn) | SG_REG(h2 & 15);
		return true;
	}
	if ((h1 & 0xfe00) == 0xf800) { /* loads and stores */
		bool load = h1 & 0x10;

		if (load && rn == PC && (h1 & 0xff7f) == 0xf85f) { /* ldr rT, [pc, #+-imm12] */
			int64_t imm = (int64_t)(h2 & 0xfff);

			def(in, rt, SG_DEF_ADDR);
			in->reloc_off = (uint32_t)(((off + 4) & ~(uint64_t)3) +
						   (uint64_t)((h1 & 0x80) ? imm : -imm));
			return rt != PC;
		}
		if (load && rt == PC && (h1 & 0x60) == 0x40)
			in->flow = SG_STOP; /* ldr pc, [sp], #4 */
		else if (load)
			in->clobbers |= SG_REG(rt);
		if (!(h1 & 0x80) && (h2 & 0x0900) == 0x0900)
			in->clobbers |= SG_REG(rn); /* writeback */
		return true;
	}
	if ((h1 & 0xfe00) == 0xea00) {			  /* data processing, shifted register */
		if (h1 == 0xea4f && (h2 & 0x70f0) == 0) { /* mov.w rD, rM */
			def(in, rd8, SG_DEF_COPY);
			in->src_reg = (int8_t)(h2 & 15);
		} else if (rd8 != PC) {
			in->clobbers |= SG_REG(rd8);
		}
		return true;
	}
	if ((h1 & 0xff00) == 0xfa00 || (h1 & 0xff00) == 0xfb00) { /* shifts, extends, multiplies */
		in->clobbers |= SG_REG(rd8) | SG_REG(rt);
		return true;
	}
	if ((h1 & 0xec00) == 0xec00) { /* coprocessor, VFP, NEON */
		in->clobbers |= SG_REG(rt) | SG_REG(rn);
		return true;
	}
	return false;
}

/* One Thumb instruction at @off (not an IT). */
static bool decode_t(const struct sg_code *c, uint64_t off, struct sg_insn *in)
{
	uint32_t h1;

	if (c->size - off < 2 || (off & 1))
		return false;
	h1 = kp_load16(c->data + off, false);
	if ((h1 >> 11) >= 0x1d) {
		if (c->size - off < 4)
			return false;
		return decode_t32(off, h1, kp_load16(c->data + off + 2, false), in);
	}
	return decode_t16(off, h1, in);
}

static bool decode(const struct sg_code *c, uint64_t off, struct sg_insn *in)
{
	if (!sg_insn_begin(c, off, 1, in))
		return false;
	if (c->mode == SG_MODE_THUMB) {
		uint32_t h;

		if (c->size - off < 2)
			return false;
		h = kp_load16(c->data + off, false);
		if (c->state && *c->state) {
			/* inside an IT block: conditional */
			(*c->state)--;
			if (!decode_t(c, off, in))
				return false;
			make_conditional(in);
			return true;
		}
		if ((h & 0xff00) == 0xbf00 && (h & 15)) {
			/* it: the next 1 to 4 instructions are conditional */
			if (!c->state)
				return false;
			*c->state = 4 - (unsigned)__builtin_ctz(h & 15);
			in->len = 2;
			return true;
		}
		return decode_t(c, off, in);
	}
	return decode_a32(c, off, in);
}

/* The addend of a REL relocation: the value already in its field. */
static bool rel_addend(const struct sg_code *c, uint64_t off, uint32_t type, int64_t *addend)
{
	uint32_t i, h1, h2;

	if (!sg_word32(c, off, &i))
		return false;
	h1 = i & 0xffff;
	h2 = i >> 16;
	switch (type) {
	case R_ABS32:
	case 3: /* R_ARM_REL32 */
		*addend = (int32_t)i;
		return true;
	case R_PC24:
	case R_CALL:
	case R_JUMP24:
		*addend = kp_sext(i, 24) * 4;
		return true;
	case R_MOVW_ABS_NC:
	case R_MOVT_ABS:
		*addend = kp_sext(((i >> 4) & 0xf000) | (i & 0xfff), 16);
		return true;
	case R_THM_MOVW_ABS_NC:
	case R_THM_MOVT_ABS:
		*addend = kp_sext((h1 & 15) << 12 | ((h1 >> 10) & 1) << 11 | ((h2 >> 12) & 7) << 8 |
					  (h2 & 0xff),
				  16);
		return true;
	case R_THM_CALL:
	case R_THM_JUMP24:
		*addend = t32_branch_imm(h1, h2, false);
		return true;
	case R_THM_JUMP19:
		*addend = t32_branch_imm(h1, h2, true);
		return true;
	default:
		return false;
	}
}

static enum sg_rkind reloc_kind(uint32_t type)
{
	switch (type) {
	case R_ABS32: /* a literal pool word */
	case R_MOVW_ABS_NC:
	case R_MOVT_ABS:
	case R_THM_MOVW_ABS_NC:
	case R_THM_MOVT_ABS:
		return SG_RK_ADDR;
	default:
		return SG_RK_OTHER;
	}
}

const struct sg_arch kp_sg_arm = {
	.name = "arm",
	.machine = EM_ARM,
	.arg_reg = R0,
	.ret_reg = R0,
	.call_clobbers = 0xf | SG_REG(IP) | SG_REG(LR),
	.decode = decode,
	.min_insn = 2,
	.reloc_kind = reloc_kind,
	.rel_addend = rel_addend,
	.mapping_symbols = true,
	.thumb_bit = true,
};
