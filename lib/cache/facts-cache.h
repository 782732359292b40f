/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The facts cache: what reading a module file produced (struct kp_module, serialised by
 * facts-serial-*.c), so a module seen before is neither decompressed nor parsed again. An
 * entry is found by the file's state (device, inode, size, mtime, ctime, mode: a warm run
 * only stat()s each module) and, for compressed modules, by the SHA-256 of the file's bytes
 * as they are on disk (a copy of the module elsewhere). A state is used, and stored, only
 * when util/fs-trust.h trusts it and it did not change less than a second before it was
 * read; any other module is looked up by the SHA-256 of its bytes and never stored (see
 * facts-cache.c). Each run that read modules writes
 * the entries it made as one pack, DIR/facts-v<KP_FACTS_FORMAT>/packs/<time>-<pid>-N.pack
 * (entries, then an index by state and by content key; layout in facts-cache.c): one file
 * per run, named once complete, so concurrent runs see a whole pack or none.
 *
 * An entry is used only when its index record's CRC, its header (magic, format, build,
 * read options, key, file size, length) and CRC all match and its payload decodes exactly;
 * anything else is a miss and the file is read as without the cache. Only successful reads
 * are stored; errors are re-read. The cache directory must pass the trust test and a pack
 * must be the user's or root's, not writable by others (cache/trusted-dir.h): a CRC is no
 * authentication.
 */
#ifndef KP_FACTS_CACHE_H
#define KP_FACTS_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "read/module.h"

/*
 * Bump when the payload layout (facts-serial-*.c) changes or when any reader in lib/read/
 * puts different facts into a struct kp_module for the same bytes (a bug fix, a new
 * field): old entries then live in another directory and are never read. A new release
 * (PACKAGE_VERSION) also never trusts an older one's entries (the header's build tag).
 */
#define KP_FACTS_FORMAT 7

#define KP_FACTS_DEFAULT_MAX ((uint64_t)256 << 20)

enum kp_cache_scope {
	KP_CACHE_USER,	 /* $XDG_CACHE_HOME/kopolicy, else ~/.cache/kopolicy */
	KP_CACHE_SYSTEM, /* /var/cache/kopolicy (the hook), when root or readable */
};

/*
 * The cache directory for @scope into @buf (..../facts-vN): KOPOLICY_CACHE_DIR wins over
 * both. Returns 0, 1 when the cache is off (KOPOLICY_CACHE=off|0|no), -1 when no
 * directory can be named (no $HOME) or it does not fit @len.
 */
int kp_facts_cache_dir(enum kp_cache_scope scope, char *buf, size_t len);
/*
 * kp_facts_cache_dir(KP_CACHE_USER) for the effective user (cache-home.c): when the directory
 * comes from XDG_CACHE_HOME or HOME (not KOPOLICY_CACHE_DIR, which names one on purpose) and
 * the trust test refuses its cache root (trusted-dir.h: another user's, as under sudo -E,
 * sudo keeping HOME or su without -), the effective user's own, under the home directory the
 * password database gives (root: /root/.cache/kopolicy), never the environment's. @why then
 * says which directory was not used and why (else ""). Same returns.
 */
int kp_facts_cache_dir_own(char *buf, size_t len, char *why, size_t wlen);

struct kp_facts_cache;
/* A cache over @dir (created on the first store); NULL when out of memory. */
struct kp_facts_cache *kp_facts_cache_new(const char *dir);
/*
 * Frees @c. After a run that stored entries: names its pack, merges the smallest packs
 * when there are more than 16, and prunes now and then (see kp_facts_cache_prune).
 */
void kp_facts_cache_free(struct kp_facts_cache *c);

/*
 * kp_module_open_with() through the cache (the module set calls it when its read options
 * name a cache): a hit builds the module from its entry; a miss reads the file and stores
 * the result, later with @opts->defer_store (the module is then pending: see
 * kp_facts_cache_settle()). Safe from several threads at once. Same returns as
 * kp_module_open_with().
 */
int kp_facts_cache_open(struct kp_facts_cache *c, const char *path, const struct kp_open_opts *opts,
			struct kp_decoders *dec, struct kp_module **out, struct kp_err *err);
/*
 * True when kp_facts_cache_open() looks modules up by their file's state (a cache directory
 * with packs): a caller that stat()s the files anyway (the module set, to order the reading)
 * then records that stat() (kp_in_stat()) and passes it to kp_facts_cache_open_stat().
 */
bool kp_facts_cache_wants_state(struct kp_facts_cache *c);
/* kp_facts_cache_open() given @pre, the file's kp_in_stat() taken before (NULL: none). */
int kp_facts_cache_open_stat(struct kp_facts_cache *c, const char *path, const struct stat *pre,
			     const struct kp_open_opts *opts, struct kp_decoders *dec,
			     struct kp_module **out, struct kp_err *err);

/*
 * The read phase is over: the modules read with opts->defer_store waiting to be stored are
 * stored by a thread of the cache while the caller goes on (graph, simulation, output use
 * one CPU; encoding and writing the entries costs a cold run ~12 % of its CPU). A module
 * freed before its turn is stored by kp_module_free(); kp_facts_cache_free() stores the
 * rest. Without a thread (pthread_create() failed) the same happens without one.
 */
void kp_facts_cache_store_pending(struct kp_facts_cache *c);
/*
 * Before @m, read through @c with defer_store, is freed: a store of it still pending is made
 * now, or after the cache's thread that is storing it. Nothing for a module that is not
 * pending (stored, never queued, or @c NULL). The cache, not the module, keeps which modules
 * wait. Safe from several threads at once.
 */
void kp_facts_cache_settle(struct kp_facts_cache *c, const struct kp_module *m);
/*
 * Every module waiting to be stored is stored when this returns (the caller stores queued
 * ones beside the cache's thread): the content keys those stores make reach the result
 * cache's manifest (file/inputs.h, kp_in_note_bytes()) before the manifest is written.
 * Nothing when @c is NULL or nothing waits. Not while modules are still being read.
 */
void kp_facts_cache_wait_stored(struct kp_facts_cache *c);
/* True while @m waits in @c to be stored (tests). */
bool kp_facts_cache_is_pending(struct kp_facts_cache *c, const struct kp_module *m);

struct kp_sig_memo;
/*
 * The signature verdicts and kernel-image certificates kept in @c's directory
 * (cache/sig-memo.h), made on the first call and written by kp_facts_cache_free(); NULL when
 * out of memory. Without a trusted directory it remembers for this run only.
 */
struct kp_sig_memo *kp_facts_cache_sig_memo(struct kp_facts_cache *c);
struct kp_btf_memo;
/*
 * The module BTF verdicts of @scope kept with the facts (cache/btf-memo.h), made on the
 * first call and written when @c is freed; NULL when out of memory or when this cache's
 * memo is another scope's (one per run). @in_place: searched in its file, not read whole
 * (kp_btf_memo_open(), for a run that looks up a few verdicts: the hook); the first call
 * decides.
 */
struct kp_btf_memo *kp_facts_cache_btf_memo(struct kp_facts_cache *c, const unsigned char *scope,
					    bool in_place);
/* For KOPOLICY_CACHE_STATS: the counts of the BTF memo, zero when there is none. */
struct kp_btf_memo_counts;
void kp_facts_cache_btf_counts(struct kp_facts_cache *c, struct kp_btf_memo_counts *out);
struct kp_index_memo;
/*
 * The depmod indexes that passed the hook's check, kept in @c's directory
 * (cache/index-memo.h), made on the first call; NULL when out of memory. Without a trusted
 * directory it remembers nothing.
 */
struct kp_index_memo *kp_facts_cache_index_memo(struct kp_facts_cache *c);
/* For KOPOLICY_CACHE_STATS: the counts of the index memo, zero when there is none. */
struct kp_index_memo_counts;
void kp_facts_cache_index_counts(struct kp_facts_cache *c, struct kp_index_memo_counts *out);
struct kp_kmod_memo;
/*
 * libkmod's answers to the hook asked about @question (the module name), kept in @c's
 * directory (cache/kmod-memo.h), made on the first call and stored when @c is freed; NULL
 * when out of memory or when this cache's memo is another question's (one per run). Without
 * a trusted directory it remembers for this run only.
 */
struct kp_kmod_memo *kp_facts_cache_kmod_memo(struct kp_facts_cache *c, const char *question);
/* For KOPOLICY_CACHE_STATS: the counts of the libkmod memo, zero when there is none. */
struct kp_kmod_memo_counts;
void kp_facts_cache_kmod_counts(struct kp_facts_cache *c, struct kp_kmod_memo_counts *out);

struct kp_cache_counts {
	uint64_t hits;	    /* facts from an entry */
	uint64_t stat_hits; /* of which the stat index named the content (file not read) */
	uint64_t misses;    /* read from the file */
	uint64_t stored;    /* entries written */
	uint64_t rejected;  /* entries found but refused (corrupt, foreign, truncated) */
};
void kp_facts_cache_counts(const struct kp_facts_cache *c, struct kp_cache_counts *out);

struct kp_cache_usage {
	uint64_t entries; /* facts entries (index records) */
	uint64_t packs;	  /* pack files */
	uint64_t bytes;	  /* disk use of the packs (allocated blocks) */
	uint64_t removed; /* prune/clear: files removed */
	/* the signature memo in @dir's sigs/ (sig-memo.h): files, bytes, verdicts, images */
	uint64_t sig_files, sig_bytes, sig_verdicts, sig_images;
	/* sig_files by kind (sig-memo.h): image states, module BTF, depmod indexes, libkmod */
	uint64_t sig_states, sig_btf, sig_indexes, sig_kmod;
};
/* Counts what @dir holds. 0, or -1 with @err (a missing directory is an empty cache). */
int kp_facts_cache_usage(const char *dir, struct kp_cache_usage *u, struct kp_err *err);
/*
 * Removes the least recently used packs (by mtime; a hit refreshes its pack's at most once
 * a day) until @dir uses at most @max_bytes, and stale temporary files. With
 * kp_facts_cache_prune(), the signature memo counts in @max_bytes first (its oldest files
 * go beyond it), the packs get what it leaves.
 */
int kp_facts_cache_prune(const char *dir, uint64_t max_bytes, struct kp_cache_usage *u,
			 struct kp_err *err);
/* Removes every pack (and the directory itself). */
int kp_facts_cache_clear(const char *dir, struct kp_cache_usage *u, struct kp_err *err);

/*
 * Removes the directories older releases left beside @dir (facts-v1 ... facts-v<N-1>: a
 * format that is never read again) with everything in them. @names gets their names
 * ("facts-v1"), space-separated, "" when there was none; @removed the files removed. 0.
 */
int kp_facts_cache_clear_obsolete(const char *dir, char *names, size_t len, uint64_t *removed);

/* KOPOLICY_CACHE_MAX_SIZE (K/M/G suffixes) or KP_FACTS_DEFAULT_MAX. */
uint64_t kp_facts_cache_max_size(void);

#endif
