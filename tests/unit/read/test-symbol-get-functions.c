// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The function enclosing a symbol_get() call site (lib/read/symbol-get/symbol-get-functions.c):
 * the sorted index must name what a scan of the whole .symtab names (the first sized STT_FUNC
 * of the site's section containing it, in .symtab order), for nested, overlapping and
 * same-start functions, other sections, unsized and non-function symbols, and a size that
 * wraps; and it must look at few entries where a riscv64 module has thousands of .L symbols.
 */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "read/symbol-get/symbol-get-trace.h"
#include "tap.h"

/* What the tracer did before the index: every symbol, per lookup. */
static struct fn_range scan(const struct kp_elf *e, size_t sec, uint64_t off)
{
	struct fn_range r = { 0, e->sections[sec].size, NULL };

	for (size_t i = 1; i < e->nsyms; i++) {
		const struct kp_sym *s = &e->syms[i];

		if (s->shndx != sec || s->type != STT_FUNC || !s->size)
			continue;
		if (off >= s->value && off - s->value < s->size) {
			r.start = s->value;
			r.end = s->value + s->size < s->value ? UINT64_MAX : s->value + s->size;
			r.name = s->name;
			return r;
		}
	}
	return r;
}

static bool same(struct fn_range a, struct fn_range b)
{
	return a.start == b.start && a.end == b.end && a.name == b.name;
}

/* Every offset of both sections (and past them) answered as the scan answers. */
static size_t mismatches(const struct kp_elf *e, const struct sg_fns *f, uint64_t upto)
{
	size_t bad = 0;

	for (size_t sec = 1; sec < e->nsections; sec++)
		for (uint64_t off = 0; off < upto; off++) {
			uint64_t work = 0;

			if (!same(sg_fns_enclosing(f, e, sec, off, &work), scan(e, sec, off)))
				bad++;
		}
	return bad;
}

static void handmade(struct tap *t)
{
	struct kp_section secs[3] = { { .name = "" },
				      { .name = ".text", .size = 200 },
				      { .name = ".text.unlikely", .size = 100 } };
	struct kp_sym syms[] = {
		{ 0 },
		{ .name = "outer", .value = 10, .size = 100, .shndx = 1, .type = STT_FUNC },
		{ .name = "inner", .value = 20, .size = 10, .shndx = 1, .type = STT_FUNC },
		{ .name = "alias_a", .value = 120, .size = 30, .shndx = 1, .type = STT_FUNC },
		{ .name = "alias_b", .value = 120, .size = 50, .shndx = 1, .type = STT_FUNC },
		{ .name = ".Lpcrel_hi0", .value = 30, .shndx = 1, .type = STT_NOTYPE },
		{ .name = "unsized", .value = 180, .size = 0, .shndx = 1, .type = STT_FUNC },
		{ .name = "data", .value = 175, .size = 10, .shndx = 1, .type = STT_OBJECT },
		{ .name = "cold", .value = 0, .size = 40, .shndx = 2, .type = STT_FUNC },
		{ .name = "wraps", .value = 90, .size = UINT64_MAX, .shndx = 2, .type = STT_FUNC },
	};
	struct kp_elf e = { .sections = secs,
			    .nsections = 3,
			    .syms = syms,
			    .nsyms = sizeof(syms) / sizeof(syms[0]) };
	struct sg_fns f;
	uint64_t work = 0;

	tap_is_int(t, sg_fns_build(&f, &e), 0, "index built");
	tap_is_int(t, f.n, 6, "the six sized functions indexed");
	tap_is_int(t, mismatches(&e, &f, 260), 0, "every offset: the scan's answer");
	tap_is_str(t, sg_fns_enclosing(&f, &e, 1, 25, &work).name, "outer",
		   "nested: the first in .symtab order (outer), as the scan");
	tap_is_str(t, sg_fns_enclosing(&f, &e, 1, 160, &work).name, "alias_b",
		   "same start: only the longer one reaches 160");
	tap_is_str(t, sg_fns_enclosing(&f, &e, 1, 125, &work).name, "alias_a",
		   "same start: the lower .symtab index");
	tap_ok(t, !sg_fns_enclosing(&f, &e, 1, 5, &work).name, "before every function: none");
	tap_ok(t, sg_fns_enclosing(&f, &e, 2, 99, &work).end == UINT64_MAX,
	       "a wrapping size ends at 2^64-1");
	sg_fns_release(&f);
	tap_ok(t, !f.v && !f.n, "released");
}

/* A riscv64-like table: few functions among many local labels, random overlaps. */
static void random_tables(struct tap *t)
{
	struct kp_section secs[3] = { { .name = "" },
				      { .name = ".text", .size = 4096 },
				      { .name = ".init.text", .size = 4096 } };
	size_t n = 20000, bad = 0;
	uint64_t most = 0;
	struct kp_sym *syms = calloc(n, sizeof(*syms));
	char *names = calloc(n, 1); /* distinct addresses: the names compared are pointers */
	unsigned seed = 12345;

	if (!syms || !names) {
		tap_ok(t, 0, "out of memory");
		free(syms);
		free(names);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		syms[i].shndx = 1 + (seed >> 16) % 2;
		syms[i].value = (seed >> 4) % 4096;
		syms[i].name = "x";
		if (i % 100 == 0) { /* a function, sometimes nested or overlapping */
			syms[i].type = STT_FUNC;
			syms[i].size = 1 + (seed >> 8) % 300;
		} else {
			syms[i].type = STT_NOTYPE; /* .L labels */
		}
	}
	for (int round = 0; round < 2; round++) {
		struct kp_elf e = { .sections = secs, .nsections = 3, .syms = syms, .nsyms = n };
		struct sg_fns f;

		if (sg_fns_build(&f, &e) < 0) {
			tap_ok(t, 0, "out of memory");
			break;
		}
		for (size_t sec = 1; sec < 3; sec++)
			for (uint64_t off = 0; off < 4200; off++) {
				uint64_t work = 0;
				struct fn_range a = sg_fns_enclosing(&f, &e, sec, off, &work);

				if (!same(a, scan(&e, sec, off)))
					bad++;
				if (work > most)
					most = work;
			}
		sg_fns_release(&f);
		/* the second round: every function named apart, so a wrong pick shows */
		for (size_t i = 1; i < n; i++)
			syms[i].name = &names[i];
	}
	tap_is_int(t, bad, 0, "20,000 symbols, 199 functions: every offset as the scan");
	tap_ok(t, most < 200, "at most %llu entries looked at per lookup (the scan: 19,999)",
	       (unsigned long long)most);
	free(syms);
	free(names);
}

int main(void)
{
	struct tap t = { 0 };

	handmade(&t);
	random_tables(&t);
	return tap_done(&t);
}
