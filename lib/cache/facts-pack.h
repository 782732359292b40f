/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Inside the facts cache (facts-cache.h): the pack format and the state shared by
 * facts-cache.c (policy: keys, store, open), facts-pack.c (format, reading, lookup),
 * facts-pack-write.c (writer, merge) and facts-cache-admin.c (show, prune, clear).
 * The layout of a pack is described in facts-pack.c.
 */
#ifndef KP_FACTS_PACK_H
#define KP_FACTS_PACK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include <openssl/evp.h>

#include "facts-cache.h"
#include "facts-serial.h"
#include "util/fs-trust.h"
#include "util/io.h"
#include "util/util.h"

#define KP_FC_MAGIC	  "KPFACTS"
#define KP_FC_PACK_MAGIC  "KPPACK\0"
#define KP_FC_HEADER_LEN  72
#define KP_FC_REC_LEN	  128
#define KP_FC_FOOTER_LEN  64
#define KP_FC_KEY_LEN	  32
#define KP_FC_F_CONTENT	  0x100u      /* record flag: the content key is set */
#define KP_FC_TOUCH_EVERY (24 * 3600) /* a hit refreshes a pack's mtime at most this often */
#define KP_FC_PRUNE_EVERY 3600	      /* automatic pruning at most once an hour */
#define KP_FC_TMP_MAX_AGE 3600	      /* a temporary file older than this was left by a crash */
#define KP_FC_ENTRY_MAX	  ((size_t)64 << 20) /* one entry */
#define KP_FC_PACK_MAX	  ((uint64_t)1 << 40)
#define KP_FC_MAX_PACKS	  16 /* more are merged at the end of a run that wrote one */
#define KP_FC_LOAD_PACKS  64 /* a lookup reads at most this many (the newest) */
#define KP_FC_PACK_DIR	  "packs"
#define KP_FC_NAME_LEN	  96
#define KP_FC_WRITE_BUF	  ((size_t)64 << 10)
#define KP_FC_ENC_POOL	  8
#define KP_FC_SPILL_RECS  256 /* records kept in memory while reading: the rest wait in a file */

/* One named pack, its index mapped. */
struct kp_fc_pack {
	int fd;
	unsigned char *map; /* the mapping that holds the index */
	size_t map_len;
	const unsigned char *recs; /* @nrec records */
	const unsigned char *keys; /* @nkeys record numbers, by content key */
	uint64_t nrec, nkeys;
	time_t mtime;
	int used; /* a hit came from it; atomic */
};

/* What this run adds: entries written to an unnamed file as they are made. */
struct kp_fc_rec {
	uint64_t hash;
	uint64_t st[8];
	unsigned char key[KP_FC_KEY_LEN];
	uint64_t off;
	uint32_t len, flags;
};

struct kp_fc_writer {
	int fd;	     /* -1 until the first entry */
	bool failed; /* no more entries this run */
	bool named;  /* @tmp names it (no O_TMPFILE) */
	char tmp[KP_FC_NAME_LEN];
	uint64_t off;	    /* the next entry's offset (written and buffered bytes) */
	unsigned char *buf; /* entries not written yet: one write() per KP_FC_WRITE_BUF bytes */
	size_t blen, bcap;
	struct kp_fc_rec *recs; /* the last @n records (@n < KP_FC_SPILL_RECS when @rfd is open) */
	size_t n, cap;
	int rfd;	   /* an unnamed file the earlier records went to, or -1 (all in @recs) */
	uint64_t nspilled; /* records in @rfd */
};

/* A module waiting to be stored (facts-defer.c). */
struct fc_job {
	struct kp_module *m;
	uint64_t st[8];	     /* the file's state as the reader opened it */
	uint32_t flags;	     /* the entry's (kp_fc_entry_flags()) */
	bool hash_later;     /* compressed: hash the file for a content key when stored */
	bool note;	     /* that key goes to the result cache too (kp_in_note_bytes()) */
	unsigned char state; /* JOB_QUEUED, JOB_RUNNING, JOB_DONE */
};

enum { JOB_QUEUED, JOB_RUNNING, JOB_DONE };

/* The deferred stores: jobs[head..n) in the order the modules were read. Under the lock. */
struct fc_defer {
	pthread_cond_t work; /* a job was queued, or @stop */
	pthread_cond_t done; /* a job finished */
	pthread_t thread;
	bool started, stop;
	struct fc_job *jobs;
	size_t n, cap, head;
	size_t pending; /* jobs not JOB_DONE */
	/*
	 * Each queued module's job: open addressing by the module's address, slot = job + 1
	 * (0: free), the latest job of an address wins; emptied with @jobs.
	 */
	size_t *slots;
	size_t nslots; /* a power of two, more than twice @n; 0 before the first job */
};

/* Bytes of uncompressed modules a run hashes on misses, for their content keys. */
#define KP_FC_PLAIN_HASH_MAX ((uint64_t)64 << 20)

struct kp_facts_cache {
	char *dir;
	int dirfd;	/* O_PATH of @dir; -1: no cache directory (every lookup misses) */
	EVP_MD *sha256; /* fetched on first use: OpenSSL's start-up costs the hook ~1 ms */
	uint32_t build; /* CRC-32 of PACKAGE_VERSION and KP_READER_ID: another build's entries miss
			 */
	pthread_mutex_t lock; /* the pack list's loading and @w */
	bool loaded;	      /* @packs read (atomic acquire) */
	struct kp_fc_pack *packs;
	size_t npacks;
	struct kp_fc_writer w;
	/* encoding buffers (and string tables) kept from entry to entry, one per thread at work */
	struct kp_facts_buf *enc[KP_FC_ENC_POOL];
	size_t nenc;		  /* how many of @enc are free (under @lock) */
	unsigned seq;		  /* temporary file names; atomic */
	struct kp_cache_counts n; /* atomic */
	struct fc_defer defer;
	uid_t euid;		  /* whose files' states are trusted besides root's (fs-trust.h) */
	struct kp_fs_devs devs;	  /* the file systems seen (under @lock) */
	struct kp_sig_memo *memo; /* kp_facts_cache_sig_memo(), made under @lock */
	struct kp_btf_memo *btf_memo;	  /* kp_facts_cache_btf_memo(), made under @lock */
	struct kp_index_memo *index_memo; /* kp_facts_cache_index_memo(), made under @lock */
	struct kp_kmod_memo *kmod_memo;	  /* kp_facts_cache_kmod_memo(), made under @lock */
	/* bytes of uncompressed modules hashed on misses (atomic) */
	uint64_t plain_hashed;
};

static inline void count(uint64_t *v)
{
	__atomic_fetch_add(v, 1, __ATOMIC_RELAXED);
}

/* CRC-32 of PACKAGE_VERSION and KP_READER_ID: entries of another build miss. */
uint32_t kp_fc_build_tag(void);
/* A 64-bit hash of the state, to sort and search records by (the fields are compared too). */
uint64_t kp_fc_state_hash(const uint64_t *v);
/* The read options that change the facts: part of an entry's header and its record. */
uint32_t kp_fc_entry_flags(const struct kp_open_opts *o);
/* An entry's header (CRC field left 0), the CRC over header and payload, the check. */
void kp_fc_make_header(const struct kp_facts_cache *c, unsigned char *h, uint32_t flags,
		       const unsigned char *key, uint64_t file_size, uint64_t payload_len);
uint32_t kp_fc_entry_crc(const unsigned char *h, const unsigned char *payload, size_t len);
bool kp_fc_header_ok(const struct kp_facts_cache *c, const unsigned char *h, size_t len,
		     uint32_t flags, const unsigned char *key, uint64_t file_size);
/* The key in the header of @r's entry. */
void kp_fc_entry_key(const struct kp_fc_rec *r, unsigned char *k);
/* Index records (KP_FC_REC_LEN bytes) and the footer. */
void kp_fc_rec_put(unsigned char *p, const struct kp_fc_rec *r);
bool kp_fc_rec_get(const unsigned char *p, struct kp_fc_rec *r);
void kp_fc_footer_put(const struct kp_facts_cache *c, unsigned char *f, uint64_t nrec,
		      uint64_t index_off, uint64_t nkeys);

/* Opens the pack @name of the directory @dfd and maps its index; 0 or -1 (not a pack). */
int kp_fc_pack_open(const struct kp_facts_cache *c, int dfd, const char *name,
		    struct kp_fc_pack *p);
void kp_fc_pack_close(struct kp_fc_pack *p);
/* The names of the packs in @dfd (and their stat), newest first; -1 when out of memory. */
int kp_fc_list_packs(int dfd, struct kp_dir_file **out, size_t *n);
/* Opens the newest KP_FC_LOAD_PACKS packs once per run (the first lookup). */
void kp_fc_load_packs(struct kp_facts_cache *c);
/*
 * Looks the module up in every pack: by @st (the file's state) or, with @st NULL, by @key.
 * A hit returns the module (and the entry's bytes in @raw when asked, its index record in
 * @rec when not NULL); refused entries are counted and the search goes on.
 */
struct kp_module *kp_fc_lookup(struct kp_facts_cache *c, const uint64_t *st,
			       const unsigned char *key, const char *path,
			       const struct kp_open_opts *opts, uint64_t file_size,
			       unsigned char **raw, struct kp_fc_rec *rec);

/* Appends the entry @p (@len bytes) for @r's state and key; under @c->lock. 0 or -1. */
int kp_fc_writer_add(struct kp_facts_cache *c, struct kp_fc_writer *w, struct kp_fc_rec *r,
		     const unsigned char *p, size_t len);
/* Writes the index and footer after the entries; 0 or -1. */
int kp_fc_writer_finish(struct kp_facts_cache *c, struct kp_fc_writer *w);
/* Names the finished writer's file packs/<time>-<pid>-N.pack; 0 or -1. */
int kp_fc_writer_publish(struct kp_facts_cache *c, struct kp_fc_writer *w);
void kp_fc_writer_close(struct kp_facts_cache *c, struct kp_fc_writer *w);
/* Queues @m, read from a file in the state @st, to be stored later; under no lock. 0, or -1
 * (out of memory, or the cache is ending: the caller stores it now). @note: the content key
 * made with @hash_later goes to the result cache's recorder too (kp_in_note_bytes()). */
int kp_fc_defer(struct kp_facts_cache *c, struct kp_module *m, const uint64_t *st, uint32_t flags,
		bool hash_later, bool note);
/* Stores the job @j (a copy, taken under the lock) now: facts-cache.c. */
void kp_fc_store_job(struct kp_facts_cache *c, const struct fc_job *j);
/* kp_facts_cache_new()/_free(): the queue's set-up, and the end (every job stored). 0/-1. */
int kp_fc_defer_init(struct fc_defer *d);
void kp_fc_defer_finish(struct kp_facts_cache *c);

/* kp_facts_cache_prune() of the trusted facts directory @dfd (facts-cache-admin.c). */
int kp_fc_prune_at(int dfd, uint64_t max_bytes, struct kp_cache_usage *u, struct kp_err *err);
/* The packs directory of the trusted @dfd (O_PATH), made when @create; or -1. */
int kp_fc_packs_dir(int dfd, bool create);

/* More than KP_FC_MAX_PACKS packs: the smallest are merged into one (under a lock file). */
void kp_fc_merge_packs(struct kp_facts_cache *c);

#endif
