/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Rule profiles: which loader behaviours a target kernel has. Each behaviour is
 * a row of data (lib/kernel/profile.c: the mainline release that introduced it and the
 * stable releases it was backported to); a kernel version selects the rows.
 * The named profiles pre2020 / 2020 / 2023 override the two headline rules.
 */
#ifndef KP_PROFILE_H
#define KP_PROFILE_H

#include <stdbool.h>

#include "util/util.h"

struct kp_kver {
	int major, minor, patch;
};

enum kp_feature {
	KP_F_INHERIT_TAINT,	 /* 262e6ae7081d v5.9: inherit_taint() */
	KP_F_SYMBOL_GET_GPL,	 /* 9011e49d54dc v6.6: __symbol_get() needs EXPORT_SYMBOL_GPL */
	KP_F_INHERIT_MSG_SYMBOL, /* v5.19: inherit_taint() messages name the symbol */
	KP_F_TAINT_AFTER_DUP,	/* v6.4: module_augment_kernel_taints() after the duplicate check */
	KP_F_NO_LEGACY_TABLES,	/* v5.12: gpl_future/unused export tables removed */
	KP_F_NAMESPACES,	/* v5.4: symbol namespaces */
	KP_F_MODULE_NAMESPACES, /* v6.16: "module:" namespaces (EXPORT_SYMBOL_FOR_MODULES) */
	KP_F_THIS_MODULE_SIZE,	/* v6.4: .gnu.linkonce.this_module size must match */
	KP_F_GOT_EXEMPT,	/* v5.12, stable 5.10.20: _GLOBAL_OFFSET_TABLE_ ignored on x86 */
	KP_F_ERRNO_IN_UNKNOWN,	/* v5.10-era: "Unknown symbol %s (err -2)", "(err 0)" before */
	KP_F_LICENSE_SECOND_MSG, /* v6.4: "%s: module license taints kernel." after the license line
				  */
	KP_F_TEST_TAINT,	 /* v6.0: modinfo test= taints N */
	KP_F_SHNDX_CHECK,	 /* f9d69d5e7bde: simplify_symbols() rejects st_shndx >= e_shnum */
	KP_F_SYMSTRTAB_CHECKS,	 /* d979e3dffa93 v6.13: elf_validity_cache_strtab() */
	KP_F_EXT_MODVERSIONS,	 /* 54ac1ac8edeb v6.14: __version_ext_crcs/__version_ext_names */
	KP_F_KFLAGSTAB,		 /* 55fcb926b6d8 v7.1: one __ksymtab + __kflagstab GPL bits */
	KP_F_INIT_EEXIST_EBUSY,	 /* 743f8cae549a v7.1: init() -EEXIST becomes -EBUSY */
	KP_F_TAINT_FWCTL,	 /* 8eea4e744758 v6.15: taint bit 19 'J' */
	KP_F_VERMAGIC_RT_FIRST,	 /* 0b7a66a2c864 v6.13: vermagic tests PREEMPT_RT before PREEMPT */
	/* Distribution deltas (Debian's patches), selected by kp_profile_for_kernel(). */
	KP_F_MISSING_VERSION_FATAL, /* Debian: check_version() rejects a missing entry */
	KP_F_MODULE_HASH_BLACKLIST, /* Debian < 6.17: mod_is_hash_blacklisted() in mod_verify_sig()
				     */
	/* Upstream behaviours again (appended: the order of the tests' feature strings). */
	KP_F_ELF_SECHDR_CHECKS, /* ec2a29593c83 v5.12: raw e_shstrndx < e_shnum, section 0 null */
	KP_F_ELF_CHECK_MSGS,	/* 7fd982f394c4 v5.17: elf_validity_check() says why (pr_err) */
	KP_F_SEC0_BEFORE_SHSTRNDX,    /* v6.13, 6.12.117: _cache_sechdrs() before _secstrings() */
	KP_F_MACHINE_KEYRING,	      /* v5.18: the .machine keyring (MOK), linked to secondary */
	KP_F_MODULE_PLATFORM_KEYRING, /* Debian: mod_verify_sig() retries .platform */
	KP_F_MOK_TRUSTED_DEFAULT,     /* Debian < 6.17: trust_moklist() always true */
	KP_F_PERCPU_RELOCS, /* apply_relocations() relocates .data..percpu (7.2 tree, not 6.12) */
	/* Module BTF (btf_module_notify()); after the distribution deltas for the tests' sake. */
	KP_F_BTF_BASE_RELOCATE,	    /* v6.11: .BTF.base + btf_relocate() in btf_parse_module() */
	KP_F_BTF_DATASEC_PRINTABLE, /* 6.12 tree: any printable DATASEC name (6.1: identifier) */
	KP_F_BTF_LAYOUT,	    /* 7.2 tree: 32-byte btf_header, 7-bit kind, 24-bit vlen */
	KP_F_BTF_MISMATCH_QUIET,    /* 6.12 tree: an allowed mismatch is one pr_warn_once() */
	/* v7.0 "modsign: Enable ML-DSA module signing": ML-DSA signers, the authattrs waiver */
	KP_F_MLDSA_SIGNATURES,
	/*
	 * c200892b46ba "ima: Access decompressed kernel module to verify appended signature":
	 * a compressed finit_module() is appraised after module_decompress(), and the built-in
	 * secure_boot rule allows an appended signature (imasig|modsig)
	 */
	KP_F_IMA_DECOMPRESSED_MODULES,
	/*
	 * "certs: Reference revocation list for all keyrings": verify_pkcs7_message_sig() asks
	 * is_key_on_revocation_list() before any keyring, not only before the platform keyring
	 */
	KP_F_REVOCATION_ALL_KEYRINGS,
	/*
	 * "printk: remove logbuf_lock writer-protection of ringbuffer" (v5.13): vprintk_emit()
	 * no longer formats a line under logbuf_lock with interrupts off, so a fault inside a
	 * printk's vsnprintf() is an ordinary oops instead of a lock held for ever
	 */
	KP_F_PRINTK_LOCKLESS,
	KP_F_NFEATURES,
};

enum kp_distro {
	KP_DISTRO_UPSTREAM,
	KP_DISTRO_DEBIAN,
};

/* The newest kernel whose loader kopolicy models (checked against its source and a real boot). */
#define KP_NEWEST_MODELLED_MAJOR 7
#define KP_NEWEST_MODELLED_MINOR 2

struct kp_profile {
	const char *name;	/* "pre2020", "2020", "2023", or "auto" */
	struct kp_kver version; /* the kernel version the facts were derived from */
	bool version_known;
	/* The version is newer than KP_NEWEST_MODELLED_*: the newest known behaviour is used. */
	bool beyond_modelled;
	enum kp_distro distro;
	bool has[KP_F_NFEATURES];
};

/* Parses "6.12.118", "6.12.118+deb12-amd64", "5.10.0-21-amd64"; -1 if not a version. */
int kp_kver_parse(const char *s, struct kp_kver *v);
int kp_kver_cmp(const struct kp_kver *a, const struct kp_kver *b);

/*
 * The behaviours of kernel @v as built by @distro: mainline releases, the stable backports
 * table and the distribution's own patches.
 */
void kp_profile_for_kernel(struct kp_profile *p, const struct kp_kver *v, enum kp_distro distro);
/* Upstream kernel @v. */
void kp_profile_for_version(struct kp_profile *p, const struct kp_kver *v);
/* The newest behaviour set: used when the kernel version is unknown. */
void kp_profile_latest(struct kp_profile *p, enum kp_distro distro);
/* "7.2": the newest modelled kernel, for messages. */
const char *kp_profile_newest_modelled(void);
/* Applies "pre2020" | "2020" | "2023" | "auto" to @p; -1 for an unknown name. */
int kp_profile_apply_rules(struct kp_profile *p, const char *rules);

const char *kp_feature_name(enum kp_feature f);

struct kp_btf_rules;
/* The module BTF verifier of @p's kernel (lib/read/btf.h). */
void kp_profile_btf_rules(const struct kp_profile *p, struct kp_btf_rules *r);
/* The profile name that describes @p's headline rules: pre2020, 2020 or 2023. */
const char *kp_profile_rules_name(const struct kp_profile *p);

#endif
