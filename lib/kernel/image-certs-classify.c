// SPDX-License-Identifier: LGPL-2.1-or-later
/* Which list of a kernel image each of its certificates is in (image-certs-parts.h). */
#include "image-certs-parts.h"

#include <stdlib.h>

/* The 4-byte word of @t at @at in either byte order: @be says which matched @v. */
static bool word_is(const unsigned char *t, size_t n, size_t at, uint32_t v, int *be)
{
	if (at + 4 > n || v == 0)
		return false;
	if (*be != 1 && kp_load32(t + at, false) == v) {
		*be = 0;
		return true;
	}
	if (*be != 0 && kp_load32(t + at, true) == v) {
		*be = 1;
		return true;
	}
	return false;
}

/* The offset of the first non-zero 4-byte word of @t from @at on, at most 8 bytes later. */
static size_t next_word(const unsigned char *t, size_t n, size_t at)
{
	for (size_t end = at + 8; at < end && at + 4 <= n && !memcmp(t + at, "\0\0\0\0", 4);)
		at += 4;
	return at;
}

struct run {
	size_t a, b; /* certificates [a, b) of the image, each starting where the last ends */
	bool sized;  /* followed by its length: "<list>_size: .quad (or .long) end - start" */
	bool msize;  /* and then by the first's length: module_cert_size (v5.13+ system list) */
};

/*
 * The role of each certificate of @f. The linker puts certs/'s .init.rodata (__INITRODATA)
 * in certs/Makefile's object order: system_certificates.o (the system list, the extra
 * certificate's space, system_certificate_list_size, module_cert_size) before
 * revocation_certificates.o (the revocation list, revocation_certificate_list_size), each
 * list after .align 8 and followed, after .align 8, by its size as a .quad (.long without
 * CONFIG_64BIT: so in the 5.10.262, 6.1.192 and 7.2.13 trees; only the low 4 bytes are
 * compared, so either fits), in the image's byte order. The system list is the sized run
 * followed by module_cert_size, else the first sized run (kernels before module_cert_size);
 * the revocation list the one other sized run, else the first sized run after the system
 * list. 0, or -1 when out of memory.
 */
int kp_image_certs_classify(const struct found_certs *f, enum img_role *role)
{
	struct run *r = calloc(f->n ? f->n : 1, sizeof(*r));
	size_t nr = 0, sys = SIZE_MAX, rev = SIZE_MAX, nsized = 0;

	if (!r)
		return -1;
	for (size_t a = 0; a < f->n;) {
		size_t b = a + 1, total = f->c[a].len;
		const struct img_cert *last;
		size_t at = 0;
		int be = -1;

		while (b < f->n && f->c[b].off == f->c[b - 1].off + f->c[b - 1].len)
			total += f->c[b++].len;
		last = &f->c[b - 1];
		r[nr].a = a;
		r[nr].b = b;
		r[nr].sized = total <= UINT32_MAX &&
			      word_is(last->tail, last->ntail, 0, (uint32_t)total, &be);
		if (!r[nr].sized && total <= UINT32_MAX &&
		    word_is(last->tail, last->ntail, 0, (uint32_t)last->len, &be)) {
			/*
			 * system_extra_cert_used: scripts/insert-sys-cert put the run's last
			 * certificate in the extra space (and added it to the list's size)
			 */
			at = next_word(last->tail, last->ntail, 4);
			r[nr].sized = word_is(last->tail, last->ntail, at, (uint32_t)total, &be);
		}
		if (r[nr].sized) {
			/* module_cert_size after the size: a .quad's other half, .align 8 */
			at = next_word(last->tail, last->ntail, at + 4);
			r[nr].msize =
				word_is(last->tail, last->ntail, at, (uint32_t)f->c[a].len, &be);
			nsized++;
		}
		nr++;
		a = b;
	}
	for (size_t i = 0; i < nr && sys == SIZE_MAX; i++)
		if (r[i].sized && r[i].msize)
			sys = i;
	if (sys != SIZE_MAX && nsized == 2) {
		for (size_t i = 0; i < nr; i++)
			if (r[i].sized && i != sys)
				rev = i;
	} else {
		for (size_t i = 0; i < nr && sys == SIZE_MAX; i++)
			if (r[i].sized)
				sys = i;
		for (size_t i = sys == SIZE_MAX ? nr : sys + 1; i < nr && rev == SIZE_MAX; i++)
			if (r[i].sized)
				rev = i;
	}
	for (size_t i = 0; i < nr; i++)
		for (size_t k = r[i].a; k < r[i].b; k++)
			role[k] = i == sys	    ? ROLE_SYSTEM
				  : i == rev	    ? ROLE_REVOCATION
				  : rev != SIZE_MAX ? ROLE_UNPLACED_BESIDE
						    : ROLE_UNPLACED;
	free(r);
	return 0;
}
