// SPDX-License-Identifier: GPL-2.0-or-later
/* kopolicy graph --format json: every import's provider, class, namespace and CRC. */
#include "config.h"

#include <string.h>

#include "graph-output.h"
#include "json-out.h"

struct json_items {
	const struct kp_graph *g;
	const bool *in;
	bool pretty;
};

/* The imports array as text (plain output): the same bytes as the objects below. */
static struct json_object *imports_text(struct kp_jb *b, const struct kp_graph *g,
					const struct kp_node *nd)
{
	struct kp_jtext t = { 0 };

	kp_jtext_lit(&t, "[");
	for (size_t e = 0; e < nd->nedges && !t.failed; e++) {
		const struct kp_edge *ed = &nd->edges[e];
		const struct kp_import *imp = kp_edge_import(nd, ed);
		char buf[64];
		uint32_t crc;
		bool has_crc = kp_edge_crc(ed, &crc);

		kp_jtext_lit(&t, e ? ",{\"symbol\":" : "{\"symbol\":");
		kp_jtext_str(&t, imp->name);
		kp_jtext_lit(&t, ",\"weak\":");
		kp_jtext_bool(&t, imp->weak);
		kp_jtext_lit(&t, ",\"kind\":");
		kp_jtext_str(&t, kp_graph_kind_name(ed->kind));
		kp_jtext_lit(&t, ",\"provider\":");
		kp_jtext_str(&t, kp_graph_provider_name(g, ed, buf, sizeof(buf)));
		kp_jtext_lit(&t, ",\"gpl_only\":");
		kp_jtext_bool(&t, ed->gpl_only);
		kp_jtext_lit(&t, ",\"namespace\":");
		kp_jtext_str(&t, kp_edge_ns(ed));
		kp_jtext_lit(&t, ",\"crc\":");
		kp_jtext_crc(&t, has_crc, crc);
		kp_jtext_lit(&t, "}");
	}
	kp_jtext_lit(&t, "]");
	return kp_jb_text(b, &t);
}

/* The module at place @k of the load order, or NULL when --focus leaves it out. */
static struct json_object *module_json(struct kp_jb *b, size_t k, void *data)
{
	const struct json_items *it = data;
	const struct kp_graph *g = it->g;
	size_t i = g->order[k];
	const struct kp_node *nd = &g->nodes[i];
	struct json_object *m, *deps, *unres, *edges, *bdeps;

	if (it->in && !it->in[i])
		return NULL;
	m = kp_jb_object(b);
	kp_jb_add(b, m, "name", kp_jb_string(b, nd->mod->name));
	kp_jb_add(b, m, "path", kp_jb_string(b, nd->path));
	kp_jb_add(b, m, "license", kp_jb_string(b, nd->mod->license));
	kp_jb_add(b, m, "license_gpl_compatible", kp_jb_bool(b, nd->mod->license_gpl_compatible));
	deps = kp_jb_array(b);
	for (size_t d = 0; d < nd->ndeps; d++)
		kp_jb_push(b, deps, kp_jb_string(b, g->nodes[nd->deps[d]].mod->name));
	bdeps = kp_jb_array(b);
	for (size_t d = 0; d < nd->nbase_deps; d++)
		kp_jb_push(b, bdeps, kp_jb_string(b, nd->base_deps[d]));
	unres = kp_jb_array(b);
	edges = it->pretty ? kp_jb_array(b) : imports_text(b, g, nd);
	for (size_t e = 0; e < nd->nedges && !kp_jb_failed(b); e++) {
		const struct kp_edge *ed = &nd->edges[e];
		const struct kp_import *imp = kp_edge_import(nd, ed);
		struct json_object *eo, *sym;
		char buf[64];
		uint32_t crc;
		bool has_crc;

		if (!it->pretty) {
			if (ed->kind == KP_PROV_NONE) {
				struct json_object *u = kp_jb_object(b);

				kp_jb_add(b, u, "name", kp_jb_string(b, imp->name));
				kp_jb_add(b, u, "weak", kp_jb_bool(b, imp->weak));
				kp_jb_push(b, unres, u);
			}
			continue;
		}
		eo = kp_jb_object(b);
		sym = kp_jb_string(b, imp->name);

		kp_jb_add(b, eo, "symbol", sym);
		kp_jb_add(b, eo, "weak", kp_jb_bool(b, imp->weak));
		kp_jb_add(b, eo, "kind", kp_jb_static(b, kp_graph_kind_name(ed->kind)));
		kp_jb_add(
			b, eo, "provider",
			ed->kind == KP_PROV_VMLINUX
				? kp_jb_static(b, "vmlinux")
				: kp_jb_string(b, kp_graph_provider_name(g, ed, buf, sizeof(buf))));
		kp_jb_add(b, eo, "gpl_only", kp_jb_bool(b, ed->gpl_only));
		kp_jb_add(b, eo, "namespace", kp_jb_string(b, kp_edge_ns(ed)));
		has_crc = kp_edge_crc(ed, &crc);
		kp_jb_add(b, eo, "crc", kp_jb_crc(b, has_crc, crc));
		kp_jb_push(b, edges, eo);
		if (ed->kind == KP_PROV_NONE) {
			struct json_object *u = kp_jb_object(b);

			kp_jb_add(b, u, "name", json_object_get(sym));
			kp_jb_add(b, u, "weak", kp_jb_bool(b, imp->weak));
			kp_jb_push(b, unres, u);
		}
	}
	kp_jb_add(b, m, "depends", deps);
	kp_jb_add(b, m, "base_depends", bdeps);
	kp_jb_add(b, m, "unresolved", unres);
	kp_jb_add(b, m, "imports", edges);
	return m;
}

int kp_graph_print_json(FILE *f, const struct kp_graph *g, const bool *in, bool pretty,
			unsigned jobs)
{
	struct json_items it = { .g = g, .in = in, .pretty = pretty };
	struct json_object *cycles, *dups;
	struct kp_jb *b;
	int rc;

	/* Streamed a window of modules at a time: a whole tree never sits in memory as JSON. */
	fputs("{\"schema_version\":1,\"modules\":[", f);
	if (kp_json_stream(f, g->n, module_json, &it, pretty, jobs))
		return -1;
	b = kp_jb_new();
	if (!b)
		return -1;
	cycles = kp_jb_array(b);
	for (size_t c = 0; c < g->ncycles; c++) {
		struct json_object *cy = kp_jb_array(b);

		for (size_t j = 0; j < g->cycles[c].len; j++)
			kp_jb_push(b, cy,
				   kp_jb_string(b, g->nodes[g->cycles[c].nodes[j]].mod->name));
		kp_jb_push(b, cycles, cy);
	}
	dups = kp_jb_array(b);
	for (size_t i = 0; i < g->n; i++) {
		struct json_object *d, *paths;

		if (!g->nodes[i].duplicate_name || kp_graph_find(g, g->nodes[i].mod->name) != i)
			continue;
		d = kp_jb_object(b);
		kp_jb_add(b, d, "name", kp_jb_string(b, g->nodes[i].mod->name));
		paths = kp_jb_array(b);
		for (size_t j = i; j < g->n; j++)
			if (!strcmp(g->nodes[j].mod->name, g->nodes[i].mod->name))
				kp_jb_push(b, paths, kp_jb_string(b, g->nodes[j].path));
		kp_jb_add(b, d, "paths", paths);
		kp_jb_push(b, dups, d);
	}
	if (kp_jb_failed(b)) {
		json_object_put(cycles);
		json_object_put(dups);
		rc = -1;
	} else {
		fputs("],\"cycles\":", f);
		rc = kp_json_emit(f, cycles, pretty);
		fputs(",\"duplicate_names\":", f);
		rc |= kp_json_emit(f, dups, pretty);
		fputs("}\n", f);
	}
	kp_jb_free(b);
	return rc;
}
