/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What check, graph, explain and hook share on the command line: the options that name
 * the target kernel (into struct kp_ctx_opts), and the context (lib/ctx/context.h) set up
 * with the command's environment.
 */
#ifndef KP_CTX_OPTIONS_H
#define KP_CTX_OPTIONS_H

#include <getopt.h>

#include "cli.h"
#include "ctx/context.h"

/* clang-format off */
/* Long options for the target kernel; values >= 0x100 are handled by kp_ctx_option(). */
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
	{ "lockdown", optional_argument, NULL, 0x107 }, \
	{ "untrusted-signatures", no_argument, NULL, 0x108 }, \
	{ "allow-missing-namespace-imports", no_argument, NULL, 0x109 }, \
	{ "kernel-cmdline", required_argument, NULL, 0x10a }, \
	{ "running", no_argument, NULL, 0x10b }, \
	{ "root", required_argument, NULL, 0x10c }, \
	{ "trusted-cert", required_argument, NULL, 0x10d }, \
	{ "kernel-image", required_argument, NULL, 0x10e }, \
	{ "no-kernel-keys", no_argument, NULL, 0x10f }, \
	{ "efi-vars", required_argument, NULL, 0x130 }, \
	{ "mok", required_argument, NULL, 0x131 }, \
	{ "mok-pending", required_argument, NULL, 0x132 }, \
	{ "secure-boot", required_argument, NULL, 0x133 }, \
	{ "trust-mok", required_argument, NULL, 0x134 }, \
	{ "dkms-key", required_argument, NULL, 0x135 }, \
	{ "this-machine", no_argument, NULL, 0x136 }, \
	{ "force", no_argument, NULL, 0x1f0 }, \
	{ "force-modversion", no_argument, NULL, 0x1f1 }, \
	{ "force-vermagic", no_argument, NULL, 0x1f2 }, \
	{ "vmlinux-btf", required_argument, NULL, 0x137 }, \
	{ "ima-policy", required_argument, NULL, 0x13c }

/* The hook's help is KP_ANALYSIS_HELP less -b (it judges the running system only). */
#define KP_ANALYSIS_HELP KP_ANALYSIS_HELP_KERNEL KP_ANALYSIS_HELP_BASEDIR KP_ANALYSIS_HELP_REST

#define KP_ANALYSIS_HELP_KERNEL \
	"Target kernel:\n" \
	"  -k, --kernel PATH      kernel exports: Module.symvers[.gz|.xz], a vmlinux, a\n" \
	"                         System.map or kallsyms file, or a directory holding\n" \
	"                         Module.symvers (repeatable)\n"

#define KP_ANALYSIS_HELP_BASEDIR \
	"  -b, --basedir ROOT     a system image holding lib/modules/<release> or\n" \
	"                         usr/lib/modules/<release> (like depmod -b): its\n" \
	"                         Module.symvers (or vmlinux, real System.map) and config;\n" \
	"                         with no FILE, all of its modules; its symlinks followed\n" \
	"                         inside ROOT, as a chroot would, never on the host\n"

#define KP_ANALYSIS_HELP_REST \
	"      --running          the running system: its kernel, loaded modules and their\n" \
	"                         taints, signature enforcement, lockdown, command line;\n" \
	"                         with no FILE, its modules tree as depmod sees it\n" \
	"      --root DIR         with --running: read /proc, /sys and /lib/modules under DIR\n" \
	"                         (its symlinks followed inside DIR)\n" \
	"      --kernel-config F  the kernel's config (boot/config-<release>)\n" \
	"      --kernel-release R the kernel's release (uname -r)\n" \
	"      --kernel-version V upstream version X.Y.Z when the release hides it\n" \
	"      --rules R          auto (from the version), pre2020, 2020 or 2023\n" \
	"      --distro D         auto, debian (missing symbol versions are fatal) or upstream\n" \
	"      --vermagic S       the kernel's vermagic string\n" \
	"      --kernel-cmdline S the boot command line (module.sig_enforce=,\n" \
	"                         module_blacklist=, lockdown=, ima_policy=, ima_appraise=)\n" \
	"      --ima-policy FILE  the IMA policy the kernel enforces (as written to\n" \
	"                         securityfs); --running and --this-machine read the active\n" \
	"                         one when readable\n" \
	"      --sig-enforce      signatures are enforced (module.sig_enforce=1)\n" \
	"      --lockdown[=MODE]  kernel lockdown: none, integrity (the default) or\n" \
	"                         confidentiality\n" \
	"      --untrusted-signatures  signed modules' keys are not trusted by the kernel\n" \
	"      --trusted-cert FILE  a certificate (PEM or DER) the kernel trusts (repeatable)\n" \
	"      --kernel-image FILE  the certificates compiled into this vmlinuz/vmlinux\n" \
	"                         (repeatable; -b and --running read the tree's own image;\n" \
	"                         its revocation list's certificates are revocations)\n" \
	"      --no-kernel-keys   not the keys -b and --running find (tree image, /proc/keys,\n" \
	"                         EFI variables)\n" \
	"      --secure-boot on|off  UEFI Secure Boot (on: signatures enforced and lockdown,\n" \
	"                         as the kernel's config says; --running reads it)\n" \
	"      --efi-vars DIR     EFI variables (efivarfs, or a /sys/firmware/efi copy):\n" \
	"                         Secure Boot, db, dbx, MOK, pending MOK (MokNew); \"none\"\n" \
	"                         not to read the live ones (--running, -b ROOT)\n" \
	"      --mok FILE         a certificate enrolled as MOK (repeatable)\n" \
	"      --mok-pending FILE a certificate whose MOK enrolment waits for the next boot\n" \
	"      --trust-mok yes|no MokListTrustedRT: MOK keys go to the .machine keyring\n" \
	"      --dkms-key FILE    the DKMS signing certificate, named in findings (default:\n" \
	"                         dkms' mok_certificate, /var/lib/dkms/mok.pub)\n" \
	"      --this-machine     the modules are for this machine: read its EFI variables\n" \
	"                         and DKMS key (under --root) as --running and -b / do\n" \
	"      --vmlinux-btf FILE the kernel's BTF: a vmlinux (the headers' one will do) or\n" \
	"                         raw BTF; -b reads build/vmlinux, --running\n" \
	"                         /sys/kernel/btf/vmlinux\n" \
	"      --allow-missing-namespace-imports\n" \
	"                         CONFIG_MODULE_ALLOW_MISSING_NAMESPACE_IMPORTS=y\n" \
	"      --force            loaded as modprobe --force does: modversions and vermagic\n" \
	"                         ignored, the signature not checked (--force-modversion,\n" \
	"                         --force-vermagic: one of the two)\n"
/* clang-format on */

/* 1 if @c was a target option, stored into @o; exits with status 2 on a bad value. */
int kp_ctx_option(struct kp_ctx_opts *o, int c, const char *arg);

/*
 * @ctx for this command: @opts, the read options of @cli (-j, --max-size, the facts cache,
 * progress on a terminal) and its diagnostics on stderr ("kopolicy: PATH: message").
 */
void kp_cli_ctx_init(struct kp_ctx *ctx, const struct kp_cli *cli, const struct kp_ctx_opts *opts);
/* kp_ctx_load(), its error on stderr: 0 or KP_EXIT_ERROR. */
int kp_cli_ctx_load(struct kp_ctx *ctx, char **paths, int npaths, unsigned flags);

#endif
