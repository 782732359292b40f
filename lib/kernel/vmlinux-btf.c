// SPDX-License-Identifier: LGPL-2.1-or-later
/* The kernel's BTF from a vmlinux's .BTF section or a raw BTF file (vmlinux-btf.h). */
#include "vmlinux-btf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "file/bytes.h"
#include "read/elf-file.h"

/* A debug vmlinux is hundreds of MiB: the cap vmlinux-exports.c uses. */
#define VMLINUX_MAX (KP_DEFAULT_MAX_SIZE * 4)

static bool raw_btf(const unsigned char *p, size_t len)
{
	return len >= 8 && ((p[0] == 0x9f && p[1] == 0xeb) || (p[0] == 0xeb && p[1] == 0x9f));
}

static int from_elf(const char *path, struct kp_bytes *bytes, struct kp_vmlinux_btf *out,
		    struct kp_err *err)
{
	struct kp_elf e;
	const struct kp_section *s;
	unsigned char *copy;
	size_t idx;
	int r = -1;

	if (kp_elf_open(&e, bytes->data, bytes->len, err) < 0)
		return kp_err_set(err, "%s: neither raw BTF nor an ELF file: %s", path, err->msg);
	idx = kp_elf_find_section(&e, ".BTF");
	if (!idx) {
		kp_err_set(err, "%s: no .BTF section (a kernel built without DEBUG_INFO_BTF?)",
			   path);
		goto out;
	}
	s = &e.sections[idx];
	if (!s->data || !s->size) {
		kp_err_set(err, "%s: the .BTF section is empty or outside the file", path);
		goto out;
	}
	copy = malloc((size_t)s->size);
	if (!copy) {
		kp_err_set(err, "out of memory");
		goto out;
	}
	memcpy(copy, s->data, (size_t)s->size);
	out->data = copy;
	out->len = (size_t)s->size;
	r = 0;
out:
	kp_elf_close(&e);
	return r;
}

int kp_vmlinux_btf_read(const char *path, struct kp_vmlinux_btf *out, struct kp_err *err)
{
	return kp_vmlinux_btf_read_in(NULL, path, out, err);
}

int kp_vmlinux_btf_read_in(const struct kp_root_dir *root, const char *path,
			   struct kp_vmlinux_btf *out, struct kp_err *err)
{
	struct kp_bytes bytes;
	int r;

	memset(out, 0, sizeof(*out));
	clock_gettime(CLOCK_REALTIME, &out->read_at);
	/* read_text: sysfs reports a size the read need not match; compressed files decoded */
	if (kp_bytes_read_text_in(root, path, VMLINUX_MAX, &bytes, err) < 0) {
		char why[sizeof(err->msg)];
		int errnum = err->errnum;

		snprintf(why, sizeof(why), "%s", err->msg);
		kp_err_errno(err, errnum, "%s: %s", path, why);
		return -1;
	}
	out->src = (struct stat){ .st_dev = bytes.dev,
				  .st_ino = bytes.ino,
				  .st_mode = bytes.mode,
				  .st_uid = bytes.uid,
				  .st_size = bytes.size,
				  .st_mtim = bytes.mtim,
				  .st_ctim = bytes.ctim };
	if (raw_btf(bytes.data, bytes.len)) {
		out->data = bytes.data;
		out->len = bytes.len;
		bytes.data = NULL;
		r = 0;
	} else {
		r = from_elf(path, &bytes, out, err);
	}
	kp_bytes_release(&bytes);
	return r;
}

void kp_vmlinux_btf_release(struct kp_vmlinux_btf *b)
{
	if (b->map)
		munmap(b->map, b->maplen);
	else
		free((void *)b->data);
	memset(b, 0, sizeof(*b));
}
