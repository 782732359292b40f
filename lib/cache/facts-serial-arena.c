// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The values the facts cache's decoder puts into the module's arena (facts-serial-internal.h):
 * strings (a reference to one decoded before, a symbol name from the name pool), blobs, arrays.
 */
#include "facts-serial-internal.h"

#include <string.h>

#include "read/module.h"

/*
 * A string; @sym: a symbol name, shared with the name pool when it holds it; @hash (NULL: not
 * wanted): its kp_hash_string(), computed once for the pool and the caller.
 */
const char *kp_facts_get_string(struct rd *r, bool sym, uint32_t *hash)
{
	uint32_t n = get_u32(r);
	const unsigned char *p;
	const char *s;

	if (n == NO_STRING)
		return NULL;
	if (n == STRING_REF) {
		uint32_t i = get_u32(r);

		if (i >= r->nstrs) {
			r->bad = 1;
			return NULL;
		}
		if (hash) {
			if (!r->hashes[i])
				r->hashes[i] = HASHED | kp_hash_string(r->strs[i]);
			*hash = (uint32_t)r->hashes[i];
		}
		return r->strs[i];
	}
	if (r->nstrs >= r->maxstrs) {
		r->bad = 1;
		return NULL;
	}
	p = take(r, n - 1);
	if (!p)
		return NULL;
	if (memchr(p, '\0', n - 1)) {
		r->bad = 1; /* a C string holds no NUL: not what the encoder wrote */
		return NULL;
	}
	if (hash)
		*hash = kp_hash_bytes((const char *)p, n - 1);
	if (!sym)
		s = kp_arena_strndup(&r->m->arena, (const char *)p, n - 1);
	else if (hash)
		s = kp_module_symname_hashed(r->m, r->names, (const char *)p, n - 1, *hash);
	else
		s = kp_module_symname(r->m, r->names, (const char *)p, n - 1);
	if (!s) {
		r->bad = 1;
		return NULL;
	}
	r->hashes[r->nstrs] = hash ? HASHED | *hash : 0;
	r->strs[r->nstrs++] = s;
	return s;
}

const unsigned char *kp_facts_get_blob(struct rd *r, size_t *len)
{
	uint32_t n = get_u32(r);
	const unsigned char *p = take(r, n);
	unsigned char *copy;

	*len = 0;
	if (!p || !n)
		return NULL;
	copy = kp_arena_alloc(&r->m->arena, n);
	if (!copy) {
		r->bad = 1;
		return NULL;
	}
	memcpy(copy, p, n);
	*len = n;
	return copy;
}

/* @n elements of @elem bytes in the arena; @n is bounded by what the bytes can hold. */
void *kp_facts_get_array(struct rd *r, size_t n, size_t elem)
{
	void *a;

	if (!n || r->bad)
		return NULL;
	a = kp_module_array(r->m, n, elem);
	if (!a)
		r->bad = 1;
	return a;
}
