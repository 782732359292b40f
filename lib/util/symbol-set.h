/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A set of names (borrowed strings) looked up by (pointer, length), so that the lines of a
 * mapped file are matched where they lie, without copies: the symbols a modprobe chain can
 * look up, which filter the kernel's export lists before they are parsed.
 */
#ifndef KP_SYMBOL_SET_H
#define KP_SYMBOL_SET_H

#include <stdbool.h>
#include <stddef.h>

struct kp_symset {
	const char **keys; /* open addressing; NULL slots are free */
	size_t *lens;
	size_t cap; /* a power of two, 0 before the first add */
	size_t n;
};

/* Adds @name (kept by pointer: it must outlive the set). 0, or -1 when out of memory. */
int kp_symset_add(struct kp_symset *s, const char *name);
bool kp_symset_has(const struct kp_symset *s, const char *name, size_t len);
void kp_symset_release(struct kp_symset *s);

#endif
