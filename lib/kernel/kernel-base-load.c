// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kp_base_load() (kernel-base.h): a file's format told by its first bytes (an ELF vmlinux,
 * Module.symvers, System.map or kallsyms text) and handed to that format's loader
 * (vmlinux-exports.c, symvers.c, system-map.c).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file/bytes.h"
#include "kernel-base-internal.h"
#include "file/rootfs.h"

/* TEXT_SHORT: unknown, and @len bytes too few to tell (the first line's CRC or address runs on) */
enum text_format { TEXT_UNKNOWN, TEXT_SHORT, TEXT_SYMVERS, TEXT_SYSTEM_MAP };

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* The first line decides: "0x<hex>\t" is Module.symvers, "<hex> <type> " a symbol map. */
static enum text_format sniff_text(const unsigned char *p, size_t len)
{
	size_t i = 0, start;

	while (i < len && (p[i] == '\n' || p[i] == '\r'))
		i++;
	if (len - i >= 2 && p[i] == '0' && (p[i + 1] == 'x' || p[i + 1] == 'X'))
		i += 2;
	start = i;
	while (i < len && is_hex((char)p[i]))
		i++;
	if (i >= len)
		return TEXT_SHORT;
	if (i == start)
		return TEXT_UNKNOWN;
	if (p[i] == '\t')
		return TEXT_SYMVERS;
	if (p[i] == ' ' && i + 2 < len && p[i + 2] == ' ')
		return TEXT_SYSTEM_MAP;
	return p[i] == ' ' && i + 2 >= len ? TEXT_SHORT : TEXT_UNKNOWN;
}

bool kp_base_text_is_symvers(const unsigned char *p, size_t len)
{
	return sniff_text(p, len) == TEXT_SYMVERS;
}

bool kp_base_text_undecided(const unsigned char *p, size_t len)
{
	return sniff_text(p, len) == TEXT_SHORT;
}

int kp_base_load(struct kp_kernel_base *b, const char *path, struct kp_err *err)
{
	unsigned char head[SELFMAG];
	struct kp_bytes bytes;
	struct stat st;
	ssize_t n;
	int fd, r;

	fd = kp_open_regular(path, &st, err);
	if (fd < 0)
		return kp_base_err_prefix(err, path);
	do
		n = read(fd, head, sizeof(head));
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n < 0)
		return kp_err_set(err, "%s: read error: %s", path, strerror(errno));
	if ((size_t)n == sizeof(head) && !memcmp(head, ELFMAG, SELFMAG))
		return kp_base_load_vmlinux(b, path, err);

	/* kp_read_file(): /proc/kallsyms reports a size of 0. */
	if (kp_read_file(path, KP_BASE_MAX_TEXT, &bytes, err) < 0)
		return -1;
	if (bytes.len >= SELFMAG && !memcmp(bytes.data, ELFMAG, SELFMAG)) {
		kp_bytes_release(&bytes);
		/* A compressed vmlinux: the vmlinux reader decompresses by itself. */
		return kp_base_load_vmlinux(b, path, err);
	}
	switch (sniff_text(bytes.data, bytes.len)) {
	case TEXT_SYMVERS:
		r = kp_base_load_symvers_buffer(b, path, bytes.data, bytes.len, err);
		break;
	case TEXT_SYSTEM_MAP:
		r = kp_base_load_system_map_buffer(b, path, bytes.data, bytes.len, err);
		break;
	default:
		r = kp_err_set(err,
			       "%s: not a vmlinux, Module.symvers, System.map or kallsyms "
			       "file",
			       path);
	}
	kp_bytes_release(&bytes);
	return r;
}
