// SPDX-License-Identifier: LGPL-2.1-or-later
/* Sets of names matched by (pointer, length): open addressing over kp_hash_bytes(). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbol-set.h"
#include "util.h"

static void symset_put(const char **keys, size_t *lens, size_t cap, const char *k, size_t len)
{
	size_t i = kp_hash_bytes(k, len) & (cap - 1);

	while (keys[i])
		i = (i + 1) & (cap - 1);
	keys[i] = k;
	lens[i] = len;
}

int kp_symset_add(struct kp_symset *s, const char *name)
{
	size_t len = strlen(name);

	if (kp_symset_has(s, name, len))
		return 0;
	if (2 * (s->n + 1) > s->cap) {
		size_t ncap = s->cap ? 2 * s->cap : 64;
		const char **keys = kp_calloc(ncap, sizeof(*keys));
		size_t *lens = kp_calloc(ncap, sizeof(*lens));

		if (!keys || !lens || ncap > SIZE_MAX / 4) {
			free(keys);
			free(lens);
			return -1;
		}
		for (size_t i = 0; i < s->cap; i++)
			if (s->keys[i])
				symset_put(keys, lens, ncap, s->keys[i], s->lens[i]);
		free(s->keys);
		free(s->lens);
		s->keys = keys;
		s->lens = lens;
		s->cap = ncap;
	}
	symset_put(s->keys, s->lens, s->cap, name, len);
	s->n++;
	return 0;
}

bool kp_symset_has(const struct kp_symset *s, const char *name, size_t len)
{
	if (!s->cap)
		return false;
	for (size_t i = kp_hash_bytes(name, len) & (s->cap - 1); s->keys[i];
	     i = (i + 1) & (s->cap - 1))
		if (s->lens[i] == len && !memcmp(s->keys[i], name, len))
			return true;
	return false;
}

void kp_symset_release(struct kp_symset *s)
{
	free(s->keys);
	free(s->lens);
	memset(s, 0, sizeof(*s));
}
