// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * An export whose name points outside the module's strings (the reader's kp_wild_export):
 * x86-64's struct kernel_symbol holds the name as a PREL32 offset, so after
 * apply_relocate_add() (arch/x86/kernel/module.c, 5.10 … 7.2: R_X86_64_PC32/PLT32 are written
 * as 4 bytes without an overflow check, unlike _32/_32S) the name is __ksymtab_strings' address
 * + the offset the reader recorded, taken modulo 2^32 around the field. Nothing in load_module()
 * reads it before complete_formation(), which takes module_mutex and calls
 * verify_exported_symbols(): find_symbol()'s bsearch() strcmp()s it with vmlinux's exports, reading
 * its first byte (booted: 7.2.13, the name 0x60000000 below its string, "BUG: unable to handle page
 * fault", strcmp <- find_symbol, the lock kept).
 *
 * Where that byte lies (Documentation/arch/x86/x86_64/mm.rst, 5.10 … 7.2): modules are mapped
 * from MODULES_VADDR (0xffffffffa0000000, 0xffffffffc0000000 with KASLR) up, lowest free
 * address first; below the kernel text (0xffffffff80000000) is an unused hole down to
 * 0xffffffff00000000. A module mapped in the area's first 512 MB (KASLR; its first 1 GB
 * without) and a name at least 0x60000000 below its string put the byte in the hole: the
 * kernel faults. A name farther than s32 from its field wraps (truncated): not known here.
 * Elsewhere (nearer or above) the byte is module, kernel or unmapped memory, not known here.
 *
 * A name relocated against another symbol (exports.c's foreign_name(): undefined, absolute, in
 * a section the loader does not keep as the file has it) is read at that symbol's address, on
 * every arch: a warning. One in the module's own loaded strings is an export of that name.
 *
 * Other arches: i386 (config X86 selects HAVE_ARCH_PREL32_RELOCATIONS too, R_386_PC32:
 * apply_relocate() adds without an overflow check) and arm64 (R_AARCH64_PREL32: reloc_data()
 * refuses a value outside s32, kp_rule_wild_export_reloc() below) keep PREL32 names; armhf
 * (R_ARM_ABS32), ppc64el (R_PPC64_ADDR64), s390x (R_390_64) and riscv64 (R_RISCV_64) hold absolute
 * pointers, relocated without a range check. Their module areas (vmalloc space, arm64's 2 GB window
 * around the kernel text) lie among kernel mappings: what the name's first byte is depends on the
 * memory map of the running kernel, a warning.
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>

#include "sim/arch-relocs.h"
#include "rules.h"

/* The nearest name below its string that the first 512 MB of the module area puts in the hole. */
#define KP_WILD_HOLE_MAX (-(int64_t)0x60000000)
/* PC32's field is name - &field: it fits s32 for any name at most this far below (and the
 * field lies within the module's image of its string). */
#define KP_WILD_FIT_MIN (-(int64_t)0x80000000)

/* "0x... bytes before" / "0x... bytes past the start of" (__ksymtab_strings) */
static void wild_where(int64_t offset, char *where, size_t size)
{
	if (offset < 0)
		snprintf(where, size, "0x%" PRIx64 " bytes before", 0 - (uint64_t)offset);
	else
		snprintf(where, size, "0x%" PRIx64 " bytes past the start of", (uint64_t)offset);
}

/* The relocation the name field carries on the module's arch, for the warning. */
static const char *name_field(uint16_t machine)
{
	switch (machine) {
	case EM_386:
		return "a PREL32 offset (R_386_PC32)";
	case EM_AARCH64:
		return "a PREL32 offset (R_AARCH64_PREL32)";
	case EM_ARM:
		return "an absolute pointer (R_ARM_ABS32)";
	case EM_PPC64:
		return "an absolute pointer (R_PPC64_ADDR64)";
	case EM_S390:
		return "an absolute pointer (R_390_64)";
	case EM_RISCV:
		return "an absolute pointer (R_RISCV_64)";
	default:
		return "a relocated field";
	}
}

/* verify_exported_symbols() -> find_symbol() in complete_formation() (5.10 … 7.2) */
int kp_rule_wild_export_name(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	const struct kp_module *m = ld->m;
	const struct kp_wild_export *w = &m->wild_export;
	const char *table = kp_export_table_section(w->table);
	char where[48];

	if (w->target) {
		/* exports.c's foreign_name(): a symbol whose bytes at load time are not known */
		kp_finding(ld->v, "kernel-oops", KP_SEV_WARNING, KP_CONS_WARN, NULL,
			   "the name of %s entry %" PRIu32 " is relocated against %s, not into "
			   "__ksymtab_strings: verify_exported_symbols() reads the name at that "
			   "symbol's address (as simplify_symbols() resolved it) holding "
			   "module_mutex; what lies there is not known here (some other name, or "
			   "an oops that leaves the lock held); not predicted",
			   table, w->index, w->target);
		return 0;
	}
	wild_where(w->offset, where, sizeof(where));
	if (m->machine != EM_X86_64) {
		/* arm64: kp_rule_wild_export_reloc() refused the surely out-of-range values */
		bool near_s32 = m->machine == EM_AARCH64 &&
				(w->offset - (int64_t)m->image_size < INT32_MIN ||
				 w->offset + (int64_t)m->image_size > INT32_MAX);

		kp_finding(
			ld->v, "kernel-oops", KP_SEV_WARNING, KP_CONS_WARN, NULL,
			"the name of %s entry %" PRIu32 " points %s __ksymtab_strings, outside "
			"the module's strings (%s): verify_exported_symbols() reads it holding "
			"module_mutex; what lies there depends on the running kernel's memory map "
			"(an oops that leaves the lock held, or some other name)%s; not predicted",
			table, w->index, where, name_field(m->machine),
			near_s32 ? ", if its relocation fits s32 (by where the module's sections "
				   "lie; else the load fails with ENOEXEC)"
				 : "");
		return 0;
	}
	if (w->offset > KP_WILD_HOLE_MAX || w->offset - (int64_t)m->image_size < KP_WILD_FIT_MIN) {
		kp_finding(ld->v, "kernel-oops", KP_SEV_WARNING, KP_CONS_WARN, NULL,
			   "the name of %s entry %" PRIu32 " points %s __ksymtab_strings, outside "
			   "the module's strings: verify_exported_symbols() reads it holding "
			   "module_mutex, where the kernel may have memory mapped or not (an oops "
			   "that leaves the lock held; R_X86_64_PC32 is truncated to 32 bits, not "
			   "checked); not predicted",
			   table, w->index, where);
		return 0;
	}
	kp_msg(c, ld, "BUG: unable to handle page fault for address: (__ksymtab_strings %s)",
	       where);
	ld->v->holds_module_mutex = true;
	kp_finding(ld->v, "kernel-oops", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
		   "the name of %s entry %" PRIu32 " points %s __ksymtab_strings, below the "
		   "module mapping space into the unused hole under the kernel text (with the "
		   "module mapped in its first 512 MB): complete_formation() takes module_mutex "
		   "and verify_exported_symbols() looks the name up with find_symbol(), whose "
		   "strcmp() faults on it: the kernel oopses (global taint D, the loading process "
		   "is killed) and the lock stays held, so every later module load blocks for ever",
		   table, w->index, where);
	return KP_ERR_OOPS;
}

/*
 * arm64's apply_relocate_add() -> reloc_data(RELOC_OP_PREL, 32) (arch/arm64/kernel/module.c,
 * 5.10 … 7.2): the name field's value, the name's address - the field's, outside s32 is
 * -ERANGE: "module %s: overflow in relocation type %d val %Lx" (val: the name's address),
 * -ENOEXEC. The field and __ksymtab_strings lie in one allocation (the core image before 6.4,
 * MOD_RODATA from 6.4), less than the module's size apart, either way round: a name farther
 * than s32 plus that size from its string always overflows, a nearer one may not. Called by
 * kp_rule_apply_relocations() where the name's relocation comes in apply_relocations()' order
 * (the first refused relocation, of a type or this value, ends apply_relocate_add()).
 */
int kp_rule_wild_export_reloc(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	const struct kp_module *m = ld->m;
	const struct kp_wild_export *w = &m->wild_export;
	const struct kp_kver *v = c->p->version_known ? &c->p->version : NULL;
	int64_t size = (int64_t)m->image_size;
	struct kp_reloc_verdict rv;
	char where[48];

	if (!w->present || w->target || m->machine != EM_AARCH64 ||
	    (w->offset + size >= INT32_MIN && w->offset - size <= INT32_MAX))
		return 0;
	wild_where(w->offset, where, sizeof(where));
	kp_arch_reloc_check(m->machine, m->is64, true, R_AARCH64_PREL32, v, &rv);
	kp_msg(c, ld, "%smodule %s: overflow in relocation type %d val (__ksymtab_strings %s)",
	       rv.prefix ? rv.prefix : "", ld->name, R_AARCH64_PREL32, where);
	kp_finding(ld->v, "relocation-overflow", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
		   "the name of %s entry %" PRIu32 " points %s __ksymtab_strings: its "
		   "R_AARCH64_PREL32 value (the name's address - the field's, both in the module) "
		   "does not fit s32, and arm64's apply_relocate_add() refuses it (reloc_data(): "
		   "-ERANGE)",
		   kp_export_table_section(w->table), w->index, where);
	return -ENOEXEC;
}
