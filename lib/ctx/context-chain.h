/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Inside the hook's chain load (kp_ctx_load_chain(), context-chain.c; lib/ctx only): the
 * steps its other files take, in the order it calls them.
 */
#ifndef KP_CONTEXT_CHAIN_H
#define KP_CONTEXT_CHAIN_H

#include <stdbool.h>

#include "context.h"

/* The names the set's modules can look up, into c->hook.wanted (context-chain-exports.c). */
int kp_ctx_chain_wanted(struct kp_ctx *c);
/* The base cache the front end gives, NULL without one. */
struct kp_base_cache *kp_ctx_base_cache(const struct kp_ctx *c);
/* The kernel's exports into a new c->base, only the wanted ones where it can. */
int kp_ctx_chain_exports(struct kp_ctx *c, struct kp_err *err);

/* Whether a module of the set exports @sym (context-chain-providers.c). */
bool kp_ctx_set_exports(const struct kp_ctx *c, const char *sym);
/* The loaded providers the set needs read, their exports added to c->base. */
int kp_ctx_chain_providers(struct kp_ctx *c, struct kp_err *err);

/* The running kernel's facts into c->facts (context-chain-facts.c). */
int kp_ctx_chain_facts(struct kp_ctx *c, struct kp_err *err);
/* The set's module BTF judged before the simulation, through the facts cache's memo. */
int kp_ctx_chain_judge_btf(struct kp_ctx *c, struct kp_err *err);

#endif
