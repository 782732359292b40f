/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The store's format, shared by its writer (graph-store.c) and its reader (graph-store-read.c). */
#ifndef KP_GRAPH_STORE_FORMAT_H
#define KP_GRAPH_STORE_FORMAT_H

#include "util/byte-writer.h"

#define GS_MAGIC "KPGRST02"
#define GS_NONE	 KP_BW_NONE

enum {
	NODE_IN_CYCLE = 1,
	NODE_DUPLICATE_NAME = 2,
	NODE_WALKED = 4,
	NODE_PROVIDER = 8,
	EXP_GPL_ONLY = 1,
	EXP_HAS_CRC = 2,
	/* an edge's first byte: its kind in the low 3 bits, then these */
	EDGE_KIND = 7,
	EDGE_GPL_ONLY = 8,
	EDGE_WEAK = 16,
	/* a number's bytes: 7 bits each, low first, more to come while the top bit is set */
	VAR_MAX = 5,
};

#endif
