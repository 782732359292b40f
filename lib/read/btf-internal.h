/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the files of the BTF model share (btf.c: the header, string section and modifier
 * chains of btf_parse_base()/btf_parse_module(); btf-meta.c: btf_check_all_metas();
 * btf-relocate.c: btf_relocate()): the kinds, the verifier's state, one struct btf_type as
 * the kernel reads it, and lookups by type id and string offset. Private to lib/read/.
 */
#ifndef KP_READ_BTF_INTERNAL_H
#define KP_READ_BTF_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "btf.h"

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

#define MAX_NAME_OFFSET 0x00ffffffu
#define TYPE_SIZE	12u

struct env {
	struct kp_btf *btf;
	const struct kp_btf_rules *r;
	struct kp_btf_verdict *v;
	uint32_t log_type_id;
	int swap; /* -1: from the magic (vmlinux); else the byte order the kernel reads in */
};

static inline uint32_t rd32(const struct kp_btf *b, const unsigned char *p)
{
	uint32_t x;

	memcpy(&x, p, 4);
	return b->swap ? __builtin_bswap32(x) : x;
}

static inline uint16_t rd16(const struct kp_btf *b, const unsigned char *p)
{
	uint16_t x;

	memcpy(&x, p, 2);
	return b->swap ? __builtin_bswap16(x) : x;
}

/* The verifier's log line and errno in @e->v; returns @err. */
__attribute__((format(printf, 3, 4))) int kp_btf_fail(struct env *e, int err, const char *fmt, ...);

/* One struct btf_type as the kernel reads it. */
struct ty {
	const unsigned char *p;
	uint32_t name_off, info, size_type;
};

static inline void ty_at(const struct kp_btf *b, const unsigned char *p, struct ty *t)
{
	t->p = p;
	t->name_off = rd32(b, p);
	t->info = rd32(b, p + 4);
	t->size_type = rd32(b, p + 8);
}

static inline unsigned kind_of(const struct kp_btf_rules *r, uint32_t info)
{
	return (info >> 24) & (r->layout_header ? 0x7fu : 0x1fu);
}

static inline uint32_t vlen_of(const struct kp_btf_rules *r, uint32_t info)
{
	return info & (r->layout_header ? 0xffffffu : 0xffffu);
}

static inline bool kflag_of(uint32_t info)
{
	return info >> 31;
}

/* btf_type_by_id(): false past the last type */
bool kp_btf_type_by_id(const struct kp_btf *b, uint32_t id, struct ty *t);
/* btf_str_by_offset(): NULL past the string sections */
const char *kp_btf_str_by_offset(const struct kp_btf *b, uint32_t off);
/* a type's name for the verifier's log: "(anon)", "(invalid-name-offset)" or the name */
const char *kp_btf_name_of(const struct kp_btf *b, uint32_t off);

/* btf_check_all_metas() (btf-meta.c): every type's check_meta, each type's offset indexed */
int kp_btf_check_all_metas(struct env *e);
/* btf_relocate() (btf-relocate.c) of a module's split BTF over its distilled base */
int kp_btf_relocate(const struct kp_btf *btf, const struct kp_btf *vmlinux,
		    const struct kp_btf_rules *rules, struct kp_btf_verdict *v);

#endif
