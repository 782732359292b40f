/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the hook's install rules share between their lines (hook-rules.c: rendered, printed
 * and read back), their softdep overrides (hook-softdeps.c) and the files kept current
 * (hook-rules-file.c). Private to these three.
 */
#ifndef KP_HOOK_RULES_INTERNAL_H
#define KP_HOOK_RULES_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "hook-rules.h"
#include "system/gated-modules.h"

/* The options a rules file carries into its lines. */
struct line_opts {
	char config[PATH_MAX]; /* "": none */
	char on_error[16];     /* "": none */
};

/* @path made absolute against the current directory (malloc'ed; NULL with errno). */
char *kp_rules_absolute(const char *path);
/*
 * @text (@len bytes, a file's content) is what kopolicy writes, its options into @lo; else
 * false, with the first line that is not into @why.
 */
bool kp_rules_is_own(const char *text, size_t len, struct line_opts *lo, char *why, size_t wlen);
/*
 * kopolicy's own executable (/proc/self/exe) into @exe: read once per command, so that the
 * path checked (kp_rules_self_unsafe()) is the path the lines name (kp_rules_render()). 0,
 * or -1 having said why.
 */
int kp_rules_self(char *exe, size_t elen);
/*
 * Root runs the executable the lines name (kopolicy's own, @exe from kp_rules_self()) at
 * every load of a gated module: on this system (@root NULL or "/") it must be no other
 * user's to replace, by the test of the files kopolicy believes (a regular file owned by
 * root or the user running, not writable by group or others, in directories that pass the
 * caches' trust test, cache/trusted-dir.h). 0 when it is or for another root; 1 with why.
 */
int kp_rules_self_unsafe(const char *root, const char *exe, char *why, size_t wlen);
/*
 * The rules of @g, naming kopolicy's own path @exe (kp_rules_self()) as @root will see it,
 * into *@text (malloc'ed, *@len bytes). 0, or -1 having said why.
 */
int kp_rules_render(const struct kp_gated *g, const char *root, const char *exe, const char *config,
		    const char *on_error, char **text, size_t *len);
/*
 * @old (@len bytes, kopolicy's own file: kp_rules_is_own(), its options @lo) without its
 * install lines, its header and comments kept (and its options, in a header line if it had
 * none), with a note saying why, into *@text (malloc'ed, *@tlen bytes); the lines dropped
 * into *@dropped (0: none, *@text NULL). 0, or -1 having said why.
 */
int kp_rules_retire(const char *old, size_t len, const struct line_opts *lo, char **text,
		    size_t *tlen, size_t *dropped);
/*
 * The soft dependencies @names ("a b", gated-modules.h) can all be named in an install line
 * (plain words, none an option): only then does the line load them and kopolicy lift them.
 */
bool kp_rules_softdeps_writable(const char *names);
/*
 * The soft dependencies of @g's module @i are lifted by kopolicy's override and loaded by its
 * install line: they are writable and its name plain ([A-Za-z0-9_-]: the line names it in
 * KOPOLICY_CHAIN, which ends soft dependencies that lead back to it, hook-rules.c).
 */
bool kp_rules_softdep_lifted(const struct kp_gated *g, size_t i);
/*
 * The softdep overrides of @g (hook-softdeps.c): one "softdep [n]ame pre:" line per module
 * name whose install line loads its soft dependencies, into *@text (malloc'ed, *@len bytes),
 * their number into *@count (0: *@text NULL, no file is needed). 0, or -1 having said why.
 */
int kp_softdeps_render(const struct kp_gated *g, char **text, size_t *len, size_t *count);
/* @text (@len bytes) is a softdep override file kopolicy writes; else false, why into @why. */
bool kp_softdeps_is_own(const char *text, size_t len, char *why, size_t wlen);
/*
 * Ends the text @f writes into *@text (open_memstream(), *@len bytes): 0 with it kept, or with
 * it dropped (*@text NULL, *@len 0) when @keep is false; -1 having said "out of memory" when
 * @f failed or @failed (*@text NULL).
 */
int kp_rules_text_close(FILE *f, char **text, size_t *len, bool failed, bool keep);
/* Says on stderr which releases could not be read fully; their number. */
size_t kp_rules_say_failed(const struct kp_gated *g);
/*
 * Says on stderr which modules have soft dependencies (modprobe never runs their install
 * line); their number.
 */
size_t kp_rules_say_softdeps(const struct kp_gated *g);
/*
 * The gated modules of every release of @o->root into @g, with their soft dependencies. 0, or
 * -1 having said why (@g released).
 */
int kp_rules_collect(const struct kp_rules_opts *o, struct kp_gated *g);

#endif
