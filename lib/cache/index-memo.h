/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The depmod indexes that passed the hook's structural check, kept beside the facts cache in
 * DIR/facts-vN/sigs/ (memo-file.h; the same trust model: cache/trusted-dir.h, man CACHE
 * TRUST).
 *
 * Before libkmod reads a .bin index, system/modprobe-index.c walks every node of it
 * (kp_chain_index_check()): 1.4 M instructions of a 6.75 M hook call on Debian 6.12, and the
 * pages of ~3 MB of indexes. The walk is a pure function of the index's bytes, and a file's
 * state (device, inode, size, mtime, ctime, mode) names its bytes when util/fs-trust.h says
 * so (a local file system, owned by root or the effective user, not group/other-writable)
 * and the state is settled (kp_state_settled(): it last changed at least a second before a
 * time taken before the bytes were read). So "this index passed" is remembered under a
 * key made of a tag (with the release: a new checker walks every index again) and that state
 * itself, taken by fstat() of the very descriptor whose bytes are walked or mapped, never of a
 * name. The state is compared whole, not hashed: no two states share a key, and no SHA-256 is
 * needed (OpenSSL's first SHA-256 fetch alone costs a hook call 3.5 M instructions, more than
 * the walk it saves; a memo file is trusted for its owner, not for its key).
 * Only "passed" is stored: a corrupt index is walked, and refused, on every call; so is one
 * whose state names no bytes. A changed or replaced index has another state (its change time
 * moves with any write, chmod or rename over it) and is walked again.
 *
 * One file per index file, "index-<device hex>-<inode hex>.memo": magic "KPIDXOK1", u32 count
 * (1), u32 CRC-32 of the body, the body the key (a 48-byte tag, zero-padded, then the
 * state's eight little-endian u64: device, inode, size, mtime s and ns, ctime s and ns,
 * mode). Believed only when kp_trusted_file() passes, the size is exactly that, the magic
 * and CRC match and the body is the whole key asked for; a passed state of the same inode
 * replaces it. The oldest beyond 64 are removed when one is stored.
 */
#ifndef KP_INDEX_MEMO_H
#define KP_INDEX_MEMO_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#define KP_INDEX_MEMO_TAG_LEN 48
#define KP_INDEX_MEMO_KEY_LEN (KP_INDEX_MEMO_TAG_LEN + 8 * 8)

struct kp_index_memo;

/*
 * The memo of the trusted facts directory @dirfd (borrowed: it must outlive the memo; -1: it
 * remembers nothing). NULL when out of memory.
 */
struct kp_index_memo *kp_index_memo_new(int dirfd);
/* Frees @m; NULL is fine. */
void kp_index_memo_free(struct kp_index_memo *m);

/*
 * The key of the index open as @fd in the state @st (its fstat()) when that state names its
 * bytes for this run and is settled against @before (a time taken before its bytes are
 * read): 0, or -1 (the index is to be walked, and not stored).
 */
int kp_index_memo_key(const struct kp_index_memo *m, int fd, const struct stat *st,
		      const struct timespec *before, unsigned char key[KP_INDEX_MEMO_KEY_LEN]);
/* True when an index in the state of @key passed the check (a stored memo file says so). */
bool kp_index_memo_passed(struct kp_index_memo *m, const unsigned char *key);
/*
 * An index was walked now: counted, and stored under @key when it passed (NULL: it failed,
 * or its state names no bytes: counted only).
 */
void kp_index_memo_put(struct kp_index_memo *m, const unsigned char *key);

struct kp_index_memo_counts {
	uint64_t hits;	  /* indexes not walked: the memo said they passed */
	uint64_t checked; /* indexes walked this run (passed or not) */
	uint64_t stored;  /* of @checked, passed and stored for the next runs */
};
void kp_index_memo_counts(const struct kp_index_memo *m, struct kp_index_memo_counts *out);

#endif
