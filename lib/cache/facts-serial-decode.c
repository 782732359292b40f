// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The facts cache's payload read back and checked (facts-serial-internal.h): the counts that
 * size the arena, then struct kp_module field by field, nothing missing and nothing left over.
 */
#include "facts-serial.h"
#include "facts-serial-internal.h"

#include <stdlib.h>
#include <string.h>

#include "read/module.h"

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
	s->issuer = kp_facts_get_blob(r, &s->issuer_len);
	s->serial = kp_facts_get_blob(r, &s->serial_len);
	s->skid = kp_facts_get_blob(r, &s->skid_len);
	s->sig_bytes = kp_facts_get_blob(r, &s->sig_bytes_len);
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

	m->modinfo = kp_facts_get_array(&r, m->nmodinfo, sizeof(*m->modinfo));
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
	m->import_ns = kp_facts_get_array(&r, m->nimport_ns, sizeof(*m->import_ns));
	for (size_t i = 0; i < m->nimport_ns && !r.bad; i++)
		m->import_ns[i] = get_str(&r);
	m->depends = kp_facts_get_array(&r, m->ndepends, sizeof(*m->depends));
	for (size_t i = 0; i < m->ndepends && !r.bad; i++)
		m->depends[i] = get_str(&r);

	m->exports = kp_facts_get_array(&r, m->nexports, sizeof(*m->exports));
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
	m->wild_export.present = get_bool(&r);
	m->wild_export.table = get_enum(&r, KP_KSYMTAB_NTABLES - 1);
	m->wild_export.index = get_u32(&r);
	m->wild_export.offset = (int64_t)get_u64(&r);
	m->wild_export.target = get_str(&r);
	m->wild_export.rel_shndx = get_u32(&r);
	m->wild_export.rel_index = get_u32(&r);

	m->imports = kp_facts_get_array(&r, m->nimports, sizeof(*m->imports));
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
	m->special_syms = kp_facts_get_array(&r, m->nspecial_syms, sizeof(*m->special_syms));
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
	m->versions = kp_facts_get_array(&r, m->nversions, sizeof(*m->versions));
	for (size_t i = 0; i < m->nversions && !r.bad; i++) {
		m->versions[i].name = get_hashed_sym(&r, &m->versions[i].hash);
		m->versions[i].crc = get_u32(&r);
	}
	m->has_ext_versions = get_bool(&r);
	m->ext_versions_state = get_enum(&r, KP_EXT_VERSIONS_FEW_NAMES);
	m->versions_distinct = get_bool(&r);
	m->ext_versions_distinct = get_bool(&r);
	m->ext_versions = kp_facts_get_array(&r, m->next_versions, sizeof(*m->ext_versions));
	for (size_t i = 0; i < m->next_versions && !r.bad; i++) {
		m->ext_versions[i].name = get_hashed_sym(&r, &m->ext_versions[i].hash);
		m->ext_versions[i].crc = get_u32(&r);
	}
	m->this_module_size = get_u64(&r);

	get_sig(&r, &m->sig);

	m->imports_symbol_get = get_bool(&r);
	m->symget = kp_facts_get_array(&r, m->nsymget, sizeof(*m->symget));
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
	m->relocs = kp_facts_get_array(&r, m->nrelocs, sizeof(*m->relocs));
	for (size_t i = 0; i < m->nrelocs && !r.bad; i++) {
		struct kp_reloc_use *u = &m->relocs[i];

		u->type = get_u32(&r);
		u->rela = get_bool(&r);
		u->percpu = get_bool(&r);
		u->section = get_str(&r);
		u->shndx = get_u32(&r);
		u->index = get_u32(&r);
		u->count = get_u32(&r);
	}
	m->relocs_problem = get_str(&r);
	m->has_btf = get_bool(&r);
	m->has_btf_base = get_bool(&r);
	m->kept_btf = get_bool(&r);
	m->btf = kp_facts_get_blob(&r, &m->btf_len);
	m->btf_base = kp_facts_get_blob(&r, &m->btf_base_len);
	m->btf_digested = get_bool(&r);
	{
		const unsigned char *p = take(&r, sizeof(m->btf_sha256));

		if (p)
			memcpy(m->btf_sha256, p, sizeof(m->btf_sha256));
	}
	m->iface_digested = get_bool(&r);
	{
		const unsigned char *p = take(&r, sizeof(m->iface_sha256));

		if (p)
			memcpy(m->iface_sha256, p, sizeof(m->iface_sha256));
	}
	/* Everything read, nothing left over, and the one field no module lacks. */
	if (r.bad || r.off != r.len || !m->name)
		return -1;
	return 0;
}
