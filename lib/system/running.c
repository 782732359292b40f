// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The running system under a root. /proc/modules lines are
 *   name size refcount users state address [(taints)]
 * (kernel/module/procfs.c m_show(), print_unload_info(); users end in ',' or
 * are "-"; without MODULE_UNLOAD refcount and users are both "-"; the
 * parenthesised flags also carry '+'/'-' for modules coming or going).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "kernel/kernel-base.h"
#include "file/inputs.h"
#include "file/rootfs.h"
#include "kernel-read.h"
#include "running.h"
#include "util/module-name.h"

#define PROC_MAX_SIZE	  ((size_t)16 << 20)
#define KALLSYMS_MAX_SIZE ((size_t)256 << 20)

static char *rpath(const struct kp_running *r, const char *rel)
{
	return kp_root_path(r->root, rel);
}

static const char *adup(struct kp_running *r, const char *s, size_t n)
{
	return kp_arena_strndup(&r->arena, s, n);
}

/*
 * A small file's first line into the arena, NULL if absent or unreadable; -1 on other errors.
 * @read: kp_read_first_line_in(), or kp_read_kernel_first_line_in() for a read that can sleep
 * on a lock an oops left held; both open @rel inside the root by descriptors.
 */
static int first_line_by(struct kp_running *r, const char *rel, const char **out,
			 int (*read)(const struct kp_root_dir *, const char *, char *, size_t,
				     struct kp_err *),
			 struct kp_err *err)
{
	char buf[4096];
	char *path = rpath(r, rel);
	int ret;

	*out = NULL;
	if (!path)
		return kp_err_set(err, "out of memory");
	ret = read(&r->rootdir, path, buf, sizeof(buf), err);
	free(path);
	if (ret < 0) {
		int e = kp_err_errnum(err);

		return e == ENOENT || e == EACCES || e == EPERM ? 0 : -1;
	}
	*out = adup(r, buf, strlen(buf));
	return *out ? 0 : kp_err_set(err, "out of memory");
}

static int first_line(struct kp_running *r, const char *rel, const char **out, struct kp_err *err)
{
	return first_line_by(r, rel, out, kp_read_first_line_in, err);
}

static int read_release(struct kp_running *r, struct kp_err *err)
{
	struct utsname u;

	if (first_line(r, "proc/sys/kernel/osrelease", &r->release, err) < 0)
		return -1;
	if (r->release && *r->release)
		return 0;
	if (!kp_root_is_host(r->root))
		return kp_err_set(err,
				  "%s: cannot tell the kernel release: no "
				  "proc/sys/kernel/osrelease",
				  r->root);
	if (uname(&u) < 0)
		return kp_err_set(err, "uname: %s", strerror(errno));
	r->release = adup(r, u.release, strlen(u.release));
	r->release_from_uname = true;
	return r->release ? 0 : kp_err_set(err, "out of memory");
}

static bool all_digits(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/*
 * A module name as /proc/modules prints it (kbuild's KBUILD_MODNAME: letters, digits, '_';
 * '-' from a hand-set name). Not a C identifier: 9pnet, 8021q, 6lowpan, 3c59x start with a
 * digit.
 */
static bool is_module_name(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-'))
			return false;
	return true;
}

/* Taint letters without the state marks '+' / '-'. */
static const char *taint_letters(struct kp_running *r, const char *s, size_t n)
{
	char buf[64];
	size_t k = 0;

	for (size_t i = 0; i < n && k + 1 < sizeof(buf); i++)
		if (s[i] >= 'A' && s[i] <= 'Z')
			buf[k++] = s[i];
	return adup(r, buf, k);
}

#define MAX_FIELDS 8

static int parse_module_line(struct kp_running *r, char *line, const char *path, size_t lineno,
			     struct kp_loaded_module *m, struct kp_err *err)
{
	char *f[MAX_FIELDS];
	size_t nf = 0, cap = 0;
	char *save = NULL, *tok;

	for (tok = strtok_r(line, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		if (nf == MAX_FIELDS)
			return kp_err_set(err, "%s:%zu: too many fields", path, lineno);
		f[nf++] = tok;
	}
	if (nf != 6 && nf != 7)
		return kp_err_set(err,
				  "%s:%zu: %zu fields, expected 'name size refcount users "
				  "state address [(taints)]'",
				  path, lineno, nf);
	if (!is_module_name(f[0], strlen(f[0])))
		return kp_err_set(err, "%s:%zu: invalid module name '%s'", path, lineno, f[0]);
	if (!all_digits(f[1], strlen(f[1])))
		return kp_err_set(err, "%s:%zu: invalid size '%s'", path, lineno, f[1]);
	if (strcmp(f[2], "-") && !(all_digits(f[2], strlen(f[2])) ||
				   (f[2][0] == '-' && all_digits(f[2] + 1, strlen(f[2] + 1)))))
		return kp_err_set(err, "%s:%zu: invalid reference count '%s'", path, lineno, f[2]);
	if (strncmp(f[5], "0x", 2))
		return kp_err_set(err, "%s:%zu: invalid address '%s'", path, lineno, f[5]);
	if (nf == 7 && (f[6][0] != '(' || f[6][strlen(f[6]) - 1] != ')'))
		return kp_err_set(err, "%s:%zu: invalid taint flags '%s'", path, lineno, f[6]);

	memset(m, 0, sizeof(*m));
	m->name = adup(r, f[0], strlen(f[0]));
	m->size = strtoull(f[1], NULL, 10);
	m->refcount = strcmp(f[2], "-") ? atoi(f[2]) : -1;
	m->state = adup(r, f[4], strlen(f[4]));
	m->taint = nf == 7 ? taint_letters(r, f[6] + 1, strlen(f[6]) - 2) : adup(r, "", 0);
	if (!m->name || !m->state || !m->taint)
		return kp_err_set(err, "out of memory");
	if (strcmp(f[3], "-")) {
		char *users = f[3], *u;

		save = NULL;
		for (u = strtok_r(users, ",", &save); u; u = strtok_r(NULL, ",", &save)) {
			const char **grown = m->users;
			size_t need = m->nusers + 1;

			if (need > cap) {
				size_t ncap = cap ? cap * 2 : 4;

				grown = kp_arena_alloc(&r->arena, ncap * sizeof(*grown));
				if (!grown)
					return kp_err_set(err, "out of memory");
				if (m->nusers)
					memcpy(grown, m->users, m->nusers * sizeof(*grown));
				cap = ncap;
			}
			grown[m->nusers] = adup(r, u, strlen(u));
			if (!grown[m->nusers])
				return kp_err_set(err, "out of memory");
			m->users = grown;
			m->nusers++;
		}
	}
	return 0;
}

static int read_module_taint(struct kp_running *r, struct kp_loaded_module *m, struct kp_err *err)
{
	char rel[256], buf[64];
	char *path;
	int ret;

	snprintf(rel, sizeof(rel), "sys/module/%s/taint", m->name);
	path = rpath(r, rel);
	if (!path)
		return kp_err_set(err, "out of memory");
	ret = kp_read_first_line_in(&r->rootdir, path, buf, sizeof(buf), err);
	if (ret == 0) {
		for (const char *p = buf; *p; p++)
			if (*p < 'A' || *p > 'Z') {
				ret = kp_err_set(err,
						 "%s: unexpected character '%c' in the taint "
						 "letters",
						 path, *p);
				break;
			}
		if (ret == 0) {
			m->taint = adup(r, buf, strlen(buf));
			m->taint_from_sysfs = true;
			if (!m->taint)
				ret = kp_err_set(err, "out of memory");
		}
	} else if (kp_err_errnum(err) == ENOENT || kp_err_errnum(err) == EACCES) {
		ret = 0;
	} else {
		ret = -1;
	}
	free(path);
	return ret;
}

/*
 * sys/module/<name>/import_ns (7.1+, "module: expose imported namespaces via sysfs"): the
 * namespaces the live module imports, one a line; the file exists only when there is one.
 * Absent or unreadable: not known (older kernels have no such file).
 */
static int read_module_import_ns(struct kp_running *r, struct kp_loaded_module *m,
				 struct kp_err *err)
{
	char rel[256];
	struct kp_bytes b;
	char *path;
	size_t n = 0;
	int ret;

	snprintf(rel, sizeof(rel), "sys/module/%s/import_ns", m->name);
	path = rpath(r, rel);
	if (!path)
		return kp_err_set(err, "out of memory");
	ret = kp_read_file_in(&r->rootdir, path, (size_t)1 << 20, &b, err);
	if (ret < 0) {
		free(path);
		if (kp_err_errnum(err) == ENOENT || kp_err_errnum(err) == EACCES) {
			memset(err, 0, sizeof(*err));
			return 0;
		}
		return -1;
	}
	for (size_t i = 0; i < b.len; i++)
		n += b.data[i] == '\n';
	m->import_ns = kp_arena_alloc(&r->arena, (n + 1) * sizeof(*m->import_ns));
	if (!m->import_ns)
		ret = kp_err_set(err, "out of memory");
	for (size_t i = 0, start = 0; ret == 0 && i <= b.len; i++) {
		if (i < b.len && b.data[i] != '\n')
			continue;
		if (i > start) {
			const char *ns = adup(r, (const char *)b.data + start, i - start);

			if (!ns || memchr(b.data + start, '\0', i - start)) {
				ret = ns ? kp_err_set(err, "%s: not text", path)
					 : kp_err_set(err, "out of memory");
				break;
			}
			m->import_ns[m->nimport_ns++] = ns;
		}
		start = i + 1;
	}
	m->import_ns_from_sysfs = ret == 0;
	kp_bytes_release(&b);
	free(path);
	return ret;
}

/*
 * The modules read so far by name, so that a name /proc/modules repeats (a hostile or
 * broken root: 80k copies of one line) costs a lookup, not another sysfs read.
 */
struct seen_names {
	size_t *slot; /* index into r->modules + 1; 0: empty */
	size_t cap;   /* a power of two */
	size_t n;
};

static size_t name_hash(const char *s)
{
	size_t h = 14695981039346656037ull; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The earlier module named @name, or NULL; @at: where it would go. */
static struct kp_loaded_module *seen_find(const struct kp_running *r, const struct seen_names *t,
					  const char *name, size_t *at)
{
	size_t i;

	if (!t->cap)
		return NULL;
	for (i = name_hash(name) & (t->cap - 1); t->slot[i]; i = (i + 1) & (t->cap - 1))
		if (!strcmp(r->modules[t->slot[i] - 1].name, name))
			return &r->modules[t->slot[i] - 1];
	*at = i;
	return NULL;
}

/* Remembers r->modules[@idx] (not seen before); -1 when out of memory. */
static int seen_add(const struct kp_running *r, struct seen_names *t, size_t idx)
{
	size_t at = 0;

	if (2 * (t->n + 1) > t->cap) {
		struct seen_names g = { .cap = t->cap ? 2 * t->cap : 64 };

		g.slot = kp_calloc(g.cap, sizeof(*g.slot));
		if (!g.slot)
			return -1;
		for (size_t i = 0; i < t->cap; i++)
			if (t->slot[i]) {
				seen_find(r, &g, r->modules[t->slot[i] - 1].name, &at);
				g.slot[at] = t->slot[i];
				g.n++;
			}
		free(t->slot);
		*t = g;
	}
	seen_find(r, t, r->modules[idx].name, &at);
	t->slot[at] = idx + 1;
	t->n++;
	return 0;
}

static int read_modules(struct kp_running *r, struct kp_err *err)
{
	struct seen_names seen = { 0 };
	char *path = rpath(r, "proc/modules");
	struct kp_bytes b;
	size_t cap = 0, lineno = 0;
	char *pos, *end;
	int ret;

	if (!path)
		return kp_err_set(err, "out of memory");
	/* m_start() takes module_mutex: read by a child the hook can leave behind */
	ret = kp_read_kernel_file_in(&r->rootdir, path, PROC_MAX_SIZE, &b, err);
	if (ret < 0 && kp_err_errnum(err) == ENOENT) {
		free(path);
		return 0;
	}
	if (ret < 0) {
		free(path);
		return -1;
	}
	r->have_proc_modules = true;
	pos = (char *)b.data;
	end = pos + b.len;
	ret = 0;
	while (pos < end && ret == 0) {
		char *nl = memchr(pos, '\n', (size_t)(end - pos));
		size_t l = nl ? (size_t)(nl - pos) : (size_t)(end - pos);
		char line[4096];

		lineno++;
		if (l) {
			if (l >= sizeof(line) || memchr(pos, '\0', l)) {
				ret = kp_err_set(err, "%s:%zu: line too long or not text", path,
						 lineno);
				break;
			}
			memcpy(line, pos, l);
			line[l] = '\0';
			if (kp_grow(&r->modules, &cap, r->nmodules + 1, sizeof(*r->modules)) < 0) {
				ret = kp_err_set(err, "out of memory");
				break;
			}
			ret = parse_module_line(r, line, path, lineno, &r->modules[r->nmodules],
						err);
			if (ret == 0) {
				struct kp_loaded_module *m = &r->modules[r->nmodules];
				size_t at = 0;
				const struct kp_loaded_module *prev =
					seen_find(r, &seen, m->name, &at);

				/* the same name: the same sysfs file, read once */
				if (!prev) {
					ret = read_module_taint(r, m, err);
					if (ret == 0)
						ret = read_module_import_ns(r, m, err);
				} else if (prev->taint_from_sysfs) {
					m->taint = prev->taint;
					m->taint_from_sysfs = true;
				}
				if (prev) {
					m->import_ns = prev->import_ns;
					m->nimport_ns = prev->nimport_ns;
					m->import_ns_from_sysfs = prev->import_ns_from_sysfs;
				}
				if (ret == 0 && !prev && seen_add(r, &seen, r->nmodules) < 0)
					ret = kp_err_set(err, "out of memory");
			}
			if (ret == 0) {
				struct kp_loaded_module *m = &r->modules[r->nmodules];

				m->proprietary = strchr(m->taint, 'P') != NULL;
				r->nmodules++;
			}
		}
		pos = nl ? nl + 1 : end;
	}
	kp_bytes_release(&b);
	free(seen.slot);
	free(path);
	return ret;
}

static int read_security(struct kp_running *r, struct kp_err *err)
{
	const char *v;

	r->sig_enforce = -1;
	/* param_attr_show() takes kernel_param_lock(NULL), the built-ins' param_lock (5.10-7.2) */
	if (first_line_by(r, "sys/module/module/parameters/sig_enforce", &v,
			  kp_read_kernel_first_line_in, err) < 0)
		return -1;
	if (v) {
		if (!strcmp(v, "Y") || !strcmp(v, "1"))
			r->sig_enforce = 1;
		else if (!strcmp(v, "N") || !strcmp(v, "0"))
			r->sig_enforce = 0;
	}
	/* "[none] integrity confidentiality": the bracketed one is in force. */
	if (first_line(r, "sys/kernel/security/lockdown", &v, err) < 0)
		return -1;
	if (v) {
		const char *open = strchr(v, '['), *close = open ? strchr(open, ']') : NULL;

		if (open && close) {
			r->lockdown = adup(r, open + 1, (size_t)(close - open - 1));
			if (!r->lockdown)
				return kp_err_set(err, "out of memory");
		}
	}
	if (first_line(r, "proc/sys/kernel/tainted", &v, err) < 0)
		return -1;
	if (v && all_digits(v, strlen(v))) {
		r->have_tainted = true;
		r->tainted = strtoul(v, NULL, 10);
	}
	return 0;
}

/* module_blacklist=a,b on the command line: a charp parameter, the last one wins. */
static int read_cmdline(struct kp_running *r, struct kp_err *err)
{
	static const char key[] = "module_blacklist=";
	const char *last = NULL;
	size_t last_len = 0, cap = 0;

	if (first_line(r, "proc/cmdline", &r->cmdline, err) < 0)
		return -1;
	if (!r->cmdline)
		return 0;
	for (const char *p = r->cmdline; *p;) {
		size_t n = strcspn(p, " ");

		if (n > sizeof(key) - 1 && !strncmp(p, key, sizeof(key) - 1)) {
			last = p + sizeof(key) - 1;
			last_len = n - (sizeof(key) - 1);
		}
		p += n;
		p += strspn(p, " ");
	}
	while (last && last_len) {
		size_t n = 0;

		while (n < last_len && last[n] != ',')
			n++;
		if (n) {
			if (kp_grow(&r->module_blacklist, &cap, r->nmodule_blacklist + 1,
				    sizeof(*r->module_blacklist)) < 0)
				return kp_err_set(err, "out of memory");
			r->module_blacklist[r->nmodule_blacklist] = adup(r, last, n);
			if (!r->module_blacklist[r->nmodule_blacklist])
				return kp_err_set(err, "out of memory");
			r->nmodule_blacklist++;
		}
		if (n == last_len)
			break;
		last += n + 1;
		last_len -= n + 1;
	}
	return 0;
}

static int note(struct kp_running *r, const char **where, const char *msg)
{
	*where = adup(r, msg, strlen(msg));
	return *where ? 0 : -1;
}

static int read_kallsyms(struct kp_running *r, struct kp_err *err)
{
	char *path = rpath(r, "proc/kallsyms");
	struct kp_err e = { 0 };
	struct kp_kernel_base *b;
	int ret = 0;

	if (!path)
		return kp_err_set(err, "out of memory");
	if (kp_base_new(&b) < 0) {
		free(path);
		return kp_err_set(err, "out of memory");
	}
	if (kp_base_load_system_map_in(b, &r->rootdir, path, &e) < 0 ||
	    kp_base_set_kernel_release(b, r->release, &e) < 0) {
		kp_base_free(b);
		ret = note(r, &r->kallsyms_note, e.msg);
	} else {
		r->kallsyms = b;
	}
	free(path);
	return ret < 0 ? kp_err_set(err, "out of memory") : 0;
}

static int read_tree_and_config(struct kp_running *r, struct kp_kmod_copy *kc, struct kp_err *err)
{
	struct kp_err e = { 0 };
	struct stat st;
	char *procfg;

	if (kp_tree_open(&r->tree, r->root, r->release, kc, &e) == 0)
		r->have_tree = true;
	else if (note(r, &r->tree_note, e.msg) < 0)
		return kp_err_set(err, "out of memory");
	if (r->have_tree && r->tree.config_path) {
		if (kp_kconfig_load_in(&r->config, &r->tree.rootdir, r->tree.config_path, &e) < 0 &&
		    note(r, &r->config_note, e.msg) < 0)
			return kp_err_set(err, "out of memory");
		return 0;
	}
	procfg = rpath(r, "proc/config.gz");
	if (!procfg)
		return kp_err_set(err, "out of memory");
	if (kp_stat_in(&r->rootdir, procfg, &st) == 0 && S_ISREG(st.st_mode)) {
		if (kp_kconfig_load_in(&r->config, &r->rootdir, procfg, &e) < 0 &&
		    note(r, &r->config_note, e.msg) < 0) {
			free(procfg);
			return kp_err_set(err, "out of memory");
		}
	} else if (note(r, &r->config_note,
			"no boot/config-<release> and no "
			"proc/config.gz") < 0) {
		free(procfg);
		return kp_err_set(err, "out of memory");
	}
	free(procfg);
	return 0;
}

int kp_running_open_opts(struct kp_running *r, const char *root, const char *release,
			 unsigned flags, struct kp_kmod_copy *kc, struct kp_err *err)
{
	memset(r, 0, sizeof(*r));
	kp_in_uncacheable("the running kernel");
	r->sig_enforce = -1;
	r->root = strdup(root && *root ? root : "/");
	if (!r->root)
		return kp_err_set(err, "out of memory");
	/* its procfs and sysfs files opened under the directory @root names now */
	kp_root_dir_pin(&r->rootdir, r->root);
	if (release) {
		r->release = adup(r, release, strlen(release));
		if (!r->release) {
			kp_running_release(r);
			return kp_err_set(err, "out of memory");
		}
	} else if (read_release(r, err) < 0) {
		kp_running_release(r);
		return -1;
	}
	/* The release becomes a path component (lib/modules/<release>). */
	if (strchr(r->release, '/') || !strcmp(r->release, "..") || !strcmp(r->release, ".")) {
		kp_err_set(err, "invalid kernel release '%s'", r->release);
		kp_running_release(r);
		return -1;
	}
	if (read_modules(r, err) < 0 || read_security(r, err) < 0 || read_cmdline(r, err) < 0 ||
	    ((flags & KP_RUNNING_KALLSYMS) && read_kallsyms(r, err) < 0) ||
	    ((flags & KP_RUNNING_TREE) && read_tree_and_config(r, kc, err) < 0)) {
		kp_running_release(r);
		return -1;
	}
	return 0;
}

int kp_running_open(struct kp_running *r, const char *root, struct kp_err *err)
{
	return kp_running_open_opts(r, root, NULL, KP_RUNNING_ALL, NULL, err);
}

void kp_running_release(struct kp_running *r)
{
	kp_root_dir_unpin(&r->rootdir);
	free(r->root);
	free(r->modules);
	free(r->module_blacklist);
	kp_base_free(r->kallsyms);
	if (r->have_tree)
		kp_tree_release(&r->tree);
	kp_kconfig_release(&r->config);
	kp_arena_release(&r->arena);
	memset(r, 0, sizeof(*r));
}

const struct kp_loaded_module *kp_running_find(const struct kp_running *r, const char *name)
{
	for (size_t i = 0; i < r->nmodules; i++)
		if (kp_modname_eq(r->modules[i].name, name))
			return &r->modules[i];
	return NULL;
}
