// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * x86 (64-bit and 32-bit) instruction decoder for the symbol_get() tracer:
 * lengths of the whole general-purpose, x87, SSE, VEX and EVEX encodings,
 * control flow, and which general registers an instruction may write.
 *
 * Precise definitions: mov $imm32,%r (C7 /0, B8+r) and movabs, whose
 * immediate carries an R_X86_64_32[S]/64 or R_386_32 relocation; lea
 * disp32(%rip),%r (R_X86_64_PC32, address = S + A + 4); lea off(%rsp|%rbp),%r
 * (a stack buffer); mov %r,%r copies; xor/sub %r,%r (zero).
 * x86-64: first argument %rdi, return %rax, caller-saved rax rcx rdx rsi rdi
 * r8-r11. i386 kernel (-mregparm=3): first argument %eax, caller-saved eax ecx edx.
 */
#include <elf.h>
#include <string.h>

#include "symbol-get-internal.h"

enum { RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI };

/* one-byte map: immediate kind (I_REL: call/jmp rel16/32, rel32 in 64-bit mode), then flags */
enum { I_NONE, I_B, I_W, I_Z, I_V, I_WB, I_MOFFS, I_FAR, I_REL, I_GRP3 };

#define F_MODRM	 0x10
#define F_PREFIX 0x20 /* a legacy prefix */
#define F_INV64	 0x40 /* invalid in 64-bit mode */
#define PFX	 F_PREFIX
#define INV	 F_INV64
/* Operand kinds of the one-byte map, indexed by opcode: low nibble = immediate kind, flags. */
/* clang-format off */
static const uint8_t one_byte[256] = {
	/* 00 */ F_MODRM, F_MODRM, F_MODRM, F_MODRM, I_B, I_Z, INV, INV,
	/* 08 */ F_MODRM, F_MODRM, F_MODRM, F_MODRM, I_B, I_Z, INV, 0,
	/* 10 */ F_MODRM, F_MODRM, F_MODRM, F_MODRM, I_B, I_Z, INV, INV,
	/* 18 */ F_MODRM, F_MODRM, F_MODRM, F_MODRM, I_B, I_Z, INV, INV,
	/* 20 */ F_MODRM, F_MODRM, F_MODRM, F_MODRM, I_B, I_Z, PFX, INV,
	/* 28 */ F_MODRM, F_MODRM, F_MODRM, F_MODRM, I_B, I_Z, PFX, INV,
	/* 30 */ F_MODRM, F_MODRM, F_MODRM, F_MODRM, I_B, I_Z, PFX, INV,
	/* 38 */ F_MODRM, F_MODRM, F_MODRM, F_MODRM, I_B, I_Z, PFX, INV,
	/* 40 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	/* 50 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	/* 60 */ INV, INV, F_MODRM, F_MODRM, PFX, PFX, PFX, PFX,
	/* 68 */ I_Z, F_MODRM | I_Z, I_B, F_MODRM | I_B, 0, 0, 0, 0,
	/* 70 */ I_B, I_B, I_B, I_B, I_B, I_B, I_B, I_B,
	/* 78 */ I_B, I_B, I_B, I_B, I_B, I_B, I_B, I_B,
	/* 80 */ F_MODRM | I_B, F_MODRM | I_Z, INV | F_MODRM | I_B, F_MODRM | I_B,
	/* 84 */ F_MODRM, F_MODRM, F_MODRM, F_MODRM,
	/* 88 */ F_MODRM, F_MODRM, F_MODRM, F_MODRM, F_MODRM, F_MODRM, F_MODRM, F_MODRM,
	/* 90 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, INV | I_FAR, 0, 0, 0, 0, 0,
	/* A0 */ I_MOFFS, I_MOFFS, I_MOFFS, I_MOFFS, 0, 0, 0, 0, I_B, I_Z, 0, 0, 0, 0, 0, 0,
	/* B0 */ I_B, I_B, I_B, I_B, I_B, I_B, I_B, I_B,
	/* B8 */ I_V, I_V, I_V, I_V, I_V, I_V, I_V, I_V,
	/* C0 */ F_MODRM | I_B, F_MODRM | I_B, I_W, 0,
	/* C4 */ F_MODRM, F_MODRM, F_MODRM | I_B, F_MODRM | I_Z,
	/* C8 */ I_WB, 0, I_W, 0, 0, I_B, INV, 0,
	/* D0 */ F_MODRM, F_MODRM, F_MODRM, F_MODRM, INV | I_B, INV | I_B, INV, 0,
	/* D8 */ F_MODRM, F_MODRM, F_MODRM, F_MODRM, F_MODRM, F_MODRM, F_MODRM, F_MODRM,
	/* E0 */ I_B, I_B, I_B, I_B, I_B, I_B, I_B, I_B,
	/* E8 */ I_REL, I_REL, INV | I_FAR, I_B, 0, 0, 0, 0,
	/* F0 */ PFX, 0, PFX, PFX, 0, 0, F_MODRM | I_GRP3, F_MODRM | I_GRP3,
	/* F8 */ 0, 0, 0, 0, 0, 0, F_MODRM, F_MODRM,
};
/* clang-format on */
#undef PFX
#undef INV

/*
 * Immediate length of each kind, a nibble each, for one mode: 64-bit (@m64),
 * address size (0x67, @a), REX.W (@w) and operand size (0x66, @o) prefixes.
 */
#define IMM_Z(o) ((o) ? 2 : 4)
#define IMM_LENS(m64, a, w, o)                                                                   \
	((uint64_t)1 << (4 * I_B) | (uint64_t)2 << (4 * I_W) | (uint64_t)IMM_Z(o) << (4 * I_Z) | \
	 (uint64_t)((w) ? 8 : IMM_Z(o)) << (4 * I_V) | (uint64_t)3 << (4 * I_WB) |               \
	 (uint64_t)((m64) ? ((a) ? 4 : 8) : ((a) ? 2 : 4)) << (4 * I_MOFFS) |                    \
	 (uint64_t)(IMM_Z(o) + 2) << (4 * I_FAR) |                                               \
	 (uint64_t)((m64) ? 4 : IMM_Z(o)) << (4 * I_REL))
#define IMM_LENS2(m64, a)                                                       \
	IMM_LENS(m64, a, 0, 0), IMM_LENS(m64, a, 0, 1), IMM_LENS(m64, a, 1, 0), \
		IMM_LENS(m64, a, 1, 1)
/* indexed by m64 << 3 | a << 2 | w << 1 | o */
static const uint64_t imm_lens[16] = { IMM_LENS2(0, 0), IMM_LENS2(0, 1), IMM_LENS2(1, 0),
				       IMM_LENS2(1, 1) };
#undef IMM_LENS2
#undef IMM_LENS
#undef IMM_Z

struct x86_state {
	const unsigned char *data;
	uint64_t pos;
	uint64_t end; /* the section end, or 15 bytes (the longest instruction) after the start */
	bool mode64;
	bool opsize16;
	bool addr16or32; /* 0x67 */
	bool rep;
	uint8_t rex;
	uint8_t modrm;
	bool has_modrm;
	uint64_t disp_pos;
	unsigned disp_len;
	uint64_t imm_pos;
	unsigned imm_len;
	bool rip_rel;
	int base; /* base register of the memory operand, -1 none */
};

static bool x86_byte(struct x86_state *s, uint8_t *b)
{
	if (s->pos >= s->end)
		return false;
	*b = s->data[s->pos++];
	return true;
}

static bool x86_skip(struct x86_state *s, unsigned n)
{
	if (n > s->end - s->pos)
		return false;
	s->pos += n;
	return true;
}

static uint64_t x86_le(const struct sg_code *c, uint64_t pos, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)c->data[pos + i] << (8 * i);
	return v;
}

static bool x86_modrm(struct x86_state *s)
{
	uint8_t mod, rm;

	s->has_modrm = true;
	if (!x86_byte(s, &s->modrm))
		return false;
	mod = s->modrm >> 6;
	rm = s->modrm & 7;
	s->base = -1;
	if (mod == 3)
		return true;
	if (!s->mode64 && s->addr16or32) {
		/* 16-bit addressing */
		unsigned d = mod == 1 ? 1 : mod == 2 ? 2 : (rm == 6 ? 2 : 0);

		s->base = rm == 2 || rm == 3 || rm == 6 ? RBP : -2;
		if (mod == 0 && rm == 6)
			s->base = -1;
		s->disp_pos = s->pos;
		s->disp_len = d;
		return x86_skip(s, d);
	}
	if (rm == 4) {
		uint8_t sib, base;

		if (!x86_byte(s, &sib))
			return false;
		base = sib & 7;
		if (mod == 0 && base == 5) {
			s->base = -1;
			s->disp_pos = s->pos;
			s->disp_len = 4;
			return x86_skip(s, 4);
		}
		s->base = base | ((s->rex & 1) << 3);
	} else if (mod == 0 && rm == 5) {
		s->rip_rel = s->mode64;
		s->base = -1;
		s->disp_pos = s->pos;
		s->disp_len = 4;
		return x86_skip(s, 4);
	} else {
		s->base = rm | ((s->rex & 1) << 3);
	}
	s->disp_pos = s->pos;
	s->disp_len = mod == 1 ? 1 : mod == 2 ? 4 : 0;
	return x86_skip(s, s->disp_len);
}

static bool x86_imm(struct x86_state *s, unsigned n)
{
	s->imm_pos = s->pos;
	s->imm_len = n;
	return x86_skip(s, n);
}

/* Does a 0F-map opcode take a ModRM byte / an imm8? */
static bool map0f_modrm(uint8_t op)
{
	if (op >= 0x80 && op <= 0x8f) /* jcc rel32 */
		return false;
	if (op >= 0xc8 && op <= 0xcf) /* bswap */
		return false;
	switch (op) {
	case 0x04:
	case 0x05:
	case 0x06:
	case 0x07:
	case 0x08:
	case 0x09:
	case 0x0a:
	case 0x0b:
	case 0x0e:
	case 0x30:
	case 0x31:
	case 0x32:
	case 0x33:
	case 0x34:
	case 0x35:
	case 0x36:
	case 0x37:
	case 0x77:
	case 0xa0:
	case 0xa1:
	case 0xa2:
	case 0xa8:
	case 0xa9:
	case 0xaa:
		return false;
	default:
		return true;
	}
}

static bool map0f_imm8(uint8_t op)
{
	switch (op) {
	case 0x0f:
	case 0x70:
	case 0x71:
	case 0x72:
	case 0x73:
	case 0xa4:
	case 0xac:
	case 0xba:
	case 0xc2:
	case 0xc4:
	case 0xc5:
	case 0xc6:
		return true;
	default:
		return false;
	}
}

static int reg_field(const struct x86_state *s)
{
	return ((s->modrm >> 3) & 7) | ((s->rex & 4) << 1);
}

static int rm_field(const struct x86_state *s)
{
	return (s->modrm & 7) | ((s->rex & 1) << 3);
}

/* ModRM rm written when it names a register. */
static uint64_t rm_reg_mask(const struct x86_state *s)
{
	return (s->modrm >> 6) == 3 ? SG_REG(rm_field(s)) : 0;
}

static bool x86_decode(const struct sg_code *c, uint64_t off, struct sg_insn *in, bool mode64)
{
	struct x86_state s;
	uint8_t op;
	unsigned map = 0;

	memset(&s, 0, sizeof(s));
	s.mode64 = mode64;
	s.base = -1;
	if (!sg_insn_begin(c, off, 1, in))
		return false;
	s.data = c->data;
	s.pos = off;
	s.end = c->size - off > 15 ? off + 15 : c->size;
	/* legacy prefixes: 66 67 f2 f3, and f0 2e 36 3e 26 64 65 (no effect here) */
	for (;;) {
		if (!x86_byte(&s, &op))
			return false;
		if (!(one_byte[op] & F_PREFIX))
			break;
		if (op == 0x66)
			s.opsize16 = true;
		else if (op == 0x67)
			s.addr16or32 = true;
		else if (op == 0xf2 || op == 0xf3)
			s.rep = true;
	}
	if (mode64 && (op & 0xf0) == 0x40) {
		s.rex = op;
		if (!x86_byte(&s, &op))
			return false;
	}
	/* VEX / EVEX */
	if ((op == 0xc4 || op == 0xc5 || op == 0x62) && s.pos < c->size &&
	    (mode64 || (c->data[s.pos] & 0xc0) == 0xc0)) {
		uint8_t p0, p1;

		if (op == 0xc5) {
			if (!x86_byte(&s, &p0))
				return false;
			map = 1;
			s.rex = (p0 & 0x80) ? 0 : 4;
		} else if (op == 0xc4) {
			if (!x86_byte(&s, &p0) || !x86_byte(&s, &p1))
				return false;
			map = p0 & 0x1f;
			s.rex = (uint8_t)(((p0 & 0x80) ? 0 : 4) | ((p0 & 0x20) ? 0 : 1) |
					  ((p1 & 0x80) ? 8 : 0));
		} else {
			uint8_t p2;

			if (!x86_byte(&s, &p0) || !x86_byte(&s, &p1) || !x86_byte(&s, &p2))
				return false;
			map = p0 & 7;
			s.rex = (uint8_t)(((p0 & 0x80) ? 0 : 4) | ((p0 & 0x20) ? 0 : 1) |
					  ((p1 & 0x80) ? 8 : 0));
		}
		if (map < 1 || map > 3)
			return false;
		if (!x86_byte(&s, &op))
			return false;
		if (!(map == 1 && op == 0x77) && !x86_modrm(&s))
			return false;
		if (map == 3 || (map == 1 && map0f_imm8(op)))
			if (!x86_imm(&s, 1))
				return false;
		in->len = (uint8_t)(s.pos - off);
		in->flow = SG_SEQ;
		/* BMI/BMI2 write a general register in ModRM.reg */
		if ((map == 2 &&
		     (op == 0xf2 || op == 0xf3 || op == 0xf5 || op == 0xf6 || op == 0xf7)) ||
		    (map == 3 && op == 0xf0))
			in->clobbers |= SG_REG(reg_field(&s));
		/* vmovd/vmovq/vpextr* to a general register */
		if (map == 1 && (op == 0x7e || op == 0xc5 || op == 0x50))
			in->clobbers |= rm_reg_mask(&s) | SG_REG(reg_field(&s));
		if (map == 3 && op >= 0x14 && op <= 0x17)
			in->clobbers |= rm_reg_mask(&s);
		return true;
	}

	if (op == 0x0f) {
		if (!x86_byte(&s, &op))
			return false;
		if (op == 0x38 || op == 0x3a) {
			map = op == 0x38 ? 2 : 3;
			if (!x86_byte(&s, &op) || !x86_modrm(&s))
				return false;
			if (map == 3 && !x86_imm(&s, 1))
				return false;
			in->len = (uint8_t)(s.pos - off);
			in->flow = SG_SEQ;
			if (map == 2 && (op == 0xf0 || op == 0xf1))
				in->clobbers |= SG_REG(reg_field(&s)) | rm_reg_mask(&s);
			if (map == 3 && op >= 0x14 && op <= 0x17)
				in->clobbers |= rm_reg_mask(&s);
			return true;
		}
		map = 1;
		if (map0f_modrm(op) && !x86_modrm(&s))
			return false;
		if (map0f_imm8(op) && !x86_imm(&s, 1))
			return false;
		if (op >= 0x80 && op <= 0x8f) {
			if (!x86_imm(&s, s.opsize16 && !mode64 ? 2 : 4))
				return false;
		}
		in->len = (uint8_t)(s.pos - off);
		in->flow = SG_SEQ;
		if (op >= 0x80 && op <= 0x8f) {
			int64_t rel = s.imm_len == 2 ? (int16_t)x86_le(c, s.imm_pos, 2)
						     : (int32_t)x86_le(c, s.imm_pos, 4);

			in->flow = SG_CJUMP;
			in->has_target = true;
			in->target = off + in->len + (uint64_t)rel;
			in->reloc_off = s.imm_pos;
			in->reloc_adj = (int64_t)(off + in->len - s.imm_pos);
			in->reloc_target = true;
			return true;
		}
		if (op == 0x0b || op == 0xff || op == 0xb9) { /* ud2, ud0, ud1 */
			in->flow = SG_STOP;
			return true;
		}
		if ((op >= 0x40 && op <= 0x4f) || op == 0xaf || op == 0xb6 || op == 0xb7 ||
		    op == 0xbe || op == 0xbf || op == 0xbc || op == 0xbd || op == 0xb8 ||
		    op == 0x2c || op == 0x2d || op == 0x50 || op == 0xc5 || op == 0xb2 ||
		    op == 0xb4 || op == 0xb5 || op == 0x02 || op == 0x03)
			in->clobbers |= SG_REG(reg_field(&s));
		if ((op >= 0x90 && op <= 0x9f) || op == 0xa4 || op == 0xa5 || op == 0xac ||
		    op == 0xad || op == 0xab || op == 0xb3 || op == 0xbb || op == 0xba ||
		    op == 0x7e || op == 0x20 || op == 0x21 || op == 0x00 || op == 0x01 ||
		    op == 0xc7)
			in->clobbers |= rm_reg_mask(&s);
		if (op == 0xb0 || op == 0xb1 || op == 0xc0 || op == 0xc1)
			in->clobbers |= rm_reg_mask(&s) | SG_REG(reg_field(&s)) | SG_REG(RAX);
		if (op >= 0xc8 && op <= 0xcf)
			in->clobbers |= SG_REG((op & 7) | ((s.rex & 1) << 3));
		if (op == 0xa2 || op == 0x31 || op == 0x32 || op == 0x33 || op == 0x01 ||
		    op == 0x05 || op == 0x07 || op == 0x34 || op == 0x35 || op == 0xc7)
			in->clobbers |= SG_REG(RAX) | SG_REG(RCX) | SG_REG(RDX) | SG_REG(RBX) |
					(mode64 ? SG_REG(11) : 0);
		return true;
	}

	/* one-byte map */
	if (!mode64 || (op & 0xf0) != 0x40) {
		uint8_t k = one_byte[op];
		uint64_t lens = imm_lens[(unsigned)mode64 << 3 | (unsigned)s.addr16or32 << 2 |
					 (unsigned)((s.rex >> 3) & 1) << 1 | (unsigned)s.opsize16];
		unsigned imm = (lens >> (4 * (k & 0x0f))) & 15; /* no branch on the kind */

		if (mode64 && (k & F_INV64))
			return false;
		if (k & F_MODRM)
			if (!x86_modrm(&s))
				return false;
		if ((k & 0x0f) == I_GRP3) /* test r/m, imm: only /0 and /1 have an immediate */
			imm = ((s.modrm >> 3) & 7) < 2 ? (op == 0xf6 ? 1 : s.opsize16 ? 2 : 4) : 0;
		if (imm && !x86_imm(&s, imm))
			return false;
	} else {
		return false;
	}
	in->len = (uint8_t)(s.pos - off);
	in->flow = SG_SEQ;

	{
		int reg = s.has_modrm ? reg_field(&s) : 0;
		int rm = s.has_modrm ? rm_field(&s) : 0;
		bool mod3 = s.has_modrm && (s.modrm >> 6) == 3;
		unsigned sub = s.has_modrm ? (s.modrm >> 3) & 7 : 0;

		if (op < 0x40 && (op & 7) < 6) {
			unsigned kind = op & 7;
			bool cmp = (op & 0xf8) == 0x38;

			if (cmp)
				return true;
			if (kind == 0 || kind == 1)
				in->clobbers |= rm_reg_mask(&s);
			else if (kind == 2 || kind == 3)
				in->clobbers |= SG_REG(reg);
			else
				in->clobbers |= SG_REG(RAX);
			/* xor %r,%r / sub %r,%r: zero */
			if (((op & 0xf8) == 0x30 || (op & 0xf8) == 0x28) &&
			    (kind == 1 || kind == 3) && mod3 && reg == rm && !s.opsize16) {
				in->clobbers &= ~SG_REG(reg);
				in->def_reg = (int8_t)reg;
				in->def = SG_DEF_CONST;
			}
			return true;
		}
		if (op >= 0x40 && op <= 0x4f) { /* i386 inc/dec */
			in->clobbers |= SG_REG(op & 7);
			return true;
		}
		if (op >= 0x50 && op <= 0x57)
			return true;
		if (op >= 0x58 && op <= 0x5f) {
			in->clobbers |= SG_REG((op & 7) | ((s.rex & 1) << 3));
			return true;
		}
		if (op >= 0x70 && op <= 0x7f) {
			in->flow = SG_CJUMP;
			in->has_target = true;
			in->target = off + in->len + (uint64_t)(int64_t)(int8_t)c->data[s.imm_pos];
			return true;
		}
		if (op >= 0xe0 && op <= 0xe3) {
			in->flow = SG_CJUMP;
			in->has_target = true;
			in->target = off + in->len + (uint64_t)(int64_t)(int8_t)c->data[s.imm_pos];
			in->clobbers |= op != 0xe3 ? SG_REG(RCX) : 0;
			return true;
		}
		if (op == 0xeb || op == 0xe9 || op == 0xe8) {
			int64_t rel = s.imm_len == 1   ? (int8_t)c->data[s.imm_pos]
				      : s.imm_len == 2 ? (int16_t)x86_le(c, s.imm_pos, 2)
						       : (int32_t)x86_le(c, s.imm_pos, 4);

			in->flow = op == 0xe8 ? SG_CALL : SG_JUMP;
			in->has_target = true;
			in->target = off + in->len + (uint64_t)rel;
			if (s.imm_len == 4) {
				in->reloc_target = true;
				in->reloc_off = s.imm_pos;
				in->reloc_adj = (int64_t)(off + in->len - s.imm_pos);
			}
			return true;
		}
		switch (op) {
		case 0x62: /* bound (i386) */
			return true;
		case 0x63: /* movsxd / arpl */
			in->clobbers |= mode64 ? SG_REG(reg) : rm_reg_mask(&s);
			return true;
		case 0x69:
		case 0x6b:
			in->clobbers |= SG_REG(reg);
			return true;
		case 0x6c:
		case 0x6d:
			in->clobbers |= SG_REG(RDI) | (s.rep ? SG_REG(RCX) : 0);
			return true;
		case 0x6e:
		case 0x6f:
			in->clobbers |= SG_REG(RSI) | (s.rep ? SG_REG(RCX) : 0);
			return true;
		case 0x80:
		case 0x81:
		case 0x82:
		case 0x83:
			if (sub != 7)
				in->clobbers |= rm_reg_mask(&s);
			return true;
		case 0x84:
		case 0x85:
			return true;
		case 0x86:
		case 0x87:
			in->clobbers |= rm_reg_mask(&s) | SG_REG(reg);
			return true;
		case 0x88:
		case 0x8c:
			in->clobbers |= rm_reg_mask(&s);
			return true;
		case 0x89:
			if (mod3) {
				if (s.opsize16) {
					in->clobbers |= SG_REG(rm);
				} else {
					in->def_reg = (int8_t)rm;
					in->def = SG_DEF_COPY;
					in->src_reg = (int8_t)reg;
				}
			}
			return true;
		case 0x8a:
			in->clobbers |= SG_REG(reg);
			return true;
		case 0x8b:
			if (mod3 && !s.opsize16) {
				in->def_reg = (int8_t)reg;
				in->def = SG_DEF_COPY;
				in->src_reg = (int8_t)rm;
			} else {
				in->def_reg = (int8_t)reg;
				in->def = SG_DEF_OTHER;
			}
			return true;
		case 0x8d: /* lea */
			in->def_reg = (int8_t)reg;
			in->def = SG_DEF_OTHER;
			if (s.opsize16 || mod3)
				return true;
			if (s.rip_rel || (!mode64 && s.base == -1 && s.disp_len == 4 &&
					  (s.modrm & 0xc7) == 0x05)) {
				in->def = SG_DEF_ADDR;
				in->reloc_off = s.disp_pos;
				in->reloc_adj =
					s.rip_rel ? (int64_t)(off + in->len - s.disp_pos) : 0;
			} else if (s.base == RSP || s.base == RBP) {
				in->def = SG_DEF_STACK;
			}
			return true;
		case 0x8e:
			return true;
		case 0x8f:
			in->clobbers |= rm_reg_mask(&s);
			return true;
		case 0x90: /* nop / xchg */
			if (!(s.rex & 1))
				return true;
			/* fallthrough */
		case 0x91:
		case 0x92:
		case 0x93:
		case 0x94:
		case 0x95:
		case 0x96:
		case 0x97:
			in->clobbers |= SG_REG(RAX) | SG_REG((op & 7) | ((s.rex & 1) << 3));
			return true;
		case 0x98:
		case 0x9e:
		case 0x9f:
			in->clobbers |= SG_REG(RAX);
			return true;
		case 0x99:
			in->clobbers |= SG_REG(RDX);
			return true;
		case 0x9a:
			in->flow = SG_CALL;
			return true;
		case 0xa0:
		case 0xa1:
			in->clobbers |= SG_REG(RAX);
			return true;
		case 0xa4:
		case 0xa5:
		case 0xa6:
		case 0xa7:
			in->clobbers |= SG_REG(RSI) | SG_REG(RDI) | (s.rep ? SG_REG(RCX) : 0);
			return true;
		case 0xaa:
		case 0xab:
		case 0xae:
		case 0xaf:
			in->clobbers |= SG_REG(RDI) | (s.rep ? SG_REG(RCX) : 0);
			return true;
		case 0xac:
		case 0xad:
			in->clobbers |= SG_REG(RSI) | SG_REG(RAX) | (s.rep ? SG_REG(RCX) : 0);
			return true;
		case 0xc0:
		case 0xc1:
		case 0xd0:
		case 0xd1:
		case 0xd2:
		case 0xd3:
			in->clobbers |= rm_reg_mask(&s);
			return true;
		case 0xc2:
		case 0xc3:
		case 0xca:
		case 0xcb:
		case 0xcf:
		case 0xcc:
		case 0xf4:
			in->flow = SG_STOP;
			return true;
		case 0xc6:
			in->clobbers |= rm_reg_mask(&s);
			return true;
		case 0xc7:
			if (sub == 7 && mod3) { /* xbegin: a conditional branch */
				in->flow = SG_CJUMP;
				in->has_target = true;
				in->target = off + in->len +
					     (uint64_t)(int64_t)(int32_t)x86_le(c, s.imm_pos, 4);
				return true;
			}
			if (mod3 && !s.opsize16 && s.imm_len == 4) {
				in->def_reg = (int8_t)rm;
				in->def = SG_DEF_ADDR;
				in->reloc_off = s.imm_pos;
				in->reloc_adj = 0;
			}
			return true;
		case 0xc8:
		case 0xc9:
			in->clobbers |= SG_REG(RBP) | SG_REG(RSP);
			return true;
		case 0xe4:
		case 0xe5:
		case 0xec:
		case 0xed:
			in->clobbers |= SG_REG(RAX);
			return true;
		case 0xea:
			in->flow = SG_STOP;
			return true;
		case 0xf6:
		case 0xf7:
			if (sub == 2 || sub == 3)
				in->clobbers |= rm_reg_mask(&s);
			else if (sub >= 4)
				in->clobbers |= SG_REG(RAX) | SG_REG(RDX);
			return true;
		case 0xfe:
		case 0xff:
			if (sub == 0 || sub == 1)
				in->clobbers |= rm_reg_mask(&s);
			else if (op == 0xff && (sub == 2 || sub == 3))
				in->flow = SG_CALL;
			else if (op == 0xff && (sub == 4 || sub == 5))
				in->flow = SG_STOP;
			return true;
		case 0xd8:
		case 0xd9:
		case 0xda:
		case 0xdb:
		case 0xdc:
		case 0xdd:
		case 0xde:
		case 0xdf:
			if (op == 0xdf && s.modrm == 0xe0)
				in->clobbers |= SG_REG(RAX);
			return true;
		default:
			break;
		}
		if (op >= 0xb0 && op <= 0xb7) {
			in->clobbers |= SG_REG((op & 7) | ((s.rex & 1) << 3));
			return true;
		}
		if (op >= 0xb8 && op <= 0xbf) {
			int r = (op & 7) | ((s.rex & 1) << 3);

			if (s.opsize16) {
				in->clobbers |= SG_REG(r);
				return true;
			}
			in->def_reg = (int8_t)r;
			in->def = SG_DEF_ADDR;
			in->reloc_off = s.imm_pos;
			in->reloc_adj = 0;
			return true;
		}
	}
	return true;
}

static bool decode64(const struct sg_code *c, uint64_t off, struct sg_insn *in)
{
	return x86_decode(c, off, in, true);
}

static bool decode32(const struct sg_code *c, uint64_t off, struct sg_insn *in)
{
	return x86_decode(c, off, in, false);
}

const struct sg_arch kp_sg_x86_64 = {
	.name = "x86_64",
	.machine = EM_X86_64,
	.is64 = true,
	.arg_reg = RDI,
	.ret_reg = RAX,
	.call_clobbers = SG_REG(RAX) | SG_REG(RCX) | SG_REG(RDX) | SG_REG(RSI) | SG_REG(RDI) |
			 SG_REG(8) | SG_REG(9) | SG_REG(10) | SG_REG(11),
	.decode = decode64,
	.min_insn = 1,
};

const struct sg_arch kp_sg_i386 = {
	.name = "i386",
	.machine = EM_386,
	.arg_reg = RAX,
	.ret_reg = RAX,
	.call_clobbers = SG_REG(RAX) | SG_REG(RCX) | SG_REG(RDX),
	.decode = decode32,
	.min_insn = 1,
};
