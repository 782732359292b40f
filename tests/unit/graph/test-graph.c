// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * graph.c: who provides each import (vmlinux before any module, like find_symbol(); among the
 * set's modules the first in set order, never the importer itself; a Module.symvers module
 * only when no set module has its name), dependency lists in first-use order, the load order
 * (modprobe's: the modules named in order, each after its providers; cycles and what is
 * behind them last, in command-line order), cycles (Tarjan) and the result's independence
 * from the number of threads.
 */
#include <elf.h>

#include "builder.h"

static const struct kp_edge *edge(const struct tb_world *w, const char *mod, const char *sym)
{
	const struct kp_node *nd = &w->g.nodes[tb_node(w, mod)];

	for (size_t i = 0; i < nd->nedges; i++)
		if (!strcmp(kp_edge_import(nd, &nd->edges[i])->name, sym))
			return &nd->edges[i];
	abort();
}

static void providers(struct tap *t)
{
	struct tb_world w;
	struct kp_module *a, *b, *c, *u, *p;
	const struct kp_edge *e;
	uint32_t crc;

	tb_init(&w, "6.12.37");
	tb_std_kernel(&w);
	a = tb_module(&w, "a");
	tb_export(a, "printk", KP_KSYMTAB); /* vmlinux has it too */
	tb_export(a, "x_fn", KP_KSYMTAB);
	tb_export(a, "base_fn", KP_KSYMTAB);
	tb_import(a, "x_fn");
	b = tb_module(&w, "b");
	tb_export(b, "x_fn", KP_KSYMTAB_GPL);
	tb_export_crc(b, 0xabcd);
	tb_export(b, "y_fn", KP_KSYMTAB_GPL);
	tb_export_ns(b, "B_NS");
	c = tb_module(&w, "c");
	tb_export(c, "x_fn", KP_KSYMTAB);
	u = tb_module(&w, "u");
	tb_import(u, "printk");
	tb_import(u, "x_fn");
	tb_import(u, "y_fn");
	tb_import(u, "base_gpl");
	tb_import(u, "nowhere");
	tb_import(u, "base_fn");
	tb_import(u, "gpl_fn");
	p = tb_module(&w, "p");
	p->machine = EM_PPC64;
	tb_import(p, ".TOC.");
	tb_graph(&w);

	e = edge(&w, "u", "printk");
	tap_ok(t, e->kind == KP_PROV_VMLINUX && kp_edge_crc(e, &crc) && crc == 0x11111111,
	       "printk: vmlinux before module a");
	tap_ok(t, !kp_edge_ns(e), "printk: no namespace");
	e = edge(&w, "u", "x_fn");
	tap_ok(t, e->kind == KP_PROV_MODULE && e->node == tb_node(&w, "a") && !e->gpl_only,
	       "x_fn: the first set module in set order (a, not b or c)");
	e = edge(&w, "a", "x_fn");
	tap_ok(t,
	       e->kind == KP_PROV_MODULE && e->node == tb_node(&w, "b") && e->gpl_only &&
		       kp_edge_crc(e, &crc) && crc == 0xabcd,
	       "a's own x_fn import: never itself, b (GPL, CRC)");
	e = edge(&w, "u", "y_fn");
	tap_ok(t, kp_edge_ns(e) && !strcmp(kp_edge_ns(e), "B_NS"), "y_fn: namespace B_NS");
	crc = 1;
	tap_ok(t, !kp_edge_crc(e, &crc) && crc == 0, "y_fn: no CRC");
	e = edge(&w, "u", "base_gpl");
	tap_ok(t,
	       e->kind == KP_PROV_BASE_MODULE && e->gpl_only &&
		       !strcmp(e->ksym->owner, "drivers/misc/base-mod"),
	       "base_gpl: Module.symvers module");
	tap_ok(t, kp_edge_crc(e, &crc) && crc == 0x77777777 && !kp_edge_ns(e),
	       "base_gpl: its Module.symvers CRC, no namespace");
	e = edge(&w, "u", "base_fn");
	tap_ok(t, e->kind == KP_PROV_MODULE && e->node == tb_node(&w, "a"),
	       "base_fn: a set module before a Module.symvers module");
	e = edge(&w, "u", "nowhere");
	tap_is_int(t, e->kind, KP_PROV_NONE, "nowhere: no provider");
	crc = 1;
	tap_ok(t, !e->gpl_only && !kp_edge_ns(e) && !kp_edge_crc(e, &crc) && crc == 0,
	       "nowhere: no class, namespace or CRC");
	e = edge(&w, "p", ".TOC.");
	crc = 1;
	tap_ok(t,
	       e->kind == KP_PROV_LOADER && !e->gpl_only && !kp_edge_ns(e) &&
		       !kp_edge_crc(e, &crc) && crc == 0,
	       "ppc64 .TOC.: the loader's, no class, namespace or CRC");
	tap_ok(t, edge(&w, "u", "gpl_fn")->gpl_only, "gpl_fn: GPL-only");

	{
		const struct kp_node *nd = &w.g.nodes[tb_node(&w, "u")];

		tap_ok(t,
		       nd->ndeps == 2 && nd->deps[0] == tb_node(&w, "a") &&
			       nd->deps[1] == tb_node(&w, "b"),
		       "u's deps: a, b (distinct, first use)");
		tap_ok(t, nd->nbase_deps == 1 && !strcmp(nd->base_deps[0], "drivers/misc/base-mod"),
		       "u's base deps: base-mod once");
		tap_ok(t,
		       nd->nedges == 7 && nd->nedges == nd->mod->nimports &&
			       kp_edge_import(nd, &nd->edges[0])->symidx <
				       kp_edge_import(nd, &nd->edges[6])->symidx,
		       "edges in .symtab order");
		tap_ok(t,
		       kp_edge_import(nd, &nd->edges[4]) == &nd->mod->imports[4] &&
			       !strcmp(kp_edge_import(nd, &nd->edges[4])->name, "nowhere"),
		       "kp_edge_import: the import of the same index");
	}
	tap_is_int(t, kp_graph_find(&w.g, "c"), 2, "kp_graph_find");
	tap_is_int(t, kp_graph_find(&w.g, "zz"), SIZE_MAX, "kp_graph_find: absent");
	tb_free(&w);
}

static void order(struct tap *t)
{
	struct tb_world w;
	struct kp_module *m;
	char buf[64];

	/* c uses b, b uses a, named c b a: a b c. */
	tb_init(&w, "6.12.37");
	m = tb_module(&w, "c");
	tb_import(m, "b_fn");
	m = tb_module(&w, "b");
	tb_import(m, "a_fn");
	tb_export(m, "b_fn", KP_KSYMTAB);
	m = tb_module(&w, "a");
	tb_export(m, "a_fn", KP_KSYMTAB);
	tb_graph(&w);
	tap_ok(t, w.g.order[0] == 2 && w.g.order[1] == 1 && w.g.order[2] == 0,
	       "chain named backwards: providers first");
	tap_is_int(t, w.g.ncycles, 0, "no cycle");
	tb_free(&w);

	/*
	 * u (0) uses p2 and p1, free (3) uses nothing: modprobe -a in the order named, each
	 * module after its providers in the order it first uses them: p2, p1, u, then free.
	 */
	tb_init(&w, "6.12.37");
	m = tb_module(&w, "u");
	tb_import(m, "p2_fn");
	tb_import(m, "p1_fn");
	m = tb_module(&w, "p1");
	tb_export(m, "p1_fn", KP_KSYMTAB);
	m = tb_module(&w, "p2");
	tb_export(m, "p2_fn", KP_KSYMTAB);
	tb_module(&w, "free");
	tb_graph(&w);
	snprintf(buf, sizeof(buf), "%zu %zu %zu %zu", w.g.order[0], w.g.order[1], w.g.order[2],
		 w.g.order[3]);
	tap_is_str(t, buf, "2 1 0 3", "modprobe -a order: providers first, in first-use order");
	tb_free(&w);
}

static void cycles(struct tap *t)
{
	struct tb_world w;
	struct kp_module *m;
	char buf[64];

	/* x (free), a -> b -> c -> a, d -> a (behind the cycle), e <-> f. */
	tb_init(&w, "6.12.37");
	m = tb_module(&w, "d");
	tb_import(m, "a_fn");
	m = tb_module(&w, "a");
	tb_export(m, "a_fn", KP_KSYMTAB);
	tb_import(m, "b_fn");
	m = tb_module(&w, "b");
	tb_export(m, "b_fn", KP_KSYMTAB);
	tb_import(m, "c_fn");
	m = tb_module(&w, "c");
	tb_export(m, "c_fn", KP_KSYMTAB);
	tb_import(m, "a_fn");
	tb_module(&w, "x");
	m = tb_module(&w, "e");
	tb_export(m, "e_fn", KP_KSYMTAB);
	tb_import(m, "f_fn");
	m = tb_module(&w, "f");
	tb_export(m, "f_fn", KP_KSYMTAB);
	tb_import(m, "e_fn");
	tb_graph(&w);
	tap_is_int(t, w.g.ncycles, 2, "two cycles");
	tap_ok(t, w.g.cycles[0].len == 3 && w.g.cycles[1].len == 2, "lengths 3 and 2");
	tap_ok(t,
	       w.g.nodes[1].in_cycle && w.g.nodes[2].in_cycle && w.g.nodes[3].in_cycle &&
		       w.g.nodes[5].in_cycle && w.g.nodes[6].in_cycle && !w.g.nodes[0].in_cycle &&
		       !w.g.nodes[4].in_cycle,
	       "in_cycle: a b c e f, not d (behind) or x");
	snprintf(buf, sizeof(buf), "%zu %zu %zu %zu %zu %zu %zu", w.g.order[0], w.g.order[1],
		 w.g.order[2], w.g.order[3], w.g.order[4], w.g.order[5], w.g.order[6]);
	tap_is_str(t, buf, "4 0 1 2 3 5 6", "x first, then cycles and d in command-line order");
	tb_free(&w);
}

static void threads(struct tap *t)
{
	struct tb_world w;
	struct kp_graph g4;
	struct kp_err err;
	bool same = true;
	char name[200][8], sym[200][8];

	tb_init(&w, "6.12.37");
	tb_std_kernel(&w);
	for (int i = 0; i < 200; i++) {
		struct kp_module *m;

		snprintf(name[i], sizeof(name[i]), "m%d", i);
		snprintf(sym[i], sizeof(sym[i]), "s%d", i);
		m = tb_module(&w, name[i]);
		tb_export(m, sym[i], KP_KSYMTAB);
		if (i)
			tb_import(m, sym[(i * 7) % i]);
		tb_import(m, "printk");
	}
	tb_graph(&w);
	tap_ok(t, kp_graph_build(&g4, &w.set, w.base, 4, &err) == 0, "4 threads");
	for (size_t i = 0; i < w.g.n; i++) {
		same = same && g4.order[i] == w.g.order[i] &&
		       g4.nodes[i].ndeps == w.g.nodes[i].ndeps;
		for (size_t e = 0; e < g4.nodes[i].nedges; e++)
			same = same && g4.nodes[i].edges[e].kind == w.g.nodes[i].edges[e].kind &&
			       g4.nodes[i].edges[e].node == w.g.nodes[i].edges[e].node;
	}
	tap_ok(t, same, "1 and 4 threads: the same graph");
	kp_graph_release(&g4);
	tb_free(&w);
}

int main(void)
{
	struct tap t = { 0 };

	providers(&t);
	order(&t);
	cycles(&t);
	threads(&t);
	return tap_done(&t);
}
