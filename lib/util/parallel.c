// SPDX-License-Identifier: LGPL-2.1-or-later
#include "parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

struct loop {
	size_t n;
	size_t chunk;
	atomic_size_t next;
	void (*fn)(void *ctx, size_t begin, size_t end);
	void *ctx;
};

static void *run(void *data)
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

unsigned kp_parallel_jobs(unsigned jobs)
{
	long ncpu;

	if (jobs)
		return jobs;
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	return ncpu > 0 ? (unsigned)ncpu : 1;
}

void kp_parallel_for(size_t n, unsigned jobs, size_t chunk,
		     void (*fn)(void *ctx, size_t begin, size_t end), void *ctx)
{
	struct loop l = { .n = n, .chunk = chunk ? chunk : 1, .fn = fn, .ctx = ctx };
	size_t slices = (n + l.chunk - 1) / l.chunk;
	pthread_t *threads = NULL;
	unsigned started = 0;

	jobs = kp_parallel_jobs(jobs);
	if (jobs > slices)
		jobs = slices ? (unsigned)slices : 1;
	atomic_init(&l.next, 0);
	if (jobs > 1)
		threads = calloc(jobs - 1, sizeof(*threads));
	for (unsigned i = 0; threads && i + 1 < jobs; i++)
		if (pthread_create(&threads[started], NULL, run, &l) == 0)
			started++;
	run(&l);
	for (unsigned i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	free(threads);
}
