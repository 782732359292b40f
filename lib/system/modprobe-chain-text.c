// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The modprobe chain without depmod's .bin indexes (modprobe-chain.c): modules.dep lines
 * "path: dep dep ..." read the way kmod_module_parse_depline() does (dependencies prepended:
 * the last one listed is loaded first), modules.alias patterns, and the aliases of built-in
 * drivers in modules.builtin.modinfo.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdint.h>
#include <string.h>

#include "file/bytes.h"
#include "modprobe-chain-internal.h"
#include "modprobe-chain.h"
#include "util/module-name.h"

/* The modules.dep line of module @norm, cut out of the text (NUL at ':'); NULL if none. */
char *kp_chain_dep_line(struct kp_chain *c, const char *norm, char **deps_out, size_t *deps_len)
{
	char *pos = c->dep_text, *end = c->dep_text + c->dep_len;

	while (pos < end) {
		char *nl = memchr(pos, '\n', (size_t)(end - pos));
		char *lend = nl ? nl : end;
		char *colon = memchr(pos, ':', (size_t)(lend - pos));

		if (colon && colon > pos) {
			char name[256], key[512];
			size_t kl = (size_t)(colon - pos);

			if (kl < sizeof(key)) {
				memcpy(key, pos, kl);
				key[kl] = '\0';
				kp_modname_from_path(name, sizeof(name), key, KP_MODNAME_KO);
				if (!strcmp(name, norm)) {
					*deps_out = colon + 1;
					*deps_len = (size_t)(lend - colon - 1);
					return pos;
				}
			}
		}
		pos = nl ? nl + 1 : end;
	}
	return NULL;
}

static int text_add_with_deps(struct kp_chain *c, const char *norm, size_t *cap, bool target,
			      struct kp_err *err)
{
	char *deps, *line, key[512], list[65536];
	size_t dl;

	line = kp_chain_dep_line(c, norm, &deps, &dl);
	if (!line)
		return kp_err_set(err, "%s/modules.dep: no line for %s", c->moddir, norm);
	if ((size_t)(deps - 1 - line) >= sizeof(key) || dl >= sizeof(list))
		return kp_err_set(err, "%s/modules.dep: the line of %s is too long", c->moddir,
				  norm);
	memcpy(key, line, (size_t)(deps - 1 - line));
	key[deps - 1 - line] = '\0';
	memcpy(list, deps, dl);
	list[dl] = '\0';
	if (kp_chain_add_deps(c, cap, norm, list, err) < 0)
		return -1;
	return kp_chain_add(c, cap, norm, key, target, err);
}

/* The text index @name of @c's release directory read whole into @b: 1; absent: 0; else -1. */
int kp_chain_read_index(struct kp_chain *c, const char *name, struct kp_bytes *b,
			struct kp_err *err)
{
	if (kp_chain_read_text_index(&c->rootdir, c->moddir, name, b, err) == 0)
		return 1;
	return kp_err_errnum(err) == ENOENT ? 0 : -1;
}

/* modules.alias lines "alias PATTERN MODULE": every module whose pattern matches @name. */
static int text_aliases(struct kp_chain *c, const char *name, size_t *cap, bool *found,
			struct kp_err *err)
{
	struct kp_bytes b;
	const char *pos, *end;
	int r = kp_chain_read_index(c, "modules.alias", &b, err);

	*found = false;
	if (r <= 0)
		return r;
	pos = (const char *)b.data;
	end = pos + b.len;
	r = 0;
	while (pos < end && r == 0) {
		const char *nl = memchr(pos, '\n', (size_t)(end - pos));
		size_t n = nl ? (size_t)(nl - pos) : (size_t)(end - pos);
		char line[1024], *save = NULL, *kw, *pat, *mod;

		if (n < sizeof(line)) {
			memcpy(line, pos, n);
			line[n] = '\0';
			kw = strtok_r(line, " \t", &save);
			pat = kw ? strtok_r(NULL, " \t", &save) : NULL;
			mod = pat ? strtok_r(NULL, " \t\r", &save) : NULL;
			if (mod && !strcmp(kw, "alias") && !fnmatch(pat, name, 0)) {
				char norm[256];

				kp_modname_copy(norm, sizeof(norm), mod, SIZE_MAX);
				*found = true;
				c->via_alias = true;
				if (kp_chain_is_blacklisted(c, norm))
					c->nblacklisted++;
				else
					r = text_add_with_deps(c, norm, cap, true, err);
			}
		}
		pos = nl ? nl + 1 : end;
	}
	kp_bytes_release(&b);
	return r;
}

/*
 * The aliases of built-in drivers: "MODULE.alias=PATTERN" records of modules.builtin.modinfo
 * (NUL-separated; from 6.18 modpost writes the device-table aliases of built-in code there and
 * depmod indexes them in modules.builtin.alias.bin, which libkmod's lookup reads last). The
 * first built-in whose pattern matches @name is the target: modprobe has nothing to load.
 */
static int text_builtin_aliases(struct kp_chain *c, const char *name, size_t *cap, bool *found,
				struct kp_err *err)
{
	struct kp_bytes b;
	const char *pos, *end;
	int r = kp_chain_read_index(c, "modules.builtin.modinfo", &b, err);

	*found = false;
	if (r <= 0)
		return r;
	pos = (const char *)b.data;
	end = pos + b.len;
	r = 0;
	while (pos < end && !*found) {
		const char *nul = memchr(pos, '\0', (size_t)(end - pos));
		size_t n = nul ? (size_t)(nul - pos) : (size_t)(end - pos);
		const char *dot = memchr(pos, '.', n);
		char rec[1024];

		if (dot && n < sizeof(rec) && (size_t)(pos + n - dot) > 7 &&
		    !memcmp(dot, ".alias=", 7)) {
			char mod[256];

			memcpy(rec, pos, n);
			rec[n] = '\0';
			rec[dot - pos] = '\0';
			kp_modname_copy(mod, sizeof(mod), rec, SIZE_MAX);
			if (kp_chain_is_builtin(c, mod) &&
			    !fnmatch(rec + (dot - pos) + 7, name, 0)) {
				*found = true;
				c->via_alias = true;
				r = kp_chain_add(c, cap, mod, NULL, true, err);
			}
		}
		pos += n + 1;
	}
	kp_bytes_release(&b);
	return r;
}

int kp_chain_resolve_text(struct kp_chain *c, const char *name, const char *norm, size_t *cap,
			  struct kp_err *err)
{
	char *deps;
	size_t dl;
	bool found;

	if (kp_chain_dep_line(c, norm, &deps, &dl))
		return text_add_with_deps(c, norm, cap, true, err);
	if (text_aliases(c, name, cap, &found, err) < 0)
		return -1;
	if (!found && kp_chain_is_builtin(c, norm))
		return kp_chain_add(c, cap, norm, NULL, true, err);
	if (!found && text_builtin_aliases(c, name, cap, &found, err) < 0)
		return -1;
	return 0;
}
