/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `kopolicy graph` output formats: formatting only, the graph comes from lib/graph. */
#ifndef KP_GRAPH_OUTPUT_H
#define KP_GRAPH_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "graph/graph.h"

/* @in: the nodes to show (--focus), NULL for all. */
void kp_graph_print_text(FILE *f, const struct kp_graph *g, const bool *in);
/* -1 when out of memory. */
int kp_graph_print_json(FILE *f, const struct kp_graph *g, const bool *in, bool pretty,
			unsigned jobs);
void kp_graph_print_dot(FILE *f, const struct kp_graph *g, const bool *in);

/* "vmlinux", "module", "base-module" or "unresolved". */
const char *kp_graph_kind_name(enum kp_provider_kind k);
/* The module (or vmlinux) providing edge @e; @buf holds a base module's name. NULL: none. */
const char *kp_graph_provider_name(const struct kp_graph *g, const struct kp_edge *e, char *buf,
				   size_t len);

#endif
