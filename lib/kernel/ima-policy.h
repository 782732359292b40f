/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The target kernel's IMA appraisal policy as far as it concerns modules
 * (security/integrity/ima/ima_policy.c): the built-in rules the boot command line and the
 * configuration select, in ima_init_policy()'s order (the architecture's Secure Boot rules,
 * ima_policy=secure_boot, the build-time rules, ima_policy=appraise_tcb), or the active policy
 * read from <securityfs>/ima/policy; and ima_appraise, the enforcement mode
 * (ima_appraise=, ignored under Secure Boot unless it enforces).
 */
#ifndef KP_IMA_POLICY_H
#define KP_IMA_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "file/ima-xattr.h"
#include "util/util.h"

/* security/integrity/ima/ima.h: the bits of ima_appraise */
enum {
	KP_IMA_APPRAISE_ENFORCE = 0x01,
	KP_IMA_APPRAISE_FIX = 0x02,
	KP_IMA_APPRAISE_LOG = 0x04,
	KP_IMA_APPRAISE_MODULES = 0x08, /* a rule appraises func=MODULE_CHECK */
};

/* One appraise or dont_appraise rule that can match a module read (func=MODULE_CHECK or none). */
struct kp_ima_rule {
	bool appraise;	  /* false: dont_appraise */
	bool func_module; /* func=MODULE_CHECK (false: the rule names no func) */
	bool digsig;	  /* IMA_DIGSIG_REQUIRED: appraise_type=imasig, the built-in rules */
	bool modsig;	  /* IMA_MODSIG_ALLOWED: appraise_type=imasig|modsig */
	bool has_fsmagic;
	int64_t fsmagic;
	char fowner_op; /* 0: no fowner condition; '=', '>' or '<' */
	uint32_t fowner;
	char uid_op; /* uid=/euid= (the loading process: root) */
	uint32_t uid;
	const char *unmodelled; /* a condition not evaluated (taken as met), or NULL */
	const char *text;	/* the rule as written, for reports */
};

struct kp_ima_policy {
	bool appraisal;	   /* CONFIG_IMA_APPRAISE: false, nothing is appraised */
	unsigned appraise; /* ima_appraise after boot: KP_IMA_APPRAISE_* bits */
	bool modsig;	   /* CONFIG_IMA_APPRAISE_MODSIG: appended signatures can be appraised */
	/* The built-in secure_boot rule allows modsig and the kernel appraises a compressed
	 * module after decompressing it (c200892b46ba; profile row ima_decompressed_modules). */
	bool decompressed;
	const char *source;	   /* where the rules come from, for reports */
	struct kp_ima_rule *rules; /* in policy order; only rules a module read can match */
	size_t nrules;
};

/* What the policy is built from. */
struct kp_ima_inputs {
	const char *cmdline;	  /* ima_policy=, ima_appraise_tcb, ima_appraise= */
	bool config_known;	  /* false: the Debian configuration is assumed */
	bool ima_appraise;	  /* CONFIG_IMA_APPRAISE */
	bool bootparam;		  /* CONFIG_IMA_APPRAISE_BOOTPARAM */
	bool arch_policy;	  /* CONFIG_IMA_ARCH_POLICY */
	bool module_sig;	  /* CONFIG_MODULE_SIG */
	bool require_module_sigs; /* CONFIG_IMA_APPRAISE_REQUIRE_MODULE_SIGS */
	bool signed_init;	  /* CONFIG_IMA_APPRAISE_SIGNED_INIT */
	bool modsig;		  /* CONFIG_IMA_APPRAISE_MODSIG */
	bool decompressed;	  /* profile row ima_decompressed_modules */
	int secure_boot;	  /* -1 unknown, 0, 1 */
	/* The active policy as <securityfs>/ima/policy lists it, NULL: not read. */
	const char *active;
	const char *active_source;
};

/*
 * Builds @p from @in, its strings in @arena. An active policy that does not parse is an
 * error naming the line. -1 on error (out of memory or that).
 */
int kp_ima_policy_build(struct kp_ima_policy *p, const struct kp_ima_inputs *in,
			struct kp_arena *arena, struct kp_err *err);

/*
 * ima_match_policy() for a module read by root (func MODULE_CHECK, mask MAY_READ): the first
 * appraise/dont_appraise rule whose conditions @file meets, NULL when none. A condition that
 * cannot be evaluated (file system or owner unknown, an LSM label) is taken as met.
 */
const struct kp_ima_rule *kp_ima_policy_match(const struct kp_ima_policy *p,
					      const struct kp_ima_file *file);

/* True when some rule appraises module reads (IMA_APPRAISE_MODULES in ima_appraise). */
bool kp_ima_policy_appraises_modules(const struct kp_ima_policy *p);

#endif
