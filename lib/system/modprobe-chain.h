/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What modprobe would load for one name, read the cheap way for `kopolicy hook` (which
 * runs inside modprobe, once per module, under a time budget of a few milliseconds): the
 * name resolved like modprobe (libkmod over the depmod .bin indexes, checked first by
 * modprobe-index.c: modprobe.d aliases, modules.dep, modules.alias, built-ins; or the text
 * modules.dep/modules.alias when only those exist), its dependencies first, each with its
 * file, whether it is built in or blacklisted. The live state it loads into is
 * kp_running_open_opts()'s (running.h), the exports it can look up
 * kp_base_load_filtered()'s (kernel/filtered-exports.h).
 *
 * Every path is inside the root given. Nothing is written.
 */
#ifndef KP_MODPROBE_CHAIN_H
#define KP_MODPROBE_CHAIN_H

#include <stdbool.h>
#include <stddef.h>

#include "file/bytes.h"
#include "file/rootopen.h"
#include "modprobe-snapshot.h"
#include "util/util.h"

/* Bounds on what is read from a root that may be hostile. */
#define KP_CHAIN_MAX_MODULES 512		/* modules on one chain */
#define KP_CHAIN_MAX_INDEX   ((size_t)64 << 20) /* a text index (modules.dep, ...) */
#define KP_CHAIN_MAX_LOADED  65536		/* lines of /proc/modules */

/* The modprobe.d directories libkmod reads (etc, run, usr/local/lib, lib, usr/lib). */
#define KP_CHAIN_CONF_DIRS KP_KMOD_CONF_DIRS

enum kp_chain_source {
	KP_CHAIN_LIBKMOD, /* modules.dep.bin & co. through libkmod */
	KP_CHAIN_TEXT,	  /* modules.dep (and modules.alias, modules.symbols) as text */
};

struct kp_chain_module {
	const char *name;    /* the kernel's name ('_' for '-') */
	const char *path;    /* the file, inside the root; NULL for a built-in */
	const char *relpath; /* path relative to the release directory, NULL for a built-in */
	bool builtin;
	bool target;	  /* resolved from the name asked for (not only a dependency) */
	bool blacklisted; /* a modprobe.d "blacklist" line names it */
};

struct kmod_ctx;
struct kp_index_memo;
struct kp_kmod_memo;

struct kp_chain {
	const char *root;
	struct kp_root_dir rootdir; /* @root's directory, opened once by kp_chain_open() */
	const char *moddir;	    /* ROOT/lib/modules/<release> */
	struct kp_kmod_copy *kc;    /* what libkmod reads: the root's files or a copy */
	struct kp_kmod_copy own_kc; /* @kc when kp_chain_open() was given none */
	struct kp_index_memo *memo; /* the indexes that passed before (borrowed), or NULL */
	enum kp_chain_source source;
	struct kmod_ctx *ctx; /* KP_CHAIN_LIBKMOD, once a question needs libkmod */
	/* KP_CHAIN_LIBKMOD: the configuration directories kmod_new() is given, NULL-terminated */
	const char *kpaths[KP_CHAIN_CONF_DIRS + 1];
	struct kp_kmod_memo *kmemo;	   /* libkmod's answers (borrowed), or NULL */
	struct kp_kmod_memo *kmemo_counts; /* the memo given, bound or not: kmod_new() counted */
	bool said;		/* what libkmod printed when opened was printed (or replayed) */
	struct kp_bytes depbin; /* modules.dep.bin (mapped), checked before libkmod reads it */
	bool alias_checked, symbols_checked; /* checked when a lookup can reach them */
	char *dep_text;			     /* KP_CHAIN_TEXT: modules.dep, NUL-terminated */
	size_t dep_len;
	const char *const *builtin; /* sorted names of modules.builtin (borrowed), may be NULL */
	size_t nbuiltin;
	const char *const *blacklist; /* modprobe.d blacklist names (borrowed) */
	size_t nblacklist;

	struct kp_chain_module *mods; /* after kp_chain_resolve(): dependencies first */
	size_t n;
	bool via_alias;	     /* the name was an alias: modprobe applies the blacklist */
	size_t nblacklisted; /* targets dropped because of the blacklist (alias only) */
	struct kp_arena arena;
};

/*
 * Opens the indexes of @moddir (inside @root): libkmod when modules.dep.bin
 * exists, else the text modules.dep; fails saying so when neither exists.
 * @builtin (sorted, '_' names) and @blacklist are borrowed for the chain's life.
 * @kc: the run's private copy for libkmod (borrowed; read when it has one, made there when
 * libkmod needs one and it has none, removed by its owner after kp_chain_close()); NULL:
 * the chain makes its own when needed and kp_chain_close() removes it.
 * @memo: the .bin indexes whose file state passed the check before (cache/index-memo.h;
 * borrowed, NULL: every index walked), not walked again (modprobe-index.c).
 * @kmemo: libkmod's answers for the same inputs (cache/kmod-memo.h; borrowed, NULL: libkmod
 * answers every question): replayed, and libkmod opened only for a question it cannot
 * answer, whose answer it records; never when libkmod reads a private copy.
 */
int kp_chain_open(struct kp_chain *c, const char *root, const char *moddir,
		  const char *const *builtin, size_t nbuiltin, const char *const *blacklist,
		  size_t nblacklist, struct kp_kmod_copy *kc, struct kp_index_memo *memo,
		  struct kp_kmod_memo *kmemo, struct kp_err *err);
void kp_chain_close(struct kp_chain *c);

/*
 * Resolves @name as modprobe would: the modules it names (an alias may name
 * several; modprobe drops blacklisted ones then), each after its dependencies
 * (modules.dep order), no module twice. Returns 0, or -1 with @err (errnum ENOENT
 * when nothing matches).
 */
int kp_chain_resolve(struct kp_chain *c, const char *name, struct kp_err *err);

/*
 * The module file of module @name (modules.dep), into *@path (owned by the
 * chain's arena) and *@relpath, both NULL when the indexes do not list it. 0, or -1 with
 * @err.
 */
int kp_chain_module_path(struct kp_chain *c, const char *name, const char **path,
			 const char **relpath, struct kp_err *err);

/*
 * The module that exports @symbol per modules.symbols (depmod's "symbol:"
 * aliases): its name into *@name (arena), NULL when none does. 0, or -1 with @err.
 */
int kp_chain_symbol_owner(struct kp_chain *c, const char *symbol, const char **name,
			  struct kp_err *err);

#endif
