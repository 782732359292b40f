/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The files of the memos kept beside the facts cache, in DIR/facts-vN/sigs/ (sig-memo.h:
 * signature verdicts and image certificates; btf-memo.h: module BTF verdicts; index-memo.h:
 * depmod indexes that passed; kmod-memo.h: libkmod's answers, in sigs/kmod/):
 * each a header (8-byte magic, u32 count, u32 CRC-32 of what follows) and a body, believed
 * only when kp_trusted_file() passes and the magic and CRC match.
 */
#ifndef KP_MEMO_FILE_H
#define KP_MEMO_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define KP_MEMO_DIR	   "sigs"
#define KP_MEMO_HEADER_LEN 16
#define KP_MEMO_MAX_FILE   ((uint64_t)64 << 20)

/* CRC-32 (zlib's values: util/crc32.h) of @len bytes. */
uint32_t kp_memo_crc(const unsigned char *p, size_t len);
/* The memo directory of the facts directory @dirfd (O_PATH), made when @create; or -1. */
int kp_memo_dir(int dirfd, bool create);
/*
 * The file @name of @dfd opened (read-only, not following a link) when it can be believed: a
 * regular file that kp_trusted_file() passes, of KP_MEMO_HEADER_LEN to KP_MEMO_MAX_FILE
 * bytes (its size in *@len). The descriptor, or -1. Its contents are not checked.
 */
int kp_memo_open(int dfd, const char *name, size_t *len);
/*
 * The file @name of @dfd when it can be believed (kp_trusted_file(), at most
 * KP_MEMO_MAX_FILE bytes, a header with @magic whose CRC matches): its bytes (malloc'ed)
 * and length, or NULL.
 */
unsigned char *kp_memo_read(int dfd, const char *name, const char *magic, size_t *len);
/* kp_memo_read() of a kind whose files are at most @max bytes: a larger one is not read. */
unsigned char *kp_memo_read_max(int dfd, const char *name, const char *magic, uint64_t max,
				size_t *len);
/*
 * Writes @len bytes as a new file of @dfd named @name (an unnamed file linked in, else a
 * temporary name renamed), mode 0644 whatever the umask. 0 or -1 (EEXIST: @name exists).
 */
int kp_memo_write(int dfd, const char *name, const unsigned char *p, size_t len);

/* More than @keep files of @dfd whose names start with @prefix: the oldest (mtime) go. */
void kp_memo_prune(int dfd, const char *prefix, size_t keep);

/*
 * The memos' ids: SHA-256 digests in open-addressing tables of a power-of-two capacity, the
 * all-zero id marking a free slot.
 */
#define KP_MEMO_ID_LEN 32

static inline bool kp_memo_id_is_zero(const unsigned char *id)
{
	for (size_t i = 0; i < KP_MEMO_ID_LEN; i++)
		if (id[i])
			return false;
	return true;
}

/* The slot @id's probe starts at in a table of @cap (a power of two) slots. */
static inline size_t kp_memo_id_home(const unsigned char *id, size_t cap)
{
	uint64_t h = 0;

	memcpy(&h, id, sizeof(h)); /* a SHA-256: any 8 bytes are uniform */
	return (size_t)(h & (cap - 1));
}

#endif
