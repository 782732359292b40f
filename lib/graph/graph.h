/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The dependency graph of a module set over a kernel export base: for every
 * import, who provides it (vmlinux, a module of the set, an in-tree module
 * known only from the base, or nobody) and under which export class; module
 * dependencies, a load order and dependency cycles.
 */
#ifndef KP_GRAPH_H
#define KP_GRAPH_H

#include <stdbool.h>
#include <stddef.h>

#include "kernel/kernel-base.h"
#include "module-set.h"
#include "util/symbol-index.h"

enum kp_provider_kind {
	KP_PROV_NONE,
	KP_PROV_VMLINUX,
	KP_PROV_MODULE,	     /* a module of the set */
	KP_PROV_BASE_MODULE, /* a module known only from the base (Module.symvers, tree) */
	KP_PROV_LOADER,	     /* defined by the loader itself (kp_loader_defines()) */
};

/*
 * An undefined symbol the loader defines before any lookup: ppc64's ".TOC." (dedotify() in
 * module_frob_arch_sections(), arch/powerpc/kernel/module_64.c, all versions: SHN_ABS).
 * depmod fakes it the same way (depmod_add_fake_syms()).
 */
bool kp_loader_defines(uint16_t machine, const char *name);

/*
 * One per import of a whole tree (~185k): kept to 16 bytes. What the loader reads off the
 * provider's export record (namespace, CRC) is not copied here but read through the record
 * (kp_edge_ns(), kp_edge_crc()); the import is the module's import of the same index
 * (kp_edge_import()). The class stays: every rule pass reads it.
 */
struct kp_edge {
	union {
		const struct kp_export *exp; /* KP_PROV_MODULE */
		const struct kp_ksym *ksym;  /* KP_PROV_VMLINUX, KP_PROV_BASE_MODULE */
	};
	uint32_t node; /* KP_PROV_MODULE: the provider's node */
	enum kp_provider_kind kind : 8;
	bool gpl_only; /* the provider's export class (false: KP_PROV_NONE, KP_PROV_LOADER) */
};

/* 16 bytes on 64-bit (40 with the copies), 12 on 32-bit. */
_Static_assert(sizeof(struct kp_edge) <= 16, "struct kp_edge stays within 16 bytes");

struct kp_node {
	const struct kp_module *mod;
	const char *path;
	struct kp_edge *edges; /* one per import, .symtab order */
	size_t nedges;
	size_t *deps; /* distinct provider nodes, first use order */
	size_t ndeps;
	const char **base_deps; /* distinct base-module providers (owner names) */
	size_t nbase_deps;
	bool in_cycle;
	bool duplicate_name; /* another node of the set has the same module name */
	bool walked;	     /* found in a directory operand (or the whole tree), not named */
	bool provider;	     /* resolved against, not reported (check --provider) */
};

/* The import edge @e of node @nd resolves: edges and imports share their index. */
static inline const struct kp_import *kp_edge_import(const struct kp_node *nd,
						     const struct kp_edge *e)
{
	return &nd->mod->imports[e - nd->edges];
}

/* The namespace of the export @e resolves to, NULL when it has none or @e has no record. */
static inline const char *kp_edge_ns(const struct kp_edge *e)
{
	switch (e->kind) {
	case KP_PROV_MODULE:
		return e->exp->ns;
	case KP_PROV_VMLINUX:
	case KP_PROV_BASE_MODULE:
		return e->ksym->ns;
	case KP_PROV_NONE:
	case KP_PROV_LOADER:
		break;
	}
	return NULL;
}

/*
 * Whether the export @e resolves to has a known CRC; *@crc is the record's CRC
 * (0 when @e has no record).
 */
static inline bool kp_edge_crc(const struct kp_edge *e, uint32_t *crc)
{
	switch (e->kind) {
	case KP_PROV_MODULE:
		*crc = e->exp->crc;
		return e->exp->has_crc;
	case KP_PROV_VMLINUX:
	case KP_PROV_BASE_MODULE:
		*crc = e->ksym->crc;
		return e->ksym->has_crc;
	case KP_PROV_NONE:
	case KP_PROV_LOADER:
		break;
	}
	*crc = 0;
	return false;
}

struct kp_graph {
	struct kp_node *nodes;
	size_t n;
	const struct kp_kernel_base *base; /* borrowed, may be NULL */
	struct kp_symbol_index exports;	   /* symbol name -> struct kp_export_ref (set modules) */
	struct kp_export_ref *export_refs; /* storage behind the index */
	struct kp_symbol_index names;	   /* module name -> node (set modules) */
	size_t *order;			   /* load order: modprobe's (graph.c, load_order()) */
	struct kp_cycle *cycles;	   /* dependency cycles (strongly connected components) */
	size_t ncycles;
	/*
	 * NULL: each node owns its edges (kp_graph_build()); else every node's edges are slices
	 * of this one allocation, owned here (graph-rebuild.c) and freed once.
	 */
	struct kp_edge *edge_block;
};

struct kp_cycle {
	size_t *nodes;
	size_t len;
};

/* An export of a set module, as stored in kp_graph.exports. */
struct kp_export_ref {
	size_t node;
	const struct kp_export *exp;
};

/*
 * An export of a module known only from the base (a Module.symvers line not owned
 * by vmlinux) whose module is not part of the set (the set's own reading wins), or NULL.
 * @hash: kp_hash_string(@name).
 */
const struct kp_ksym *kp_graph_base_module_export(const struct kp_graph *g, const char *name,
						  uint32_t hash);

/*
 * Builds the graph of every successfully read module of @set; @base may be NULL.
 * @jobs threads resolve the imports (0: one per CPU); the result does not depend on it.
 */
int kp_graph_build(struct kp_graph *g, const struct kp_module_set *set,
		   const struct kp_kernel_base *base, unsigned jobs, struct kp_err *err);
void kp_graph_release(struct kp_graph *g);

/*
 * kp_graph_build() in parts, for a graph whose edges come from elsewhere (graph-rebuild.h):
 * kp_graph_begin() puts in @g the nodes of @set, their duplicate names and the index of
 * their exports, no edge (0, or -1 with @err and @g released); then each node's edges
 * (one per import, in import order) and kp_graph_node_deps() its dependency lists from them
 * (0, or -1: out of memory); then kp_graph_finish() the load order and the cycles (0, or
 * -1 with @err). After a failure of the last two the caller releases @g.
 */
int kp_graph_begin(struct kp_graph *g, const struct kp_module_set *set,
		   const struct kp_kernel_base *base, struct kp_err *err);
int kp_graph_node_deps(struct kp_node *nd);
int kp_graph_finish(struct kp_graph *g, struct kp_err *err);

/* The node of the module called @name (first one in set order), or SIZE_MAX. */
size_t kp_graph_find(const struct kp_graph *g, const char *name);

#endif
