// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The libraries the binary dlopen()s (lazy-lib.h; libhogweed: kernel/ecdsa-nettle.c), named in
 * an ELF note for the tools that copy a program with what it needs: the "dlopen metadata" note
 * of the UAPI group's specification (ELF_DLOPEN_METADATA: section .note.dlopen, owner "FDO",
 * type 0x407c0c0a, a NUL-terminated JSON array of {feature, description, priority, soname}),
 * which systemd's binaries carry and initramfs builders, package dependency generators and
 * `systemd-analyze dlopen-metadata` read. Without it a tool that follows NEEDED entries only
 * (ldd, copy_exec) copies kopolicy without libkmod, libelf, ... and the copy cannot read a
 * module. Linked into the program itself (Makefile.am), not through the archive: nothing refers
 * to it.
 */
#include <stdint.h>

#define KP_NOTE_OWNER	    "FDO"
#define KP_NOTE_TYPE_DLOPEN UINT32_C(0x407c0c0a)

#define KP_DLOPEN_ENTRY(feature, description, priority, soname)       \
	"{\"feature\":\"" feature "\",\"description\":\"" description \
	"\",\"priority\":\"" priority "\",\"soname\":[\"" soname "\"]}"

/*
 * One entry per library, each SONAME the one configure found (KP_SONAME in configure.ac);
 * laid out by hand (clang-format would cut the strings).
 */
/* clang-format off */
#define KP_DLOPEN_JSON                                                                             \
	"[" KP_DLOPEN_ENTRY("kmod", "modprobe's configuration and indexes", "required",             \
			    KP_LIBKMOD_SONAME) ","                                                 \
	KP_DLOPEN_ENTRY("elf", "reading modules and vmlinux", "required", KP_LIBELF_SONAME) ","   \
	KP_DLOPEN_ENTRY("crypto", "digests and module signatures", "required",                    \
			KP_LIBCRYPTO_SONAME) ","                                                   \
	KP_DLOPEN_ENTRY("lzma", "xz-compressed modules and kernel images", "required",            \
			KP_LIBLZMA_SONAME) ","                                                     \
	KP_DLOPEN_ENTRY("zstd", "zstd-compressed modules and kernel images", "required",          \
			KP_LIBZSTD_SONAME) ","                                                     \
	KP_DLOPEN_ENTRY("zlib", "gzip-compressed modules and kernel images", "required",          \
			KP_LIBZ_SONAME) ","                                                        \
	KP_DLOPEN_ENTRY("json-c", "JSON and SARIF output, JSON input", "required",                \
			KP_LIBJSONC_SONAME) ","                                                    \
	KP_DLOPEN_ENTRY("hogweed", "faster ECDSA signatures (OpenSSL without)", "recommended",     \
			KP_HOGWEED_SONAME) "]"
/* clang-format on */

/* An ELF note: header, owner padded to 4 bytes, then the description (the JSON, with its NUL). */
struct kp_dlopen_note {
	uint32_t namesz;
	uint32_t descsz;
	uint32_t type;
	char owner[sizeof(KP_NOTE_OWNER)];
	_Alignas(4) char json[sizeof(KP_DLOPEN_JSON)];
};

__attribute__((used, section(".note.dlopen"))) _Alignas(4) static const
	struct kp_dlopen_note kp_dlopen_note = {
		.namesz = sizeof(KP_NOTE_OWNER),
		.descsz = sizeof(KP_DLOPEN_JSON),
		.type = KP_NOTE_TYPE_DLOPEN,
		.owner = KP_NOTE_OWNER,
		.json = KP_DLOPEN_JSON,
	};
