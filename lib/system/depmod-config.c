// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * depmod.d and depmod's choice between files of the same module name: cfg_load(),
 * cfg_file_parse() and depmod_module_is_higher_priority() of kmod's tools/depmod.c
 * (kmod 30 … 34: unchanged in what they decide).
 */
#include "depmod-config.h"

#include "file/inputs.h"
#include "file/rootfs.h"
#include "file/rootopen.h"
#include "util/module-name.h"
#include "util/symbol-index.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* default_cfg_paths[] (SYSCONFDIR, DISTCONFDIR = /usr/lib on Debian's kmod). */
static const char *const cfg_dirs[] = {
	"etc/depmod.d",	    "run/depmod.d", "usr/local/lib/depmod.d",
	"usr/lib/depmod.d", "lib/depmod.d",
};

/* A configuration file larger than this is refused (depmod.d files are a few lines). */
#define MAX_CFG_FILE (1u << 20)

static int add_ptr(struct kp_depmod_cfg *cfg, const char ***arr, size_t *n, const char *s,
		   bool at_head)
{
	const char **p = kp_arena_alloc(&cfg->arena, (*n + 1) * sizeof(*p));

	if (!p)
		return -1;
	if (at_head) {
		p[0] = s;
		if (*n)
			memcpy(p + 1, *arr, *n * sizeof(*p));
	} else {
		if (*n)
			memcpy(p, *arr, *n * sizeof(*p));
		p[*n] = s;
	}
	*arr = p;
	(*n)++;
	return 0;
}

/* cfg_search_add(): new entries go to the head of the list. */
static int add_search(struct kp_depmod_cfg *cfg, const char *word)
{
	struct kp_depmod_search *p = kp_arena_alloc(&cfg->arena, (cfg->nsearches + 1) * sizeof(*p));

	if (!p)
		return -1;
	if (!strcmp(word, "built-in"))
		p[0] = (struct kp_depmod_search){ KP_DEPMOD_SEARCH_BUILTIN, NULL };
	else if (!strcmp(word, "external"))
		p[0] = (struct kp_depmod_search){ KP_DEPMOD_SEARCH_EXTERNAL, NULL };
	else if (!(p[0].path = kp_arena_strdup(&cfg->arena, word)))
		return -1;
	else
		p[0].type = KP_DEPMOD_SEARCH_PATH;
	if (cfg->nsearches)
		memcpy(p + 1, cfg->searches, cfg->nsearches * sizeof(*p));
	cfg->searches = p;
	cfg->nsearches++;
	return 0;
}

/* cfg_kernel_matches(): "*", or an extended regex searched (not anchored) in the release. */
static bool kernel_matches(const char *pattern, const char *kver)
{
	regex_t re;
	bool match;

	if (!strcmp(pattern, "*"))
		return true;
	if (!kver || regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) != 0)
		return false;
	match = regexec(&re, kver, 0, NULL, 0) == 0;
	regfree(&re);
	return match;
}

static int parse_line(struct kp_depmod_cfg *cfg, char *line, const char *kver)
{
	char *save = NULL, *cmd, *w;

	if (line[0] == '#' || !(cmd = strtok_r(line, "\t ", &save)))
		return 0;
	if (!strcmp(cmd, "search")) {
		while ((w = strtok_r(NULL, "\t ", &save)))
			if (add_search(cfg, w) < 0)
				return -1;
	} else if (!strcmp(cmd, "override")) {
		const char *mod = strtok_r(NULL, "\t ", &save);
		const char *ver = strtok_r(NULL, "\t ", &save);
		const char *sub = strtok_r(NULL, "\t ", &save);
		char buf[4096];

		if (!mod || !ver || !sub || !kernel_matches(ver, kver))
			return 0;
		snprintf(buf, sizeof(buf), "%s/%s", sub, mod);
		w = kp_arena_strdup(&cfg->arena, buf);
		if (!w || add_ptr(cfg, &cfg->overrides, &cfg->noverrides, w, true) < 0)
			return -1;
	} else if (!strcmp(cmd, "external")) {
		const char *ver = strtok_r(NULL, "\t ", &save);
		const char *dir = strtok_r(NULL, "\t ", &save);

		if (!ver || !dir || !kernel_matches(ver, kver))
			return 0;
		w = kp_arena_strdup(&cfg->arena, dir);
		if (!w || add_ptr(cfg, &cfg->externals, &cfg->nexternals, w, true) < 0)
			return -1;
	} else if (!strcmp(cmd, "exclude")) {
		while ((w = strtok_r(NULL, "\t ", &save))) {
			char *d = kp_arena_strdup(&cfg->arena, w);

			if (!d || add_ptr(cfg, &cfg->excludes, &cfg->nexcludes, d, true) < 0)
				return -1;
		}
	}
	/* include, make_map_files and unknown commands: ignored by depmod too. */
	return 0;
}

/* Reads one file: lines joined across a trailing backslash (freadline_wrapped()). */
static int parse_file(struct kp_depmod_cfg *cfg, const struct kp_root_dir *rd, const char *path,
		      const char *kver, struct kp_err *err)
{
	struct kp_err oe = { 0 };
	char *buf, *line, *p;
	struct stat st;
	ssize_t got;
	size_t len = 0;
	/* inside the root by descriptors: a directory swapped for a link since it was listed */
	int fd = kp_open_regular_in(rd, path, &st, &oe);

	if (fd < 0 && oe.errnum != EISDIR && oe.errnum != EINVAL)
		return kp_err_set(err, "%s: cannot open: %s", path, strerror(oe.errnum));
	if (fd < 0 || st.st_size > MAX_CFG_FILE) {
		if (fd >= 0)
			close(fd);
		return kp_err_set(err, "%s: not a regular file of at most 1 MiB", path);
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return kp_err_set(err, "out of memory");
	}
	while (len < (size_t)st.st_size &&
	       (got = read(fd, buf + len, (size_t)st.st_size - len)) > 0)
		len += (size_t)got;
	close(fd);
	buf[len] = '\0';
	/* A backslash before the newline continues the line. */
	for (p = buf; (p = strstr(p, "\\\n"));)
		p[0] = p[1] = ' ';
	for (line = buf; line && *line;) {
		char *nl = strchr(line, '\n');

		if (nl)
			*nl = '\0';
		if (parse_line(cfg, line, kver) < 0) {
			free(buf);
			return kp_err_set(err, "out of memory");
		}
		line = nl ? nl + 1 : NULL;
	}
	free(buf);
	return 0;
}

struct cfg_file {
	char *name; /* as in its directory: the name depmod sorts and dedupes by */
	char *path; /* the file read (a link in a root's depmod.d resolved inside it) */
};

static void files_free(struct cfg_file *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(f[i].name);
		free(f[i].path);
	}
	free(f);
}

static int cmp_file(const void *a, const void *b)
{
	return strcmp(((const struct cfg_file *)a)->name, ((const struct cfg_file *)b)->name);
}

/*
 * @rel (a directory of cfg_dirs[], or a file in one) under @root ("": the host's) as that
 * system sees it: its symlinks followed inside the root, never on the host (file/rootfs.h).
 * Malloc'ed; NULL with errno ENOMEM, or ELOOP when its links loop.
 */
static char *cfg_path(const char *root, const char *rel)
{
	char *p;

	if (*root)
		return kp_root_resolve(root, rel);
	if (asprintf(&p, "/%s", rel) < 0) {
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

/* True if the entry @name (readdir()'s @type) of directory @dir is a symlink. */
static bool entry_is_link(const char *dir, const char *name, unsigned char type)
{
	struct stat st;
	char *p;
	bool link;

	if (type != DT_UNKNOWN)
		return type == DT_LNK;
	if (asprintf(&p, "%s/%s", dir, name) < 0)
		return false; /* then read as a file: the host's open says what it is */
	link = kp_in_lstat(p, &st) == 0 && S_ISLNK(st.st_mode);
	free(p);
	return link;
}

/*
 * The entry @de of directory @d (open as @dh, at @dir) that depmod reads if it is no
 * directory: its path into *@path (NULL: skipped). 0, or -1 when out of memory.
 */
static int cfg_entry(const char *root, size_t d, DIR *dh, const char *dir, const struct dirent *de,
		     char **path)
{
	struct stat st;
	char *rel;

	*path = NULL;
	if (!*root || !entry_is_link(dir, de->d_name, de->d_type)) {
		/* the host's links are the host's to follow; a root's file is no link */
		if (fstatat(dirfd(dh), de->d_name, &st, 0) < 0 || S_ISDIR(st.st_mode))
			return 0;
		if (asprintf(path, "%s/%s", dir, de->d_name) < 0) {
			*path = NULL;
			return -1;
		}
		return 0;
	}
	/* a link in a root's depmod.d: followed inside the root, a loop skipped */
	if (asprintf(&rel, "%s/%s", cfg_dirs[d], de->d_name) < 0)
		return -1;
	*path = kp_root_resolve(root, rel);
	free(rel);
	if (!*path)
		return errno == ELOOP ? 0 : -1;
	if (kp_in_stat(*path, &st) < 0 || S_ISDIR(st.st_mode)) {
		free(*path);
		*path = NULL;
	}
	return 0;
}

/* cfg_files_list() + cfg_files_insert_sorted(): *.conf, by name, first directory wins. */
static int list_files(const char *root, struct cfg_file **out, size_t *n, struct kp_err *err)
{
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	for (size_t d = 0; d < KP_ARRAY_SIZE(cfg_dirs); d++) {
		char *dir = cfg_path(root, cfg_dirs[d]);
		struct dirent *de;
		DIR *dh;

		if (!dir && errno == ELOOP)
			continue;
		if (!dir)
			return kp_err_set(err, "out of memory");
		if (!(dh = kp_opendir_root(root, dir))) { /* inside @root, by descriptors */
			free(dir);
			continue;
		}
		while ((de = readdir(dh))) {
			size_t len = strlen(de->d_name), k;
			char *path;

			if (de->d_name[0] == '.' || len < 6 ||
			    strcmp(de->d_name + len - 5, ".conf"))
				continue;
			if (cfg_entry(root, d, dh, dir, de, &path) < 0)
				goto oom;
			if (!path)
				continue;
			for (k = 0; k < *n && strcmp((*out)[k].name, de->d_name); k++)
				;
			if (k < *n) {
				free(path); /* "Ignoring duplicate config file" */
				continue;
			}
			if (kp_grow(out, &cap, *n + 1, sizeof(**out)) < 0 ||
			    !((*out)[*n].name = strdup(de->d_name))) {
				free(path);
				goto oom;
			}
			(*out)[*n].path = path;
			(*n)++;
		}
		closedir(dh);
		free(dir);
		continue;
	oom:
		closedir(dh);
		free(dir);
		files_free(*out, *n);
		*out = NULL;
		*n = 0;
		return kp_err_set(err, "out of memory");
	}
	if (*n)
		qsort(*out, *n, sizeof(**out), cmp_file);
	return 0;
}

int kp_depmod_cfg_load(struct kp_depmod_cfg *cfg, const char *root, const char *kver,
		       struct kp_err *err)
{
	struct kp_root_dir rd = { .path = NULL, .fd = -1 };
	struct cfg_file *files;
	size_t n;
	int r = 0;

	memset(cfg, 0, sizeof(*cfg));
	if (!root || !strcmp(root, "/"))
		root = "";
	if (list_files(root, &files, &n, err) < 0)
		return -1;
	/* the files are opened under the root's directory, opened once for them all */
	kp_root_dir_pin(&rd, root);
	for (size_t i = 0; i < n; i++) {
		const char *p = kp_arena_strdup(&cfg->arena, files[i].path);

		if (r == 0 && (!p || add_ptr(cfg, &cfg->files, &cfg->nfiles, p, false) < 0))
			r = kp_err_set(err, "out of memory");
		if (r == 0)
			r = parse_file(cfg, &rd, files[i].path, kver, err);
	}
	kp_root_dir_unpin(&rd);
	files_free(files, n);
	if (r == 0 && !cfg->nsearches) {
		cfg->default_search = true;
		if (add_search(cfg, "updates") < 0)
			r = kp_err_set(err, "out of memory");
	}
	if (r < 0)
		kp_depmod_cfg_release(cfg);
	return r;
}

void kp_depmod_cfg_release(struct kp_depmod_cfg *cfg)
{
	kp_arena_release(&cfg->arena);
	memset(cfg, 0, sizeof(*cfg));
}

bool kp_depmod_excluded(const struct kp_depmod_cfg *cfg, const char *dirname)
{
	if (!strcmp(dirname, "build") || !strcmp(dirname, "source"))
		return true;
	for (size_t i = 0; i < cfg->nexcludes; i++)
		if (!strcmp(cfg->excludes[i], dirname))
			return true;
	return false;
}

/* depmod_is_path_starts_with() */
static bool starts_with_dir(const char *path, size_t pathlen, const char *prefix)
{
	size_t plen = strlen(prefix);

	return pathlen > plen && path[plen] == '/' && !memcmp(path, prefix, plen);
}

/* The path relative to @moddir without the extension ("kernel/fs/foo"), or NULL outside it. */
static const char *relative(const char *moddir, const char *path, size_t *len)
{
	size_t mlen = strlen(moddir);
	const char *rel, *base, *dot;

	if (strncmp(path, moddir, mlen) || path[mlen] != '/')
		return NULL;
	rel = path + mlen + 1;
	base = strrchr(rel, '/');
	base = base ? base + 1 : rel;
	dot = strchr(base, '.');
	*len = (size_t)((dot ? dot : base + strlen(base)) - rel);
	return rel;
}

/* Length of @path up to the end of the module name (depmod's baselen + modnamelen). */
static size_t name_end(const char *path)
{
	const char *base = strrchr(path, '/'), *dot;

	base = base ? base + 1 : path;
	dot = strchr(base, '.');
	return (size_t)((dot ? dot : base + strlen(base)) - path);
}

bool kp_depmod_keeps(const struct kp_depmod_cfg *cfg, const char *moddir, const char *oldpath,
		     const char *newpath, bool *tie)
{
	size_t relnewlen = 0, reloldlen = 0, newlen = name_end(newpath), oldlen = name_end(oldpath);
	const char *relnew = relative(moddir, newpath, &relnewlen);
	const char *relold = relative(moddir, oldpath, &reloldlen);
	long i = 0, bprio = -1, oldprio = -1, newprio = -1;

	*tie = false;
	for (size_t k = 0; k < cfg->noverrides; k++) {
		size_t olen = strlen(cfg->overrides[k]);

		if (relnew && relnewlen == olen && !memcmp(cfg->overrides[k], relnew, olen))
			return false;
		if (relold && reloldlen == olen && !memcmp(cfg->overrides[k], relold, olen))
			return true;
	}
	for (size_t k = 0; k < cfg->nsearches; k++, i++) {
		const struct kp_depmod_search *se = &cfg->searches[k];

		if (se->type == KP_DEPMOD_SEARCH_BUILTIN) {
			bprio = i;
		} else if (se->type == KP_DEPMOD_SEARCH_EXTERNAL) {
			/* as kmod: each external directory takes an index of its own */
			for (size_t e = 0; e < cfg->nexternals; e++, i++) {
				if (starts_with_dir(newpath, newlen, cfg->externals[e]))
					newprio = i;
				if (starts_with_dir(oldpath, oldlen, cfg->externals[e]))
					oldprio = i;
			}
		} else {
			size_t slen = strlen(se->path);

			if (relnew && relnewlen > slen && relnew[slen] == '/' &&
			    !memcmp(se->path, relnew, slen))
				newprio = i;
			else if (relold && reloldlen > slen && relold[slen] == '/' &&
				 !memcmp(se->path, relold, slen))
				oldprio = i;
		}
	}
	if (newprio < 0)
		newprio = bprio;
	if (oldprio < 0)
		oldprio = bprio;
	*tie = newprio == oldprio;
	return newprio <= oldprio;
}

/* True if a directory between @moddir and the file is one depmod does not enter. */
static bool in_excluded_dir(const struct kp_depmod_cfg *cfg, const char *moddir, const char *path)
{
	size_t mlen = strlen(moddir);
	const char *p;

	if (strncmp(path, moddir, mlen) || path[mlen] != '/')
		return false;
	for (p = path + mlen + 1;;) {
		const char *slash = strchr(p, '/');
		char dir[256];

		if (!slash)
			return false;
		if ((size_t)(slash - p) < sizeof(dir)) {
			memcpy(dir, p, (size_t)(slash - p));
			dir[slash - p] = '\0';
			if (kp_depmod_excluded(cfg, dir))
				return true;
		}
		p = slash + 1;
	}
}

static int push_shadow(struct kp_depmod_shadow **out, size_t *n, size_t *cap, char *path,
		       const char *name, const char *winner, bool tie)
{
	struct kp_depmod_shadow *s;

	if (kp_grow(out, cap, *n + 1, sizeof(**out)) < 0)
		return -1;
	s = &(*out)[(*n)++];
	memset(s, 0, sizeof(*s));
	s->path = path;
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->winner = winner;
	s->tie = tie;
	return 0;
}

int kp_depmod_select(const struct kp_depmod_cfg *cfg, const char *moddir, struct kp_module_set *set,
		     struct kp_depmod_shadow **out, size_t *nout, struct kp_err *err)
{
	struct kp_symbol_index chosen; /* module name -> first entry of that name + 1 */
	char(*names)[64];
	size_t cap = 0, kept = 0, *cur; /* cur[first entry of a name]: the file depmod keeps */
	bool *drop;

	*out = NULL;
	*nout = 0;
	if (!set->n)
		return 0;
	names = kp_calloc(set->n, sizeof(*names));
	drop = kp_calloc(set->n, sizeof(*drop));
	cur = kp_calloc(set->n, sizeof(*cur));
	if (!names || !drop || !cur || kp_symbol_index_init(&chosen, set->n) < 0) {
		free(names);
		free(drop);
		free(cur);
		return kp_err_set(err, "out of memory");
	}
	for (size_t i = 0; i < set->n; i++) {
		const char *path = set->entries[i].path;
		const struct kp_symbol_index_entry *e;
		size_t old, first;
		bool tie;

		if (in_excluded_dir(cfg, moddir, path)) {
			drop[i] = true;
			continue;
		}
		kp_modname_from_path(names[i], sizeof(names[i]), path, KP_MODNAME_DOT);
		e = kp_symbol_index_find(&chosen, names[i]);
		if (!e) {
			if (kp_symbol_index_add(&chosen, names[i], (void *)(uintptr_t)(i + 1)) < 0)
				goto oom;
			cur[i] = i;
			continue;
		}
		first = (uintptr_t)e->value - 1;
		old = cur[first];
		if (kp_depmod_keeps(cfg, moddir, set->entries[old].path, path, &tie)) {
			drop[i] = true;
		} else {
			drop[old] = true;
			cur[first] = i;
		}
	}
	/* Record every dropped file with the winner of its name, then compact the set. */
	for (size_t i = 0; i < set->n; i++) {
		const struct kp_symbol_index_entry *e;
		const char *winner = NULL;
		bool tie = false;

		if (!drop[i])
			continue;
		e = names[i][0] ? kp_symbol_index_find(&chosen, names[i]) : NULL;
		if (e) {
			size_t w = cur[(uintptr_t)e->value - 1];

			winner = set->entries[w].path;
			kp_depmod_keeps(cfg, moddir, winner, set->entries[i].path, &tie);
		}
		if (push_shadow(out, nout, &cap, set->entries[i].path, names[i], winner, tie) < 0)
			goto oom;
		set->entries[i].path = NULL;
		free(set->entries[i].file);
		set->entries[i].file = NULL;
	}
	for (size_t i = 0; i < set->n; i++)
		if (!drop[i])
			set->entries[kept++] = set->entries[i];
	set->n = kept;
	kp_symbol_index_release(&chosen);
	free(names);
	free(drop);
	free(cur);
	return 0;
oom:
	kp_symbol_index_release(&chosen);
	free(names);
	free(drop);
	free(cur);
	return kp_err_set(err, "out of memory");
}

void kp_depmod_shadows_free(struct kp_depmod_shadow *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(s[i].path);
	free(s);
}
