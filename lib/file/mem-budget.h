/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The decompressed bytes a pool of reading threads may hold at once: one budget shared by
 * every worker of one read (kp_set_read_range()), whatever --jobs says. A worker reserves a
 * module's declared size before decoding (xz index, zstd frame content size, gzip ISIZE as a
 * hint) and each growth past it while decoding; what it cannot get it waits for, holding
 * nothing (so two workers never wait for each other), or, for growth, it gives back what it
 * holds and decodes the module again with the larger reservation. A module larger than the
 * whole budget is an error of that module.
 */
#ifndef KP_MEM_BUDGET_H
#define KP_MEM_BUDGET_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

struct kp_mem_budget {
	pthread_mutex_t lock;
	pthread_cond_t freed;
	size_t limit;
	size_t in_use;
	size_t peak; /* the most held at once (tests, diagnostics) */
};

void kp_mem_budget_init(struct kp_mem_budget *b, size_t limit);
void kp_mem_budget_destroy(struct kp_mem_budget *b);
/*
 * Takes @n bytes. @wait: block until they are free (the caller must hold none: see above);
 * else fail at once. False when @n exceeds the whole budget, or without @wait when it is
 * not free now.
 */
bool kp_mem_budget_take(struct kp_mem_budget *b, size_t n, bool wait);
void kp_mem_budget_give(struct kp_mem_budget *b, size_t n);

#endif
