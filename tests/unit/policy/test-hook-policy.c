// SPDX-License-Identifier: GPL-2.0-or-later
/* The hook's policy file (lib/policy/hook-policy.c) and its symbol sets (lib/util/symbol-set.c). */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "policy/hook-policy.h"
#include "util/symbol-set.h"
#include "tap.h"

static int parse(struct kp_hook_policy *p, const char *text, struct kp_err *err)
{
	return kp_hook_policy_parse(p, "test.conf", text, strlen(text), err);
}

static void defaults(struct tap *t)
{
	struct kp_hook_policy p;
	size_t line = 99;

	kp_hook_policy_init(&p);
	for (unsigned c = 0; c < KP_HOOK_NCONSEQUENCES; c++)
		tap_ok(t, kp_hook_policy_action(&p, "x", c, &line) == KP_HOOK_WARN && line == 0,
		       "default: %s warns", kp_hook_consequence_name(c));
	tap_ok(t, kp_hook_policy_on_error(&p, "x", &line) == KP_HOOK_FAIL_OPEN && line == 0,
	       "default: fail open");
	kp_hook_policy_release(&p);
}

static void rules(struct tap *t)
{
	static const char text[] = "# comment line\n"
				   "\n"
				   "block load-failure   # trailing comment\n"
				   "ignore proprietary\n"
				   "on-error fail-closed\n"
				   "module nvidia* warn all\n"
				   "module nvidia-uvm ignore inherit-taint\n"
				   "module zfs on-error fail-open\n"
				   "block symbol-get inherit-taint\n";
	struct kp_hook_policy p;
	struct kp_err err = { 0 };
	size_t line;

	tap_is_int(t, parse(&p, text, &err), 0, "a valid file parses");
	tap_is_int(t, p.nrules, 7, "seven directives");
	tap_ok(t,
	       kp_hook_policy_action(&p, "kp_x", KP_HOOK_LOAD_FAILURE, &line) == KP_HOOK_BLOCK &&
		       line == 3,
	       "global block, line 3");
	tap_ok(t, kp_hook_policy_action(&p, "kp_x", KP_HOOK_PROPRIETARY, &line) == KP_HOOK_IGNORE,
	       "global ignore");
	tap_ok(t,
	       kp_hook_policy_action(&p, "nvidia", KP_HOOK_LOAD_FAILURE, &line) == KP_HOOK_WARN &&
		       line == 6,
	       "module line after a global line wins");
	tap_ok(t,
	       kp_hook_policy_action(&p, "nvidia", KP_HOOK_INHERIT_TAINT, &line) == KP_HOOK_BLOCK &&
		       line == 9,
	       "a later global line wins over an earlier module line");
	tap_ok(t,
	       kp_hook_policy_action(&p, "nvidia_uvm", KP_HOOK_PROPRIETARY, &line) ==
			       KP_HOOK_WARN &&
		       line == 6,
	       "'-' in a glob matches '_' in a name");
	tap_ok(t,
	       kp_hook_policy_action(&p, "nvidia-uvm", KP_HOOK_PROPRIETARY, &line) == KP_HOOK_WARN,
	       "'-' in a name matches too");
	tap_ok(t, kp_hook_policy_on_error(&p, "kp_x", &line) == KP_HOOK_FAIL_CLOSED && line == 5,
	       "global on-error");
	tap_ok(t, kp_hook_policy_on_error(&p, "zfs", &line) == KP_HOOK_FAIL_OPEN && line == 8,
	       "per-module on-error");
	tap_ok(t, kp_hook_policy_on_error(&p, NULL, &line) == KP_HOOK_FAIL_CLOSED,
	       "no module known: global lines only");
	kp_hook_policy_release(&p);
}

static void bad(struct tap *t, const char *text, const char *want)
{
	struct kp_hook_policy p;
	struct kp_err err = { 0 };
	int r = parse(&p, text, &err);

	tap_ok(t, r == -1 && strstr(err.msg, want) != NULL, "refused: %s", err.msg);
	if (!strstr(err.msg, want))
		printf("#   expected '%s'\n", want);
	tap_ok(t, p.nrules == 0, "a refused file leaves no rule");
}

static void errors(struct tap *t)
{
	char big[KP_HOOK_POLICY_MAX_LINE + 20];

	bad(t, "block\n", "test.conf:1: block: name the consequences");
	bad(t, "warn load-failure\nblock everything\n",
	    "test.conf:2: unknown consequence 'everything'");
	bad(t, "allow load-failure\n", "unknown directive 'allow'");
	bad(t, "on-error maybe\n", "unknown on-error mode 'maybe'");
	bad(t, "on-error fail-open fail-closed\n", "takes one value");
	bad(t, "module\n", "expected 'module GLOB ACTION");
	bad(t, "module a/b block all\n", "invalid module glob 'a/b'");
	bad(t, "module x\n", "expected 'module GLOB ACTION");
	bad(t, "block a b c d e f g h i j k l m n o p q r\n", "more than 16 words");
	memset(big, 'a', sizeof(big) - 2);
	big[sizeof(big) - 2] = '\n';
	big[sizeof(big) - 1] = '\0';
	bad(t, big, "line longer than 4096 bytes");
}

static void nul_in_buffer(struct tap *t)
{
	static const char text[] = "block all\0x\n";
	struct kp_hook_policy p;
	struct kp_err err = { 0 };

	tap_ok(t, kp_hook_policy_parse(&p, "test.conf", text, sizeof(text) - 1, &err) == -1,
	       "a NUL byte inside a line is refused");
}

static void files(struct tap *t)
{
	struct kp_hook_policy p;
	struct kp_err err = { 0 };
	int r = kp_hook_policy_load(&p, "/nonexistent/hook.conf", &err);

	tap_ok(t, r == -1 && err.errnum == ENOENT,
	       "a missing file is -1 with errnum ENOENT (the defaults apply)");
	tap_ok(t, kp_hook_policy_load(&p, "/", &err) < 0, "a directory is refused: %s", err.msg);
	kp_hook_policy_release(&p);
}

static void on_error_names(struct tap *t)
{
	enum kp_hook_on_error m;

	tap_ok(t, kp_hook_parse_on_error("closed", &m) == 0 && m == KP_HOOK_FAIL_CLOSED,
	       "'closed' is fail-closed");
	tap_ok(t, kp_hook_parse_on_error("fail-open", &m) == 0 && m == KP_HOOK_FAIL_OPEN,
	       "'fail-open'");
	tap_ok(t, kp_hook_parse_on_error("shut", &m) < 0, "'shut' is refused");
}

static void symsets(struct tap *t)
{
	static const char line[] = "0x00000000\tmsleep\tvmlinux\tEXPORT_SYMBOL\t";
	struct kp_symset s = { 0 };
	char names[300][16];
	bool all = true;

	for (int i = 0; i < 300; i++) {
		snprintf(names[i], sizeof(names[i]), "sym%d", i);
		all &= kp_symset_add(&s, names[i]) == 0;
	}
	all &= kp_symset_add(&s, "msleep") == 0 && kp_symset_add(&s, "msleep") == 0;
	tap_ok(t, all && s.n == 301, "301 distinct names (a duplicate is kept once)");
	tap_ok(t, kp_symset_has(&s, line + 11, 6), "found by span inside a line");
	tap_ok(t, !kp_symset_has(&s, line + 11, 5), "a prefix is not a member");
	tap_ok(t, kp_symset_has(&s, "sym299", 6) && !kp_symset_has(&s, "sym300", 6),
	       "members survive growth");
	kp_symset_release(&s);
	tap_ok(t, !kp_symset_has(&s, "msleep", 6), "an empty set has nothing");
}

/* kp_hook_policy_ignores(): only when no module can get anything but ignore. */
static void ignores(struct tap *t)
{
	static const struct {
		const char *text;
		bool ignored;
	} cases[] = {
		{ "", false },
		{ "ignore symbol-get\n", true },
		{ "ignore all\n", true },
		{ "module * ignore symbol-get\n", true },
		{ "block symbol-get\nignore symbol-get\n", true },
		{ "ignore symbol-get\nwarn symbol-get\n", false },
		{ "ignore symbol-get\nmodule kp_* warn symbol-get\n", false },
		{ "module kp_* warn symbol-get\nignore symbol-get\n", true },
		{ "ignore symbol-get\nmodule kp_x ignore symbol-get\n", true },
		{ "ignore proprietary\n", false },
		{ "module kp_x ignore symbol-get\n", false },
		{ "ignore symbol-get\non-error fail-closed\n", true },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kp_hook_policy p;
		struct kp_err err = { 0 };
		int r = parse(&p, cases[i].text, &err);

		tap_ok(t,
		       r == 0 && kp_hook_policy_ignores(&p, KP_HOOK_SYMBOL_GET) == cases[i].ignored,
		       "ignores symbol-get = %d: \"%.*s\"", cases[i].ignored,
		       (int)strcspn(cases[i].text, "\n"), cases[i].text);
		kp_hook_policy_release(&p);
	}
}

/* kp_hook_policy_blocks(): any block line for a consequence of the mask, any module. */
static void blocks(struct tap *t)
{
	const unsigned not_symget = ~(1U << KP_HOOK_SYMBOL_GET);
	static const struct {
		const char *text;
		bool blocks;
	} cases[] = {
		{ "", false },
		{ "block symbol-get\n", false },
		{ "block proprietary\n", true },
		{ "module kp_* block load-failure\n", true },
		{ "warn all\n", false },
		{ "block all\n", true },
		{ "on-error fail-closed\n", false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kp_hook_policy p;
		struct kp_err err = { 0 };
		int r = parse(&p, cases[i].text, &err);

		tap_ok(t, r == 0 && kp_hook_policy_blocks(&p, not_symget) == cases[i].blocks,
		       "blocks something but symbol-get = %d: \"%.*s\"", cases[i].blocks,
		       (int)strcspn(cases[i].text, "\n"), cases[i].text);
		kp_hook_policy_release(&p);
	}
}

int main(void)
{
	struct tap t = { 0 };

	defaults(&t);
	rules(&t);
	errors(&t);
	nul_in_buffer(&t);
	files(&t);
	on_error_names(&t);
	symsets(&t);
	ignores(&t);
	blocks(&t);
	return tap_done(&t);
}
