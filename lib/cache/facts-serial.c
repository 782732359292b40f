// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The facts cache's payload: struct kp_module field by field, in struct order (module.h).
 * Integers little-endian (u8, u32, u64); a string is u32 length + 1 then its bytes (0: NULL;
 * 0xffffffff then a u32 index: the same string as the index-th one written, which the
 * module shared: a version's name is its import's, the license is a modinfo value); a blob
 * is u32 length then its bytes. Array counts come first so that decoding sizes the
 * arena once. Any change here, or in what a reader in lib/read/ puts into a struct
 * kp_module, bumps KP_FACTS_FORMAT (facts-cache.h).
 */
#include "facts-serial.h"

#include <stdlib.h>
#include <string.h>

#include "read/module.h"

#define NO_STRING  0u
#define STRING_REF 0xffffffffu

/* Room for @n more bytes (the slow path of put()); false when out of memory. */
static __attribute__((noinline)) bool grow(struct kp_facts_buf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 4096;
	unsigned char *np;

	if (b->oom)
		return false;
	while (cap < b->len + n)
		cap *= 2;
	np = realloc(b->data, cap);
	if (!np) {
		b->oom = 1;
		return false;
	}
	b->data = np;
	b->cap = cap;
	return true;
}

/* Inline: most calls put 1, 4 or 8 bytes, which the compiler then stores directly. */
static inline void put(struct kp_facts_buf *b, const void *p, size_t n)
{
	if (b->len + n > b->cap && !grow(b, n))
		return;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
}

static void put_u8(struct kp_facts_buf *b, unsigned v)
{
	unsigned char c = (unsigned char)v;

	put(b, &c, 1);
}

static void put_u32(struct kp_facts_buf *b, uint32_t v)
{
	unsigned char c[4] = { (unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
			       (unsigned char)(v >> 24) };

	put(b, c, 4);
}

static void put_u64(struct kp_facts_buf *b, uint64_t v)
{
	put_u32(b, (uint32_t)v);
	put_u32(b, (uint32_t)(v >> 32));
}

static size_t slot_of(const struct kp_facts_buf *b, const char *s)
{
	size_t h = ((uintptr_t)s >> 3) * 0x9e3779b97f4a7c15ull;

	for (size_t i = h & (b->tab_cap - 1);; i = (i + 1) & (b->tab_cap - 1))
		if (!b->tab[i] || b->tab[i] == s)
			return i;
}

static void put_string(struct kp_facts_buf *b, const char *s, uint64_t *account)
{
	size_t n, slot;

	if (!s) {
		put_u32(b, NO_STRING);
		return;
	}
	slot = slot_of(b, s);
	if (b->tab[slot]) {
		put_u32(b, STRING_REF);
		put_u32(b, b->tab_idx[slot]);
		return;
	}
	if (b->nstrings * 2 + 2 > b->tab_cap) {
		b->oom = 1; /* more strings than counted: cannot happen */
		return;
	}
	b->tab[slot] = s;
	b->tab_idx[slot] = b->nstrings++;
	n = strlen(s);
	if (n >= UINT32_MAX - 1) {
		b->oom = 1;
		return;
	}
	put_u32(b, (uint32_t)n + 1);
	put(b, s, n);
	*account += n + 1;
}

static void put_str(struct kp_facts_buf *b, const char *s)
{
	put_string(b, s, &b->arena);
}

static void put_sym(struct kp_facts_buf *b, const char *s)
{
	put_string(b, s, &b->sym_bytes);
}

static void put_blob(struct kp_facts_buf *b, const unsigned char *p, size_t n)
{
	if (n >= UINT32_MAX) {
		b->oom = 1;
		return;
	}
	put_u32(b, (uint32_t)n);
	put(b, p, n);
	b->arena += (n + 7) & ~(size_t)7;
}

static void put_count(struct kp_facts_buf *b, size_t n)
{
	if (n > UINT32_MAX)
		b->oom = 1;
	put_u32(b, (uint32_t)n);
}

static void put_sig(struct kp_facts_buf *b, const struct kp_signature *s)
{
	put_u8(b, s->present);
	put_u8(b, s->algo);
	put_u8(b, s->hash);
	put_u8(b, s->id_type);
	put_u8(b, s->signer_len);
	put_u8(b, s->key_id_len);
	put_u32(b, s->sig_len);
	put_u8(b, s->malformed);
	put_u8(b, s->params_zero);
	put_u8(b, s->pkcs7_der);
	put_u32(b, (uint32_t)s->pkcs7_err);
	put_u32(b, (uint32_t)s->pkcs7_verify_err);
	put_str(b, s->pkcs7_note);
	put_str(b, s->hash_algo);
	put_str(b, s->pkey_algo);
	put_str(b, s->signer);
	put_blob(b, s->issuer, s->issuer_len);
	put_blob(b, s->serial, s->serial_len);
	put_blob(b, s->skid, s->skid_len);
	put_blob(b, s->sig_bytes, s->sig_bytes_len);
	put_u32(b, s->nsigners);
	put_u32(b, s->digest_len > sizeof(s->digest) ? 0 : s->digest_len);
	put(b, s->digest, s->digest_len > sizeof(s->digest) ? 0 : s->digest_len);
	put_u8(b, s->have_file_sha256);
	put(b, s->file_sha256, sizeof(s->file_sha256));
}

int kp_facts_encode(const struct kp_module *m, struct kp_facts_buf *b)
{
	size_t start = b->len;
	/* every string the module can hold, twice over: the table stays half empty */
	size_t nstr = 2 * m->nmodinfo + m->nimport_ns + m->ndepends + 2 * m->nexports +
		      m->nimports + m->nspecial_syms + m->nversions + m->next_versions +
		      5 * m->nsymget + m->nrelocs + 16;

	b->start = start;
	b->arena = b->sym_bytes = 0;
	b->nstrings = 0;
	for (b->tab_cap = 64; b->tab_cap < 2 * nstr + 2; b->tab_cap *= 2)
		;
	if (b->tab && b->tab_idx && b->tab_alloc >= b->tab_cap) {
		/* the table of the previous module (one writer encodes many): emptied */
		memset(b->tab, 0, b->tab_cap * sizeof(*b->tab));
	} else {
		free(b->tab);
		free(b->tab_idx);
		b->tab = calloc(b->tab_cap, sizeof(*b->tab));
		b->tab_idx = calloc(b->tab_cap, sizeof(*b->tab_idx));
		b->tab_alloc = b->tab_cap;
		if (!b->tab || !b->tab_idx)
			return -1;
	}
	/* The arena sizes and counts first: decoding reserves the arena from them. */
	put_u64(b, 0);
	put_u64(b, 0);
	put_u32(b, 0);
	put_count(b, m->nmodinfo);
	put_count(b, m->nimport_ns);
	put_count(b, m->ndepends);
	put_count(b, m->nexports);
	put_count(b, m->nimports);
	put_count(b, m->nspecial_syms);
	put_count(b, m->nversions);
	put_count(b, m->next_versions);
	put_count(b, m->nsymget);

	put_str(b, m->name);
	put_str(b, m->modinfo_name);
	put_u8(b, m->compression);
	put_u64(b, m->file_size);
	put_u64(b, m->image_size);
	put_u8(b, m->is64);
	put_u8(b, m->big_endian);
	put_u32(b, m->machine);

	for (size_t i = 0; i < m->nmodinfo; i++) {
		put_str(b, m->modinfo[i].key);
		put_str(b, m->modinfo[i].value);
	}
	put_u64(b, m->nmodinfo_sections);
	put_str(b, m->license);
	put_u8(b, m->license_gpl_compatible);
	put_str(b, m->vermagic);
	put_str(b, m->srcversion);
	put_u8(b, m->intree);
	put_u8(b, m->staging);
	put_u8(b, m->test);
	put_u8(b, m->livepatch);
	put_u8(b, m->retpoline);
	for (size_t i = 0; i < m->nimport_ns; i++)
		put_str(b, m->import_ns[i]);
	for (size_t i = 0; i < m->ndepends; i++)
		put_str(b, m->depends[i]);

	for (size_t i = 0; i < m->nexports; i++) {
		const struct kp_export *e = &m->exports[i];

		put_sym(b, e->name);
		put_str(b, e->ns);
		put_u8(b, e->table);
		put_u8(b, e->gpl_only);
		put_u8(b, e->has_crc);
		put_u32(b, e->crc);
	}
	for (int t = 0; t < KP_KSYMTAB_NTABLES; t++)
		put_u8(b, m->has_kcrctab[t]);
	put_u8(b, m->has_kflagstab);

	for (size_t i = 0; i < m->nimports; i++) {
		put_sym(b, m->imports[i].name);
		put_u32(b, m->imports[i].symidx);
		put_u8(b, m->imports[i].weak);
	}
	put_u8(b, m->has_symtab);
	for (size_t i = 0; i < m->nspecial_syms; i++) {
		put_str(b, m->special_syms[i].name);
		put_u32(b, m->special_syms[i].symidx);
		put_u32(b, m->special_syms[i].shndx);
	}
	put_u32(b, m->shnum);
	put_u32(b, (uint32_t)m->raw_shnum << 16 | m->raw_shstrndx);
	put_u8(b, m->sec0_set);
	put_u32(b, m->sec0_type);
	put_u64(b, m->shoff);
	put_u8(b, m->symstr_state);
	put_u32(b, m->symname_past_end);
	put_u32(b, m->import_name_past_end);
	put_u32(b, m->kept_name_past_end);
	put_u32(b, m->import_name_outside);
	put_u64(b, m->import_name_outside_off);

	put_u8(b, m->versions_format);
	put_u8(b, m->versions_alloc);
	for (size_t i = 0; i < m->nversions; i++) {
		put_sym(b, m->versions[i].name);
		put_u32(b, m->versions[i].crc);
	}
	put_u8(b, m->has_ext_versions);
	put_u8(b, m->ext_versions_state);
	put_u8(b, m->versions_distinct);
	put_u8(b, m->ext_versions_distinct);
	for (size_t i = 0; i < m->next_versions; i++) {
		put_sym(b, m->ext_versions[i].name);
		put_u32(b, m->ext_versions[i].crc);
	}
	put_u64(b, m->this_module_size);

	put_sig(b, &m->sig);

	put_u8(b, m->imports_symbol_get);
	for (size_t i = 0; i < m->nsymget; i++) {
		const struct kp_symget *g = &m->symget[i];

		put_str(b, g->symbol);
		put_str(b, g->format);
		put_str(b, g->section);
		put_u64(b, g->offset);
		put_str(b, g->function);
		put_u8(b, g->method);
		put_u8(b, g->request);
		put_u8(b, g->when);
		put_str(b, g->path);
	}
	put_str(b, m->symget_backend);
	put_u64(b, m->nsymput);
	put_u64(b, m->nsymget_unanalysed);
	put_u8(b, m->symget_skipped);
	put_u8(b, m->full_modinfo);
	put_count(b, m->nrelocs);
	for (size_t i = 0; i < m->nrelocs; i++) {
		const struct kp_reloc_use *u = &m->relocs[i];

		put_u32(b, u->type);
		put_u8(b, u->rela);
		put_u8(b, u->percpu);
		put_str(b, u->section);
		put_u32(b, u->index);
		put_u32(b, u->count);
	}
	put_str(b, m->relocs_problem);
	put_u8(b, m->has_btf);
	put_u8(b, m->has_btf_base);
	put_u8(b, m->kept_btf);
	put_blob(b, m->btf, m->btf_len);
	put_blob(b, m->btf_base, m->btf_base_len);
	put_u8(b, m->btf_digested); /* the BTF's digest, never a verdict (kernel-dependent) */
	put(b, m->btf_sha256, sizeof(m->btf_sha256));
	if (b->oom)
		return -1;
	for (int i = 0; i < 8; i++) {
		b->data[start + i] = (unsigned char)(b->arena >> (8 * i));
		b->data[start + 8 + i] = (unsigned char)(b->sym_bytes >> (8 * i));
	}
	for (int i = 0; i < 4; i++)
		b->data[start + 16 + i] = (unsigned char)(b->nstrings >> (8 * i));
	return 0;
}

void kp_facts_buf_release(struct kp_facts_buf *b)
{
	free(b->data);
	free(b->tab);
	free(b->tab_idx);
	memset(b, 0, sizeof(*b));
}

/* Decoding: any read past the end, or memory running out, sets @bad; callers check once. */
struct rd {
	struct kp_module *m;
	const struct kp_name_pool *names;
	const unsigned char *p;
	size_t len, off;
	int bad;
	const char **strs; /* the literal strings decoded so far, for references */
	uint64_t *hashes;  /* beside each: its kp_hash_string() | HASHED, or 0 when not computed */
	uint32_t nstrs, maxstrs;
};

#define HASHED ((uint64_t)1 << 32)

static const unsigned char *take(struct rd *r, size_t n)
{
	const unsigned char *p;

	if (r->bad || n > r->len - r->off) {
		r->bad = 1;
		return NULL;
	}
	p = r->p + r->off;
	r->off += n;
	return p;
}

static unsigned get_u8(struct rd *r)
{
	const unsigned char *p = take(r, 1);

	return p ? *p : 0;
}

static bool get_bool(struct rd *r)
{
	unsigned v = get_u8(r);

	if (v > 1)
		r->bad = 1;
	return v == 1;
}

static uint32_t get_u32(struct rd *r)
{
	const unsigned char *p = take(r, 4);

	return p ? kp_load32(p, false) : 0;
}

static uint64_t get_u64(struct rd *r)
{
	const unsigned char *p = take(r, 8);

	return p ? kp_load64(p, false) : 0;
}

/* An enum stored as u8, checked against its last value. */
static unsigned get_enum(struct rd *r, unsigned last)
{
	unsigned v = get_u8(r);

	if (v > last)
		r->bad = 1;
	return v;
}

/*
 * A string; @sym: a symbol name, shared with the name pool when it holds it; @hash (NULL: not
 * wanted): its kp_hash_string(), computed once for the pool and the caller.
 */
static const char *get_string(struct rd *r, bool sym, uint32_t *hash)
{
	uint32_t n = get_u32(r);
	const unsigned char *p;
	const char *s;

	if (n == NO_STRING)
		return NULL;
	if (n == STRING_REF) {
		uint32_t i = get_u32(r);

		if (i >= r->nstrs) {
			r->bad = 1;
			return NULL;
		}
		if (hash) {
			if (!r->hashes[i])
				r->hashes[i] = HASHED | kp_hash_string(r->strs[i]);
			*hash = (uint32_t)r->hashes[i];
		}
		return r->strs[i];
	}
	if (r->nstrs >= r->maxstrs) {
		r->bad = 1;
		return NULL;
	}
	p = take(r, n - 1);
	if (!p)
		return NULL;
	if (memchr(p, '\0', n - 1)) {
		r->bad = 1; /* a C string holds no NUL: not what the encoder wrote */
		return NULL;
	}
	if (hash)
		*hash = kp_hash_bytes((const char *)p, n - 1);
	if (!sym)
		s = kp_arena_strndup(&r->m->arena, (const char *)p, n - 1);
	else if (hash)
		s = kp_module_symname_hashed(r->m, r->names, (const char *)p, n - 1, *hash);
	else
		s = kp_module_symname(r->m, r->names, (const char *)p, n - 1);
	if (!s) {
		r->bad = 1;
		return NULL;
	}
	r->hashes[r->nstrs] = hash ? HASHED | *hash : 0;
	r->strs[r->nstrs++] = s;
	return s;
}

static const char *get_str(struct rd *r)
{
	return get_string(r, false, NULL);
}

/* An import's or a version's name and its hash (struct kp_import.hash, kp_version.hash). */
static const char *get_hashed_sym(struct rd *r, uint32_t *hash)
{
	*hash = 0;
	return get_string(r, true, hash);
}

static const unsigned char *get_blob(struct rd *r, size_t *len)
{
	uint32_t n = get_u32(r);
	const unsigned char *p = take(r, n);
	unsigned char *copy;

	*len = 0;
	if (!p || !n)
		return NULL;
	copy = kp_arena_alloc(&r->m->arena, n);
	if (!copy) {
		r->bad = 1;
		return NULL;
	}
	memcpy(copy, p, n);
	*len = n;
	return copy;
}

static void get_sig(struct rd *r, struct kp_signature *s)
{
	size_t n;
	const unsigned char *p;

	s->present = get_bool(r);
	s->algo = (uint8_t)get_u8(r);
	s->hash = (uint8_t)get_u8(r);
	s->id_type = (uint8_t)get_u8(r);
	s->signer_len = (uint8_t)get_u8(r);
	s->key_id_len = (uint8_t)get_u8(r);
	s->sig_len = get_u32(r);
	s->malformed = get_bool(r);
	s->params_zero = get_bool(r);
	s->pkcs7_der = get_bool(r);
	s->pkcs7_err = (int)get_u32(r);
	s->pkcs7_verify_err = (int)get_u32(r);
	s->pkcs7_note = get_str(r);
	s->hash_algo = get_str(r);
	s->pkey_algo = get_str(r);
	s->signer = get_str(r);
	s->issuer = get_blob(r, &s->issuer_len);
	s->serial = get_blob(r, &s->serial_len);
	s->skid = get_blob(r, &s->skid_len);
	s->sig_bytes = get_blob(r, &s->sig_bytes_len);
	s->nsigners = get_u32(r);
	n = get_u32(r);
	if (n > sizeof(s->digest)) {
		r->bad = 1;
		return;
	}
	p = take(r, n);
	if (p)
		memcpy(s->digest, p, n);
	s->digest_len = (unsigned)n;
	s->have_file_sha256 = get_bool(r);
	p = take(r, sizeof(s->file_sha256));
	if (p)
		memcpy(s->file_sha256, p, sizeof(s->file_sha256));
}

/* @n elements of @elem bytes in the arena; @n is bounded by what the bytes can hold. */
static void *get_array(struct rd *r, size_t n, size_t elem)
{
	void *a;

	if (!n || r->bad)
		return NULL;
	a = kp_module_array(r->m, n, elem);
	if (!a)
		r->bad = 1;
	return a;
}

static int decode(struct rd *r);

int kp_facts_decode(struct kp_module *m, const unsigned char *p, size_t len,
		    const struct kp_name_pool *names)
{
	struct rd r = { .m = m, .names = names, .p = p, .len = len };
	const char *small[1024];
	uint64_t small_hashes[KP_ARRAY_SIZE(small)];
	int ret;

	if (len < 20)
		return -1;
	r.maxstrs = kp_load32(p + 16, false);
	if (r.maxstrs > len / 4)
		return -1;
	if (r.maxstrs <= KP_ARRAY_SIZE(small)) {
		r.strs = small;
		r.hashes = small_hashes;
	} else {
		r.strs = malloc(r.maxstrs * sizeof(*r.strs));
		r.hashes = malloc(r.maxstrs * sizeof(*r.hashes));
		if (!r.strs || !r.hashes) {
			free(r.strs);
			free(r.hashes);
			return -1;
		}
	}
	ret = decode(&r);
	if (r.strs != small) {
		free(r.strs);
		free(r.hashes);
	}
	return ret;
}

static int decode(struct rd *rp)
{
	struct rd r = *rp;
	struct kp_module *m = r.m;
	const struct kp_name_pool *names = r.names;
	size_t len = r.len;
	uint64_t arena = get_u64(&r), sym_bytes = get_u64(&r);
	uint32_t cnt[9];
	size_t arrays = 0;

	(void)get_u32(&r); /* the number of strings, read above */
	if (arena > len || sym_bytes > len)
		return -1;
	for (size_t i = 0; i < KP_ARRAY_SIZE(cnt); i++) {
		cnt[i] = get_u32(&r);
		/* every element takes at least 4 bytes: a count beyond that is not ours */
		if (cnt[i] > len / 4)
			return -1;
	}
	if (r.bad)
		return -1;
	m->nmodinfo = cnt[0];
	m->nimport_ns = cnt[1];
	m->ndepends = cnt[2];
	m->nexports = cnt[3];
	m->nimports = cnt[4];
	m->nspecial_syms = cnt[5];
	m->nversions = cnt[6];
	m->next_versions = cnt[7];
	m->nsymget = cnt[8];
	arrays = m->nmodinfo * sizeof(*m->modinfo) +
		 (m->nimport_ns + m->ndepends) * sizeof(char *) +
		 m->nexports * sizeof(*m->exports) + m->nimports * sizeof(*m->imports) +
		 m->nspecial_syms * sizeof(*m->special_syms) +
		 (m->nversions + m->next_versions) * sizeof(struct kp_version) +
		 m->nsymget * sizeof(*m->symget) + 9 * 8; /* each array aligned */
	/* symbol names: a pool holds most of them; what it lacks goes to small chunks */
	if (kp_arena_reserve(&m->arena, arrays + (size_t)arena + (names ? 0 : (size_t)sym_bytes) +
						strlen(m->path) + 1) < 0)
		return -1;
	m->path = kp_arena_strdup(&m->arena, m->path);
	if (!m->path)
		return -1;

	m->name = get_str(&r);
	m->modinfo_name = get_str(&r);
	m->compression = get_enum(&r, KP_COMP_GZIP);
	m->file_size = get_u64(&r);
	m->image_size = get_u64(&r);
	m->is64 = get_bool(&r);
	m->big_endian = get_bool(&r);
	m->machine = (uint16_t)get_u32(&r);

	m->modinfo = get_array(&r, m->nmodinfo, sizeof(*m->modinfo));
	for (size_t i = 0; i < m->nmodinfo && !r.bad; i++) {
		m->modinfo[i].key = get_str(&r);
		m->modinfo[i].value = get_str(&r);
	}
	m->nmodinfo_sections = get_u64(&r);
	m->license = get_str(&r);
	m->license_gpl_compatible = get_bool(&r);
	m->vermagic = get_str(&r);
	m->srcversion = get_str(&r);
	m->intree = get_bool(&r);
	m->staging = get_bool(&r);
	m->test = get_bool(&r);
	m->livepatch = get_bool(&r);
	m->retpoline = get_bool(&r);
	m->import_ns = get_array(&r, m->nimport_ns, sizeof(*m->import_ns));
	for (size_t i = 0; i < m->nimport_ns && !r.bad; i++)
		m->import_ns[i] = get_str(&r);
	m->depends = get_array(&r, m->ndepends, sizeof(*m->depends));
	for (size_t i = 0; i < m->ndepends && !r.bad; i++)
		m->depends[i] = get_str(&r);

	m->exports = get_array(&r, m->nexports, sizeof(*m->exports));
	for (size_t i = 0; i < m->nexports && !r.bad; i++) {
		struct kp_export *e = &m->exports[i];

		e->name = get_hashed_sym(&r, &e->hash);
		e->ns = get_str(&r);
		e->table = get_enum(&r, KP_KSYMTAB_NTABLES - 1);
		e->gpl_only = get_bool(&r);
		e->has_crc = get_bool(&r);
		e->crc = get_u32(&r);
	}
	for (int t = 0; t < KP_KSYMTAB_NTABLES; t++)
		m->has_kcrctab[t] = get_bool(&r);
	m->has_kflagstab = get_bool(&r);

	m->imports = get_array(&r, m->nimports, sizeof(*m->imports));
	for (size_t i = 0; i < m->nimports && !r.bad; i++) {
		uint32_t symidx;

		m->imports[i].name = get_hashed_sym(&r, &m->imports[i].hash);
		symidx = get_u32(&r);
		if (symidx > KP_IMPORT_MAX_SYMIDX)
			r.bad = 1; /* not what the encoder wrote */
		m->imports[i].symidx = symidx & KP_IMPORT_MAX_SYMIDX;
		m->imports[i].weak = get_bool(&r);
	}
	m->has_symtab = get_bool(&r);
	m->special_syms = get_array(&r, m->nspecial_syms, sizeof(*m->special_syms));
	for (size_t i = 0; i < m->nspecial_syms && !r.bad; i++) {
		m->special_syms[i].name = get_str(&r);
		m->special_syms[i].symidx = get_u32(&r);
		m->special_syms[i].shndx = get_u32(&r);
	}
	m->shnum = get_u32(&r);
	{
		uint32_t raw = get_u32(&r);

		m->raw_shnum = (uint16_t)(raw >> 16);
		m->raw_shstrndx = (uint16_t)raw;
	}
	m->sec0_set = get_bool(&r);
	m->sec0_type = get_u32(&r);
	m->shoff = get_u64(&r);
	m->symstr_state = get_enum(&r, KP_SYMSTR_NAME_OOB);
	m->symname_past_end = get_u32(&r);
	m->import_name_past_end = get_u32(&r);
	m->kept_name_past_end = get_u32(&r);
	m->import_name_outside = get_u32(&r);
	m->import_name_outside_off = get_u64(&r);

	m->versions_format = get_enum(&r, KP_VERSIONS_UBUNTU);
	m->versions_alloc = get_bool(&r);
	m->versions = get_array(&r, m->nversions, sizeof(*m->versions));
	for (size_t i = 0; i < m->nversions && !r.bad; i++) {
		m->versions[i].name = get_hashed_sym(&r, &m->versions[i].hash);
		m->versions[i].crc = get_u32(&r);
	}
	m->has_ext_versions = get_bool(&r);
	m->ext_versions_state = get_enum(&r, KP_EXT_VERSIONS_FEW_NAMES);
	m->versions_distinct = get_bool(&r);
	m->ext_versions_distinct = get_bool(&r);
	m->ext_versions = get_array(&r, m->next_versions, sizeof(*m->ext_versions));
	for (size_t i = 0; i < m->next_versions && !r.bad; i++) {
		m->ext_versions[i].name = get_hashed_sym(&r, &m->ext_versions[i].hash);
		m->ext_versions[i].crc = get_u32(&r);
	}
	m->this_module_size = get_u64(&r);

	get_sig(&r, &m->sig);

	m->imports_symbol_get = get_bool(&r);
	m->symget = get_array(&r, m->nsymget, sizeof(*m->symget));
	for (size_t i = 0; i < m->nsymget && !r.bad; i++) {
		struct kp_symget *g = &m->symget[i];

		g->symbol = get_str(&r);
		g->format = get_str(&r);
		g->section = get_str(&r);
		g->offset = get_u64(&r);
		g->function = get_str(&r);
		g->method = get_enum(&r, KP_SYMGET_DYNAMIC);
		g->request = get_bool(&r);
		g->when = get_enum(&r, KP_SYMGET_WHEN_CALLED);
		g->path = get_str(&r);
	}
	m->symget_backend = get_str(&r);
	m->nsymput = get_u64(&r);
	m->nsymget_unanalysed = get_u64(&r);
	m->symget_skipped = get_bool(&r);
	m->full_modinfo = get_bool(&r);
	m->nrelocs = get_u32(&r);
	if (m->nrelocs > len / 4)
		return -1;
	m->relocs = get_array(&r, m->nrelocs, sizeof(*m->relocs));
	for (size_t i = 0; i < m->nrelocs && !r.bad; i++) {
		struct kp_reloc_use *u = &m->relocs[i];

		u->type = get_u32(&r);
		u->rela = get_bool(&r);
		u->percpu = get_bool(&r);
		u->section = get_str(&r);
		u->index = get_u32(&r);
		u->count = get_u32(&r);
	}
	m->relocs_problem = get_str(&r);
	m->has_btf = get_bool(&r);
	m->has_btf_base = get_bool(&r);
	m->kept_btf = get_bool(&r);
	m->btf = get_blob(&r, &m->btf_len);
	m->btf_base = get_blob(&r, &m->btf_base_len);
	m->btf_digested = get_bool(&r);
	{
		const unsigned char *p = take(&r, sizeof(m->btf_sha256));

		if (p)
			memcpy(m->btf_sha256, p, sizeof(m->btf_sha256));
	}
	/* Everything read, nothing left over, and the one field no module lacks. */
	if (r.bad || r.off != r.len || !m->name)
		return -1;
	return 0;
}
