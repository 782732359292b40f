/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The module BTF judge (read/module.h, struct kp_btf_judge) of one target kernel: what
 * btf_module_notify() makes of a module's .BTF against the kernel's BTF under its profile's
 * rules, decided while the module is read (on the reading threads) and remembered in the
 * BTF verdict memo (cache/btf-memo.h), so that no module's BTF bytes are held until the
 * simulation and a run whose facts are cached never loads them.
 */
#ifndef KP_BTF_JUDGE_H
#define KP_BTF_JUDGE_H

#include "read/btf.h"
#include "read/module.h"

struct kp_btf_memo;

struct kp_btf_judger {
	const struct kp_btf *vmlinux; /* borrowed */
	struct kp_btf_rules rules;
	struct kp_btf_memo *memo; /* borrowed, or @own_memo */
	struct kp_btf_memo *own_memo;
	struct kp_btf_judge judge; /* what kp_open_opts.btf_judge points to (@j itself) */
};

/*
 * The memo scope of the kernel BTF @vmlinux under @rules (cache/btf-memo.h): a SHA-256 of
 * the verifier's sources (KP_READER_ID), the rules and the SHA-256 of the BTF's bytes.
 * 0, or -1 (OpenSSL).
 */
int kp_btf_judge_scope(const struct kp_btf *vmlinux, const struct kp_btf_rules *rules,
		       unsigned char *out);
/*
 * The same scope from the SHA-256 of the kernel BTF's bytes, @btf_sha256 (32 bytes), as the
 * base cache keeps it (vmlinux-btf-cached.h): the hook does not hash the BTF on each call.
 */
int kp_btf_judge_scope_of(const unsigned char *btf_sha256, const struct kp_btf_rules *rules,
			  unsigned char *out);

/*
 * @j for the kernel BTF @vmlinux (borrowed: it must outlive @j) under @rules, remembering
 * in @memo (borrowed, of kp_btf_judge_scope()'s scope; NULL: its own, this run's only).
 * @vmlinux NULL (with a @memo): verdicts from the memo only, a module not in it left
 * unjudged. @j must not move while it is used. 0, or -1 when out of memory.
 */
int kp_btf_judger_init(struct kp_btf_judger *j, const struct kp_btf *vmlinux,
		       const struct kp_btf_rules *rules, struct kp_btf_memo *memo);
/* Frees its own memo; @j is zeroed. */
void kp_btf_judger_release(struct kp_btf_judger *j);

#endif
