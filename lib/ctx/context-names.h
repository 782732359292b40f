/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Module operands named as modprobe users name them (`kopolicy check -b ROOT nvidia uas`),
 * resolved in the context's modules tree (lib/ctx only).
 */
#ifndef KP_CONTEXT_NAMES_H
#define KP_CONTEXT_NAMES_H

#include "context.h"

/* The operands, each a path or the module files a name resolved to. */
struct kp_ctx_operands {
	char **paths; /* borrowed from the caller, or owned strings (owned[i]) */
	bool *owned;
	int n;
	size_t unresolved; /* names that matched no file and no module: said, not in paths */
};

/*
 * An operand that is no file (it does not exist) and holds no '/' is looked up in the
 * modules tree of -b ROOT, --running or the default kernel as modprobe would look it up:
 * module names with '-' and '_' alike, modprobe.d aliases, modules.alias; an alias's
 * blacklisted targets dropped (modprobe does). Its target modules' files take its place, in
 * modprobe's order; built-in targets are said and left out. Any other operand stays a path,
 * whatever its name. Without a modules tree every operand stays a path. 0, or -1 with @err
 * (out of memory, or the tree's indexes unreadable).
 */
int kp_ctx_resolve_names(struct kp_ctx *c, char **paths, int npaths, struct kp_ctx_operands *out,
			 struct kp_err *err);
void kp_ctx_operands_release(struct kp_ctx_operands *o);

#endif
