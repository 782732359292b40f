/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the modprobe chain, its text fallback (modprobe-chain-text.c), its index checks
 * (modprobe-index.c) and out-of-tree.c share.
 */
#ifndef KP_MODPROBE_CHAIN_INTERNAL_H
#define KP_MODPROBE_CHAIN_INTERNAL_H

#include <stdbool.h>

#include "file/bytes.h"
#include "modprobe-chain.h"
#include "util/util.h"

struct kmod_ctx;

/*
 * @moddir/@name (a text index such as modules.dep) read whole, within KP_CHAIN_MAX_INDEX; a
 * symlink followed inside @root (file/rootfs.h), never on the host, the file opened inside
 * @root's directory (kp_open_regular_in(): pinned, or opened at this use).
 */
int kp_chain_read_text_index(const struct kp_root_dir *root, const char *moddir, const char *name,
			     struct kp_bytes *b, struct kp_err *err);

/*
 * Checks the .bin index @name of @c's release directory before libkmod may read it:
 * absent is fine (libkmod does without it), anything else must be a regular file that
 * passes kp_chain_index_check(), reached on the host as inside the chain's root (libkmod
 * opens it by name: a symlink out of the root is refused). With @keep, the bytes stay in @c
 * (modules.dep.bin, for the look-ups that end there). 0, or -1 with @err.
 */
int kp_chain_check_index(struct kp_chain *c, const char *name, bool keep, struct kp_err *err);

/*
 * The modules.dep.bin line ("PATH: DEP...") of the module @name ('_' name) as @c keeps the
 * index (checked: the bytes libkmod reads), into @buf (@size bytes, NUL-terminated): 1; 0
 * when the index has no such line (or @c keeps none); -1 when it does not fit.
 */
int kp_chain_depbin_line(const struct kp_chain *c, const char *name, char *buf, size_t size);

/*
 * Before a libkmod lookup of @name: the indexes it can reach are checked (once per
 * chain). 0, or -1 with @err.
 */
int kp_chain_check_lookup(struct kp_chain *c, const char *name, struct kp_err *err);

/*
 * What libkmod will read for @c (opened by kp_chain_open() on a release directory with
 * modules.dep.bin), checked first: the root's modprobe.d directories (their entries must be
 * regular files or directories), then, under a root whose files others could swap
 * (kp_kmod_trusted()), a private copy (kp_kmod_copy_open()), then the indexes kmod_new()
 * reaches (modules.dep.bin kept in @c). @paths and @kpaths (KP_CHAIN_CONF_DIRS + 1 each)
 * get the root's configuration directories and those kmod_new() is given (the same, or the
 * copy's), NULL-terminated. 0, or -1 with @err.
 */
int kp_chain_kmod_prepare(struct kp_chain *c, const char **paths, const char **kpaths,
			  struct kp_err *err);

/* modprobe-chain.c, for the text fallback: whether @name is built in, blacklisted. */
bool kp_chain_is_builtin(const struct kp_chain *c, const char *name);
bool kp_chain_is_blacklisted(const struct kp_chain *c, const char *name);
/* Appends module @name (file @file, NULL for none) unless it is there already. */
int kp_chain_add(struct kp_chain *c, size_t *cap, const char *name, const char *file, bool target,
		 struct kp_err *err);
/* The dependencies of a modules.dep line (@list, cut in place) prepended to the chain. */
int kp_chain_add_deps(struct kp_chain *c, size_t *cap, const char *norm, char *list,
		      struct kp_err *err);

/*
 * modprobe-chain.c: libkmod's context for @c, made on the first question the memo (if any)
 * could not answer (libkmod loaded then); NULL with @err.
 */
struct kmod_ctx *kp_chain_ctx(struct kp_chain *c, struct kp_err *err);
/* The module @name ('_' name) of @c's chain, or NULL. */
struct kp_chain_module *kp_chain_find(struct kp_chain *c, const char *name);

/*
 * modprobe-lookup.c: @name (@norm its '_' name) resolved by libkmod, or from the kmod memo
 * while it holds libkmod's answer, into @c's chain (@cap its capacity). 0, or -1 with @err.
 */
int kp_chain_resolve_kmod(struct kp_chain *c, const char *name, const char *norm, size_t *cap,
			  struct kp_err *err);

/* modprobe-chain-text.c: the modules.dep line of @norm, cut (NUL at ':'); NULL if none. */
char *kp_chain_dep_line(struct kp_chain *c, const char *norm, char **deps_out, size_t *deps_len);
/* The text index @name of @c's release directory read whole into @b: 1; absent: 0; else -1. */
int kp_chain_read_index(struct kp_chain *c, const char *name, struct kp_bytes *b,
			struct kp_err *err);
/* @name resolved from the text indexes (modules.dep, modules.alias, built-in aliases). */
int kp_chain_resolve_text(struct kp_chain *c, const char *name, const char *norm, size_t *cap,
			  struct kp_err *err);

#endif
