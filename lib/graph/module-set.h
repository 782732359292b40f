/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A set of modules read from files and directories: paths are collected
 * (directories recursed as kmod's depmod does: linked directories entered, links
 * named "build" or "source" not), then read in parallel, keeping the order in which
 * they were named. A set with a root (kp_set_set_root(): check -b ROOT, the hook's
 * --root) reads the modules under it as that system sees them: a module file or a
 * directory that is a symlink, absolute or relative, is followed inside the root
 * (file/rootfs.h), never on the host, and its directories are listed inside it by
 * descriptors (kp_opendir_in()).
 */
#ifndef KP_MODULE_SET_H
#define KP_MODULE_SET_H

#include <stdbool.h>
#include <stddef.h>

#include "file/rootopen.h"
#include "read/module.h"

struct kp_set_entry {
	char *path; /* as named or walked: the path reported */
	/*
	 * The file read: @path resolved inside the set's root when it differs (a symlink);
	 * NULL: @path itself. kp_set_entry_file() gives the one to open.
	 */
	char *file;
	struct kp_module *mod; /* NULL when reading failed */
	char *error;	       /* why reading failed, or NULL */
	bool walked;	       /* found in a directory, not named itself */
	bool provider;	       /* resolved against, not reported (check --provider) */
};

struct kp_facts_cache;

/* A walk's warning: what depmod says of an entry it skips and goes on (its exit status 0). */
struct kp_set_warning {
	char *path; /* as walked */
	char *what; /* the problem, one line */
};

struct kp_module_set {
	struct kp_set_entry *entries;
	size_t n;
	size_t cap;
	struct kp_facts_cache *cache;	 /* the entries were read through it (kp_read_opts) */
	char *root;			 /* kp_set_set_root(); NULL: the host's files */
	struct kp_root_dir rootdir;	 /* @root's directory, opened once (with @root) */
	struct kp_set_warning *warnings; /* the walks' warnings, in walk order */
	size_t nwarnings;
	size_t wcap;
};

/*
 * Makes the paths added from now on under @root resolve inside it, chroot-like (NULL, ""
 * or "/": the host, paths followed as named). 0, or -1 when out of memory.
 */
int kp_set_set_root(struct kp_module_set *set, const char *root);

/* The file to open for @e: its path resolved inside the set's root. */
static inline const char *kp_set_entry_file(const struct kp_set_entry *e)
{
	return e->file ? e->file : e->path;
}

/* True for the names a module tree uses: *.ko, *.ko.xz, *.ko.zst, *.ko.gz. */
bool kp_is_module_filename(const char *name);

/*
 * Adds @path: a file is taken whatever its name; a directory contributes every
 * module file below it, sorted by path. Errors (unreadable directory) become
 * entries with an error. Returns 0, or -1 when out of memory.
 *
 * With a root, a @path under it is resolved inside it first: a file keeps @path as
 * its reported path and reads the resolved one (entry's @file); a directory is walked
 * under @path when that is the directory it resolves to, else at the resolved path;
 * each module file found there that is a symlink is resolved inside the root too.
 * A path whose links loop (more than 40) is an entry with the error "cannot resolve
 * inside the root: Too many levels of symbolic links"; the others are still added.
 * A linked directory is walked under the link's path (its modules reported there, read
 * where they resolve inside the root); one that leads back to a directory being walked
 * is an entry with the error "a linked directory that loops back to one being walked,
 * not entered"; under a root, a link (not named as a module) that leads nowhere inside
 * it but somewhere on the host, "a link leading out of the root, not followed". Any other
 * link not named as a module that leads nowhere or loops is no module: a warning of the set
 * (@warnings), as depmod's "ERROR: fstatat(DFD, NAME): ..." line (kmod 30 to 34
 * tools/depmod.c depmod_modules_search_dir(), which skips it and exits 0): "a dangling link,
 * skipped: No such file or directory", "a looping link, skipped: Too many levels of symbolic
 * links", or "a link that cannot be followed, skipped: ..." for another errno. An entry not
 * named as a module that is (or whose link leads to) a FIFO, socket or device is never
 * opened: a warning too, as depmod's "unsupported file type %s: %o" (kmod 30 tools/depmod.c
 * l.1330, exit 0): "unsupported file type (a FIFO), skipped" (a socket, a character device,
 * a block device). One named as a module is an entry whose reading says what it is.
 */
int kp_set_add_path(struct kp_module_set *set, const char *path);

typedef void (*kp_progress_fn)(size_t done, size_t total, void *data);

struct kp_read_opts {
	struct kp_open_opts open;
	/*
	 * The facts cache (cache/facts-cache.h) to read through; NULL: read each file. It must
	 * outlive the set: kp_set_release() settles the stores still pending there.
	 */
	struct kp_facts_cache *cache;
	unsigned jobs;		 /* 0: one per online CPU */
	kp_progress_fn progress; /* called from one thread at a time; may be NULL */
	void *progress_data;
};

/* Reads every entry not read yet. Returns the number of entries that failed. */
size_t kp_set_read(struct kp_module_set *set, const struct kp_read_opts *opts);
/* Reads entries [@from, @to) only (streaming consumers read a window at a time). */
size_t kp_set_read_range(struct kp_module_set *set, size_t from, size_t to,
			 const struct kp_read_opts *opts);
void kp_set_release(struct kp_module_set *set);

/*
 * Reads the module file @path through the facts cache @cache, or directly (kp_module_open_with())
 * when @cache is NULL: the caller chooses, the reader knows no cache. A module read through
 * a cache with @o->defer_store may wait there to be stored: free it with
 * kp_set_free_module(). Same returns as kp_module_open_with().
 */
int kp_set_open_module(struct kp_facts_cache *cache, const char *path, const struct kp_open_opts *o,
		       struct kp_decoders *dec, struct kp_module **out, struct kp_err *err);
/* Frees @m read through @cache (NULL: none): a store of it still pending there is made first. */
void kp_set_free_module(struct kp_facts_cache *cache, struct kp_module *m);
/* Frees the module of @e, an entry of @set, as kp_set_free_module() does; @e->mod is NULL after. */
void kp_set_drop_module(struct kp_module_set *set, struct kp_set_entry *e);

#endif
