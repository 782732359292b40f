// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Symbol versions the module was built against (its imports' CRCs).
 *   __versions: struct modversion_info { unsigned long crc; char name[64 - sizeof(long)]; }
 *     (include/linux/module.h, all versions; read by check_version() in
 *     kernel/module/version.c); Ubuntu kernels carry a SAUCE variant
 *     { u32 next; u32 crc; char name[]; } walked by ->next, recognised here.
 *   __version_ext_crcs (s32[]) + __version_ext_names (NUL-separated), v6.14+
 *     CONFIG_EXTENDED_MODVERSIONS (elf_validity_cache_index_versions()).
 */
#include <string.h>

#include "module-internal.h"
#include "util/symbol-index.h"

#define MODVERSION_RECORD 64

static bool fixed_layout_fits(const struct kp_elf *e, const struct kp_section *s)
{
	unsigned w = e->is64 ? 8 : 4;

	if (s->size % MODVERSION_RECORD)
		return false;
	for (uint64_t off = 0; off < s->size; off += MODVERSION_RECORD) {
		const unsigned char *rec = s->data + off;

		if (!memchr(rec + w, '\0', MODVERSION_RECORD - w) || rec[w] == '\0')
			return false;
		/* The CRC is a u32 in an unsigned long: the other half is zero. */
		if (w == 8 && kp_load64(rec, e->big_endian) >> 32)
			return false;
	}
	return true;
}

static bool ubuntu_layout_fits(const struct kp_section *s, bool big, size_t *count)
{
	uint64_t off = 0;

	*count = 0;
	while (off + 8 <= s->size) {
		uint32_t next = kp_load32(s->data + off, big);

		if (next == 0)
			break;
		if (next < 9 || next % 4 || next > s->size - off)
			return false;
		if (!memchr(s->data + off + 8, '\0', next - 8) || s->data[off + 8] == '\0')
			return false;
		off += next;
		(*count)++;
	}
	return *count > 0;
}

/*
 * The name of a version entry: nearly always an import's name, which the module
 * already holds; share it instead of copying (imports are read first).
 */
static const char *version_name(struct kp_module *m, const struct kp_name_pool *names,
				const char *name, size_t len, size_t *hint)
{
	const char *shared;

	/* modpost writes __versions in .symtab order: the next import is nearly always it. */
	if (*hint < m->nimports && !strncmp(m->imports[*hint].name, name, len) &&
	    m->imports[*hint].name[len] == '\0')
		return m->imports[(*hint)++].name;
	shared = names ? names->find(names->ctx, name, len) : NULL;
	if (shared)
		return shared; /* the import's name came from the same pool */
	for (size_t k = 0; k < m->nimports; k++) {
		size_t i = (*hint + k) % m->nimports;

		if (!strncmp(m->imports[i].name, name, len) && m->imports[i].name[len] == '\0') {
			*hint = i + 1;
			return m->imports[i].name;
		}
	}
	return kp_arena_strndup(&m->arena, name, len);
}

static int read_basic(struct kp_module *m, const struct kp_elf *e, const struct kp_name_pool *names,
		      struct kp_err *err)
{
	size_t idx = kp_elf_find_section(e, "__versions");
	const struct kp_section *s;
	size_t n, hint = 0;

	if (!idx)
		return 0;
	s = &e->sections[idx];
	m->versions_alloc = s->flags & SHF_ALLOC;
	m->versions_format = KP_VERSIONS_FIXED;
	if (s->size == 0)
		return 0;
	if (!s->data)
		return kp_err_set(err, "__versions has no contents in the file");
	if (fixed_layout_fits(e, s)) {
		unsigned w = e->is64 ? 8 : 4;

		m->versions = kp_module_array(m, s->size / MODVERSION_RECORD, sizeof(*m->versions));
		if (!m->versions)
			return kp_err_set(err, "out of memory");
		for (uint64_t off = 0; off < s->size; off += MODVERSION_RECORD) {
			struct kp_version *v = &m->versions[m->nversions++];

			v->crc = (uint32_t)(w == 8 ? kp_load64(s->data + off, e->big_endian)
						   : kp_load32(s->data + off, e->big_endian));
			v->name = version_name(m, names, (const char *)s->data + off + w,
					       strlen((const char *)s->data + off + w), &hint);
			v->hash = v->name ? kp_hash_string(v->name) : 0;
			if (!v->name)
				return kp_err_set(err, "out of memory");
		}
		return 0;
	}
	if (ubuntu_layout_fits(s, e->big_endian, &n)) {
		uint64_t off = 0;

		m->versions_format = KP_VERSIONS_UBUNTU;
		m->versions = kp_module_array(m, n, sizeof(*m->versions));
		if (!m->versions)
			return kp_err_set(err, "out of memory");
		for (size_t i = 0; i < n; i++) {
			struct kp_version *v = &m->versions[m->nversions++];

			v->crc = kp_load32(s->data + off + 4, e->big_endian);
			v->name = version_name(m, names, (const char *)s->data + off + 8,
					       strlen((const char *)s->data + off + 8), &hint);
			v->hash = v->name ? kp_hash_string(v->name) : 0;
			if (!v->name)
				return kp_err_set(err, "out of memory");
			off += kp_load32(s->data + off, e->big_endian);
		}
		return 0;
	}
	return kp_err_set(err,
			  "__versions (%llu bytes) fits neither the 64-byte record layout "
			  "nor Ubuntu's variable-length one",
			  (unsigned long long)s->size);
}

/*
 * elf_validity_cache_index_versions() (v6.14+): both sections or neither; every CRC needs a
 * name (strnlen() walk). What it finds is recorded, not refused: older kernels ignore the
 * sections, and the simulation decides per target.
 */
static int read_extended(struct kp_module *m, const struct kp_elf *e,
			 const struct kp_name_pool *names, struct kp_err *err)
{
	size_t ci = kp_elf_find_section(e, "__version_ext_crcs");
	size_t ni = kp_elf_find_section(e, "__version_ext_names");
	const struct kp_section *cs, *ns;
	uint64_t pos = 0, ncrcs;
	size_t cap = 0;

	/* find_sec() sees only SHF_ALLOC sections. */
	if (ci && !(e->sections[ci].flags & SHF_ALLOC))
		ci = 0;
	if (ni && !(e->sections[ni].flags & SHF_ALLOC))
		ni = 0;
	if (!ci && !ni)
		return 0;
	if (!ci || !ni) {
		m->ext_versions_state = KP_EXT_VERSIONS_ONE_MISSING;
		return 0;
	}
	cs = &e->sections[ci];
	ns = &e->sections[ni];
	if ((cs->size && !cs->data) || (ns->size && !ns->data))
		return kp_err_set(err, "extended version sections have no contents in the file");
	ncrcs = cs->size / 4;
	for (uint64_t k = 0, p = 0; k < ncrcs; k++) {
		const unsigned char *nul =
			p < ns->size ? memchr(ns->data + p, '\0', ns->size - p) : NULL;

		if (!nul) {
			m->ext_versions_state = KP_EXT_VERSIONS_FEW_NAMES;
			return 0;
		}
		p = (uint64_t)(nul - ns->data) + 1;
	}
	m->ext_versions_state = KP_EXT_VERSIONS_OK;
	m->has_ext_versions = true;
	for (uint64_t k = 0; k < ncrcs; k++) {
		const unsigned char *nul = memchr(ns->data + pos, '\0', ns->size - pos);
		struct kp_version *v;

		v = kp_module_push(m, &m->ext_versions, &m->next_versions, &cap,
				   sizeof(*m->ext_versions));
		if (!v)
			return kp_err_set(err, "out of memory");
		v->crc = kp_load32(cs->data + k * 4, e->big_endian);
		v->name = kp_module_symname(m, names, (const char *)ns->data + pos,
					    (size_t)(nul - (ns->data + pos)));
		v->hash = v->name ? kp_hash_string(v->name) : 0;
		if (!v->name)
			return kp_err_set(err, "out of memory");
		pos = (uint64_t)(nul - ns->data) + 1;
	}
	return 0;
}

/*
 * True if no name appears twice in @v: then any match is the first match, and the
 * simulation's check_version() may start its walk where the last lookup ended.
 */
static int names_distinct(const struct kp_version *v, size_t n, bool *distinct)
{
	struct kp_symbol_index seen;

	*distinct = true;
	if (n < 2)
		return 0;
	if (kp_symbol_index_init(&seen, n) < 0)
		return -1;
	for (size_t i = 0; i < n && *distinct; i++) {
		if (kp_symbol_index_find(&seen, v[i].name))
			*distinct = false;
		else if (kp_symbol_index_add(&seen, v[i].name, NULL) < 0) {
			kp_symbol_index_release(&seen);
			return -1;
		}
	}
	kp_symbol_index_release(&seen);
	return 0;
}

int kp_read_versions(struct kp_module *m, const struct kp_elf *e, const struct kp_name_pool *names,
		     struct kp_err *err)
{
	if (read_basic(m, e, names, err) < 0 || read_extended(m, e, names, err) < 0)
		return -1;
	if (names_distinct(m->versions, m->nversions, &m->versions_distinct) < 0 ||
	    names_distinct(m->ext_versions, m->next_versions, &m->ext_versions_distinct) < 0)
		return kp_err_set(err, "out of memory");
	return 0;
}
