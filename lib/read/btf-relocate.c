// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * btf_relocate() (tools/lib/bpf/btf_relocate.c, shared with the kernel from 6.11) as
 * btf_parse_module() runs it on a module's split BTF over its distilled .BTF.base; see btf.h.
 */
#include "btf-internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EMBEDDED 0xffffffffu /* BTF_IS_EMBEDDED */

struct reloc {
	const struct kp_btf *btf, *base, *dist;
	const struct kp_btf_rules *r;
	uint32_t nr_base, nr_split, nr_dist;
	uint32_t dist_str_len, base_str_len;
	uint32_t *id_map, *str_map;
};

struct name_info {
	const char *name;
	bool needs_size;
	uint32_t size;
	uint32_t id;
};

/* cmp_btf_name_size() */
static int name_cmp(const void *a, const void *b)
{
	const struct name_info *x = a, *y = b;
	int d = strcmp(x->name, y->name);

	if (!d && x->needs_size && y->needs_size)
		return (int)(y->size & 0x7fffffff) - (int)(x->size & 0x7fffffff);
	return d;
}

/* search_btf_name_size(): the leftmost match */
static struct name_info *name_search(const struct name_info *key, struct name_info *v, long n)
{
	struct name_info *ret = NULL;
	long lo = 0, hi = n - 1;

	while (lo <= hi) {
		long mid = (lo + hi) / 2;
		int d = name_cmp(key, &v[mid]);

		if (!d)
			ret = &v[mid];
		if (d <= 0)
			hi = mid - 1;
		else
			lo = mid + 1;
	}
	return ret;
}

/* The type ids a type refers to (BTF_FIELD_ITER_IDS), through @fn; stops on its nonzero. */
static int for_each_id(const struct kp_btf *b, const struct kp_btf_rules *r, const struct ty *t,
		       int (*fn)(void *ctx, uint32_t id), void *ctx)
{
	unsigned kind = kind_of(r, t->info);
	uint32_t vlen = vlen_of(r, t->info);
	const unsigned char *x = t->p + TYPE_SIZE;
	int err = 0;

	switch (kind) {
	case K_PTR:
	case K_TYPEDEF:
	case K_VOLATILE:
	case K_CONST:
	case K_RESTRICT:
	case K_FUNC:
	case K_VAR:
	case K_DECL_TAG:
	case K_TYPE_TAG:
		return fn(ctx, t->size_type);
	case K_ARRAY:
		return fn(ctx, rd32(b, x)) ?: fn(ctx, rd32(b, x + 4));
	case K_STRUCT:
	case K_UNION:
		for (uint32_t i = 0; i < vlen && !err; i++)
			err = fn(ctx, rd32(b, x + 12 * i + 4));
		return err;
	case K_FUNC_PROTO:
		err = fn(ctx, t->size_type);
		for (uint32_t i = 0; i < vlen && !err; i++)
			err = fn(ctx, rd32(b, x + 8 * i + 4));
		return err;
	case K_DATASEC:
		for (uint32_t i = 0; i < vlen && !err; i++)
			err = fn(ctx, rd32(b, x + 12 * i));
		return err;
	default:
		return 0;
	}
}

struct embed_ctx {
	struct reloc *r;
	struct kp_btf_verdict *v;
};

/* btf_mark_embedded_composite_type_ids(), one member type id */
static int mark_embedded_one(void *ctx, uint32_t id)
{
	struct embed_ctx *c = ctx;
	struct reloc *r = c->r;
	uint32_t next = id, steps = 0, total = kp_btf_nr_types(r->btf);
	struct ty t;

	while (next) {
		if (!kp_btf_type_by_id(r->btf, next, &t)) {
			c->v->err = -EINVAL;
			snprintf(c->v->why, sizeof(c->v->why),
				 "btf_relocate() follows type id %u past the last type (%u): the "
				 "kernel dereferences NULL there (an oops, not a refusal)",
				 next, total - 1);
			return -EINVAL;
		}
		if (++steps > total + 1) {
			c->v->err = -ELOOP;
			snprintf(c->v->why, sizeof(c->v->why),
				 "btf_relocate() follows a cycle of array/modifier types from id "
				 "%u: the kernel loops there without end",
				 id);
			return -ELOOP;
		}
		switch (kind_of(r->r, t.info)) {
		case K_CONST:
		case K_RESTRICT:
		case K_VOLATILE:
		case K_TYPEDEF:
		case K_TYPE_TAG:
			next = t.size_type;
			break;
		case K_ARRAY:
			next = rd32(r->btf, t.p + TYPE_SIZE);
			break;
		case K_STRUCT:
		case K_UNION:
			if (next < r->nr_dist)
				r->id_map[next] = EMBEDDED;
			next = 0;
			break;
		default:
			next = 0;
		}
	}
	return 0;
}

static void rfail(struct kp_btf_verdict *v, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void rfail(struct kp_btf_verdict *v, int err, const char *fmt, ...)
{
	va_list ap;

	v->err = err;
	va_start(ap, fmt);
	vsnprintf(v->why, sizeof(v->why), fmt, ap);
	va_end(ap);
}

/* btf_relocate_validate_distilled_base() */
static int validate_distilled(struct reloc *r, struct kp_btf_verdict *v)
{
	for (uint32_t i = 1; i < r->nr_dist; i++) {
		struct ty t;
		unsigned kind;

		kp_btf_type_by_id(r->dist, i, &t);
		kind = kind_of(r->r, t.info);
		switch (kind) {
		case K_INT:
		case K_FLOAT:
		case K_ENUM:
		case K_STRUCT:
		case K_UNION:
		case K_FWD:
			if (t.name_off)
				break;
			rfail(v, -EINVAL,
			      "type [%u], kind [%u] is invalid for distilled base BTF; it is "
			      "anonymous",
			      i, kind);
			return -EINVAL;
		default:
			rfail(v, -EINVAL,
			      "type [%u] in distilled based BTF has unexpected kind [%u]", i, kind);
			return -EINVAL;
		}
	}
	return 0;
}

static uint32_t int_encoding(const struct kp_btf *b, const struct ty *t)
{
	return (rd32(b, t->p + TYPE_SIZE) & 0x0f000000) >> 24;
}

/* btf_relocate_map_distilled_base() */
static int map_distilled(struct reloc *r, struct kp_btf_verdict *v)
{
	struct name_info *info, *end;
	unsigned char *cnt = NULL;
	struct embed_ctx ec = { r, v };
	int err = 0;

	info = calloc(r->nr_dist ? r->nr_dist : 1, sizeof(*info));
	if (!info)
		return -ENOMEM;
	end = info + r->nr_dist;
	for (uint32_t id = 0; id < r->nr_dist; id++) {
		struct ty t;

		kp_btf_type_by_id(r->dist, id, &t);
		info[id].name = kp_btf_str_by_offset(r->dist, t.name_off);
		if (!info[id].name)
			info[id].name = "";
		info[id].id = id;
		info[id].size = t.size_type & 0x7fffffff;
		info[id].needs_size = true;
	}
	qsort(info, r->nr_dist, sizeof(*info), name_cmp);
	for (uint32_t id = r->nr_dist; id < r->nr_dist + r->nr_split; id++) {
		struct ty t;

		kp_btf_type_by_id(r->btf, id, &t);
		if (kind_of(r->r, t.info) != K_STRUCT && kind_of(r->r, t.info) != K_UNION)
			continue;
		if ((err = for_each_id(r->btf, r->r, &t, mark_embedded_one, &ec)))
			goto done;
	}
	cnt = calloc(r->base_str_len ? r->base_str_len : 1, 1);
	if (!cnt) {
		err = -ENOMEM;
		goto done;
	}
	for (uint32_t id = 1; id < r->nr_base; id++) {
		struct ty t;
		unsigned k;

		kp_btf_type_by_id(r->base, id, &t);
		k = kind_of(r->r, t.info);
		if ((k != K_STRUCT && k != K_UNION) || !t.name_off || t.name_off >= r->base_str_len)
			continue;
		if (cnt[t.name_off] < 255)
			cnt[t.name_off]++;
	}
	for (uint32_t id = 1; id < r->nr_base; id++) {
		struct name_info bi = { 0 }, *di;
		struct ty bt;
		unsigned bk;

		kp_btf_type_by_id(r->base, id, &bt);
		if (!bt.name_off)
			continue;
		bk = kind_of(r->r, bt.info);
		bi.id = id;
		bi.name = kp_btf_str_by_offset(r->base, bt.name_off);
		if (!bi.name)
			continue;
		switch (bk) {
		case K_INT:
		case K_FLOAT:
		case K_ENUM:
		case K_ENUM64:
			bi.needs_size = true;
			bi.size = bt.size_type & 0x7fffffff;
			break;
		case K_FWD:
			break;
		case K_STRUCT:
		case K_UNION:
			bi.needs_size = bt.name_off < r->base_str_len && cnt[bt.name_off] > 1;
			bi.size = bt.size_type & 0x7fffffff;
			break;
		default:
			continue;
		}
		for (di = name_search(&bi, info, r->nr_dist); di && di < end && !name_cmp(&bi, di);
		     di++) {
			struct ty dt;
			unsigned dk;

			if (!di->id || di->id >= r->nr_dist) {
				rfail(v, -EINVAL,
				      "base BTF id [%u] maps to invalid distilled base BTF id [%u]",
				      id, di->id);
				err = -EINVAL;
				goto done;
			}
			kp_btf_type_by_id(r->dist, di->id, &dt);
			dk = kind_of(r->r, dt.info);
			switch (dk) {
			case K_FWD:
				if (bk == K_FWD) {
					if (kflag_of(dt.info) != kflag_of(bt.info))
						continue;
				} else if (bk == K_STRUCT) {
					if (kflag_of(bt.info))
						continue;
				} else if (bk == K_UNION) {
					if (!kflag_of(bt.info))
						continue;
				} else {
					continue;
				}
				break;
			case K_INT:
				if (dk != bk ||
				    int_encoding(r->base, &bt) != int_encoding(r->dist, &dt))
					continue;
				break;
			case K_FLOAT:
				if (dk != bk)
					continue;
				break;
			case K_ENUM:
				if (bk != dk && bk != K_ENUM64)
					continue;
				break;
			case K_STRUCT:
			case K_UNION:
				if (r->id_map[di->id] == EMBEDDED && bt.size_type != dt.size_type)
					continue;
				break;
			default:
				continue;
			}
			if (r->id_map[di->id] && r->id_map[di->id] != EMBEDDED) {
				rfail(v, -EINVAL,
				      "distilled base BTF type '%s' [%u], size %u has multiple "
				      "candidates of the same size (ids [%u, %u]) in base BTF",
				      bi.name, di->id, bt.size_type, id, r->id_map[di->id]);
				err = -EINVAL;
				goto done;
			}
			r->id_map[di->id] = id;
			if (dt.name_off < r->dist_str_len)
				r->str_map[dt.name_off] = bt.name_off;
		}
	}
	for (uint32_t id = 1; id < r->nr_dist; id++) {
		struct ty t;
		const char *name;

		if (r->id_map[id] && r->id_map[id] != EMBEDDED)
			continue;
		kp_btf_type_by_id(r->dist, id, &t);
		name = kp_btf_str_by_offset(r->dist, t.name_off);
		rfail(v, -EINVAL, "distilled base BTF type '%s' [%u] is not mapped to base BTF id",
		      name ? name : "", id);
		err = -EINVAL;
		break;
	}
done:
	free(cnt);
	free(info);
	return err;
}

/* btf_relocate_rewrite_strs(): every string a split type names must map */
static int check_strs(struct reloc *r, uint32_t id, struct kp_btf_verdict *v)
{
	const struct kp_btf *b = r->btf;
	struct ty t;
	uint32_t vlen, step = 0;
	unsigned kind;

	kp_btf_type_by_id(b, id, &t);
	kind = kind_of(r->r, t.info);
	vlen = vlen_of(r->r, t.info);
	switch (kind) {
	case K_STRUCT:
	case K_UNION:
		step = 12;
		break;
	case K_ENUM:
		step = 8;
		break;
	case K_ENUM64:
		step = 12;
		break;
	case K_FUNC_PROTO:
		step = 8;
		break;
	default:
		vlen = 0;
	}
	for (uint32_t i = 0; i <= vlen; i++) {
		/* the name is the first field of a member, an enumerator and a parameter */
		uint32_t off = i == 0 ? t.name_off : rd32(b, t.p + TYPE_SIZE + step * (i - 1));

		if (!off || off >= r->dist_str_len)
			continue;
		if (!r->str_map[off]) {
			rfail(v, -ENOENT, "string '%s' [offset %u] is not mapped to base BTF",
			      kp_btf_name_of(b, off), off);
			return -ENOENT;
		}
	}
	return 0;
}

/* btf_relocate() */
int kp_btf_relocate(const struct kp_btf *btf, const struct kp_btf *vmlinux,
		    const struct kp_btf_rules *rules, struct kp_btf_verdict *v)
{
	struct reloc r = {
		.btf = btf,
		.base = vmlinux,
		.dist = btf->base,
		.r = rules,
		.nr_dist = kp_btf_nr_types(btf->base),
		.nr_base = kp_btf_nr_types(vmlinux),
		.dist_str_len = btf->base->str_len,
		.base_str_len = vmlinux->str_len,
	};
	uint32_t nr_types = kp_btf_nr_types(btf);
	int err;

	r.nr_split = nr_types - r.nr_dist;
	r.id_map = calloc(nr_types ? nr_types : 1, sizeof(*r.id_map));
	r.str_map = calloc(r.dist_str_len ? r.dist_str_len : 1, sizeof(*r.str_map));
	if (!r.id_map || !r.str_map) {
		err = -ENOMEM;
		goto out;
	}
	if ((err = validate_distilled(&r, v)))
		goto out;
	for (uint32_t id = r.nr_dist; id < nr_types; id++)
		r.id_map[id] = id + r.nr_base - r.nr_dist;
	if ((err = map_distilled(&r, v)))
		goto out;
	for (uint32_t i = 0; i < r.nr_split; i++)
		if ((err = check_strs(&r, i + r.nr_dist, v)))
			goto out;
out:
	free(r.id_map);
	free(r.str_map);
	return err;
}
