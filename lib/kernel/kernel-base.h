/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel side of symbol resolution: the exports vmlinux offers (and, from
 * Module.symvers, what in-tree modules export), read from any of
 *   - Module.symvers, every historical column layout, plain or compressed;
 *   - a linked vmlinux (its __ksymtab* tables);
 *   - System.map or /proc/kallsyms (the __ksymtab_<sym> labels).
 * Several sources may be loaded into one base: facts are merged per symbol and
 * disagreements are counted (kp_base_stats()).
 *
 * Everything a base points to lives in its arena (or in the cached table it was
 * loaded from, kept mapped) and goes with kp_base_free(). Once loaded, a base may be
 * shared between threads for lookups: the only thing they change is the entry of a
 * cached table's record made on its first use, once, under an atomic flag.
 *
 * Error messages of the loaders name the file they are about ("FILE:LINE: why"
 * for text formats), so callers print them as they are. A load that fails may
 * have added part of its source: treat the base as unusable then.
 */
#ifndef KP_KERNEL_BASE_H
#define KP_KERNEL_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "read/module.h"
#include "util/util.h"

/* Where a fact came from (struct kp_ksym.sources is a mask of these). */
enum kp_base_source {
	KP_SRC_SYMVERS = 1 << 0,    /* Module.symvers (or /boot/symvers-*.gz) */
	KP_SRC_VMLINUX = 1 << 1,    /* __ksymtab* of a vmlinux ELF */
	KP_SRC_SYSTEM_MAP = 1 << 2, /* System.map labels */
	KP_SRC_KALLSYMS = 1 << 3,   /* /proc/kallsyms labels */
};

/* One export known to the kernel side. */
struct kp_ksym {
	const char *name;
	const char *owner; /* "vmlinux", or the module path without .ko from Module.symvers */
	const char *ns;	   /* namespace, NULL if none (or unknown: see ns_known) */
	enum kp_export_table table;
	bool gpl_only; /* the loader's GPL_ONLY class (__ksymtab_gpl, _unused_gpl) */
	bool vmlinux;  /* owner is vmlinux */
	bool ns_known; /* false: only System.map/kallsyms named it, they cannot tell */
	bool has_crc;  /* a CRC is known (Module.symvers: non-zero, vmlinux: __kcrctab*) */
	uint32_t crc;
	unsigned sources; /* KP_SRC_* mask */
};

struct kp_kernel_base;

/* Counts over a base, for reports and sanity checks. */
struct kp_base_stats {
	size_t nsyms;	    /* all entries, modules included */
	size_t nvmlinux;    /* vmlinux exports */
	size_t ngpl_only;   /* vmlinux exports that are GPL-only */
	size_t nnamespaced; /* vmlinux exports with a namespace */
	size_t ncrc;	    /* vmlinux exports with a CRC */
	size_t nmodule;	    /* exports of modules (Module.symvers lines not owned by vmlinux) */
	size_t nduplicates; /* same name and owner seen again in one source (first kept) */
	size_t nconflicts;  /* sources disagreeing about class, CRC or namespace */
	const char *first_conflict; /* description of the first disagreement, or NULL */
	unsigned sources;	    /* KP_SRC_* mask of everything loaded */
};

/* A new, empty base. Returns 0, or -1 when out of memory (*@out is then NULL). */
int kp_base_new(struct kp_kernel_base **out);
void kp_base_free(struct kp_kernel_base *b);

/*
 * Loads @path into @b, the format detected from the content (never the name):
 * an ELF vmlinux, Module.symvers (plain, gzip, xz or zstd) or System.map /
 * kallsyms text. Debian's one-line stub System.map is refused with a hint.
 */
int kp_base_load(struct kp_kernel_base *b, const char *path, struct kp_err *err);

/*
 * Module.symvers in any layout (auto-detected from the first line, then
 * required on every line):
 *   crc sym module export            (<= 5.3)
 *   crc sym namespace module export  (5.4 .. 5.6-rc)
 *   crc sym module export namespace  (5.6+; namespace may be empty)
 * export is EXPORT_SYMBOL, EXPORT_SYMBOL_GPL, EXPORT_SYMBOL_GPL_FUTURE,
 * EXPORT_UNUSED_SYMBOL or EXPORT_UNUSED_SYMBOL_GPL. Compressed files are
 * decompressed by magic. A malformed line fails the whole load with
 * "PATH:LINE: why".
 */
int kp_base_load_symvers(struct kp_kernel_base *b, const char *path, struct kp_err *err);
/*
 * The same for @path under @root (NULL: none), opened inside it by descriptors
 * (kp_open_regular_in()); likewise kp_base_load_vmlinux_in(), kp_base_load_system_map_in().
 */
struct kp_root_dir;
int kp_base_load_symvers_in(struct kp_kernel_base *b, const struct kp_root_dir *root,
			    const char *path, struct kp_err *err);
/* Same over a buffer (tests, fuzzing); @label names it in messages. */
int kp_base_load_symvers_buffer(struct kp_kernel_base *b, const char *label,
				const unsigned char *buf, size_t len, struct kp_err *err);

/*
 * A linked vmlinux (ET_EXEC, or ET_DYN for relocatable kernels): entries of
 * __ksymtab, __ksymtab_gpl (and the pre-5.12 tables) as absolute pointers or
 * PREL32 offsets, names and namespaces from __ksymtab_strings, CRCs from
 * __kcrctab*. Sets the release from linux_banner when it has one.
 */
int kp_base_load_vmlinux(struct kp_kernel_base *b, const char *path, struct kp_err *err);
int kp_base_load_vmlinux_in(struct kp_kernel_base *b, const struct kp_root_dir *root,
			    const char *path, struct kp_err *err);

/*
 * System.map or /proc/kallsyms: an export is a __ksymtab_<sym> label; it is
 * GPL-only when it lies in [__start___ksymtab_gpl, __stop___ksymtab_gpl)
 * (likewise for the other tables). v5.4's __ksymtab_<ns>.<sym> labels give the
 * namespace; otherwise namespaces are unknown (ns_known false). Lines of
 * modules ("\t[mod]" in kallsyms) are skipped. Fails when every address is 0
 * (kallsyms read without the privilege to see addresses).
 */
int kp_base_load_system_map(struct kp_kernel_base *b, const char *path, struct kp_err *err);
int kp_base_load_system_map_in(struct kp_kernel_base *b, const struct kp_root_dir *root,
			       const char *path, struct kp_err *err);
int kp_base_load_system_map_buffer(struct kp_kernel_base *b, const char *label,
				   const unsigned char *buf, size_t len, struct kp_err *err);
/*
 * True when the file at @path (plain or compressed) has at least one
 * "ADDRESS TYPE NAME" line. False for Debian's stub System.map ("The real
 * System.map is in the linux-image-<release>-dbg package", one line that is no
 * symbol), an empty file and anything unreadable: such a file is no symbol source.
 */
bool kp_system_map_has_symbols(const char *path);

/* The vmlinux export @name, or NULL. Fast: a hash lookup. */
const struct kp_ksym *kp_base_lookup(const struct kp_kernel_base *b, const char *name);
/* The same with @hash == kp_hash_string(@name) (struct kp_import.hash). */
const struct kp_ksym *kp_base_lookup_hashed(const struct kp_kernel_base *b, const char *name,
					    uint32_t hash);
/*
 * The export @name of @owner ("vmlinux" or a Module.symvers module path);
 * @owner NULL: the first entry of that name whoever owns it.
 */
const struct kp_ksym *kp_base_lookup_owner(const struct kp_kernel_base *b, const char *name,
					   const char *owner);
const struct kp_ksym *kp_base_lookup_owner_hashed(const struct kp_kernel_base *b, const char *name,
						  uint32_t hash, const char *owner);
/* The next entry with the same name as @k (another owner), or NULL. */
const struct kp_ksym *kp_base_next_same_name(const struct kp_kernel_base *b,
					     const struct kp_ksym *k);

/*
 * The base's copy of the @len-byte name @name if any owner exports it, else NULL.
 * Read-only: safe from several threads once loading is over.
 */
const char *kp_base_intern(const struct kp_kernel_base *b, const char *name, size_t len);
/* The same with @hash == kp_hash_bytes(@name, @len). */
const char *kp_base_intern_hashed(const struct kp_kernel_base *b, const char *name, size_t len,
				  uint32_t hash);
/*
 * A name pool over the base's export names, for struct kp_open_opts: modules read
 * with it point to these names, so the base must outlive them.
 */
struct kp_name_pool kp_base_name_pool(const struct kp_kernel_base *b);

/* Number of entries and the entry at @i (0 <= i < count), in load order. */
size_t kp_base_count(const struct kp_kernel_base *b);
const struct kp_ksym *kp_base_at(const struct kp_kernel_base *b, size_t i);

void kp_base_stats(const struct kp_kernel_base *b, struct kp_base_stats *st);
/* The KP_SRC_* mask of every source loaded into @b (kp_base_begin_load()). */
unsigned kp_base_sources(const struct kp_kernel_base *b);

/* The kernel release (from a vmlinux banner or set by the caller), or NULL if unknown. */
const char *kp_base_release(const struct kp_kernel_base *b);
/* Records the release; fails if a different one is already known. */
int kp_base_set_kernel_release(struct kp_kernel_base *b, const char *release, struct kp_err *err);

/*
 * True if a Module.symvers owner ("drivers/usb/storage/usb-storage") names the
 * module file @path (".../kernel/drivers/usb/storage/usb-storage.ko.xz"): the
 * owner is a '/'-aligned suffix of the path without its .ko* extension.
 */
bool kp_base_owner_matches(const char *owner, const char *path);

/*
 * The Module.symvers owner ("drivers/misc/foo") of the first module entry whose module name
 * (the owner's basename, kbuild's name-fix) is @name, or NULL: the base describes the exports
 * of module @name (find_symbol() searches a live one's, kernel/module/main.c 5.10 to 7.2).
 * A linear scan: for the rare loaded module without a file.
 */
const char *kp_base_module_owner(const struct kp_kernel_base *b, const char *name);

#endif
