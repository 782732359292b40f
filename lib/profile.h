/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Rule profiles: which loader behaviours a target kernel has. Each behaviour is
 * a row of data (lib/profile.c: the mainline release that introduced it and the
 * stable releases it was backported to); a kernel version selects the rows.
 * The named profiles pre2020 / 2020 / 2023 override the two headline rules.
 */
#ifndef KP_PROFILE_H
#define KP_PROFILE_H

#include <stdbool.h>

#include "util.h"

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
	KP_F_GOT_EXEMPT,	/* v5.12: _GLOBAL_OFFSET_TABLE_ ignored on x86 */
	KP_F_ERRNO_IN_UNKNOWN,	/* v5.10-era: "Unknown symbol %s (err -2)", "(err 0)" before */
	KP_F_LICENSE_SECOND_MSG, /* v6.4: "%s: module license taints kernel." after the license line
				  */
	KP_F_TEST_TAINT,	 /* v6.0: modinfo test= taints N */
	KP_F_NFEATURES,
};

struct kp_profile {
	const char *name;	/* "pre2020", "2020", "2023", or "auto" */
	struct kp_kver version; /* the kernel version the facts were derived from */
	bool version_known;
	bool has[KP_F_NFEATURES];
};

/* Parses "6.12.118", "6.12.118+deb12-amd64", "5.10.0-21-amd64"; -1 if not a version. */
int kp_kver_parse(const char *s, struct kp_kver *v);
int kp_kver_cmp(const struct kp_kver *a, const struct kp_kver *b);

/* The behaviours of kernel @v (mainline releases and the stable backports table). */
void kp_profile_for_version(struct kp_profile *p, const struct kp_kver *v);
/* The newest behaviour set: used when the kernel version is unknown. */
void kp_profile_latest(struct kp_profile *p);
/* Applies "pre2020" | "2020" | "2023" | "auto" to @p; -1 for an unknown name. */
int kp_profile_apply_rules(struct kp_profile *p, const char *rules);

const char *kp_feature_name(enum kp_feature f);
/* The profile name that describes @p's headline rules: pre2020, 2020 or 2023. */
const char *kp_profile_rules_name(const struct kp_profile *p);

#endif
