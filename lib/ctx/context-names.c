// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Module operands named as modprobe users name them: see context-names.h. The lookup is
 * the modprobe hook's (kernel/modprobe-chain.c: libkmod over the tree's checked .bin
 * indexes, else the text modules.dep), so `check NAME` checks what `modprobe NAME` loads.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "context-names.h"
#include "file/inputs.h"
#include "system/modprobe-chain.h"

static void say(const struct kp_ctx *c, const char *path, const char *msg)
{
	if (c->env.log)
		c->env.log(c->env.log_data, path, msg);
}

/* The modules tree names are looked up in: -b ROOT's, --running's, the default kernel's. */
static const struct kp_tree *names_tree(const struct kp_ctx *c)
{
	if (c->o.running)
		return c->have_run && c->run.have_tree ? &c->run.tree : NULL;
	return c->have_tree ? &c->tree : NULL;
}

/* Whether @s is a name to look up: no file of that name exists, and it holds no '/'. */
static bool is_name(const char *s)
{
	struct stat st;

	if (!*s || strchr(s, '/') || strlen(s) > 255)
		return false;
	return kp_in_lstat(s, &st) < 0 && errno == ENOENT;
}

static int push(struct kp_ctx_operands *o, int *cap, char *path, bool owned)
{
	if (o->n == *cap) {
		int ncap = *cap ? 2 * *cap : 8;
		char **p = realloc(o->paths, (size_t)ncap * sizeof(*p));
		bool *w;

		if (!p)
			return -1;
		o->paths = p;
		w = realloc(o->owned, (size_t)ncap * sizeof(*w));
		if (!w)
			return -1;
		o->owned = w;
		*cap = ncap;
	}
	o->paths[o->n] = path;
	o->owned[o->n] = owned;
	o->n++;
	return 0;
}

static bool listed(const struct kp_ctx_operands *o, const char *path)
{
	for (int k = 0; k < o->n; k++)
		if (!strcmp(o->paths[k], path))
			return true;
	return false;
}

/* The files of what modprobe resolves @name to, pushed to @o; how many, or -1 (OOM). */
static int resolve_one(const struct kp_ctx *c, struct kp_chain *chain, const char *moddir,
		       const char *name, struct kp_ctx_operands *o, int *cap)
{
	struct kp_err why = { 0 };
	char msg[sizeof(why.msg) + 256];
	size_t nbuiltin = 0;
	int n = 0;

	if (kp_chain_resolve(chain, name, &why) < 0) {
		if (!strcmp(why.msg, "out of memory"))
			return -1;
		if (why.errnum == ENOENT)
			snprintf(msg, sizeof(msg),
				 "no such file, and no module of that name in %s (module name, "
				 "alias or modprobe.d alias, as modprobe resolves it)",
				 moddir);
		else
			snprintf(msg, sizeof(msg), "no such file, and modprobe's lookup failed: %s",
				 why.msg);
		say(c, name, msg);
		return 0;
	}
	for (size_t i = 0; i < chain->n; i++) {
		const struct kp_chain_module *m = &chain->mods[i];
		char *p;

		if (!m->target)
			continue;
		if (m->builtin || !m->path) {
			nbuiltin++;
			continue;
		}
		/* the same file asked twice (two names of one module) is read once */
		if (listed(o, m->path)) {
			n++;
			continue;
		}
		p = strdup(m->path);
		if (!p || push(o, cap, p, true) < 0) {
			free(p);
			return -1;
		}
		n++;
	}
	if (!n) {
		snprintf(
			msg, sizeof(msg),
			nbuiltin
				? "built into the kernel (modules.builtin): no module file to check"
				: "modprobe resolves it to no module file (every target "
				  "blacklisted)");
		say(c, name, msg);
	}
	return n;
}

int kp_ctx_resolve_names(struct kp_ctx *c, char **paths, int npaths, struct kp_ctx_operands *out,
			 struct kp_err *err)
{
	const struct kp_tree *t = names_tree(c);
	struct kp_chain chain = { 0 };
	bool opened = false;
	int cap = 0, ret = -1;

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < npaths; i++) {
		int r;

		if (!t || !t->moddir || !is_name(paths[i])) {
			if (push(out, &cap, paths[i], false) < 0)
				goto oom;
			continue;
		}
		if (!opened) {
			if (kp_chain_open(
				    &chain, t->root, t->moddir, (const char *const *)t->builtin,
				    t->nbuiltin, (const char *const *)t->modprobe_blacklist,
				    t->nmodprobe_blacklist, kp_ctx_kmod_copy(c), NULL, NULL, err) < 0)
				goto out;
			opened = true;
		}
		r = resolve_one(c, &chain, t->moddir, paths[i], out, &cap);
		if (r < 0)
			goto oom;
		out->unresolved += r == 0;
	}
	ret = 0;
	goto out;
oom:
	kp_err_set(err, "out of memory");
out:
	if (opened)
		kp_chain_close(&chain);
	if (ret < 0)
		kp_ctx_operands_release(out);
	return ret;
}

void kp_ctx_operands_release(struct kp_ctx_operands *o)
{
	for (int i = 0; i < o->n; i++)
		if (o->owned[i])
			free(o->paths[i]);
	free(o->paths);
	free(o->owned);
	memset(o, 0, sizeof(*o));
}
