/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libkmod's answers to the hook, kept beside the facts cache in DIR/facts-vN/sigs/kmod/ (a
 * directory of their own: a tree's worth of files is not listed with sig-memo.c's; memo-file.h;
 * the same trust model: cache/trusted-dir.h, man CACHE TRUST), so that a warm
 * `kopolicy hook` makes no libkmod call at all: kmod_new() alone parses every modprobe.d file
 * and, with its libraries (Debian's libkmod NEEDs libcrypto), was over half of a warm hook's
 * instructions. libkmod stays the judge: a miss asks it exactly as before, and its answers are
 * replayed only while everything it read to give them is provably the same.
 *
 * The key: a tag (this format, the release of kopolicy, the release directory and the
 * modprobe.d directories given to kmod_new(), the name the hook was asked about) and the
 * state of every input kmod 30 reads for the hook's questions:
 *   - the .bin indexes of its index_files[] (modules.dep, .alias, .symbols, .builtin.alias,
 *     .builtin) and modules.softdep (kmod_config_new()), each opened by name as libkmod opens
 *     it (links followed) and its fstat() state taken, or "absent";
 *   - each modprobe.d directory given to kmod_new(): its own state (an entry added, removed
 *     or renamed moves its mtime and ctime) and, sorted by name, the state (links followed)
 *     of each entry conf_files_filter_out() keeps (not starting with '.', ending in ".conf"
 *     or ".alias"), or "absent" for a dangling one;
 *   - the kernel command line kmod_config_parse_kcmdline() reads: always the host's
 *     /proc/cmdline (under --root too), its bytes stored and compared whole, not a state.
 * Every state (device, inode, size, mtime, ctime, mode) is kept whole, must be trusted
 * (util/fs-trust.h: a local file system, owned by root or the run's user, a regular file not
 * group/other-writable; each directory libkmod looks names up in not group/other-writable
 * either, so nobody else can swap a name while libkmod reads it) and settled against a time
 * taken before libkmod reads anything (kp_state_settled()). No SHA-256: OpenSSL's first fetch
 * would cost more than libkmod.
 *
 * The value: records, each a question (a type and a string: the caller's, opaque here) and
 * libkmod's answer to it as the caller took it (a code and a list of strings, each may be
 * NULL), and the libkmod that answered: its shared object's path and file state
 * (kp_kmod_memo_library()), without which, or in another state now, nothing is replayed. A
 * question not recorded (or whose answer ends before what is asked now) is asked of
 * libkmod and its answer added; when a pass of the hook is done (kp_kmod_memo_flush()) the
 * records are stored when the states taken again are the key's (no input changed while
 * libkmod read it). A key not computed whole (an input that cannot be
 * stat()ed, a path too long), an untrusted or unsettled state leave the memo unbound: libkmod
 * answers every question, nothing is read or stored. Within one run the answers recorded are
 * reused (the hook resolves a name twice when it first judges without tracing).
 *
 * What still runs on replay is the caller's (system/modprobe-chain.c says which).
 *
 * The file: "kmod-<FNV-1a 64 of the tag, hex>.memo": magic "KPKMODA1", u32 record count, u32
 * CRC-32 of the body; the body the key (u32 length, bytes) then each record (u8 type, the
 * question as a counted string, i32 code, u32 count, the counted strings; byte-writer.h).
 * Believed only when kp_trusted_file() passes, the magic and CRC match, every length is in
 * bounds, every string NUL-free, and the key is byte for byte the one computed now; anything
 * else is a miss. A new state of the same tag replaces it; the oldest beyond 8,192 go (one
 * file per name the hook is asked about: a whole tree's modules fit), looked for on one
 * store in 32.
 *
 * One thread uses a memo.
 */
#ifndef KP_KMOD_MEMO_H
#define KP_KMOD_MEMO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The memo files' directory in sigs/ (sig-memo.c's cache show/prune/clear go into it). */
#define KP_KMOD_MEMO_DIR "kmod"

struct kp_kmod_memo;

/* libkmod's answer to one question, as the caller recorded it (borrowed from the memo). */
struct kp_kmod_answer {
	int32_t code;
	size_t n;
	const char *const *s; /* @n strings, each may be NULL */
};

/*
 * A memo for the hook asked about @question (the module name it was given), in the trusted
 * facts directory @dirfd (borrowed: it must outlive the memo; -1: answers kept for this run
 * only). NULL when out of memory.
 */
struct kp_kmod_memo *kp_kmod_memo_new(int dirfd, const char *question);
/*
 * Stores the answers when libkmod added some since the last call and the key is still the
 * inputs' state (see above); NULL is fine. The hook's context calls it when a pass is done.
 */
void kp_kmod_memo_flush(struct kp_kmod_memo *m);
/* kp_kmod_memo_flush(), then frees @m; NULL is fine. */
void kp_kmod_memo_free(struct kp_kmod_memo *m);
/* Whether @m was made for @question. */
bool kp_kmod_memo_is_for(const struct kp_kmod_memo *m, const char *question);

/*
 * Binds @m to what kmod_new(@moddir, @paths) reads (@paths NULL-terminated, as given to it):
 * the key computed, the stored answers read when the key matches. The first call decides;
 * a later one with the same directories is a no-op, with others it unbinds @m for good.
 * True when @m is bound (its answers may be used and added).
 */
bool kp_kmod_memo_bind(struct kp_kmod_memo *m, const char *moddir, const char *const *paths);
/* Whether @m (NULL is fine) is bound and has an answer to (@type, @q): into *@a. */
bool kp_kmod_memo_get(struct kp_kmod_memo *m, char type, const char *q, struct kp_kmod_answer *a);
/* libkmod's answer to (@type, @q) recorded in a bound @m (NULL, unbound: nothing). */
void kp_kmod_memo_put(struct kp_kmod_memo *m, char type, const char *q, int32_t code, size_t n,
		      const char *const *s);
/* A kmod_new() made for a question @m could not answer (NULL is fine): counted. */
void kp_kmod_memo_opened(struct kp_kmod_memo *m);
/*
 * libkmod answered from the shared object @path (as loaded; NULL: not known): its file's
 * state recorded with the answers, which are replayed only while that file is in that state
 * (an upgraded libkmod may answer otherwise). A state not settled against the bind (the
 * file replaced a moment ago: perhaps after it was loaded) or no @path unbinds @m for good.
 */
void kp_kmod_memo_library(struct kp_kmod_memo *m, const char *path);

struct kp_kmod_memo_counts {
	uint64_t replayed; /* questions answered by the memo */
	uint64_t asked;	   /* questions libkmod answered (recorded when bound) */
	uint64_t opened;   /* kmod_new() calls made */
	uint64_t stored;   /* memo files written */
	uint64_t refused;  /* memo files found for this tag but not believed */
};
void kp_kmod_memo_counts(const struct kp_kmod_memo *m, struct kp_kmod_memo_counts *out);

#endif
