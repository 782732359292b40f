/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A parallel loop over an index range: the calling thread works too; no shared state is kept. */
#ifndef KP_PARALLEL_H
#define KP_PARALLEL_H

#include <stddef.h>

/*
 * Calls @fn(@ctx, begin, end) for consecutive slices of [0, @n) of at most @chunk
 * indices, from up to @jobs threads (0: one per online CPU); slices are handed out in
 * order as threads become free. Returns when every slice is done. @fn must only write
 * what belongs to its slice. If threads cannot be started the caller runs them all.
 */
void kp_parallel_for(size_t n, unsigned jobs, size_t chunk,
		     void (*fn)(void *ctx, size_t begin, size_t end), void *ctx);

/* The number of threads kp_parallel_for() uses for @jobs (0: the online CPUs). */
unsigned kp_parallel_jobs(unsigned jobs);

#endif
