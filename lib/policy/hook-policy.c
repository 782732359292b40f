// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Policy file of `kopolicy hook`. One directive per line, '#' starts a comment:
 *
 *   block|warn|ignore CONSEQUENCE...
 *   on-error fail-open|fail-closed
 *   module GLOB block|warn|ignore CONSEQUENCE...
 *   module GLOB on-error fail-open|fail-closed
 *
 * CONSEQUENCE: load-failure, inherit-taint, symbol-get, proprietary or all.
 * The whole file is refused on the first bad line (the caller falls back to
 * its on-error mode), so a typo never silently weakens or tightens a rule.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file/bytes.h"
#include "hook-policy.h"
#include "file/rootfs.h"
#include "util/module-name.h"

#define MAX_TOKENS 16

static const char *const consequence_names[KP_HOOK_NCONSEQUENCES] = {
	[KP_HOOK_LOAD_FAILURE] = "load-failure",
	[KP_HOOK_INHERIT_TAINT] = "inherit-taint",
	[KP_HOOK_SYMBOL_GET] = "symbol-get",
	[KP_HOOK_PROPRIETARY] = "proprietary",
};

const char *kp_hook_consequence_name(enum kp_hook_consequence c)
{
	return c < KP_HOOK_NCONSEQUENCES ? consequence_names[c] : "?";
}

const char *kp_hook_action_name(enum kp_hook_action a)
{
	return a == KP_HOOK_BLOCK ? "block" : a == KP_HOOK_WARN ? "warn" : "ignore";
}

const char *kp_hook_on_error_name(enum kp_hook_on_error m)
{
	return m == KP_HOOK_FAIL_CLOSED ? "fail-closed" : "fail-open";
}

int kp_hook_parse_on_error(const char *s, enum kp_hook_on_error *out)
{
	if (!strcmp(s, "fail-open") || !strcmp(s, "open"))
		*out = KP_HOOK_FAIL_OPEN;
	else if (!strcmp(s, "fail-closed") || !strcmp(s, "closed"))
		*out = KP_HOOK_FAIL_CLOSED;
	else
		return -1;
	return 0;
}

static int parse_action(const char *s, enum kp_hook_action *out)
{
	if (!strcmp(s, "block"))
		*out = KP_HOOK_BLOCK;
	else if (!strcmp(s, "warn"))
		*out = KP_HOOK_WARN;
	else if (!strcmp(s, "ignore"))
		*out = KP_HOOK_IGNORE;
	else
		return -1;
	return 0;
}

static int parse_consequence(const char *s, unsigned *mask)
{
	if (!strcmp(s, "all")) {
		*mask |= (1U << KP_HOOK_NCONSEQUENCES) - 1;
		return 0;
	}
	for (unsigned i = 0; i < KP_HOOK_NCONSEQUENCES; i++)
		if (!strcmp(s, consequence_names[i])) {
			*mask |= 1U << i;
			return 0;
		}
	return -1;
}

/* modprobe.d's underscores(): '-' becomes '_', except inside a [...] class of a glob. */
static void underscores(char *s)
{
	bool in_class = false;

	for (; *s; s++) {
		if (*s == '[')
			in_class = true;
		else if (*s == ']')
			in_class = false;
		else if (*s == '-' && !in_class)
			*s = '_';
	}
}

bool kp_hook_module_match(const char *glob, const char *name)
{
	char buf[256];
	size_t n = strlen(name);

	if (n >= sizeof(buf))
		return false;
	kp_modname_copy(buf, sizeof(buf), name, n);
	return fnmatch(glob, buf, 0) == 0;
}

void kp_hook_policy_init(struct kp_hook_policy *p)
{
	memset(p, 0, sizeof(*p));
}

void kp_hook_policy_release(struct kp_hook_policy *p)
{
	free(p->rules);
	kp_arena_release(&p->arena);
	memset(p, 0, sizeof(*p));
}

struct parser {
	struct kp_hook_policy *p;
	const char *label;
	size_t line;
	size_t cap;
	struct kp_err *err;
};

static int bad(struct parser *ps, const char *fmt, ...) kp_printf_fmt(2, 3);
static int bad(struct parser *ps, const char *fmt, ...)
{
	char msg[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return kp_err_set(ps->err, "%s:%zu: %s", ps->label, ps->line, msg);
}

static int oom(struct parser *ps)
{
	return kp_err_set(ps->err, "out of memory");
}

static int add_rule(struct parser *ps, const struct kp_hook_rule *r)
{
	struct kp_hook_policy *p = ps->p;

	if (p->nrules >= KP_HOOK_POLICY_MAX_RULES)
		return bad(ps, "more than %d directives", KP_HOOK_POLICY_MAX_RULES);
	if (kp_grow(&p->rules, &ps->cap, p->nrules + 1, sizeof(*p->rules)) < 0)
		return oom(ps);
	p->rules[p->nrules] = *r;
	p->rules[p->nrules].line = ps->line;
	p->nrules++;
	return 0;
}

static bool valid_glob(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 255)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || (unsigned char)*s >= 0x7f || *s == '/')
			return false;
	return true;
}

/* @tok[0..@n): one directive (no comment, at least one token). */
static int parse_directive(struct parser *ps, char **tok, size_t n)
{
	struct kp_hook_rule r = { 0 };
	size_t i = 0;

	if (!strcmp(tok[0], "module")) {
		if (n < 3)
			return bad(ps, "%s: expected 'module GLOB ACTION ...'", tok[0]);
		if (!valid_glob(tok[1]))
			return bad(ps, "invalid module glob '%s'", tok[1]);
		underscores(tok[1]);
		r.module = kp_arena_strdup(&ps->p->arena, tok[1]);
		if (!r.module)
			return oom(ps);
		i = 2;
	}
	if (!strcmp(tok[i], "on-error")) {
		if (n - i != 2)
			return bad(ps, "%s takes one value: fail-open or fail-closed", tok[i]);
		if (kp_hook_parse_on_error(tok[i + 1], &r.on_error) < 0)
			return bad(ps, "unknown on-error mode '%s' (fail-open or fail-closed)",
				   tok[i + 1]);
		r.is_on_error = true;
		return add_rule(ps, &r);
	}
	if (parse_action(tok[i], &r.action) < 0)
		return bad(ps, "unknown directive '%s' (block, warn, ignore, on-error or module)",
			   tok[i]);
	if (n - i < 2)
		return bad(ps,
			   "%s: name the consequences (load-failure, inherit-taint, symbol-get, "
			   "proprietary or all)",
			   tok[i]);
	for (size_t k = i + 1; k < n; k++)
		if (parse_consequence(tok[k], &r.mask) < 0)
			return bad(ps,
				   "unknown consequence '%s' (load-failure, inherit-taint, "
				   "symbol-get, proprietary or all)",
				   tok[k]);
	return add_rule(ps, &r);
}

static int parse_line(struct parser *ps, const char *s, size_t len)
{
	char buf[KP_HOOK_POLICY_MAX_LINE + 1];
	char *tok[MAX_TOKENS], *save = NULL;
	size_t n = 0;

	if (len > KP_HOOK_POLICY_MAX_LINE)
		return bad(ps, "line longer than %d bytes", KP_HOOK_POLICY_MAX_LINE);
	if (memchr(s, '\0', len))
		return bad(ps, "%s", "not a text line (NUL byte)");
	memcpy(buf, s, len);
	buf[len] = '\0';
	for (char *t = strtok_r(buf, " \t\r\v\f", &save); t;
	     t = strtok_r(NULL, " \t\r\v\f", &save)) {
		if (t[0] == '#')
			break;
		if (n == MAX_TOKENS)
			return bad(ps, "more than %d words", MAX_TOKENS);
		tok[n++] = t;
	}
	return n ? parse_directive(ps, tok, n) : 0;
}

int kp_hook_policy_parse(struct kp_hook_policy *p, const char *label, const char *buf, size_t len,
			 struct kp_err *err)
{
	struct parser ps = { .p = p, .label = label, .err = err };
	const char *pos = buf, *end = buf + len;

	kp_hook_policy_init(p);
	if (len > KP_HOOK_POLICY_MAX_SIZE)
		return kp_err_errno(err, EFBIG, "%s: larger than 1 MiB", label);
	int r = 0;

	while (pos < end && r == 0) {
		const char *nl = memchr(pos, '\n', (size_t)(end - pos));
		size_t l = nl ? (size_t)(nl - pos) : (size_t)(end - pos);

		ps.line++;
		r = parse_line(&ps, pos, l);
		pos = nl ? nl + 1 : end;
	}
	if (r == 0) {
		p->path = kp_arena_strdup(&p->arena, label);
		if (!p->path)
			r = oom(&ps);
	}
	if (r < 0)
		kp_hook_policy_release(p);
	return r;
}

int kp_hook_policy_load(struct kp_hook_policy *p, const char *path, struct kp_err *err)
{
	struct kp_bytes b;
	struct stat st;
	int r;

	kp_hook_policy_init(p);
	if (stat(path, &st) < 0) {
		int e = errno;

		/* a dangling symlink is a broken policy, not an absent one */
		if (e == ENOENT && lstat(path, &st) == 0)
			return kp_err_errno(err, ENOLINK, "%s: dangling symbolic link", path);
		return kp_err_errno(err, e, "%s: cannot open: %s", path, strerror(e));
	}
	/* Who can change the policy can load anything: only root (or the user running). */
	if (S_ISREG(st.st_mode) && (st.st_mode & S_IWOTH))
		return kp_err_errno(err, EPERM, "%s: writable by every user: refused", path);
	if (S_ISREG(st.st_mode) && st.st_uid != 0 && st.st_uid != geteuid())
		return kp_err_errno(
			err, EPERM,
			"%s: owned by uid %u, neither root nor the user running: refused", path,
			(unsigned)st.st_uid);
	if (S_ISREG(st.st_mode) && (st.st_mode & S_IWGRP) && st.st_gid != 0 &&
	    st.st_gid != getegid())
		return kp_err_errno(err, EPERM, "%s: writable by group %u: refused", path,
				    (unsigned)st.st_gid);
	r = kp_read_file(path, KP_HOOK_POLICY_MAX_SIZE, &b, err);
	if (r < 0)
		return -1;
	if (b.comp != KP_COMP_NONE) {
		kp_bytes_release(&b);
		return kp_err_set(err, "%s: compressed: the policy must be plain text", path);
	}
	r = kp_hook_policy_parse(p, path, (const char *)b.data, b.len, err);
	kp_bytes_release(&b);
	return r;
}

static bool applies(const struct kp_hook_rule *r, const char *module)
{
	if (!r->module)
		return true;
	return module && kp_hook_module_match(r->module, module);
}

enum kp_hook_action kp_hook_policy_action(const struct kp_hook_policy *p, const char *module,
					  enum kp_hook_consequence c, size_t *line)
{
	enum kp_hook_action a = KP_HOOK_WARN;

	*line = 0;
	for (size_t i = 0; i < p->nrules; i++) {
		const struct kp_hook_rule *r = &p->rules[i];

		if (r->is_on_error || !(r->mask & (1U << c)) || !applies(r, module))
			continue;
		a = r->action;
		*line = r->line;
	}
	return a;
}

bool kp_hook_policy_ignores(const struct kp_hook_policy *p, enum kp_hook_consequence c)
{
	enum kp_hook_action all = KP_HOOK_WARN; /* the default */
	bool exception = false;

	for (size_t i = 0; i < p->nrules; i++) {
		const struct kp_hook_rule *r = &p->rules[i];

		if (r->is_on_error || !(r->mask & (1U << c)))
			continue;
		if (!r->module || !strcmp(r->module, "*")) {
			/* a line for every module overrides the lines before it */
			all = r->action;
			exception = false;
		} else if (r->action != KP_HOOK_IGNORE) {
			exception = true; /* some module may need it */
		}
	}
	return all == KP_HOOK_IGNORE && !exception;
}

bool kp_hook_policy_blocks(const struct kp_hook_policy *p, unsigned mask)
{
	for (size_t i = 0; i < p->nrules; i++)
		if (!p->rules[i].is_on_error && p->rules[i].action == KP_HOOK_BLOCK &&
		    (p->rules[i].mask & mask))
			return true;
	return false;
}

enum kp_hook_on_error kp_hook_policy_on_error(const struct kp_hook_policy *p, const char *module,
					      size_t *line)
{
	enum kp_hook_on_error m = KP_HOOK_FAIL_OPEN;

	*line = 0;
	for (size_t i = 0; i < p->nrules; i++) {
		const struct kp_hook_rule *r = &p->rules[i];

		if (!r->is_on_error || !applies(r, module))
			continue;
		m = r->on_error;
		*line = r->line;
	}
	return m;
}
