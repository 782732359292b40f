/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The hook's install rules: the modprobe.d lines that make modprobe run `kopolicy hook` before
 * it loads a gated module (system/gated-modules.h says which), printed
 * (--print-install-rules), kept current in a file (--update-install-rules) or dropped from it
 * when kopolicy is removed (--retire-install-rules); with them, kept and removed alike, the
 * softdep overrides that let modprobe run the line of a module with soft dependencies.
 */
#ifndef KP_HOOK_RULES_H
#define KP_HOOK_RULES_H

#include <stdbool.h>

#include "policy/hook-policy.h"

/* Where the rules are kept by default, under the root: modprobe reads /etc/modprobe.d. */
#define KP_RULES_DEFAULT_FILE "/etc/modprobe.d/zz-kopolicy.conf"
/*
 * Beside the rules file, kopolicy's softdep overrides (hook-softdeps.c): a name sorting before
 * every other configuration file, modules.softdep included, as libkmod orders them.
 */
#define KP_SOFTDEPS_BASE "0-kopolicy-softdeps.conf"
/*
 * In the hook's state directory (--state-dir, /run/kopolicy by default, whatever --root: the
 * runs it serialises are this machine's), the lock of the rewrites, 0600: none another user
 * can hold (hook-rules-file.c).
 */
#define KP_RULES_LOCK "install-rules.lock"

struct kp_rules_opts {
	const char *root;   /* the system whose releases are covered; NULL: "/" */
	const char *config; /* --config carried into the lines, or NULL */
	bool on_error_given;
	enum kp_hook_on_error on_error; /* --on-error carried into the lines, when given */
	bool verbose;			/* --update-install-rules: also say "up to date" */
	/* the state directory holding KP_RULES_LOCK (--state-dir); NULL: the file's directory */
	const char *lock_dir;
};

/* Prints the rules on stdout. Exit status (KP_EXIT_*). */
int kp_hook_print_rules(const struct kp_rules_opts *o);
/*
 * Rewrites @file (NULL: ROOT/etc/modprobe.d/zz-kopolicy.conf) with the rules when they
 * changed, atomically, when it is absent, empty or written by kopolicy and its directory can
 * be trusted. Without --config/--on-error the file's own are kept. Exit status: 0 current,
 * 1 refused (not kopolicy's file, unsafe file or directory), 2 an error.
 */
int kp_hook_update_rules(const struct kp_rules_opts *o, const char *file);

/*
 * Drops the install lines of @file (as kp_hook_update_rules()) when it is kopolicy's, for
 * kopolicy being removed: modprobe could not run them. Its header, comments and options stay,
 * so that kp_hook_update_rules() writes the same lines again. Exit status: 0 done or nothing to
 * do (no file, no line), 1 refused (as kp_hook_update_rules()), 2 an error.
 */
int kp_hook_retire_rules(const struct kp_rules_opts *o, const char *file);

#endif
