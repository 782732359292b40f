// SPDX-License-Identifier: LGPL-2.1-or-later
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kp_err_set(struct kp_err *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

void *kp_calloc(size_t nmemb, size_t size)
{
	if (nmemb == 0 || size == 0)
		return NULL;
	return calloc(nmemb, size);
}

int kp_grow(void *array, size_t *cap, size_t need, size_t elem)
{
	void **arr = array;
	size_t ncap;
	void *p;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 8;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / elem)
		return -ENOMEM;
	p = realloc(*arr, ncap * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

#define KP_ARENA_FIRST_CHUNK 2048
#define KP_ARENA_CHUNK	     65536
#define KP_ARENA_ALIGN	     _Alignof(uint64_t) /* records hold pointers and u64s, no more */

struct kp_arena_chunk {
	struct kp_arena_chunk *next;
	size_t used;
	size_t size;
	_Alignas(max_align_t) unsigned char data[];
};

static struct kp_arena_chunk *chunk_new(size_t size)
{
	struct kp_arena_chunk *c;

	if (size > SIZE_MAX - sizeof(*c))
		return NULL;
	c = malloc(sizeof(*c) + size);
	if (!c)
		return NULL;
	c->size = size;
	c->used = 0;
	c->next = NULL;
	return c;
}

/* @align is 1 (strings) or KP_ARENA_ALIGN (records): strings pack without padding. */
static void *arena_alloc(struct kp_arena *a, size_t size, size_t align)
{
	struct kp_arena_chunk *c = a->head;
	size_t at = c ? (c->used + align - 1) & ~(align - 1) : 0;

	if (!c || at > c->size || c->size - at < size) {
		size_t csize = a->next_chunk ? a->next_chunk : KP_ARENA_FIRST_CHUNK;

		if (csize < KP_ARENA_CHUNK)
			a->next_chunk = csize * 2 < KP_ARENA_CHUNK ? csize * 2 : KP_ARENA_CHUNK;
		c = chunk_new(csize < size ? size : csize);
		if (!c)
			return NULL;
		at = 0;
		/* A large one-off allocation goes behind the head so the head keeps its room. */
		if (a->head && size > KP_ARENA_CHUNK) {
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = a->head;
			a->head = c;
		}
	}
	c->used = at + size;
	return c->data + at;
}

void *kp_arena_alloc(struct kp_arena *a, size_t size)
{
	return arena_alloc(a, size ? size : 1, KP_ARENA_ALIGN);
}

int kp_arena_reserve(struct kp_arena *a, size_t size)
{
	if (a->head)
		return 0;
	a->head = chunk_new(size);
	if (!a->head)
		return -1;
	a->next_chunk = 1024; /* what the estimate missed: small */
	return 0;
}

char *kp_arena_strndup(struct kp_arena *a, const char *s, size_t len)
{
	char *p;

	if (len == SIZE_MAX)
		return NULL;
	p = arena_alloc(a, len + 1, 1);
	if (!p)
		return NULL;
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

char *kp_arena_strdup(struct kp_arena *a, const char *s)
{
	return kp_arena_strndup(a, s, strlen(s));
}

void kp_arena_release(struct kp_arena *a)
{
	struct kp_arena_chunk *c = a->head;

	while (c) {
		struct kp_arena_chunk *next = c->next;

		free(c);
		c = next;
	}
	a->head = NULL;
	a->next_chunk = 0;
}

bool kp_sorted_contains(const char *const *sorted, size_t n, const char *key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int d = strcmp(sorted[mid], key);

		if (!d)
			return true;
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

bool kp_is_identifier(const char *s, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++) {
		char ch = s[i];

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_')
			continue;
		if (i > 0 && ch >= '0' && ch <= '9')
			continue;
		return false;
	}
	return true;
}
