/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The base cache: what parsing the target kernel's files produced (the exports of
 * Module.symvers, the kernel configuration), kept in a compact form that a later run maps
 * and uses as it lies, without parsing (base-symtab.h, base-kvtab.h). `kopolicy hook` runs
 * on every module load and spent two thirds of its time parsing the same 1.9 MB
 * Module.symvers and 9,500-line config on every call.
 *
 * An entry is keyed by its kind ("symvers", "kconfig"), the format of this cache, the
 * build (PACKAGE_VERSION and a digest of the parsers' sources, base-id.h) and each input
 * file's identity, with the facts cache's trust rules (util/fs-trust.h):
 *   - an input whose stat() state names its bytes (a local file system, owned by root or
 *     the effective user, not group/other-writable) and settled when it was opened, before
 *     it was read (kp_state_settled(): not changed within a second before) is known by its
 *     state (device, inode, size, mtime, ctime, mode): a hit costs a stat;
 *   - any other input is read whole and known by the SHA-256 of those bytes, and a miss
 *     parses exactly the bytes that were hashed: what another user can write is never
 *     trusted by its state, and an entry always describes the bytes of its key.
 *
 * Entries are files DIR/<key>.base (DIR: the cache root's base-v<FORMAT>/), written whole
 * and renamed into place (replacing a damaged or refused one), so concurrent runs (udev
 * loads modules from several threads at boot) see a whole entry or none, and take no lock. An entry
 * is used only when the directory passes the trust test (trusted-dir.h), the file is regular, owned
 * by the effective user or root and not writable by others, and its header (magic, format, build,
 * the whole key, length) and the header's CRC-32 match; anything else is a miss and the inputs are
 * parsed as without the cache. The payload is not checksummed by the entry (2 MB of CRC-32 would
 * cost the hook a sixth of its time): each table checks what a lookup touches (its index, each
 * record it reads, base-symtab.h, base-kvtab.h; a reader of the whole symvers table its one CRC
 * and its index's structure instead, then keeps the mapping as its kernel base), and a damaged
 * table is dropped (kp_base_cache_drop()) and parsed again. A CRC is no authentication: the
 * permissions are (see man kopolicy, CACHE TRUST).
 */
#ifndef KP_BASE_CACHE_H
#define KP_BASE_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "util/util.h"

/* Bump when the layout of an entry or of a payload (base-symtab.c, base-kvtab.c) changes. */
#define KP_BASE_CACHE_FORMAT 1
#define KP_BASE_CACHE_DIR    "base-v1"
/* Entries kept: the oldest beyond this are removed when one is stored. */
#define KP_BASE_CACHE_KEEP 32

/* One input file of a derivation, opened once; its state or its bytes name it. */
struct kp_base_input {
	int fd;
	struct stat st;	    /* as opened */
	bool trusted;	    /* known by its state (see above) */
	bool changed;	    /* its state moved while it was read: a derivation is not stored */
	unsigned char *raw; /* its bytes as on disk (NULL until read) */
	size_t len;
	int fs_class; /* enum kp_fs_class of what was opened, -1 unknown */
	/*
	 * Set by the caller (kp_base_input_vouch()): the input is known by this identity and
	 * its state, not by its state alone nor its bytes.
	 */
	char identity[64];
};

/*
 * Opens @path (a regular file, kp_open_regular()) and decides how it is known. 0, or -1 with
 * @err (as kp_open_regular(): errnum ENOENT when missing). Close with kp_base_input_close().
 */
int kp_base_input_open(struct kp_base_input *in, const char *path, struct kp_err *err);
/* The same for @path under @root (NULL: none), opened inside it as kp_open_regular_in(). */
struct kp_root_dir;
int kp_base_input_open_in(struct kp_base_input *in, const struct kp_root_dir *root,
			  const char *path, struct kp_err *err);
/*
 * Reads the input's bytes as they are on disk from its descriptor (at most @max bytes:
 * EFBIG beyond), once. A trusted input's state is checked again afterwards: when it moved,
 * @in->changed is set. 0, or -1 with @err.
 */
int kp_base_input_read(struct kp_base_input *in, size_t max, struct kp_err *err);
void kp_base_input_close(struct kp_base_input *in);
/*
 * This boot's id (random/boot_id: proc_do_uuid(), one per boot) from @root's (NULL: the
 * host's) proc/sys/kernel/random/boot_id into @buf, only when that file is the kernel's own
 * (procfs: nobody can write it). 0, or -1.
 */
int kp_boot_id(const struct kp_root_dir *root, char *buf, size_t size);
/*
 * The caller knows what names the input's bytes: @id (at most 63 bytes), with its size,
 * device and inode. For a file of the running kernel (procfs/sysfs, KP_FS_KERNEL) whose
 * bytes cannot change while the kernel runs, @id is the boot's id (/proc/sys/kernel/random/
 * boot_id, itself read from procfs): no read, no hash. 0, or -1 (@id too long, or the input
 * is not on a kernel file system).
 */
int kp_base_input_vouch(struct kp_base_input *in, const char *id);

/* The key of a derivation: what it depends on, compared whole when an entry is found. */
#define KP_BASE_MAX_INPUTS 4
#define KP_BASE_KEY_LEN	   (16 + 80 * KP_BASE_MAX_INPUTS)
struct kp_base_key {
	/* the kind (16 bytes), then per input its state or the SHA-256 and size of its bytes */
	unsigned char material[KP_BASE_KEY_LEN];
	unsigned char id[16]; /* a digest of the material: the entry's file name */
	bool storable;	      /* false: an input moved while it was read */
};

/*
 * The key of @kind ("symvers", "kconfig"; at most 15 bytes) over @n (at most
 * KP_BASE_MAX_INPUTS) inputs: each trusted one by its state, each other one by the SHA-256
 * of its bytes (read here, at most @max bytes). 0, or -1 with @err.
 */
int kp_base_key_make(struct kp_base_key *k, const char *kind, struct kp_base_input *const *in,
		     size_t n, size_t max, struct kp_err *err);

/* A payload mapped from an entry: read-only, valid until kp_base_map_release(). */
struct kp_base_map {
	const unsigned char *data;
	size_t len;
	void *addr; /* the mapping, NULL for a payload held in memory */
	size_t maplen;
};
void kp_base_map_release(struct kp_base_map *m);

struct kp_base_cache;
/*
 * The cache under the cache root @root (the directory holding facts-vN/): entries in
 * ROOT/base-v1/, which is made (0755) on the first store. NULL when out of memory. The
 * directory is opened, under the trust test, on first use; a refused one is not used.
 */
struct kp_base_cache *kp_base_cache_new(const char *root);
void kp_base_cache_free(struct kp_base_cache *c);

/*
 * The payload stored under @k, mapped and checked: 1 (a hit, @m filled), 0 (a miss: none,
 * or one that fails a check, counted as rejected). @c NULL: 0.
 */
int kp_base_cache_get(struct kp_base_cache *c, const struct kp_base_key *k, struct kp_base_map *m);
/*
 * Stores @len bytes of @payload under @k (nothing when !@k->storable or @c is NULL), then
 * removes the oldest entries beyond KP_BASE_CACHE_KEEP. 0 stored, -1 not stored (a
 * directory that cannot be made or written: the run goes on without it).
 */
int kp_base_cache_put(struct kp_base_cache *c, const struct kp_base_key *k, const void *payload,
		      size_t len);

/* The entry of @k is damaged (its table said so): removed, counted as refused. */
void kp_base_cache_drop(struct kp_base_cache *c, const struct kp_base_key *k);

struct kp_base_counts {
	uint64_t hits;	   /* payloads used from an entry */
	uint64_t misses;   /* parsed from the inputs */
	uint64_t stored;   /* entries written */
	uint64_t rejected; /* entries found but refused (damaged, foreign, untrusted file) */
};
void kp_base_cache_counts(const struct kp_base_cache *c, struct kp_base_counts *out);
/* Counts a miss (the caller parsed the inputs). */
void kp_base_cache_note_miss(struct kp_base_cache *c);

/* What ROOT/base-v1 holds (kopolicy cache show, prune). */
struct kp_base_usage {
	uint64_t entries;
	uint64_t bytes;	  /* allocated on disk */
	uint64_t removed; /* prune: files removed */
};
/* Counts the entries under the cache root @root. 0, or -1 with @err (refused directory). */
int kp_base_cache_usage(const char *root, struct kp_base_usage *u, struct kp_err *err);
/*
 * Removes the least recently used entries (by mtime, which a hit refreshes at most once an
 * hour) until they use at most @max_bytes, and stale temporary files. 0, or -1 with @err.
 */
int kp_base_cache_prune(const char *root, uint64_t max_bytes, struct kp_base_usage *u,
			struct kp_err *err);

/* Removes every entry and the directory (kopolicy cache clear). 0, or -1 with @err. */
int kp_base_cache_clear(const char *root, uint64_t *removed, struct kp_err *err);

#endif
