// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * btf.c and lib/read/btf.c: btf_module_notify() / btf_parse_module() of a module's split .BTF
 * (and .BTF.base) against the kernel's BTF, per kernel tree (6.1, 6.12, 7.2). The BTF is
 * built here type by type; each expected verdict is worked out by hand from the kernel's
 * functions (kernel/bpf/btf.c, tools/lib/bpf/btf_relocate.c), not computed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "builder.h"
#include "read/btf.h"

/* A BTF blob under construction: 24- or 32-byte header, types, strings. */
struct blob {
	unsigned char types[1024];
	size_t ntypes;
	char strs[512];
	size_t nstrs;
	unsigned char out[2048];
	size_t len;
};

static void blob_init(struct blob *b, bool empty_first_string)
{
	memset(b, 0, sizeof(*b));
	b->nstrs = empty_first_string ? 1 : 0; /* a base starts with "" */
}

/* The offset @s will have: the split BTF's own strings come after the base's @base_len. */
static uint32_t str(struct blob *b, uint32_t base_len, const char *s)
{
	uint32_t off = base_len + (uint32_t)b->nstrs;

	memcpy(b->strs + b->nstrs, s, strlen(s) + 1);
	b->nstrs += strlen(s) + 1;
	return off;
}

static void u32(struct blob *b, uint32_t v)
{
	memcpy(b->types + b->ntypes, &v, 4);
	b->ntypes += 4;
}

static void type(struct blob *b, uint32_t name, unsigned kind, uint32_t vlen, bool kflag,
		 uint32_t size_type)
{
	u32(b, name);
	u32(b, (uint32_t)kind << 24 | vlen | (kflag ? 1u << 31 : 0));
	u32(b, size_type);
}

static const unsigned char *blob_done(struct blob *b, uint32_t hdr_len)
{
	uint32_t h[8] = { 0 };

	h[0] = 0xeb9f | 1u << 16;
	h[1] = hdr_len;
	h[2] = 0;
	h[3] = (uint32_t)b->ntypes;
	h[4] = (uint32_t)b->ntypes;
	h[5] = (uint32_t)b->nstrs;
	memcpy(b->out, h, hdr_len);
	memcpy(b->out + hdr_len, b->types, b->ntypes);
	memcpy(b->out + hdr_len + b->ntypes, b->strs, b->nstrs);
	b->len = hdr_len + b->ntypes + b->nstrs;
	return b->out;
}

enum { INT = 1, PTR = 2, STRUCT = 4, TYPEDEF = 8, CONST = 10, TYPE_TAG = 18 };

/*
 * The kernel: [1] INT int (4 bytes, signed), [2] STRUCT foo (8 bytes, member a: int),
 * [3] PTR -> foo; strings "\0int\0foo\0a\0" (11 bytes). @extra_str appends a string (the
 * kernel of another build with more names), @extra_type appends a type, @drop_ptr leaves
 * [3] out, @foo_size changes foo's size.
 */
static void vmlinux(struct blob *b, const char *extra_str, bool extra_type, bool drop_ptr,
		    uint32_t foo_size)
{
	uint32_t s_int, s_foo, s_a;

	blob_init(b, true);
	s_int = str(b, 0, "int");
	s_foo = str(b, 0, "foo");
	s_a = str(b, 0, "a");
	if (extra_str)
		str(b, 0, extra_str);
	type(b, s_int, INT, 0, false, 4);
	u32(b, 1u << 24 | 32); /* signed, 32 bits */
	type(b, s_foo, STRUCT, 1, false, foo_size);
	u32(b, s_a);
	u32(b, 1);
	u32(b, 0);
	if (!drop_ptr)
		type(b, 0, PTR, 0, false, 2);
	if (extra_type) {
		type(b, s_int, INT, 0, false, 4);
		u32(b, 32);
	}
	blob_done(b, 24);
}

/*
 * The module, built against the kernel above (4 ids with void, 11 string bytes):
 * [4] STRUCT bar (8 bytes, member f: foo), [5] TYPEDEF bar_t -> bar, [6] CONST -> bar_t;
 * own strings "\0bar\0f\0bar_t\0" at 11.. (bar 12, f 16, bar_t 18).
 */
static void module(struct blob *b, bool tag_after_const)
{
	uint32_t s_bar, s_f, s_bar_t, s_tag = 0;

	blob_init(b, true);
	s_bar = str(b, 11, "bar");
	s_f = str(b, 11, "f");
	s_bar_t = str(b, 11, "bar_t");
	if (tag_after_const)
		s_tag = str(b, 11, "user");
	type(b, s_bar, STRUCT, 1, false, 8);
	u32(b, s_f);
	u32(b, 2);
	u32(b, 0);
	type(b, s_bar_t, TYPEDEF, 0, false, 4);
	type(b, 0, CONST, 0, false, tag_after_const ? 7 : 5);
	if (tag_after_const) /* [7] TYPE_TAG "user" -> bar_t, reached through the CONST */
		type(b, s_tag, TYPE_TAG, 0, false, 5);
	blob_done(b, 24);
}

static const struct kp_btf_rules r61 = { 0 };
static const struct kp_btf_rules r612 = { .relocate = true, .datasec_printable = true };
static const struct kp_btf_rules r72 = { .layout_header = true,
					 .relocate = true,
					 .datasec_printable = true };

static void expect(struct tap *t, const struct blob *k, const struct blob *m,
		   const struct blob *base, const struct kp_btf_rules *r, int err, const char *why,
		   const char *what)
{
	struct kp_btf vm;
	struct kp_btf_verdict v;
	char name[160];

	snprintf(name, sizeof(name), "%s: the kernel's BTF parses", what);
	tap_is_int(t, kp_btf_parse_base(&vm, k->out, k->len, r, &v), 0, name);
	tap_is_int(t,
		   kp_btf_check_module(&vm, m->out, m->len, base ? base->out : NULL,
				       base ? base->len : 0, r, &v),
		   0, what);
	snprintf(name, sizeof(name), "%s: errno", what);
	tap_is_int(t, v.err, err, name);
	snprintf(name, sizeof(name), "%s: reason", what);
	tap_is_str(t, v.why, why, name);
	kp_btf_release(&vm);
}

static void split_against_base(struct tap *t)
{
	struct blob k, m;

	module(&m, false);
	vmlinux(&k, NULL, false, false, 8);
	expect(t, &k, &m, NULL, &r72, 0, "", "the kernel it was built for");
	/* 8 more string bytes: bar -> "ad_str", f -> "tr" (identifiers), bar_t -> "" */
	vmlinux(&k, "pad_str", false, false, 8);
	expect(t, &k, &m, NULL, &r72, -EINVAL, "[5] TYPEDEF  Invalid name",
	       "a kernel with 8 more string bytes");
	/* one more type: the ids shift onto other types of a valid shape: accepted */
	vmlinux(&k, NULL, true, false, 8);
	expect(t, &k, &m, NULL, &r72, 0, "", "a kernel with one more type (shapes still valid)");
	/* one type less: [4] TYPEDEF -> 4 is itself */
	vmlinux(&k, NULL, false, true, 8);
	expect(t, &k, &m, NULL, &r72, -ELOOP, "Max chain length or cycle detected",
	       "a kernel with one type less");
	expect(t, &k, &m, NULL, &r612, -ELOOP, "Max chain length or cycle detected",
	       "6.12: a kernel with one type less");
}

static void headers(struct tap *t)
{
	struct blob k, m;

	vmlinux(&k, NULL, false, false, 8);
	module(&m, false);
	m.out[0] = 0x9e;
	expect(t, &k, &m, NULL, &r72, -EINVAL, "Invalid magic", "bad magic");
	module(&m, false);
	m.out[2] = 2;
	expect(t, &k, &m, NULL, &r72, -KP_ENOTSUPP, "Unsupported version", "version 2");
	/* a 32-byte header whose layout fields are zero: 7.2 reads them, 6.12 wants zeros */
	module(&m, false);
	blob_done(&m, 32);
	expect(t, &k, &m, NULL, &r72, 0, "", "7.2: 32-byte header");
	expect(t, &k, &m, NULL, &r612, 0, "", "6.12: 32-byte header, zero tail");
	memset(m.out + 24, 0xff, 4); /* layout_off: not zero */
	expect(t, &k, &m, NULL, &r612, -E2BIG, "Unsupported btf_header",
	       "6.12: 32-byte header with layout fields");
	module(&m, false);
	m.len--; /* the string section no longer ends the data */
	expect(t, &k, &m, NULL, &r72, -EINVAL, "Total section length too long",
	       "truncated string section");
}

static void type_tags(struct tap *t)
{
	struct blob k, m;

	vmlinux(&k, NULL, false, false, 8);
	module(&m, true);
	expect(t, &k, &m, NULL, &r72, 0, "", "7.2: type tag after a modifier");
	expect(t, &k, &m, NULL, &r612, -EINVAL, "Type tags don't precede modifiers",
	       "6.12: type tag after a modifier");
	expect(t, &k, &m, NULL, &r61, -EINVAL, "Type tags don't precede modifiers",
	       "6.1: type tag after a modifier");
}

/*
 * A module built against a distilled base (6.11+, pahole --btf_features=distilled_base):
 * .BTF.base [1] STRUCT foo (8 bytes), [2] INT int; strings "\0foo\0int\0" (9 bytes).
 * .BTF: [3] STRUCT bar (8 bytes, member f: foo embedded, member g at 4: int),
 * strings at 9.. : "\0bar\0f\0g\0"; @member_name_in_base names g with the base's "int".
 */
static void distilled(struct blob *base, struct blob *m, bool g_named_foo_string)
{
	uint32_t s_foo, s_int, s_bar, s_f, s_g;

	blob_init(base, true);
	s_foo = str(base, 0, "foo");
	s_int = str(base, 0, "int");
	type(base, s_foo, STRUCT, 0, false, 8);
	type(base, s_int, INT, 0, false, 4);
	u32(base, 1u << 24 | 32);
	blob_done(base, 24);
	blob_init(m, true);
	s_bar = str(m, 9, "bar");
	s_f = str(m, 9, "f");
	s_g = str(m, 9, "g");
	type(m, s_bar, STRUCT, 2, false, 8);
	u32(m, s_f);
	u32(m, 1);
	u32(m, 0);
	u32(m, g_named_foo_string ? 2 : s_g); /* offset 2: "oo", inside the base's "foo" */
	u32(m, 2);
	u32(m, 0);
	blob_done(m, 24);
}

static void relocation(struct tap *t)
{
	struct blob k, m, base;

	distilled(&base, &m, false);
	vmlinux(&k, "pad_str", true, false, 8);
	expect(t, &k, &m, &base, &r72, 0, "", "7.2: relocated onto another build");
	expect(t, &k, &m, &base, &r612, 0, "", "6.12: relocated onto another build");
	/* 6.1 has no .BTF.base: the split BTF is read over vmlinux, bar (10) names its "" */
	expect(t, &k, &m, &base, &r61, -EINVAL, "[5] STRUCT  Invalid name",
	       "6.1: the distilled base is not read");
	/* foo is embedded in bar: its size must match */
	vmlinux(&k, NULL, false, false, 16);
	expect(t, &k, &m, &base, &r72, -EINVAL,
	       "distilled base BTF type 'foo' [1] is not mapped to base BTF id",
	       "7.2: embedded struct of another size");
	/* a split string inside the distilled base's strings that no mapped type owns */
	distilled(&base, &m, true);
	vmlinux(&k, NULL, false, false, 8);
	expect(t, &k, &m, &base, &r72, -ENOENT, "string 'oo' [offset 2] is not mapped to base BTF",
	       "7.2: unmapped base string");
}

/* The rule: what the loader does with the verdict, per kernel and config. */
static void rule(struct tap *t, const char *release, bool fatal, bool give_btf, int err,
		 const char *dmesg, const char *findings)
{
	struct tb_world w;
	struct kp_module *m;
	struct blob k, mb;
	unsigned char *copy;
	char what[160];

	tb_init(&w, release);
	w.facts.btf_modules = true;
	w.facts.btf_mismatch_fatal = fatal;
	vmlinux(&k, "pad_str", false, false, 8);
	if (kp_facts_vmlinux_btf(&w.facts, give_btf ? k.out : NULL, k.len, "vmlinux.btf",
				 give_btf ? NULL : "none here") < 0)
		abort();
	module(&mb, false);
	m = tb_module(&w, "m");
	copy = kp_arena_alloc(&m->arena, mb.len);
	if (!copy)
		abort();
	memcpy(copy, mb.out, mb.len);
	m->has_btf = m->kept_btf = true;
	m->btf = copy;
	m->btf_len = mb.len;
	snprintf(what, sizeof(what), "%s, %s%s", release, fatal ? "fatal" : "allowed",
		 give_btf ? "" : ", no vmlinux BTF");
	tap_ok(t, (w.facts.nassumptions > 0) == !give_btf, "%s: assumption iff no BTF", what);
	tb_expect(t, &w, err, dmesg, findings, what);
}

int main(void)
{
	struct tap t = { 0 };

	split_against_base(&t);
	headers(&t);
	type_tags(&t);
	relocation(&t);
	rule(&t, "7.2.13+deb14-amd64", true, true, -EINVAL,
	     "failed to validate module [m] BTF: -22", "btf-mismatch");
	rule(&t, "7.2.13+deb14-amd64", false, true, 0,
	     "Kernel module BTF mismatch detected, BTF debug info may be unavailable for some "
	     "modules",
	     "btf-mismatch");
	rule(&t, "6.1.129", false, true, 0, "failed to validate module [m] BTF: -22",
	     "btf-mismatch");
	rule(&t, "7.2.13+deb14-amd64", true, false, 0, "", "");
	return tap_done(&t);
}
