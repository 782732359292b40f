// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * running-modules.c: the loaded modules of the running system under a root (running.h).
 * /proc/modules lines are
 *   name size refcount users state address [(taints)]
 * (kernel/module/procfs.c m_show(), print_unload_info(); users end in ',' or are "-";
 * without MODULE_UNLOAD refcount and users are both "-"; the parenthesised flags also carry
 * '+'/'-' for modules coming or going); each module's sys/module/NAME/taint and import_ns.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "file/inputs.h"
#include "file/rootfs.h"
#include "kernel-read.h"
#include "running-internal.h"
#include "util/module-name.h"

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
	return running_dup(r, buf, k);
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
	if (!running_all_digits(f[1], strlen(f[1])))
		return kp_err_set(err, "%s:%zu: invalid size '%s'", path, lineno, f[1]);
	if (strcmp(f[2], "-") &&
	    !(running_all_digits(f[2], strlen(f[2])) ||
	      (f[2][0] == '-' && running_all_digits(f[2] + 1, strlen(f[2] + 1)))))
		return kp_err_set(err, "%s:%zu: invalid reference count '%s'", path, lineno, f[2]);
	if (strncmp(f[5], "0x", 2))
		return kp_err_set(err, "%s:%zu: invalid address '%s'", path, lineno, f[5]);
	if (nf == 7 && (f[6][0] != '(' || f[6][strlen(f[6]) - 1] != ')'))
		return kp_err_set(err, "%s:%zu: invalid taint flags '%s'", path, lineno, f[6]);

	memset(m, 0, sizeof(*m));
	m->name = running_dup(r, f[0], strlen(f[0]));
	m->size = strtoull(f[1], NULL, 10);
	m->refcount = strcmp(f[2], "-") ? atoi(f[2]) : -1;
	m->state = running_dup(r, f[4], strlen(f[4]));
	m->taint = nf == 7 ? taint_letters(r, f[6] + 1, strlen(f[6]) - 2) : running_dup(r, "", 0);
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
			grown[m->nusers] = running_dup(r, u, strlen(u));
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
	path = running_path(r, rel);
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
			m->taint = running_dup(r, buf, strlen(buf));
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
	path = running_path(r, rel);
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
			const char *ns = running_dup(r, (const char *)b.data + start, i - start);

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

int kp_running_read_modules(struct kp_running *r, struct kp_err *err)
{
	struct seen_names seen = { 0 };
	char *path = running_path(r, "proc/modules");
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
