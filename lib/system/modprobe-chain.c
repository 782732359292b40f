// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The chain modprobe would load, for `kopolicy hook`. libkmod does the resolving when
 * depmod's .bin indexes exist (kmod_new() on the release directory inside the root, the
 * root's modprobe.d directories as configuration), after modprobe-index.c has checked what
 * it will read; without them, the text fallback (modprobe-chain-text.c) reads modules.dep
 * lines "path: dep dep ..." the way kmod_module_parse_depline() does. libkmod is loaded
 * only then (dl/lazy-lib.h): one that cannot be is the chain's error, not a crash.
 */
#include <errno.h>
#include <libkmod.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "dl/lazy-lib.h"
#include "file/bytes.h"
#include "file/inputs.h"
#include "file/rootfs.h"
#include "modprobe-chain-internal.h"
#include "modprobe-chain.h"
#include "modprobe-index.h"
#include "modprobe-snapshot.h"
#include "util/module-name.h"

/* The first libkmod error of a call, kept so that silent empty results can be told apart. */
struct kmod_log {
	char msg[256];
	bool set;
};

static void kmod_log_fn(void *data, int priority, const char *file, int line, const char *fn,
			const char *format, va_list args)
{
	struct kmod_log *log = data;

	if (!log || priority > LOG_ERR || log->set)
		return;
	vsnprintf(log->msg, sizeof(log->msg), format, args);
	log->msg[strcspn(log->msg, "\n")] = '\0';
	log->set = true;
}

int kp_chain_open(struct kp_chain *c, const char *root, const char *moddir,
		  const char *const *builtin, size_t nbuiltin, const char *const *blacklist,
		  size_t nblacklist, struct kp_kmod_copy *kc, struct kp_index_memo *memo,
		  struct kp_err *err)
{
	const char *paths[KP_CHAIN_CONF_DIRS + 1] = { NULL };
	const char *kpaths[KP_CHAIN_CONF_DIRS + 1] = { NULL };
	char *bin = NULL;
	int r;

	memset(c, 0, sizeof(*c));
	c->root = kp_arena_strdup(&c->arena, root && *root ? root : "/");
	c->moddir = kp_arena_strdup(&c->arena, moddir);
	/* the run's copy, unless it holds another release directory's */
	c->kc = kc && (!kc->active || kp_kmod_copy_of(kc, moddir)) ? kc : &c->own_kc;
	c->memo = memo;
	/* opened once: the text indexes are opened under this directory */
	kp_root_dir_pin(&c->rootdir, c->root);
	c->builtin = builtin;
	c->nbuiltin = nbuiltin;
	c->blacklist = blacklist;
	c->nblacklist = nblacklist;
	if (!c->root || !c->moddir || asprintf(&bin, "%s/modules.dep.bin", moddir) < 0) {
		kp_chain_close(c);
		return kp_err_set(err, "out of memory");
	}
	if (!kp_is_file(bin)) {
		struct kp_bytes b;

		free(bin);
		r = kp_chain_read_text_index(&c->rootdir, moddir, "modules.dep", &b, err);
		if (r < 0 && kp_err_errnum(err) == ENOENT) {
			kp_chain_close(c);
			return kp_err_set(err,
					  "%s: no depmod indexes (neither modules.dep.bin nor "
					  "modules.dep): run depmod for this release",
					  moddir);
		}
		if (r < 0) {
			kp_chain_close(c);
			return -1;
		}
		/* a private NUL-terminated copy: the lines are cut in place */
		c->dep_text = malloc(b.len + 1);
		if (!c->dep_text) {
			kp_bytes_release(&b);
			kp_chain_close(c);
			return kp_err_set(err, "out of memory");
		}
		memcpy(c->dep_text, b.data, b.len);
		c->dep_text[b.len] = '\0';
		c->dep_len = b.len;
		kp_bytes_release(&b);
		c->source = KP_CHAIN_TEXT;
		return 0;
	}
	free(bin);
	/* what libkmod reads checked first: the root's files, or a copy of them */
	if (kp_chain_kmod_prepare(c, paths, kpaths, err) < 0) {
		kp_chain_close(c);
		return -1;
	}
	/* libkmod loaded on first use (dl/lazy-lib.h): a broken install is an error here */
	if (kp_lazy_require(kp_lazy_libkmod(), err) < 0) {
		kp_chain_close(c);
		return -1;
	}
	/* An empty list (not NULL): never the host's own /etc/modprobe.d. */
	kp_in_note_kmod(moddir, paths); /* the root's files, whichever libkmod reads */
	c->ctx = kmod_new(kp_kmod_dir(c->kc, moddir), kpaths);
	if (!c->ctx) {
		kp_chain_close(c);
		return kp_err_set(err, "%s: libkmod cannot open the indexes", moddir);
	}
	kmod_set_log_priority(c->ctx, LOG_ERR);
	kmod_set_log_fn(c->ctx, kmod_log_fn, NULL);
	c->source = KP_CHAIN_LIBKMOD;
	return 0;
}

void kp_chain_close(struct kp_chain *c)
{
	if (c->ctx)
		kmod_unref(c->ctx);
	kp_kmod_copy_remove(&c->own_kc); /* a copy given to kp_chain_open() is its owner's */
	if (c->depbin.data)
		kp_bytes_release(&c->depbin);
	free(c->dep_text);
	free(c->mods);
	kp_root_dir_unpin(&c->rootdir);
	kp_arena_release(&c->arena);
	memset(c, 0, sizeof(*c));
}

bool kp_chain_is_builtin(const struct kp_chain *c, const char *name)
{
	return kp_sorted_contains(c->builtin, c->nbuiltin, name);
}

bool kp_chain_is_blacklisted(const struct kp_chain *c, const char *name)
{
	for (size_t i = 0; i < c->nblacklist; i++)
		if (kp_modname_eq(c->blacklist[i], name))
			return true;
	return false;
}

/* A module file as libkmod or modules.dep names it, kept inside the root. */
static int set_paths(struct kp_chain *c, struct kp_chain_module *m, const char *file,
		     struct kp_err *err)
{
	const char *kmoddir = kp_kmod_dir(c->kc, c->moddir);
	size_t ml = strlen(c->moddir), kl = strlen(kmoddir);
	char *p = NULL;

	if (c->kc->active && !strncmp(file, kmoddir, kl) && file[kl] == '/') {
		/* libkmod names it in its copy: the module is the root's */
		if (asprintf(&p, "%s%s", c->moddir, file + kl) < 0)
			p = NULL;
	} else if (!strncmp(file, c->moddir, ml) && file[ml] == '/')
		p = strdup(file);
	else if (file[0] == '/') /* an absolute modules.dep entry (old depmod) */
		p = kp_root_path(c->root, file);
	else if (asprintf(&p, "%s/%s", c->moddir, file) < 0)
		p = NULL;
	m->path = p ? kp_arena_strdup(&c->arena, p) : NULL;
	free(p);
	if (!m->path)
		return kp_err_set(err, "out of memory");
	if (!strncmp(m->path, c->moddir, ml) && m->path[ml] == '/')
		m->relpath = m->path + ml + 1;
	else
		m->relpath = m->path;
	return 0;
}

static struct kp_chain_module *chain_find(struct kp_chain *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->mods[i].name, name))
			return &c->mods[i];
	return NULL;
}

/* Appends module @name (file @file, NULL for none) unless it is there already. */
int kp_chain_add(struct kp_chain *c, size_t *cap, const char *name, const char *file, bool target,
		 struct kp_err *err)
{
	char norm[256];
	struct kp_chain_module *m;

	kp_modname_copy(norm, sizeof(norm), name, SIZE_MAX);
	m = chain_find(c, norm);
	if (m) {
		m->target |= target;
		return 0;
	}
	if (c->n >= KP_CHAIN_MAX_MODULES)
		return kp_err_set(err, "%s: more than %d modules on one chain", c->moddir,
				  KP_CHAIN_MAX_MODULES);
	if (kp_grow(&c->mods, cap, c->n + 1, sizeof(*c->mods)) < 0)
		return kp_err_set(err, "out of memory");
	m = &c->mods[c->n];
	memset(m, 0, sizeof(*m));
	m->name = kp_arena_strdup(&c->arena, norm);
	if (!m->name)
		return kp_err_set(err, "out of memory");
	m->target = target;
	m->blacklisted = kp_chain_is_blacklisted(c, norm);
	if (file) {
		if (set_paths(c, m, file, err) < 0)
			return -1;
	} else if (kp_chain_is_builtin(c, norm)) {
		m->builtin = true;
	} else {
		return kp_err_set(err, "%s: module %s has no file and is not built in", c->moddir,
				  norm);
	}
	c->n++;
	return 0;
}

/*
 * The dependencies of a modules.dep line (@list: "DEP DEP ...", cut in place) added to the
 * chain as kmod_module_parse_depline() lists them: prepended, the last one listed first.
 */
int kp_chain_add_deps(struct kp_chain *c, size_t *cap, const char *norm, char *list,
		      struct kp_err *err)
{
	char *toks[KP_CHAIN_MAX_MODULES];
	char *save = NULL;
	size_t nt = 0;

	for (char *t = strtok_r(list, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save)) {
		if (nt == KP_ARRAY_SIZE(toks))
			return kp_err_set(err, "%s/modules.dep: %s has too many dependencies",
					  c->moddir, norm);
		toks[nt++] = t;
	}
	while (nt--) {
		char name[256];

		kp_modname_from_path(name, sizeof(name), toks[nt], KP_MODNAME_KO);
		if (kp_chain_add(c, cap, name, toks[nt], false, err) < 0)
			return -1;
	}
	return 0;
}

/* Whether @m's file is a file inside the root (links followed there, never on the host). */
static bool file_in_root(const struct kp_chain *c, const struct kp_chain_module *m)
{
	char *real;
	bool ok;

	if (m->builtin)
		return true;
	real = kp_root_resolve_path(c->root, m->path);
	ok = real && kp_is_file(real);
	free(real);
	return ok;
}

/*
 * libkmod 30 stat()s each dependency of a modules.dep.bin line (module_parse_depline() ->
 * kmod_module_new_from_path()) by name on the host, through the copy's links when it reads
 * a copy: below the release directory, a directory someone swapped for a link makes that
 * stat() ask about a host path, and the answer would tell whether it exists. So what it
 * found is not taken: each dependency must be a file inside the root, and where libkmod
 * failed (@why), the line of the index kopolicy checked (the bytes libkmod read) gives the
 * dependencies of @mname, each then a file inside the root, else libkmod's failure stands.
 */
static int deps_from_index(struct kp_chain *c, size_t *cap, const char *mname, const char *why,
			   struct kp_err *err)
{
	char line[65536], *colon;
	size_t first = c->n;

	if (kp_chain_depbin_line(c, mname, line, sizeof(line)) != 1 || !(colon = strchr(line, ':')))
		return kp_err_set(err, "%s: dependencies of %s: %s", c->moddir, mname, why);
	if (kp_chain_add_deps(c, cap, mname, colon + 1, err) < 0)
		return -1;
	for (size_t i = first; i < c->n; i++)
		if (!file_in_root(c, &c->mods[i]))
			return kp_err_set(err, "%s: dependencies of %s: %s", c->moddir, mname, why);
	return 0;
}

/* A dependency @dname of @mname that libkmod found: a file inside the root too. */
static int dep_in_root(struct kp_chain *c, const char *dname, const char *mname, struct kp_err *err)
{
	char norm[256];
	const struct kp_chain_module *m;

	kp_modname_copy(norm, sizeof(norm), dname, SIZE_MAX);
	m = chain_find(c, norm);
	if (!m || file_in_root(c, m))
		return 0;
	return kp_err_set(err, "%s: dependencies of %s: %s: no such module file inside the root",
			  c->moddir, mname, m->path);
}

static int resolve_kmod(struct kp_chain *c, const char *name, const char *norm, size_t *cap,
			struct kp_err *err)
{
	struct kmod_log log = { "", false };
	struct kmod_list *list = NULL, *l;
	int r;

	if (kp_chain_check_lookup(c, name, err) < 0)
		return -1;
	kmod_set_log_fn(c->ctx, kmod_log_fn, &log);
	r = kmod_module_new_from_lookup(c->ctx, name, &list);
	if (r < 0) {
		kmod_set_log_fn(c->ctx, kmod_log_fn, NULL);
		return kp_err_set(err, "%s: libkmod cannot look up '%s': %s", c->moddir, name,
				  log.set ? log.msg : strerror(-r));
	}
	r = 0;
	kmod_list_foreach(l, list)
	{
		struct kmod_module *mod = kmod_module_get_module(l);
		const char *mname = kmod_module_get_name(mod);
		struct kmod_list *deps, *d;
		bool alias = strcmp(mname, norm) != 0;

		if (r < 0) {
			kmod_module_unref(mod);
			continue;
		}
		c->via_alias |= alias;
		if (alias && kp_chain_is_blacklisted(c, mname)) {
			c->nblacklisted++;
			kmod_module_unref(mod);
			continue;
		}
		log.set = false;
		deps = kmod_module_get_dependencies(mod);
		if (!deps && log.set)
			r = deps_from_index(c, cap, mname, log.msg, err);
		kmod_list_foreach(d, deps)
		{
			struct kmod_module *dm = kmod_module_get_module(d);

			if (r == 0)
				r = kp_chain_add(c, cap, kmod_module_get_name(dm),
						 kmod_module_get_path(dm), false, err);
			if (r == 0)
				r = dep_in_root(c, kmod_module_get_name(dm), mname, err);
			kmod_module_unref(dm);
		}
		kmod_module_unref_list(deps);
		if (r == 0)
			r = kp_chain_add(c, cap, mname, kmod_module_get_path(mod), true, err);
		kmod_module_unref(mod);
	}
	kmod_module_unref_list(list);
	kmod_set_log_fn(c->ctx, kmod_log_fn, NULL);
	return r;
}

int kp_chain_resolve(struct kp_chain *c, const char *name, struct kp_err *err)
{
	char norm[256];
	size_t cap = 0;
	int r;

	free(c->mods);
	c->mods = NULL;
	c->n = 0;
	c->via_alias = false;
	c->nblacklisted = 0;
	if (!*name || strlen(name) >= sizeof(norm))
		return kp_err_set(err, "invalid module name");
	kp_modname_copy(norm, sizeof(norm), name, SIZE_MAX);
	if (c->source == KP_CHAIN_LIBKMOD)
		r = resolve_kmod(c, name, norm, &cap, err);
	else
		r = kp_chain_resolve_text(c, name, norm, &cap, err);
	if (r < 0)
		return -1;
	if (!c->n && !c->nblacklisted)
		return kp_err_errno(
			err, ENOENT, "module %s not found in %s%s", name, c->moddir,
			c->source == KP_CHAIN_TEXT ? " (text modules.dep and modules.alias)" : "");
	return 0;
}

int kp_chain_module_path(struct kp_chain *c, const char *name, const char **path,
			 const char **relpath, struct kp_err *err)
{
	struct kp_chain_module m = { 0 };
	char norm[256];

	*path = *relpath = NULL;
	kp_modname_copy(norm, sizeof(norm), name, SIZE_MAX);
	if (c->source == KP_CHAIN_LIBKMOD) {
		struct kmod_module *mod = NULL;
		const char *file;

		if (kmod_module_new_from_name(c->ctx, norm, &mod) < 0 || !mod)
			return kp_err_set(err, "out of memory");
		file = kmod_module_get_path(mod);
		if (file && set_paths(c, &m, file, err) < 0) {
			kmod_module_unref(mod);
			return -1;
		}
		kmod_module_unref(mod);
	} else {
		char *deps, *line = NULL;
		size_t dl;

		line = kp_chain_dep_line(c, norm, &deps, &dl);
		if (line) {
			char key[512];
			size_t kl = (size_t)(deps - 1 - line);

			if (kl >= sizeof(key))
				return kp_err_set(err, "%s/modules.dep: line too long", c->moddir);
			memcpy(key, line, kl);
			key[kl] = '\0';
			if (set_paths(c, &m, key, err) < 0)
				return -1;
		}
	}
	if (!m.path)
		return 0;
	*path = m.path;
	*relpath = m.relpath;
	return 0;
}

int kp_chain_symbol_owner(struct kp_chain *c, const char *symbol, const char **name,
			  struct kp_err *err)
{
	char key[512];

	*name = NULL;
	if (snprintf(key, sizeof(key), "symbol:%s", symbol) >= (int)sizeof(key))
		return 0;
	if (c->source == KP_CHAIN_LIBKMOD) {
		struct kmod_list *list = NULL;

		if (kp_chain_check_lookup(c, key, err) < 0)
			return -1;
		if (kmod_module_new_from_lookup(c->ctx, key, &list) < 0)
			return kp_err_set(err, "%s: libkmod cannot look up %s", c->moddir, key);
		if (list) {
			struct kmod_module *mod = kmod_module_get_module(list);

			*name = kp_arena_strdup(&c->arena, kmod_module_get_name(mod));
			kmod_module_unref(mod);
			kmod_module_unref_list(list);
			if (!*name)
				return kp_err_set(err, "out of memory");
		}
	} else {
		struct kp_bytes b;
		const char *pos, *end;
		int r = kp_chain_read_index(c, "modules.symbols", &b, err);
		size_t kl = strlen(key);

		if (r <= 0)
			return r;
		pos = (const char *)b.data;
		end = pos + b.len;
		while (pos < end && !*name) {
			const char *nl = memchr(pos, '\n', (size_t)(end - pos));
			size_t n = nl ? (size_t)(nl - pos) : (size_t)(end - pos);

			/* "alias symbol:NAME MODULE" */
			if (n > 6 + kl + 1 && !memcmp(pos, "alias ", 6) &&
			    !memcmp(pos + 6, key, kl) && pos[6 + kl] == ' ') {
				const char *m = pos + 6 + kl + 1;
				size_t ml = n - 6 - kl - 1;
				char norm[256];

				while (ml && (m[ml - 1] == '\r' || m[ml - 1] == ' '))
					ml--;
				if (ml && ml < sizeof(norm)) {
					memcpy(norm, m, ml);
					norm[ml] = '\0';
					kp_modname_copy(norm, sizeof(norm), norm, SIZE_MAX);
					*name = kp_arena_strdup(&c->arena, norm);
					if (!*name) {
						kp_bytes_release(&b);
						return kp_err_set(err, "out of memory");
					}
				}
			}
			pos = nl ? nl + 1 : end;
		}
		kp_bytes_release(&b);
	}
	return 0;
}
