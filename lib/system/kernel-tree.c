// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A kernel tree under a root. What depmod reads is read the same way here:
 * modules.builtin (one "kernel/<path>.ko" per line, written by
 * modules_install) and modules.builtin.modinfo ("name.key=value\0" records).
 * libkmod reads the modprobe.d configuration; its public API offers no way to
 * list built-in modules, and its lookups need the .bin indexes that depmod
 * writes at install time (missing in unpacked packages), so the text files
 * are parsed here.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libkmod.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/kernel-base.h"
#include "file/inputs.h"
#include "modprobe-index.h"
#include "kernel-tree.h"
#include "file/rootfs.h"
#include "util/module-name.h"

#define BUILTIN_MAX_SIZE ((size_t)64 << 20)

/* Release directories under @base, sorted; *@n of them. */
static char **list_releases(const char *base, size_t *n)
{
	char **names = NULL;
	size_t cap = 0;
	struct dirent *de;
	DIR *d = kp_in_opendir(base);

	*n = 0;
	if (!d)
		return NULL;
	while ((de = readdir(d))) {
		char *full;
		bool dir;

		if (de->d_name[0] == '.')
			continue;
		if (asprintf(&full, "%s/%s", base, de->d_name) < 0)
			break;
		dir = kp_is_dir(full);
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

static bool same_dir(const char *a, const char *b)
{
	struct stat sa, sb;

	return kp_in_stat(a, &sa) == 0 && kp_in_stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
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
		return kp_err_set(
			err, "%s: no lib/modules or usr/lib/modules (is it the root of a system?)",
			root);
	return 0;
}

/* The release directories of every base, sorted, duplicates dropped. */
static char **list_all_releases(const struct mod_bases *mb, size_t *n)
{
	char **all = NULL;
	size_t cap = 0;

	*n = 0;
	for (size_t i = 0; i < mb->n; i++) {
		size_t k;
		char **names = list_releases(mb->path[i], &k);

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
		*names = list_all_releases(&mb, n);
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
	char **names = list_all_releases(mb, &n);

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
		return kp_err_set(err, "%s: no kernel release directory", mb->path[0]);
	return kp_err_set(err, "%s: %zu kernel releases, choose one: %s", mb->path[0], n, buf);
}

/* @tmpl with every "%s" replaced by @release (malloc'ed). */
static char *expand(const char *tmpl, const char *release)
{
	size_t rl = strlen(release), n = strlen(tmpl) + 1;
	char *out, *o;

	for (const char *p = strstr(tmpl, "%s"); p; p = strstr(p + 2, "%s"))
		n += rl;
	out = o = malloc(n);
	if (!out)
		return NULL;
	while (*tmpl) {
		if (tmpl[0] == '%' && tmpl[1] == 's') {
			memcpy(o, release, rl);
			o += rl;
			tmpl += 2;
		} else {
			*o++ = *tmpl++;
		}
	}
	*o = '\0';
	return out;
}

/* ROOT/@tmpl (with %s = release, symlinks resolved inside ROOT) if it is a regular file. */
static char *candidate(const struct kp_tree *t, const char *tmpl)
{
	char *rel, *path;

	rel = expand(tmpl, t->release);
	if (!rel)
		return NULL;
	path = kp_root_resolve(t->root, rel);
	free(rel);
	if (path && !kp_is_file(path)) {
		free(path);
		return NULL;
	}
	return path;
}

/*
 * @name inside the tree's "build" directory: <modules dir>/build (Debian's link
 * to usr/src/linux-headers-<release>, absolute up to bullseye, relative since),
 * under lib/modules and then usr/lib/modules, resolved inside the root.
 */
static char *in_build(const struct kp_tree *t, const char *name)
{
	static const char *const bases[] = { "lib/modules/%s/build/", "usr/lib/modules/%s/build/" };
	char *path = NULL;

	for (size_t i = 0; i < KP_ARRAY_SIZE(bases) && !path; i++) {
		char *tmpl;

		if (asprintf(&tmpl, "%s%s", bases[i], name) < 0)
			return NULL;
		path = candidate(t, tmpl);
		free(tmpl);
	}
	return path;
}

static char *first_of(const struct kp_tree *t, const char *const *fmts, size_t n,
		      const char *build_name)
{
	char *p = build_name ? in_build(t, build_name) : NULL;

	for (size_t i = 0; i < n && !p; i++)
		p = candidate(t, fmts[i]);
	return p;
}

/* A vmlinux worth reading: ELF (or compressed) with a __ksymtab section. */
static bool usable_vmlinux(const char *path)
{
	unsigned char head[SELFMAG];
	bool ok = false;
	Elf *elf;
	struct stat st;
	int fd = kp_open_regular(path, &st, NULL); /* a FIFO named vmlinux must not block */
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (fd < 0)
		return false;
	if (read(fd, head, sizeof(head)) != (ssize_t)sizeof(head)) {
		close(fd);
		return false;
	}
	if (memcmp(head, ELFMAG, SELFMAG)) {
		close(fd);
		return kp_detect_compression(head, sizeof(head)) != KP_COMP_NONE;
	}
	if (elf_version(EV_CURRENT) == EV_NONE) {
		close(fd);
		return false;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL); /* not mapped: no SIGBUS if it shrinks */
	if (elf && elf_getshdrstrndx(elf, &shstrndx) == 0) {
		while (!ok && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			const char *name;

			if (!gelf_getshdr(scn, &sh))
				break;
			name = elf_strptr(elf, shstrndx, sh.sh_name);
			ok = name && !strcmp(name, "__ksymtab") && sh.sh_type != SHT_NOBITS;
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return ok;
}

static void find_files(struct kp_tree *t)
{
	static const char *const symvers[] = {
		"usr/src/linux-headers-%s/Module.symvers",
		"boot/symvers-%s.gz",
		"boot/symvers-%s.xz",
		"boot/symvers-%s.zst",
		"boot/symvers-%s",
		"lib/modules/%s/symvers.gz",
		"lib/modules/%s/symvers.xz",
		"lib/modules/%s/symvers.zst",
		"usr/lib/modules/%s/symvers.gz",
		"usr/lib/modules/%s/symvers.xz",
		"usr/lib/modules/%s/symvers.zst",
	};
	static const char *const config[] = {
		"boot/config-%s",
		"lib/modules/%s/config",
		"usr/lib/modules/%s/config",
		"usr/src/linux-headers-%s/.config",
	};
	static const char *const maps[] = {
		"usr/lib/debug/boot/System.map-%s",
		"usr/lib/debug/lib/modules/%s/System.map", /* sid's -dbg (7.x) */
		"boot/System.map-%s",
		"lib/modules/%s/System.map",
		"usr/lib/modules/%s/System.map",
	};
	static const char *const vmlinux[] = {
		"usr/lib/debug/boot/vmlinux-%s",
		"usr/lib/debug/lib/modules/%s/vmlinux",
		"boot/vmlinux-%s",
		"boot/vmlinux-%s.xz",
		"boot/vmlinux-%s.gz",
		"boot/vmlinux-%s.zst",
		"lib/modules/%s/vmlinux",
		"usr/lib/modules/%s/vmlinux",
	};

	t->symvers_path = first_of(t, symvers, KP_ARRAY_SIZE(symvers), "Module.symvers");
	t->config_path = first_of(t, config, KP_ARRAY_SIZE(config), NULL);
	if (!t->config_path)
		t->config_path = in_build(t, ".config");
	for (size_t i = 0; i < KP_ARRAY_SIZE(maps) && !t->system_map_path; i++) {
		char *p = candidate(t, maps[i]);

		/* Debian's stub ("The real System.map is in the ...-dbg package") has no symbol */
		if (p && !kp_system_map_has_symbols(p)) {
			if (!t->system_map_stub)
				t->system_map_stub = p;
			else
				free(p);
			p = NULL;
		}
		t->system_map_path = p;
	}
	for (size_t i = 0; i <= KP_ARRAY_SIZE(vmlinux) && !t->vmlinux_path; i++) {
		char *p = i < KP_ARRAY_SIZE(vmlinux) ? candidate(t, vmlinux[i])
						     : in_build(t, "vmlinux");

		if (p && !usable_vmlinux(p)) {
			free(p);
			p = NULL;
		}
		t->vmlinux_path = p;
	}
}

char *kp_tree_btf_vmlinux(const struct kp_tree *t)
{
	char *p = in_build(t, "vmlinux");

	return p ? p : t->vmlinux_path ? strdup(t->vmlinux_path) : NULL;
}

static int read_builtin(struct kp_tree *t, struct kp_err *err)
{
	struct kp_bytes b;
	char *path, name[256];
	const char *pos, *end;
	size_t cap = 0, lineno = 0;
	int r;

	if (asprintf(&path, "%s/modules.builtin", t->moddir) < 0)
		return kp_err_set(err, "out of memory");
	r = kp_read_file(path, BUILTIN_MAX_SIZE, &b, err);
	if (r < 0 && kp_err_errnum(err) == ENOENT) {
		free(path);
		return 0;
	}
	if (r < 0) {
		free(path);
		return -1;
	}
	t->have_builtin_list = true;
	pos = (const char *)b.data;
	end = pos + b.len;
	r = 0;
	while (pos < end && r == 0) {
		const char *nl = memchr(pos, '\n', (size_t)(end - pos));
		size_t l = nl ? (size_t)(nl - pos) : (size_t)(end - pos);

		lineno++;
		if (l) {
			char *p;

			if (l < 4 || !memmem(pos, l, ".ko", 3) || memchr(pos, ' ', l) ||
			    memchr(pos, '\0', l)) {
				r = kp_err_set(err, "%s:%zu: expected a module path ending in .ko",
					       path, lineno);
				break;
			}
			if (kp_grow(&t->builtin_paths, &cap, t->nbuiltin + 1,
				    sizeof(*t->builtin_paths)) < 0 ||
			    !(p = kp_arena_strndup(&t->arena, pos, l))) {
				r = kp_err_set(err, "out of memory");
				break;
			}
			t->builtin_paths[t->nbuiltin++] = p;
		}
		pos = nl ? nl + 1 : end;
	}
	kp_bytes_release(&b);
	free(path);
	if (r < 0 || !t->nbuiltin)
		return r;
	/* Sort the paths by module name so both arrays share one order. */
	t->builtin = kp_calloc(t->nbuiltin, sizeof(*t->builtin));
	if (!t->builtin)
		return kp_err_set(err, "out of memory");
	for (size_t i = 0; i < t->nbuiltin; i++) {
		size_t nl;

		kp_modname_from_path(name, sizeof(name), t->builtin_paths[i], KP_MODNAME_KO);
		nl = strlen(name);
		/* name, NUL, path: the path rides along through the sort */
		t->builtin[i] = kp_arena_alloc(&t->arena, nl + 1 + strlen(t->builtin_paths[i]) + 1);
		if (!t->builtin[i])
			return kp_err_set(err, "out of memory");
		memcpy(t->builtin[i], name, nl + 1);
		strcpy(t->builtin[i] + nl + 1, t->builtin_paths[i]);
	}
	kp_sort_names(t->builtin, t->nbuiltin);
	for (size_t i = 0; i < t->nbuiltin; i++)
		t->builtin_paths[i] = t->builtin[i] + strlen(t->builtin[i]) + 1;
	return 0;
}

static int read_builtin_modinfo(struct kp_tree *t, struct kp_err *err)
{
	struct kp_bytes b;
	char *path;
	size_t cap = 0, off = 0;
	int r;

	if (asprintf(&path, "%s/modules.builtin.modinfo", t->moddir) < 0)
		return kp_err_set(err, "out of memory");
	r = kp_read_file(path, BUILTIN_MAX_SIZE, &b, err);
	if (r < 0 && kp_err_errnum(err) == ENOENT) {
		free(path);
		return 0;
	}
	if (r < 0) {
		free(path);
		return -1;
	}
	r = 0;
	while (off < b.len && r == 0) {
		const char *rec = (const char *)b.data + off;
		const char *nul = memchr(rec, '\0', b.len - off);
		size_t l = nul ? (size_t)(nul - rec) : b.len - off;
		const char *dot, *eq;
		struct kp_builtin_info *bi;

		off += l + 1;
		if (!l)
			continue; /* padding */
		dot = memchr(rec, '.', l);
		eq = dot ? memchr(dot, '=', l - (size_t)(dot - rec)) : NULL;
		if (!dot || dot == rec || !eq || eq == dot + 1) {
			r = kp_err_set(err, "%s: record at offset %zu is not module.key=value",
				       path, off - l - 1);
			break;
		}
		if (kp_grow(&t->builtin_info, &cap, t->nbuiltin_info + 1,
			    sizeof(*t->builtin_info)) < 0) {
			r = kp_err_set(err, "out of memory");
			break;
		}
		bi = &t->builtin_info[t->nbuiltin_info];
		bi->module = kp_arena_strndup(&t->arena, rec, (size_t)(dot - rec));
		bi->key = kp_arena_strndup(&t->arena, dot + 1, (size_t)(eq - dot - 1));
		bi->value = kp_arena_strndup(&t->arena, eq + 1, l - (size_t)(eq + 1 - rec));
		if (!bi->module || !bi->key || !bi->value) {
			r = kp_err_set(err, "out of memory");
			break;
		}
		t->nbuiltin_info++;
	}
	kp_bytes_release(&b);
	free(path);
	return r;
}

static void quiet_log(void *data, int priority, const char *file, int line, const char *fn,
		      const char *format, va_list args)
{
}

/* modprobe.d "blacklist" lines, in the directories kmod reads, under the root. */
static int read_modprobe_config(struct kp_tree *t, struct kp_err *err)
{
	static const char *const dirs[] = {
		"etc/modprobe.d", "run/modprobe.d",	"usr/local/lib/modprobe.d",
		"lib/modprobe.d", "usr/lib/modprobe.d",
	};
	const char *paths[KP_ARRAY_SIZE(dirs) + 1] = { NULL };
	char *owned[KP_ARRAY_SIZE(dirs)] = { NULL };
	struct kmod_config_iter *it;
	struct kmod_ctx *ctx;
	size_t n = 0, cap = 0;
	int r = 0;

	for (size_t i = 0; i < KP_ARRAY_SIZE(dirs); i++) {
		owned[i] = kp_root_path(t->root, dirs[i]);
		if (!owned[i]) {
			r = kp_err_set(err, "out of memory");
			goto out;
		}
		if (kp_is_dir(owned[i]))
			paths[n++] = owned[i];
	}
	if (!n)
		goto out;
	/* A FIFO among them would block libkmod's reader forever: refused first. */
	r = kp_modprobe_config_check(paths, err);
	if (r < 0)
		goto out;
	kp_in_note_kmod(t->moddir, paths);
	ctx = kmod_new(t->moddir, paths);
	if (!ctx) {
		r = kp_err_set(err, "%s: libkmod cannot read the modprobe configuration",
			       t->moddir);
		goto out;
	}
	kmod_set_log_fn(ctx, quiet_log, NULL);
	it = kmod_config_get_blacklists(ctx);
	while (it && kmod_config_iter_next(it) && r == 0) {
		char *name = kp_arena_strdup(&t->arena, kmod_config_iter_get_key(it));

		if (!name || kp_grow(&t->modprobe_blacklist, &cap, t->nmodprobe_blacklist + 1,
				     sizeof(*t->modprobe_blacklist)) < 0)
			r = kp_err_set(err, "out of memory");
		else
			t->modprobe_blacklist[t->nmodprobe_blacklist++] = name;
	}
	if (it)
		kmod_config_iter_free_iter(it);
	kmod_unref(ctx);
out:
	for (size_t i = 0; i < KP_ARRAY_SIZE(dirs); i++)
		free(owned[i]);
	return r;
}

int kp_tree_open(struct kp_tree *t, const char *root, const char *release, struct kp_err *err)
{
	struct mod_bases mb = { .n = 0 };

	memset(t, 0, sizeof(*t));
	t->root = strdup(root && *root ? root : "/");
	if (!t->root)
		return kp_err_set(err, "out of memory");
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
		if (asprintf(&t->moddir, "%s/%s", mb.path[i], t->release) < 0) {
			t->moddir = NULL;
			kp_err_set(err, "out of memory");
			goto fail;
		}
		if (!kp_is_dir(t->moddir)) {
			free(t->moddir);
			t->moddir = NULL;
		}
	}
	if (!t->moddir) {
		size_t n;
		char **names = list_all_releases(&mb, &n);
		char list[256] = "";

		for (size_t i = 0, used = 0; i < n && used < sizeof(list); i++)
			used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
						 i ? ", " : "", names[i]);
		free_list(names, n);
		kp_err_set(err, "%s/%s: no such directory (releases there: %s)", mb.path[0],
			   t->release, n ? list : "none");
		goto fail;
	}
	bases_release(&mb);
	find_files(t);
	if (read_builtin(t, err) < 0 || read_builtin_modinfo(t, err) < 0 ||
	    read_modprobe_config(t, err) < 0)
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
		if (asprintf(&dir, "%s/%s", mb.path[i], release) < 0) {
			bases_release(&mb);
			kp_err_set(err, "out of memory");
			return NULL;
		}
		if (!kp_is_dir(dir)) {
			free(dir);
			dir = NULL;
		}
	}
	bases_release(&mb);
	if (!dir)
		kp_err_errno(err, ENOENT, "%s: no release directory", release);
	return dir;
}

void kp_tree_release(struct kp_tree *t)
{
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
	free(t->builtin_info);
	free(t->modprobe_blacklist);
	kp_arena_release(&t->arena);
	memset(t, 0, sizeof(*t));
}

bool kp_tree_is_builtin(const struct kp_tree *t, const char *name)
{
	char key[256];

	kp_modname_from_path(key, sizeof(key), name, KP_MODNAME_KO);
	return kp_sorted_contains((const char *const *)t->builtin, t->nbuiltin, key);
}

const char *kp_tree_builtin_modinfo(const struct kp_tree *t, const char *name, const char *key)
{
	char mod[256];

	kp_modname_from_path(mod, sizeof(mod), name, KP_MODNAME_KO);
	for (size_t i = 0; i < t->nbuiltin_info; i++) {
		char have[256];

		if (strcmp(t->builtin_info[i].key, key))
			continue;
		kp_modname_from_path(have, sizeof(have), t->builtin_info[i].module, KP_MODNAME_KO);
		if (!strcmp(have, mod))
			return t->builtin_info[i].value;
	}
	return NULL;
}

int kp_tree_load_base(const struct kp_tree *t, struct kp_kernel_base *b, bool all,
		      struct kp_err *err)
{
	bool loaded = false;

	if (kp_base_set_kernel_release(b, t->release, err) < 0)
		return -1;
	if (t->symvers_path) {
		if (kp_base_load_symvers(b, t->symvers_path, err) < 0)
			return -1;
		loaded = true;
	}
	if (t->vmlinux_path && (all || !loaded)) {
		if (kp_base_load_vmlinux(b, t->vmlinux_path, err) < 0)
			return -1;
		loaded = true;
	}
	if (t->system_map_path && (all || !loaded)) {
		if (kp_base_load_system_map(b, t->system_map_path, err) < 0)
			return -1;
		loaded = true;
	}
	if (loaded)
		return 0;
	return kp_err_set(err,
			  "%s: no kernel exports for %s: no Module.symvers (build/, "
			  "usr/src/linux-headers-%s/, boot/symvers-%s.gz), vmlinux or System.map%s",
			  t->root, t->release, t->release, t->release,
			  t->system_map_stub ? " (only Debian's stub System.map; the real one is "
					       "in the -dbg package)"
					     : "");
}

bool kp_tree_has_exports(const struct kp_tree *t)
{
	return t->symvers_path || t->vmlinux_path || t->system_map_path;
}

int kp_tree_load_config(const struct kp_tree *t, struct kp_kconfig *c, struct kp_err *err)
{
	if (!t->config_path)
		return kp_err_set(err,
				  "%s: no kernel config for %s (boot/config-%s, "
				  "lib/modules/%s/config, build/.config)",
				  t->root, t->release, t->release, t->release);
	return kp_kconfig_load(c, t->config_path, err);
}
