/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel's BTF through the base cache (cache/base-cache.h): btf_parse_vmlinux()'s checks
 * of every type (49 M instructions for Debian 6.12's 4.9 MB, most of a hook's time on a BTF
 * kernel) made once per BTF, the types index they produce kept in an entry and used again.
 * The BTF itself is still read (the module checks read its types and strings).
 */
#ifndef KP_VMLINUX_BTF_CACHED_H
#define KP_VMLINUX_BTF_CACHED_H

#include <stddef.h>

#include "cache/base-cache.h"
#include "kernel-facts.h"

/*
 * kp_facts_vmlinux_btf(@f, @data, @len, @path, NULL) for the BTF just read from @path, through
 * @cache (NULL: that function). The index is found by @path's file state when it is trusted
 * and settled, or, for a file of the running kernel (/sys/kernel/btf/vmlinux, on sysfs: it
 * cannot change while the kernel runs), by the boot's id (@root's proc/sys/kernel/random/
 * boot_id, used only when it is on procfs; @root NULL: /) with its size, device and inode;
 * any other file is parsed every time. Only a base that parses is stored. Returns what
 * kp_facts_vmlinux_btf() returns.
 */
int kp_facts_vmlinux_btf_cached(struct kp_kernel_facts *f, const unsigned char *data, size_t len,
				const char *path, struct kp_base_cache *cache, const char *root);

#endif
