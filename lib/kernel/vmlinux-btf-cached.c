// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The kernel's BTF through the base cache (vmlinux-btf-cached.h). Payload, host byte order:
 *   magic "KPBTFIX4", type count, BTF length, CRC-32 of bytes 32 to the index's end, CRC-32
 *   of the BTF, flags (COPY: the BTF bytes follow), CRC-32 of bytes 0 to 28 and 32 to 128
 *   (the header alone: kp_vmlinux_btf_peek_cached() reads nothing else); the SHA-256 of the BTF,
 *   the module BTF memo's scope made from it (kernel/btf-judge.h) and the KP_READER_ID it
 *   was made with (16 bytes), 16 bytes zero: made once, with the entry, so that a warm hook
 *   hashes nothing (nor starts OpenSSL, ~1.5 ms); the index (the offset of each type in the
 *   BTF, as kp_btf_parse_base() made it); with COPY, at the next 8-byte boundary, the BTF.
 */
#include "vmlinux-btf-cached.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include <openssl/evp.h>

#include "btf-judge.h"
#include "cache/btf-memo.h"
#include "file/rootfs.h"
#include "read/btf.h"
#include "read/reader-id.h"
#include "util/fs-trust.h"
#include "util/io.h"

#define MAGIC	  "KPBTFIX4"
#define HEAD_LEN  128
#define SHA_OFF	  32
#define SCOPE_OFF 64
#define RID_OFF	  96
#define F_COPY	  1u

/* What an entry holds, checked against its length and CRCs. */
struct entry {
	const uint32_t *types; /* borrowed from the mapping */
	uint32_t nr;
	uint32_t blen;
	const unsigned char *copy;   /* the BTF bytes, checked; NULL without COPY */
	const unsigned char *sha256; /* of the BTF bytes (borrowed from the mapping) */
	const unsigned char *scope;  /* its memo scope, NULL: made by another build */
};

static size_t copy_off(uint32_t nr)
{
	return HEAD_LEN + (((size_t)nr * 4 + 7) & ~(size_t)7);
}

/* The CRC-32 of an entry's header but its own 4 bytes (28 to 32). */
static uint32_t head_crc(const unsigned char *p)
{
	return (uint32_t)crc32_z(crc32_z(0, p, 28), p + SHA_OFF, HEAD_LEN - SHA_OFF);
}

/* The entry in @m, checked (header, index CRC, and the copy's CRC when it has one). 0, or -1. */
static int entry_of(const struct kp_base_map *m, struct entry *e)
{
	uint32_t crc, bcrc, flags;

	memset(e, 0, sizeof(*e));
	if (m->len < HEAD_LEN || memcmp(m->data, MAGIC, 8))
		return -1;
	memcpy(&e->nr, m->data + 8, 4);
	memcpy(&e->blen, m->data + 12, 4);
	memcpy(&crc, m->data + 16, 4);
	memcpy(&bcrc, m->data + 20, 4);
	memcpy(&flags, m->data + 24, 4);
	if (!e->nr || !e->blen || (flags & ~F_COPY) || e->nr > (m->len - HEAD_LEN) / 4 ||
	    ((flags & F_COPY) && e->blen > m->len) ||
	    m->len != (flags & F_COPY ? copy_off(e->nr) + e->blen : HEAD_LEN + (size_t)e->nr * 4) ||
	    crc != (uint32_t)crc32_z(0, m->data + SHA_OFF, HEAD_LEN - SHA_OFF + (size_t)e->nr * 4))
		return -1;
	/* HEAD_LEN keeps it 4-byte aligned in a page-aligned mapping (and its header) */
	e->types = (const uint32_t *)(const void *)(m->data + HEAD_LEN);
	e->sha256 = m->data + SHA_OFF;
	e->scope = memcmp(m->data + RID_OFF, KP_READER_ID, 16) ? NULL : m->data + SCOPE_OFF;
	if (flags & F_COPY) {
		/* the bytes the checks will read: a damaged copy must not change a verdict */
		e->copy = m->data + copy_off(e->nr);
		if (bcrc != (uint32_t)crc32_z(0, e->copy, e->blen))
			return -1;
	}
	return 0;
}

/* A hit: @f's BTF from the index; 0, or -1 (the index does not fit: parse instead). */
static int from_index(struct kp_kernel_facts *f, const unsigned char *data, size_t len,
		      const char *path, const struct entry *e, struct kp_base_map *m)
{
	struct kp_btf_rules rules;
	struct kp_btf *b;

	if (e->blen != len)
		return -1;
	kp_profile_btf_rules(&f->profile, &rules);
	b = kp_arena_alloc(&f->arena, sizeof(*b));
	if (!b || kp_btf_base_from_index(b, data, len, &rules, e->types, e->nr) < 0)
		return -1;
	f->vmlinux_btf = b;
	f->vmlinux_btf_source = kp_arena_strdup(&f->arena, path);
	if (!f->vmlinux_btf_source) {
		f->vmlinux_btf = NULL;
		kp_btf_release(b);
		return -1;
	}
	f->vmlinux_btf_map = *m; /* the index (and a copy) live in the mapping: released with @f */
	memset(m, 0, sizeof(*m));
	return 0;
}

static bool raw_btf(const unsigned char *p, size_t len)
{
	return len >= 8 && ((p[0] == 0x9f && p[1] == 0xeb) || (p[0] == 0xeb && p[1] == 0x9f));
}

/*
 * @in's first @len bytes mapped read-only into @out, when they are raw BTF and @in is the
 * running kernel's file or a trusted one whose state has not moved since it was opened.
 * /sys/kernel/btf/vmlinux can be mapped since v6.16 (kernel/bpf/sysfs_btf.c:
 * btf_sysfs_vmlinux_mmap(), MAP_PRIVATE and read-only only); before, the bin_attribute has
 * no .mmap and kernfs_fop_mmap() fails with ENODEV. A trusted regular file truncated under
 * the mapping by its owner is a SIGBUS: the hook answers "cannot decide" (cmd-hook.c). 0, -1.
 */
static int map_source(const struct kp_base_input *in, size_t len, struct kp_vmlinux_btf *out)
{
	struct stat st;
	void *p;

	if (!len || (in->fs_class != KP_FS_KERNEL && (off_t)len != in->st.st_size))
		return -1;
	p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, in->fd, 0);
	if (p == MAP_FAILED)
		return -1;
	if (!raw_btf(p, len) || (in->fs_class != KP_FS_KERNEL &&
				 (fstat(in->fd, &st) < 0 || st.st_size != in->st.st_size ||
				  st.st_mtim.tv_sec != in->st.st_mtim.tv_sec ||
				  st.st_mtim.tv_nsec != in->st.st_mtim.tv_nsec ||
				  st.st_ctim.tv_sec != in->st.st_ctim.tv_sec ||
				  st.st_ctim.tv_nsec != in->st.st_ctim.tv_nsec))) {
		munmap(p, len);
		return -1;
	}
	kp_vmlinux_btf_release(out);
	out->data = p;
	out->len = len;
	out->map = p;
	out->maplen = len;
	return 0;
}

/* The entry needs a copy of the BTF: its source cannot be mapped (6.12's sysfs, ELF, xz). */
static bool needs_copy(const struct kp_base_input *in, const unsigned char *data, size_t len)
{
	struct kp_vmlinux_btf probe = { 0 };
	bool copy = !raw_btf(data, len) || map_source(in, len, &probe) < 0;

	kp_vmlinux_btf_release(&probe);
	return copy;
}

/* The entry for @b made and stored; 0 with @scope (NULL: not wanted) the memo's scope, or -1. */
static int store(struct kp_base_cache *cache, const struct kp_base_key *key, const struct kp_btf *b,
		 const struct kp_btf_rules *rules, const unsigned char *data, size_t len, bool copy,
		 unsigned char *scope)
{
	size_t n = (size_t)b->nr_types * 4,
	       total = copy ? copy_off(b->nr_types) + len : HEAD_LEN + n;
	unsigned char *p = calloc(1, total);
	uint32_t blen = (uint32_t)len, flags = copy ? F_COPY : 0, crc;
	unsigned dlen = 0;

	if (!p)
		return -1;
	memcpy(p, MAGIC, 8);
	memcpy(p + 8, &b->nr_types, 4);
	memcpy(p + 12, &blen, 4);
	memcpy(p + HEAD_LEN, b->types, n);
	/* the memo's scope needs it: an entry without it is not stored (parsed next time) */
	if (EVP_Digest(data, len, p + SHA_OFF, &dlen, EVP_sha256(), NULL) != 1 || dlen != 32 ||
	    kp_btf_judge_scope_of(p + SHA_OFF, rules, p + SCOPE_OFF) < 0) {
		free(p);
		return -1;
	}
	memcpy(p + RID_OFF, KP_READER_ID, 16);
	crc = (uint32_t)crc32_z(0, p + SHA_OFF, HEAD_LEN - SHA_OFF + n);
	memcpy(p + 16, &crc, 4);
	crc = (uint32_t)crc32_z(0, data, len);
	memcpy(p + 20, &crc, 4);
	memcpy(p + 24, &flags, 4);
	crc = head_crc(p);
	memcpy(p + 28, &crc, 4);
	if (copy)
		memcpy(p + copy_off(b->nr_types), data, len);
	kp_base_cache_put(cache, key, p, total);
	if (scope)
		memcpy(scope, p + SCOPE_OFF, KP_BTF_MEMO_ID_LEN);
	free(p);
	return 0;
}

static int store_rules(struct kp_base_cache *cache, const struct kp_base_key *key,
		       const struct kp_kernel_facts *f, const unsigned char *data, size_t len,
		       bool copy, unsigned char *scope)
{
	struct kp_btf_rules rules;

	kp_profile_btf_rules(&f->profile, &rules);
	return store(cache, key, f->vmlinux_btf, &rules, data, len, copy, scope);
}

/*
 * Opens @path into @in and makes its key: by its trusted state, or, for the running kernel's
 * file, by the boot id. 0, or -1 (not cached: @in closed).
 */
static int key_of(struct kp_kernel_facts *f, const char *path, const struct kp_root_dir *root,
		  struct kp_base_input *in, struct kp_base_key *key)
{
	struct kp_base_input *inp = in;
	struct kp_btf_rules rules;
	struct kp_err why = { 0 };
	char kind[16], boot[64];

	kp_profile_btf_rules(&f->profile, &rules);
	snprintf(kind, sizeof(kind), "btf-%d%d%d", rules.layout_header, rules.relocate,
		 rules.datasec_printable);
	if (kp_base_input_open_in(in, root, path, &why) < 0 ||
	    (!(in->fs_class == KP_FS_KERNEL && kp_boot_id(root, boot, sizeof(boot)) == 0 &&
	       kp_base_input_vouch(in, boot) == 0) &&
	     !in->trusted) ||
	    kp_base_key_make(key, kind, &inp, 1, 0, &why) < 0) {
		kp_base_input_close(in);
		return -1;
	}
	return 0;
}

/*
 * True when @b was read from the file @in opened for the key, in the state it has there: the
 * path opened twice, a directory on the way swapped for one holding another BTF and back
 * between the opens leaves the keyed file as it was, and only this comparison tells that the
 * bytes are another file's (their index is then not stored under this file's key).
 */
static bool read_from(const struct kp_base_input *in, const struct kp_vmlinux_btf *b)
{
	const struct stat *a = &in->st, *r = &b->src;
	uint64_t v[8];

	if (r->st_mode == 0 || r->st_dev != a->st_dev || r->st_ino != a->st_ino ||
	    r->st_size != a->st_size || r->st_mtim.tv_sec != a->st_mtim.tv_sec ||
	    r->st_mtim.tv_nsec != a->st_mtim.tv_nsec || r->st_ctim.tv_sec != a->st_ctim.tv_sec ||
	    r->st_ctim.tv_nsec != a->st_ctim.tv_nsec)
		return false;
	/*
	 * @in was opened after @b was read, and its state settled before that open: a file
	 * written just before the read and again within the same tick while it was read
	 * passes that test a second later. Settled before the read began, its state names
	 * the bytes read (kp_state_settled()). The running kernel's file is keyed by the boot.
	 */
	kp_file_state(a, v);
	return in->fs_class == KP_FS_KERNEL || kp_state_settled(v, &b->read_at);
}

int kp_facts_vmlinux_btf_cached(struct kp_kernel_facts *f, const struct kp_vmlinux_btf *b,
				const char *path, struct kp_base_cache *cache,
				const struct kp_root_dir *root)
{
	const unsigned char *data = b ? b->data : NULL;
	size_t len = b ? b->len : 0;
	struct kp_base_input in = { .fd = -1 };
	struct kp_base_key key;
	struct kp_base_map m = { 0 };
	struct entry e;
	bool copy, same;
	int r;

	if (!cache || !f->btf_modules || !data || len > UINT32_MAX)
		return kp_facts_vmlinux_btf(f, data, len, path, NULL);
	/*
	 * Read just before this open: a change in between would make the state recent (not
	 * settled, not trusted). Any other file (untrusted, unsettled) is not cached.
	 */
	if (key_of(f, path, root, &in, &key) < 0)
		return kp_facts_vmlinux_btf(f, data, len, path, NULL);
	copy = needs_copy(&in, data, len);
	same = read_from(&in, b);
	kp_base_input_close(&in);
	/* the key names another file or other bytes than @b's: its entry is not theirs either */
	if (!same) {
		kp_base_cache_note_miss(cache);
		return kp_facts_vmlinux_btf(f, data, len, path, NULL);
	}
	if (kp_base_cache_get(cache, &key, &m) == 1) {
		if (entry_of(&m, &e) == 0 && from_index(f, data, len, path, &e, &m) == 0)
			return 0;
		kp_base_map_release(&m);
		kp_base_cache_drop(cache, &key);
	}
	kp_base_cache_note_miss(cache);
	r = kp_facts_vmlinux_btf(f, data, len, path, NULL);
	if (r == 0 && f->vmlinux_btf)
		store_rules(cache, &key, f, data, len, copy, NULL);
	return r;
}

int kp_vmlinux_btf_peek_cached(struct kp_kernel_facts *f, const char *path,
			       struct kp_base_cache *cache, const struct kp_root_dir *root,
			       unsigned char *scope)
{
	struct kp_base_input in = { .fd = -1 };
	struct kp_base_key key;
	struct kp_base_map m = { 0 };
	struct kp_btf_rules rules;
	uint32_t crc;
	int r = -1;

	if (!cache || !f->btf_modules || key_of(f, path, root, &in, &key) < 0)
		return -1;
	kp_base_input_close(&in);
	if (kp_base_cache_get(cache, &key, &m) != 1)
		return -1;
	if (m.len >= HEAD_LEN && !memcmp(m.data, MAGIC, 8)) {
		memcpy(&crc, m.data + 28, 4);
		kp_profile_btf_rules(&f->profile, &rules);
		if (crc != head_crc(m.data))
			r = -1;
		else if (!memcmp(m.data + RID_OFF, KP_READER_ID, 16))
			r = (memcpy(scope, m.data + SCOPE_OFF, KP_BTF_MEMO_ID_LEN), 0);
		else /* another build's entry: its scope made again from the digest */
			r = kp_btf_judge_scope_of(m.data + SHA_OFF, &rules, scope);
	}
	kp_base_map_release(&m);
	return r;
}

int kp_vmlinux_btf_load_cached(struct kp_kernel_facts *f, const char *path,
			       struct kp_base_cache *cache, const struct kp_root_dir *root,
			       struct kp_vmlinux_btf *out, struct kp_err *err)
{
	struct kp_base_input in = { .fd = -1 };
	struct kp_base_key key;
	struct kp_base_map m = { 0 };
	struct entry e;
	bool copy;
	int r;

	kp_vmlinux_btf_release(out);
	if (!cache || !f->btf_modules || key_of(f, path, root, &in, &key) < 0) {
		if (kp_vmlinux_btf_read_in(root, path, out, err) < 0)
			return -1;
		return kp_facts_vmlinux_btf_cached(f, out, path, cache, root) < 0 ? -2 : 0;
	}
	if (kp_base_cache_get(cache, &key, &m) == 1) {
		if (entry_of(&m, &e) == 0) {
			const unsigned char *data = e.copy;

			if (!data && map_source(&in, e.blen, out) == 0)
				data = out->data;
			if (data && from_index(f, data, e.blen, path, &e, &m) == 0) {
				struct kp_btf_rules rules;

				kp_profile_btf_rules(&f->profile, &rules);
				/* another build's entry: its scope made again from the digest */
				if (e.scope)
					memcpy(out->scope, e.scope, sizeof(out->scope));
				out->has_scope = e.scope || kp_btf_judge_scope_of(e.sha256, &rules,
										  out->scope) == 0;
				kp_base_input_close(&in);
				return 0;
			}
			kp_vmlinux_btf_release(out);
		}
		kp_base_map_release(&m);
		kp_base_cache_drop(cache, &key);
	}
	kp_base_cache_note_miss(cache);
	if (kp_vmlinux_btf_read_in(root, path, out, err) < 0) {
		kp_base_input_close(&in);
		return -1;
	}
	copy = needs_copy(&in, out->data, out->len);
	r = kp_facts_vmlinux_btf(f, out->data, out->len, path, NULL);
	if (r == 0 && f->vmlinux_btf && out->len <= UINT32_MAX && read_from(&in, out) &&
	    store_rules(cache, &key, f, out->data, out->len, copy, out->scope) == 0)
		out->has_scope = true;
	kp_base_input_close(&in);
	return r < 0 ? -2 : 0;
}
