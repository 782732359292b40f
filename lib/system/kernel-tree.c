// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A kernel tree under a root: its modules directories (lib/modules, usr/lib/modules) and
 * release directories, the release chosen, and the tree opened: the kernel-side files found
 * (kernel-tree-files.c), modules.builtin read (kernel-tree-builtin.c) and the modprobe.d
 * blacklist read with libkmod (loaded then, dl/lazy-lib.h: one that cannot be is an error).
 */
#include <dirent.h>
#include <errno.h>
#include <libkmod.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cache/kmod-memo.h"
#include "dl/lazy-lib.h"
#include "file/inputs.h"
#include "modprobe-kmod.h"
#include "modprobe-index.h"
#include "modprobe-snapshot.h"
#include "kernel-tree.h"
#include "kernel-tree-internal.h"
#include "file/rootfs.h"

static bool same_dir(const char *a, const char *b)
{
	struct stat sa, sb;

	return kp_in_stat(a, &sa) == 0 && kp_in_stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/*
 * The directory of @release in the modules directory @base of @root, resolved inside the
 * root (a release directory that is a symlink, to "/lib/modules/..." say, is followed there,
 * not on the host); kept as written when that is the same directory. NULL when it is no
 * directory there (errno ENOMEM when out of memory).
 */
static char *release_dir(const char *root, const char *base, const char *release)
{
	char *dir, *real;

	if (asprintf(&dir, "%s/%s", base, release) < 0) {
		errno = ENOMEM;
		return NULL;
	}
	real = kp_root_resolve_path(root, dir);
	if (!real || !kp_is_dir(real)) {
		bool oom = !real && errno == ENOMEM;

		free(dir);
		free(real);
		errno = oom ? ENOMEM : ENOENT;
		return NULL;
	}
	if (same_dir(dir, real)) {
		free(real);
		return dir;
	}
	free(dir);
	return real;
}

/* Release directories under @base (of @root), sorted; *@n of them. */
static char **list_releases(const char *root, const char *base, size_t *n)
{
	char **names = NULL;
	size_t cap = 0;
	struct dirent *de;
	DIR *d = kp_opendir_root(root, base); /* inside @root, by descriptors */

	*n = 0;
	if (!d)
		return NULL;
	while ((de = readdir(d))) {
		char *full;
		bool dir;

		if (de->d_name[0] == '.')
			continue;
		full = release_dir(root, base, de->d_name);
		if (!full && errno == ENOMEM)
			break;
		dir = full != NULL;
		free(full);
		if (!dir)
			continue;
		if (kp_grow(&names, &cap, *n + 1, sizeof(*names)) < 0)
			break;
		names[*n] = strdup(de->d_name);
		if (!names[*n])
			break;
		(*n)++;
	}
	closedir(d);
	if (*n > 1)
		kp_sort_names(names, *n);
	return names;
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/*
 * The modules directories of a root: lib/modules and usr/lib/modules (usrmerge,
 * or sid's linux-base files on a root without it), resolved inside the root;
 * one entry when both are the same directory.
 */
struct mod_bases {
	char *path[2];
	size_t n;
};

static void bases_release(struct mod_bases *mb)
{
	for (size_t i = 0; i < mb->n; i++)
		free(mb->path[i]);
	mb->n = 0;
}

/* @root's modules directories into @mb, none when it has neither: 0, or -1 when out of memory. */
static int collect_bases(const char *root, struct mod_bases *mb, struct kp_err *err)
{
	static const char *const rel[] = { "lib/modules", "usr/lib/modules" };

	mb->n = 0;
	for (size_t i = 0; i < KP_ARRAY_SIZE(rel); i++) {
		char *plain = kp_root_path(root, rel[i]);
		char *real = kp_root_resolve(root, rel[i]);

		if (plain && !real && errno == ELOOP) {
			free(plain);
			continue;
		}
		if (!plain || !real) {
			free(plain);
			free(real);
			bases_release(mb);
			return kp_err_set(err, "out of memory");
		}
		/* keep the path as written when it is the same directory (ROOT/lib -> usr/lib) */
		if (same_dir(plain, real)) {
			free(real);
			real = plain;
		} else {
			free(plain);
		}
		if (!kp_is_dir(real) || (mb->n && same_dir(mb->path[0], real))) {
			free(real);
			continue;
		}
		mb->path[mb->n++] = real;
	}
	return 0;
}

static int find_bases(const char *root, struct mod_bases *mb, struct kp_err *err)
{
	if (collect_bases(root, mb, err) < 0)
		return -1;
	if (!mb->n)
		return kp_err_errno(
			err, ENOENT,
			"%s: no lib/modules or usr/lib/modules (is it the root of a system?)",
			root);
	return 0;
}

/* The release directories of every base, sorted, duplicates dropped. */
static char **list_all_releases(const char *root, const struct mod_bases *mb, size_t *n)
{
	char **all = NULL;
	size_t cap = 0;

	*n = 0;
	for (size_t i = 0; i < mb->n; i++) {
		size_t k;
		char **names = list_releases(root, mb->path[i], &k);

		for (size_t j = 0; j < k; j++) {
			if (kp_sorted_contains((const char *const *)all, *n, names[j]) ||
			    kp_grow(&all, &cap, *n + 1, sizeof(*all)) < 0) {
				free(names[j]);
				continue;
			}
			all[(*n)++] = names[j];
			kp_sort_names(all, *n);
		}
		free(names);
	}
	return all;
}

int kp_tree_list_releases(const char *root, char ***names, size_t *n, struct kp_err *err)
{
	struct mod_bases mb = { .n = 0 };

	*names = NULL;
	*n = 0;
	if (collect_bases(root && *root ? root : "/", &mb, err) < 0)
		return -1;
	if (mb.n)
		*names = list_all_releases(root && *root ? root : "/", &mb, n);
	bases_release(&mb);
	return 0;
}

void kp_tree_releases_free(char **names, size_t n)
{
	free_list(names, n);
}

static int pick_release(struct kp_tree *t, const struct mod_bases *mb, struct kp_err *err)
{
	char buf[sizeof(err->msg)];
	size_t n, used = 0;
	char **names = list_all_releases(t->root, mb, &n);

	if (n == 1) {
		t->release = names[0];
		free(names);
		return 0;
	}
	for (size_t i = 0; i < n && used < sizeof(buf); i++)
		used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%s", i ? ", " : "",
					 names[i]);
	free_list(names, n);
	if (n == 0)
		return kp_err_errno(err, ENOENT, "%s: no kernel release directory", mb->path[0]);
	return kp_err_set(err, "%s: %zu kernel releases, choose one: %s", mb->path[0], n, buf);
}

static void quiet_log(void *data, int priority, const char *file, int line, const char *fn,
		      const char *format, va_list args)
{
}

/* @n blacklist names (@names) kept in @t (*@cap: its room). 0, or -1 with @err. */
static int add_blacklist(struct kp_tree *t, size_t *cap, const char *const *names, size_t n,
			 struct kp_err *err)
{
	for (size_t i = 0; i < n; i++) {
		char *name = kp_arena_strdup(&t->arena, names[i]);

		if (!name || kp_grow(&t->modprobe_blacklist, cap, t->nmodprobe_blacklist + 1,
				     sizeof(*t->modprobe_blacklist)) < 0)
			return kp_err_set(err, "out of memory");
		t->modprobe_blacklist[t->nmodprobe_blacklist++] = name;
	}
	return 0;
}

static bool has_null(const char *const *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!s[i])
			return true;
	return false;
}

/*
 * libkmod's blacklist (kmod_config_get_blacklists(): the modprobe.d "blacklist" lines and the
 * command line's modprobe.blacklist=) of kmod_new(@kmoddir, @kpaths) into @t, and into
 * @kmemo (NULL: none); the kmod_new() counted in @counts (NULL: not). 0, or -1 with @err.
 */
static int kmod_blacklist(struct kp_tree *t, const char *kmoddir, const char *const *kpaths,
			  struct kp_kmod_memo *kmemo, struct kp_kmod_memo *counts,
			  struct kp_err *err)
{
	struct kmod_config_iter *it;
	struct kmod_ctx *ctx;
	size_t first = t->nmodprobe_blacklist, cap = 0;
	char *said = NULL, lib[PATH_MAX];
	int r = 0;

	/* libkmod loaded on first use (dl/lazy-lib.h): a broken install is an error here */
	if (kp_lazy_require(kp_lazy_libkmod(), err) < 0)
		return -1;
	ctx = kp_kmod_new_said(kmoddir, kpaths, true, &said);
	kp_kmod_memo_opened(counts);
	kp_kmod_memo_library(kmemo, kp_kmod_library(lib, sizeof(lib)));
	/* what it printed, for a replay to print: without it, no replay */
	if (said)
		kp_kmod_memo_put(kmemo, 'O', "tree", 0, 1, (const char *const *)&said);
	free(said);
	if (!ctx)
		return kp_err_set(err, "%s: libkmod cannot read the modprobe configuration",
				  t->moddir);
	kmod_set_log_fn(ctx, quiet_log, NULL);
	it = kmod_config_get_blacklists(ctx);
	while (it && kmod_config_iter_next(it) && r == 0) {
		const char *name = kmod_config_iter_get_key(it);

		r = add_blacklist(t, &cap, &name, 1, err);
	}
	if (it)
		kmod_config_iter_free_iter(it);
	kmod_unref(ctx);
	if (r == 0)
		kp_kmod_memo_put(kmemo, 'B', "", 0, t->nmodprobe_blacklist - first,
				 (const char *const *)t->modprobe_blacklist + first);
	return r;
}

/*
 * modprobe.d "blacklist" lines, in the directories kmod reads, under the root; a private
 * copy for libkmod made in @shared when it has none (NULL: one of its own, removed here).
 * With @kmemo (not NULL), libkmod's answer is taken from it, or recorded there, unless
 * libkmod reads a private copy (made anew by every run: never memoized).
 */
static int read_modprobe_config(struct kp_tree *t, struct kp_kmod_copy *shared,
				struct kp_kmod_memo *kmemo, struct kp_err *err)
{
	const char *paths[KP_KMOD_CONF_DIRS + 1] = { NULL };
	char *owned[KP_KMOD_CONF_DIRS] = { NULL };
	struct kp_kmod_copy own = { .active = false };
	struct kp_kmod_copy *kc = &own;
	struct kp_kmod_memo *counts;
	struct kp_kmod_answer a, said;
	size_t n = 0, cap = 0;
	int r = 0;

	for (size_t i = 0; i < KP_KMOD_CONF_DIRS; i++) {
		/* inside the root: ROOT/etc -> /etc is the root's etc, not the host's */
		owned[i] = kp_root_resolve_dir(t->root, kp_kmod_conf_dirs[i]);
		if (!owned[i] && errno == ELOOP)
			continue;
		if (!owned[i]) {
			r = kp_err_set(err, "out of memory");
			goto out;
		}
		if (kp_is_dir(owned[i]))
			paths[n++] = owned[i];
	}
	/* the run's copy, unless it holds another release directory's */
	kc = shared && (!shared->active || kp_kmod_copy_of(shared, t->moddir)) ? shared : &own;
	if (!n)
		goto out;
	/* A FIFO among them would block libkmod's reader forever: refused first. */
	r = kp_modprobe_config_check(t->root, paths, err);
	if (r < 0)
		goto out;
	/* libkmod reads by name: under a root others could swap a file in, a private copy */
	if (!kc->active && !kp_root_is_host(t->root) && !kp_kmod_trusted(t->moddir, paths)) {
		r = kp_kmod_copy_open(kc, &t->rootdir, t->moddir, paths, err);
		if (r < 0)
			goto out;
	}
	kp_in_note_kmod(t->moddir, paths);
	counts = kmemo;
	if (kc->active || !kp_kmod_memo_bind(kmemo, t->moddir, paths))
		kmemo = NULL;
	if (kp_kmod_memo_get(kmemo, 'O', "tree", &said) && said.code == 0 && said.n == 1 &&
	    said.s[0] && kp_kmod_memo_get(kmemo, 'B', "", &a) && a.code == 0 &&
	    !has_null(a.s, a.n)) {
		fputs(said.s[0], stderr); /* what libkmod printed when it parsed them */
		r = add_blacklist(t, &cap, a.s, a.n, err);
	} else
		r = kmod_blacklist(t, kp_kmod_dir(kc, t->moddir), kp_kmod_paths(kc, paths), kmemo,
				   counts, err);
out:
	kp_kmod_copy_remove(&own); /* @shared is its owner's */
	for (size_t i = 0; i < KP_KMOD_CONF_DIRS; i++)
		free(owned[i]);
	return r;
}

int kp_tree_open(struct kp_tree *t, const char *root, const char *release, struct kp_kmod_copy *kc,
		 struct kp_err *err)
{
	return kp_tree_open_memo(t, root, release, kc, NULL, err);
}

int kp_tree_open_memo(struct kp_tree *t, const char *root, const char *release,
		      struct kp_kmod_copy *kc, struct kp_kmod_memo *kmemo, struct kp_err *err)
{
	struct mod_bases mb = { .n = 0 };

	memset(t, 0, sizeof(*t));
	t->rootdir.fd = -1;
	t->root = strdup(root && *root ? root : "/");
	if (!t->root)
		return kp_err_set(err, "out of memory");
	/* opened once: each file of the tree is opened under this directory */
	kp_root_dir_pin(&t->rootdir, t->root);
	if (find_bases(t->root, &mb, err) < 0)
		goto fail;
	if (release && (!*release || strchr(release, '/') || !strcmp(release, "..") ||
			!strcmp(release, "."))) {
		kp_err_set(err, "invalid kernel release '%s'", release);
		goto fail;
	}
	if (release) {
		t->release = strdup(release);
		if (!t->release) {
			kp_err_set(err, "out of memory");
			goto fail;
		}
	} else if (pick_release(t, &mb, err) < 0) {
		goto fail;
	}
	/* the first base that has this release: lib/modules, else usr/lib/modules */
	for (size_t i = 0; i < mb.n && !t->moddir; i++) {
		t->moddir = release_dir(t->root, mb.path[i], t->release);
		if (!t->moddir && errno == ENOMEM) {
			kp_err_set(err, "out of memory");
			goto fail;
		}
	}
	if (!t->moddir) {
		size_t n;
		char **names = list_all_releases(t->root, &mb, &n);
		char list[256] = "";

		for (size_t i = 0, used = 0; i < n && used < sizeof(list); i++)
			used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
						 i ? ", " : "", names[i]);
		free_list(names, n);
		kp_err_errno(err, ENOENT, "%s/%s: no such directory (releases there: %s)",
			     mb.path[0], t->release, n ? list : "none");
		goto fail;
	}
	bases_release(&mb);
	kp_tree_find_files(t);
	if (kp_tree_read_builtin(t, err) < 0 || read_modprobe_config(t, kc, kmemo, err) < 0)
		goto fail;
	return 0;
fail:
	bases_release(&mb);
	kp_tree_release(t);
	return -1;
}

char *kp_tree_release_dir(const char *root, const char *release, struct kp_err *err)
{
	struct mod_bases mb = { .n = 0 };
	char *dir = NULL;

	if (collect_bases(root && *root ? root : "/", &mb, err) < 0)
		return NULL;
	for (size_t i = 0; i < mb.n && !dir; i++) {
		dir = release_dir(root && *root ? root : "/", mb.path[i], release);
		if (!dir && errno == ENOMEM) {
			bases_release(&mb);
			kp_err_set(err, "out of memory");
			return NULL;
		}
	}
	bases_release(&mb);
	if (!dir)
		kp_err_errno(err, ENOENT, "%s: no release directory", release);
	return dir;
}

void kp_tree_release(struct kp_tree *t)
{
	kp_root_dir_unpin(&t->rootdir);
	free(t->root);
	free(t->release);
	free(t->moddir);
	free(t->symvers_path);
	free(t->config_path);
	free(t->system_map_path);
	free(t->system_map_stub);
	free(t->vmlinux_path);
	free(t->builtin);
	free(t->builtin_paths);
	free(t->modprobe_blacklist);
	kp_arena_release(&t->arena);
	memset(t, 0, sizeof(*t));
}
