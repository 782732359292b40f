// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Reads past the module image, for the loader checks whose absence makes the kernel read
 * out of bounds (kernels before the check; the callers name it). The loader holds the
 * module in one vmalloc() buffer of the image's size: kernel_read_file() for finit_module(),
 * copy_module_from_user() for init_module() (a module kmod decompressed), or the vmap() of
 * the pages module_decompress() filled (kernel/module/main.c, kernel/module/decompress.c).
 * vmalloc()/vmap() areas are page-rounded and followed by one unmapped guard page
 * (mm/vmalloc.c, no VM_NO_GUARD), so a read in the rest of the last page returns leftover
 * bytes, a read in the guard page faults, and past it nothing can be said. The page size is
 * the target kernel's (kernel-facts.h page_shift: its config or release flavour); without
 * it, every page size the module's architecture can be built with is tried, and a read
 * whose outcome differs between them is not predictable.
 */
#include <elf.h>

#include "rules.h"

#ifndef EM_LOONGARCH
#define EM_LOONGARCH 258
#endif

/* The PAGE_SHIFT choices of each architecture's Kconfig; an unlisted one: the common three. */
static const struct {
	uint16_t machine;
	unsigned char shifts[4]; /* 0-terminated */
} page_shifts[] = {
	{ EM_X86_64, { 12 } },		  /* arch/x86: 4 KiB only */
	{ EM_386, { 12 } },		  /* arch/x86: 4 KiB only */
	{ EM_ARM, { 12 } },		  /* arch/arm: 4 KiB only */
	{ EM_S390, { 12 } },		  /* arch/s390: 4 KiB only */
	{ EM_RISCV, { 12 } },		  /* arch/riscv: 4 KiB only */
	{ EM_SPARCV9, { 13 } },		  /* arch/sparc: 8 KiB on sparc64 */
	{ EM_ALPHA, { 13 } },		  /* arch/alpha: 8 KiB */
	{ EM_AARCH64, { 12, 14, 16 } },	  /* ARM64_4K/16K/64K_PAGES */
	{ EM_PPC64, { 12, 16 } },	  /* PPC_4K/64K_PAGES (16K/256K: 32-bit 44x) */
	{ EM_PPC, { 12, 14, 16, 18 } },	  /* PPC_4K/16K/64K/256K_PAGES */
	{ EM_LOONGARCH, { 12, 14, 16 } }, /* PAGE_SIZE_4KB/16KB/64KB */
	{ EM_MIPS, { 12, 14, 16 } },	  /* PAGE_SIZE_4KB/16KB/64KB (8/32 KiB: rare) */
};
static const unsigned char other_shifts[] = { 12, 14, 16, 0 };

static enum kp_oob read_at(const struct kp_module *m, unsigned shift, uint64_t off, unsigned width)
{
	uint64_t page = (uint64_t)1 << shift;
	uint64_t end = (m->image_size + page - 1) / page * page; /* the mapped bytes */

	if (off <= end && width <= end - off)
		return KP_OOB_INSIDE;
	if (off < end + page)
		return KP_OOB_GUARD; /* the read reaches into the guard page */
	return KP_OOB_BEYOND;
}

enum kp_oob kp_oob_read(const struct kp_module *m, unsigned page_shift, uint64_t off,
			unsigned width)
{
	const unsigned char *shifts = other_shifts;
	enum kp_oob first;

	if (page_shift)
		return read_at(m, page_shift, off, width);
	for (size_t i = 0; i < sizeof(page_shifts) / sizeof(page_shifts[0]); i++)
		if (page_shifts[i].machine == m->machine)
			shifts = page_shifts[i].shifts;
	first = read_at(m, shifts[0], off, width);
	for (size_t i = 1; i < 4 && shifts[i]; i++)
		if (read_at(m, shifts[i], off, width) != first)
			return KP_OOB_UNKNOWN;
	return first;
}

/* The lines the kernel prints first when it faults on such a read (x86 only; NULL else). */
const char *kp_oob_fault_line(uint16_t machine)
{
	/* arch/x86/mm/fault.c show_fault_oops() */
	if (machine == EM_X86_64 || machine == EM_386)
		return "BUG: unable to handle page fault for address: (past the module image)";
	return NULL;
}
