/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A kernel's build configuration (.config, /boot/config-<release>,
 * /proc/config.gz): every CONFIG_ symbol it sets, plus shortcuts for the ones
 * the module loader's behaviour depends on.
 */
#ifndef KP_KERNEL_CONFIG_H
#define KP_KERNEL_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "cache/base-cache.h"
#include "cache/base-kvtab.h"
#include "util/symbol-index.h"
#include "util/util.h"

struct kp_kconfig_entry {
	const char *name;  /* "CONFIG_MODVERSIONS" */
	const char *value; /* "y", "m", a number, or a string without its quotes; "n" if not set */
	size_t line;	   /* where it was set (the last time, if set twice) */
};

struct kp_kconfig {
	bool known; /* a configuration was loaded */
	const char *path;

	/* Shortcuts: true when the symbol is =y (these are all bool options). */
	bool modules;		   /* CONFIG_MODULES */
	bool modversions;	   /* CONFIG_MODVERSIONS */
	bool basic_modversions;	   /* CONFIG_BASIC_MODVERSIONS (6.14+; __versions still emitted) */
	bool extended_modversions; /* CONFIG_EXTENDED_MODVERSIONS (6.14+) */
	bool module_rel_crcs;	   /* CONFIG_MODULE_REL_CRCS (4.10 .. 5.18, ppc64) */
	bool module_sig;	   /* CONFIG_MODULE_SIG */
	bool module_sig_force;	   /* CONFIG_MODULE_SIG_FORCE */
	bool module_sig_all;	   /* CONFIG_MODULE_SIG_ALL */
	bool module_force_load;	   /* CONFIG_MODULE_FORCE_LOAD */
	bool module_unload;	   /* CONFIG_MODULE_UNLOAD */
	bool module_force_unload;  /* CONFIG_MODULE_FORCE_UNLOAD */
	bool allow_missing_ns;	   /* CONFIG_MODULE_ALLOW_MISSING_NAMESPACE_IMPORTS */
	bool livepatch;		   /* CONFIG_LIVEPATCH */
	bool strict_module_rwx;	   /* CONFIG_STRICT_MODULE_RWX */
	bool trim_unused_ksyms;	   /* CONFIG_TRIM_UNUSED_KSYMS */
	bool prel32;		   /* CONFIG_HAVE_ARCH_PREL32_RELOCATIONS */
	bool lockdown_lsm;	   /* CONFIG_SECURITY_LOCKDOWN_LSM */
	bool lockdown_early;	   /* CONFIG_SECURITY_LOCKDOWN_LSM_EARLY */
	bool lockdown_force_integrity;	     /* CONFIG_LOCK_DOWN_KERNEL_FORCE_INTEGRITY */
	bool lockdown_force_confidentiality; /* CONFIG_LOCK_DOWN_KERNEL_FORCE_CONFIDENTIALITY */
	bool module_sig_blacklist;	     /* CONFIG_MODULE_SIG_BLACKLIST (Debian hash list) */
	const char *module_sig_hash;	     /* CONFIG_MODULE_SIG_HASH ("sha256"), or NULL */
	const char *localversion;	     /* CONFIG_LOCALVERSION, or NULL */

	/* From the "# Linux/x86 6.12.118 Kernel Configuration" header, or NULL. */
	const char *arch;    /* "x86" */
	const char *version; /* "6.12.118" (the upstream version, not the release) */

	/*
	 * File order (a symbol set twice appears twice); only when parsed: a configuration
	 * from the base cache has none (NULL, 0) and answers kp_kconfig_get() from @table.
	 */
	struct kp_kconfig_entry *entries;
	size_t nentries;
	struct kp_symbol_index index; /* name -> entries of that name, file order */
	struct kp_arena arena;
	struct kp_base_map map; /* from the base cache: the mapped entry, and @table in it */
	struct kp_kvtab table;
	/*
	 * Set (through a const configuration) when a lookup found @table damaged: its answer
	 * was NULL and cannot be trusted; the caller parses the file again (kernel-facts.c).
	 */
	bool *damaged;
	struct kp_base_cache *cache; /* where @map came from: a damaged entry is removed */
	struct kp_base_key key;
};

/*
 * Reads @path (plain, gzip, xz or zstd by magic; procfs' config.gz works).
 * Lines are "CONFIG_X=value", "# CONFIG_X is not set", other comments or
 * blank; anything else fails with "PATH:LINE: why". @c must be zeroed before its
 * first use; it is reset here and must be released with kp_kconfig_release(),
 * even after a failure.
 */
int kp_kconfig_load(struct kp_kconfig *c, const char *path, struct kp_err *err);
/* The same for @path under @root (NULL: none), opened inside it as kp_open_regular_in(). */
struct kp_root_dir;
int kp_kconfig_load_in(struct kp_kconfig *c, const struct kp_root_dir *root, const char *path,
		       struct kp_err *err);
/* Same over a buffer; @label names it in messages. */
int kp_kconfig_load_buffer(struct kp_kconfig *c, const char *label, const unsigned char *buf,
			   size_t len, struct kp_err *err);
void kp_kconfig_release(struct kp_kconfig *c);
/*
 * kp_kconfig_load_in() through the base cache (cache/base-cache.h): a configuration seen before
 * (by its file state, or the SHA-256 of its bytes when the state is not trusted) is mapped
 * from its entry, not parsed; a miss parses it and stores the last assignment of each
 * symbol. The same answers and errors as kp_kconfig_load_in(); @cache NULL: that function.
 * A table found damaged by a lookup sets *@c->damaged: parse again (cache NULL) and redo
 * what used it.
 */
int kp_kconfig_load_cached(struct kp_kconfig *c, const struct kp_root_dir *root, const char *path,
			   struct kp_base_cache *cache, struct kp_err *err);

/* Value of @name ("CONFIG_X" or "X"): "y", "m", "n" (not set), a string; NULL if absent. */
const char *kp_kconfig_get(const struct kp_kconfig *c, const char *name);
/* True if @name is =y. */
bool kp_kconfig_is_y(const struct kp_kconfig *c, const char *name);

/*
 * log2 of the kernel's PAGE_SIZE: CONFIG_PAGE_SHIFT (v6.9+), else the architecture's page
 * size choice (PAGE_SIZE_*KB, ARM64_*_PAGES, PPC_*_PAGES, PARISC_/IA64_/ANDES_PAGE_SIZE_*,
 * ARC_PAGE_SIZE_*K, MICROBLAZE_*_PAGES) or its fixed 8 KiB (alpha, sparc64, openrisc, m68k
 * Sun-3/ColdFire); 0 when the configuration says neither (a 4 KiB-only architecture such as
 * x86, arm, s390, riscv before v6.9, or no configuration).
 */
unsigned kp_kconfig_page_shift(const struct kp_kconfig *c);

#endif
