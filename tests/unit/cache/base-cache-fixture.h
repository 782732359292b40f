/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * base-cache-fixture.h: files and cache entries for the tests of the caches
 * (test-base-cache.c, test-base-cache-btf.c, test-facts-defer.c).
 */
#ifndef KP_TEST_BASE_CACHE_FIXTURE_H
#define KP_TEST_BASE_CACHE_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Copies the file @from as @to: 0, or -1 when either cannot be opened, read or written. */
int copy_file(const char *from, const char *to);
/* The one entry file of the base cache over @root (its path into @p); false unless one. */
bool only_entry(const char *root, char *p, size_t len);
/* The byte at @off of @path xor 0x5a (the same call again restores it): 0, or -1. */
int flip(const char *path, off_t off);

#endif
