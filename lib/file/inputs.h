/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The inputs a run read: every file, directory and absent path that lib/ and src/ look at
 * goes through these wrappers (stat, open, opendir, readlink), which record its state into
 * the run's manifest for the result cache (run-cache.h), like make's dependency files or
 * ccache's direct-mode manifest. tests/cli/test-inputs-lint.sh fails when a file of lib/ or
 * src/ calls the system calls directly outside the list it allows.
 *
 * The recorder is process-wide: main() attaches one before any thread starts and detaches it
 * at the end (kp_inputs_attach()); with none attached the wrappers are the bare calls.
 *
 * What a state is worth is fs-trust.h's: a regular file opened in a state that does not name
 * its bytes (writable by another user, or on FUSE, NFS, ...) is recorded with the SHA-256 of
 * its bytes, which a replay hashes again. A trusted state can change while the bytes do
 * not (depmod writes each modules.* index to a temporary file and renames it over the old
 * one, with the same bytes when no module changed): a small regular file (at most 16 MiB;
 * not a module nor a kernel image, which the caches that read them key by their bytes) is
 * recorded with the SHA-256 of its bytes too, a directory with the SHA-256 of its entries'
 * sorted names and types (one digest per state: a file stat()ed, then opened, is hashed
 * once); a replay that finds such a state changed compares those instead (the type,
 * permissions and size must not have changed), on a file system whose stat() is still the
 * kernel's; so does one that finds the state of a hashed file changed.
 *
 * A module's trusted state can change while its bytes do not either (touch, a package
 * reinstalled with the same files, a DKMS rebuild that reproduces the module): when the
 * facts cache knows the bytes of a module's state (kp_in_note_bytes(): the SHA-256 it keyed
 * the module's facts by, no extra read), the module is recorded with that digest too, and a
 * replay that finds its state changed hashes the file again and compares (the same type,
 * permissions and size, on a file system whose stat() is the kernel's, and a new state that
 * is trusted: a module another user can write is never taken by its bytes here; nor one
 * whose extended attributes, owner and file system the run read, for IMA). A replay
 * hashes at most KP_INPUTS_REHASH_MAX bytes of modules so: more, and it gives up (the run
 * reads them through the facts cache, which costs no more).
 *
 * A replay's ~5,000 stat()s by full path are most of its time: a manifest of
 * KP_INPUTS_CHECK_PARALLEL entries or more is looked up from several threads first (-j),
 * and only what did not plainly hold is checked again in the manifest's order, so that the
 * answer, the first entry that fails and the list of those that do are one thread's.
 *
 * Anything on one of the running kernel's file systems (procfs, sysfs, debugfs, the
 * devtmpfs at /dev, ...: told by statfs() of what was opened or stat()ed, or of an absent
 * path's nearest existing directory, never by the path's spelling), a directory, link or
 * absent path on a file system whose stat() is not the kernel's, a device or FIFO, or
 * anything kp_in_uncacheable() is told about makes the run uncacheable (a normal run every
 * time).
 */
#ifndef KP_INPUTS_H
#define KP_INPUTS_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

struct kp_inputs;

/* The recorder's buffer (bytes) unless kp_inputs_new() is given another size. */
#define KP_INPUTS_BUF ((size_t)64 << 10)

/*
 * A recorder for a run starting now (files changed since a second before are "too new" to
 * trust: the run is then not stored); NULL when out of memory. The records are encoded into
 * a buffer of @buf_size bytes (0: KP_INPUTS_BUF; tests give less to make it spill) that is
 * written to @spill_fd whenever the next record does not fit, so the memory does not grow
 * with the number of inputs besides the duplicates' table (8 bytes a slot, 3/4 full at most).
 * @spill_fd: an empty file open for reading and writing at offset 0 that nothing else uses
 * (an unnamed one in the cache's directory); it stays the caller's to close, after
 * kp_inputs_free().
 */
struct kp_inputs *kp_inputs_new(int spill_fd, size_t buf_size);
void kp_inputs_free(struct kp_inputs *in);
/* Makes @in the process's recorder (NULL: none). Before any thread starts, and at the end. */
void kp_inputs_attach(struct kp_inputs *in);

/* stat()/lstat() that record the path's state, or that it is absent (the errno). */
int kp_in_stat(const char *path, struct stat *st);
int kp_in_lstat(const char *path, struct stat *st);
/* opendir() that records the directory's state (an entry added or removed changes it). */
DIR *kp_in_opendir(const char *path);
/*
 * fdopendir() of @fd, a directory opened elsewhere under the name @path (inside a root, by
 * descriptors: kp_opendir_in()), that records it as kp_in_opendir(@path) would: the state of
 * what was opened, or, when @fd is -1 (the open failed, errno saying why), @path's absence.
 * @fd is the DIR's from then on (closed with it); NULL with errno when fdopendir() fails
 * (@fd closed then too).
 */
DIR *kp_in_fdopendir(const char *path, int fd);
/* open()/fopen() for reading that record the opened file's state (fstat of what was opened). */
int kp_in_open(const char *path, int flags);
/* kp_in_open() that also gives the fstat() it records in @st: -1 with errno when either fails. */
int kp_in_open_stat(const char *path, int flags, struct stat *st);
FILE *kp_in_fopen(const char *path, const char *mode);
/* readlink() that records the link's own state (lstat). */
ssize_t kp_in_readlink(const char *path, char *buf, size_t len);
/* A file opened elsewhere: records the state fstat(@fd) gives, under @path. */
void kp_in_note_fd(const char *path, int fd);
/*
 * What libkmod reads behind our back for kmod_new(@moddir, @config): the moddir and its
 * modules.* files, each configuration directory and its files, and the bytes of
 * /proc/cmdline (libkmod reads the kernel command line's modprobe options).
 */
void kp_in_note_kmod(const char *moddir, const char *const *config);
/*
 * The regular file in the trusted state @st (kp_file_state()) holds the bytes whose SHA-256
 * is @sha256 (the facts cache's content key of the module it found by that state): a
 * record of that state is stored with the digest, which a replay compares when the state
 * changed. Nothing when no recorder is attached.
 */
void kp_in_note_bytes(const uint64_t *st, const unsigned char *sha256);
/* The run's output depends on something not recorded (the running kernel, a file written). */
void kp_in_uncacheable(const char *why);

/* Takes the next @len bytes of a manifest being streamed; 0 or -1 (stop). */
typedef int (*kp_inputs_put)(void *arg, const void *p, size_t len);
/*
 * Streams the recorded manifest ("KPMANIF4", the count, the entries in the order recorded,
 * exact duplicates dropped) to @put in pieces (16 KiB, or the buffer's records at once), for
 * run-cache.c: the spilled records are read back, the whole manifest is never in memory.
 * 0 with its length in *@len and its entries in *@count; -1 with @why when the run must not
 * be stored: uncacheable, an input changed during the run (its change time is after the
 * run's start less a second; or a hashed, summed or listed input no longer in the state it
 * was digested in: what the run read may not be what was digested), out of memory, the
 * spill file could not be written or read, or @put failed (then part of the manifest may
 * have gone to @put). Not while recording.
 */
int kp_inputs_stream(struct kp_inputs *in, kp_inputs_put put, void *arg, uint64_t *len,
		     uint64_t *count, const char **why);
/*
 * 1 when every entry of the manifest @m (@len bytes, from kp_inputs_stream()) still holds
 * (same states, still on a file system whose stat() the kernel keeps when they were, still
 * absent, the same bytes for the hashed ones); 0 when anything differs or @m is malformed.
 */
int kp_inputs_unchanged(const unsigned char *m, size_t len);
/*
 * kp_inputs_unchanged() that also tells how: 1 when every state held, 2 when some held only
 * by their bytes or listing (their states changed); 0 when anything differs. With 2,
 * *@fresh (when not NULL) gets a copy of @m (@len bytes, the caller's to free) with those
 * entries' new states, so that storing it makes the next check stat()s only again; NULL
 * when a new state must not be stored (changed less than a second ago, no longer trusted,
 * out of memory).
 */
int kp_inputs_recheck(const unsigned char *m, size_t len, unsigned char **fresh);
/* Bytes of modules a replay hashes again at most (kp_in_note_bytes()). */
#define KP_INPUTS_REHASH_MAX ((uint64_t)64 << 20)
/* What a replay hashed again of the modules recorded with their bytes. */
struct kp_inputs_rehash {
	uint64_t files, bytes; /* modules whose state changed and bytes did not */
	bool over;	       /* one more would have passed KP_INPUTS_REHASH_MAX: given up */
};
/* Threads that look up a manifest's entries at most, and the entries that need a second. */
#define KP_INPUTS_CHECK_THREADS	 8
#define KP_INPUTS_CHECK_PARALLEL 512
/*
 * The threads that look up the @n entries of a manifest for @jobs (0: one per online CPU;
 * -j): 1 below KP_INPUTS_CHECK_PARALLEL entries (starting a thread costs more than the
 * stat()s it takes over), at most KP_INPUTS_CHECK_THREADS.
 */
unsigned kp_inputs_check_threads(size_t n, unsigned jobs);
/*
 * kp_inputs_recheck() that also counts into @rh (NULL: not counted), the entries looked up
 * from kp_inputs_check_threads(@jobs) threads. The answer is the one-thread walk's: the
 * threads only look up; whatever did not plainly hold is checked again in the manifest's
 * order by the calling thread, which alone hashes again, counts and stores new states. The
 * threads stop past an entry that fails.
 */
int kp_inputs_recheck_counted(const unsigned char *m, size_t len, unsigned char **fresh,
			      struct kp_inputs_rehash *rh, unsigned jobs);
/* Paths kp_inputs_changes() lists at most (more: the list is not whole). */
#define KP_INPUTS_CHANGED_MAX 4096
/* The entries of a manifest that no longer hold (kp_inputs_changes()). */
struct kp_inputs_changed {
	size_t n;      /* entries that fail */
	size_t npaths; /* their distinct paths, in the manifest's order, in @paths */
	char **paths;
	bool whole; /* every entry was checked and every failing path is listed */
	/*
	 * The manifest with the new states of the entries that held only by their bytes or
	 * listing (kp_inputs_recheck()'s refresh: what a run storing it would record), NULL
	 * when none did; @stale when one did but its new state may not be stored.
	 */
	unsigned char *fresh;
	bool stale;
};
/*
 * Every entry of the manifest @m (@len bytes) checked as kp_inputs_recheck() does, without
 * stopping at the first that fails: those that fail into *@changed (release it with
 * kp_inputs_changed_release() whatever the answer). 0, or -1 when @m is malformed, a list
 * could not grow, or more than KP_INPUTS_CHANGED_MAX paths fail (@changed->whole false:
 * what is listed is not all that changed).
 */
int kp_inputs_changes(const unsigned char *m, size_t len, struct kp_inputs_changed *changed);
/*
 * kp_inputs_recheck_counted() and, when an entry fails, kp_inputs_changes() in one walk: 1 or
 * 2 (and *@fresh) as the first when every entry holds, @changed then empty; else 0 with
 * @changed as the second fills it (to release). For a caller that needs the changed list on
 * a miss: the walk goes on past the first entry that fails, not again from the start. The
 * entries are looked up from kp_inputs_check_threads(@jobs) threads, every one of them (as
 * kp_inputs_recheck_counted(), with the one-thread walk's answer and list order).
 */
int kp_inputs_recheck_listed(const unsigned char *m, size_t len, unsigned char **fresh,
			     struct kp_inputs_rehash *rh, struct kp_inputs_changed *changed,
			     unsigned jobs);
void kp_inputs_changed_release(struct kp_inputs_changed *changed);
/*
 * The manifest @m (@len bytes) carried over to a run that read again only the inputs
 * @changed lists (a splice's: kp_inputs_changes() of @m; the entries that held by their
 * bytes with the new states it found, -1 when one may not be stored), as @in, the recorder
 * of that run, would record them: every entry of those paths with the state stat() gives now (a
 * regular file still, on a file system of the same class, not changed within the last second), the
 * digest of its bytes now when its kind keeps one for a state that does not name its bytes,
 * and a module's state K_KEYED with the digest @in was told of (kp_in_note_bytes()), else
 * by its state alone; the others kept as they are. 0 with *@out (*@olen bytes: @m's head, its
 * magic and entry count, then as many entries; the caller's to free) and the entries replaced
 * in *@carried; -1 with @why (nothing in *@out).
 */
int kp_inputs_carry(struct kp_inputs *in, const unsigned char *m, size_t len,
		    const struct kp_inputs_changed *changed, unsigned char **out, size_t *olen,
		    size_t *carried, const char **why);
/*
 * kp_inputs_carry() for an entry stored with the carried manifest (a used splice, whose output
 * was made from the bytes it read of the changed files): every changed path must be a file
 * recorded by its state whose state now is one @in was told the bytes of (kp_in_note_bytes():
 * the bytes the run read), else -1 (@why): a file written after the run read it is not
 * recorded in its new state beside an output made from its old bytes.
 */
int kp_inputs_carry_noted(struct kp_inputs *in, const unsigned char *m, size_t len,
			  const struct kp_inputs_changed *changed, unsigned char **out,
			  size_t *olen, size_t *carried, const char **why);
/*
 * The manifests @a and @b hold the same entries, in any order (a run records them in the
 * order its threads read): 0; 1 when they differ, with the first difference (in the order
 * of the entries' bytes) in @note; -1 when either is malformed or out of memory (@note).
 */
int kp_inputs_differ(const unsigned char *a, size_t alen, const unsigned char *b, size_t blen,
		     char *note, size_t len);
/* The number of entries of a manifest (0 when malformed). */
size_t kp_inputs_count(const unsigned char *m, size_t len);

#endif
