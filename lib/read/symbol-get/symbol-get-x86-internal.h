/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The x86 backend of the symbol_get() tracer (64-bit and 32-bit), in two parts: the
 * instruction decoder (symbol-get-x86-decode.c: the length and operands of the whole
 * general-purpose, x87, SSE, VEX and EVEX encodings) and what each decoded instruction
 * means to the walk (symbol-get-x86.c: control flow, the general registers it may write,
 * the definitions the tracer follows). Private to the two.
 */
#ifndef KP_SYMBOL_GET_X86_INTERNAL_H
#define KP_SYMBOL_GET_X86_INTERNAL_H

#include "symbol-get-internal.h"

enum { RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI };

/* The opcode maps: one-byte, 0F, 0F 38, 0F 3A (VEX and EVEX: mmmmm 1, 2, 3). */
enum { X86_MAP_ONE_BYTE, X86_MAP_0F, X86_MAP_0F38, X86_MAP_0F3A };

/*
 * One instruction as the decoder reads it: its cursor (data, pos, end) and the prefixes,
 * opcode and operands it found.
 */
struct x86_insn {
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
	int base;    /* base register of the memory operand, -1 none */
	uint8_t op;  /* the opcode byte, in map @map */
	uint8_t map; /* X86_MAP_* */
	bool vex;    /* VEX or EVEX encoded */
	uint8_t len; /* bytes from the first prefix on */
};

/*
 * Decodes the instruction at @off of @c (@mode64: x86-64, else i386) into @s: its length,
 * prefixes, opcode, ModRM operand and immediate. False when it is no valid or known encoding
 * or runs past the section or 15 bytes.
 */
bool kp_sg_x86_decode(const struct sg_code *c, uint64_t off, bool mode64, struct x86_insn *s);

#endif
