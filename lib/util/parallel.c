// SPDX-License-Identifier: LGPL-2.1-or-later
#include "parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

unsigned kp_parallel_jobs(unsigned jobs)
{
	long ncpu;

	if (jobs)
		return jobs;
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	return ncpu > 0 ? (unsigned)ncpu : 1;
}

/*
 * Runs @fn(@arg) in @nthreads threads, the caller being one of them, and joins them. Threads
 * that cannot be started leave their share to the others (every @fn takes work until none is
 * left), so this never fails.
 */
static void run_threads(unsigned nthreads, void *(*fn)(void *), void *arg)
{
	pthread_t *threads = NULL;
	unsigned started = 0;

	if (nthreads > 1)
		threads = calloc(nthreads - 1, sizeof(*threads));
	for (unsigned i = 0; threads && i + 1 < nthreads; i++)
		if (pthread_create(&threads[started], NULL, fn, arg) == 0)
			started++;
	fn(arg);
	for (unsigned i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	free(threads);
}

struct loop {
	size_t n;
	size_t chunk;
	atomic_size_t next;
	void (*fn)(void *ctx, size_t begin, size_t end);
	void *ctx;
};

static void *loop_thread(void *data)
{
	struct loop *l = data;

	for (;;) {
		size_t begin = atomic_fetch_add(&l->next, l->chunk);

		if (begin >= l->n)
			break;
		l->fn(l->ctx, begin, l->n - begin < l->chunk ? l->n : begin + l->chunk);
	}
	return NULL;
}

void kp_parallel_for(size_t n, unsigned jobs, size_t chunk,
		     void (*fn)(void *ctx, size_t begin, size_t end), void *ctx)
{
	struct loop l = { .n = n, .chunk = chunk ? chunk : 1, .fn = fn, .ctx = ctx };
	size_t slices = (n + l.chunk - 1) / l.chunk;

	jobs = kp_parallel_jobs(jobs);
	if (jobs > slices)
		jobs = slices ? (unsigned)slices : 1;
	atomic_init(&l.next, 0);
	run_threads(jobs, loop_thread, &l);
}

struct pool {
	struct kp_job *q; /* cost descending */
	size_t lo, hi;	  /* q[lo, hi) is still to do */
	size_t in_flight; /* sum of the costs running */
	size_t budget;
	size_t done;
	size_t failed;
	const struct kp_pool_ops *ops;
	void *ctx;
	pthread_mutex_t lock;
};

static int cmp_cost_desc(const void *a, const void *b)
{
	const struct kp_job *x = a, *y = b;

	if (x->cost != y->cost)
		return x->cost < y->cost ? 1 : -1;
	return x->index < y->index ? -1 : x->index > y->index; /* stable: the caller's order */
}

/* The next job for a thread, or NULL when the queue is empty (under p->lock). */
static const struct kp_job *take(struct pool *p)
{
	const struct kp_job *j;

	if (p->lo == p->hi)
		return NULL;
	if (p->in_flight == 0 ||
	    (p->in_flight <= p->budget && p->q[p->lo].cost <= p->budget - p->in_flight))
		j = &p->q[p->lo++];
	else
		j = &p->q[--p->hi];
	p->in_flight += j->cost;
	return j;
}

static void *pool_thread(void *data)
{
	struct pool *p = data;
	void *state = p->ops->thread_start ? p->ops->thread_start(p->ctx) : NULL;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		const struct kp_job *j = take(p);
		size_t cost;
		bool failed;

		if (!j)
			break;
		cost = j->cost;
		pthread_mutex_unlock(&p->lock);
		failed = p->ops->run(p->ctx, state, j->index);
		pthread_mutex_lock(&p->lock);
		p->in_flight -= cost;
		p->failed += failed;
		p->done++;
		if (p->ops->progress)
			p->ops->progress(p->ctx, p->done);
	}
	pthread_mutex_unlock(&p->lock);
	if (p->ops->thread_stop)
		p->ops->thread_stop(p->ctx, state);
	return NULL;
}

size_t kp_pool_run(struct kp_job *q, size_t n, unsigned jobs, const struct kp_pool_ops *ops,
		   void *ctx)
{
	struct pool p = { .q = q, .hi = n, .ops = ops, .ctx = ctx };

	if (n > 1)
		qsort(q, n, sizeof(*q), cmp_cost_desc);
	p.budget = n ? q[0].cost : 0;
	jobs = kp_parallel_jobs(jobs);
	if (jobs > n)
		jobs = n ? (unsigned)n : 1;
	pthread_mutex_init(&p.lock, NULL);
	run_threads(jobs, pool_thread, &p);
	pthread_mutex_destroy(&p.lock);
	return p.failed;
}
