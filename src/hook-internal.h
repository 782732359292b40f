/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the files of `kopolicy hook` share (cmd-hook.c: the command line, the policy and the
 * passes; hook-verdict.c: the verdict; hook-deadline.c: the answer within --timeout): one
 * run of the hook and how it speaks.
 */
#ifndef KP_HOOK_INTERNAL_H
#define KP_HOOK_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "ctx-options.h"
#include "policy/hook-policy.h"

struct hook {
	struct kp_cli *cli;
	const char *root; /* NULL: this machine */
	char *root_abs;	  /* a relative --root made absolute (owned), or NULL */
	const char *config;
	const char *asked; /* MODULE as given */
	bool verbose;
	bool quiet; /* say() prints nothing: the first pass, without symbol_get() tracing */
	const char *untraced; /* why symbol_get() call sites were not traced, for -v */
	bool files_trusted;   /* the chain's files passed untrusted_files(): not walked again */
	bool on_error_given;
	enum kp_hook_on_error on_error_cli;
	unsigned timeout;  /* seconds, 0: none */
	unsigned wall_cap; /* --wall-cap: seconds, 0: hook_wall_cap_max() */

	struct kp_hook_policy policy;
	bool policy_bad; /* the file was refused: only --on-error counts */
	struct kp_ctx_opts o;
	struct kp_ctx a; /* the running system, the chain, what it loads (lazy mode) */
	/* libkmod's private copy, one for both passes (a.env.kmod_copy); hook_free() removes it */
	struct kp_kmod_copy kmod_copy;
};

/* One line on stderr about the module asked for, escaped; nothing when @h->quiet. */
void hook_say(const struct hook *h, const char *fmt, ...) kp_printf_fmt(2, 3);
/* Where a decision came from (policy file and @line, or the default), into @buf. */
void hook_source_of(const struct hook *h, size_t line, char *buf, size_t len);
/* The on-error mode of the module asked for, and where it comes from (into @from). */
enum kp_hook_on_error hook_on_error_mode(const struct hook *h, char *from, size_t len);
/* The policy applied to the loaded chain's verdicts, each said: the exit status. */
int hook_decide(struct hook *h);
/*
 * The answer once the hook has run or been blocked for @h->timeout seconds (time spent waiting
 * for a CPU not counted, up to a wall-clock cap) and on a fatal signal (hook-deadline.c);
 * libkmod's copy removed on SIGTERM, SIGINT and SIGHUP until hook_disarm_deadline().
 */
void hook_arm_deadline(struct hook *h);
/*
 * The wall-clock cap past which a starved hook blocks the load for @timeout: ten times it, at
 * least 60 s; --wall-cap may only lower it (to more than @timeout).
 */
unsigned hook_wall_cap_max(unsigned timeout);
/* No deadline any more (the verdict is being returned). */
void hook_disarm_deadline(struct hook *h);

#endif
