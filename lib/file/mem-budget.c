// SPDX-License-Identifier: LGPL-2.1-or-later
#include "mem-budget.h"

void kp_mem_budget_init(struct kp_mem_budget *b, size_t limit)
{
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->freed, NULL);
	b->limit = limit;
	b->in_use = 0;
	b->peak = 0;
}

void kp_mem_budget_destroy(struct kp_mem_budget *b)
{
	pthread_cond_destroy(&b->freed);
	pthread_mutex_destroy(&b->lock);
}

bool kp_mem_budget_take(struct kp_mem_budget *b, size_t n, bool wait)
{
	bool ok;

	if (n > b->limit)
		return false;
	pthread_mutex_lock(&b->lock);
	/* what others hold is given back when their modules are read: the wait ends */
	while (wait && n > b->limit - b->in_use)
		pthread_cond_wait(&b->freed, &b->lock);
	ok = n <= b->limit - b->in_use;
	if (ok) {
		b->in_use += n;
		if (b->in_use > b->peak)
			b->peak = b->in_use;
	}
	pthread_mutex_unlock(&b->lock);
	return ok;
}

void kp_mem_budget_give(struct kp_mem_budget *b, size_t n)
{
	if (!n)
		return;
	pthread_mutex_lock(&b->lock);
	b->in_use -= n <= b->in_use ? n : b->in_use;
	pthread_cond_broadcast(&b->freed);
	pthread_mutex_unlock(&b->lock);
}
