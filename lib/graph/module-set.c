// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * module-set.c: the entries of a module set, the files named and those found walking
 * directories (links, loops, depth and special files as depmod meets them), inside a root;
 * the entries' modules are read in module-set-read.c.
 */
#include "module-set.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file/inputs.h"
#include "file/rootfs.h"

bool kp_is_module_filename(const char *name)
{
	static const char *const suffixes[] = { ".ko", ".ko.xz", ".ko.zst", ".ko.gz" };
	size_t len = strlen(name);

	for (size_t i = 0; i < KP_ARRAY_SIZE(suffixes); i++) {
		size_t sl = strlen(suffixes[i]);

		if (len > sl && !strcmp(name + len - sl, suffixes[i]))
			return true;
	}
	return false;
}

static struct kp_set_entry *push_entry(struct kp_module_set *set, const char *path)
{
	struct kp_set_entry *ent;

	if (kp_grow(&set->entries, &set->cap, set->n + 1, sizeof(*set->entries)) < 0)
		return NULL;
	ent = &set->entries[set->n];
	memset(ent, 0, sizeof(*ent));
	ent->path = strdup(path);
	if (!ent->path)
		return NULL;
	set->n++;
	return ent;
}

static int set_error(struct kp_set_entry *ent, const char *what, int errnum)
{
	char buf[256];

	if (errnum)
		snprintf(buf, sizeof(buf), "%s: %s", what, strerror(errnum));
	else
		snprintf(buf, sizeof(buf), "%s", what);
	ent->error = strdup(buf);
	return ent->error ? 0 : -1;
}

static int push_error(struct kp_module_set *set, const char *path, const char *what, int errnum)
{
	struct kp_set_entry *ent = push_entry(set, path);

	return ent ? set_error(ent, what, errnum) : -1;
}

/*
 * A walk's warning on @path (depmod skips the entry, says so and goes on), @what then
 * strerror(@errnum) unless 0: 0, or -1 (memory).
 */
static int push_warning(struct kp_module_set *set, const char *path, const char *what, int errnum)
{
	struct kp_set_warning *w;

	if (kp_grow(&set->warnings, &set->wcap, set->nwarnings + 1, sizeof(*set->warnings)) < 0)
		return -1;
	w = &set->warnings[set->nwarnings];
	w->path = strdup(path);
	if (!w->path || (errnum ? asprintf(&w->what, "%s: %s", what, strerror(errnum))
				: asprintf(&w->what, "%s", what)) < 0) {
		free(w->path);
		return -1;
	}
	set->nwarnings++;
	return 0;
}

/*
 * A link not named as a module that stat() cannot follow (@errnum): skipped with a warning,
 * as depmod's fstatat() of it fails (kmod 30 to 34 tools/depmod.c
 * depmod_modules_search_dir(): "ERROR: fstatat(...): %m", the walk goes on, exit 0).
 */
static int warn_unfollowed_link(struct kp_module_set *set, const char *path, int errnum)
{
	const char *what = "a link that cannot be followed, skipped";

	if (errnum == ENOENT || errnum == ENOTDIR)
		what = "a dangling link, skipped";
	else if (errnum == ELOOP)
		what = "a looping link, skipped";
	return push_warning(set, path, what, errnum);
}

/*
 * An entry not named as a module that is, or whose link leads to, a FIFO, socket or device
 * (@mode, never opened): skipped with a warning, as depmod's "unsupported file type %s: %o"
 * (kmod 30 tools/depmod.c l.1330, depmod_modules_search_dir(), kmod 30 to 34; exit 0).
 */
static int warn_unsupported(struct kp_module_set *set, const char *path, mode_t mode)
{
	const char *what = "unsupported file type (not a regular file or directory), skipped";

	if (S_ISFIFO(mode))
		what = "unsupported file type (a FIFO), skipped";
	else if (S_ISSOCK(mode))
		what = "unsupported file type (a socket), skipped";
	else if (S_ISCHR(mode))
		what = "unsupported file type (a character device), skipped";
	else if (S_ISBLK(mode))
		what = "unsupported file type (a block device), skipped";
	return push_warning(set, path, what, 0);
}

int kp_set_set_root(struct kp_module_set *set, const char *root)
{
	char *r = NULL;

	if (!kp_root_is_host(root)) {
		r = strdup(root);
		if (!r)
			return -1;
	}
	kp_root_dir_unpin(&set->rootdir);
	free(set->root);
	set->root = r;
	/* its directory opened once: every module of the set is opened under it */
	if (r)
		kp_root_dir_pin(&set->rootdir, r);
	return 0;
}

/*
 * @path resolved inside the set's root into *@real (NULL: @path itself, no root or no link
 * on the way). 0; 1 when its links loop (*@real NULL); -1 when out of memory.
 */
static int resolve_in_root(const struct kp_module_set *set, const char *path, char **real)
{
	*real = NULL;
	if (!set->root)
		return 0;
	*real = kp_root_resolve_path(set->root, path);
	if (!*real)
		return errno == ELOOP ? 1 : -1;
	if (!strcmp(*real, path)) {
		free(*real);
		*real = NULL;
	}
	return 0;
}

/* A module file found or named: the entry of @path, its file resolved inside the root. */
static struct kp_set_entry *push_module(struct kp_module_set *set, const char *path, bool resolve)
{
	struct kp_set_entry *ent = push_entry(set, path);
	int r;

	if (!ent || !resolve)
		return ent;
	r = resolve_in_root(set, path, &ent->file);
	if (r < 0 || (r > 0 && set_error(ent, "cannot resolve inside the root", ELOOP) < 0))
		return NULL;
	return ent;
}

struct dir_entry {
	char *path;
	unsigned char type; /* DT_* from readdir(), else fstatat() of the directory read */
};

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct dir_entry *)a)->path, ((const struct dir_entry *)b)->path);
}

/* DT_* of the entry @name of the open directory @dfd, its own (a link not followed). */
static unsigned char entry_type(int dfd, const char *name)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return DT_UNKNOWN;
	return IFTODT(st.st_mode);
}

/* A FIFO, socket or device: depmod's "unsupported file type". */
static bool special_type(unsigned char type)
{
	return type == DT_FIFO || type == DT_SOCK || type == DT_CHR || type == DT_BLK;
}

/* Directories nested deeper than this are an error (a tree is ~6 deep). */
#define WALK_MAX_DEPTH 64

/* The directories being walked, outermost first: a link back to one of them is a loop. */
struct walk_stack {
	struct {
		dev_t dev;
		ino_t ino;
	} d[WALK_MAX_DEPTH + 1];
	unsigned n;
};

/*
 * A module tree's entries as kmod's depmod takes them (tools/depmod.c
 * depmod_modules_search_dir(), kmod 9 to 34): "build" and "source" never, any other link
 * followed, into a directory too. Only the links are skipped by those names here: a real
 * directory so named is walked as before.
 */
static bool skipped_link(const char *name)
{
	return !strcmp(name, "build") || !strcmp(name, "source");
}

static int add_dir(struct kp_module_set *set, const char *dir, struct walk_stack *stack,
		   bool linked);

/*
 * The link @path met in a walk: a directory is walked under @path, as depmod does; a module
 * file (by its name) is an entry read through the link, which says when it loops or leads
 * nowhere; another link that leads out of the root (its target is only on the host) is one
 * error entry; anything else is no module: a warning when it loops, leads nowhere or to a
 * FIFO, socket or device, nothing when it leads to a regular file.
 */
static int add_link(struct kp_module_set *set, const char *path, struct walk_stack *stack)
{
	const struct kp_root_dir *root = set->root ? &set->rootdir : NULL;
	const char *base = strrchr(path, '/') + 1;
	struct kp_set_entry *ent;
	struct stat st, host;
	int e;

	if (kp_stat_in(root, path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return add_dir(set, path, stack, true);
		if (!kp_is_module_filename(base))
			return S_ISREG(st.st_mode) ? 0 : warn_unsupported(set, path, st.st_mode);
	} else if (!kp_is_module_filename(base)) {
		/*
		 * followed on the host (depmod -b does) it leads somewhere: out of the root; a
		 * link that loops or leads nowhere is no module (nor a directory), a warning.
		 * A module file's link is an entry: reading it says what is wrong.
		 */
		e = errno;
		if (e != ELOOP && root && kp_in_stat(path, &host) == 0)
			return push_error(set, path, "a link leading out of the root, not followed",
					  0);
		return warn_unfollowed_link(set, path, e);
	}
	ent = push_module(set, path, true);
	if (ent)
		ent->walked = true;
	return ent ? 0 : -1;
}

/*
 * The directory @dir walked (@linked: reached through a link, then opened and its modules
 * read where it resolves inside the root, so that what is recorded names no link), its
 * entries in the order of their paths.
 */
static int add_dir(struct kp_module_set *set, const char *dir, struct walk_stack *stack,
		   bool linked)
{
	const struct kp_root_dir *root = set->root ? &set->rootdir : NULL;
	struct dir_entry *ents = NULL;
	size_t n = 0, cap = 0, dlen = strlen(dir);
	bool slash = dlen && dir[dlen - 1] == '/';
	char *real = NULL;
	struct dirent *de;
	struct stat st;
	DIR *d;
	int r = 0, e;

	if (stack->n > WALK_MAX_DEPTH)
		return push_error(set, dir, "directory nesting too deep", 0);
	if (linked) {
		r = resolve_in_root(set, dir, &real);
		if (r < 0)
			return -1;
		if (r > 0)
			return push_error(set, dir, "cannot resolve inside the root", ELOOP);
	}
	d = kp_opendir_in(root, real ? real : dir);
	e = errno;
	free(real);
	if (!d)
		return push_error(set, dir, "cannot open directory", e);
	if (fstat(dirfd(d), &st) < 0) {
		e = errno;
		closedir(d);
		return push_error(set, dir, "cannot open directory", e);
	}
	for (unsigned i = 0; i < stack->n; i++) {
		if (stack->d[i].dev == st.st_dev && stack->d[i].ino == st.st_ino) {
			closedir(d);
			return push_error(set, dir,
					  "a linked directory that loops back to one being "
					  "walked, not entered",
					  0);
		}
	}
	stack->d[stack->n].dev = st.st_dev;
	stack->d[stack->n].ino = st.st_ino;
	stack->n++;
	while ((de = readdir(d))) {
		unsigned char type = de->d_type;
		size_t nlen;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (type == DT_UNKNOWN)
			type = entry_type(dirfd(d), de->d_name);
		/*
		 * Only directories, links, module files and (warned) FIFOs, sockets and
		 * devices matter: skip the rest first.
		 */
		if (type != DT_DIR && type != DT_LNK && !special_type(type) &&
		    !kp_is_module_filename(de->d_name))
			continue;
		if (type == DT_LNK && skipped_link(de->d_name))
			continue;
		if (kp_grow(&ents, &cap, n + 1, sizeof(*ents)) < 0) {
			r = -1;
			break;
		}
		nlen = strlen(de->d_name);
		ents[n].path = malloc(dlen + nlen + 2);
		if (!ents[n].path) {
			r = -1;
			break;
		}
		memcpy(ents[n].path, dir, dlen);
		if (!slash)
			ents[n].path[dlen] = '/';
		memcpy(ents[n].path + dlen + !slash, de->d_name, nlen + 1);
		ents[n].type = type;
		n++;
	}
	closedir(d);
	if (n > 1)
		qsort(ents, n, sizeof(*ents), cmp_entry);
	for (size_t i = 0; i < n && r == 0; i++) {
		const char *base = strrchr(ents[i].path, '/') + 1;

		if (ents[i].type == DT_DIR) {
			r = add_dir(set, ents[i].path, stack, linked);
		} else if (ents[i].type == DT_LNK) {
			r = add_link(set, ents[i].path, stack);
		} else if (kp_is_module_filename(base)) {
			/*
			 * a FIFO, socket or device named *.ko too: reading says what it is;
			 * under a linked directory, resolved inside the set's root
			 */
			struct kp_set_entry *ent = push_module(set, ents[i].path, linked);

			if (ent)
				ent->walked = true;
			r = ent ? 0 : -1;
		} else if (special_type(ents[i].type)) {
			r = warn_unsupported(set, ents[i].path, DTTOIF(ents[i].type));
		}
	}
	stack->n--;
	for (size_t i = 0; i < n; i++)
		free(ents[i].path);
	free(ents);
	return r;
}

/* True if @a and @b are the same directory (symlinks followed). */
static bool same_dir(const char *a, const char *b)
{
	struct stat x, y;

	return kp_in_stat(a, &x) == 0 && kp_in_stat(b, &y) == 0 && S_ISDIR(x.st_mode) &&
	       x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

int kp_set_add_path(struct kp_module_set *set, const char *path)
{
	struct stat st;
	char *real;
	int r = resolve_in_root(set, path, &real);

	if (r < 0)
		return -1;
	if (r > 0)
		return push_error(set, path, "cannot resolve inside the root", ELOOP);
	if (kp_in_stat(real ? real : path, &st) == 0 && S_ISDIR(st.st_mode)) {
		/* under its name when that is where it resolves (ROOT/lib -> usr/lib) */
		struct walk_stack stack = { .n = 0 };

		r = add_dir(set, real && !same_dir(path, real) ? real : path, &stack, false);
		free(real);
		return r;
	}
	/* Files (and anything unreadable) are entries: reading reports the problem. */
	if (!push_entry(set, path)) {
		free(real);
		return -1;
	}
	set->entries[set->n - 1].file = real;
	return 0;
}

void kp_set_release(struct kp_module_set *set)
{
	for (size_t i = 0; i < set->n; i++) {
		free(set->entries[i].path);
		free(set->entries[i].file);
		free(set->entries[i].error);
		kp_set_free_module(set->cache, set->entries[i].mod);
	}
	free(set->entries);
	for (size_t i = 0; i < set->nwarnings; i++) {
		free(set->warnings[i].path);
		free(set->warnings[i].what);
	}
	free(set->warnings);
	kp_root_dir_unpin(&set->rootdir);
	free(set->root);
	memset(set, 0, sizeof(*set));
}
