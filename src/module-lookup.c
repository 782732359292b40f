// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A module named on the command line (explain MODULE, graph --focus MODULE) found the way a
 * modprobe user names it: a file of the set, a module name with '-' and '_' alike, a file
 * name (nvidia-current-uvm.ko.xz), or, in a modules tree (-b ROOT, --running), whatever
 * modprobe resolves (modprobe.d aliases, modules.alias) through the tree's own indexes.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "system/kernel-tree.h"
#include "system/modprobe-chain.h"
#include "module-lookup.h"
#include "util/module-name.h"

/* The node named @name ('-' and '_' alike), or SIZE_MAX. */
static size_t by_name(const struct kp_graph *g, const char *name)
{
	char want[256], have[256];

	kp_modname_copy(want, sizeof(want), name, SIZE_MAX);
	for (size_t i = 0; i < g->n; i++) {
		kp_modname_copy(have, sizeof(have), g->nodes[i].mod->name, SIZE_MAX);
		if (!strcmp(want, have))
			return i;
	}
	return SIZE_MAX;
}

/* What modprobe resolves @asked to in the context's modules tree: the first target found. */
static size_t by_modprobe(const struct kp_ctx *a, const char *asked, const char **how)
{
	struct kp_chain chain = { 0 };
	struct kp_err err = { 0 };
	size_t found = SIZE_MAX;

	if (!a->have_tree || !a->tree.moddir ||
	    kp_chain_open(&chain, a->tree.root, a->tree.moddir, NULL, 0, NULL, 0, NULL, NULL, NULL,
			  &err) < 0)
		return SIZE_MAX;
	if (kp_chain_resolve(&chain, asked, &err) == 0)
		for (size_t i = 0; i < chain.n && found == SIZE_MAX; i++)
			if (chain.mods[i].target && !chain.mods[i].builtin)
				found = by_name(&a->graph, chain.mods[i].name);
	if (found != SIZE_MAX)
		*how = chain.via_alias ? "an alias modprobe resolves" : "modprobe's index";
	kp_chain_close(&chain);
	return found;
}

size_t kp_cli_find_module(const struct kp_ctx *a, const char *asked, const char **how)
{
	char name[256];
	size_t i;

	*how = "module name";
	for (i = 0; i < a->graph.n; i++)
		if (!strcmp(a->graph.nodes[i].path, asked)) {
			*how = "file";
			return i;
		}
	if ((i = by_name(&a->graph, asked)) != SIZE_MAX)
		return i;
	/* a file name: its basename without .ko* ("nvidia-current-uvm.ko.xz") */
	kp_modname_from_path(name, sizeof(name), asked, KP_MODNAME_KO);
	if (*name && (i = by_name(&a->graph, name)) != SIZE_MAX) {
		*how = "file name";
		return i;
	}
	return by_modprobe(a, asked, how);
}
