/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel's VERMAGIC_STRING (include/linux/vermagic.h, v5.10 .. v7.2) derived from its
 * release and configuration: what check_modinfo() compares a module's vermagic with.
 */
#ifndef KP_VERMAGIC_H
#define KP_VERMAGIC_H

#include <stdbool.h>
#include <stddef.h>

#include "kernel-config.h"

/*
 * Writes the kernel's vermagic ("6.12.38+deb13-amd64 SMP preempt mod_unload modversions ")
 * into @buf. 0 on success; -1 when it cannot be derived: no release or architecture, an
 * architecture or processor family whose MODULE_ARCH_VERMAGIC is not modelled, RANDSTRUCT
 * (its hashed seed is not in the config), or @len too small. @rt_first: the kernel tests
 * PREEMPT_RT before PREEMPT_BUILD (KP_F_VERMAGIC_RT_FIRST, v6.13+).
 */
int kp_vermagic_build(const struct kp_kconfig *c, const char *release, bool rt_first, char *buf,
		      size_t len);

#endif
