// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A large stored manifest's entries looked up from several threads before it is checked
 * (kp_inputs_precheck(), inputs-internal.h): a whole tree's ~5,000 stat()s by full path are
 * most of a replay's time, and they are independent. The threads only look up
 * (kp_inputs_check_entry(): stat(), the file system's class, a K_HASHED file's bytes) and
 * write one verdict per entry; everything whose answer depends on the entries before it (the
 * first that fails, the list of those that do, the budget of modules hashed again, the new
 * states stored) stays with the one-thread walk that follows (inputs-check.c), which skips
 * the entries found to hold and checks the others again itself.
 */
#include "inputs.h"
#include "inputs-internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "util/parallel.h"
#include "util/util.h"

#define SLICE 128 /* entries a thread takes at once: ~0.3 ms of stat()s */
/*
 * With @stop, the entries the calling thread looks up alone before any thread starts: a
 * failure among them (an input of the manifest's head changed) costs no thread start and
 * no look-up past it, whatever the scheduler does with the threads.
 */
#define HEAD 64

unsigned kp_inputs_check_threads(size_t n, unsigned jobs)
{
	unsigned t = kp_parallel_jobs(jobs);

	if (n < KP_INPUTS_CHECK_PARALLEL)
		return 1;
	return t > KP_INPUTS_CHECK_THREADS ? KP_INPUTS_CHECK_THREADS : t;
}

/* The look-up of a manifest's entries, shared by its threads. */
struct precheck {
	const unsigned char *m;
	size_t len;
	size_t *off; /* each entry's offset in @m */
	size_t n;
	size_t head; /* the entries before this one were looked up before the threads started */
	unsigned char *verdict; /* one per entry, each written by the thread of its slice */
	bool stop;
	atomic_size_t first_fail; /* with @stop: the lowest entry found to fail so far, else @n */
	/* each thread's table of file systems (kp_fs_devs is not locked), taken in turn */
	struct kp_fs_devs *devs;
	unsigned ndevs;
	atomic_uint taken;
};

/*
 * A thread's table of file systems, from the ones the caller allocated: a thread allocates
 * nothing (its first malloc() would make it an arena of its own).
 */
static void *thread_start(void *ctx)
{
	struct precheck *p = ctx;
	unsigned k = atomic_fetch_add(&p->taken, 1);

	return k < p->ndevs ? &p->devs[k] : NULL;
}

/* @p->first_fail lowered to @i unless it is lower already. */
static void note_failure(struct precheck *p, size_t i)
{
	size_t cur = atomic_load(&p->first_fail);

	while (i < cur && !atomic_compare_exchange_weak(&p->first_fail, &cur, i))
		;
}

/* Looks up the entries [@begin, @end) with the table @devs. */
static void look_up(struct precheck *p, struct kp_fs_devs *devs, size_t begin, size_t end)
{
	char path[KP_INPUTS_PATH_MAX];

	for (size_t i = begin; i < end; i++) {
		struct entry e;
		struct stat st;
		uint64_t v[8];
		enum kp_inputs_verdict r;

		/* past an entry that fails, nothing is read: the walk stops there */
		if (p->stop && i > atomic_load_explicit(&p->first_fail, memory_order_relaxed))
			break;
		if (kp_inputs_decode(p->m, p->len, p->off[i], path, &e) < 0)
			break;
		r = kp_inputs_check_entry(&e, devs, &st, v);
		p->verdict[i] = (unsigned char)r;
		if (r == V_FAILS && p->stop)
			note_failure(p, i);
	}
}

/* look_up()'s arguments through kp_bytes_guard() */
struct range {
	struct precheck *p;
	struct kp_fs_devs *devs;
	size_t begin, end;
};

static int look_up_range(void *arg)
{
	const struct range *r = arg;

	look_up(r->p, r->devs, r->begin, r->end);
	return 0;
}

/*
 * look_up() under the SIGBUS guard of the manifest's bytes (bytes.h): they may lie in a
 * result-cache entry's mapping, which a truncation of that file makes fault. The guard is
 * each thread's own; a jump leaves the rest of the range unchecked, and the walk that
 * follows, under the replay's guard, meets the fault itself and refuses the entry.
 */
static void look_up_guarded(struct precheck *p, struct kp_fs_devs *devs, size_t begin, size_t end)
{
	/* only the range is read from it: nothing is written through @data */
	const struct kp_bytes b = { .data = (unsigned char *)p->m, .len = p->len, .mapped = true };
	struct range r = { .p = p, .devs = devs, .begin = begin, .end = end };
	struct kp_err err;

	kp_bytes_guard(&b, look_up_range, &r, &err);
}

/* Looks up the entries of slice @job (kp_pool_run()'s run: never fails). */
static bool run_slice(void *ctx, void *state, size_t job)
{
	struct precheck *p = ctx;
	size_t begin = p->head + job * SLICE;

	/* no table (cannot happen: one per thread): the walk looks these up itself */
	if (state)
		look_up_guarded(p, state, begin, p->n - begin < SLICE ? p->n : begin + SLICE);
	return false;
}

int kp_inputs_precheck(const unsigned char *m, size_t len, unsigned jobs, bool stop,
		       struct kp_inputs_prechecked *pc)
{
	static const struct kp_pool_ops ops = { .thread_start = thread_start, .run = run_slice };
	struct precheck p = { .m = m, .len = len, .stop = stop };
	struct kp_job *q;
	uint64_t count;
	size_t nslices;
	unsigned threads;

	memset(pc, 0, sizeof(*pc));
	/* malformed at its head: the walk says so at once */
	if (kp_inputs_head_count(m, len, &count) < 0)
		return -1;
	threads = kp_inputs_check_threads((size_t)count, jobs);
	if (threads < 2)
		return -1;
	p.off = malloc((size_t)count * sizeof(*p.off));
	if (!p.off)
		return -1;
	/* malformed further on: the entries before it looked up, as the walk checks them */
	pc->whole = kp_inputs_offsets(m, len, p.off, &p.n) >= 0;
	p.head = stop ? (p.n < HEAD ? p.n : HEAD) : 0;
	nslices = (p.n - p.head + SLICE - 1) / SLICE;
	p.verdict = calloc(p.n ? p.n : 1, 1);
	/* one more table for the head, looked up here */
	p.devs = calloc(threads + 1, sizeof(*p.devs));
	q = calloc(nslices ? nslices : 1, sizeof(*q));
	if (!p.verdict || !p.devs || !q) {
		free(p.verdict);
		free(p.devs);
		free(q);
		free(p.off);
		return -1;
	}
	p.ndevs = threads;
	atomic_init(&p.first_fail, p.n);
	atomic_init(&p.taken, 0);
	look_up_guarded(&p, &p.devs[threads], 0, p.head);
	/* every slice of cost 0: kp_pool_run() hands them out in the manifest's order */
	for (size_t i = 0; i < nslices; i++)
		q[i] = (struct kp_job){ .index = i, .cost = 0 };
	if (atomic_load(&p.first_fail) == p.n)
		kp_pool_run(q, nslices, threads, &ops, &p);
	free(q);
	free(p.devs);
	pc->n = p.n;
	pc->off = p.off;
	pc->verdict = p.verdict;
	return 0;
}

void kp_inputs_prechecked_release(struct kp_inputs_prechecked *pc)
{
	free(pc->off);
	free(pc->verdict);
	memset(pc, 0, sizeof(*pc));
}
