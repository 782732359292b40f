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
 * So is a file another user could change (open_policy(), check_owner()): in a directory
 * others can write, owned by another user, writable by others, by a group other than root's
 * or the user's, or by anyone its access ACL names.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cache/trusted-dir.h"
#include "file/bytes.h"
#include "hook-policy.h"
#include "util/io.h"
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

/*
 * The policy's owner and mode (@st, regular, opened as @fd): only root or the user running can
 * change it. Group-writable is allowed for root's group or the user's only without an access
 * ACL: with one, the group bits are the ACL's mask (acl(5)), so they also show the write
 * access of its named users and groups (setfacl -m u:nobody:rw) and say nothing of the owning
 * group.
 */
static int check_owner(int fd, const struct stat *st, const char *path, struct kp_err *err)
{
	ssize_t acl;

	if (st->st_mode & S_IWOTH)
		return kp_err_errno(err, EPERM, "%s: writable by every user: refused", path);
	if (!kp_trusted_owner(st))
		return kp_err_errno(
			err, EPERM,
			"%s: owned by uid %u, neither root nor the user running: refused", path,
			(unsigned)st->st_uid);
	if (!(st->st_mode & S_IWGRP))
		return 0;
	if (st->st_gid != 0 && st->st_gid != getegid())
		return kp_err_errno(err, EPERM, "%s: writable by group %u: refused", path,
				    (unsigned)st->st_gid);
	/* the xattr exists only for an ACL beyond the mode's three classes */
	acl = fgetxattr(fd, "system.posix_acl_access", NULL, 0);
	if (acl < 0 && (errno == ENODATA || errno == EOPNOTSUPP))
		return 0;
	return kp_err_errno(err, EPERM,
			    "%s: group-writable with an access ACL (its named users or groups "
			    "may write it): refused",
			    path);
}

static int not_regular(const char *path, mode_t m, struct kp_err *err)
{
	return kp_err_errno(err, S_ISDIR(m) ? EISDIR : EINVAL, "%s: %s, not a regular file", path,
			    S_ISDIR(m)	  ? "is a directory"
			    : S_ISFIFO(m) ? "is a FIFO"
			    : S_ISSOCK(m) ? "is a socket"
			    : S_ISCHR(m)  ? "is a character device"
			    : S_ISBLK(m)  ? "is a block device"
					  : "is not a file");
}

/*
 * Opens the policy @path with nothing another user can swap between the checks and the read
 * (a root-owned file in a directory that user can write can be replaced by any other
 * root-owned file, an empty one blocking nothing): its directory and every one above it pass
 * the caches' trust test (cache/trusted-dir.h: owned by root or the user running, not
 * writable by group or others, a sticky one only above it); a symbolic link is followed only
 * when the link is theirs too, its target walked the same way (40 links at most); the file
 * is opened without following a link and checked on what was opened. The descriptor with
 * @st, or -1 with @err (errnum ENOENT: no such file, the defaults apply).
 */
static int open_policy(const char *path, struct stat *st, struct kp_err *err)
{
	char cur[PATH_MAX], dir[PATH_MAX], target[PATH_MAX];
	bool linked = false;

	if (snprintf(cur, sizeof(cur), "%s", path) >= (int)sizeof(cur))
		return kp_err_errno(err, ENAMETOOLONG, "%s: name too long", path);
	for (int links = 0; links <= 40; links++) {
		struct kp_err derr = { 0 };
		const char *base = cur;
		struct stat lst;
		ssize_t n;
		int dfd, fd, e;

		if (!strchr(cur, '/'))
			snprintf(dir, sizeof(dir), ".");
		else if (kp_trusted_split(cur, dir, sizeof(dir), &base) < 0)
			return kp_err_errno(err, EISDIR, "%s: not a file name", path);
		if (!strcmp(base, ".") || !strcmp(base, ".."))
			return kp_err_errno(err, EISDIR, "%s: not a file name", path);
		dfd = kp_trusted_dir_open(dir, false, &derr);
		if (dfd < 0) {
			e = kp_err_errnum(&derr);
			if (e == EPERM)
				return kp_err_errno(err, EPERM, "%s: refused: %s", path, derr.msg);
			if (linked && (e == ENOENT || e == ENOTDIR))
				return kp_err_errno(err, ENOLINK, "%s: dangling symbolic link",
						    path);
			return kp_err_errno(err, e, "%s: cannot open: %s", path, strerror(e));
		}
		if (fstatat(dfd, base, &lst, AT_SYMLINK_NOFOLLOW) < 0) {
			e = errno;
			close(dfd);
			if (linked && e == ENOENT)
				return kp_err_errno(err, ENOLINK, "%s: dangling symbolic link",
						    path);
			return kp_err_errno(err, e, "%s: cannot open: %s", path, strerror(e));
		}
		if (S_ISLNK(lst.st_mode)) {
			if (!kp_trusted_owner(&lst)) {
				close(dfd);
				return kp_err_errno(err, EPERM,
						    "%s: refused: %s/%s is a link owned by uid %u",
						    path, dir, base, (unsigned)lst.st_uid);
			}
			n = readlinkat(dfd, base, target, sizeof(target));
			e = errno;
			close(dfd);
			if (n < 0)
				return kp_err_errno(err, e, "%s: cannot open: %s", path,
						    strerror(e));
			if ((size_t)n >= sizeof(target))
				return kp_err_errno(err, ENAMETOOLONG, "%s: link target too long",
						    path);
			target[n] = '\0';
			if (target[0] == '/') {
				memcpy(cur, target, (size_t)n + 1);
			} else if (strlen(dir) + 1 + (size_t)n >= sizeof(cur)) {
				return kp_err_errno(err, ENAMETOOLONG, "%s: link target too long",
						    path);
			} else {
				size_t dl = strlen(dir);

				memcpy(cur, dir, dl);
				cur[dl] = '/';
				memcpy(cur + dl + 1, target, (size_t)n + 1);
			}
			linked = true;
			continue;
		}
		if (!S_ISREG(lst.st_mode)) {
			close(dfd);
			return not_regular(path, lst.st_mode, err);
		}
		fd = openat(dfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		e = errno;
		close(dfd);
		if (fd < 0)
			return kp_err_errno(err, e, "%s: cannot open: %s", path, strerror(e));
		if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
			close(fd);
			return kp_err_errno(err, EINVAL, "%s: replaced while opened", path);
		}
		if (check_owner(fd, st, path, err) < 0) {
			close(fd);
			return -1;
		}
		return fd;
	}
	return kp_err_errno(err, ELOOP, "%s: too many levels of symbolic links", path);
}

int kp_hook_policy_load(struct kp_hook_policy *p, const char *path, struct kp_err *err)
{
	char size[32];
	struct stat st;
	ssize_t n;
	char *buf;
	int fd, r;

	kp_hook_policy_init(p);
	fd = open_policy(path, &st, err);
	if (fd < 0)
		return -1;
	if ((uint64_t)st.st_size > KP_HOOK_POLICY_MAX_SIZE) {
		close(fd);
		return kp_err_errno(err, EFBIG, "%s: larger than the limit of %s", path,
				    kp_format_size(KP_HOOK_POLICY_MAX_SIZE, size, sizeof(size)));
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return kp_err_errno(err, ENOMEM, "%s: out of memory", path);
	}
	/* what the file held when opened: one that shrinks meanwhile is an error */
	n = kp_pread_all(fd, buf, (size_t)st.st_size, 0);
	r = errno;
	close(fd);
	if (n != (ssize_t)st.st_size) {
		free(buf);
		return n < 0 ? kp_err_errno(err, r, "%s: read error: %s", path, strerror(r))
			     : kp_err_errno(err, EIO, "%s: file shrank while being read", path);
	}
	if (kp_detect_compression((const unsigned char *)buf, (size_t)n) != KP_COMP_NONE) {
		free(buf);
		return kp_err_set(err, "%s: compressed: the policy must be plain text", path);
	}
	r = kp_hook_policy_parse(p, path, buf, (size_t)n, err);
	free(buf);
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
