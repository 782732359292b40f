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
 * Safe from several threads at once. One file per scope, "btf-<scope hex>.memo" (magic,
 * count, CRC-32, then per verdict the 32-byte digest, the errno as a little-endian s32, the
 * reason's length as a u16 and its bytes), rewritten whole when a run added verdicts; the
 * oldest scopes beyond 8 are removed then. Anything that does not parse is ignored (the
 * modules are checked again).
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
	uint64_t hits;	  /* verdicts from the memo (a module's BTF not loaded or checked) */
	uint64_t checked; /* modules whose BTF was checked this run */
};
void kp_btf_memo_counts(const struct kp_btf_memo *m, struct kp_btf_memo_counts *out);

#endif
