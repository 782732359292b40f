/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * symbol_get() call-site tracer: the per-architecture backends
 * (symbol-get-<arch>.c, listed in the backend table of symbol-get.c) describe
 * one instruction each in the terms below, and symbol-get.c walks the control
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
#include <string.h>

#include "util/util.h"

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
	/*
	 * An address when a relocation of kind SG_RK_ADDR or SG_RK_PCREL_LO is at
	 * reloc_off, else a copy of src_reg (RISC-V addi rd, rs, 0 is both mv and
	 * the low half of an address: only the relocation tells them apart).
	 */
	SG_DEF_ADDR_OR_COPY,
};

/* What a relocation at an address-defining field means (struct sg_arch.reloc_kind). */
enum sg_rkind {
	SG_RK_ADDR,	/* S + A (+ reloc_adj) is the address (the low half of a pair included) */
	SG_RK_PCREL_LO, /* S + A is the instruction holding the high half: its relocation names it
			 */
	SG_RK_INDIRECT, /* S + A is a pointer slot (PowerPC .toc): its relocation names it */
	SG_RK_IGNORE,	/* a marker at the same offset (R_RISCV_RELAX): look at the next one */
	SG_RK_OTHER,	/* not an address (a GOT slot, a TLS offset, ...) */
};

/* Instruction set at an offset, from the ELF mapping symbols ($a, $t, $d, $x). */
enum sg_mode {
	SG_MODE_DEFAULT, /* the architecture's instruction set ($a on ARM, $x) */
	SG_MODE_THUMB,	 /* ARM Thumb-2 ($t) */
	SG_MODE_DATA,	 /* data inside code ($d): not decoded */
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
	uint8_t flow;	 /* enum sg_flow */
	uint8_t def;	 /* enum sg_def, for def_reg */
	int8_t def_reg;	 /* register precisely described by def, -1 none */
	int8_t src_reg;	 /* SG_DEF_COPY source */
	int8_t jump_reg; /* the register an indirect call jumps through (delay_slots arches) */
	bool has_target : 1;
	bool reloc_target : 1; /* branch/call target given by the relocation at reloc_off */
	bool cond : 1;	       /* def_reg may keep its older value (ARM conditional execution) */
};

/*
 * @in branches or calls to @off + @rel in its own section, unless the relocation at @off
 * gives the target (when present, it decides); the relocated address is S + A + @adj (@adj:
 * ARM's PC bias, 8 for ARM and 4 for Thumb; 0 elsewhere).
 */
static inline void sg_set_target(struct sg_insn *in, uint64_t off, int64_t rel, int adj)
{
	in->has_target = true;
	in->target = (uint32_t)(off + (uint64_t)rel);
	in->reloc_target = true;
	in->reloc_off = (uint32_t)off;
	in->reloc_adj = (int16_t)adj;
}

/* What a decoder sees: one executable section's bytes. */
struct sg_code {
	const unsigned char *data;
	uint64_t size;
	bool big_endian;
	bool is64;
	enum sg_mode mode; /* at the offset being decoded */
	/*
	 * Decoding state a backend carries from one instruction to the next (the
	 * rest of an ARM IT block); the driver decodes in order and zeroes it when
	 * it resynchronises or the instruction set changes. NULL: none kept.
	 */
	unsigned *state;
	uint32_t elf_flags; /* e_flags: the instruction set variant (MIPS: Octeon's branches) */
};

/*
 * One backend: the ELF files it decodes (e_machine, class, byte order) and its
 * calling convention. Adding an architecture is one file defining one of these
 * and one line in the backend table (symbol-get.c).
 */
struct sg_arch {
	const char *name;
	uint16_t machine; /* e_machine */
	bool is64;
	bool big_endian;
	int arg_reg;		/* first-argument register */
	int ret_reg;		/* return-value register */
	uint64_t call_clobbers; /* caller-saved registers */
	/* Decodes the instruction at @off; false if it is not a valid/known encoding. */
	bool (*decode)(const struct sg_code *c, uint64_t off, struct sg_insn *in);
	unsigned min_insn; /* instruction alignment: where to resume after an undecodable one */
	/* Kind of relocation @type at an address-defining field; NULL: always SG_RK_ADDR. */
	enum sg_rkind (*reloc_kind)(uint32_t type);
	/*
	 * SHT_REL only: the addend of relocation @type at @off, read from the field.
	 * NULL: the 4-byte word at @off (i386).
	 */
	bool (*rel_addend)(const struct sg_code *c, uint64_t off, uint32_t type, int64_t *addend);
	bool mapping_symbols; /* $a/$t/$d/$x symbols mark instruction sets and data */
	bool thumb_bit;	      /* bit 0 of a function address selects Thumb (ARM) */
	/*
	 * Branch delay slots (MIPS): a record is the branch and its delay slot, whose
	 * definition precedes the transfer; calls of __symbol_get go through a
	 * register (jump_reg) loaded with its address.
	 */
	bool delay_slots;
};

#define SG_REG(n) ((uint32_t)1 << (n))

/*
 * The start of every decoder: @in describes the instruction at @off as nothing yet (no
 * register defined or copied, falling through, length 0). Whether the section holds at
 * least @need bytes from @off on (the first the decoder reads).
 */
static inline bool sg_insn_begin(const struct sg_code *c, uint64_t off, uint64_t need,
				 struct sg_insn *in)
{
	memset(in, 0, sizeof(*in));
	in->def_reg = -1;
	in->src_reg = -1;
	in->off = (uint32_t)off;
	in->flow = SG_SEQ;
	return off < c->size && c->size - off >= need;
}

/*
 * The 32-bit word at @off in the section's byte order into *@w (an A32 instruction, a REL
 * relocation's field); false when fewer than 4 bytes are left.
 */
static inline bool sg_word32(const struct sg_code *c, uint64_t off, uint32_t *w)
{
	if (off >= c->size || c->size - off < 4)
		return false;
	*w = kp_load32(c->data + off, c->big_endian);
	return true;
}

/*
 * sg_insn_begin() of a fixed-width 4-byte instruction (arm64, ppc64, mips, loongarch): its
 * word into *@w and @in->len 4, or false when fewer than 4 bytes are left.
 */
static inline bool sg_insn_fetch32(const struct sg_code *c, uint64_t off, struct sg_insn *in,
				   uint32_t *w)
{
	if (!sg_insn_begin(c, off, 4, in))
		return false;
	*w = kp_load32(c->data + off, c->big_endian);
	in->len = 4;
	return true;
}

/* The backends (one file each). */
extern const struct sg_arch kp_sg_x86_64;
extern const struct sg_arch kp_sg_i386;
extern const struct sg_arch kp_sg_arm64;
extern const struct sg_arch kp_sg_s390x;
extern const struct sg_arch kp_sg_riscv64;
extern const struct sg_arch kp_sg_ppc64le;
extern const struct sg_arch kp_sg_arm;
extern const struct sg_arch kp_sg_loongarch64;
extern const struct sg_arch kp_sg_mips64el;

#endif
