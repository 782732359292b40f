// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The kernel's vermagic from its config: the strings Debian's real modules carry (modinfo -F
 * vermagic of the bookworm, trixie and sid trees), and the architectures' other branches.
 */
#include <stdbool.h>
#include <string.h>

#include "kernel/kernel-config.h"
#include "kernel/vermagic.h"
#include "../tap.h"

#define COMMON	  "CONFIG_SMP=y\nCONFIG_MODULE_UNLOAD=y\nCONFIG_MODVERSIONS=y\n"
#define VOLUNTARY "CONFIG_PREEMPT_VOLUNTARY_BUILD=y\nCONFIG_PREEMPT_VOLUNTARY=y\n"

static void check_vm(struct tap *t, const char *what, const char *config, const char *release,
		     bool rt_first, const char *want)
{
	struct kp_kconfig c = { 0 };
	struct kp_err err = { 0 };
	char buf[256] = "";
	int r = kp_kconfig_load_buffer(&c, what, (const unsigned char *)config, strlen(config),
				       &err);

	tap_ok(t, r == 0, "%s: config parsed%s%s", what, r ? ": " : "", r ? err.msg : "");
	r = kp_vermagic_build(&c, release, rt_first, buf, sizeof(buf));
	if (want)
		tap_is_str(t, r == 0 ? buf : "(not derived)", want, what);
	else
		tap_ok(t, r < 0, "%s: not derivable (got '%s')", what, r == 0 ? buf : "");
	kp_kconfig_release(&c);
}

/* up to v6.12: PREEMPT_BUILD is tested before PREEMPT_RT (KP_F_VERMAGIC_RT_FIRST off) */
#define check(t, what, config, release, want) check_vm(t, what, config, release, false, want)

int main(void)
{
	struct tap t = { 0 };
	char small[8];

	/* Debian's real trees */
	check(&t, "amd64 6.1 (PREEMPT_DYNAMIC)",
	      "# Linux/x86 6.1.192 Kernel Configuration\nCONFIG_X86_64=y\n"
	      "CONFIG_PREEMPT_VOLUNTARY=y\nCONFIG_PREEMPT_BUILD=y\nCONFIG_PREEMPT_DYNAMIC="
	      "y\n" COMMON,
	      "6.1.0-57-amd64", "6.1.0-57-amd64 SMP preempt mod_unload modversions ");
	check(&t, "amd64 5.10 (voluntary)",
	      "# Linux/x86 5.10.223 Kernel Configuration\nCONFIG_X86_64=y\n"
	      "CONFIG_PREEMPT_VOLUNTARY=y\n" COMMON,
	      "5.10.0-32-amd64", "5.10.0-32-amd64 SMP mod_unload modversions ");
	check(&t, "amd64 7.2 (no MODVERSIONS)",
	      "# Linux/x86 7.2.13 Kernel Configuration\nCONFIG_X86_64=y\nCONFIG_SMP=y\n"
	      "CONFIG_PREEMPT_BUILD=y\nCONFIG_PREEMPT_DYNAMIC=y\nCONFIG_MODULE_UNLOAD=y\n",
	      "7.2.13+deb14-amd64", "7.2.13+deb14-amd64 SMP preempt mod_unload ");
	check(&t, "arm64 6.12", "# Linux/arm64 6.12.117 Kernel Configuration\n" VOLUNTARY COMMON,
	      "6.12.117+deb13-arm64", "6.12.117+deb13-arm64 SMP mod_unload modversions aarch64");
	check(&t, "armhf armmp 6.12 (v6K and v7: ARMv7)",
	      "# Linux/arm 6.12.117 Kernel Configuration\n" VOLUNTARY COMMON
	      "CONFIG_ARM_PATCH_PHYS_VIRT=y\nCONFIG_CPU_32v6K=y\nCONFIG_CPU_32v7=y\n",
	      "6.12.117+deb13-armmp",
	      "6.12.117+deb13-armmp SMP mod_unload modversions ARMv7 p2v8 ");
	check(&t, "ppc64el 6.12 (patchable-function-entry over mprofile-kernel)",
	      "# Linux/powerpc 6.12.107 Kernel Configuration\n" VOLUNTARY COMMON
	      "CONFIG_MPROFILE_KERNEL=y\nCONFIG_ARCH_USING_PATCHABLE_FUNCTION_ENTRY=y\n"
	      "CONFIG_RELOCATABLE=y\n",
	      "6.12.107+deb13-powerpc64le",
	      "6.12.107+deb13-powerpc64le SMP mod_unload modversions patchable-function-entry "
	      "relocatable ");
	check(&t, "riscv64 6.12",
	      "# Linux/riscv 6.12.117 Kernel Configuration\n" VOLUNTARY COMMON "CONFIG_64BIT=y\n",
	      "6.12.117+deb13-riscv64", "6.12.117+deb13-riscv64 SMP mod_unload modversions riscv");
	check(&t, "s390x 6.12",
	      "# Linux/s390 6.12.107 Kernel Configuration\n" VOLUNTARY COMMON "CONFIG_64BIT=y\n",
	      "6.12.107+deb13-s390x", "6.12.107+deb13-s390x SMP mod_unload modversions ");

	/* the other branches of the architectures' headers */
	check(&t, "i386 686-pae",
	      "# Linux/x86 6.1.192 Kernel Configuration\nCONFIG_X86_32=y\n"
	      "CONFIG_M686=y\n" COMMON,
	      "6.1.0-57-686-pae", "6.1.0-57-686-pae SMP mod_unload modversions 686 ");
	check(&t, "i386 with an unknown family",
	      "# Linux/x86 6.1.192 Kernel Configuration\n"
	      "CONFIG_X86_32=y\nCONFIG_MFUTURE=y\n" COMMON,
	      "6.1.0-57-686", NULL);
	check(&t, "armel (v5, the oldest wins over v6)",
	      "# Linux/arm 6.1.192 Kernel Configuration\nCONFIG_CPU_32v5=y\nCONFIG_CPU_32v6=y\n"
	      "CONFIG_MODULE_UNLOAD=y\nCONFIG_MODVERSIONS=y\n",
	      "6.1.0-57-marvell", "6.1.0-57-marvell mod_unload modversions ARMv5 ");
	check(&t, "arm thumb2",
	      "# Linux/arm 6.12.1 Kernel Configuration\nCONFIG_CPU_32v7=y\n"
	      "CONFIG_THUMB2_KERNEL=y\n" COMMON,
	      "6.12.1",
	      "6.12.1 SMP mod_unload modversions "
	      "ARMv7 thumb2 ");
	check(&t, "arm without a CPU_32v symbol",
	      "# Linux/arm 6.12.1 Kernel Configuration\n" COMMON, "6.12.1", NULL);
	check(&t, "ppc64 5.10 (mprofile-kernel)",
	      "# Linux/powerpc 5.10.223 Kernel Configuration\n" COMMON
	      "CONFIG_MPROFILE_KERNEL=y\nCONFIG_RELOCATABLE=y\n",
	      "5.10.0-32-powerpc64le",
	      "5.10.0-32-powerpc64le SMP mod_unload modversions mprofile-kernel relocatable ");
	check(&t, "mips64el",
	      "# Linux/mips 6.1.192 Kernel Configuration\n"
	      "CONFIG_CPU_MIPS64_R2=y\nCONFIG_64BIT=y\n" COMMON,
	      "6.1.0-57-mips64r2el",
	      "6.1.0-57-mips64r2el SMP mod_unload modversions MIPS64_R2 64BIT ");
	check(&t, "loong64",
	      "# Linux/loongarch 6.12.1 Kernel Configuration\nCONFIG_64BIT=y\n" COMMON,
	      "6.12.1-loong64", "6.12.1-loong64 SMP mod_unload modversions LOONGARCH 64BIT ");
	check_vm(&t, "7.2 PREEMPT_RT with PREEMPT_DYNAMIC (v6.13+: RT is tested first)",
		 "# Linux/x86 7.2.13 Kernel Configuration\nCONFIG_X86_64=y\nCONFIG_PREEMPT_RT=y\n"
		 "CONFIG_PREEMPT_BUILD=y\nCONFIG_PREEMPT_DYNAMIC=y\n" COMMON,
		 "7.2.13+deb14-rt-amd64", true,
		 "7.2.13+deb14-rt-amd64 SMP preempt_rt mod_unload modversions ");
	check(&t, "Debian 6.12 rt-amd64: RT and PREEMPT_BUILD, 6.12 tests PREEMPT_BUILD first",
	      "# Linux/x86 6.12.117 Kernel Configuration\nCONFIG_X86_64=y\nCONFIG_PREEMPT_BUILD=y\n"
	      "CONFIG_PREEMPT_LAZY=y\nCONFIG_PREEMPT_RT=y\nCONFIG_PREEMPT_DYNAMIC=y\n" COMMON,
	      "6.12.117+deb13-rt-amd64",
	      "6.12.117+deb13-rt-amd64 SMP preempt mod_unload modversions ");
	check(&t, "RT alone (5.10..6.12: RT excluded PREEMPT_BUILD)",
	      "# Linux/x86 6.1.192 Kernel "
	      "Configuration\nCONFIG_X86_64=y\nCONFIG_PREEMPT_RT=y\n" COMMON,
	      "6.1.0-57-rt-amd64", "6.1.0-57-rt-amd64 SMP preempt_rt mod_unload modversions ");
	check(&t, "RANDSTRUCT: the hashed seed is not in the config",
	      "# Linux/x86 6.12.1 Kernel Configuration\nCONFIG_X86_64=y\n"
	      "CONFIG_RANDSTRUCT_FULL=y\n" COMMON,
	      "6.12.1", NULL);
	check(&t, "an architecture not modelled",
	      "# Linux/sparc 6.12.1 Kernel Configuration\n" COMMON, "6.12.1", NULL);
	check(&t, "no header: architecture unknown", COMMON, "6.12.1", NULL);
	check(&t, "no release", "# Linux/x86 6.12.1 Kernel Configuration\nCONFIG_X86_64=y\n", NULL,
	      NULL);
	{
		struct kp_kconfig c = { 0 };
		struct kp_err err = { 0 };
		static const char cfg[] =
			"# Linux/x86 6.12.1 Kernel Configuration\nCONFIG_X86_64=y\n";

		kp_kconfig_load_buffer(&c, "small", (const unsigned char *)cfg, sizeof(cfg) - 1,
				       &err);
		tap_ok(&t, kp_vermagic_build(&c, "6.12.1-amd64", false, small, sizeof(small)) < 0,
		       "a buffer too small is refused, not truncated");
		kp_kconfig_release(&c);
	}
	return tap_done(&t);
}
