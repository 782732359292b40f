/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What check, graph and explain share: the options that name the target
 * kernel, reading the module set, the base, the facts, the graph and the
 * simulation.
 */
#ifndef KP_ANALYSIS_H
#define KP_ANALYSIS_H

#include <getopt.h>

#include "cli.h"
#include "kernel/depmod-config.h"
#include "graph/graph.h"
#include "kernel/kernel-base.h"
#include "kernel/kernel-facts.h"
#include "kernel/kernel-tree.h"
#include "kernel/running.h"
#include "sim/loader.h"
#include "kernel/sig-keys.h"

struct kp_analysis {
	struct kp_module_set set;
	struct kp_kernel_base *base;
	struct kp_kernel_facts facts;
	struct kp_facts_opts fo;
	const char *kernels[16]; /* --kernel operands */
	size_t nkernels;
	struct kp_graph graph;
	struct kp_simulation sim;
	bool have_sim;
	size_t read_failures;
	const char *basedir; /* -b: a root holding lib/modules/<release> */
	bool running;	     /* --running: the live system under --root */
	const char *root;    /* --root, default "/" */
	struct kp_tree tree;
	bool have_tree;
	struct kp_running run;
	bool have_run;
	const struct kp_kernel_base *base_borrowed; /* the running kernel's kallsyms */
	const char **run_loaded;		    /* names of the loaded modules (arena of run) */
	const char **run_prop;			    /* those carrying P */
	size_t run_nprop;
	const char *trusted_certs[16]; /* --trusted-cert */
	size_t ntrusted_certs;
	const char *kernel_images[8]; /* --kernel-image */
	size_t nkernel_images;
	bool no_kernel_keys; /* --no-kernel-keys: only --kernel-image and --trusted-cert */
	struct kp_keyring keys; /* the key sources above, the tree's image, /proc/keys */
	struct kp_depmod_cfg depmod; /* -b without files: depmod.d of the image */
	bool have_depmod;
	struct kp_depmod_shadow *shadowed; /* files depmod does not use */
	size_t nshadowed;
	char release_buf[256]; /* uname -r, when the running kernel is the default */
};

/* clang-format off */
/* Long options for the target kernel; values >= 0x100 are handled by kp_analysis_option(). */
#define KP_ANALYSIS_LONGOPTS \
	{ "kernel", required_argument, NULL, 'k' }, \
	{ "basedir", required_argument, NULL, 'b' }, \
	{ "kernel-config", required_argument, NULL, 0x100 }, \
	{ "kernel-release", required_argument, NULL, 0x101 }, \
	{ "kernel-version", required_argument, NULL, 0x102 }, \
	{ "rules", required_argument, NULL, 0x103 }, \
	{ "distro", required_argument, NULL, 0x104 }, \
	{ "vermagic", required_argument, NULL, 0x105 }, \
	{ "sig-enforce", no_argument, NULL, 0x106 }, \
	{ "lockdown", no_argument, NULL, 0x107 }, \
	{ "untrusted-signatures", no_argument, NULL, 0x108 }, \
	{ "allow-missing-namespace-imports", no_argument, NULL, 0x109 }, \
	{ "kernel-cmdline", required_argument, NULL, 0x10a }, \
	{ "running", no_argument, NULL, 0x10b }, \
	{ "root", required_argument, NULL, 0x10c }, \
	{ "trusted-cert", required_argument, NULL, 0x10d }, \
	{ "kernel-image", required_argument, NULL, 0x10e }, \
	{ "no-kernel-keys", no_argument, NULL, 0x10f }

#define KP_ANALYSIS_HELP \
	"Target kernel:\n" \
	"  -k, --kernel PATH      kernel exports: Module.symvers[.gz|.xz], a vmlinux, a\n" \
	"                         System.map or kallsyms file, or a directory holding\n" \
	"                         Module.symvers (repeatable)\n" \
	"  -b, --basedir ROOT     a system image holding lib/modules/<release> or\n" \
	"                         usr/lib/modules/<release> (like depmod -b): its\n" \
	"                         Module.symvers (or vmlinux, real System.map) and config;\n" \
	"                         with no FILE, all of its modules\n" \
	"      --running          the running system: its kernel, loaded modules and their\n" \
	"                         taints, signature enforcement, lockdown, command line;\n" \
	"                         with no FILE, its modules tree as depmod sees it\n" \
	"      --root DIR         with --running: read /proc, /sys and /lib/modules under DIR\n" \
	"      --kernel-config F  the kernel's config (boot/config-<release>)\n" \
	"      --kernel-release R the kernel's release (uname -r)\n" \
	"      --kernel-version V upstream version X.Y.Z when the release hides it\n" \
	"      --rules R          auto (from the version), pre2020, 2020 or 2023\n" \
	"      --distro D         auto, debian (missing symbol versions are fatal) or upstream\n" \
	"      --vermagic S       the kernel's vermagic string\n" \
	"      --kernel-cmdline S the boot command line (module.sig_enforce=,\n" \
	"                         module_blacklist=, lockdown=)\n" \
	"      --sig-enforce      signatures are enforced (module.sig_enforce=1)\n" \
	"      --lockdown         kernel lockdown (integrity) is active\n" \
	"      --untrusted-signatures  signed modules' keys are not trusted by the kernel\n" \
	"      --trusted-cert FILE  a certificate (PEM or DER) the kernel trusts (repeatable)\n" \
	"      --kernel-image FILE  the certificates compiled into this vmlinuz/vmlinux\n" \
	"                         (repeatable; -b and --running read the tree's own image)\n" \
	"      --no-kernel-keys   not the keys -b and --running find (tree image, /proc/keys)\n" \
	"      --allow-missing-namespace-imports\n" \
	"                         CONFIG_MODULE_ALLOW_MISSING_NAMESPACE_IMPORTS=y\n"
/* clang-format on */

void kp_analysis_init(struct kp_analysis *a);
/* 1 if @c was an analysis option; exits with status 2 on a bad value. */
int kp_analysis_option(struct kp_analysis *a, int c, const char *arg);
/*
 * Reads modules, base, facts; builds the graph; simulates if @simulate. Returns 0 or exit code 2.
 */
int kp_analysis_run(struct kp_analysis *a, const struct kp_cli *cli, char **paths, int npaths,
		    bool simulate);
void kp_analysis_free(struct kp_analysis *a);
/* The kernel exports in use (from --kernel, -b, --running or the defaults). */
const struct kp_kernel_base *kp_analysis_base(const struct kp_analysis *a);

#endif
