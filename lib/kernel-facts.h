/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Building struct kp_kernel_facts from what the user has: the kernel config
 * (boot/config-<release>), the release string, explicit overrides. Whatever is
 * not known is assumed (like a typical distribution kernel) and recorded in
 * facts->assumptions so reports can say so.
 */
#ifndef KP_KERNEL_FACTS_H
#define KP_KERNEL_FACTS_H

#include "kernel-base.h"
#include "loader.h"

struct kp_facts_opts {
	const char *config_path;   /* kernel .config / boot/config-*, plain or compressed */
	const char *release;	   /* uname -r of the target */
	const char *version;	   /* upstream X.Y.Z when the release hides it */
	const char *rules;	   /* auto | pre2020 | 2020 | 2023 */
	const char *distro;	   /* auto | debian | upstream */
	const char *vermagic;	   /* explicit VERMAGIC_STRING */
	int sig_enforce;	   /* -1: from the config; 0/1: override (module.sig_enforce=) */
	int lockdown;		   /* -1: no; 1: lockdown=integrity */
	int modversions;	   /* -1: from the config */
	int force_load;		   /* -1: from the config */
	int allow_missing_ns;	   /* -1: from the config */
	bool untrusted_signatures; /* signed modules' keys are not trusted by the target */
	const struct kp_keyring *keys; /* trusted keys found (borrowed), NULL: none */
	const char *cmdline; /* kernel command line: module.sig_enforce=, module_blacklist=,
				lockdown= */
};

void kp_facts_opts_init(struct kp_facts_opts *o);
int kp_facts_build(struct kp_kernel_facts *f, const struct kp_facts_opts *o,
		   const struct kp_kernel_base *base, struct kp_err *err);
void kp_facts_release(struct kp_kernel_facts *f);
/* Appends a copy of @what to the reports' assumptions; -1 when out of memory. */
int kp_facts_assume(struct kp_kernel_facts *f, const char *what);

/* True for Debian kernel releases ("6.12.118+deb12-amd64", "6.1.0-57-amd64"). */
bool kp_release_is_debian(const char *release);

#endif
