// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The facts cache's deferred stores (facts-cache.h, kp_facts_cache_store_pending()).
 *
 * A cold run reads every module on every CPU, then builds the graph, simulates and prints on
 * one. Encoding, checksumming and writing each module's entry costs ~12 % of the run's CPU:
 * done by the reading threads it lengthens the read phase; queued instead, it is done by one
 * thread of the cache once the read phase is over, on the CPU the rest of the run leaves
 * idle. A queued module must outlive its store: the cache keeps which job is each module's
 * (struct kp_module is pure data), and its owner settles it before freeing it
 * (kp_facts_cache_settle(): stored in the freeing thread, or after the cache's thread when
 * it is storing that one); kp_facts_cache_free() stores whatever is left. The entries, and
 * the pack they go into, are the same as when stored at once.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
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

static size_t slot_of(const struct fc_defer *d, const struct kp_module *m)
{
	uintptr_t a = (uintptr_t)m;

	return (size_t)((a >> 4) ^ (a >> 17)) * 0x9E3779B1u & (d->nslots - 1);
}

/* Job @job is @m's; under the lock, with room for it (more than twice @d->n slots). */
static void slot_put(struct fc_defer *d, const struct kp_module *m, size_t job)
{
	size_t i = slot_of(d, m);

	while (d->slots[i] && d->jobs[d->slots[i] - 1].m != m)
		i = (i + 1) & (d->nslots - 1);
	d->slots[i] = job + 1;
}

/* @m's latest job, SIZE_MAX when it has none; under the lock. */
static size_t job_of(const struct fc_defer *d, const struct kp_module *m)
{
	if (!d->nslots)
		return SIZE_MAX;
	for (size_t i = slot_of(d, m); d->slots[i]; i = (i + 1) & (d->nslots - 1))
		if (d->jobs[d->slots[i] - 1].m == m)
			return d->slots[i] - 1;
	return SIZE_MAX;
}

/* Room for job @d->n in @d->slots (rebuilt from @d->jobs when it grows). 0 or -1. */
static int slots_reserve(struct fc_defer *d)
{
	size_t want = d->nslots ? d->nslots : 64;
	size_t *slots;

	while (want <= 2 * (d->n + 1)) {
		if (want > SIZE_MAX / 2 / sizeof(*slots))
			return -1;
		want *= 2;
	}
	if (want == d->nslots)
		return 0;
	slots = kp_calloc(want, sizeof(*slots));
	if (!slots)
		return -1;
	free(d->slots);
	d->slots = slots;
	d->nslots = want;
	for (size_t k = 0; k < d->n; k++)
		slot_put(d, d->jobs[k].m, k);
	return 0;
}

int kp_fc_defer(struct kp_facts_cache *c, struct kp_module *m, const uint64_t *st, uint32_t flags,
		bool hash_later, bool note)
{
	struct fc_defer *d = &c->defer;
	struct fc_job *j;

	pthread_mutex_lock(&c->lock);
	if (!d->pending && d->n) {
		/* every earlier job done: the array and the slots start over */
		d->n = d->head = 0;
		memset(d->slots, 0, d->nslots * sizeof(*d->slots));
	}
	if (d->stop || kp_grow(&d->jobs, &d->cap, d->n + 1, sizeof(*d->jobs)) < 0 ||
	    slots_reserve(d) < 0) {
		pthread_mutex_unlock(&c->lock);
		return -1;
	}
	j = &d->jobs[d->n];
	j->m = m;
	memcpy(j->st, st, sizeof(j->st));
	j->flags = flags;
	j->hash_later = hash_later;
	j->note = note;
	j->state = JOB_QUEUED;
	slot_put(d, m, d->n++);
	d->pending++;
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

void kp_facts_cache_settle(struct kp_facts_cache *c, const struct kp_module *m)
{
	struct fc_defer *d;

	if (!c || !m)
		return;
	d = &c->defer;
	pthread_mutex_lock(&c->lock);
	/* looked up again after each wait: the jobs may start over meanwhile */
	for (size_t i; d->pending && (i = job_of(d, m)) != SIZE_MAX;) {
		if (d->jobs[i].state == JOB_DONE)
			break;
		if (d->jobs[i].state == JOB_RUNNING) {
			pthread_cond_wait(&d->done, &c->lock);
			continue;
		}
		d->jobs[i].state = JOB_RUNNING;
		run(c, i);
		break;
	}
	pthread_mutex_unlock(&c->lock);
}

void kp_facts_cache_wait_stored(struct kp_facts_cache *c)
{
	struct fc_defer *d;
	size_t i;

	if (!c)
		return;
	d = &c->defer;
	pthread_mutex_lock(&c->lock);
	/* the queued jobs stored here too, beside the cache's thread; then the running ones */
	while ((i = claim_next(d)) != SIZE_MAX)
		run(c, i);
	while (d->pending)
		pthread_cond_wait(&d->done, &c->lock);
	pthread_mutex_unlock(&c->lock);
}

bool kp_facts_cache_is_pending(struct kp_facts_cache *c, const struct kp_module *m)
{
	size_t i;
	bool r;

	if (!c || !m)
		return false;
	pthread_mutex_lock(&c->lock);
	i = job_of(&c->defer, m);
	r = c->defer.pending && i != SIZE_MAX && c->defer.jobs[i].state != JOB_DONE;
	pthread_mutex_unlock(&c->lock);
	return r;
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
	free(d->slots);
	d->slots = NULL;
	d->nslots = 0;
	pthread_cond_destroy(&d->work);
	pthread_cond_destroy(&d->done);
}
