/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The policy of `kopolicy hook` (kopolicy.conf(5)): for each consequence of a
 * load the hook can predict, whether to block the load, warn and let it go on,
 * or say nothing; per-module exceptions; and what to do when kopolicy cannot
 * decide (fail open or fail closed). Lines are read in order and, for a given
 * module and consequence, the last line that applies decides. Without a file,
 * or for anything the file does not mention: warn, and fail open.
 */
#ifndef KP_HOOK_POLICY_H
#define KP_HOOK_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "util/util.h"

enum kp_hook_consequence {
	KP_HOOK_LOAD_FAILURE,  /* a module of the chain would fail to load (errno) */
	KP_HOOK_INHERIT_TAINT, /* a module would inherit P (2020 rule, inherit_taint()) */
	KP_HOOK_SYMBOL_GET,    /* a symbol_get() would return NULL: non-GPL export (2023 rule) */
	KP_HOOK_PROPRIETARY,   /* a module is proprietary by its own license: taints P */
	KP_HOOK_NCONSEQUENCES,
};

enum kp_hook_action {
	KP_HOOK_IGNORE, /* say nothing, load */
	KP_HOOK_WARN,	/* print the reason, load */
	KP_HOOK_BLOCK,	/* print the reason, exit non-zero: modprobe does not load */
};

enum kp_hook_on_error {
	KP_HOOK_FAIL_OPEN,   /* kopolicy cannot decide: say why, let the load go on */
	KP_HOOK_FAIL_CLOSED, /* kopolicy cannot decide: say why, block */
};

struct kp_hook_rule {
	const char *module; /* glob over module names ('-' read as '_'); NULL: every module */
	bool is_on_error;   /* an on-error line (else an action line) */
	unsigned mask;	    /* action line: 1 << enum kp_hook_consequence */
	enum kp_hook_action action;
	enum kp_hook_on_error on_error;
	size_t line;
};

struct kp_hook_policy {
	const char *path; /* the file read, NULL for the built-in defaults */
	struct kp_hook_rule *rules;
	size_t nrules;
	struct kp_arena arena;
};

/* Limits on a policy file: it is read as root from modprobe. */
#define KP_HOOK_POLICY_MAX_SIZE	 ((size_t)1 << 20)
#define KP_HOOK_POLICY_MAX_LINE	 4096
#define KP_HOOK_POLICY_MAX_RULES 4096

/* The built-in defaults (no rules). */
void kp_hook_policy_init(struct kp_hook_policy *p);

/*
 * Reads @path into @p (initialised here). Returns 0, or -1 with "PATH: why" or
 * "PATH:LINE: why" in @err: the file is refused as a whole, and @p holds the
 * defaults. errnum ENOENT: the file does not exist (the defaults apply). A file
 * another user can change is refused: one writable by others, owned by another user, or
 * in a directory that fails the caches' trust test (cache/trusted-dir.h) on the way from /
 * (errnum EPERM); links are followed only when root's or the user's.
 */
int kp_hook_policy_load(struct kp_hook_policy *p, const char *path, struct kp_err *err);
/* Same over a buffer; @label names it in messages. */
int kp_hook_policy_parse(struct kp_hook_policy *p, const char *label, const char *buf, size_t len,
			 struct kp_err *err);
void kp_hook_policy_release(struct kp_hook_policy *p);

/* What to do with consequence @c of module @module; *@line: the deciding line, 0 if default. */
enum kp_hook_action kp_hook_policy_action(const struct kp_hook_policy *p, const char *module,
					  enum kp_hook_consequence c, size_t *line);
/*
 * True when consequence @c is ignored for every module whatever its name: then the hook
 * need not compute it (no symbol_get() tracing for an ignored symbol-get).
 */
bool kp_hook_policy_ignores(const struct kp_hook_policy *p, enum kp_hook_consequence c);
/* True when some line blocks one of the consequences of @mask (1 << c), for some module. */
bool kp_hook_policy_blocks(const struct kp_hook_policy *p, unsigned mask);
/* What to do when kopolicy cannot decide for @module (NULL: no module known yet). */
enum kp_hook_on_error kp_hook_policy_on_error(const struct kp_hook_policy *p, const char *module,
					      size_t *line);

const char *kp_hook_consequence_name(enum kp_hook_consequence c);
const char *kp_hook_action_name(enum kp_hook_action a);
const char *kp_hook_on_error_name(enum kp_hook_on_error m);
/* "fail-open" / "fail-closed" (also "open" / "closed"); -1 if neither. */
int kp_hook_parse_on_error(const char *s, enum kp_hook_on_error *out);

/* True if module @name matches glob @glob, '-' and '_' alike (modprobe.d's rule). */
bool kp_hook_module_match(const char *glob, const char *name);

#endif
