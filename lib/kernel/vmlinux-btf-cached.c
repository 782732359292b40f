// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The kernel's BTF through the base cache (vmlinux-btf-cached.h). Payload:
 *   magic "KPBTFIX1", type count, BTF length, CRC-32 of the index, then the index (the offset
 *   of each type in the BTF, as kp_btf_parse_base() made it), host byte order.
 */
#include "vmlinux-btf-cached.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "read/btf.h"
#include "file/rootfs.h"
#include "util/fs-trust.h"

#define MAGIC	 "KPBTFIX1"
#define HEAD_LEN 20

/* The entry's index checked against @len: the types (borrowed from @m) and their count. */
static const uint32_t *index_of(const struct kp_base_map *m, size_t len, uint32_t *n)
{
	uint32_t nr, blen, crc;

	if (m->len < HEAD_LEN || memcmp(m->data, MAGIC, 8))
		return NULL;
	memcpy(&nr, m->data + 8, 4);
	memcpy(&blen, m->data + 12, 4);
	memcpy(&crc, m->data + 16, 4);
	if (blen != len || !nr || m->len != HEAD_LEN + (size_t)nr * 4 ||
	    crc != (uint32_t)crc32_z(0, m->data + HEAD_LEN, (size_t)nr * 4))
		return NULL;
	*n = nr;
	/* HEAD_LEN keeps it 4-byte aligned in a page-aligned mapping (and its header) */
	return (const uint32_t *)(const void *)(m->data + HEAD_LEN);
}

/* A hit: @f's BTF from the index; 0, or -1 (the index does not fit: parse instead). */
static int from_index(struct kp_kernel_facts *f, const unsigned char *data, size_t len,
		      const char *path, struct kp_base_map *m)
{
	struct kp_btf_rules rules;
	const uint32_t *types;
	struct kp_btf *b;
	uint32_t nr;

	types = index_of(m, len, &nr);
	kp_profile_btf_rules(&f->profile, &rules);
	b = types ? kp_arena_alloc(&f->arena, sizeof(*b)) : NULL;
	if (!b || kp_btf_base_from_index(b, data, len, &rules, types, nr) < 0)
		return -1;
	f->vmlinux_btf = b;
	f->vmlinux_btf_source = kp_arena_strdup(&f->arena, path);
	if (!f->vmlinux_btf_source) {
		f->vmlinux_btf = NULL;
		kp_btf_release(b);
		return -1;
	}
	f->vmlinux_btf_map = *m; /* the index lives in the mapping: released with @f */
	memset(m, 0, sizeof(*m));
	return 0;
}

/*
 * The boot's id from @root's proc/sys/kernel/random/boot_id into @buf, only when that file is
 * the kernel's own (procfs: nobody can write it). 0, or -1.
 */
static int boot_id(const char *root, char *buf, size_t size)
{
	struct kp_base_input in = { .fd = -1 };
	struct kp_err why = { 0 };
	char *path = kp_root_path(root, "proc/sys/kernel/random/boot_id");
	ssize_t n = -1;
	size_t i;

	if (path && kp_base_input_open(&in, path, &why) == 0 && in.fs_class == KP_FS_KERNEL)
		n = pread(in.fd, buf, size - 1, 0);
	kp_base_input_close(&in);
	free(path);
	if (n < 32)
		return -1;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	for (i = 0; buf[i]; i++)
		if (!strchr("0123456789abcdef-", buf[i]))
			return -1;
	return i >= 32 ? 0 : -1;
}

static void store(struct kp_base_cache *cache, const struct kp_base_key *key,
		  const struct kp_btf *b, size_t len)
{
	size_t n = (size_t)b->nr_types * 4;
	unsigned char *p = malloc(HEAD_LEN + n);
	uint32_t blen = (uint32_t)len, crc;

	if (!p)
		return;
	memcpy(p, MAGIC, 8);
	memcpy(p + 8, &b->nr_types, 4);
	memcpy(p + 12, &blen, 4);
	memcpy(p + HEAD_LEN, b->types, n);
	crc = (uint32_t)crc32_z(0, p + HEAD_LEN, n);
	memcpy(p + 16, &crc, 4);
	kp_base_cache_put(cache, key, p, HEAD_LEN + n);
	free(p);
}

int kp_facts_vmlinux_btf_cached(struct kp_kernel_facts *f, const unsigned char *data, size_t len,
				const char *path, struct kp_base_cache *cache, const char *root)
{
	char boot[64];
	struct kp_base_input in = { .fd = -1 }, *inp = &in;
	struct kp_btf_rules rules;
	struct kp_err why = { 0 };
	struct kp_base_key key;
	struct kp_base_map m = { 0 };
	char kind[16];
	int r;

	if (!cache || !f->btf_modules || !data || len > UINT32_MAX)
		return kp_facts_vmlinux_btf(f, data, len, path, NULL);
	kp_profile_btf_rules(&f->profile, &rules);
	snprintf(kind, sizeof(kind), "btf-%d%d%d", rules.layout_header, rules.relocate,
		 rules.datasec_printable);
	/*
	 * Read just before this open: a change in between would make the state recent (not
	 * settled, not trusted). Any other file (untrusted, unsettled) is not cached.
	 */
	if (kp_base_input_open(&in, path, &why) < 0) {
		kp_base_input_close(&in);
		return kp_facts_vmlinux_btf(f, data, len, path, NULL);
	}
	if (!(in.fs_class == KP_FS_KERNEL && boot_id(root, boot, sizeof(boot)) == 0 &&
	      kp_base_input_vouch(&in, boot) == 0) &&
	    !in.trusted) {
		kp_base_input_close(&in);
		return kp_facts_vmlinux_btf(f, data, len, path, NULL);
	}
	if (kp_base_key_make(&key, kind, &inp, 1, 0, &why) < 0) {
		kp_base_input_close(&in);
		return kp_facts_vmlinux_btf(f, data, len, path, NULL);
	}
	kp_base_input_close(&in);
	if (kp_base_cache_get(cache, &key, &m) == 1) {
		if (from_index(f, data, len, path, &m) == 0)
			return 0;
		kp_base_map_release(&m);
		kp_base_cache_drop(cache, &key);
	}
	kp_base_cache_note_miss(cache);
	r = kp_facts_vmlinux_btf(f, data, len, path, NULL);
	if (r == 0 && f->vmlinux_btf)
		store(cache, &key, f->vmlinux_btf, len);
	return r;
}
