/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one worker pool: threads started for one call and joined before it returns, the
 * calling thread working too, no state kept between calls. Two ways to hand out work:
 * a parallel loop over index slices, and a queue of jobs with a memory estimate each and
 * per-thread state (decoders, buffers).
 */
#ifndef KP_PARALLEL_H
#define KP_PARALLEL_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Calls @fn(@ctx, begin, end) for consecutive slices of [0, @n) of at most @chunk
 * indices, from up to @jobs threads (0: one per online CPU); slices are handed out in
 * order as threads become free. Returns when every slice is done. @fn must only write
 * what belongs to its slice. If threads cannot be started the caller runs them all.
 */
void kp_parallel_for(size_t n, unsigned jobs, size_t chunk,
		     void (*fn)(void *ctx, size_t begin, size_t end), void *ctx);

/* The number of threads the pool uses for @jobs (0: the online CPUs). */
unsigned kp_parallel_jobs(unsigned jobs);

/* One job of kp_pool_run(): the caller's item and its memory while it runs (an estimate). */
struct kp_job {
	size_t index;
	size_t cost;
};

struct kp_pool_ops {
	/* Per-thread state, made and dropped in the thread that uses it; NULL hooks: none. */
	void *(*thread_start)(void *ctx);
	void (*thread_stop)(void *ctx, void *state);
	/* Runs job @index (without the pool's lock); true when it failed. */
	bool (*run)(void *ctx, void *state, size_t index);
	/* After every job, under the pool's lock: @done jobs are finished. Optional. */
	void (*progress)(void *ctx, size_t done);
};

/*
 * Runs the @n jobs of @q (reordered: cost descending, then index) from up to @jobs
 * threads. Largest first, while little is held yet; a job only starts while the costs in
 * flight stay within a budget (the largest job's cost): two huge jobs never run at once,
 * and a thread that may not start the next large job takes the smallest left instead, so
 * no CPU idles. Returns the number of jobs that failed.
 */
size_t kp_pool_run(struct kp_job *q, size_t n, unsigned jobs, const struct kp_pool_ops *ops,
		   void *ctx);

#endif
