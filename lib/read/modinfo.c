// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * .modinfo: "tag=value\0" strings, NUL padding allowed between them.
 * Models get_modinfo()/next_string() in kernel/module/main.c (v2.6 … v6.12):
 * the first tag wins, a tag without '=' matches nothing.
 */
#include <string.h>

#include "license.h"
#include "module-internal.h"

static int split_depends(struct kp_module *m, const char *v, struct kp_err *err)
{
	size_t cap = 0;

	while (*v) {
		const char *comma = strchr(v, ',');
		size_t len = comma ? (size_t)(comma - v) : strlen(v);

		if (len) {
			const char **slot = kp_module_push(m, &m->depends, &m->ndepends, &cap,
							   sizeof(*m->depends));

			if (!slot)
				return kp_err_set(err, "out of memory");
			*slot = kp_arena_strndup(&m->arena, v, len);
			if (!*slot)
				return kp_err_set(err, "out of memory");
		}
		v += len + (comma ? 1 : 0);
	}
	return 0;
}

/* The tags the loader and modpost give meaning to: kept even without full_modinfo. */
static bool loader_tag(const char *s, size_t len)
{
	static const char *const tags[] = {
		"name",	      "license",   "vermagic",	"intree",    "staging",
		"test",	      "livepatch", "retpoline", "import_ns", "depends",
		"srcversion", "version",   "sig_id",
	};

	for (size_t i = 0; i < KP_ARRAY_SIZE(tags); i++) {
		size_t tl = strlen(tags[i]);

		if (len >= tl && !strncmp(s, tags[i], tl) && (len == tl || s[tl] == '='))
			return true;
	}
	return false;
}

int kp_read_modinfo(struct kp_module *m, const struct kp_elf *e, struct kp_err *err)
{
	size_t idx = kp_elf_find_section(e, ".modinfo");
	size_t cap = 0, nscap = 0;
	const struct kp_section *s;
	size_t pos = 0;

	m->nmodinfo_sections = kp_elf_count_sections(e, ".modinfo");
	if (!idx)
		return 0;
	s = &e->sections[idx];
	if (!s->data)
		return kp_err_set(err, ".modinfo has no contents in the file");
	while (pos < s->size) {
		const char *str = (const char *)s->data + pos;
		const char *nul = memchr(str, '\0', s->size - pos);
		size_t len = nul ? (size_t)(nul - str) : s->size - pos;
		struct kp_modinfo_entry *ent;
		const char *eq;

		pos += len + 1;
		if (!len || (!m->full_modinfo && !loader_tag(str, len)))
			continue;
		ent = kp_module_push(m, &m->modinfo, &m->nmodinfo, &cap, sizeof(*m->modinfo));
		if (!ent)
			return kp_err_set(err, "out of memory");
		eq = memchr(str, '=', len);
		ent->key = kp_arena_strndup(&m->arena, str, eq ? (size_t)(eq - str) : len);
		ent->value =
			eq ? kp_arena_strndup(&m->arena, eq + 1, len - (size_t)(eq - str) - 1) : "";
		if (!ent->key || !ent->value)
			return kp_err_set(err, "out of memory");
		if (!eq)
			continue;
		if (!strcmp(ent->key, "import_ns")) {
			const char **slot = kp_module_push(m, &m->import_ns, &m->nimport_ns, &nscap,
							   sizeof(*m->import_ns));

			if (!slot)
				return kp_err_set(err, "out of memory");
			*slot = ent->value;
		}
	}

	m->modinfo_name = kp_module_modinfo(m, "name");
	m->license = kp_module_modinfo(m, "license");
	m->license_gpl_compatible = kp_license_is_gpl_compatible(m->license);
	m->vermagic = kp_module_modinfo(m, "vermagic");
	m->srcversion = kp_module_modinfo(m, "srcversion");
	m->intree = kp_module_modinfo(m, "intree") != NULL;
	m->staging = kp_module_modinfo(m, "staging") != NULL;
	m->test = kp_module_modinfo(m, "test") != NULL;
	m->livepatch = kp_module_modinfo(m, "livepatch") != NULL;
	m->retpoline = kp_module_modinfo(m, "retpoline") != NULL;
	if (kp_module_modinfo(m, "depends"))
		return split_depends(m, kp_module_modinfo(m, "depends"), err);
	return 0;
}
