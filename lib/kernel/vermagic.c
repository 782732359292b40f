// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * VERMAGIC_STRING = UTS_RELEASE " " SMP PREEMPT MODULE_UNLOAD MODVERSIONS MODULE_ARCH_VERMAGIC
 * RANDSTRUCT (include/linux/vermagic.h), MODULE_ARCH_VERMAGIC from each architecture's
 * asm/vermagic.h, as data: an architecture's string is a sequence of parts, each the text of
 * the first configuration symbol of its list that is y, or its default.
 */
#include "vermagic.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "util/util.h"

struct vm_choice {
	const char *sym; /* NULL: always */
	const char *text;
};

struct vm_part {
	const struct vm_choice *choices;
	size_t nchoices;
	const char *dflt; /* none of the symbols is y; NULL: not derivable */
};

struct vm_arch {
	const char *arch; /* the config header's "Linux/<arch>" */
	const struct vm_part *parts;
	size_t nparts;
};

#define PART(list, d)                        \
	{                                    \
		list, KP_ARRAY_SIZE(list), d \
	}

/* arch/x86/include/asm/vermagic.h: MODULE_PROC_FAMILY on 32-bit only (all families v5.10-v7.2) */
static const struct vm_choice x86_family[] = {
	{ "CONFIG_X86_64", "" },
	{ "CONFIG_M486SX", "486SX " },
	{ "CONFIG_M486", "486 " },
	{ "CONFIG_M586", "586 " },
	{ "CONFIG_M586TSC", "586TSC " },
	{ "CONFIG_M586MMX", "586MMX " },
	{ "CONFIG_MCORE2", "CORE2 " },
	{ "CONFIG_MATOM", "ATOM " },
	{ "CONFIG_M686", "686 " },
	{ "CONFIG_MPENTIUMII", "PENTIUMII " },
	{ "CONFIG_MPENTIUMIII", "PENTIUMIII " },
	{ "CONFIG_MPENTIUMM", "PENTIUMM " },
	{ "CONFIG_MPENTIUM4", "PENTIUM4 " },
	{ "CONFIG_MK6", "K6 " },
	{ "CONFIG_MK7", "K7 " },
	{ "CONFIG_MK8", "K8 " },
	{ "CONFIG_MELAN", "ELAN " },
	{ "CONFIG_MCRUSOE", "CRUSOE " },
	{ "CONFIG_MEFFICEON", "EFFICEON " },
	{ "CONFIG_MWINCHIPC6", "WINCHIPC6 " },
	{ "CONFIG_MWINCHIP3D", "WINCHIP3D " },
	{ "CONFIG_MCYRIXIII", "CYRIXIII " },
	{ "CONFIG_MVIAC3_2", "VIAC3-2 " },
	{ "CONFIG_MVIAC7", "VIAC7 " },
	{ "CONFIG_MGEODEGX1", "GEODEGX1 " },
	{ "CONFIG_MGEODE_LX", "GEODE " },
};
static const struct vm_part x86_parts[] = { PART(x86_family, NULL) };

/* arch/arm64/include/asm/vermagic.h */
static const struct vm_choice arm64_magic[] = { { NULL, "aarch64" } };
static const struct vm_part arm64_parts[] = { PART(arm64_magic, NULL) };

/* arch/riscv/include/asm/vermagic.h */
static const struct vm_choice riscv_magic[] = { { NULL, "riscv" } };
static const struct vm_part riscv_parts[] = { PART(riscv_magic, NULL) };

/*
 * arch/arm/include/asm/vermagic.h: "ARMv" __LINUX_ARM_ARCH__, which arch/arm/Makefile sets
 * from the CPU_32v* symbols, the last assignment that is y winning (the oldest architecture;
 * CPU_32v6K counts only with CPU_32v6, which gives ARMv6 by itself: armmp has v6K and v7, ARMv7);
 * then THUMB2_KERNEL and ARM_PATCH_PHYS_VIRT.
 */
static const struct vm_choice arm_vsn[] = {
	{ "CONFIG_CPU_32v3", "ARMv3 " },  { "CONFIG_CPU_32v4", "ARMv4 " },
	{ "CONFIG_CPU_32v4T", "ARMv4 " }, { "CONFIG_CPU_32v5", "ARMv5 " },
	{ "CONFIG_CPU_32v6", "ARMv6 " },  { "CONFIG_CPU_32v7", "ARMv7 " },
	{ "CONFIG_CPU_32v7M", "ARMv7 " },
};
static const struct vm_choice arm_thumb[] = { { "CONFIG_THUMB2_KERNEL", "thumb2 " } };
static const struct vm_choice arm_p2v[] = { { "CONFIG_ARM_PATCH_PHYS_VIRT", "p2v8 " } };
static const struct vm_part arm_parts[] = {
	PART(arm_vsn, NULL),
	PART(arm_thumb, ""),
	PART(arm_p2v, ""),
};

/*
 * arch/powerpc/include/asm/vermagic.h: the ftrace ABI (patchable-function-entry from v6.7,
 * mprofile-kernel), then RELOCATABLE.
 */
static const struct vm_choice ppc_ftrace[] = {
	{ "CONFIG_ARCH_USING_PATCHABLE_FUNCTION_ENTRY", "patchable-function-entry " },
	{ "CONFIG_MPROFILE_KERNEL", "mprofile-kernel " },
};
static const struct vm_choice ppc_reloc[] = { { "CONFIG_RELOCATABLE", "relocatable " } };
static const struct vm_part ppc_parts[] = { PART(ppc_ftrace, ""), PART(ppc_reloc, "") };

/* arch/mips/include/asm/vermagic.h: MODULE_PROC_FAMILY MODULE_KERNEL_TYPE (v5.10-v7.2) */
static const struct vm_choice mips_family[] = {
	{ "CONFIG_CPU_BMIPS", "BMIPS " },
	{ "CONFIG_CPU_MIPS32_R1", "MIPS32_R1 " },
	{ "CONFIG_CPU_MIPS32_R2", "MIPS32_R2 " },
	{ "CONFIG_CPU_MIPS32_R5", "MIPS32_R5 " },
	{ "CONFIG_CPU_MIPS32_R6", "MIPS32_R6 " },
	{ "CONFIG_CPU_MIPS64_R1", "MIPS64_R1 " },
	{ "CONFIG_CPU_MIPS64_R2", "MIPS64_R2 " },
	{ "CONFIG_CPU_MIPS64_R5", "MIPS64_R5 " },
	{ "CONFIG_CPU_MIPS64_R6", "MIPS64_R6 " },
	{ "CONFIG_CPU_R3000", "R3000 " },
	{ "CONFIG_CPU_TX39XX", "TX39XX " },
	{ "CONFIG_CPU_VR41XX", "VR41XX " },
	{ "CONFIG_CPU_R4300", "R4300 " },
	{ "CONFIG_CPU_R4X00", "R4X00 " },
	{ "CONFIG_CPU_TX49XX", "TX49XX " },
	{ "CONFIG_CPU_R5000", "R5000 " },
	{ "CONFIG_CPU_R5500", "R5500 " },
	{ "CONFIG_CPU_NEVADA", "NEVADA " },
	{ "CONFIG_CPU_R10000", "R10000 " },
	{ "CONFIG_CPU_RM7000", "RM7000 " },
	{ "CONFIG_CPU_SB1", "SB1 " },
	{ "CONFIG_CPU_LOONGSON32", "LOONGSON32 " },
	{ "CONFIG_CPU_LOONGSON2EF", "LOONGSON2EF " },
	{ "CONFIG_CPU_LOONGSON64", "LOONGSON64 " },
	{ "CONFIG_CPU_CAVIUM_OCTEON", "OCTEON " },
	{ "CONFIG_CPU_XLR", "XLR " },
	{ "CONFIG_CPU_XLP", "XLP " },
	{ "CONFIG_CPU_P5600", "P5600 " },
};
static const struct vm_choice kernel_type[] = {
	{ "CONFIG_32BIT", "32BIT " },
	{ "CONFIG_64BIT", "64BIT " },
};
static const struct vm_part mips_parts[] = { PART(mips_family, NULL), PART(kernel_type, "") };

/* arch/loongarch/include/asm/vermagic.h (v5.19+) */
static const struct vm_choice loongarch_family[] = { { NULL, "LOONGARCH " } };
static const struct vm_part loongarch_parts[] = {
	PART(loongarch_family, NULL),
	PART(kernel_type, ""),
};

static const struct vm_arch arches[] = {
	{ "x86", x86_parts, KP_ARRAY_SIZE(x86_parts) },
	{ "arm64", arm64_parts, KP_ARRAY_SIZE(arm64_parts) },
	{ "arm", arm_parts, KP_ARRAY_SIZE(arm_parts) },
	{ "powerpc", ppc_parts, KP_ARRAY_SIZE(ppc_parts) },
	{ "riscv", riscv_parts, KP_ARRAY_SIZE(riscv_parts) },
	{ "s390", NULL, 0 }, /* no asm/vermagic.h of its own: "" */
	{ "mips", mips_parts, KP_ARRAY_SIZE(mips_parts) },
	{ "loongarch", loongarch_parts, KP_ARRAY_SIZE(loongarch_parts) },
};

/* MODULE_ARCH_VERMAGIC into @out; false when it is not derivable */
static bool arch_magic(const struct kp_kconfig *c, char *out, size_t len)
{
	const struct vm_arch *a = NULL;
	size_t used = 0;

	for (size_t i = 0; i < KP_ARRAY_SIZE(arches) && !a; i++)
		if (!strcmp(c->arch, arches[i].arch))
			a = &arches[i];
	if (!a)
		return false;
	out[0] = '\0';
	for (size_t p = 0; p < a->nparts; p++) {
		const struct vm_part *part = &a->parts[p];
		const char *text = part->dflt;
		int n;

		for (size_t i = 0; i < part->nchoices; i++)
			if (!part->choices[i].sym || kp_kconfig_is_y(c, part->choices[i].sym)) {
				text = part->choices[i].text;
				break;
			}
		if (!text)
			return false;
		n = snprintf(out + used, len - used, "%s", text);
		if (n < 0 || (size_t)n >= len - used)
			return false;
		used += (size_t)n;
	}
	return true;
}

/*
 * MODULE_VERMAGIC_PREEMPT: "preempt " for PREEMPT_BUILD (v5.10: PREEMPT), "preempt_rt " for
 * PREEMPT_RT; when both are set (RT with PREEMPT_DYNAMIC, upstream from v6.13 and in Debian's
 * 6.12 RT backport) the one the kernel's vermagic.h tests first wins.
 */
static const char *preempt_magic(const struct kp_kconfig *c, bool rt_first)
{
	bool rt = kp_kconfig_is_y(c, "CONFIG_PREEMPT_RT");
	bool build =
		kp_kconfig_is_y(c, "CONFIG_PREEMPT_BUILD") || kp_kconfig_is_y(c, "CONFIG_PREEMPT");

	if (rt && (rt_first || !build))
		return "preempt_rt ";
	return build ? "preempt " : "";
}

int kp_vermagic_build(const struct kp_kconfig *c, const char *release, bool rt_first, char *buf,
		      size_t len)
{
	char arch[64];
	int n;

	if (!release || !c->arch)
		return -1;
	/* MODULE_RANDSTRUCT: "RANDSTRUCT_" and a hashed seed that is not in the config */
	if (kp_kconfig_is_y(c, "CONFIG_RANDSTRUCT_FULL") ||
	    kp_kconfig_is_y(c, "CONFIG_RANDSTRUCT_PERFORMANCE") ||
	    kp_kconfig_is_y(c, "CONFIG_GCC_PLUGIN_RANDSTRUCT"))
		return -1;
	if (!arch_magic(c, arch, sizeof(arch)))
		return -1;
	n = snprintf(buf, len, "%s %s%s%s%s%s", release,
		     kp_kconfig_is_y(c, "CONFIG_SMP") ? "SMP " : "", preempt_magic(c, rt_first),
		     kp_kconfig_is_y(c, "CONFIG_MODULE_UNLOAD") ? "mod_unload " : "",
		     kp_kconfig_is_y(c, "CONFIG_MODVERSIONS") ? "modversions " : "", arch);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}
