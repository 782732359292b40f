// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * find_symbol() (kernel/module/main.c, v5.9 … v7.2; kernel/module.c before 5.19):
 * vmlinux __ksymtab, vmlinux __ksymtab_gpl, then every formed module, newest
 * loaded first, each its __ksymtab then __ksymtab_gpl. A GPL-only table is
 * skipped when !gplok and the search goes on; the first match wins.
 * v7.1+: one __ksymtab per image, GPL-only as bit 0 of its __kflagstab entry; a
 * module's __ksymtab_gpl is ignored.
 */
#include <string.h>

#include "rules.h"
#include "util/module-name.h"

static void from_ksym(struct kp_found *out, const struct kp_ksym *k)
{
	out->gpl_only = k->gpl_only;
	out->gpl_future = k->table == KP_KSYMTAB_GPL_FUTURE;
	out->ns = k->ns;
	out->has_crc = k->has_crc;
	out->crc = k->crc;
}

bool kp_table_allowed(const struct kp_sim_ctx *c, enum kp_export_table t, bool gpl_only, bool gplok)
{
	/* gpl_future and unused tables exist only before v5.12. */
	if (c->p->has[KP_F_NO_LEGACY_TABLES] && t != KP_KSYMTAB && t != KP_KSYMTAB_GPL)
		return false;
	return gplok || !gpl_only;
}

/*
 * Whether the loader of the target sees a set module's export @x, and as GPL-only or not:
 * find_module_sections() v7.1+ reads only __ksymtab (+ __kflagstab), before only the tables.
 */
bool kp_export_class(const struct kp_sim_ctx *c, const struct kp_export *x, bool *gpl_only)
{
	if (c->p->has[KP_F_KFLAGSTAB]) {
		*gpl_only = x->gpl_only;
		return x->table == KP_KSYMTAB;
	}
	*gpl_only = kp_export_tables[x->table].gpl_only;
	return true;
}

bool kp_find_symbol(const struct kp_sim_ctx *c, const char *name, bool gplok, struct kp_found *out)
{
	return kp_find_symbol_hashed(c, name, kp_hash_string(name), gplok, out);
}

bool kp_find_symbol_hashed(const struct kp_sim_ctx *c, const char *name, uint32_t hash, bool gplok,
			   struct kp_found *out)
{
	const struct kp_graph *g = c->g;

	return kp_find_symbol_k(c, name, hash,
				g->base ? kp_base_lookup_hashed(g->base, name, hash) : NULL, gplok,
				out);
}

/*
 * The kernel's own exports never change while modules load: the graph's vmlinux edge of an
 * import is kp_base_lookup() of its name, and any other edge but the loader's says that
 * lookup found nothing (graph.c, resolve_edge()).
 */
const struct kp_ksym *kp_import_base_hit(const struct kp_sim_ctx *c, const struct kp_loading *ld,
					 const struct kp_import *imp)
{
	const struct kp_node *nd = ld->node;
	size_t j = (size_t)(imp - ld->m->imports);

	if (nd && nd->mod == ld->m && imp >= ld->m->imports && j < ld->m->nimports &&
	    j < nd->nedges) {
		if (nd->edges[j].kind == KP_PROV_VMLINUX)
			return nd->edges[j].ksym;
		if (nd->edges[j].kind != KP_PROV_LOADER)
			return NULL;
	}
	return c->g->base ? kp_base_lookup_hashed(c->g->base, imp->name, imp->hash) : NULL;
}

bool kp_find_symbol_k(const struct kp_sim_ctx *c, const char *name, uint32_t hash,
		      const struct kp_ksym *k, bool gplok, struct kp_found *out)
{
	const struct kp_graph *g = c->g;

	memset(out, 0, sizeof(*out));
	out->name = name;
	out->name_hash = hash;
	if (k && kp_table_allowed(c, k->table, k->gpl_only, gplok)) {
		from_ksym(out, k);
		out->kind = KP_PROV_VMLINUX;
		return true;
	}
	/* Live modules, newest first (list_add_rcu() at the head of the modules list). */
	{
		const struct kp_export_ref *best = NULL;
		const struct kp_symbol_index_entry *e;

		bool best_gpl = false;

		for (e = kp_symbol_index_find_hashed(&g->exports, name, hash); e;
		     e = kp_symbol_index_next(e)) {
			const struct kp_export_ref *r = e->value;
			const struct kp_verdict *v = &c->sim->v[r->node];
			bool gpl;

			kp_read_verdict(c, r->node);
			if (!v->loads || !kp_export_class(c, r->exp, &gpl) ||
			    !kp_table_allowed(c, r->exp->table, gpl, gplok))
				continue;
			if (!best || v->load_seq > c->sim->v[best->node].load_seq) {
				best = r;
				best_gpl = gpl;
			}
		}
		if (best) {
			const struct kp_verdict *v = &c->sim->v[best->node];

			out->gpl_only = best_gpl;
			out->gpl_future = best->exp->table == KP_KSYMTAB_GPL_FUTURE;
			out->ns = best->exp->ns;
			out->has_crc = best->exp->has_crc;
			out->crc = best->exp->crc;
			out->kind = KP_PROV_MODULE;
			out->owner = best->node;
			out->owner_name = g->nodes[best->node].mod->name;
			out->owner_proprietary = v->taints & (1UL << KP_TAINT_PROPRIETARY_MODULE);
			return true;
		}
	}
	/* Modules known only from the kernel base were loaded before the set. */
	k = kp_graph_base_module_export(g, name, hash);
	if (k && kp_table_allowed(c, k->table, k->gpl_only, gplok)) {
		from_ksym(out, k);
		out->kind = KP_PROV_BASE_MODULE;
		kp_modname_from_path(out->owner_buf, sizeof(out->owner_buf), k->owner,
				     KP_MODNAME_WHOLE);
		out->owner_name = out->owner_buf;
		for (size_t i = 0; i < c->f->nloaded_proprietary; i++)
			if (!strcmp(c->f->loaded_proprietary[i], out->owner_name))
				out->owner_proprietary = true;
		return true;
	}
	return false;
}
