// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A module name resolved by libkmod for the chain (modprobe-chain.c's kp_chain_resolve()):
 * kmod_module_new_from_lookup(), each module's dependencies and path asked where the chain
 * takes them, the answer recorded in the kmod memo (cache/kmod-memo.h) as strings
 * (encode_lookup()), and replayed from it (decode_lookup(), replay_kmod()) while everything
 * libkmod reads for it is the same. Whatever libkmod or the memo says, every dependency must
 * be a file inside the root (dep_in_root(); deps_from_index() where libkmod failed on one):
 * libkmod stat()s them by name on the host (see modprobe-chain.c).
 */
#include <errno.h>
#include <libkmod.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/kmod-memo.h"
#include "file/rootfs.h"
#include "modprobe-chain-internal.h"
#include "modprobe-chain.h"
#include "modprobe-kmod.h"
#include "util/module-name.h"
#include "util/util.h"

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
	char line[65536], said[1024], *colon, *ctx;
	size_t first = c->n;

	/* libkmod's line without its "ctx=0x... " (an address: another in every run) */
	snprintf(said, sizeof(said), "%s", why ? why : "libkmod failed");
	ctx = strstr(said, "ctx=0x");
	if (ctx) {
		size_t n = strcspn(ctx, " ");

		memmove(ctx, ctx + n + (ctx[n] == ' '), strlen(ctx + n + (ctx[n] == ' ')) + 1);
	}
	if (kp_chain_depbin_line(c, mname, line, sizeof(line)) != 1 || !(colon = strchr(line, ':')))
		return kp_err_set(err, "%s: dependencies of %s: %s", c->moddir, mname, said);
	if (kp_chain_add_deps(c, cap, mname, colon + 1, err) < 0)
		return -1;
	/* the one libkmod failed on, named: a file modules.dep lists that is not there */
	for (size_t i = first; i < c->n; i++)
		if (!file_in_root(c, &c->mods[i]))
			return kp_err_set(
				err,
				"%s: dependencies of %s: %s: no such module file inside the "
				"root (modules.dep names it; depmod again?)",
				c->moddir, mname, c->mods[i].path);
	return 0;
}

/* A dependency @dname of @mname that libkmod found: a file inside the root too. */
static int dep_in_root(struct kp_chain *c, const char *dname, const char *mname, struct kp_err *err)
{
	char norm[256];
	const struct kp_chain_module *m;

	kp_modname_copy(norm, sizeof(norm), dname, SIZE_MAX);
	m = kp_chain_find(c, norm);
	if (!m || file_in_root(c, m))
		return 0;
	return kp_err_set(err, "%s: dependencies of %s: %s: no such module file inside the root",
			  c->moddir, mname, m->path);
}

/*
 * One module of libkmod's answer to a lookup, as the chain took it: its name; its path and
 * its dependencies once asked (in the order resolve_kmod() asks, never more: libkmod's
 * answers are the same then).
 */
struct found {
	const char *name;
	bool have_path;
	const char *path;
	char deps; /* 0: not asked; 'd': @dep listed; 'f': libkmod failed saying @msg */
	const char *msg;
	size_t ndep;
	const char **dep;	 /* @ndep pairs: name, path */
	struct kmod_module *mod; /* asking libkmod; NULL on replay */
};

struct lookup {
	struct kp_chain *c;
	struct kp_kmod_log *log; /* asking libkmod */
	struct found *f;
	size_t n;
	struct kp_arena arena; /* what libkmod said, copied; or the replayed answer decoded */
};

#define MISS 1 /* the memo's answer ends before what is asked of it: ask libkmod */

static const char *lk_dup(struct lookup *lk, const char *s, bool *oom)
{
	const char *d = s ? kp_arena_strdup(&lk->arena, s) : NULL;

	*oom |= s && !d;
	return d;
}

/* The dependencies of @f, as libkmod lists them (or fails), asked when the chain needs them. */
static int deps_of(struct lookup *lk, struct found *f, struct kp_err *err)
{
	struct kmod_list *deps, *d;
	bool oom = false;
	size_t i = 0;

	if (f->deps)
		return 0;
	if (!f->mod)
		return MISS;
	lk->log->set = false;
	deps = kmod_module_get_dependencies(f->mod);
	if (!deps && lk->log->set) {
		f->deps = 'f';
		f->msg = lk_dup(lk, lk->log->msg, &oom);
		return oom ? kp_err_set(err, "out of memory") : 0;
	}
	f->deps = 'd';
	kmod_list_foreach(d, deps)
	{
		f->ndep++;
	}
	f->dep = kp_arena_alloc(&lk->arena, (2 * f->ndep + 1) * sizeof(*f->dep));
	oom = !f->dep;
	kmod_list_foreach(d, deps)
	{
		struct kmod_module *dm = kmod_module_get_module(d);

		if (!oom) {
			f->dep[i++] = lk_dup(lk, kmod_module_get_name(dm), &oom);
			f->dep[i++] = lk_dup(lk, kmod_module_get_path(dm), &oom);
			oom |= !f->dep[i - 2];
		}
		kmod_module_unref(dm);
	}
	kmod_module_unref_list(deps);
	return oom ? kp_err_set(err, "out of memory") : 0;
}

/* The path of @f, asked where the chain takes it (after its dependencies). */
static int path_of(struct lookup *lk, struct found *f, struct kp_err *err)
{
	bool oom = false;

	if (f->have_path)
		return 0;
	if (!f->mod)
		return MISS;
	f->path = lk_dup(lk, kmod_module_get_path(f->mod), &oom);
	f->have_path = true;
	return oom ? kp_err_set(err, "out of memory") : 0;
}

/*
 * The chain from libkmod's answer @lk to a lookup of @norm: 0, -1 with @err, or MISS (a
 * replayed answer that lacks what is asked now).
 */
static int take_lookup(struct lookup *lk, const char *norm, size_t *cap, struct kp_err *err)
{
	struct kp_chain *c = lk->c;
	int r = 0;

	for (size_t i = 0; i < lk->n && r == 0; i++) {
		struct found *f = &lk->f[i];
		bool alias = strcmp(f->name, norm) != 0;

		c->via_alias |= alias;
		if (alias && kp_chain_is_blacklisted(c, f->name)) {
			c->nblacklisted++;
			continue;
		}
		r = deps_of(lk, f, err);
		/*
		 * libkmod failed on a dependency's file (it stat()s them, by name on the host:
		 * not in the memo's key), or one it listed is no file inside the root now: on
		 * replay, libkmod is asked again, for its own answer and message
		 */
		if (r == 0 && f->deps == 'f' && !f->mod)
			return MISS;
		if (r == 0 && f->deps == 'f')
			r = deps_from_index(c, cap, f->name, f->msg, err);
		for (size_t j = 0; r == 0 && j < f->ndep; j++) {
			r = kp_chain_add(c, cap, f->dep[2 * j], f->dep[2 * j + 1], false, err);
			if (r == 0)
				r = dep_in_root(c, f->dep[2 * j], f->name, err);
			if (r < 0 && !f->mod)
				return MISS;
		}
		if (r == 0)
			r = path_of(lk, f, err);
		if (r == 0)
			r = kp_chain_add(c, cap, f->name, f->path, true, err);
	}
	return r;
}

/*
 * The memo's strings of a lookup's answer @lk (code 0): per module its name, path, "PD"
 * (P: 'p' the path asked, else '-'; D: the dependencies' 0 as '-', 'd' or 'f'), libkmod's
 * message, the number of dependencies, then each one's name and path. NULL when out of
 * memory.
 */
static const char **encode_lookup(struct lookup *lk, size_t *n)
{
	size_t k = 0, total = 0;
	const char **s;

	for (size_t i = 0; i < lk->n; i++)
		total += 5 + 2 * lk->f[i].ndep;
	s = kp_arena_alloc(&lk->arena, (total + 1) * sizeof(*s));
	if (!s)
		return NULL;
	for (size_t i = 0; i < lk->n; i++) {
		const struct found *f = &lk->f[i];
		char flags[3] = { f->have_path ? 'p' : '-', f->deps ? f->deps : '-', '\0' };
		char num[24];
		bool oom = false;

		snprintf(num, sizeof(num), "%zu", f->ndep);
		s[k++] = f->name;
		s[k++] = f->path;
		s[k++] = lk_dup(lk, flags, &oom);
		s[k++] = f->msg;
		s[k++] = lk_dup(lk, num, &oom);
		if (oom)
			return NULL;
		for (size_t j = 0; j < 2 * f->ndep; j++)
			s[k++] = f->dep[j];
	}
	*n = k;
	return s;
}

/* The memo's answer @a (code 0) into @lk: false when it is not one encode_lookup() wrote. */
static bool decode_lookup(struct lookup *lk, const struct kp_kmod_answer *a)
{
	size_t k = 0, n = 0;

	/* at most one module per five strings */
	lk->f = kp_arena_alloc(&lk->arena, (a->n / 5 + 1) * sizeof(*lk->f));
	if (!lk->f)
		return false;
	while (k < a->n) {
		struct found *f = &lk->f[n];
		const char *flags, *num;
		char *end;
		unsigned long nd;

		if (a->n - k < 5 || !a->s[k] || !(flags = a->s[k + 2]) || !(num = a->s[k + 4]))
			return false;
		if (strlen(flags) != 2 || !strchr("p-", flags[0]) || !strchr("-df", flags[1]))
			return false;
		errno = 0;
		nd = strtoul(num, &end, 10);
		if (errno || end == num || *end || num[0] == '-' || nd > (a->n - k - 5) / 2 ||
		    (flags[1] != 'd' && nd) || (flags[1] == 'f' && !a->s[k + 3]))
			return false;
		memset(f, 0, sizeof(*f));
		f->name = a->s[k];
		f->have_path = flags[0] == 'p';
		f->path = a->s[k + 1];
		f->deps = flags[1] == '-' ? 0 : flags[1];
		f->msg = a->s[k + 3];
		f->ndep = nd;
		f->dep = (const char **)a->s + k + 5;
		for (size_t j = 0; j < nd; j++)
			if (!f->dep[2 * j])
				return false;
		k += 5 + 2 * nd;
		n++;
	}
	lk->n = n;
	return true;
}

/* The error of a lookup libkmod refused (@code, its message @msg or NULL). */
static int lookup_failed(struct kp_chain *c, const char *name, int code, const char *msg,
			 struct kp_err *err)
{
	return kp_err_set(err, "%s: libkmod cannot look up '%s': %s", c->moddir, name,
			  msg ? msg : strerror(-code));
}

/* Empties the chain's list (a replay that fell short, before libkmod is asked). */
static void chain_reset(struct kp_chain *c, size_t *cap)
{
	free(c->mods);
	c->mods = NULL;
	c->n = 0;
	*cap = 0;
	c->via_alias = false;
	c->nblacklisted = 0;
}

/* @name resolved from the memo's answer: 0, -1 with @err, or MISS (nothing changed in @c). */
static int replay_kmod(struct kp_chain *c, const char *name, const char *norm, size_t *cap,
		       struct kp_err *err)
{
	struct lookup lk = { .c = c };
	struct kp_kmod_answer a;
	int r;

	if (!kp_kmod_memo_get(c->kmemo, 'R', name, &a))
		return MISS;
	if (a.code < 0)
		return lookup_failed(c, name, a.code, a.n ? a.s[0] : NULL, err);
	if (!decode_lookup(&lk, &a)) {
		kp_arena_release(&lk.arena);
		return MISS;
	}
	r = take_lookup(&lk, norm, cap, err);
	kp_arena_release(&lk.arena);
	if (r == MISS)
		chain_reset(c, cap);
	return r;
}

int kp_chain_resolve_kmod(struct kp_chain *c, const char *name, const char *norm, size_t *cap,
			  struct kp_err *err)
{
	struct kp_kmod_log log = { "", false };
	struct lookup lk = { .c = c, .log = &log };
	struct kmod_list *list = NULL, *l;
	struct kmod_ctx *ctx;
	bool oom = false;
	int r;

	if (kp_chain_check_lookup(c, name, err) < 0)
		return -1;
	r = replay_kmod(c, name, norm, cap, err);
	if (r != MISS)
		return r;
	ctx = kp_chain_ctx(c, err);
	if (!ctx)
		return -1;
	kmod_set_log_fn(ctx, kp_kmod_log_fn, &log);
	r = kmod_module_new_from_lookup(ctx, name, &list);
	if (r < 0) {
		const char *msg = log.set ? log.msg : NULL;

		kmod_set_log_fn(ctx, kp_kmod_log_fn, NULL);
		kp_kmod_memo_put(c->kmemo, 'R', name, r, 1, &msg);
		return lookup_failed(c, name, r, msg, err);
	}
	kmod_list_foreach(l, list)
	{
		lk.n++;
	}
	lk.f = kp_arena_alloc(&lk.arena, (lk.n + 1) * sizeof(*lk.f));
	oom = !lk.f;
	lk.n = 0;
	kmod_list_foreach(l, list)
	{
		struct kmod_module *mod = kmod_module_get_module(l);

		if (oom) {
			kmod_module_unref(mod);
			continue;
		}
		memset(&lk.f[lk.n], 0, sizeof(lk.f[lk.n]));
		lk.f[lk.n].mod = mod;
		lk.f[lk.n].name = lk_dup(&lk, kmod_module_get_name(mod), &oom);
		oom |= !lk.f[lk.n++].name;
	}
	kmod_module_unref_list(list);
	r = oom ? kp_err_set(err, "out of memory") : take_lookup(&lk, norm, cap, err);
	if (!oom) {
		size_t ns = 0;
		const char **s = encode_lookup(&lk, &ns);

		/* what libkmod was asked and said, whatever the chain made of it */
		if (s)
			kp_kmod_memo_put(c->kmemo, 'R', name, 0, ns, s);
	}
	for (size_t i = 0; i < lk.n; i++)
		kmod_module_unref(lk.f[i].mod);
	kmod_set_log_fn(ctx, kp_kmod_log_fn, NULL);
	kp_arena_release(&lk.arena);
	return r;
}
