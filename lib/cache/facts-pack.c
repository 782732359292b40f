// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The facts cache's pack format (facts-pack.h): encoding, opening packs, lookups.
 *
 * Packs. Each run that read modules writes the entries it made into one unnamed file
 * (O_TMPFILE) and names it packs/<pid>-<time>.pack when it ends: one file per run instead
 * of one per module, whole or absent for every reader. Layout:
 *
 *   entry...      each: a 72-byte header (magic, format, flags, key, file size, payload
 *                 length, CRC-32, build) and the payload (facts-serial-*.c); the key is the
 *                 content key, or the state's hash, inode and ctime (kp_fc_entry_key())
 *   record...     128 bytes each, sorted by the state's 64-bit hash: hash, the 8 state
 *                 fields, content key, entry offset, entry length, flags, CRC-32 of the record
 *   uint32...     the numbers of the records with a content key, sorted by that key
 *   footer        64 bytes: magic, format, build, record count, index offset, key count, CRC
 *
 * A lookup maps each pack's index (only the pages a binary search touches are read) and
 * pread()s the one entry it needs. An entry is used only when its record's CRC, and its
 * header (magic, format, build, flags, key, file size, length) and CRC all match and its
 * payload decodes exactly; anything else is a miss and the file is read as without the
 * cache. Packs are never changed once named: pruning and merging unlink them (a run that
 * has one open keeps reading it). More than KP_FC_MAX_PACKS packs are merged (the smallest ones,
 * under a lock file) so lookups open few files.
 */
#include "facts-pack.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file/bytes.h"
#include "cache/trusted-dir.h"
#include "read/reader-id.h"
#include "util/crc32.h"
#include "util/io.h"

uint32_t kp_fc_build_tag(void)
{
	uint32_t b = kp_crc32(0, PACKAGE_VERSION, strlen(PACKAGE_VERSION));

	return kp_crc32(b, KP_READER_ID, strlen(KP_READER_ID));
}

/* A 64-bit hash of the state, to sort and search records by (the fields are compared too). */
uint64_t kp_fc_state_hash(const uint64_t *v)
{
	uint64_t h = 0x9e3779b97f4a7c15u;

	for (int i = 0; i < 8; i++) {
		h ^= v[i];
		h *= 0xff51afd7ed558ccdu;
		h ^= h >> 33;
	}
	return h;
}

/* The read options that change the facts: part of an entry's header and its record. */
uint32_t kp_fc_entry_flags(const struct kp_open_opts *o)
{
	return (o->full_modinfo ? 1u : 0u) | (o->sig_digest & 3u) << 1 |
	       (o->no_symbol_get ? 8u : 0u) | (o->keep_btf ? 16u : 0u) |
	       (o->keep_btf && o->btf_judge ? 32u : 0u);
}

/* The header before the payload; its CRC covers header (CRC field 0) and payload. */
void kp_fc_make_header(const struct kp_facts_cache *c, unsigned char *h, uint32_t flags,
		       const unsigned char *key, uint64_t file_size, uint64_t payload_len)
{
	memset(h, 0, KP_FC_HEADER_LEN);
	memcpy(h, KP_FC_MAGIC, 8);
	kp_store32(h + 8, KP_FACTS_FORMAT);
	kp_store32(h + 12, flags);
	memcpy(h + 16, key, KP_FC_KEY_LEN);
	kp_store64(h + 48, file_size);
	kp_store64(h + 56, payload_len);
	/* h + 64: CRC-32, filled by the caller */
	kp_store32(h + 68, c->build);
}

uint32_t kp_fc_entry_crc(const unsigned char *h, const unsigned char *payload, size_t len)
{
	unsigned char copy[KP_FC_HEADER_LEN];

	memcpy(copy, h, KP_FC_HEADER_LEN);
	memset(copy + 64, 0, 4);
	/* every entry a lookup uses is checked whole: by folding where the processor can */
	return kp_crc32(kp_crc32(0, copy, KP_FC_HEADER_LEN), payload, len);
}

/* The header fields a lookup checks: for @key (kp_fc_entry_key()) and @file_size. */
bool kp_fc_header_ok(const struct kp_facts_cache *c, const unsigned char *h, size_t len,
		     uint32_t flags, const unsigned char *key, uint64_t file_size)
{
	unsigned char want[KP_FC_HEADER_LEN];

	if (len < KP_FC_HEADER_LEN)
		return false;
	kp_fc_make_header(c, want, flags, key, file_size, len - KP_FC_HEADER_LEN);
	memcpy(want + 64, h + 64, 4);
	return !memcmp(h, want, KP_FC_HEADER_LEN) &&
	       kp_load32(h + 64, false) ==
		       kp_fc_entry_crc(h, h + KP_FC_HEADER_LEN, len - KP_FC_HEADER_LEN);
}

/*
 * The key in the header of @r's entry: the content key, or for an entry found by state
 * only, the state's hash, inode and ctime: an entry is bound to what its record names.
 */
void kp_fc_entry_key(const struct kp_fc_rec *r, unsigned char *k)
{
	if (r->flags & KP_FC_F_CONTENT) {
		memcpy(k, r->key, KP_FC_KEY_LEN);
		return;
	}
	kp_store64(k, r->hash);
	kp_store64(k + 8, r->st[1]);
	kp_store64(k + 16, r->st[5]);
	kp_store64(k + 24, r->st[6]);
}

/* Records: 128 bytes, little-endian. */
void kp_fc_rec_put(unsigned char *p, const struct kp_fc_rec *r)
{
	memset(p, 0, KP_FC_REC_LEN);
	kp_store64(p, r->hash);
	for (int i = 0; i < 8; i++)
		kp_store64(p + 8 + 8 * i, r->st[i]);
	memcpy(p + 72, r->key, KP_FC_KEY_LEN);
	kp_store64(p + 104, r->off);
	kp_store32(p + 112, r->len);
	kp_store32(p + 116, r->flags);
	kp_store32(p + 124, kp_crc32(0, p, KP_FC_REC_LEN - 4));
}

bool kp_fc_rec_get(const unsigned char *p, struct kp_fc_rec *r)
{
	if (kp_load32(p + 124, false) != kp_crc32(0, p, KP_FC_REC_LEN - 4))
		return false;
	r->hash = kp_load64(p, false);
	for (int i = 0; i < 8; i++)
		r->st[i] = kp_load64(p + 8 + 8 * i, false);
	memcpy(r->key, p + 72, KP_FC_KEY_LEN);
	r->off = kp_load64(p + 104, false);
	r->len = kp_load32(p + 112, false);
	r->flags = kp_load32(p + 116, false);
	return true;
}

void kp_fc_footer_put(const struct kp_facts_cache *c, unsigned char *f, uint64_t nrec,
		      uint64_t index_off, uint64_t nkeys)
{
	memset(f, 0, KP_FC_FOOTER_LEN);
	memcpy(f, KP_FC_PACK_MAGIC, 8);
	kp_store32(f + 8, KP_FACTS_FORMAT);
	kp_store32(f + 12, c->build);
	kp_store64(f + 16, nrec);
	kp_store64(f + 24, index_off);
	kp_store64(f + 32, nkeys);
	kp_store32(f + 60, kp_crc32(0, f, KP_FC_FOOTER_LEN - 4));
}

/* The footer of a pack of @size bytes: 0 and the counts, or -1 (not a pack of this build). */
static int footer_get(const struct kp_facts_cache *c, const unsigned char *f, uint64_t size,
		      uint64_t *nrec, uint64_t *index_off, uint64_t *nkeys)
{
	if (memcmp(f, KP_FC_PACK_MAGIC, 8) || kp_load32(f + 8, false) != KP_FACTS_FORMAT ||
	    kp_load32(f + 12, false) != c->build ||
	    kp_load32(f + 60, false) != kp_crc32(0, f, KP_FC_FOOTER_LEN - 4))
		return -1;
	*nrec = kp_load64(f + 16, false);
	*index_off = kp_load64(f + 24, false);
	*nkeys = kp_load64(f + 32, false);
	if (size < KP_FC_FOOTER_LEN || *nrec > size / KP_FC_REC_LEN || *nkeys > *nrec ||
	    *index_off > size ||
	    size - *index_off != *nrec * KP_FC_REC_LEN + *nkeys * 4 + KP_FC_FOOTER_LEN)
		return -1;
	return 0;
}

static bool is_pack_name(const char *name)
{
	size_t n = strlen(name);

	return name[0] != '.' && n > 5 && n < KP_FC_NAME_LEN && !strcmp(name + n - 5, ".pack");
}

/* Opens the pack @name of the directory @dfd and maps its index; 0 or -1 (not a pack). */
int kp_fc_pack_open(const struct kp_facts_cache *c, int dfd, const char *name, struct kp_fc_pack *p)
{
	unsigned char f[KP_FC_FOOTER_LEN];
	uint64_t nrec, off, nkeys, start;
	long page = sysconf(_SC_PAGESIZE);
	struct stat st;

	memset(p, 0, sizeof(*p));
	p->fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (p->fd < 0)
		return -1;
	/* only what the user or root wrote: a CRC is no authentication (trusted-dir.h) */
	if (fstat(p->fd, &st) < 0 || !kp_trusted_file(&st) || st.st_size < KP_FC_FOOTER_LEN ||
	    (uint64_t)st.st_size > KP_FC_PACK_MAX ||
	    kp_pread_all(p->fd, f, KP_FC_FOOTER_LEN, (uint64_t)st.st_size - KP_FC_FOOTER_LEN) !=
		    KP_FC_FOOTER_LEN ||
	    footer_get(c, f, (uint64_t)st.st_size, &nrec, &off, &nkeys) < 0)
		goto fail;
	p->mtime = st.st_mtim.tv_sec;
	p->nrec = nrec;
	p->nkeys = nkeys;
	if (!nrec)
		return 0;
	start = off & ~(uint64_t)(page > 0 ? page - 1 : 4095);
	p->map_len = (size_t)((uint64_t)st.st_size - KP_FC_FOOTER_LEN - start);
	p->map = mmap(NULL, p->map_len, PROT_READ, MAP_SHARED, p->fd, (off_t)start);
	if (p->map == MAP_FAILED) {
		p->map = NULL;
		goto fail;
	}
	p->recs = p->map + (off - start);
	p->keys = p->recs + nrec * KP_FC_REC_LEN;
	return 0;
fail:
	close(p->fd);
	p->fd = -1;
	return -1;
}

void kp_fc_pack_close(struct kp_fc_pack *p)
{
	if (p->map)
		munmap(p->map, p->map_len);
	if (p->fd >= 0)
		close(p->fd);
	p->map = NULL;
	p->fd = -1;
}

static bool keep_pack(int dfd, const char *name, const struct stat *st, void *arg)
{
	(void)dfd;
	(void)st;
	(void)arg;
	return is_pack_name(name);
}

/* The names of the packs in @dfd (and their stat), newest first; -1 when out of memory. */
int kp_fc_list_packs(int dfd, struct kp_dir_file **out, size_t *n)
{
	return kp_dir_newest(dfd, keep_pack, NULL, out, n);
}

int kp_fc_packs_dir(int dfd, bool create)
{
	return kp_trusted_subdir(dfd, KP_FC_PACK_DIR, create, NULL);
}

/* The packs directory of @c (O_PATH), or -1. */
static int packs_dirfd(const struct kp_facts_cache *c)
{
	return kp_fc_packs_dir(c->dirfd, false);
}

/* Opens the newest KP_FC_LOAD_PACKS packs once per run (the first lookup). */
void kp_fc_load_packs(struct kp_facts_cache *c)
{
	struct kp_dir_file *names;
	size_t n;
	int dfd;

	if (__atomic_load_n(&c->loaded, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&c->lock);
	if (c->loaded)
		goto out;
	dfd = packs_dirfd(c);
	if (dfd < 0)
		goto done;
	if (kp_fc_list_packs(dfd, &names, &n) == 0 && n) {
		if (n > KP_FC_LOAD_PACKS)
			n = KP_FC_LOAD_PACKS;
		c->packs = calloc(n, sizeof(*c->packs));
		for (size_t i = 0; c->packs && i < n; i++)
			if (kp_fc_pack_open(c, dfd, names[i].name, &c->packs[c->npacks]) == 0)
				c->npacks++;
	}
	free(names);
	close(dfd);
done:
	__atomic_store_n(&c->loaded, true, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&c->lock);
}

/* A lookup in one pack's index: by file state (@st) or by content key (@key). */
struct find {
	const struct kp_fc_pack *p;
	const uint64_t *st;
	uint64_t hash;
	const unsigned char *key;
	uint32_t flags;
	size_t from; /* the search resumes here (the next candidate) */
	struct kp_fc_rec found;
};

static bool rec_matches(const struct find *f, const unsigned char *p)
{
	struct kp_fc_rec r;

	if (!kp_fc_rec_get(p, &r) || (r.flags & 0xff) != f->flags)
		return false;
	if (f->st) {
		if (r.hash != f->hash || memcmp(r.st, f->st, sizeof(r.st)))
			return false;
	} else if (!(r.flags & KP_FC_F_CONTENT) || memcmp(r.key, f->key, KP_FC_KEY_LEN)) {
		return false;
	}
	((struct find *)f)->found = r;
	return true;
}

/* The index of a record (by state) or a key slot (by content) at position @i. */
static const unsigned char *slot(const struct find *f, size_t i)
{
	uint32_t k;

	if (f->st)
		return f->p->recs + i * KP_FC_REC_LEN;
	k = kp_load32(f->p->keys + 4 * i, false);
	return k < f->p->nrec ? f->p->recs + (size_t)k * KP_FC_REC_LEN : NULL;
}

/* <0, 0, >0: the record at @i sorts before, with, after what @f looks for. */
static int slot_cmp(const struct find *f, size_t i)
{
	const unsigned char *p = slot(f, i);
	uint64_t h;

	if (!p)
		return 1;
	if (!f->st)
		return memcmp(p + 72, f->key, KP_FC_KEY_LEN);
	h = kp_load64(p, false);
	return h < f->hash ? -1 : h > f->hash;
}

/* Under kp_bytes_guard(): the next matching record from @f->from; 1 found, 0 none. */
static int find_next(void *arg)
{
	struct find *f = arg;
	size_t n = f->st ? f->p->nrec : f->p->nkeys;

	if (f->from == SIZE_MAX) { /* first call: binary search for the first candidate */
		size_t lo = 0, hi = n;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (slot_cmp(f, mid) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		f->from = lo;
	}
	for (; f->from < n && slot_cmp(f, f->from) == 0; f->from++) {
		const unsigned char *p = slot(f, f->from);

		if (rec_matches(f, p)) {
			f->from++;
			return 1;
		}
	}
	return 0;
}

/*
 * The module from the entry @r of @p, or NULL (refused: corrupt or foreign). The file must
 * be @file_size bytes and its image fit @opts->max_size. @raw/@raw_len: the entry's bytes
 * (the caller frees them) when not NULL.
 */
static struct kp_module *load_entry(const struct kp_facts_cache *c, const struct kp_fc_pack *p,
				    const struct kp_fc_rec *r, const char *path,
				    const struct kp_open_opts *opts, uint64_t file_size,
				    unsigned char **raw)
{
	size_t max = opts->max_size ? opts->max_size : KP_DEFAULT_MAX_SIZE;
	unsigned char small[16384], *buf = small, key[KP_FC_KEY_LEN];
	struct kp_module *m = NULL;
	size_t len = r->len;

	if (len < KP_FC_HEADER_LEN || len > KP_FC_ENTRY_MAX)
		return NULL;
	if (len > sizeof(small) || raw) {
		buf = malloc(len);
		if (!buf)
			return NULL;
	}
	kp_fc_entry_key(r, key);
	if (kp_pread_all(p->fd, buf, len, r->off) != (ssize_t)len ||
	    !kp_fc_header_ok(c, buf, len, r->flags & 0xff, key, file_size))
		goto out;
	m = calloc(1, sizeof(*m));
	if (!m)
		goto out;
	m->path = path;
	if (kp_facts_decode(m, buf + KP_FC_HEADER_LEN, len - KP_FC_HEADER_LEN, opts->names) < 0 ||
	    m->image_size > max || m->file_size != file_size) {
		kp_module_free(m);
		m = NULL;
		goto out;
	}
	__atomic_store_n(&((struct kp_fc_pack *)p)->used, 1, __ATOMIC_RELAXED);
	if (raw) {
		*raw = buf;
		return m;
	}
out:
	if (buf != small)
		free(buf);
	return m;
}

/*
 * Looks the module up in every pack: by @st (the file's state) or, with @st NULL, by @key.
 * A hit returns the module (and the entry's bytes in @raw when asked); refused entries are
 * counted and the search goes on.
 */
struct kp_module *kp_fc_lookup(struct kp_facts_cache *c, const uint64_t *st,
			       const unsigned char *key, const char *path,
			       const struct kp_open_opts *opts, uint64_t file_size,
			       unsigned char **raw, struct kp_fc_rec *rec)
{
	struct kp_err err;

	kp_fc_load_packs(c);
	for (size_t i = 0; i < c->npacks; i++) {
		const struct kp_fc_pack *p = &c->packs[i];
		struct kp_bytes guard = { .data = p->map, .len = p->map_len, .mapped = true };
		struct find f = { .p = p,
				  .st = st,
				  .key = key,
				  .flags = kp_fc_entry_flags(opts),
				  .from = SIZE_MAX };

		if (!p->nrec)
			continue;
		if (st)
			f.hash = kp_fc_state_hash(st);
		/* a pack truncated under us (by hand) is a SIGBUS on its index: a miss */
		while (kp_bytes_guard(&guard, find_next, &f, &err) == 1) {
			struct kp_module *m =
				load_entry(c, p, &f.found, path, opts, file_size, raw);

			if (m) {
				if (rec)
					*rec = f.found;
				return m;
			}
			count(&c->n.rejected);
		}
	}
	return NULL;
}
