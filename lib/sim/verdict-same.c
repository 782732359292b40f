// SPDX-License-Identifier: LGPL-2.1-or-later
#include <string.h>

#include "sim/verdict-same.h"

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool same_finding(const struct kp_finding *x, const struct kp_finding *y)
{
	return !strcmp(x->id, y->id) && x->severity == y->severity &&
	       x->consequence == y->consequence && same_str(x->message, y->message) &&
	       same_str(x->symbol, y->symbol) && x->waived == y->waived;
}

static bool same_symget(const struct kp_symget_result *x, const struct kp_symget_result *y)
{
	return same_str(x->symbol, y->symbol) && x->ok == y->ok && same_str(x->reason, y->reason) &&
	       same_str(x->owner, y->owner) && x->gpl_only == y->gpl_only &&
	       x->method_heuristic == y->method_heuristic && x->dynamic == y->dynamic &&
	       x->when == y->when && same_str(x->path, y->path) &&
	       same_str(x->function, y->function) && x->kernel_logs == y->kernel_logs;
}

/*
 * What both comparisons below compare: the load's outcome, its taint, its P reason, its stall,
 * its dmesg lines and its symbol_get() results (not its findings, nor its load sequence).
 */
static bool same_core(const struct kp_verdict *a, const struct kp_verdict *b)
{
	if (a->attempted != b->attempted || a->loads != b->loads || a->err != b->err ||
	    a->taints != b->taints || a->global_added != b->global_added ||
	    a->global_after != b->global_after || a->p_reason != b->p_reason ||
	    a->p_from != b->p_from || !same_str(a->p_symbol, b->p_symbol) ||
	    a->failed_dep != b->failed_dep || a->hangs != b->hangs ||
	    a->holds_module_mutex != b->holds_module_mutex ||
	    a->left_unformed != b->left_unformed || a->stalled_by != b->stalled_by ||
	    a->nmessages != b->nmessages || a->nsymget != b->nsymget)
		return false;
	for (size_t k = 0; k < a->nmessages; k++)
		if (strcmp(a->messages[k], b->messages[k]))
			return false;
	for (size_t k = 0; k < a->nsymget; k++)
		if (!same_symget(&a->symget[k], &b->symget[k]))
			return false;
	return true;
}

bool kp_verdict_same_output(const struct kp_verdict *a, const struct kp_verdict *b)
{
	if (!same_core(a, b) || a->nfindings != b->nfindings)
		return false;
	for (size_t k = 0; k < a->nfindings; k++)
		if (!same_finding(&a->findings[k], &b->findings[k]))
			return false;
	return true;
}

/* The next finding of @v from @k on that the simulation made, or @v->nfindings. */
static size_t next_simulated(const struct kp_verdict *v, size_t k)
{
	while (k < v->nfindings && kp_finding_is_policy(&v->findings[k]))
		k++;
	return k;
}

bool kp_verdict_same_simulated(const struct kp_verdict *a, const struct kp_verdict *b)
{
	size_t j = 0, k = 0;

	if (!same_core(a, b) || a->load_seq != b->load_seq)
		return false;
	for (;;) {
		const struct kp_finding *x, *y;

		j = next_simulated(a, j);
		k = next_simulated(b, k);
		if (j == a->nfindings || k == b->nfindings)
			return j == a->nfindings && k == b->nfindings;
		x = &a->findings[j++];
		y = &b->findings[k++];
		if (strcmp(x->id, y->id) || x->severity != y->severity ||
		    x->consequence != y->consequence || !same_str(x->message, y->message) ||
		    !same_str(x->symbol, y->symbol))
			return false;
	}
}
