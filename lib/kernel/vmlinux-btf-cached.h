/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel's BTF through the base cache (cache/base-cache.h): btf_parse_vmlinux()'s checks
 * of every type (49 M instructions for Debian 6.12's 4.9 MB, most of a hook's time on a BTF
 * kernel) made once per BTF, the types index they produce kept in an entry and used again.
 * The hook does not read the BTF either (kp_vmlinux_btf_load_cached()): the module checks
 * read its types and strings where it lies, mapped.
 */
#ifndef KP_VMLINUX_BTF_CACHED_H
#define KP_VMLINUX_BTF_CACHED_H

#include <stddef.h>

#include "cache/base-cache.h"
#include "kernel-facts.h"
#include "vmlinux-btf.h"

/*
 * kp_facts_vmlinux_btf(@f, @b's data and length, @path, NULL) for the BTF @b just read from
 * @path (kp_vmlinux_btf_read_in()), through @cache (NULL: that function). The index is found by
 * @path's file state when it is trusted and settled, or, for a file of the running kernel
 * (/sys/kernel/btf/vmlinux, on sysfs: it cannot change while the kernel runs), by the boot's id
 * (@root's proc/sys/kernel/random/ boot_id, used only when it is on procfs; @root NULL: /) with its
 * size, device and inode; under @root (NULL: none), @path is opened inside it
 * (kp_open_regular_in()); any other file is parsed every time. An entry is used or stored only when
 * @b was read from the file the key was made from, in that state (@b->src), settled before the read
 * began (@b->read_at, kp_state_settled()); only a base that parses is stored. Returns what
 * kp_facts_vmlinux_btf() returns.
 */
int kp_facts_vmlinux_btf_cached(struct kp_kernel_facts *f, const struct kp_vmlinux_btf *b,
				const char *path, struct kp_base_cache *cache,
				const struct kp_root_dir *root);

/*
 * The kernel's BTF at @path for @f without reading it where the cache allows: reads @path
 * (kp_vmlinux_btf_read()) into @out and sets @f's BTF as kp_facts_vmlinux_btf_cached() does,
 * except on a hit of @cache (the same keys), where @out maps @path instead (raw BTF, the
 * running kernel's /sys/kernel/btf/vmlinux when the kernel allows it, v6.16+, or a trusted
 * file whose state has not moved) or stays empty and @f's BTF lies in the entry's own copy
 * of the bytes (stored where the source cannot be mapped: sysfs before v6.16, an ELF or
 * compressed file), checked by its CRC-32 before use. Only the entry's header, index and
 * the pages the module checks touch are read. @out->scope is the module BTF memo's scope
 * (kernel/btf-judge.h) when an entry was found or made (has_scope), kept in the entry:
 * neither the BTF hashed nor OpenSSL started on a warm call.
 * Release @out after @f. 0, -1 (@path cannot be read: @err as kp_vmlinux_btf_read()), or -2
 * (out of memory).
 */
/*
 * The hook's first look, before it knows whether it needs the BTF at all: the module BTF
 * memo's scope (kernel/btf-judge.h) of @path's BTF into @scope (32 bytes) from the header of
 * its base cache entry alone (found as kp_vmlinux_btf_load_cached() finds it; the header's
 * own CRC checked, the index neither read nor checked, nothing parsed: an entry is only made
 * for a BTF that parses). When every module's verdict is then in the memo the BTF is never
 * loaded. 0, or -1 (no such entry, or its header is damaged: load it).
 */
int kp_vmlinux_btf_peek_cached(struct kp_kernel_facts *f, const char *path,
			       struct kp_base_cache *cache, const struct kp_root_dir *root,
			       unsigned char *scope);
int kp_vmlinux_btf_load_cached(struct kp_kernel_facts *f, const char *path,
			       struct kp_base_cache *cache, const struct kp_root_dir *root,
			       struct kp_vmlinux_btf *out, struct kp_err *err);

#endif
