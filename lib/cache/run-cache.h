/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The result cache: a run whose every input is unchanged replays its stored stdout, stderr
 * and exit status instead of running (ccache's direct mode, make's dependency manifest).
 *
 * An entry, DIR/runs-v<KP_RUNS_FORMAT>/<hash of the key>.run, holds the key (kopolicy's
 * version, the executable's and each loaded library's file state, argv, cwd, the
 * environment variables that can change an output, whether stdin/stdout/stderr are
 * terminals, uname, CPUs, uid/gid), the manifest of every input the run read (inputs.h:
 * files, directories walked, paths that were absent), the output as it was written (stdout
 * and stderr in their order) and the exit status, with a CRC-32 over all of it. A later run
 * with the same key re-stat()s the manifest; if every entry holds, it writes the stored bytes
 * and exits with the stored status. Anything else (another key, a changed or new input, a
 * damaged, truncated or foreign entry) is a normal run, which stores a new entry when it is
 * cacheable: not for the running kernel (procfs, sysfs, ...: inputs.h), the hook, output
 * to a file (-o), or when an input changed less than a second before the run.
 * Entries are written to an unnamed file and renamed into place whole; the directory is
 * kept under a quarter of KOPOLICY_CACHE_MAX_SIZE, least recently used first. The CRC only
 * detects damage: an entry is replayed only from a directory that passes the trust test and
 * when the file is the user's or root's, not writable by others (trusted-dir.h). Runs that
 * met an environmental failure (kp_env_failure(): no memory, too many open files) are not
 * stored.
 */
#ifndef KP_RUN_CACHE_H
#define KP_RUN_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "util/util.h"

struct kp_inputs_changed;

#define KP_RUNS_FORMAT 1

struct kp_run_cache;

/*
 * A result cache for this run of command @cmd with @argv (all of it, argv[0] excluded), over
 * the cache root @root (the directory holding facts-vN/ and runs-vN/); NULL when the run is
 * not cacheable (another command, --no-cache, KOPOLICY_RUN_CACHE=off, ...) or out of memory.
 * @why (@wlen bytes) gets why a run that could have used it cannot (its directory refused,
 * the executable or a library cannot be stat()ed, ...), "" otherwise.
 */
struct kp_run_cache *kp_run_cache_new(const char *root, const char *cmd, int argc, char **argv,
				      char *why, size_t wlen);
/* The command @cmd with @argv could be replayed (kp_run_cache_new()'s own test of them). */
bool kp_run_cache_wanted(const char *cmd, int argc, char **argv);
/*
 * A stored result replayed: 1 with *@status (its output written), else 0 (run normally).
 * Inputs whose states changed but whose bytes (directories: names) did not still hold
 * (inputs.h); the entry is then stored again with their new states. The inputs are looked
 * up from up to @jobs threads (0: one per online CPU; file/inputs.h
 * kp_inputs_check_threads()).
 */
int kp_run_cache_replay(struct kp_run_cache *rc, unsigned jobs, int *status);
/*
 * Records this run: stdout and stderr are swapped for streams that write through and keep a
 * copy (same buffering as the originals); the inputs recorder is attached. 0 or -1 (then
 * nothing is recorded and the run goes on as without the cache).
 */
int kp_run_cache_record(struct kp_run_cache *rc);
/*
 * After the command returned @status (-1: none, nothing stored): stores the result when it
 * may be, restores stdout and stderr, frees @rc. @note gets what happened for
 * KOPOLICY_CACHE_STATS ("miss, stored (N inputs)", "miss, not stored: WHY", after a
 * replay "hit, replayed" with how), "" when nothing was recorded.
 */
void kp_run_cache_finish(struct kp_run_cache *rc, int status, char *note, size_t len);

/*
 * kp_run_cache_finish() that also says, in @carry (@clen bytes; "" when not asked), how the
 * manifest carried over (kp_run_cache_carry()) compares with the one this run stored:
 * "manifest carried: the same (N inputs, M replaced)", "manifest carried: differs (WHAT)",
 * "manifest not carried: WHY", "manifest not compared: this run's was not stored".
 */
void kp_run_cache_finish_carried(struct kp_run_cache *rc, int status, char *note, size_t len,
				 char *carry, size_t clen);

/* A piece of a store: @len bytes at @p. */
struct kp_rc_piece {
	const unsigned char *p;
	size_t len;
};
#define KP_RC_PIECES 8 /* the most pieces a store is kept in */
/*
 * What the command keeps beside its output for a later run that misses (a splice's store,
 * src/check-splice-store.h), stored at the end of the entry when the result is; opaque here:
 * its reader checks it. The @n pieces @v, one after another, are written from where they
 * lie (nothing is copied into one buffer): each in one of the @nown buffers
 * @own (malloc()ed, @rc's now) or in the store of kp_run_cache_previous() (mapped until
 * @rc is freed). 0, or -1 when they are more than KP_RC_PIECES (nothing kept, @own freed).
 */
int kp_run_cache_keep_pieces(struct kp_run_cache *rc, const struct kp_rc_piece *v, size_t n,
			     unsigned char *const *own, size_t nown);
/*
 * On a miss (kp_run_cache_replay() gave 0): the store of the entry of the same key whose
 * inputs changed (whole, trusted, its CRC right), *@len bytes of that entry's mapping, owned
 * by @rc for the run (unguarded reads: run-cache-replay.c kept_store()); NULL when there was
 * none.
 */
const unsigned char *kp_run_cache_previous(const struct kp_run_cache *rc, size_t *len);
/*
 * With kp_run_cache_previous()'s store: that entry's stdout bytes, *@len of them, in order
 * (its output chunks joined: read in the mapping when they are one chunk, else copied once
 * into memory @rc owns for the run); NULL when there is no store or no memory.
 */
const unsigned char *kp_run_cache_previous_output(struct kp_run_cache *rc, size_t *len);
/*
 * With kp_run_cache_previous()'s store: that entry's run wrote nothing to stderr (its output
 * is stdout's bytes alone, so a run that writes them again from the store writes all of it);
 * false when there is no store.
 */
bool kp_run_cache_previous_quiet(const struct kp_run_cache *rc);
/*
 * With kp_run_cache_previous()'s store: the inputs of its entry that no longer hold, every
 * one checked (file/inputs.h; not @whole when the manifest could not be walked whole or
 * too many changed), owned by @rc; NULL when there is no store.
 */
const struct kp_inputs_changed *kp_run_cache_changes(const struct kp_run_cache *rc);
/*
 * With kp_run_cache_previous()'s store: that entry's manifest to be carried over, as the
 * new entry of a run that read again only the inputs that changed would store it
 * (file/inputs.h kp_inputs_carry(), with this run's module digests), when this run's
 * manifest is stored; measured only: the two are compared (kp_run_cache_finish_carried()),
 * and this run's is the one stored.
 */
void kp_run_cache_carry(struct kp_run_cache *rc);
/*
 * This run did not read everything its entry depends on (a used splice: check-splice-use.c
 * read only the changed modules): the previous entry's manifest carried over now
 * (file/inputs.h kp_inputs_carry_noted(): each changed module in the state whose bytes this
 * run read and noted), stored at kp_run_cache_finish() in place of the recorder's, after
 * the recorder's own checks (not marked uncacheable, its digested inputs held). 0; or -1
 * with @why when it cannot be carried (a changed file changed within the last second, is
 * recorded by its bytes, is not in a state whose bytes the run read, ...): nothing is
 * changed, the caller recomputes and the recorder's manifest is stored as before.
 */
int kp_run_cache_use_carried(struct kp_run_cache *rc, const char **why);
/*
 * The inputs recorder detached (@paused) or attached again: reads the entry carries over
 * anyway (a used splice's kernel load) are not recorded nor hashed. Nothing when @rc is NULL
 * or does not record.
 */
void kp_run_cache_pause(struct kp_run_cache *rc, bool paused);
/* @rc (may be NULL) records this run's output (kp_run_cache_record() succeeded). */
bool kp_run_cache_recording(const struct kp_run_cache *rc);
/*
 * What the command says of its use of the entry for KOPOLICY_CACHE_STATS (@note, a line of
 * its own beside kp_run_cache_finish()'s; a second note is appended after "; "), and that
 * line back ("" when none; @rc NULL too).
 */
void kp_run_cache_note(struct kp_run_cache *rc, const char *note);
const char *kp_run_cache_command_note(const struct kp_run_cache *rc);

/* The directory of the result cache under @root into @buf; 0 or -1 (too long). */
int kp_run_cache_dir(const char *root, char *buf, size_t len);

struct kp_run_usage {
	uint64_t entries, bytes, removed;
};
/* Counts, prunes (to @max_bytes, least recently used first) or removes every entry of the
 * result cache under @root. 0, or -1 with @err. */
int kp_run_cache_usage(const char *root, struct kp_run_usage *u, struct kp_err *err);
int kp_run_cache_prune(const char *root, uint64_t max_bytes, struct kp_run_usage *u,
		       struct kp_err *err);
int kp_run_cache_clear(const char *root, struct kp_run_usage *u, struct kp_err *err);

#endif
