// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The kernel's module BTF checks (kernel/bpf/btf.c, tools/lib/bpf/btf_relocate.c of the
 * 6.1, 6.12 and 7.2 trees), function by function; see btf.h for what is modelled.
 */
#include "btf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	K_UNKN,
	K_INT,
	K_PTR,
	K_ARRAY,
	K_STRUCT,
	K_UNION,
	K_ENUM,
	K_FWD,
	K_TYPEDEF,
	K_VOLATILE,
	K_CONST,
	K_RESTRICT,
	K_FUNC,
	K_FUNC_PROTO,
	K_VAR,
	K_DATASEC,
	K_FLOAT,
	K_DECL_TAG,
	K_TYPE_TAG,
	K_ENUM64,
	K_MAX = K_ENUM64,
};

#define BTF_MAGIC	0xeb9f
#define MAX_TYPE	0x000fffffu
#define MAX_NAME_OFFSET 0x00ffffffu
#define KSYM_NAME_LEN	512
#define INFO_MASK_OLD	0x9f00ffffu /* BTF_INFO_MASK before the 7.2 layout */
#define TYPE_SIZE	12u
#define EMBEDDED	0xffffffffu /* BTF_IS_EMBEDDED */

static const char *const kind_str[] = {
	"UNKNOWN", "INT",     "PTR",	  "ARRAY",    "STRUCT",	  "UNION",  "ENUM",
	"FWD",	   "TYPEDEF", "VOLATILE", "CONST",    "RESTRICT", "FUNC",   "FUNC_PROTO",
	"VAR",	   "DATASEC", "FLOAT",	  "DECL_TAG", "TYPE_TAG", "ENUM64",
};

struct env {
	struct kp_btf *btf;
	const struct kp_btf_rules *r;
	struct kp_btf_verdict *v;
	uint32_t log_type_id;
	int swap; /* -1: from the magic (vmlinux); else the byte order the kernel reads in */
};

static uint32_t rd32(const struct kp_btf *b, const unsigned char *p)
{
	uint32_t x;

	memcpy(&x, p, 4);
	return b->swap ? __builtin_bswap32(x) : x;
}

static uint16_t rd16(const struct kp_btf *b, const unsigned char *p)
{
	uint16_t x;

	memcpy(&x, p, 2);
	return b->swap ? __builtin_bswap16(x) : x;
}

static __attribute__((format(printf, 3, 4))) int fail(struct env *e, int err, const char *fmt, ...)
{
	va_list ap;

	e->v->err = err;
	va_start(ap, fmt);
	vsnprintf(e->v->why, sizeof(e->v->why), fmt, ap);
	va_end(ap);
	return err;
}

/* One struct btf_type as the kernel reads it. */
struct ty {
	const unsigned char *p;
	uint32_t name_off, info, size_type;
};

static void ty_at(const struct kp_btf *b, const unsigned char *p, struct ty *t)
{
	t->p = p;
	t->name_off = rd32(b, p);
	t->info = rd32(b, p + 4);
	t->size_type = rd32(b, p + 8);
}

static unsigned kind_of(const struct kp_btf_rules *r, uint32_t info)
{
	return (info >> 24) & (r->layout_header ? 0x7fu : 0x1fu);
}

static uint32_t vlen_of(const struct kp_btf_rules *r, uint32_t info)
{
	return info & (r->layout_header ? 0xffffffu : 0xffffu);
}

static bool kflag_of(uint32_t info)
{
	return info >> 31;
}

uint32_t kp_btf_nr_types(const struct kp_btf *b)
{
	return b->start_id + b->nr_types;
}

/* btf_type_by_id() */
static bool type_by_id(const struct kp_btf *b, uint32_t id, struct ty *t)
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

/* btf_name_offset_valid() */
static bool name_offset_valid(const struct kp_btf *b, uint32_t off)
{
	if (off > MAX_NAME_OFFSET)
		return false;
	while (off < b->start_str_off)
		b = b->base;
	return off - b->start_str_off < b->str_len;
}

/* btf_str_by_offset() */
static const char *str_by_offset(const struct kp_btf *b, uint32_t off)
{
	while (off < b->start_str_off)
		b = b->base;
	off -= b->start_str_off;
	return off < b->str_len ? b->strings + off : NULL;
}

static const char *name_of(const struct kp_btf *b, uint32_t off)
{
	const char *s;

	if (!off)
		return "(anon)";
	s = str_by_offset(b, off);
	return s ? s : "(invalid-name-offset)";
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
	const char *src = str_by_offset(b, off), *limit;

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
	const char *src = str_by_offset(e->btf, off), *limit;

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
	return fail(e, err, "[%u] %s %s %s", e->log_type_id, kind_str[kind_of(e->r, t->info)],
		    name_of(e->btf, t->name_off), msg);
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
			value = str_by_offset(b, t->name_off);
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
					 name_of(b, mname));
				return fail_type(e, t, -EINVAL, msg);
			}
			if (!mtype || mtype > MAX_TYPE) {
				snprintf(msg, sizeof(msg), "member %s Invalid type_id",
					 name_of(b, mname));
				return fail_type(e, t, -EINVAL, msg);
			}
			if ((kind == K_UNION && off) || last > off) {
				snprintf(msg, sizeof(msg), "member %s Invalid member bits_offset",
					 name_of(b, mname));
				return fail_type(e, t, -EINVAL, msg);
			}
			if (roundup_bytes(off) > t->size_type) {
				snprintf(msg, sizeof(msg),
					 "member %s Member bits_offset exceeds its struct size",
					 name_of(b, mname));
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
				return fail(e, -EINVAL, "\tInvalid name_offset:%u", n);
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
		value = str_by_offset(b, t->name_off);
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
	return fail(e, -EINVAL, "[%u] Invalid kind:%u", e->log_type_id, kind);
}

/* btf_check_meta(): the bytes type @t takes, or < 0 */
static long check_meta(struct env *e, const unsigned char *p, uint32_t left)
{
	struct ty t;
	long n;
	unsigned kind;

	if (left < TYPE_SIZE)
		return fail(e, -EINVAL, "[%u] meta_left:%u meta_needed:%u", e->log_type_id, left,
			    TYPE_SIZE);
	ty_at(e->btf, p, &t);
	left -= TYPE_SIZE;
	if (!e->r->layout_header && (t.info & ~INFO_MASK_OLD))
		return fail(e, -EINVAL, "[%u] Invalid btf_info:%x", e->log_type_id, t.info);
	kind = kind_of(e->r, t.info);
	if (kind > K_MAX || kind == K_UNKN)
		return fail(e, -EINVAL, "[%u] Invalid kind:%u", e->log_type_id, kind);
	if (!name_offset_valid(e->btf, t.name_off))
		return fail(e, -EINVAL, "[%u] Invalid name_offset:%u", e->log_type_id, t.name_off);
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
static int check_all_metas(struct env *e)
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

		if (!type_by_id(b, i, &t))
			return fail(e, -EINVAL, "type id %u past the last type", i);
		if (!is_modifier(kind_of(e->r, t.info)))
			continue;
		in_tags = kind_of(e->r, t.info) == K_TYPE_TAG;
		while (t.p && is_modifier(kind_of(e->r, t.info))) {
			if (!limit--)
				return fail(e, -ELOOP, "Max chain length or cycle detected");
			if (!e->r->layout_header) {
				if (kind_of(e->r, t.info) == K_TYPE_TAG) {
					if (!in_tags)
						return fail(e, -EINVAL,
							    "Type tags don't precede modifiers");
				} else {
					in_tags = false;
				}
			}
			if ((int64_t)cur <= good)
				break;
			cur = t.size_type;
			if (!type_by_id(b, cur, &t))
				return fail(e, -EINVAL,
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
		return fail(e, -EINVAL, "hdr_len not found");
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
		return fail(e, -EINVAL, "btf_header not found");
	for (uint32_t i = hsz; i < b->hdr_len; i++)
		if (b->data[i])
			return fail(e, -E2BIG, "Unsupported btf_header");
	copy = b->hdr_len < hsz ? b->hdr_len : hsz;
	memcpy(h, b->data, copy);
	if (rd16(b, h) != BTF_MAGIC)
		return fail(e, -EINVAL, "Invalid magic");
	if (h[2] != 1)
		return fail(e, -KP_ENOTSUPP, "Unsupported version");
	if (h[3])
		return fail(e, -KP_ENOTSUPP, "Unsupported flags");
	b->type_off = rd32(b, h + 8);
	b->type_len = rd32(b, h + 12);
	b->str_off = rd32(b, h + 16);
	b->str_len = rd32(b, h + 20);
	b->layout_off = rd32(b, h + 24);
	b->layout_len = rd32(b, h + 28);
	if (!b->base && b->size == b->hdr_len)
		return fail(e, -EINVAL, "No data");
	secs[0] = (struct sec){ b->type_off, b->type_len };
	secs[1] = (struct sec){ b->str_off, b->str_len };
	secs[2] = (struct sec){ b->layout_off, b->layout_len };
	nsecs = e->r->layout_header && b->hdr_len >= 32 && b->layout_len ? 3 : 2;
	qsort(secs, nsecs, sizeof(secs[0]), sec_cmp);
	expected = b->size - b->hdr_len;
	for (unsigned i = 0; i < nsecs; i++) {
		if (expected < secs[i].off)
			return fail(e, -EINVAL, "Invalid section offset");
		if (total < secs[i].off)
			return fail(e, -EINVAL, "Unsupported section found");
		if (total > secs[i].off)
			return fail(e, -EINVAL, "Section overlap found");
		if (expected - total < secs[i].len)
			return fail(e, -EINVAL, "Total section length too long");
		total += secs[i].len;
	}
	if (expected != total)
		return fail(e, -EINVAL, "Unsupported section found");
	return 0;
}

/* btf_parse_str_sec() */
static int parse_str_sec(struct env *e)
{
	struct kp_btf *b = e->btf;
	uint32_t start = b->hdr_len + b->str_off, end = start + b->str_len;

	if ((!e->r->layout_header || b->hdr_len < 32) && end != b->size)
		return fail(e, -EINVAL, "String section is not at the end");
	b->strings = (const char *)b->data + start;
	if (b->base && !b->str_len)
		return 0;
	if (!b->str_len || b->str_len - 1 > MAX_NAME_OFFSET || b->data[end - 1])
		return fail(e, -EINVAL, "Invalid string section");
	if (!b->base && b->strings[0])
		return fail(e, -EINVAL, "Invalid string section");
	return 0;
}

/*
 * The layout section (7.2 tree, btf_parse_layout_sec()) is parsed only by btf_parse() of
 * user BTF, not by btf_parse_base()/btf_parse_module(): nothing to check here.
 */
static int parse_common(struct env *e, uint32_t chain_start)
{
	int err;

	if ((err = parse_hdr(e)) || (err = parse_str_sec(e)) || (err = check_all_metas(e)))
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
		return fail(&e, -E2BIG, "BTF larger than 4 GiB");
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

/* ---- btf_relocate() (tools/lib/bpf/btf_relocate.c, shared with the kernel from 6.11) ---- */

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
		if (!type_by_id(r->btf, next, &t)) {
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

		type_by_id(r->dist, i, &t);
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

		type_by_id(r->dist, id, &t);
		info[id].name = str_by_offset(r->dist, t.name_off);
		if (!info[id].name)
			info[id].name = "";
		info[id].id = id;
		info[id].size = t.size_type & 0x7fffffff;
		info[id].needs_size = true;
	}
	qsort(info, r->nr_dist, sizeof(*info), name_cmp);
	for (uint32_t id = r->nr_dist; id < r->nr_dist + r->nr_split; id++) {
		struct ty t;

		type_by_id(r->btf, id, &t);
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

		type_by_id(r->base, id, &t);
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

		type_by_id(r->base, id, &bt);
		if (!bt.name_off)
			continue;
		bk = kind_of(r->r, bt.info);
		bi.id = id;
		bi.name = str_by_offset(r->base, bt.name_off);
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
			type_by_id(r->dist, di->id, &dt);
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
		type_by_id(r->dist, id, &t);
		name = str_by_offset(r->dist, t.name_off);
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

	type_by_id(b, id, &t);
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
			      name_of(b, off), off);
			return -ENOENT;
		}
	}
	return 0;
}

/* btf_relocate() */
static int relocate(const struct kp_btf *btf, const struct kp_btf *vmlinux,
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
		fail(&e, -E2BIG, "BTF larger than 4 GiB");
		goto out;
	}
	mod.data = btf;
	mod.size = (uint32_t)btf_len;
	mod.base = use_dist ? &dist : vmlinux;
	mod.start_id = kp_btf_nr_types(mod.base);
	mod.start_str_off = mod.base->str_len;
	err = parse_common(&e, 0);
	if (!err && use_dist)
		err = relocate(&mod, vmlinux, r, v);
out:
	kp_btf_release(&mod);
	kp_btf_release(&dist);
	if (v->err == -ENOMEM || (!v->err && err == -ENOMEM))
		return -1;
	return 0;
}
