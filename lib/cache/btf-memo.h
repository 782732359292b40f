/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The module BTF verdicts kept beside the facts cache, in DIR/facts-vN/sigs/ (memo-file.h;
 * the same trust model: cache/trusted-dir.h, man CACHE TRUST).
 *
 * What btf_module_notify() makes of a module's .BTF (kp_btf_check_module()) is a pure function
 * of the module's .BTF and .BTF.base bytes, the kernel's BTF and the verifier's rules (the
 * profile's struct kp_btf_rules, and the verifier's own code). A memo is opened for one
 * @scope, a SHA-256 of everything but the module (kernel/btf-judge.c): the kernel's BTF
 * bytes, the rules and the reader's source digest (KP_READER_ID). It maps the SHA-256 of a
 * module's .BTF and .BTF.base (kp_btf_digest(), cached with the facts) to the verdict: the
 * errno and the verifier's reason. So a run whose facts are cached never loads a module's
 * BTF bytes, and a cold run drops them as soon as the module is read.
 *
 * Safe from several threads at once. One file per scope, "btf-<scope hex>.memo", rewritten
 * whole when a run added verdicts (the oldest scopes beyond 8 are removed then), all numbers
 * little-endian:
 *   header (1,080 bytes): magic "KPBTFV2\n", u32 count, u32 CRC-32 of the rest of the header;
 *     the scope (32 bytes); u32 length of the reasons, u32 zero; the fanout, 256 u32: how
 *     many records have a digest whose first byte is at most 0, 1, ... 255
 *   records, sorted by digest, 48 bytes each: the 32-byte digest, the errno (s32), the
 *     reason's offset in the reasons (u32) and length (u16), u16 zero, and a CRC-32 of the
 *     scope, the record's first 44 bytes and its reason
 *   the reasons (the verifier's text, not terminated)
 * A record is believed only when its CRC matches: a damaged record is a miss (the module is
 * checked again), never a verdict; a header that does not parse, another scope or a length
 * that is not exactly header, records and reasons: no verdict from the file.
 *
 * kp_btf_memo_new() reads the file whole into a table (check: thousands of lookups).
 * kp_btf_memo_open() only reads its header and searches it in place (the hook: a few
 * lookups per run): the records of a digest's first byte (16 of 4,000 verdicts) read at once
 * with one pread(), the record's reason with another; a run that adds verdicts reads the
 * file whole only then, to write it again.
 */
#ifndef KP_BTF_MEMO_H
#define KP_BTF_MEMO_H

#include <stdbool.h>
#include <stdint.h>

#define KP_BTF_MEMO_ID_LEN 32

struct kp_btf_memo;
struct kp_btf_verdict;

/*
 * The memo of @scope in the trusted facts directory @dirfd (borrowed: it must outlive the
 * memo; -1: this run's verdicts only). NULL when out of memory.
 */
struct kp_btf_memo *kp_btf_memo_new(int dirfd, const unsigned char *scope);
/*
 * The same memo searched in place (see above): for a run that looks up a few verdicts.
 * NULL when out of memory.
 */
struct kp_btf_memo *kp_btf_memo_open(int dirfd, const unsigned char *scope);
/* Writes what the run added and frees @m; NULL is fine. */
void kp_btf_memo_free(struct kp_btf_memo *m);

/* True when @m is the memo of @scope. */
bool kp_btf_memo_has_scope(const struct kp_btf_memo *m, const unsigned char *scope);
/* 0 with *@v the verdict stored for the module BTF digest @id; -1: unknown. */
int kp_btf_memo_get(struct kp_btf_memo *m, const unsigned char *id, struct kp_btf_verdict *v);
/* Remembers @v for @id (out of memory: not kept, the module is only checked again). */
void kp_btf_memo_put(struct kp_btf_memo *m, const unsigned char *id,
		     const struct kp_btf_verdict *v);

struct kp_btf_memo_counts {
	uint64_t hits;	   /* verdicts from the memo (a module's BTF not loaded or checked) */
	uint64_t checked;  /* modules whose BTF was checked this run */
	uint64_t searched; /* of @hits, found by searching the file in place (kp_btf_memo_open()) */
	bool in_place;	   /* opened by kp_btf_memo_open() */
};
void kp_btf_memo_counts(const struct kp_btf_memo *m, struct kp_btf_memo_counts *out);

#endif
