/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * symbol_get() call-site tracer: the per-architecture instruction decoders
 * (symbol-get-x86.c, symbol-get-arm64.c, symbol-get-s390.c) describe one
 * instruction each in the terms below, and symbol-get.c walks the control
 * flow backwards from a call of __symbol_get to the instruction that sets the
 * first-argument register. Only what that walk needs is decoded: length,
 * control flow, and which registers an instruction writes (precisely for the
 * few forms that load an address, a copy or a stack address; conservatively
 * for everything else).
 */
#ifndef KP_SYMBOL_GET_INTERNAL_H
#define KP_SYMBOL_GET_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sg_flow {
	SG_SEQ,	  /* falls through to the next instruction */
	SG_CALL,  /* call: falls through, clobbers the caller-saved registers */
	SG_JUMP,  /* unconditional branch (a tail call when the target is external) */
	SG_CJUMP, /* conditional branch: target and fall through */
	SG_STOP,  /* no fall through, no known target (return, indirect jump, trap) */
};

enum sg_def {
	SG_DEF_NONE,
	SG_DEF_ADDR,  /* an address given by the relocation at reloc_off (+ reloc_adj) */
	SG_DEF_COPY,  /* a copy of register src_reg */
	SG_DEF_STACK, /* an address in the stack frame (a local buffer) */
	SG_DEF_CONST, /* a constant without relocation */
	SG_DEF_OTHER, /* anything else: a load, arithmetic, ... */
};

/*
 * One decoded instruction, as a decoder returns it (the tracer keeps a 16-byte
 * digest of each: no target, reloc_off relative to off). A relocated field
 * (reloc_off) lies inside the instruction. Offsets are 32-bit: sections of
 * 4 GiB or more are not decoded.
 */
struct sg_insn {
	uint32_t off;
	uint32_t target;    /* branch/call target inside the same section (has_target) */
	uint32_t reloc_off; /* offset of the relocated field (ADDR value or branch target) */
	uint32_t clobbers;  /* other registers possibly written, bit per register */
	int16_t reloc_adj;  /* address = S + A + reloc_adj */
	uint8_t len;
	uint8_t flow;	/* enum sg_flow */
	uint8_t def;	/* enum sg_def, for def_reg */
	int8_t def_reg; /* register precisely described by def, -1 none */
	int8_t src_reg; /* SG_DEF_COPY source */
	bool has_target : 1;
	bool reloc_target : 1; /* branch/call target given by the relocation at reloc_off */
};

/* What a decoder sees: one executable section's bytes. */
struct sg_code {
	const unsigned char *data;
	uint64_t size;
	bool big_endian;
	bool is64;
};

struct sg_arch {
	const char *name;
	int arg_reg;		/* first-argument register */
	int ret_reg;		/* return-value register */
	uint64_t call_clobbers; /* caller-saved registers */
	/* Decodes the instruction at @off; false if it is not a valid/known encoding. */
	bool (*decode)(const struct sg_code *c, uint64_t off, struct sg_insn *in);
	unsigned min_insn; /* instruction alignment: where to resume after an undecodable one */
};

#define SG_REG(n) ((uint32_t)1 << (n))

const struct sg_arch *kp_sg_arch_x86_64(void);
const struct sg_arch *kp_sg_arch_i386(void);
const struct sg_arch *kp_sg_arch_arm64(void);
const struct sg_arch *kp_sg_arch_s390x(void);

#endif
