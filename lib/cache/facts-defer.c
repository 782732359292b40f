// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The facts cache's deferred stores (facts-cache.h, kp_facts_cache_store_pending()).
 *
 * A cold run reads every module on every CPU, then builds the graph, simulates and prints on
 * one. Encoding, checksumming and writing each module's entry costs ~12 % of the run's CPU:
 * done by the reading threads it lengthens the read phase; queued instead, it is done by one
 * thread of the cache once the read phase is over, on the CPU the rest of the run leaves
 * idle. A queued module must outlive its store: kp_module_free() of a module still queued
 * stores it in the freeing thread (kp_fc_settle()), or waits for the cache's thread when it
 * is storing that one; kp_facts_cache_free() stores whatever is left. The entries, and the
 * pack they go into, are the same as when stored at once.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "facts-pack.h"
#include "read/module.h"
#include "util/util.h"

int kp_fc_defer_init(struct fc_defer *d)
{
	memset(d, 0, sizeof(*d));
	if (pthread_cond_init(&d->work, NULL) != 0)
		return -1;
	if (pthread_cond_init(&d->done, NULL) != 0) {
		pthread_cond_destroy(&d->work);
		return -1;
	}
	return 0;
}

int kp_fc_defer(struct kp_facts_cache *c, struct kp_module *m, const uint64_t *st, uint32_t flags,
		bool hash_later)
{
	struct fc_defer *d = &c->defer;
	struct fc_job *j;

	pthread_mutex_lock(&c->lock);
	if (!d->pending)
		d->n = d->head = 0; /* every earlier job done: the array starts over */
	if (d->stop || kp_grow(&d->jobs, &d->cap, d->n + 1, sizeof(*d->jobs)) < 0) {
		pthread_mutex_unlock(&c->lock);
		return -1;
	}
	j = &d->jobs[d->n];
	j->m = m;
	memcpy(j->st, st, sizeof(j->st));
	j->flags = flags;
	j->hash_later = hash_later;
	j->state = JOB_QUEUED;
	m->store_job = d->n++;
	d->pending++;
	__atomic_store_n(&m->store_pending, c, __ATOMIC_RELEASE);
	/* a thread already at work (a second read phase) takes it; else it waits for the end */
	if (d->started)
		pthread_cond_signal(&d->work);
	pthread_mutex_unlock(&c->lock);
	return 0;
}

/* Runs job @i, claimed (JOB_RUNNING) under the lock, which is held on entry and return. */
static void run(struct kp_facts_cache *c, size_t i)
{
	struct fc_defer *d = &c->defer;
	struct fc_job j = d->jobs[i]; /* @d->jobs may move while the lock is dropped */

	pthread_mutex_unlock(&c->lock);
	kp_fc_store_job(c, &j);
	pthread_mutex_lock(&c->lock);
	d->jobs[i].state = JOB_DONE;
	d->pending--;
	__atomic_store_n(&j.m->store_pending, NULL, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&d->done);
}

/* The next queued job, claimed; under the lock. SIZE_MAX: none. */
static size_t claim_next(struct fc_defer *d)
{
	while (d->head < d->n && d->jobs[d->head].state != JOB_QUEUED)
		d->head++;
	if (d->head == d->n)
		return SIZE_MAX;
	d->jobs[d->head].state = JOB_RUNNING;
	return d->head++;
}

static void *worker(void *arg)
{
	struct kp_facts_cache *c = arg;
	struct fc_defer *d = &c->defer;

	pthread_mutex_lock(&c->lock);
	for (;;) {
		size_t i = claim_next(d);

		if (i != SIZE_MAX) {
			run(c, i);
			continue;
		}
		if (d->stop)
			break;
		pthread_cond_wait(&d->work, &c->lock);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

void kp_facts_cache_store_pending(struct kp_facts_cache *c)
{
	struct fc_defer *d;

	if (!c)
		return;
	d = &c->defer;
	pthread_mutex_lock(&c->lock);
	if (d->pending && !d->started && !d->stop)
		/* no thread: the jobs are stored as their modules are freed, or at the end */
		d->started = pthread_create(&d->thread, NULL, worker, c) == 0;
	else if (d->started)
		pthread_cond_signal(&d->work);
	pthread_mutex_unlock(&c->lock);
}

void kp_fc_settle(struct kp_module *m)
{
	struct kp_facts_cache *c = __atomic_load_n(&m->store_pending, __ATOMIC_ACQUIRE);
	struct fc_defer *d;

	if (!c)
		return;
	d = &c->defer;
	pthread_mutex_lock(&c->lock);
	/* @m->store_job is valid while @m->store_pending is set, which changes under the lock */
	while (__atomic_load_n(&m->store_pending, __ATOMIC_RELAXED) &&
	       d->jobs[m->store_job].state == JOB_RUNNING)
		pthread_cond_wait(&d->done, &c->lock);
	if (__atomic_load_n(&m->store_pending, __ATOMIC_RELAXED)) {
		d->jobs[m->store_job].state = JOB_RUNNING;
		run(c, m->store_job);
	}
	pthread_mutex_unlock(&c->lock);
}

void kp_fc_defer_finish(struct kp_facts_cache *c)
{
	struct fc_defer *d = &c->defer;
	bool started;
	size_t i;

	pthread_mutex_lock(&c->lock);
	d->stop = true;
	started = d->started;
	pthread_cond_broadcast(&d->work);
	pthread_mutex_unlock(&c->lock);
	/* the thread stores every queued job before it ends */
	if (started)
		pthread_join(d->thread, NULL);
	pthread_mutex_lock(&c->lock);
	while ((i = claim_next(d)) != SIZE_MAX)
		run(c, i);
	pthread_mutex_unlock(&c->lock);
	free(d->jobs);
	d->jobs = NULL;
	pthread_cond_destroy(&d->work);
	pthread_cond_destroy(&d->done);
}
