/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel's own BTF, which btf_parse_module() checks a module's .BTF against: the .BTF
 * section of a vmlinux (Debian's linux-headers vmlinux holds only that), or raw BTF as the
 * running kernel shows it in /sys/kernel/btf/vmlinux. A bzImage is not searched.
 */
#ifndef KP_VMLINUX_BTF_H
#define KP_VMLINUX_BTF_H

#include <stddef.h>
#include <sys/stat.h>
#include <time.h>

#include "util/util.h"

struct kp_vmlinux_btf {
	const unsigned char *data; /* the raw BTF: owned, or in @map */
	size_t len;
	void *map; /* a read-only mapping holding it (vmlinux-btf-cached.h), or NULL */
	size_t maplen;
	/* the module BTF memo's scope, when a base cache entry knew it (vmlinux-btf-cached.h) */
	bool has_scope;
	unsigned char scope[32];
	/* the file read, as it was opened (kp_vmlinux_btf_read_in()); st_mode 0: not known */
	struct stat src;
	/* a time taken before the file was read (the settle rule's, kp_state_settled()) */
	struct timespec read_at;
};

/*
 * Reads @path: an ELF file (plain or compressed) with a .BTF section, or raw BTF. 0, or -1
 * with @err (errnum ENOENT when @path does not exist).
 */
int kp_vmlinux_btf_read(const char *path, struct kp_vmlinux_btf *out, struct kp_err *err);
/* The same for @path under @root (NULL: none), opened inside it as kp_open_regular_in(). */
struct kp_root_dir;
int kp_vmlinux_btf_read_in(const struct kp_root_dir *root, const char *path,
			   struct kp_vmlinux_btf *out, struct kp_err *err);
void kp_vmlinux_btf_release(struct kp_vmlinux_btf *b);

#endif
