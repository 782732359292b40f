// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * MIPS64 little-endian (mips64el, n64) backend for the symbol_get() tracer.
 * Fixed 4-byte instructions with branch delay slots: a branch or jump and the
 * instruction after it are one record (8 bytes) carrying the delay slot's
 * definition, which takes effect before the transfer.
 *
 * Modules are built with -mlong-calls -msym32: a call of __symbol_get is
 * lui rX, %hi(__symbol_get); daddiu rX, rX, %lo(__symbol_get); jalr rX, and rX
 * may be reused for later calls. Call sites are therefore the jalr whose jump
 * register holds the address of __symbol_get (sg_insn.jump_reg, traced like an
 * argument). Precise definitions: daddiu/addiu rT, rS, %lo(sym)
 * [R_MIPS_LO16: S + A is the address] (the same encoding without relocation is
 * a copy), move (or/daddu with zero), daddiu rT, sp, imm (a stack buffer),
 * li constants. First argument a0 ($4), return v0 ($2), caller-saved at, v0-v1,
 * a0-a7, t0-t3, t8-t9, ra.
 *
 * Debian's octeon flavour is built for Cavium's cnMIPS (-march=octeon, e_flags
 * EF_MIPS_MACH_OCTEON*), whose bbit0/bbit032/bbit1/bbit132 (branch on one bit of rs,
 * with a delay slot) take the LWC2/LDC2/SWC2/SDC2 opcodes; elsewhere (loongson-3's
 * gs464 puts its quad loads and stores there) those stay undecoded.
 */
#include <elf.h>
#include <string.h>

#include "symbol-get-internal.h"
#include "util/util.h"

enum { AT = 1, V0 = 2, A0 = 4, SP = 29, RA = 31 };

/* e_flags EF_MIPS_MACH and its Cavium values (binutils include/elf/mips.h) */
enum {
	MACH_MASK = 0x00ff0000,
	MACH_OCTEON = 0x008b0000,
	MACH_OCTEON2 = 0x008d0000,
	MACH_OCTEON3 = 0x008e0000,
};

static bool is_octeon(uint32_t elf_flags)
{
	uint32_t m = elf_flags & MACH_MASK;

	return m == MACH_OCTEON || m == MACH_OCTEON2 || m == MACH_OCTEON3;
}

static uint32_t gpr(unsigned r)
{
	return r ? SG_REG(r) : 0;
}

static void def(struct sg_insn *in, unsigned r, enum sg_def d)
{
	if (r == 0)
		return;
	in->def_reg = (int8_t)r;
	in->def = (uint8_t)d;
}

enum kind { K_PLAIN, K_BRANCH, K_BAD };

/*
 * One instruction (no delay slot handling): its kind, flow, target and definitions;
 * @octeon: the cnMIPS branches are decoded.
 */
static enum kind decode1(uint64_t off, uint32_t i, struct sg_insn *in, bool octeon)
{
	unsigned op = i >> 26, rs = (i >> 21) & 31, rt = (i >> 16) & 31, rd = (i >> 11) & 31;
	unsigned fn = i & 63;

	switch (op) {
	case 0: /* SPECIAL */
		switch (fn) {
		case 8: /* jr */
			in->flow = SG_STOP;
			return K_BRANCH;
		case 9: /* jalr */
			in->flow = SG_CALL;
			in->jump_reg = (int8_t)rs;
			in->clobbers |= gpr(rd);
			return K_BRANCH;
		case 0x0d: /* break: BUG() */
			in->flow = SG_STOP;
			return K_PLAIN;
		case 0x0c: /* syscall */
		case 0x0f: /* sync */
		case 0x18: /* mult, div: hi/lo */
		case 0x19:
		case 0x1a:
		case 0x1b:
		case 0x1c:
		case 0x1d:
		case 0x1e:
		case 0x1f:
		case 0x11: /* mthi, mtlo */
		case 0x13:
			return K_PLAIN;
		case 0x30: /* conditional traps */
		case 0x31:
		case 0x32:
		case 0x33:
		case 0x34:
		case 0x36:
			return K_PLAIN;
		case 0x25: /* or rd, rs, zero: move */
		case 0x2d: /* daddu rd, rs, zero */
		case 0x21: /* addu */
			if (rt == 0) {
				def(in, rd, SG_DEF_COPY);
				in->src_reg = (int8_t)rs;
				return K_PLAIN;
			}
			/* fall through */
		default:
			in->clobbers |= gpr(rd);
			return K_PLAIN;
		}
	case 1: /* REGIMM: bltz, bgez, bltzal, bgezal (and -likely) */
		if (rt & 0x10) {
			in->flow = SG_CALL;
			in->clobbers |= gpr(RA);
		} else {
			in->flow = SG_CJUMP;
			in->has_target = true;
			in->target = (uint32_t)(off + 4 + (uint64_t)(kp_sext(i, 16) * 4));
		}
		if (rt & 2)
			in->cond = true; /* likely: the delay slot only when taken */
		return K_BRANCH;
	case 2: /* j */
	case 3: /* jal: R_MIPS_26 */
		in->flow = op == 3 ? SG_CALL : SG_JUMP;
		in->reloc_target = true;
		in->reloc_off = (uint32_t)off;
		if (op == 3)
			in->clobbers |= gpr(RA);
		return K_BRANCH;
	case 4:	   /* beq (b when rs = rt = 0) */
	case 5:	   /* bne */
	case 6:	   /* blez */
	case 7:	   /* bgtz */
	case 0x14: /* the -likely forms */
	case 0x15:
	case 0x16:
	case 0x17:
		in->flow = op == 4 && rs == 0 && rt == 0 ? SG_JUMP : SG_CJUMP;
		in->has_target = true;
		in->target = (uint32_t)(off + 4 + (uint64_t)(kp_sext(i, 16) * 4));
		if (op >= 0x14)
			in->cond = true;
		return K_BRANCH;
	case 0x32: /* Octeon bbit0 rs, bit, offset (lwc2 elsewhere) */
	case 0x36: /* bbit032: bit + 32 (ldc2) */
	case 0x3a: /* bbit1 (swc2) */
	case 0x3e: /* bbit132 (sdc2) */
		if (!octeon)
			return K_BAD;
		in->flow = SG_CJUMP;
		in->has_target = true;
		in->target = (uint32_t)(off + 4 + (uint64_t)(kp_sext(i, 16) * 4));
		return K_BRANCH;
	case 9:			/* addiu */
	case 0x19:		/* daddiu */
		if (rs == SP) { /* s8 is an ordinary register without frame pointers */
			def(in, rt, SG_DEF_STACK);
		} else if (rs == 0) {
			def(in, rt, SG_DEF_CONST);
		} else if ((i & 0xffff) == 0) {
			def(in, rt, SG_DEF_ADDR_OR_COPY); /* %lo(sym), or a copy */
			in->src_reg = (int8_t)rs;
			in->reloc_off = (uint32_t)off;
		} else {
			def(in, rt, SG_DEF_OTHER);
		}
		return K_PLAIN;
	case 0x0f: /* lui: the high half */
		def(in, rt, SG_DEF_OTHER);
		return K_PLAIN;
	case 8:	   /* addi */
	case 0x0a: /* slti */
	case 0x0b: /* sltiu */
	case 0x0c: /* andi */
	case 0x0d: /* ori */
	case 0x0e: /* xori */
	case 0x18: /* daddi */
	case 0x1a: /* ldl, ldr */
	case 0x1b:
	case 0x20: /* lb ... lwu */
	case 0x21:
	case 0x22:
	case 0x23:
	case 0x24:
	case 0x25:
	case 0x26:
	case 0x27:
	case 0x30: /* ll, lld, ld */
	case 0x34:
	case 0x37:
	case 0x38: /* sc, scd: write rt */
	case 0x3c:
		in->clobbers |= gpr(rt);
		return K_PLAIN;
	case 0x28: /* stores */
	case 0x29:
	case 0x2a:
	case 0x2b:
	case 0x2c:
	case 0x2d:
	case 0x2e:
	case 0x3f:
	case 0x2f: /* cache */
	case 0x33: /* pref */
	case 0x31: /* lwc1, ldc1, swc1, sdc1: FP registers */
	case 0x35:
	case 0x39:
	case 0x3d:
		return K_PLAIN;
	case 0x10:			     /* COP0 */
	case 0x11:			     /* COP1 */
	case 0x12:			     /* COP2 */
		if (op == 0x11 && rs == 8) { /* bc1f, bc1t */
			in->flow = SG_CJUMP;
			in->has_target = true;
			in->target = (uint32_t)(off + 4 + (uint64_t)(kp_sext(i, 16) * 4));
			return K_BRANCH;
		}
		if (op == 0x10 && i == 0x42000018) { /* eret */
			in->flow = SG_STOP;
			return K_PLAIN;
		}
		if (rs < 4) /* mfc, dmfc, cfc: write rt */
			in->clobbers |= gpr(rt);
		return K_PLAIN;
	case 0x1c: /* SPECIAL2: mul, clz, ... */
		in->clobbers |= gpr(rd) | gpr(rt);
		return K_PLAIN;
	case 0x1f: /* SPECIAL3: ext, ins, bshfl, rdhwr */
		in->clobbers |= gpr(rd) | gpr(rt);
		return K_PLAIN;
	default:
		return K_BAD;
	}
}

/* sg_insn_fetch32() of the instruction at @off (4-aligned), no jump register yet. */
static bool fetch(const struct sg_code *c, uint64_t off, struct sg_insn *in, uint32_t *w)
{
	if (!sg_insn_fetch32(c, off, in, w) || (off & 3))
		return false;
	in->jump_reg = -1;
	return true;
}

static bool decode(const struct sg_code *c, uint64_t off, struct sg_insn *in)
{
	struct sg_insn ds;
	enum kind k;
	uint32_t w;

	if (!fetch(c, off, in, &w))
		return false;
	k = decode1(off, w, in, is_octeon(c->elf_flags));
	if (k == K_BAD)
		return false;
	if (k == K_PLAIN) {
		in->cond = false;
		return true;
	}
	/* a branch: the delay slot executes first (for -likely, only when taken) */
	if (!fetch(c, off + 4, &ds, &w) || decode1(off + 4, w, &ds, false) != K_PLAIN ||
	    ds.flow != SG_SEQ)
		return false;
	in->len = 8;
	in->clobbers |= ds.clobbers;
	if (ds.def_reg >= 0) {
		if (in->reloc_target && (ds.def == SG_DEF_ADDR || ds.def == SG_DEF_ADDR_OR_COPY))
			in->reloc_target = false; /* one relocated field per record: the def's */
		in->def_reg = ds.def_reg;
		in->def = ds.def;
		in->src_reg = ds.src_reg;
		if (ds.def == SG_DEF_ADDR || ds.def == SG_DEF_ADDR_OR_COPY)
			in->reloc_off = ds.reloc_off;
	} else {
		in->cond = false;
	}
	return true;
}

static enum sg_rkind reloc_kind(uint32_t type)
{
	switch (type) {
	case R_MIPS_LO16:
	case R_MIPS_HI16:
		return SG_RK_ADDR;
	case R_MIPS_NONE:
		return SG_RK_IGNORE;
	default:
		return SG_RK_OTHER;
	}
}

const struct sg_arch kp_sg_mips64el = {
	.name = "mips64el",
	.machine = EM_MIPS,
	.is64 = true,
	.arg_reg = A0,
	.ret_reg = V0,
	.call_clobbers = SG_REG(AT) | 0xffcULL | 0xf000ULL | SG_REG(24) | SG_REG(25) | SG_REG(RA),
	.decode = decode,
	.min_insn = 4,
	.reloc_kind = reloc_kind,
	.delay_slots = true,
};
