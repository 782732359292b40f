/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * BTF (BPF Type Format) as the kernel's kernel/bpf/btf.c checks it when a module comes:
 * btf_parse_base() for the vmlinux BTF (and a module's distilled .BTF.base), and what
 * btf_parse_module() does with a module's split .BTF: btf_parse_hdr(), btf_parse_str_sec(),
 * btf_check_all_metas() (every kind's check_meta), the modifier chain check and, with a
 * .BTF.base, btf_relocate() (tools/lib/bpf/btf_relocate.c). btf_parse_module() runs no
 * resolve pass (btf_check_all_types()), so neither does this model. Data only: which
 * kernel behaves how is the caller's struct kp_btf_rules.
 */
#ifndef KP_BTF_H
#define KP_BTF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What differs between the kernels' verifiers (lib/kernel/profile.c says which has what). */
struct kp_btf_rules {
	/*
	 * The 7.2 tree: struct btf_header has layout_off/layout_len (32 bytes), the kind is 7
	 * bits and vlen 24 bits of info, btf_check_modifier_chain_length() replaces
	 * btf_check_type_tags() (no "Type tags don't precede modifiers"), and a 32-byte header
	 * need not end with the string section. Without it: the 6.1/6.12 layout.
	 */
	bool layout_header;
	/* btf_parse_module() takes a .BTF.base and calls btf_relocate() (v6.11+). */
	bool relocate;
	/* btf_name_valid_section(): any printable DATASEC name (the 6.12 tree; 6.1: identifier) */
	bool datasec_printable;
};

/* One parsed BTF: vmlinux's, a distilled base, or a module's split BTF over a base. */
struct kp_btf {
	const unsigned char *data; /* borrowed: must outlive the struct */
	uint32_t size;
	bool swap; /* the other byte order than the host's */
	uint32_t hdr_len, type_off, type_len, str_off, str_len, layout_off, layout_len;
	const char *strings;
	uint32_t *types;     /* offset of each own type in data (index 0: void for a base) */
	bool types_borrowed; /* @types is not the struct's (kp_btf_base_from_index()) */
	uint32_t nr_types;   /* own types, void included for a base */
	uint32_t start_id;   /* base's btf_nr_types(); 0 for a base */
	uint32_t start_str_off;
	const struct kp_btf *base;
};

/* The kernel's verdict, for reports: the errno and the verifier's log line. */
struct kp_btf_verdict {
	int err;       /* 0 or a negative errno (-EINVAL, -ENOTSUPP = -524, -E2BIG, -ELOOP, ...) */
	char why[200]; /* the verifier's reason, as its log says it where it says one */
};

#define KP_ENOTSUPP 524 /* the kernel's internal ENOTSUPP (include/linux/errno.h) */

/*
 * btf_parse_base(): @data as a base BTF (vmlinux's, or a distilled .BTF.base). @b borrows
 * @data. Returns 0, a negative errno with @v->why set, or -ENOMEM (why empty).
 */
int kp_btf_parse_base(struct kp_btf *b, const unsigned char *data, size_t size,
		      const struct kp_btf_rules *r, struct kp_btf_verdict *v);
void kp_btf_release(struct kp_btf *b);
/*
 * A base that kp_btf_parse_base() accepted before with the same @data and @r, from the
 * index it made (@types, @nr_types: b->types and b->nr_types then; borrowed, must outlive
 * @b): the header and string section are read again, each type offset bounds-checked, the
 * types not verified again (the base cache, kernel/vmlinux-btf-cached.c, keys the index by
 * the bytes and the rules). 0, or -1 when they do not fit @data.
 */
int kp_btf_base_from_index(struct kp_btf *b, const unsigned char *data, size_t size,
			   const struct kp_btf_rules *r, const uint32_t *types, uint32_t nr_types);

/*
 * btf_parse_module() of a module's .BTF (@btf) and .BTF.base (@base, NULL when absent or
 * the kernel does not read it) against @vmlinux. Fills @v (err 0: the module's BTF is
 * accepted). Returns 0, or -1 when out of memory.
 */
int kp_btf_check_module(const struct kp_btf *vmlinux, const unsigned char *btf, size_t btf_len,
			const unsigned char *base, size_t base_len, const struct kp_btf_rules *r,
			struct kp_btf_verdict *v);

/* btf_nr_types(): the ids the BTF (with its bases) defines, void included. */
uint32_t kp_btf_nr_types(const struct kp_btf *b);

#endif
