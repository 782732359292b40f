// SPDX-License-Identifier: LGPL-2.1-or-later
/* The facts cache's payload written: struct kp_module field by field (facts-serial-internal.h). */
#include "facts-serial.h"
#include "facts-serial-internal.h"

#include <stdlib.h>
#include <string.h>

#include "read/module.h"

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
	put_u8(b, m->wild_export.present);
	put_u8(b, m->wild_export.table);
	put_u32(b, m->wild_export.index);
	put_u64(b, (uint64_t)m->wild_export.offset);
	put_str(b, m->wild_export.target);
	put_u32(b, m->wild_export.rel_shndx);
	put_u32(b, m->wild_export.rel_index);

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
		put_u32(b, u->shndx);
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
	put_u8(b, m->iface_digested); /* the interface digest (read/module-iface.h) */
	put(b, m->iface_sha256, sizeof(m->iface_sha256));
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
