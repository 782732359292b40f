// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Reads past the module image, for the loader checks whose absence makes the kernel read
 * out of bounds (kernels before the check; the callers name it). The loader holds the
 * module in one vmalloc() buffer of the image's size: kernel_read_file() for finit_module(),
 * copy_module_from_user() for init_module() (a module kmod decompressed), or the vmap() of
 * the pages module_decompress() filled (kernel/module/main.c, kernel/module/decompress.c).
 * vmalloc()/vmap() areas are page-rounded and followed by one unmapped guard page
 * (mm/vmalloc.c, no VM_NO_GUARD), so a read in the rest of the last page returns leftover
 * bytes, a read in the guard page faults, and past it nothing can be said.
 */
#include <elf.h>

#include "rules.h"

/* Debian's page sizes: 64 KiB on ppc64el, 4 KiB on every other architecture it builds. */
static uint64_t page_size(uint16_t machine)
{
	return machine == EM_PPC64 ? 65536 : 4096;
}

enum kp_oob kp_oob_read(const struct kp_module *m, uint64_t off, unsigned width)
{
	uint64_t page = page_size(m->machine);
	uint64_t end = (m->image_size + page - 1) / page * page; /* the mapped bytes */

	if (off <= end && width <= end - off)
		return KP_OOB_INSIDE;
	if (off < end + page)
		return KP_OOB_GUARD; /* the read reaches into the guard page */
	return KP_OOB_BEYOND;
}

/* The lines the kernel prints first when it faults on such a read (x86 only; NULL else). */
const char *kp_oob_fault_line(uint16_t machine)
{
	/* arch/x86/mm/fault.c show_fault_oops() */
	if (machine == EM_X86_64 || machine == EM_386)
		return "BUG: unable to handle page fault for address: (past the module image)";
	return NULL;
}
