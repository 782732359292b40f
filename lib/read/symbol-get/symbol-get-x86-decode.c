// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * x86 (64-bit and 32-bit) instruction decoder for the symbol_get() tracer: the
 * lengths of the whole general-purpose, x87, SSE, VEX and EVEX encodings, and
 * where their ModRM operand, displacement and immediate are. What the
 * instructions do is symbol-get-x86.c's.
 */
#include <string.h>

#include "symbol-get-x86-internal.h"

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

static bool x86_byte(struct x86_insn *s, uint8_t *b)
{
	if (s->pos >= s->end)
		return false;
	*b = s->data[s->pos++];
	return true;
}

static bool x86_skip(struct x86_insn *s, unsigned n)
{
	if (n > s->end - s->pos)
		return false;
	s->pos += n;
	return true;
}

static bool x86_modrm(struct x86_insn *s)
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

static bool x86_imm(struct x86_insn *s, unsigned n)
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

bool kp_sg_x86_decode(const struct sg_code *c, uint64_t off, bool mode64, struct x86_insn *s)
{
	uint8_t op;
	unsigned map = 0;

	memset(s, 0, sizeof(*s));
	s->mode64 = mode64;
	s->base = -1;
	s->data = c->data;
	s->pos = off;
	s->end = c->size - off > 15 ? off + 15 : c->size;
	/* legacy prefixes: 66 67 f2 f3, and f0 2e 36 3e 26 64 65 (no effect here) */
	for (;;) {
		if (!x86_byte(s, &op))
			return false;
		if (!(one_byte[op] & F_PREFIX))
			break;
		if (op == 0x66)
			s->opsize16 = true;
		else if (op == 0x67)
			s->addr16or32 = true;
		else if (op == 0xf2 || op == 0xf3)
			s->rep = true;
	}
	if (mode64 && (op & 0xf0) == 0x40) {
		s->rex = op;
		if (!x86_byte(s, &op))
			return false;
	}
	/* VEX / EVEX */
	if ((op == 0xc4 || op == 0xc5 || op == 0x62) && s->pos < c->size &&
	    (mode64 || (c->data[s->pos] & 0xc0) == 0xc0)) {
		uint8_t p0, p1;

		if (op == 0xc5) {
			if (!x86_byte(s, &p0))
				return false;
			map = 1;
			s->rex = (p0 & 0x80) ? 0 : 4;
		} else if (op == 0xc4) {
			if (!x86_byte(s, &p0) || !x86_byte(s, &p1))
				return false;
			map = p0 & 0x1f;
			s->rex = (uint8_t)(((p0 & 0x80) ? 0 : 4) | ((p0 & 0x20) ? 0 : 1) |
					   ((p1 & 0x80) ? 8 : 0));
		} else {
			uint8_t p2;

			if (!x86_byte(s, &p0) || !x86_byte(s, &p1) || !x86_byte(s, &p2))
				return false;
			map = p0 & 7;
			s->rex = (uint8_t)(((p0 & 0x80) ? 0 : 4) | ((p0 & 0x20) ? 0 : 1) |
					   ((p1 & 0x80) ? 8 : 0));
		}
		if (map < 1 || map > 3)
			return false;
		if (!x86_byte(s, &op))
			return false;
		if (!(map == 1 && op == 0x77) && !x86_modrm(s))
			return false;
		if (map == 3 || (map == 1 && map0f_imm8(op)))
			if (!x86_imm(s, 1))
				return false;
		s->vex = true;
		goto done;
	}

	if (op == 0x0f) {
		if (!x86_byte(s, &op))
			return false;
		if (op == 0x38 || op == 0x3a) {
			map = op == 0x38 ? 2 : 3;
			if (!x86_byte(s, &op) || !x86_modrm(s))
				return false;
			if (map == 3 && !x86_imm(s, 1))
				return false;
			goto done;
		}
		map = 1;
		if (map0f_modrm(op) && !x86_modrm(s))
			return false;
		if (map0f_imm8(op) && !x86_imm(s, 1))
			return false;
		if (op >= 0x80 && op <= 0x8f) {
			if (!x86_imm(s, s->opsize16 && !mode64 ? 2 : 4))
				return false;
		}
		goto done;
	}

	/* one-byte map */
	if (!mode64 || (op & 0xf0) != 0x40) {
		uint8_t k = one_byte[op];
		uint64_t lens =
			imm_lens[(unsigned)mode64 << 3 | (unsigned)s->addr16or32 << 2 |
				 (unsigned)((s->rex >> 3) & 1) << 1 | (unsigned)s->opsize16];
		unsigned imm = (lens >> (4 * (k & 0x0f))) & 15; /* no branch on the kind */

		if (mode64 && (k & F_INV64))
			return false;
		if (k & F_MODRM)
			if (!x86_modrm(s))
				return false;
		if ((k & 0x0f) == I_GRP3) /* test r/m, imm: only /0 and /1 have an immediate */
			imm = ((s->modrm >> 3) & 7) < 2 ? (op == 0xf6	 ? 1
							   : s->opsize16 ? 2
									 : 4)
							: 0;
		if (imm && !x86_imm(s, imm))
			return false;
	} else {
		return false;
	}
done:
	s->op = op;
	s->map = (uint8_t)map;
	s->len = (uint8_t)(s->pos - off);
	return true;
}
