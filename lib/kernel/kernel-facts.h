/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Building struct kp_kernel_facts from what the user has: the kernel config
 * (boot/config-<release>), the release string, explicit overrides. Whatever is
 * not known is assumed (like a typical distribution kernel) and recorded in
 * facts->assumptions so reports can say so.
 */
#ifndef KP_KERNEL_FACTS_H
#define KP_KERNEL_FACTS_H

#include <stdbool.h>
#include <stdint.h>

#include "ima-policy.h"
#include "cache/base-cache.h"
#include "kernel-base.h"
#include "sig-keys.h"
#include "profile.h"
#include "util/util.h"

struct kp_keyring;
struct kp_btf;
struct kp_base_cache;

/* What is known about the target kernel beyond its exports. */
struct kp_kernel_facts {
	const char *release;
	struct kp_profile profile;
	bool modversions;	    /* CONFIG_MODVERSIONS */
	bool module_sig;	    /* CONFIG_MODULE_SIG */
	bool sig_enforce;	    /* CONFIG_MODULE_SIG_FORCE or module.sig_enforce=1 */
	bool lockdown;		    /* lockdown=integrity|confidentiality: unsigned loads -EPERM */
	bool force_load;	    /* CONFIG_MODULE_FORCE_LOAD */
	bool allow_missing_ns;	    /* CONFIG_MODULE_ALLOW_MISSING_NAMESPACE_IMPORTS */
	bool livepatch;		    /* CONFIG_LIVEPATCH */
	bool missing_version_fatal; /* Debian: check_version() rejects a missing entry */
	bool btf_modules;	    /* DEBUG_INFO_BTF_MODULES: btf_module_notify() checks .BTF */
	bool btf_mismatch_fatal;    /* DEBUG_INFO_BTF_MODULES and !MODULE_ALLOW_BTF_MISMATCH */
	bool mldsa_waive_authattrs; /* CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA (7.0+) */
	bool no_crypto_mldsa;	    /* a config without CONFIG_CRYPTO_MLDSA (y or m): no ML-DSA */
	/* The kernel's BTF, parsed (kp_btf_parse_base()) when btf_modules; NULL: not known. */
	struct kp_btf *vmlinux_btf;
	const char *vmlinux_btf_source;	    /* where it came from, for reports */
	struct kp_base_map vmlinux_btf_map; /* its types index from the base cache, or empty */
	const char *beyond_modelled;   /* the kernel is newer than kopolicy models: why, or NULL */
	bool signatures_trusted;       /* a present signature is assumed to verify */
	const struct kp_keyring *keys; /* the kernel's trusted keys (sig-keys.h); NULL: none */
	int secure_boot;	       /* booted with UEFI Secure Boot: 1, 0, -1 unknown */
	bool sb_sig_enforce;	       /* sig_enforce set by Secure Boot (IMA_ARCH_POLICY) */
	bool sb_lockdown; /* lockdown set by Secure Boot (LOCK_DOWN_IN_EFI_SECURE_BOOT) */
	struct kp_keyring_model keymodel; /* which keyrings verify modules (sig-keys.h) */
	struct kp_ima_policy ima;	  /* IMA appraisal of module reads (ima-policy.h) */
	/* CONFIG_MODULE_DECOMPRESS: kmod (31+) hands a compressed module to finit_module() */
	bool module_decompress;
	const char *vermagic;	   /* VERMAGIC_STRING of the kernel, NULL if unknown */
	uint64_t this_module_size; /* sizeof(struct module), 0 if unknown */
	/* log2 of PAGE_SIZE: the config's, else the release flavour's (-16k, -64k); 0 unknown */
	unsigned page_shift;
	const char *const *blacklist; /* module_blacklist= names */
	size_t nblacklist;
	unsigned long initial_taint; /* /proc/sys/kernel/tainted before the first load */
	unsigned init_flags;	     /* finit_module() flags: KP_INIT_IGNORE_* (modprobe --force) */
	const char *const *loaded;   /* names already loaded (running system): EEXIST */
	size_t nloaded;
	const char *const *loaded_proprietary; /* loaded base modules that carry P */
	size_t nloaded_proprietary;
	const char **assumptions; /* what was assumed for lack of a fact, for reports */
	size_t nassumptions;
	/* kp_facts_opts.keys_pending: "no key source" to be decided at this assumption's place */
	bool key_source_pending;
	size_t key_source_at;
	struct kp_arena arena; /* owns the strings above */
};

/* include/uapi/linux/module.h: what modprobe --force{,-modversion,-vermagic} passes. */
enum {
	KP_INIT_IGNORE_MODVERSIONS = 1,
	KP_INIT_IGNORE_VERMAGIC = 2,
};

struct kp_facts_opts {
	const char *config_path;   /* kernel .config / boot/config-*, plain or compressed */
	const char *release;	   /* uname -r of the target */
	const char *version;	   /* upstream X.Y.Z when the release hides it */
	const char *rules;	   /* auto | pre2020 | 2020 | 2023 */
	const char *distro;	   /* auto | debian | upstream */
	const char *vermagic;	   /* explicit VERMAGIC_STRING */
	int sig_enforce;	   /* -1: from the config; 0/1: override (module.sig_enforce=) */
	int lockdown;		   /* -1: unknown; 0 none; 1 integrity; 2 confidentiality */
	int secure_boot;	   /* -1: unknown; 0/1: UEFI Secure Boot off/on */
	int mok_trusted;	   /* -1: unknown; 0/1: MokListTrustedRT absent/present */
	int modversions;	   /* -1: from the config */
	int force_load;		   /* -1: from the config */
	int allow_missing_ns;	   /* -1: from the config */
	bool untrusted_signatures; /* signed modules' keys are not trusted by the target */
	const struct kp_keyring *keys; /* trusted keys found (borrowed), NULL: none */
	/* a kernel image's keys still being read into @keys (kp_keyring_image_begin()) */
	bool keys_pending;
	const char *cmdline; /* kernel command line: module.sig_enforce=, module_blacklist=,
				lockdown= */
	unsigned init_flags; /* KP_INIT_IGNORE_*: the loads are forced (modprobe --force) */
	/* The active IMA policy (<securityfs>/ima/policy) and where it was read; NULL: not
	 * read, the boot command line's built-in policy is assumed. */
	const char *ima_policy;
	const char *ima_policy_source;
	struct kp_base_cache *base_cache; /* the config through the base cache; NULL: parsed */
	/* the root @config_path lies under, opened inside it (kp_open_regular_in()); NULL: none */
	const struct kp_root_dir *config_root;
};

void kp_facts_opts_init(struct kp_facts_opts *o);
int kp_facts_build(struct kp_kernel_facts *f, const struct kp_facts_opts *o,
		   const struct kp_kernel_base *base, struct kp_err *err);
void kp_facts_release(struct kp_kernel_facts *f);
/*
 * The kernel's raw BTF for btf_module_notify()'s checks (@data borrowed until
 * kp_facts_release(); NULL: none, @missing says why), parsed as btf_parse_vmlinux() does.
 * Call it after kp_facts_build() when f->btf_modules: without a BTF that parses, the match
 * is recorded as an assumption. -1 when out of memory.
 */
int kp_facts_vmlinux_btf(struct kp_kernel_facts *f, const unsigned char *data, size_t len,
			 const char *source, const char *missing);
/* Appends a copy of @what to the reports' assumptions; -1 when out of memory. */
int kp_facts_assume(struct kp_kernel_facts *f, const char *what);
/*
 * After kp_facts_build() with keys_pending, once the image's keys are in f->keys: the "no key
 * source" assumption, in the place kp_facts_build() would have given it, if they hold no
 * kernel key. -1 when out of memory.
 */
int kp_facts_keys_settled(struct kp_kernel_facts *f);

/* True for Debian kernel releases ("6.12.118+deb12-amd64", "6.1.0-57-amd64"). */
bool kp_release_is_debian(const char *release);

#endif
