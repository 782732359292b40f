// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The chain modprobe would load, for `kopolicy hook`. libkmod does the resolving when
 * depmod's .bin indexes exist (kmod_new() on the release directory inside the root, the
 * root's modprobe.d directories as configuration), after modprobe-index.c has checked what
 * it will read; without them, the text fallback (modprobe-chain-text.c) reads modules.dep
 * lines "path: dep dep ..." the way kmod_module_parse_depline() does.
 *
 * For the hook, libkmod's answers (a lookup with the dependencies asked of it, a symbol's
 * owner, a module's path) are taken from its memo (cache/kmod-memo.h, given to
 * kp_chain_open()) while everything libkmod reads for them is the same, and kmod_new() is
 * then never called; a question the memo cannot answer opens libkmod then, and its answer
 * is recorded. Only what libkmod answered is replayed: every check of kopolicy's own still
 * runs on replay (the modprobe.d entries and the indexes checked by kp_chain_kmod_prepare()
 * and kp_chain_check_lookup(), through their own memo; each file of the chain inside the
 * root: dep_in_root(), deps_from_index() in modprobe-lookup.c, which asks libkmod or replays
 * its answer; the blacklist, the built-ins, the paths made inside the root: kp_chain_add()).
 * A private copy for libkmod (modprobe-snapshot.h) is never memoized: made anew by every
 * run, and only for roots whose files others could swap.
 * One thing libkmod reads is not in the memo's key: the module files it stat()s through a
 * modules.dep.bin line (kmod_module_parse_depline()). When one is missing, libkmod fails
 * the dependencies and deps_from_index() gives the same list from the checked index, if
 * each is a file inside the root; dep_in_root() requires that of every dependency libkmod
 * lists. So a replay takes a recorded list only while each of its files is a file inside
 * the root (then libkmod, listing them or failing on one's stat(), gives that same chain),
 * and never a recorded failure: either way libkmod is asked again. What libkmod prints
 * while kmod_new() parses modprobe.d (kp_kmod_new_said()) is part of its answer: printed
 * again on replay where kmod_new() would have run. libkmod is loaded only when it is asked
 * (dl/lazy-lib.h): one that cannot be is the chain's error, not a crash.
 */
#include <errno.h>
#include <libkmod.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "cache/kmod-memo.h"
#include "dl/lazy-lib.h"
#include "file/bytes.h"
#include "file/inputs.h"
#include "file/rootfs.h"
#include "modprobe-chain-internal.h"
#include "modprobe-chain.h"
#include "modprobe-index.h"
#include "modprobe-kmod.h"
#include "modprobe-snapshot.h"
#include "util/module-name.h"

/*
 * What libkmod printed when kp_chain_open() or the tree opened it, printed again on replay
 * in its place; true when the memo holds it (else libkmod is to be opened).
 */
static bool replay_said(struct kp_chain *c)
{
	struct kp_kmod_answer a;

	if (c->said)
		return true;
	if (!kp_kmod_memo_get(c->kmemo, 'O', "chain", &a) || a.code != 0 || a.n != 1 || !a.s[0])
		return false;
	fputs(a.s[0], stderr);
	c->said = true;
	return true;
}

/* libkmod's context, made on the first question the memo (if any) could not answer. */
struct kmod_ctx *kp_chain_ctx(struct kp_chain *c, struct kp_err *err)
{
	char *said = NULL, lib[PATH_MAX];

	if (c->ctx)
		return c->ctx;
	/* libkmod loaded on first use (dl/lazy-lib.h): a broken install is an error here */
	if (kp_lazy_require(kp_lazy_libkmod(), err) < 0)
		return NULL;
	/* said once already (replayed at open): the same text, not printed twice */
	c->ctx = kp_kmod_new_said(kp_kmod_dir(c->kc, c->moddir), c->kpaths, !c->said, &said);
	kp_kmod_memo_opened(c->kmemo_counts);
	kp_kmod_memo_library(c->kmemo, kp_kmod_library(lib, sizeof(lib)));
	if (said)
		kp_kmod_memo_put(c->kmemo, 'O', "chain", 0, 1, (const char *const *)&said);
	c->said = true;
	free(said);
	if (!c->ctx) {
		kp_err_set(err, "%s: libkmod cannot open the indexes", c->moddir);
		return NULL;
	}
	kmod_set_log_priority(c->ctx, LOG_ERR);
	kmod_set_log_fn(c->ctx, kp_kmod_log_fn, NULL);
	return c->ctx;
}

int kp_chain_open(struct kp_chain *c, const char *root, const char *moddir,
		  const char *const *builtin, size_t nbuiltin, const char *const *blacklist,
		  size_t nblacklist, struct kp_kmod_copy *kc, struct kp_index_memo *memo,
		  struct kp_kmod_memo *kmemo, struct kp_err *err)
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
	/* An empty list (not NULL): never the host's own /etc/modprobe.d. */
	kp_in_note_kmod(moddir, paths); /* the root's files, whichever libkmod reads */
	memcpy(c->kpaths, kpaths, sizeof(c->kpaths));
	c->source = KP_CHAIN_LIBKMOD;
	/* answers replayed while what libkmod reads is the same: kmod_new() only on a miss */
	c->kmemo_counts = kmemo;
	if (kmemo && !c->kc->active && kp_kmod_memo_bind(kmemo, moddir, paths))
		c->kmemo = kmemo;
	/* what libkmod printed when opened, printed here as when it opens here */
	if (!replay_said(c) && !kp_chain_ctx(c, err)) {
		kp_chain_close(c);
		return -1;
	}
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

struct kp_chain_module *kp_chain_find(struct kp_chain *c, const char *name)
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
	m = kp_chain_find(c, norm);
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
		r = kp_chain_resolve_kmod(c, name, norm, &cap, err);
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
		struct kp_kmod_answer a;
		struct kmod_module *mod = NULL;
		const char *file;
		int r;

		if (kp_kmod_memo_get(c->kmemo, 'P', norm, &a) && a.code == 0 && a.n == 1) {
			if (a.s[0] && set_paths(c, &m, a.s[0], err) < 0)
				return -1;
		} else {
			if (!kp_chain_ctx(c, err))
				return -1;
			if (kmod_module_new_from_name(c->ctx, norm, &mod) < 0 || !mod)
				return kp_err_set(err, "out of memory");
			file = kmod_module_get_path(mod);
			kp_kmod_memo_put(c->kmemo, 'P', norm, 0, 1, &file);
			r = file ? set_paths(c, &m, file, err) : 0;
			kmod_module_unref(mod);
			if (r < 0)
				return -1;
		}
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
		struct kp_kmod_answer a;
		struct kmod_list *list = NULL;
		const char *owner = NULL;

		if (kp_chain_check_lookup(c, key, err) < 0)
			return -1;
		if (kp_kmod_memo_get(c->kmemo, 'S', key, &a) && a.n == 1 && a.code <= 0) {
			if (a.code < 0)
				return kp_err_set(err, "%s: libkmod cannot look up %s", c->moddir,
						  key);
			*name = a.s[0] ? kp_arena_strdup(&c->arena, a.s[0]) : NULL;
			if (a.s[0] && !*name)
				return kp_err_set(err, "out of memory");
			return 0;
		}
		if (!kp_chain_ctx(c, err))
			return -1;
		if (kmod_module_new_from_lookup(c->ctx, key, &list) < 0) {
			kp_kmod_memo_put(c->kmemo, 'S', key, -1, 1, &owner);
			return kp_err_set(err, "%s: libkmod cannot look up %s", c->moddir, key);
		}
		if (list) {
			struct kmod_module *mod = kmod_module_get_module(list);

			*name = kp_arena_strdup(&c->arena, kmod_module_get_name(mod));
			kmod_module_unref(mod);
			kmod_module_unref_list(list);
			if (!*name)
				return kp_err_set(err, "out of memory");
		}
		owner = *name;
		kp_kmod_memo_put(c->kmemo, 'S', key, 0, 1, &owner);
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
