/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * OpenSSL's allocator for the unit tests that make its allocations fail: install with
 * CRYPTO_set_mem_functions(t_malloc, t_realloc, t_free) before any OpenSSL call; while
 * countdown is k >= 0, k allocations succeed and every later one fails (-1: never fail).
 */
#ifndef KP_TEST_OSSL_FAIL_ALLOC_H
#define KP_TEST_OSSL_FAIL_ALLOC_H

#include <stdlib.h>

static long countdown = -1; /* allocations left before they fail; -1: never */

static void *t_malloc(size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	if (countdown == 0)
		return NULL;
	if (countdown > 0)
		countdown--;
	return malloc(n);
}

static void *t_realloc(void *p, size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	if (countdown == 0)
		return NULL;
	if (countdown > 0)
		countdown--;
	return realloc(p, n);
}

static void t_free(void *p, const char *file, int line)
{
	(void)file;
	(void)line;
	free(p);
}

#endif
