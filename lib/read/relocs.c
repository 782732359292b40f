// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Relocation types: what apply_relocations() (kernel/module/main.c, all versions) hands to
 * the architecture's apply_relocate() (SHT_REL) / apply_relocate_add() (SHT_RELA). It walks
 * the sections in index order and skips a relocation section whose sh_info is not a section
 * index, whose target is not SHF_ALLOC, or that carries SHF_RELA_LIVEPATCH (livepatch applies
 * those itself). rewrite_section_headers() clears SHF_ALLOC of .modinfo and __versions
 * (and of __version_ext_* 6.14+) first; layout_and_allocate() clears it of .data..percpu,
 * whose relocations only newer kernels apply anyway (KP_F_PERCPU_RELOCS): both are read here
 * and marked, the rule decides.
 */
#include <stdlib.h>
#include <string.h>

#include "module-internal.h"

#ifndef SHF_RELA_LIVEPATCH
#define SHF_RELA_LIVEPATCH 0x00100000
#endif

/* Sections whose SHF_ALLOC the loader clears before it relocates (all versions). */
bool kp_loader_unallocs(const char *name)
{
	return !strcmp(name, ".modinfo") || !strcmp(name, "__versions") ||
	       !strcmp(name, "__version_ext_crcs") || !strcmp(name, "__version_ext_names");
}

static struct kp_reloc_use *find_use(struct kp_module *m, uint32_t type, bool rela, bool percpu)
{
	for (size_t i = 0; i < m->nrelocs; i++)
		if (m->relocs[i].type == type && m->relocs[i].rela == rela &&
		    m->relocs[i].percpu == percpu)
			return &m->relocs[i];
	return NULL;
}

static int note_types(struct kp_module *m, const struct kp_elf *e, size_t ridx, bool percpu,
		      const struct kp_reloc *r, size_t n, size_t *cap, struct kp_err *err)
{
	const struct kp_section *rs = &e->sections[ridx];
	const char *name = NULL;

	for (size_t i = 0; i < n; i++) {
		bool rela = rs->type == SHT_RELA;
		struct kp_reloc_use *u = find_use(m, r[i].type, rela, percpu);

		if (u) {
			u->count++;
			continue;
		}
		if (!name && !(name = kp_arena_strdup(&m->arena, rs->name)))
			return kp_err_set(err, "out of memory");
		u = kp_module_push(m, &m->relocs, &m->nrelocs, cap, sizeof(*m->relocs));
		if (!u)
			return kp_err_set(err, "out of memory");
		memset(u, 0, sizeof(*u));
		u->type = r[i].type;
		u->rela = rela;
		u->percpu = percpu;
		u->section = name;
		u->shndx = (uint32_t)ridx;
		u->index = (uint32_t)i;
		u->count = 1;
	}
	return 0;
}

int kp_read_relocs(struct kp_module *m, struct kp_elf *e, struct kp_err *err)
{
	size_t cap = 0;

	for (size_t i = 1; i < e->nsections; i++) {
		const struct kp_section *rs = &e->sections[i];
		const struct kp_section *t;
		struct kp_reloc *r = NULL;
		struct kp_err rerr = { 0 };
		size_t n = 0;
		bool percpu;
		int ret;

		if (rs->type != SHT_REL && rs->type != SHT_RELA)
			continue;
		if (rs->info == 0 || rs->info >= e->nsections || (rs->flags & SHF_RELA_LIVEPATCH))
			continue;
		t = &e->sections[rs->info];
		percpu = !strcmp(t->name, ".data..percpu");
		if (!(t->flags & SHF_ALLOC) || kp_loader_unallocs(t->name))
			continue;
		if (kp_elf_reloc_section(e, i, &r, &n, &rerr) < 0) {
			if (!strcmp(rerr.msg, "out of memory"))
				return kp_err_set(err, "out of memory");
			/* the loader reads it regardless: the rule says it was not checked */
			if (!m->relocs_problem &&
			    !(m->relocs_problem = kp_arena_strdup(&m->arena, rerr.msg)))
				return kp_err_set(err, "out of memory");
			continue;
		}
		ret = note_types(m, e, i, percpu, r, n, &cap, err);
		free(r);
		if (ret < 0)
			return -1;
	}
	return 0;
}
