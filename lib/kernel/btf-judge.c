// SPDX-License-Identifier: LGPL-2.1-or-later
/* The module BTF judge of a target kernel (btf-judge.h). */
#include "btf-judge.h"

#include <string.h>

#include <openssl/evp.h>

#include "cache/btf-memo.h"
#include "read/reader-id.h"

/*
 * btf_module_notify() -> btf_parse_module(), v5.11+: the verdict from the memo, else
 * kp_btf_check_module() on the bytes (remembered).
 */
static int judge(void *ctx, const unsigned char *digest, const unsigned char *btf, size_t btf_len,
		 const unsigned char *base, size_t base_len, struct kp_btf_verdict *v)
{
	struct kp_btf_judger *j = ctx;

	memset(v, 0, sizeof(*v));
	if (kp_btf_memo_get(j->memo, digest, v) == 0)
		return 0;
	if (!btf || !j->vmlinux) /* not in the memo, and no bytes or no kernel BTF to check */
		return 1;
	if (kp_btf_check_module(j->vmlinux, btf, btf_len, base, base_len, &j->rules, v) < 0)
		return -1;
	kp_btf_memo_put(j->memo, digest, v);
	return 0;
}

int kp_btf_judge_scope_of(const unsigned char *btf_sha256, const struct kp_btf_rules *r,
			  unsigned char *out)
{
	static const char tag[] = "kopolicy module BTF verdict v2 " KP_READER_ID;
	const unsigned char rules[3] = { r->layout_header, r->relocate, r->datasec_printable };
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned n = 0;
	int ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1 &&
		 EVP_DigestUpdate(ctx, tag, sizeof(tag)) == 1 &&
		 EVP_DigestUpdate(ctx, rules, sizeof(rules)) == 1 &&
		 EVP_DigestUpdate(ctx, btf_sha256, KP_BTF_MEMO_ID_LEN) == 1 &&
		 EVP_DigestFinal_ex(ctx, out, &n) == 1 && n == KP_BTF_MEMO_ID_LEN;

	EVP_MD_CTX_free(ctx);
	return ok ? 0 : -1;
}

int kp_btf_judge_scope(const struct kp_btf *vmlinux, const struct kp_btf_rules *r,
		       unsigned char *out)
{
	unsigned char digest[KP_BTF_MEMO_ID_LEN];
	unsigned n = 0;

	if (EVP_Digest(vmlinux->data, vmlinux->size, digest, &n, EVP_sha256(), NULL) != 1 ||
	    n != KP_BTF_MEMO_ID_LEN)
		return -1;
	return kp_btf_judge_scope_of(digest, r, out);
}

int kp_btf_judger_init(struct kp_btf_judger *j, const struct kp_btf *vmlinux,
		       const struct kp_btf_rules *rules, struct kp_btf_memo *memo)
{
	unsigned char scope[KP_BTF_MEMO_ID_LEN];

	memset(j, 0, sizeof(*j));
	if (!memo) {
		if (!vmlinux || kp_btf_judge_scope(vmlinux, rules, scope) < 0 ||
		    !(j->own_memo = kp_btf_memo_new(-1, scope)))
			return -1;
		memo = j->own_memo;
	}
	j->memo = memo;
	j->vmlinux = vmlinux;
	j->rules = *rules;
	j->judge = (struct kp_btf_judge){ .judge = judge, .ctx = j };
	return 0;
}

void kp_btf_judger_release(struct kp_btf_judger *j)
{
	kp_btf_memo_free(j->own_memo);
	memset(j, 0, sizeof(*j));
}
