// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * btf_check_all_metas() of kernel/bpf/btf.c (the 6.1, 6.12 and 7.2 trees): each type's
 * btf_check_meta() and its kind's check_meta, with the name checks they use; see btf.h.
 */
#include "btf-internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TYPE      0x000fffffu
#define KSYM_NAME_LEN 512
#define INFO_MASK_OLD 0x9f00ffffu /* BTF_INFO_MASK before the 7.2 layout */

static const char *const kind_str[] = {
	"UNKNOWN", "INT",     "PTR",	  "ARRAY",    "STRUCT",	  "UNION",  "ENUM",
	"FWD",	   "TYPEDEF", "VOLATILE", "CONST",    "RESTRICT", "FUNC",   "FUNC_PROTO",
	"VAR",	   "DATASEC", "FLOAT",	  "DECL_TAG", "TYPE_TAG", "ENUM64",
};

/* btf_name_offset_valid() */
static bool name_offset_valid(const struct kp_btf *b, uint32_t off)
{
	if (off > MAX_NAME_OFFSET)
		return false;
	while (off < b->start_str_off)
		b = b->base;
	return off - b->start_str_off < b->str_len;
}

/* The kernel's ctype (lib/ctype.c, Latin-1): letters and printable characters. */
static bool k_isalpha(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= 192 && c != 215 && c != 247);
}

static bool k_isalnum(unsigned char c)
{
	return k_isalpha(c) || (c >= '0' && c <= '9');
}

static bool k_isprint(unsigned char c)
{
	return (c >= 32 && c <= 126) || c >= 160;
}

/* __btf_name_char_ok() */
static bool name_char_ok(char c, bool first)
{
	unsigned char u = (unsigned char)c;

	return (first ? k_isalpha(u) : k_isalnum(u)) || c == '_' || c == '.';
}

/* btf_name_valid_identifier(): @off must be valid */
static bool valid_identifier(const struct kp_btf *b, uint32_t off)
{
	const char *src = kp_btf_str_by_offset(b, off), *limit;

	if (!src || !name_char_ok(*src, true))
		return false;
	limit = src + KSYM_NAME_LEN;
	src++;
	while (*src && src < limit) {
		if (!name_char_ok(*src, false))
			return false;
		src++;
	}
	return !*src;
}

/* btf_name_valid_section(): any printable name (the 6.12 tree), an identifier before */
static bool valid_section(const struct env *e, uint32_t off)
{
	const char *src = kp_btf_str_by_offset(e->btf, off), *limit;

	if (!e->r->datasec_printable)
		return valid_identifier(e->btf, off);
	if (!src || !*src)
		return false;
	limit = src + KSYM_NAME_LEN;
	while (*src && src < limit) {
		if (!k_isprint((unsigned char)*src))
			return false;
		src++;
	}
	return !*src;
}

/* btf_verifier_log_type(): "[id] KIND name msg" */
static int fail_type(struct env *e, const struct ty *t, int err, const char *msg)
{
	return kp_btf_fail(e, err, "[%u] %s %s %s", e->log_type_id,
			   kind_str[kind_of(e->r, t->info)], kp_btf_name_of(e->btf, t->name_off),
			   msg);
}

static uint32_t roundup_bytes(uint32_t bits)
{
	return bits / 8 + !!(bits & 7);
}

static bool is_pow2(uint32_t x)
{
	return x && !(x & (x - 1));
}

/* The check_meta of each kind (kind_ops[]): the bytes after struct btf_type, or < 0. */
static long check_kind(struct env *e, const struct ty *t, uint32_t left)
{
	const struct kp_btf *b = e->btf;
	const struct kp_btf_rules *r = e->r;
	unsigned kind = kind_of(r, t->info);
	uint32_t vlen = vlen_of(r, t->info), need;
	bool kflag = kflag_of(t->info);
	const unsigned char *x = t->p + TYPE_SIZE;
	char msg[96];

	switch (kind) {
	case K_INT: { /* btf_int_check_meta() */
		uint32_t data, bits, enc;

		if (left < 4) {
			snprintf(msg, sizeof(msg), "meta_left:%u meta_needed:4", left);
			return fail_type(e, t, -EINVAL, msg);
		}
		if (vlen)
			return fail_type(e, t, -EINVAL, "vlen != 0");
		if (kflag)
			return fail_type(e, t, -EINVAL, "Invalid btf_info kind_flag");
		data = rd32(b, x);
		if (data & ~0x0fffffffu) {
			snprintf(msg, sizeof(msg), "Invalid int_data:%x", data);
			return fail_type(e, t, -EINVAL, msg);
		}
		bits = (data & 0xff) + ((data & 0x00ff0000) >> 16);
		if (bits > 128)
			return fail_type(e, t, -EINVAL, "nr_bits exceeds 128");
		if (roundup_bytes(bits) > t->size_type)
			return fail_type(e, t, -EINVAL, "nr_bits exceeds type_size");
		enc = (data & 0x0f000000) >> 24;
		if (enc && enc != 1 && enc != 2 && enc != 4)
			return fail_type(e, t, -KP_ENOTSUPP, "Unsupported encoding");
		return 4;
	}
	case K_PTR:
	case K_TYPEDEF:
	case K_VOLATILE:
	case K_CONST:
	case K_RESTRICT:
	case K_TYPE_TAG: { /* btf_ref_type_check_meta() */
		const char *value;

		if (vlen)
			return fail_type(e, t, -EINVAL, "vlen != 0");
		if (kflag && !(kind == K_TYPE_TAG && r->layout_header))
			return fail_type(e, t, -EINVAL, "Invalid btf_info kind_flag");
		if (t->size_type > MAX_TYPE)
			return fail_type(e, t, -EINVAL, "Invalid type_id");
		if (kind == K_TYPEDEF) {
			if (!t->name_off || !valid_identifier(b, t->name_off))
				return fail_type(e, t, -EINVAL, "Invalid name");
		} else if (kind == K_TYPE_TAG) {
			value = kp_btf_str_by_offset(b, t->name_off);
			if (!value || !value[0])
				return fail_type(e, t, -EINVAL, "Invalid name");
		} else if (t->name_off) {
			return fail_type(e, t, -EINVAL, "Invalid name");
		}
		return 0;
	}
	case K_ARRAY: { /* btf_array_check_meta() */
		uint32_t elem, index;

		if (left < 12) {
			snprintf(msg, sizeof(msg), "meta_left:%u meta_needed:12", left);
			return fail_type(e, t, -EINVAL, msg);
		}
		if (t->name_off)
			return fail_type(e, t, -EINVAL, "Invalid name");
		if (vlen)
			return fail_type(e, t, -EINVAL, "vlen != 0");
		if (kflag)
			return fail_type(e, t, -EINVAL, "Invalid btf_info kind_flag");
		if (t->size_type)
			return fail_type(e, t, -EINVAL, "size != 0");
		elem = rd32(b, x);
		index = rd32(b, x + 4);
		if (!elem || elem > MAX_TYPE)
			return fail_type(e, t, -EINVAL, "Invalid elem");
		if (!index || index > MAX_TYPE)
			return fail_type(e, t, -EINVAL, "Invalid index");
		return 12;
	}
	case K_STRUCT:
	case K_UNION: { /* btf_struct_check_meta() */
		uint32_t last = 0;

		need = vlen * 12;
		if ((uint64_t)vlen * 12 > left) {
			snprintf(msg, sizeof(msg), "meta_left:%u meta_needed:%u", left, need);
			return fail_type(e, t, -EINVAL, msg);
		}
		if (t->name_off && !valid_identifier(b, t->name_off))
			return fail_type(e, t, -EINVAL, "Invalid name");
		for (uint32_t i = 0; i < vlen; i++) {
			const unsigned char *m = x + 12 * i;
			uint32_t mname = rd32(b, m), mtype = rd32(b, m + 4), off = rd32(b, m + 8);

			if (kflag)
				off &= 0xffffff;
			if (!name_offset_valid(b, mname)) {
				snprintf(msg, sizeof(msg),
					 "member %u Invalid member name_offset:%u", i, mname);
				return fail_type(e, t, -EINVAL, msg);
			}
			if (mname && !valid_identifier(b, mname)) {
				snprintf(msg, sizeof(msg), "member %s Invalid name",
					 kp_btf_name_of(b, mname));
				return fail_type(e, t, -EINVAL, msg);
			}
			if (!mtype || mtype > MAX_TYPE) {
				snprintf(msg, sizeof(msg), "member %s Invalid type_id",
					 kp_btf_name_of(b, mname));
				return fail_type(e, t, -EINVAL, msg);
			}
			if ((kind == K_UNION && off) || last > off) {
				snprintf(msg, sizeof(msg), "member %s Invalid member bits_offset",
					 kp_btf_name_of(b, mname));
				return fail_type(e, t, -EINVAL, msg);
			}
			if (roundup_bytes(off) > t->size_type) {
				snprintf(msg, sizeof(msg),
					 "member %s Member bits_offset exceeds its struct size",
					 kp_btf_name_of(b, mname));
				return fail_type(e, t, -EINVAL, msg);
			}
			last = off;
		}
		return need;
	}
	case K_ENUM:
	case K_ENUM64: { /* btf_enum_check_meta(), btf_enum64_check_meta() */
		uint32_t esz = kind == K_ENUM ? 8 : 12;

		need = vlen * esz;
		if ((uint64_t)vlen * esz > left) {
			snprintf(msg, sizeof(msg), "meta_left:%u meta_needed:%u", left, need);
			return fail_type(e, t, -EINVAL, msg);
		}
		if (t->size_type > 8 || !is_pow2(t->size_type))
			return fail_type(e, t, -EINVAL, "Unexpected size");
		if (t->name_off && !valid_identifier(b, t->name_off))
			return fail_type(e, t, -EINVAL, "Invalid name");
		for (uint32_t i = 0; i < vlen; i++) {
			uint32_t n = rd32(b, x + esz * i);

			if (!name_offset_valid(b, n))
				return kp_btf_fail(e, -EINVAL, "\tInvalid name_offset:%u", n);
			if (!n || !valid_identifier(b, n))
				return fail_type(e, t, -EINVAL, "Invalid name");
		}
		return need;
	}
	case K_FWD: /* btf_fwd_check_meta() */
		if (vlen)
			return fail_type(e, t, -EINVAL, "vlen != 0");
		if (t->size_type)
			return fail_type(e, t, -EINVAL, "type != 0");
		if (!t->name_off || !valid_identifier(b, t->name_off))
			return fail_type(e, t, -EINVAL, "Invalid name");
		return 0;
	case K_FUNC: /* btf_func_check_meta() */
		if (!t->name_off || !valid_identifier(b, t->name_off))
			return fail_type(e, t, -EINVAL, "Invalid name");
		if (vlen > 1)
			return fail_type(e, t, -EINVAL, "Invalid func linkage");
		if (kflag)
			return fail_type(e, t, -EINVAL, "Invalid btf_info kind_flag");
		return 0;
	case K_FUNC_PROTO: /* btf_func_proto_check_meta() */
		need = vlen * 8;
		if ((uint64_t)vlen * 8 > left) {
			snprintf(msg, sizeof(msg), "meta_left:%u meta_needed:%u", left, need);
			return fail_type(e, t, -EINVAL, msg);
		}
		if (t->name_off)
			return fail_type(e, t, -EINVAL, "Invalid name");
		if (kflag)
			return fail_type(e, t, -EINVAL, "Invalid btf_info kind_flag");
		return need;
	case K_VAR: { /* btf_var_check_meta() */
		uint32_t linkage;

		if (left < 4) {
			snprintf(msg, sizeof(msg), "meta_left:%u meta_needed:4", left);
			return fail_type(e, t, -EINVAL, msg);
		}
		if (vlen)
			return fail_type(e, t, -EINVAL, "vlen != 0");
		if (kflag)
			return fail_type(e, t, -EINVAL, "Invalid btf_info kind_flag");
		if (!t->name_off || !valid_identifier(b, t->name_off))
			return fail_type(e, t, -EINVAL, "Invalid name");
		if (!t->size_type || t->size_type > MAX_TYPE)
			return fail_type(e, t, -EINVAL, "Invalid type_id");
		linkage = rd32(b, x);
		if (linkage != 0 && linkage != 1)
			return fail_type(e, t, -EINVAL, "Linkage not supported");
		return 4;
	}
	case K_DATASEC: { /* btf_datasec_check_meta() */
		uint64_t last_end = 0, sum = 0;

		need = vlen * 12;
		if ((uint64_t)vlen * 12 > left) {
			snprintf(msg, sizeof(msg), "meta_left:%u meta_needed:%u", left, need);
			return fail_type(e, t, -EINVAL, msg);
		}
		if (!t->size_type)
			return fail_type(e, t, -EINVAL, "size == 0");
		if (kflag)
			return fail_type(e, t, -EINVAL, "Invalid btf_info kind_flag");
		if (!t->name_off || !valid_section(e, t->name_off))
			return fail_type(e, t, -EINVAL, "Invalid name");
		for (uint32_t i = 0; i < vlen; i++) {
			const unsigned char *s = x + 12 * i;
			uint32_t type = rd32(b, s), off = rd32(b, s + 4), size = rd32(b, s + 8);

			if (!type || type > MAX_TYPE)
				return fail_type(e, t, -EINVAL, "Invalid type_id");
			if (off < last_end || off >= t->size_type)
				return fail_type(e, t, -EINVAL, "Invalid offset");
			if (!size || size > t->size_type)
				return fail_type(e, t, -EINVAL, "Invalid size");
			last_end = (uint64_t)off + size;
			if (last_end > t->size_type)
				return fail_type(e, t, -EINVAL, "Invalid offset+size");
			sum += size;
		}
		if (t->size_type < sum)
			return fail_type(e, t, -EINVAL, "Invalid btf_info size");
		return need;
	}
	case K_FLOAT: /* btf_float_check_meta() */
		if (vlen)
			return fail_type(e, t, -EINVAL, "vlen != 0");
		if (kflag)
			return fail_type(e, t, -EINVAL, "Invalid btf_info kind_flag");
		if (t->size_type != 2 && t->size_type != 4 && t->size_type != 8 &&
		    t->size_type != 12 && t->size_type != 16)
			return fail_type(e, t, -EINVAL, "Invalid type_size");
		return 0;
	case K_DECL_TAG: { /* btf_decl_tag_check_meta() */
		const char *value;
		int32_t idx;

		if (left < 4) {
			snprintf(msg, sizeof(msg), "meta_left:%u meta_needed:4", left);
			return fail_type(e, t, -EINVAL, msg);
		}
		value = kp_btf_str_by_offset(b, t->name_off);
		if (!value || !value[0])
			return fail_type(e, t, -EINVAL, "Invalid value");
		if (vlen)
			return fail_type(e, t, -EINVAL, "vlen != 0");
		if (kflag && !r->layout_header)
			return fail_type(e, t, -EINVAL, "Invalid btf_info kind_flag");
		idx = (int32_t)rd32(b, x);
		if (idx < -1)
			return fail_type(e, t, -EINVAL, "Invalid component_idx");
		return 4;
	}
	}
	return kp_btf_fail(e, -EINVAL, "[%u] Invalid kind:%u", e->log_type_id, kind);
}

/* btf_check_meta(): the bytes type @t takes, or < 0 */
static long check_meta(struct env *e, const unsigned char *p, uint32_t left)
{
	struct ty t;
	long n;
	unsigned kind;

	if (left < TYPE_SIZE)
		return kp_btf_fail(e, -EINVAL, "[%u] meta_left:%u meta_needed:%u", e->log_type_id,
				   left, TYPE_SIZE);
	ty_at(e->btf, p, &t);
	left -= TYPE_SIZE;
	if (!e->r->layout_header && (t.info & ~INFO_MASK_OLD))
		return kp_btf_fail(e, -EINVAL, "[%u] Invalid btf_info:%x", e->log_type_id, t.info);
	kind = kind_of(e->r, t.info);
	if (kind > K_MAX || kind == K_UNKN)
		return kp_btf_fail(e, -EINVAL, "[%u] Invalid kind:%u", e->log_type_id, kind);
	if (!name_offset_valid(e->btf, t.name_off))
		return kp_btf_fail(e, -EINVAL, "[%u] Invalid name_offset:%u", e->log_type_id,
				   t.name_off);
	n = check_kind(e, &t, left);
	return n < 0 ? n : (long)TYPE_SIZE + n;
}

static int add_type(struct kp_btf *b, uint32_t off, uint32_t *cap)
{
	if (b->nr_types == *cap) {
		uint32_t ncap = *cap ? *cap * 2 : 256;
		uint32_t *n = realloc(b->types, (size_t)ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		b->types = n;
		*cap = ncap;
	}
	b->types[b->nr_types++] = off;
	return 0;
}

/* btf_check_all_metas() */
int kp_btf_check_all_metas(struct env *e)
{
	struct kp_btf *b = e->btf;
	uint32_t cur = b->hdr_len + b->type_off, end = cur + b->type_len, cap = 0;

	e->log_type_id = b->base ? b->start_id : 1;
	if (!b->base && add_type(b, 0, &cap) < 0) /* void, lazily in btf_add_type() */
		return -ENOMEM;
	while (cur < end) {
		long n = check_meta(e, b->data + cur, end - cur);

		if (n < 0)
			return (int)n;
		if (add_type(b, cur, &cap) < 0)
			return -ENOMEM;
		cur += (uint32_t)n;
		e->log_type_id++;
	}
	return 0;
}
