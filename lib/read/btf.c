// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The kernel's module BTF checks (kernel/bpf/btf.c, tools/lib/bpf/btf_relocate.c of the
 * 6.1, 6.12 and 7.2 trees), function by function; see btf.h for what is modelled. Here:
 * btf_parse_base() and btf_parse_module() with their header, string section and modifier
 * chain checks; each type's check_meta is btf-meta.c's, btf_relocate() btf-relocate.c's.
 */
#include "btf-internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BTF_MAGIC 0xeb9f

int kp_btf_fail(struct env *e, int err, const char *fmt, ...)
{
	va_list ap;

	e->v->err = err;
	va_start(ap, fmt);
	vsnprintf(e->v->why, sizeof(e->v->why), fmt, ap);
	va_end(ap);
	return err;
}

uint32_t kp_btf_nr_types(const struct kp_btf *b)
{
	return b->start_id + b->nr_types;
}

/* btf_type_by_id() */
bool kp_btf_type_by_id(const struct kp_btf *b, uint32_t id, struct ty *t)
{
	while (id < b->start_id)
		b = b->base;
	id -= b->start_id;
	if (id >= b->nr_types)
		return false;
	if (!b->types[id]) { /* void */
		memset(t, 0, sizeof(*t));
		return true;
	}
	ty_at(b, b->data + b->types[id], t);
	return true;
}

/* btf_str_by_offset() */
const char *kp_btf_str_by_offset(const struct kp_btf *b, uint32_t off)
{
	while (off < b->start_str_off)
		b = b->base;
	off -= b->start_str_off;
	return off < b->str_len ? b->strings + off : NULL;
}

const char *kp_btf_name_of(const struct kp_btf *b, uint32_t off)
{
	const char *s;

	if (!off)
		return "(anon)";
	s = kp_btf_str_by_offset(b, off);
	return s ? s : "(invalid-name-offset)";
}

static bool is_modifier(unsigned kind)
{
	return kind == K_TYPEDEF || kind == K_VOLATILE || kind == K_CONST || kind == K_RESTRICT ||
	       kind == K_TYPE_TAG;
}

/*
 * btf_check_modifier_chain_length() (7.2 tree) / btf_check_type_tags() (6.1, 6.12: type
 * tags must come before the other modifiers).
 */
static int check_modifier_chains(struct env *e, uint32_t start_id)
{
	const struct kp_btf *b = e->btf;
	uint32_t n = kp_btf_nr_types(b);
	int64_t good = (int64_t)start_id - 1;

	for (uint32_t i = start_id; i < n; i++) {
		struct ty t;
		int limit = 32;
		uint32_t cur = i;
		bool in_tags;

		if (!kp_btf_type_by_id(b, i, &t))
			return kp_btf_fail(e, -EINVAL, "type id %u past the last type", i);
		if (!is_modifier(kind_of(e->r, t.info)))
			continue;
		in_tags = kind_of(e->r, t.info) == K_TYPE_TAG;
		while (t.p && is_modifier(kind_of(e->r, t.info))) {
			if (!limit--)
				return kp_btf_fail(e, -ELOOP, "Max chain length or cycle detected");
			if (!e->r->layout_header) {
				if (kind_of(e->r, t.info) == K_TYPE_TAG) {
					if (!in_tags)
						return kp_btf_fail(
							e, -EINVAL,
							"Type tags don't precede modifiers");
				} else {
					in_tags = false;
				}
			}
			if ((int64_t)cur <= good)
				break;
			cur = t.size_type;
			if (!kp_btf_type_by_id(b, cur, &t))
				return kp_btf_fail(
					e, -EINVAL,
					"[%u] refers to type id %u, past the last type (%u)", i,
					cur, n - 1);
		}
		good = i;
	}
	return 0;
}

/* btf_sec_info_cmp() */
struct sec {
	uint32_t off, len;
};

static int sec_cmp(const void *a, const void *b)
{
	const struct sec *x = a, *y = b;
	int d = (int)(x->off - y->off);

	return d ? d : (int)(x->len - y->len);
}

/* btf_parse_hdr() with btf_check_sec_info() */
static int parse_hdr(struct env *e)
{
	struct kp_btf *b = e->btf;
	uint32_t hsz = e->r->layout_header ? 32 : 24, copy, expected, total = 0;
	unsigned char h[32] = { 0 };
	struct sec secs[3];
	unsigned nsecs;

	if (b->size < 8)
		return kp_btf_fail(e, -EINVAL, "hdr_len not found");
	/*
	 * The kernel reads its own byte order: vmlinux's magic says which one that is, and a
	 * module's BTF is read in it.
	 */
	if (e->swap < 0)
		b->swap = b->data[0] == (BTF_MAGIC >> 8) && b->data[1] == (BTF_MAGIC & 0xff);
	else
		b->swap = e->swap;
	b->hdr_len = rd32(b, b->data + 4);
	if (b->size < b->hdr_len)
		return kp_btf_fail(e, -EINVAL, "btf_header not found");
	for (uint32_t i = hsz; i < b->hdr_len; i++)
		if (b->data[i])
			return kp_btf_fail(e, -E2BIG, "Unsupported btf_header");
	copy = b->hdr_len < hsz ? b->hdr_len : hsz;
	memcpy(h, b->data, copy);
	if (rd16(b, h) != BTF_MAGIC)
		return kp_btf_fail(e, -EINVAL, "Invalid magic");
	if (h[2] != 1)
		return kp_btf_fail(e, -KP_ENOTSUPP, "Unsupported version");
	if (h[3])
		return kp_btf_fail(e, -KP_ENOTSUPP, "Unsupported flags");
	b->type_off = rd32(b, h + 8);
	b->type_len = rd32(b, h + 12);
	b->str_off = rd32(b, h + 16);
	b->str_len = rd32(b, h + 20);
	b->layout_off = rd32(b, h + 24);
	b->layout_len = rd32(b, h + 28);
	if (!b->base && b->size == b->hdr_len)
		return kp_btf_fail(e, -EINVAL, "No data");
	secs[0] = (struct sec){ b->type_off, b->type_len };
	secs[1] = (struct sec){ b->str_off, b->str_len };
	secs[2] = (struct sec){ b->layout_off, b->layout_len };
	nsecs = e->r->layout_header && b->hdr_len >= 32 && b->layout_len ? 3 : 2;
	qsort(secs, nsecs, sizeof(secs[0]), sec_cmp);
	expected = b->size - b->hdr_len;
	for (unsigned i = 0; i < nsecs; i++) {
		if (expected < secs[i].off)
			return kp_btf_fail(e, -EINVAL, "Invalid section offset");
		if (total < secs[i].off)
			return kp_btf_fail(e, -EINVAL, "Unsupported section found");
		if (total > secs[i].off)
			return kp_btf_fail(e, -EINVAL, "Section overlap found");
		if (expected - total < secs[i].len)
			return kp_btf_fail(e, -EINVAL, "Total section length too long");
		total += secs[i].len;
	}
	if (expected != total)
		return kp_btf_fail(e, -EINVAL, "Unsupported section found");
	return 0;
}

/* btf_parse_str_sec() */
static int parse_str_sec(struct env *e)
{
	struct kp_btf *b = e->btf;
	uint32_t start = b->hdr_len + b->str_off, end = start + b->str_len;

	if ((!e->r->layout_header || b->hdr_len < 32) && end != b->size)
		return kp_btf_fail(e, -EINVAL, "String section is not at the end");
	b->strings = (const char *)b->data + start;
	if (b->base && !b->str_len)
		return 0;
	if (!b->str_len || b->str_len - 1 > MAX_NAME_OFFSET || b->data[end - 1])
		return kp_btf_fail(e, -EINVAL, "Invalid string section");
	if (!b->base && b->strings[0])
		return kp_btf_fail(e, -EINVAL, "Invalid string section");
	return 0;
}

/*
 * The layout section (7.2 tree, btf_parse_layout_sec()) is parsed only by btf_parse() of
 * user BTF, not by btf_parse_base()/btf_parse_module(): nothing to check here.
 */
static int parse_common(struct env *e, uint32_t chain_start)
{
	int err;

	if ((err = parse_hdr(e)) || (err = parse_str_sec(e)) || (err = kp_btf_check_all_metas(e)))
		return err;
	return check_modifier_chains(e, chain_start ? chain_start : kp_btf_nr_types(e->btf->base));
}

static int parse_base(struct kp_btf *b, const unsigned char *data, size_t size,
		      const struct kp_btf_rules *r, struct kp_btf_verdict *v, int swap)
{
	struct env e = { .btf = b, .r = r, .v = v, .swap = swap };
	int err;

	memset(b, 0, sizeof(*b));
	memset(v, 0, sizeof(*v));
	if (size > UINT32_MAX)
		return kp_btf_fail(&e, -E2BIG, "BTF larger than 4 GiB");
	b->data = data;
	b->size = (uint32_t)size;
	err = parse_common(&e, 1);
	if (err == -ENOMEM)
		v->err = -ENOMEM;
	if (err)
		kp_btf_release(b);
	return err;
}

int kp_btf_parse_base(struct kp_btf *b, const unsigned char *data, size_t size,
		      const struct kp_btf_rules *r, struct kp_btf_verdict *v)
{
	return parse_base(b, data, size, r, v, -1);
}

int kp_btf_base_from_index(struct kp_btf *b, const unsigned char *data, size_t size,
			   const struct kp_btf_rules *r, const uint32_t *types, uint32_t nr_types)
{
	struct kp_btf_verdict v;
	struct env e = { .btf = b, .r = r, .v = &v, .swap = -1 };

	memset(b, 0, sizeof(*b));
	memset(&v, 0, sizeof(v));
	if (size > UINT32_MAX || !nr_types)
		return -1;
	b->data = data;
	b->size = (uint32_t)size;
	/* the header and string section again (cheap); the types were checked when indexed */
	if (parse_hdr(&e) || parse_str_sec(&e)) {
		memset(b, 0, sizeof(*b));
		return -1;
	}
	for (uint32_t i = 1; i < nr_types; i++)
		if (types[i] < b->hdr_len + b->type_off ||
		    types[i] > b->hdr_len + b->type_off + b->type_len - TYPE_SIZE) {
			memset(b, 0, sizeof(*b));
			return -1;
		}
	b->types = (uint32_t *)(uintptr_t)types;
	b->types_borrowed = true;
	b->nr_types = nr_types;
	return 0;
}

void kp_btf_release(struct kp_btf *b)
{
	if (!b->types_borrowed)
		free(b->types);
	memset(b, 0, sizeof(*b));
}

int kp_btf_check_module(const struct kp_btf *vmlinux, const unsigned char *btf, size_t btf_len,
			const unsigned char *base, size_t base_len, const struct kp_btf_rules *r,
			struct kp_btf_verdict *v)
{
	struct kp_btf dist = { 0 }, mod = { 0 };
	struct env e = { .btf = &mod, .r = r, .v = v, .swap = vmlinux->swap };
	bool use_dist = base && r->relocate;
	int err;

	memset(v, 0, sizeof(*v));
	if (use_dist) {
		err = parse_base(&dist, base, base_len, r, v, vmlinux->swap);
		if (err == -ENOMEM)
			return -1;
		if (err) {
			char why[sizeof(v->why)];

			snprintf(why, sizeof(why), ".BTF.base: %.180s", v->why);
			snprintf(v->why, sizeof(v->why), "%s", why);
			return 0;
		}
	}
	if (btf_len > UINT32_MAX) {
		kp_btf_fail(&e, -E2BIG, "BTF larger than 4 GiB");
		goto out;
	}
	mod.data = btf;
	mod.size = (uint32_t)btf_len;
	mod.base = use_dist ? &dist : vmlinux;
	mod.start_id = kp_btf_nr_types(mod.base);
	mod.start_str_off = mod.base->str_len;
	err = parse_common(&e, 0);
	if (!err && use_dist)
		err = kp_btf_relocate(&mod, vmlinux, r, v);
out:
	kp_btf_release(&mod);
	kp_btf_release(&dist);
	if (v->err == -ENOMEM || (!v->err && err == -ENOMEM))
		return -1;
	return 0;
}
