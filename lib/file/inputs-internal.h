/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The inputs manifest's shared parts: its record encoding and the recorder's state
 * (inputs.c has the recorder and the wrappers, inputs-note.c tells what a look-up says,
 * inputs-record.c keeps the records, inputs-stream.c hands them to the result cache,
 * inputs-check.c checks a stored manifest, inputs-precheck.c looks up a large one's entries
 * from several threads first, inputs-state.c tells states and the digests that stand for
 * them).
 * Internal to lib/file/inputs*.c.
 */
#ifndef KP_FILE_INPUTS_INTERNAL_H
#define KP_FILE_INPUTS_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "util/content-hash.h"
#include "util/fs-trust.h"

struct evp_md_st;

#define CONTENT_MAX 65536 /* a pseudo-file recorded by its bytes (/proc/cmdline) */
#define MEMO	    64	  /* digests remembered by state: a file stat()ed, then opened */
#define MAGIC	    "KPMANIF4"

enum kind {
	K_STATE = 1,   /* stat() gave a state: dev, ino, size, mtime, ctime, mode */
	K_ABSENT = 2,  /* stat() failed with errno @err */
	K_CONTENT = 3, /* the bytes of a pseudo-file */
	K_HASHED = 4,  /* a state and the SHA-256 of the file's bytes (a state not trusted) */
	/*
	 * A trusted state and the SHA-256 of the regular file's bytes: the state decides,
	 * and when it changed (a file rewritten with the same bytes) the bytes do.
	 */
	K_SUMMED = 5,
	/*
	 * A directory's state and the SHA-256 of its entries' sorted names and types: the
	 * state decides, and when it changed (files renamed over others) the listing does.
	 */
	K_LISTED = 6,
	/*
	 * A module's trusted state and the SHA-256 of its bytes the facts cache keyed its
	 * facts by (kp_in_note_bytes()): the state decides, and when it changed (touched,
	 * reinstalled with the same bytes) the bytes do, within a replay's budget.
	 */
	K_KEYED = 7
};

/* An entry's flags (the byte after its kind). */
#define F_FOLLOW 1 /* stat(), not lstat() */
#define F_LOCAL	 2 /* on a file system whose stat() the kernel keeps (fs-trust.h) */

/* One input as recorded (its encoding: see put_entry()). */
struct entry {
	const char *path;
	const unsigned char *rec; /* the record in a manifest being checked (walk()) */
	unsigned char kind, flags;
	int err;
	uint64_t st[8];
	const unsigned char *content;
	size_t clen;
};

#define REC_HEAD 90 /* kind, flags, path length, err, 8 state fields, content length */

#define KP_INPUTS_PATH_MAX 4096 /* a recorded path's length is below this */

/* A module's state and the SHA-256 of its bytes (kp_in_note_bytes()). */
struct keyed {
	uint64_t st[8];
	unsigned char h[KP_CONTENT_HASH_LEN];
};

/*
 * The manifest is encoded as it is recorded (no structure or string per entry: a whole
 * tree's run records ~5,000): into a buffer of a fixed size that is written out to the
 * spill file whenever the next record does not fit, so the records' memory does not grow
 * with the number of inputs. A table of (hash, offset) drops exact duplicates (a file
 * stat()ed, then opened in the same state); a hash that matches is only a candidate, the
 * record's bytes are compared, in the buffer or read back from the spill file.
 */
struct kp_inputs {
	pthread_mutex_t lock;
	int spill;	    /* the file full buffers are written to, or -1 (the buffer grows) */
	uint64_t spilled;   /* bytes of records in it: the first ones, whole */
	unsigned char *buf; /* the records after those, whole */
	size_t len, cap;
	size_t bufmax; /* the buffer's size when there is a spill file */
	uint64_t n;    /* records */
	uint32_t *tab; /* pairs: 32 bits of the hash, offset + 1 in the records (0: free slot) */
	size_t tcap;   /* slots, a power of two, at most 3/4 taken */
	struct timespec start;
	const char *uncacheable; /* why, or NULL */
	uid_t euid;		 /* whose files' states are trusted (besides root's) */
	struct kp_fs_devs devs;	 /* the file systems seen (under @lock) */
	/* the last digests of trusted states (under @lock): one state, one digest */
	struct {
		uint64_t st[8];
		unsigned char h[KP_CONTENT_HASH_LEN];
	} memo[MEMO];
	unsigned int nmemo, memo_next;
	/* module digests by state (under @lock): open addressing, a free slot's mode is 0 */
	struct keyed *keyed;
	size_t nkeyed, kcap;
	/* SHA-256 for the digests, fetched on the first one (kp_inputs_md()): owned, or NULL */
	struct evp_md_st *md;
};

/*
 * Walks the manifest @m (@len bytes): calls @fn(@arg, entry) on each decoded entry (its
 * path in a buffer of the walk's, valid during the call); the number of entries, or -1 when
 * malformed or @fn said no (inputs-check.c).
 */
long kp_inputs_walk(const unsigned char *m, size_t len,
		    bool (*fn)(void *arg, const struct entry *e), void *arg);

/*
 * The entry of the manifest @m (@len bytes) at @off decoded into @e, its path copied into
 * @path (KP_INPUTS_PATH_MAX bytes; NULL: only checked, @e->path is NULL); the record's
 * length, or -1 when it is malformed (inputs-check.c).
 */
long kp_inputs_decode(const unsigned char *m, size_t len, size_t off, char *path, struct entry *e);

/*
 * The entry count the head of the manifest @m (@len bytes) says, into *@count: 0, or -1 when
 * that is no manifest's head or a count its bytes cannot hold (inputs-check.c).
 */
int kp_inputs_head_count(const unsigned char *m, size_t len, uint64_t *count);

/*
 * The offsets of the entries of the manifest @m (@len bytes) into @off (room for the count
 * its head says), *@n of them: those before the first malformed one. As kp_inputs_walk()
 * without a callback, without copying the paths: the number of entries, or -1 when @m is
 * malformed (inputs-check.c).
 */
long kp_inputs_offsets(const unsigned char *m, size_t len, size_t *off, size_t *n);

/* What looking up an entry says (kp_inputs_check_entry()). */
enum kp_inputs_verdict {
	V_UNCHECKED = 0, /* not looked up */
	V_HOLDS = 1,
	V_FAILS = 2,
	/* its state changed, not its type, permissions or size: its digest may still hold */
	V_DIGEST = 3
};

/*
 * The entry @e looked up as it is now (its bytes for K_CONTENT, else its stat() into *@st
 * and @v; the file system's class for F_LOCAL, through @devs; the bytes of a K_HASHED
 * entry whose state held). Nothing but @devs is written: several threads may look up
 * entries at once, each with its own @devs (inputs-check.c).
 */
enum kp_inputs_verdict kp_inputs_check_entry(const struct entry *e, struct kp_fs_devs *devs,
					     struct stat *st, uint64_t v[8]);

/* A manifest's entries looked up beforehand (kp_inputs_precheck()). */
struct kp_inputs_prechecked {
	size_t n;		/* entries, up to the first malformed one */
	size_t *off;		/* each one's offset in the manifest */
	unsigned char *verdict; /* each one's enum kp_inputs_verdict */
	bool whole;		/* the manifest is well formed: kp_inputs_walk() would say @n */
};

/*
 * The entries of the manifest @m (@len bytes) looked up from kp_inputs_check_threads(@jobs)
 * threads (kp_inputs_check_entry(), each thread with its own table of file systems, empty
 * at its start), in slices handed out in the manifest's order, into *@pc (released with
 * kp_inputs_prechecked_release()). With @stop, an entry after one that fails may be left
 * V_UNCHECKED (the threads stop past it). 0, or -1 when nothing was looked up (a small
 * manifest, one thread, a malformed head, no memory; nothing to release): the caller looks up
 * every entry itself (inputs-precheck.c).
 */
int kp_inputs_precheck(const unsigned char *m, size_t len, unsigned jobs, bool stop,
		       struct kp_inputs_prechecked *pc);
void kp_inputs_prechecked_release(struct kp_inputs_prechecked *pc);

/* Marks the run uncacheable for @why unless it is already (the first reason stays). */
void kp_inputs_mark(struct kp_inputs *in, const char *why);

/* Appends @e's encoding unless the very same entry is there already (inputs-record.c). */
void kp_inputs_add(struct kp_inputs *in, const struct entry *e);

/* Twice the slots of the module digests (under @in->lock); 0 or -1. */
int kp_inputs_keyed_grow(struct kp_inputs *in);

/*
 * The class of the file system holding what @st describes (fs-trust.h): from the table of
 * file systems seen, else fstatfs(@fd) when it is open (>= 0), else statfs(@path); -1 when
 * that fails or @path changed meanwhile (inputs-note.c).
 */
int kp_inputs_fs_class(struct kp_inputs *in, const char *path, bool follow, int fd,
		       const struct stat *st);

/*
 * Records the result of a stat() of @path: @r (0 or -1 with @errnum) and @st; @fd is the
 * file when it was opened (else -1) (inputs-note.c).
 */
void kp_inputs_note(struct kp_inputs *in, const char *path, bool follow, int r, int errnum,
		    const struct stat *st, int fd);

/* The slot of the state @v in @tab (@cap slots): its own, else the free one where it goes. */
size_t kp_inputs_keyed_slot(const struct keyed *tab, size_t cap, const uint64_t *v);

/* The state @st (kp_file_state()) changed less than KP_SETTLE_SECONDS before @start. */
bool kp_inputs_state_too_new(const uint64_t *st, const struct timespec *start);

/*
 * SHA-256 fetched once for @in's digests (EVP_sha256() would look it up again for each of
 * a tree's ~900 directories), NULL when the fetch failed: EVP_sha256() then
 * (inputs-note.c).
 */
const struct evp_md_st *kp_inputs_md(struct kp_inputs *in);

/*
 * The digest of what @fd (open on a file that fstat() says is in the state @v) holds into
 * @h: its bytes (a regular file), its listing (a directory); then its state checked again
 * (changed while read: -1). @md: SHA-256 as fetched (NULL: EVP_sha256()). 0 or -1.
 */
int kp_inputs_digest_fd(int fd, const struct stat *st, const uint64_t *v,
			const struct evp_md_st *md, unsigned char h[KP_CONTENT_HASH_LEN]);

/*
 * @path (stat()ed, or lstat()ed unless @follow) opened again, when it still is the file in
 * the state @v: the descriptor, else -1.
 */
int kp_inputs_open_same(const char *path, bool follow, const uint64_t *v);

#endif
