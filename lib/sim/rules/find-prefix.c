// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * find_symbol() for a name whose bytes end at an unmapped page (names read from the file,
 * before 6.13): each table it searches is a sorted array bsearch()ed with cmp_name(), a
 * strcmp(). A comparison with an export that begins with all of the name's bytes reads on past
 * them, into the page; any other comparison stops at a difference inside them and orders the
 * two as a terminated name would. The exports beginning with those bytes are one run of the
 * sorted table, and bsearch() narrows to where the name would be until it compares with one
 * of that run: so find_symbol() faults iff a table it searches holds such an export. No
 * comparison can find the name itself, so it searches every table it is allowed to.
 */
#include <string.h>

#include "kernel/kernel-base-prefix.h"
#include "rules.h"
#include "util/module-name.h"

static bool begins(const char *name, const char *prefix, size_t len)
{
	return !strncmp(name, prefix, len) && strnlen(name, len) == len;
}

/* vmlinux's tables: the base's vmlinux entries. */
static bool in_vmlinux(const struct kp_sim_ctx *c, const char *prefix, size_t len, bool gplok,
		       struct kp_prefix_hit *hit)
{
	const struct kp_ksym *k;
	size_t i = 0;

	while ((k = kp_base_find_prefix(c->g->base, prefix, len, i, &i))) {
		if (k->vmlinux && kp_table_allowed(c, k->table, k->gpl_only, gplok)) {
			hit->name = k->name;
			hit->owner = "vmlinux";
			return true;
		}
		i++;
	}
	return false;
}

/* The set's live modules, newest first as the modules list is. */
static bool in_set_modules(const struct kp_sim_ctx *c, const char *prefix, size_t len, bool gplok,
			   struct kp_prefix_hit *hit)
{
	const struct kp_graph *g = c->g;
	size_t best_seq = 0;
	bool found = false;

	for (size_t i = 0; i < g->n; i++) {
		const struct kp_module *m = g->nodes[i].mod;
		const struct kp_verdict *v = &c->sim->v[i];

		for (size_t j = 0; j < m->nexports; j++) {
			const struct kp_export *x = &m->exports[j];
			bool gpl;

			if (!begins(x->name, prefix, len))
				continue;
			kp_read_verdict(c, i);
			if (!v->loads || !kp_export_class(c, x, &gpl) ||
			    !kp_table_allowed(c, x->table, gpl, gplok))
				continue;
			if (!found || v->load_seq > best_seq) {
				best_seq = v->load_seq;
				hit->name = x->name;
				hit->owner = m->name;
				found = true;
			}
		}
	}
	return found;
}

/*
 * Whether find_symbol() can see base module @owner while @nd loads. Without a running system
 * every module of the base is taken as live; on one (facts->loaded known) it is live when
 * loaded, or when @nd imports from it (modprobe loads it first); a module it would pull in
 * only through another base module is not known from Module.symvers and not counted.
 */
static bool base_module_live(const struct kp_sim_ctx *c, const struct kp_node *nd,
			     const char *owner)
{
	if (!c->f->loaded || kp_symbol_index_find(&c->live_names, owner))
		return true;
	for (size_t i = 0; i < nd->nbase_deps; i++) {
		char dep[KP_PREFIX_OWNER_MAX];

		kp_modname_from_path(dep, sizeof(dep), nd->base_deps[i], KP_MODNAME_WHOLE);
		if (!strcmp(dep, owner))
			return true;
	}
	return false;
}

/* Modules known only from the base (Module.symvers lines of modules outside the set). */
static bool in_base_modules(const struct kp_sim_ctx *c, const struct kp_node *nd,
			    const char *prefix, size_t len, bool gplok, struct kp_prefix_hit *hit)
{
	const struct kp_ksym *k;
	size_t i = 0;

	while ((k = kp_base_find_prefix(c->g->base, prefix, len, i, &i))) {
		i++;
		if (k->vmlinux || !kp_table_allowed(c, k->table, k->gpl_only, gplok))
			continue;
		kp_modname_from_path(hit->owner_buf, sizeof(hit->owner_buf), k->owner,
				     KP_MODNAME_WHOLE);
		if (kp_symbol_index_find(&c->g->names, hit->owner_buf) ||
		    !base_module_live(c, nd, hit->owner_buf))
			continue;
		hit->name = k->name;
		hit->owner = hit->owner_buf;
		return true;
	}
	return false;
}

/* find_symbol()'s tables in its order (5.10 … 6.12; 6.13+ refuses such a name earlier). */
bool kp_find_symbol_prefix(const struct kp_sim_ctx *c, const struct kp_node *nd, const char *prefix,
			   size_t len, bool gplok, struct kp_prefix_hit *hit)
{
	memset(hit, 0, sizeof(*hit));
	return in_vmlinux(c, prefix, len, gplok, hit) ||
	       in_set_modules(c, prefix, len, gplok, hit) ||
	       in_base_modules(c, nd, prefix, len, gplok, hit);
}
