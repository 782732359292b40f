// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * module-btf.c: a module's .BTF and .BTF.base (module.h, module-internal.h): recorded, kept
 * in the arena or judged in place, their digest made once (kept with the facts), and a
 * judge's verdict taken into the module (kp_module_judge_btf(), kp_module_judge_kept_btf()).
 */
#include <string.h>

#include <openssl/evp.h>

#include "btf.h"
#include "module-internal.h"

/* One BTF section: recorded, and its bytes copied into the arena with @keep. */
static int read_btf_section(struct kp_module *m, const struct kp_elf *e, const char *name,
			    bool keep, const unsigned char **data, size_t *len)
{
	size_t idx = kp_elf_find_section(e, name);
	const struct kp_section *s;
	unsigned char *copy;

	if (!idx)
		return 0;
	s = &e->sections[idx];
	if (!keep || !s->data || !s->size || s->type == SHT_NOBITS)
		return 1;
	copy = kp_arena_alloc(&m->arena, (size_t)s->size);
	if (!copy)
		return -1;
	memcpy(copy, s->data, (size_t)s->size);
	*data = copy;
	*len = (size_t)s->size;
	return 1;
}

int kp_btf_digest(const unsigned char *btf, size_t btf_len, const unsigned char *base,
		  size_t base_len, unsigned char out[32])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned char lens[16];
	unsigned n = 0;
	int ok;

	kp_store64(lens, btf_len);
	kp_store64(lens + 8, base ? base_len : UINT64_MAX);
	ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1 &&
	     EVP_DigestUpdate(ctx, lens, sizeof(lens)) == 1 &&
	     (!btf_len || EVP_DigestUpdate(ctx, btf, btf_len) == 1) &&
	     (!base || !base_len || EVP_DigestUpdate(ctx, base, base_len) == 1) &&
	     EVP_DigestFinal_ex(ctx, out, &n) == 1 && n == 32;
	EVP_MD_CTX_free(ctx);
	return ok ? 0 : -1;
}

/* @v into @m: the verdict, its reason in the arena. 0 or -1 (out of memory). */
static int take_verdict(struct kp_module *m, const struct kp_btf_verdict *v)
{
	m->btf_err = v->err;
	m->btf_why = NULL;
	if (v->why[0] && !(m->btf_why = kp_arena_strdup(&m->arena, v->why)))
		return -1;
	m->btf_judged = true;
	return 0;
}

int kp_module_judge_btf(struct kp_module *m, const struct kp_btf_judge *j)
{
	struct kp_btf_verdict v = { 0 };
	int r;

	if (!j || !m->btf_digested || m->btf_judged)
		return 0;
	r = j->judge(j->ctx, m->btf_sha256, NULL, 0, NULL, 0, &v);
	if (r != 0)
		return r;
	return take_verdict(m, &v);
}

int kp_module_judge_kept_btf(struct kp_module *m, const struct kp_btf_judge *j)
{
	const unsigned char *base = m->has_btf_base ? m->btf_base : NULL;
	size_t base_len = base ? m->btf_base_len : 0;
	struct kp_btf_verdict v = { 0 };
	unsigned char digest[32];
	int r;

	if (!j || !m->kept_btf || !m->has_btf || !m->btf || !m->btf_len || m->btf_judged)
		return 0;
	/* the digest made when it was read (cached with the facts), else now */
	if (m->btf_digested)
		memcpy(digest, m->btf_sha256, sizeof(digest));
	else if (kp_btf_digest(m->btf, m->btf_len, base, base_len, digest) < 0)
		return -1;
	r = j->judge(j->ctx, digest, m->btf, m->btf_len, base, base_len, &v);
	if (r != 0)
		return r < 0 ? -1 : 0;
	return take_verdict(m, &v);
}

/* The bytes of the first section @name, in place; false when it has none (absent, NOBITS). */
static bool section_bytes(const struct kp_elf *e, const char *name, const unsigned char **data,
			  size_t *len)
{
	size_t idx = kp_elf_find_section(e, name);
	const struct kp_section *s = idx ? &e->sections[idx] : NULL;

	if (!s || !s->data || !s->size || s->type == SHT_NOBITS)
		return false;
	*data = s->data;
	*len = (size_t)s->size;
	return true;
}

/*
 * kp_open_opts.btf_judge: the module's .BTF (and .BTF.base) judged in place, their digest
 * kept instead of their bytes. A .BTF without bytes is not parsed (btf_data_size 0).
 */
static int judge_btf(struct kp_module *m, const struct kp_elf *e, const struct kp_btf_judge *j,
		     struct kp_err *err)
{
	const unsigned char *btf = NULL, *base = NULL;
	size_t btf_len = 0, base_len = 0;
	struct kp_btf_verdict v = { 0 };
	int r;

	if (!section_bytes(e, ".BTF", &btf, &btf_len))
		return 0;
	if (!section_bytes(e, ".BTF.base", &base, &base_len))
		base = NULL;
	if (kp_btf_digest(btf, btf_len, base, base_len, m->btf_sha256) < 0)
		return kp_err_set(err, "cannot hash its .BTF section: OpenSSL failed");
	m->btf_digested = true;
	r = j->judge(j->ctx, m->btf_sha256, btf, btf_len, base, base_len, &v);
	if (r < 0 || (r == 0 && take_verdict(m, &v) < 0))
		return kp_err_set(err, "out of memory");
	return 0;
}

int kp_read_btf(struct kp_module *m, const struct kp_elf *e, bool keep,
		const struct kp_btf_judge *judge, struct kp_err *err)
{
	bool copy = keep && !judge;
	int a = read_btf_section(m, e, ".BTF", copy, &m->btf, &m->btf_len);
	int b = a < 0 ? -1
		      : read_btf_section(m, e, ".BTF.base", copy, &m->btf_base, &m->btf_base_len);

	if (a < 0 || b < 0)
		return kp_err_set(err, "out of memory");
	m->has_btf = a > 0;
	m->has_btf_base = b > 0;
	m->kept_btf = copy;
	if (keep && judge && m->has_btf)
		return judge_btf(m, e, judge, err);
	/*
	 * Kept bytes: their digest too, cached with the facts, so that a judge later (the hook,
	 * kp_module_judge_kept_btf()) hashes nothing on a facts cache hit. OpenSSL failing:
	 * no digest (made when it is judged).
	 */
	if (copy && m->btf && m->btf_len)
		m->btf_digested =
			kp_btf_digest(m->btf, m->btf_len, m->has_btf_base ? m->btf_base : NULL,
				      m->has_btf_base ? m->btf_base_len : 0, m->btf_sha256) == 0;
	return 0;
}
