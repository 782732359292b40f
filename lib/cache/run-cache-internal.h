/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Inside the result cache: the entry's layout and the command's state shared by run-cache.c
 * (made, storing, the previous entry read back), run-cache-capture.c (recording the output
 * and writing the entry), run-cache-key.c (the key) and run-cache-replay.c (replaying an
 * entry), and the files of runs-vN/ (run-cache-files.c).
 */
#ifndef KP_RUN_CACHE_INTERNAL_H
#define KP_RUN_CACHE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "file/inputs.h"
#include "run-cache.h"

/*
 * An entry, little-endian: its output written by run-cache-capture.c, the rest by run-cache.c,
 * read back by run-cache-replay.c.
 *
 *   header     64 bytes: magic, format, exit status, output length, key length, manifest
 *              length, store length (0: none; entries before it have 0 there), CRC-32 of
 *              the whole file (its own field 0)
 *   output     chunks in the order they were written: stream (1 stdout, 2 stderr), length
 *              (32 bits), bytes; a stream's consecutive writes are one chunk (its length
 *              written into its head once closed), so that a run that wrote only to stdout
 *              leaves one chunk, which a splice reads in place (kp_run_cache_previous_output())
 *   key        the bytes kp_rc_build_key() made (compared whole: the file name is only its hash)
 *   manifest   inputs.h's
 *   store      what the command kept for a later run's miss, opaque; kept as pieces
 *              (kp_run_cache_keep_pieces()), written from where they lie
 */
#define MAGIC	"KPRUNS1"
#define HDR_LEN 64

/* A growing byte string of length-prefixed fields. */
struct kbuf {
	unsigned char *p;
	size_t len, cap;
};
struct cap {
	struct kp_run_cache *rc;
	int fd; /* the real descriptor */
	unsigned char stream;
	char *vbuf; /* stdout's buffer: glibc ignores a size given without one */
};

struct kp_run_cache {
	int dfd;       /* runs-vN, a trusted directory (trusted-dir.h), O_PATH */
	char name[32]; /* <hash>.run */
	struct kbuf key;
	/* recording */
	struct kp_inputs *in;
	struct cap cap_out, cap_err;
	FILE *orig_out, *orig_err, *out, *err;
	int tfd;       /* the entry being written (unnamed), or -1 */
	char tmp[64];  /* its temporary name when O_TMPFILE is refused */
	int ifd;       /* the inputs recorder's spill file (unnamed), or -1 */
	char itmp[64]; /* its temporary name when O_TMPFILE is refused */
	uint64_t olen; /* output bytes (chunks) so far */
	uint32_t crc;  /* of what follows the header, up to the open chunk's head */
	unsigned char *buf;
	size_t blen;
	uint64_t flushed; /* bytes of the entry written out of @buf or past it */
	/*
	 * The output chunk still growing: a stream's consecutive writes are one chunk (a
	 * splice reads the stdout bytes of a one-chunk output in the mapping, not joined into
	 * a copy), its length written into its head (at @ohead) once it is closed.
	 */
	unsigned char ostream; /* 1 stdout, 2 stderr, 0 none open */
	uint64_t ohead;	       /* its head's offset in the entry */
	uint32_t onbytes;      /* its bytes so far */
	uint32_t ocrc;	       /* their CRC */
	pthread_mutex_t lock;  /* stdout and stderr may be written from two threads at once */
	bool broken;	       /* a write failed: nothing is stored */
	size_t ninputs;
	bool rehash_over; /* the replay gave up: more than KP_INPUTS_REHASH_MAX to hash */
	char note[256];	  /* what a replay did, for KOPOLICY_CACHE_STATS */
	/* the store for this run's entry (kp_run_cache_keep_pieces()), @nkeep bytes in all */
	struct kp_rc_piece keepv[KP_RC_PIECES];
	size_t nkeepv;
	unsigned char *keep_own[KP_RC_PIECES]; /* the buffers they lie in, but the previous store */
	size_t nkeep_own;
	size_t nkeep;
	/* the store of the entry a miss found (kp_run_cache_previous()), read in @prev_map */
	const unsigned char *prev;
	size_t nprev;
	void *prev_map; /* that entry mapped for the run (kp_run_cache_free() unmaps it) */
	size_t nprev_map;
	bool prev_quiet; /* its run wrote nothing to stderr (kp_run_cache_previous_quiet()) */
	/* its output chunks in @prev_map, and their stdout bytes joined when asked for */
	const unsigned char *prev_out;
	size_t nprev_out;
	const unsigned char *prev_stdout; /* kp_run_cache_previous_output()'s answer */
	size_t nprev_stdout;
	unsigned char *prev_joined; /* its copy when the chunks were many, or NULL */
	bool prev_joined_done;	    /* asked once */
	/* the inputs of that entry that changed (kp_run_cache_changes()), when @prev is set */
	struct kp_inputs_changed changed;
	char keep_note[1536]; /* the command's addition to the note */
	/* the manifest of that entry, when @prev is set (kp_run_cache_carry()), in @prev_map */
	const unsigned char *prev_m;
	size_t nprev_m;
	/* that manifest carried over (kp_inputs_carry()), compared when this run's is stored */
	bool carry_asked;
	unsigned char *carried; /* NULL: not carried, @carry_why says why */
	size_t ncarried_len;	/* its bytes */
	size_t ncarried;	/* its entries replaced */
	const char *carry_why;
	struct kbuf fresh_m; /* this run's manifest as stored, when @carry_asked */
	/* the carried manifest is the one stored (kp_run_cache_use_carried()) */
	bool use_carried;
};

/* Appends @len bytes as one field (32-bit length, bytes); 0 or -1. */
int kp_kbuf_add(struct kbuf *k, const void *p, size_t len);

/* Everything besides the inputs that decides the output; 0, or -1 with @why (not cacheable). */
int kp_rc_build_key(struct kp_run_cache *rc, int argc, char **argv, char *why, size_t wlen);
/* The buffer glibc gives stdout (_IO_file_doallocate()): st_blksize when below BUFSIZ. */
size_t kp_rc_out_buffer_size(void);

/*
 * The entry being written (run-cache-capture.c), after its output: @len bytes appended,
 * buffered (a piece larger than the buffer written straight from @p); the CRC follows.
 */
void kp_rc_append(struct kp_run_cache *rc, const void *p, size_t len);
/*
 * The @n pieces @v (at most 2 + KP_RC_PIECES) appended after what is buffered, written with
 * it in one writev() from where they lie; the CRC follows.
 */
void kp_rc_append_pieces(struct kp_run_cache *rc, const struct kp_rc_piece *v, size_t n);
/*
 * The open output chunk, if any, closed: its length written into its head, the CRC of head
 * and bytes combined into @rc->crc.
 */
void kp_rc_close_chunk(struct kp_run_cache *rc);
/* What is buffered written out; 0, or -1 when that or an earlier write failed (@rc->broken). */
int kp_rc_flush(struct kp_run_cache *rc);

/* An unnamed file in @dfd, else a named temporary one (@tmp gets its name); fd or -1. */
int kp_rc_tmpfile(int dfd, char *tmp, size_t len);
/* Writes the header @h (64 bytes) at offset 0 of @fd, whose size must be @size; 0 or -1. */
int kp_rc_finish_entry(int fd, const unsigned char *h, uint64_t size);
/*
 * Names the finished entry @fd (@tmp when it is a named temporary file) @name in the
 * trusted directory @dfd (runs-vN), replacing an older one atomically, then prunes it to
 * its budget; 0 or -1.
 */
int kp_rc_publish(int dfd, int fd, const char *tmp, const char *name, uint64_t size);
/* The share of KOPOLICY_CACHE_MAX_SIZE the result cache keeps (a quarter). */
uint64_t kp_rc_budget(void);
/* Closes @fd and removes its temporary name (in @dfd) when it has one. */
void kp_rc_tmp_drop(int dfd, int fd, const char *tmp);
/* The whole pages of @p (@len bytes of an entry's read-only mapping) out of the run's RSS: read
 * from the file again if touched. */
void kp_rc_drop_pages(const unsigned char *p, size_t len);
/* The name of the result cache's directory under the cache root: runs-vN. */
#define KP_RC_STR_(x)  #x
#define KP_RC_STR(x)   KP_RC_STR_(x)
#define KP_RC_DIR_NAME "runs-v" KP_RC_STR(KP_RUNS_FORMAT)

#endif
