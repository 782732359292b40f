// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * s390x decoder for the symbol_get() tracer. The length of an instruction is
 * given by the two top bits of its first byte (2, 4 or 6 bytes).
 *
 * Precise definitions: larl %rN, sym (R_390_PC32DBL at +2, address =
 * S + A - 2), lgr/lr copies, la/lay off(%r15) (a stack buffer), lghi/lhi/lgfi
 * constants. Calls: brasl %r14 (R_390_PLT32DBL), bras, basr; tail calls:
 * jg (brcl 15). First argument %r2, return %r2, caller-saved r0-r5 and r14.
 */
#include <elf.h>
#include <string.h>

#include "symbol-get-internal.h"

static bool decode(const struct sg_code *c, uint64_t off, struct sg_insn *in)
{
	const unsigned char *p;
	unsigned len, op, r1, r2, op2;

	if (!sg_insn_begin(c, off, 1, in))
		return false;
	p = c->data + off;
	op = p[0];
	len = (op >> 6) == 0 ? 2 : (op >> 6) == 3 ? 6 : 4;
	if (c->size - off < len)
		return false;
	in->len = (uint8_t)len;
	in->flow = SG_SEQ;
	if (op == 0)
		return false; /* not an instruction (padding or data) */
	r1 = p[1] >> 4;
	r2 = p[1] & 15;

	switch (op) {
	/* RR */
	case 0x07: /* bcr M1,R2 */
		if (r1 == 15 && r2 != 0)
			in->flow = SG_STOP;
		return true;
	case 0x0d: /* basr R1,R2 */
		in->clobbers |= SG_REG(r1);
		if (r2 != 0)
			in->flow = SG_CALL;
		return true;
	case 0x18: /* lr */
		in->def_reg = (int8_t)r1;
		in->def = SG_DEF_COPY;
		in->src_reg = (int8_t)r2;
		return true;
	case 0x19:
	case 0x15: /* cr, clr */
		return true;
	/* RX */
	case 0x41: /* la R1,D2(X2,B2) */
		in->def_reg = (int8_t)r1;
		in->def = (p[2] >> 4) == 15 || r2 == 15 ? SG_DEF_STACK : SG_DEF_OTHER;
		return true;
	case 0x47: /* bc M1,D2(X2,B2) */
		if (r1 == 15)
			in->flow = SG_STOP;
		return true;
	case 0x50:
	case 0x40:
	case 0x42:
	case 0x59:
	case 0x55:
	case 0x49:
	case 0x91:
	case 0x92:
	case 0x94:
	case 0x95:
	case 0x96:
	case 0x97:
	case 0x90:
	case 0x44:
	case 0x60:
	case 0x70:
		return true; /* stores, compares, SI forms, stm, ex */
	case 0x98: {	     /* lm R1,R3 */
		unsigned r3 = r2;

		for (unsigned r = r1;; r = (r + 1) & 15) {
			in->clobbers |= SG_REG(r);
			if (r == r3)
				break;
		}
		return true;
	}
	case 0x84:
	case 0x85: /* brxh / brxle */
		in->flow = SG_CJUMP;
		in->has_target = true;
		in->target = off + (uint64_t)((int64_t)(int16_t)(p[2] << 8 | p[3]) * 2);
		in->clobbers |= SG_REG(r1);
		return true;
	case 0xa7: {
		unsigned sub = p[1] & 15;
		int64_t rel = (int16_t)(p[2] << 8 | p[3]);

		switch (sub) {
		case 0:
		case 1:
		case 2:
		case 3:
		case 0xe:
		case 0xf: /* tm*, chi, cghi */
			return true;
		case 4: /* brc M1 */
			if (r1 == 0)
				return true;
			in->flow = r1 == 15 ? SG_JUMP : SG_CJUMP;
			in->has_target = true;
			in->target = off + (uint64_t)(rel * 2);
			return true;
		case 5: /* bras */
			in->flow = SG_CALL;
			in->has_target = true;
			in->target = off + (uint64_t)(rel * 2);
			in->clobbers |= SG_REG(r1);
			return true;
		case 6:
		case 7: /* brct, brctg */
			in->flow = SG_CJUMP;
			in->has_target = true;
			in->target = off + (uint64_t)(rel * 2);
			in->clobbers |= SG_REG(r1);
			return true;
		case 8:
		case 9: /* lhi, lghi */
			in->def_reg = (int8_t)r1;
			in->def = SG_DEF_CONST;
			return true;
		default:
			in->clobbers |= SG_REG(r1);
			return true;
		}
	}
	case 0xc0: {
		unsigned sub = p[1] & 15;
		int64_t rel = (int32_t)((uint32_t)p[2] << 24 | (uint32_t)p[3] << 16 |
					(uint32_t)p[4] << 8 | p[5]);

		switch (sub) {
		case 0: /* larl */
			in->def_reg = (int8_t)r1;
			in->def = SG_DEF_ADDR;
			in->reloc_off = off + 2;
			in->reloc_adj = -2;
			return true;
		case 4: /* brcl M1 */
			if (r1 == 0)
				return true;
			in->flow = r1 == 15 ? SG_JUMP : SG_CJUMP;
			break;
		case 5: /* brasl */
			in->flow = SG_CALL;
			in->clobbers |= SG_REG(r1);
			break;
		case 1: /* lgfi */
			in->def_reg = (int8_t)r1;
			in->def = SG_DEF_CONST;
			return true;
		default:
			in->clobbers |= SG_REG(r1);
			return true;
		}
		in->has_target = true;
		in->target = off + (uint64_t)(rel * 2);
		in->reloc_target = true;
		in->reloc_off = off + 2;
		in->reloc_adj = -2;
		return true;
	}
	case 0xc2:
	case 0xc6:
	case 0xe5: /* compares immediate / relative long, SIL */
		return true;
	case 0xc4: { /* load/store relative long */
		unsigned sub = p[1] & 15;

		if (sub == 7 || sub == 0xb || sub == 0xf || sub == 3)
			return true; /* sthrl, stgrl, strl, ... */
		in->clobbers |= SG_REG(r1);
		return true;
	}
	case 0xcc: /* brcth */
		if ((p[1] & 15) == 6) {
			in->flow = SG_CJUMP;
			in->has_target = true;
			in->target =
				off + (uint64_t)((int64_t)(int32_t)((uint32_t)p[2] << 24 |
								    (uint32_t)p[3] << 16 |
								    (uint32_t)p[4] << 8 | p[5]) *
						 2);
		}
		in->clobbers |= SG_REG(r1);
		return true;
	case 0xb9: {
		unsigned rr1 = p[3] >> 4, rr2 = p[3] & 15;

		op2 = p[1];
		if (op2 == 0x04) { /* lgr */
			in->def_reg = (int8_t)rr1;
			in->def = SG_DEF_COPY;
			in->src_reg = (int8_t)rr2;
			return true;
		}
		if (op2 == 0x20 || op2 == 0x21 || op2 == 0x30 || op2 == 0x31)
			return true; /* cgr, clgr, cgfr, clgfr */
		in->clobbers |= SG_REG(rr1);
		if (op2 == 0x87 || op2 == 0x97 || op2 == 0x86 || op2 == 0x96 || op2 == 0x0d ||
		    op2 == 0x1d || op2 == 0x8d || op2 == 0x9d) /* divide/multiply: pair */
			in->clobbers |= SG_REG((rr1 + 1) & 15);
		return true;
	}
	case 0xb2: /* RRE and S forms: either register field may be written */
		in->clobbers |= SG_REG(p[3] >> 4) | SG_REG(p[3] & 15);
		return true;
	case 0xe3:
		op2 = p[5];
		switch (op2) {
		case 0x24:
		case 0x50:
		case 0x72:
		case 0x70:
		case 0x3e:
		case 0x3f:
		case 0x2f:
		case 0x20:
		case 0x21:
		case 0x30:
		case 0x31:
		case 0x59:
		case 0x55:
		case 0x79:
		case 0x36:
		case 0x34:
		case 0x25:
			return true; /* stores, compares, prefetch */
		case 0x71:	     /* lay */
			in->def_reg = (int8_t)r1;
			in->def = (p[2] >> 4) == 15 || r2 == 15 ? SG_DEF_STACK : SG_DEF_OTHER;
			return true;
		default:
			in->clobbers |= SG_REG(r1);
			return true;
		}
	case 0xeb:
		op2 = p[5];
		if (op2 == 0x04 || op2 == 0x98) { /* lmg, lmy */
			unsigned r3 = r2;

			for (unsigned r = r1;; r = (r + 1) & 15) {
				in->clobbers |= SG_REG(r);
				if (r == r3)
					break;
			}
			return true;
		}
		if (op2 == 0x24 || op2 == 0x90 || op2 == 0x51 || op2 == 0x52 || op2 == 0x55 ||
		    op2 == 0x54 || op2 == 0x56 || op2 == 0x57 || op2 == 0x6a || op2 == 0x7a ||
		    op2 == 0x2b || op2 == 0x2c || op2 == 0x20 || op2 == 0x21 || op2 == 0x6e ||
		    op2 == 0x7e)
			return true; /* stmg, stmy, SIY forms, clmh, ... */
		in->clobbers |= SG_REG(r1);
		return true;
	case 0xec:
		op2 = p[5];
		switch (op2) {
		case 0x76:
		case 0x64:
		case 0x77:
		case 0x65:
		case 0x7e:
		case 0x7c:
		case 0x7f:
		case 0x7d: /* compare and branch relative */
			in->flow = SG_CJUMP;
			in->has_target = true;
			in->target = off + (uint64_t)((int64_t)(int16_t)(p[2] << 8 | p[3]) * 2);
			return true;
		case 0x44:
		case 0x45: /* brxhg, brxlg */
			in->flow = SG_CJUMP;
			in->has_target = true;
			in->target = off + (uint64_t)((int64_t)(int16_t)(p[2] << 8 | p[3]) * 2);
			in->clobbers |= SG_REG(r1);
			return true;
		case 0x72:
		case 0x73:
		case 0x70:
		case 0x71:
		case 0x7a:
		case 0x7b:
		case 0xe4:
		case 0xe5:
		case 0xf6:
		case 0xf7:
		case 0xfc:
		case 0xfd:
		case 0xfe:
		case 0xff:
			return true; /* compare and trap / compare and branch (indirect) */
		default:
			in->clobbers |= SG_REG(r1);
			return true;
		}
	default:
		break;
	}
	if (op >= 0xd0 && op <= 0xdf)
		return true; /* SS: storage to storage */
	if (op == 0xe7)
		return true; /* vector */
	if (op == 0xed || (op >= 0x60 && op <= 0x6f) || (op >= 0x20 && op <= 0x3f) || op == 0xb3)
		return true; /* floating point */
	in->clobbers |= SG_REG(r1);
	return true;
}

const struct sg_arch kp_sg_s390x = {
	.name = "s390x",
	.machine = EM_S390,
	.is64 = true,
	.big_endian = true,
	.arg_reg = 2,
	.ret_reg = 2,
	.call_clobbers = 0x3f | SG_REG(14),
	.decode = decode,
	.min_insn = 2,
};
