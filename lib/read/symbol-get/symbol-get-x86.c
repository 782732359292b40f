// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * x86 (64-bit and 32-bit) backend of the symbol_get() tracer: what each
 * instruction the decoder (symbol-get-x86-decode.c) reads does to the walk:
 * control flow, and which general registers it may write.
 *
 * Precise definitions: mov $imm32,%r (C7 /0, B8+r) and movabs, whose
 * immediate carries an R_X86_64_32[S]/64 or R_386_32 relocation; lea
 * disp32(%rip),%r (R_X86_64_PC32, address = S + A + 4); lea off(%rsp|%rbp),%r
 * (a stack buffer); mov %r,%r copies; xor/sub %r,%r (zero).
 * x86-64: first argument %rdi, return %rax, caller-saved rax rcx rdx rsi rdi
 * r8-r11. i386 kernel (-mregparm=3): first argument %eax, caller-saved eax ecx edx.
 */
#include <elf.h>

#include "symbol-get-x86-internal.h"

static uint64_t x86_le(const struct sg_code *c, uint64_t pos, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)c->data[pos + i] << (8 * i);
	return v;
}

static int reg_field(const struct x86_insn *s)
{
	return ((s->modrm >> 3) & 7) | ((s->rex & 4) << 1);
}

static int rm_field(const struct x86_insn *s)
{
	return (s->modrm & 7) | ((s->rex & 1) << 3);
}

/* ModRM rm written when it names a register. */
static uint64_t rm_reg_mask(const struct x86_insn *s)
{
	return (s->modrm >> 6) == 3 ? SG_REG(rm_field(s)) : 0;
}

/* VEX and EVEX: the few that write a general register. */
static void vex_effects(const struct x86_insn *s, struct sg_insn *in)
{
	unsigned map = s->map;
	uint8_t op = s->op;

	/* BMI/BMI2 write a general register in ModRM.reg */
	if ((map == 2 && (op == 0xf2 || op == 0xf3 || op == 0xf5 || op == 0xf6 || op == 0xf7)) ||
	    (map == 3 && op == 0xf0))
		in->clobbers |= SG_REG(reg_field(s));
	/* vmovd/vmovq/vpextr* to a general register */
	if (map == 1 && (op == 0x7e || op == 0xc5 || op == 0x50))
		in->clobbers |= rm_reg_mask(s) | SG_REG(reg_field(s));
	if (map == 3 && op >= 0x14 && op <= 0x17)
		in->clobbers |= rm_reg_mask(s);
}

/* The 0F 38 and 0F 3A maps (not VEX): crc32, movbe, pextr*. */
static void map0f38_3a_effects(const struct x86_insn *s, struct sg_insn *in)
{
	unsigned map = s->map;
	uint8_t op = s->op;

	if (map == 2 && (op == 0xf0 || op == 0xf1))
		in->clobbers |= SG_REG(reg_field(s)) | rm_reg_mask(s);
	if (map == 3 && op >= 0x14 && op <= 0x17)
		in->clobbers |= rm_reg_mask(s);
}

/* The 0F map: jcc rel16/32, ud*, and the registers the rest write. */
static void map0f_effects(const struct sg_code *c, uint64_t off, const struct x86_insn *s,
			  struct sg_insn *in)
{
	uint8_t op = s->op;

	if (op >= 0x80 && op <= 0x8f) {
		int64_t rel = s->imm_len == 2 ? (int16_t)x86_le(c, s->imm_pos, 2)
					      : (int32_t)x86_le(c, s->imm_pos, 4);

		in->flow = SG_CJUMP;
		in->has_target = true;
		in->target = off + in->len + (uint64_t)rel;
		in->reloc_off = s->imm_pos;
		in->reloc_adj = (int64_t)(off + in->len - s->imm_pos);
		in->reloc_target = true;
		return;
	}
	if (op == 0x0b || op == 0xff || op == 0xb9) { /* ud2, ud0, ud1 */
		in->flow = SG_STOP;
		return;
	}
	if ((op >= 0x40 && op <= 0x4f) || op == 0xaf || op == 0xb6 || op == 0xb7 || op == 0xbe ||
	    op == 0xbf || op == 0xbc || op == 0xbd || op == 0xb8 || op == 0x2c || op == 0x2d ||
	    op == 0x50 || op == 0xc5 || op == 0xb2 || op == 0xb4 || op == 0xb5 || op == 0x02 ||
	    op == 0x03)
		in->clobbers |= SG_REG(reg_field(s));
	if ((op >= 0x90 && op <= 0x9f) || op == 0xa4 || op == 0xa5 || op == 0xac || op == 0xad ||
	    op == 0xab || op == 0xb3 || op == 0xbb || op == 0xba || op == 0x7e || op == 0x20 ||
	    op == 0x21 || op == 0x00 || op == 0x01 || op == 0xc7)
		in->clobbers |= rm_reg_mask(s);
	if (op == 0xb0 || op == 0xb1 || op == 0xc0 || op == 0xc1)
		in->clobbers |= rm_reg_mask(s) | SG_REG(reg_field(s)) | SG_REG(RAX);
	if (op >= 0xc8 && op <= 0xcf)
		in->clobbers |= SG_REG((op & 7) | ((s->rex & 1) << 3));
	if (op == 0xa2 || op == 0x31 || op == 0x32 || op == 0x33 || op == 0x01 || op == 0x05 ||
	    op == 0x07 || op == 0x34 || op == 0x35 || op == 0xc7)
		in->clobbers |= SG_REG(RAX) | SG_REG(RCX) | SG_REG(RDX) | SG_REG(RBX) |
				(s->mode64 ? SG_REG(11) : 0);
}

/* The one-byte map: branches, calls, returns, and the registers each writes or defines. */
static void one_byte_effects(const struct sg_code *c, uint64_t off, const struct x86_insn *s,
			     struct sg_insn *in)
{
	uint8_t op = s->op;
	int reg = s->has_modrm ? reg_field(s) : 0;
	int rm = s->has_modrm ? rm_field(s) : 0;
	bool mod3 = s->has_modrm && (s->modrm >> 6) == 3;
	unsigned sub = s->has_modrm ? (s->modrm >> 3) & 7 : 0;

	if (op < 0x40 && (op & 7) < 6) {
		unsigned kind = op & 7;
		bool cmp = (op & 0xf8) == 0x38;

		if (cmp)
			return;
		if (kind == 0 || kind == 1)
			in->clobbers |= rm_reg_mask(s);
		else if (kind == 2 || kind == 3)
			in->clobbers |= SG_REG(reg);
		else
			in->clobbers |= SG_REG(RAX);
		/* xor %r,%r / sub %r,%r: zero */
		if (((op & 0xf8) == 0x30 || (op & 0xf8) == 0x28) && (kind == 1 || kind == 3) &&
		    mod3 && reg == rm && !s->opsize16) {
			in->clobbers &= ~SG_REG(reg);
			in->def_reg = (int8_t)reg;
			in->def = SG_DEF_CONST;
		}
		return;
	}
	if (op >= 0x40 && op <= 0x4f) { /* i386 inc/dec */
		in->clobbers |= SG_REG(op & 7);
		return;
	}
	if (op >= 0x50 && op <= 0x57)
		return;
	if (op >= 0x58 && op <= 0x5f) {
		in->clobbers |= SG_REG((op & 7) | ((s->rex & 1) << 3));
		return;
	}
	if (op >= 0x70 && op <= 0x7f) {
		in->flow = SG_CJUMP;
		in->has_target = true;
		in->target = off + in->len + (uint64_t)(int64_t)(int8_t)c->data[s->imm_pos];
		return;
	}
	if (op >= 0xe0 && op <= 0xe3) {
		in->flow = SG_CJUMP;
		in->has_target = true;
		in->target = off + in->len + (uint64_t)(int64_t)(int8_t)c->data[s->imm_pos];
		in->clobbers |= op != 0xe3 ? SG_REG(RCX) : 0;
		return;
	}
	if (op == 0xeb || op == 0xe9 || op == 0xe8) {
		int64_t rel = s->imm_len == 1	? (int8_t)c->data[s->imm_pos]
			      : s->imm_len == 2 ? (int16_t)x86_le(c, s->imm_pos, 2)
						: (int32_t)x86_le(c, s->imm_pos, 4);

		in->flow = op == 0xe8 ? SG_CALL : SG_JUMP;
		in->has_target = true;
		in->target = off + in->len + (uint64_t)rel;
		if (s->imm_len == 4) {
			in->reloc_target = true;
			in->reloc_off = s->imm_pos;
			in->reloc_adj = (int64_t)(off + in->len - s->imm_pos);
		}
		return;
	}
	switch (op) {
	case 0x62: /* bound (i386) */
		return;
	case 0x63: /* movsxd / arpl */
		in->clobbers |= s->mode64 ? SG_REG(reg) : rm_reg_mask(s);
		return;
	case 0x69:
	case 0x6b:
		in->clobbers |= SG_REG(reg);
		return;
	case 0x6c:
	case 0x6d:
		in->clobbers |= SG_REG(RDI) | (s->rep ? SG_REG(RCX) : 0);
		return;
	case 0x6e:
	case 0x6f:
		in->clobbers |= SG_REG(RSI) | (s->rep ? SG_REG(RCX) : 0);
		return;
	case 0x80:
	case 0x81:
	case 0x82:
	case 0x83:
		if (sub != 7)
			in->clobbers |= rm_reg_mask(s);
		return;
	case 0x84:
	case 0x85:
		return;
	case 0x86:
	case 0x87:
		in->clobbers |= rm_reg_mask(s) | SG_REG(reg);
		return;
	case 0x88:
	case 0x8c:
		in->clobbers |= rm_reg_mask(s);
		return;
	case 0x89:
		if (mod3) {
			if (s->opsize16) {
				in->clobbers |= SG_REG(rm);
			} else {
				in->def_reg = (int8_t)rm;
				in->def = SG_DEF_COPY;
				in->src_reg = (int8_t)reg;
			}
		}
		return;
	case 0x8a:
		in->clobbers |= SG_REG(reg);
		return;
	case 0x8b:
		if (mod3 && !s->opsize16) {
			in->def_reg = (int8_t)reg;
			in->def = SG_DEF_COPY;
			in->src_reg = (int8_t)rm;
		} else {
			in->def_reg = (int8_t)reg;
			in->def = SG_DEF_OTHER;
		}
		return;
	case 0x8d: /* lea */
		in->def_reg = (int8_t)reg;
		in->def = SG_DEF_OTHER;
		if (s->opsize16 || mod3)
			return;
		if (s->rip_rel || (!s->mode64 && s->base == -1 && s->disp_len == 4 &&
				   (s->modrm & 0xc7) == 0x05)) {
			in->def = SG_DEF_ADDR;
			in->reloc_off = s->disp_pos;
			in->reloc_adj = s->rip_rel ? (int64_t)(off + in->len - s->disp_pos) : 0;
		} else if (s->base == RSP || s->base == RBP) {
			in->def = SG_DEF_STACK;
		}
		return;
	case 0x8e:
		return;
	case 0x8f:
		in->clobbers |= rm_reg_mask(s);
		return;
	case 0x90: /* nop / xchg */
		if (!(s->rex & 1))
			return;
		/* fallthrough */
	case 0x91:
	case 0x92:
	case 0x93:
	case 0x94:
	case 0x95:
	case 0x96:
	case 0x97:
		in->clobbers |= SG_REG(RAX) | SG_REG((op & 7) | ((s->rex & 1) << 3));
		return;
	case 0x98:
	case 0x9e:
	case 0x9f:
		in->clobbers |= SG_REG(RAX);
		return;
	case 0x99:
		in->clobbers |= SG_REG(RDX);
		return;
	case 0x9a:
		in->flow = SG_CALL;
		return;
	case 0xa0:
	case 0xa1:
		in->clobbers |= SG_REG(RAX);
		return;
	case 0xa4:
	case 0xa5:
	case 0xa6:
	case 0xa7:
		in->clobbers |= SG_REG(RSI) | SG_REG(RDI) | (s->rep ? SG_REG(RCX) : 0);
		return;
	case 0xaa:
	case 0xab:
	case 0xae:
	case 0xaf:
		in->clobbers |= SG_REG(RDI) | (s->rep ? SG_REG(RCX) : 0);
		return;
	case 0xac:
	case 0xad:
		in->clobbers |= SG_REG(RSI) | SG_REG(RAX) | (s->rep ? SG_REG(RCX) : 0);
		return;
	case 0xc0:
	case 0xc1:
	case 0xd0:
	case 0xd1:
	case 0xd2:
	case 0xd3:
		in->clobbers |= rm_reg_mask(s);
		return;
	case 0xc2:
	case 0xc3:
	case 0xca:
	case 0xcb:
	case 0xcf:
	case 0xcc:
	case 0xf4:
		in->flow = SG_STOP;
		return;
	case 0xc6:
		in->clobbers |= rm_reg_mask(s);
		return;
	case 0xc7:
		if (sub == 7 && mod3) { /* xbegin: a conditional branch */
			in->flow = SG_CJUMP;
			in->has_target = true;
			in->target = off + in->len +
				     (uint64_t)(int64_t)(int32_t)x86_le(c, s->imm_pos, 4);
			return;
		}
		if (mod3 && !s->opsize16 && s->imm_len == 4) {
			in->def_reg = (int8_t)rm;
			in->def = SG_DEF_ADDR;
			in->reloc_off = s->imm_pos;
			in->reloc_adj = 0;
		}
		return;
	case 0xc8:
	case 0xc9:
		in->clobbers |= SG_REG(RBP) | SG_REG(RSP);
		return;
	case 0xe4:
	case 0xe5:
	case 0xec:
	case 0xed:
		in->clobbers |= SG_REG(RAX);
		return;
	case 0xea:
		in->flow = SG_STOP;
		return;
	case 0xf6:
	case 0xf7:
		if (sub == 2 || sub == 3)
			in->clobbers |= rm_reg_mask(s);
		else if (sub >= 4)
			in->clobbers |= SG_REG(RAX) | SG_REG(RDX);
		return;
	case 0xfe:
	case 0xff:
		if (sub == 0 || sub == 1)
			in->clobbers |= rm_reg_mask(s);
		else if (op == 0xff && (sub == 2 || sub == 3))
			in->flow = SG_CALL;
		else if (op == 0xff && (sub == 4 || sub == 5))
			in->flow = SG_STOP;
		return;
	case 0xd8:
	case 0xd9:
	case 0xda:
	case 0xdb:
	case 0xdc:
	case 0xdd:
	case 0xde:
	case 0xdf:
		if (op == 0xdf && s->modrm == 0xe0)
			in->clobbers |= SG_REG(RAX);
		return;
	default:
		break;
	}
	if (op >= 0xb0 && op <= 0xb7) {
		in->clobbers |= SG_REG((op & 7) | ((s->rex & 1) << 3));
		return;
	}
	if (op >= 0xb8 && op <= 0xbf) {
		int r = (op & 7) | ((s->rex & 1) << 3);

		if (s->opsize16) {
			in->clobbers |= SG_REG(r);
			return;
		}
		in->def_reg = (int8_t)r;
		in->def = SG_DEF_ADDR;
		in->reloc_off = s->imm_pos;
		in->reloc_adj = 0;
		return;
	}
}

static bool x86_describe(const struct sg_code *c, uint64_t off, struct sg_insn *in, bool mode64)
{
	struct x86_insn s;

	if (!sg_insn_begin(c, off, 1, in) || !kp_sg_x86_decode(c, off, mode64, &s))
		return false;
	in->len = s.len;
	in->flow = SG_SEQ;
	if (s.vex)
		vex_effects(&s, in);
	else if (s.map == X86_MAP_0F38 || s.map == X86_MAP_0F3A)
		map0f38_3a_effects(&s, in);
	else if (s.map == X86_MAP_0F)
		map0f_effects(c, off, &s, in);
	else
		one_byte_effects(c, off, &s, in);
	return true;
}

static bool decode64(const struct sg_code *c, uint64_t off, struct sg_insn *in)
{
	return x86_describe(c, off, in, true);
}

static bool decode32(const struct sg_code *c, uint64_t off, struct sg_insn *in)
{
	return x86_describe(c, off, in, false);
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
