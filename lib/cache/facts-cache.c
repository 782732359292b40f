// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The facts cache (facts-cache.h): its policy, store and open. Its keys are in
 * facts-cache-keys.c, the pack format and lookups in facts-pack.c, the writer and merging in
 * facts-pack-write.c, show/prune/clear in facts-cache-admin.c.
 *
 * Keys. A file's state (device, inode, size, mtime, ctime, mode) names its bytes: ctime
 * changes with every write, rename onto the path or chmod and cannot be set from user
 * space, so a file in the same state holds the same bytes (the trust make and ccache's
 * direct mode give it) -- except after a store through a shared writable mapping, or a
 * write in the same timestamp tick. So a state is looked up or stored only when
 * util/fs-trust.h trusts it (a local file system, owned by root or the effective user, not
 * group/other-writable) and it is settled (not changed less than a second before a time
 * taken before it was read, as git's racy-clean rule: kp_state_settled()); any other
 * compressed module is looked up only by the SHA-256 of its bytes (entries with one come from
 * trusted states) and what was read from any other module is never stored: a hash made before the
 * read may not name the bytes read. A warm run only stat()s each trusted module. Compressed modules
 * are also keyed by the SHA-256 of their bytes as they are on disk, so a copy of a module (another
 * tree, a point release that did not change it) is not decompressed again either; the key
 * decides which facts a run trusts, so it must not collide even for files made to collide
 * (a non-cryptographic hash would let a crafted module borrow another module's verdict).
 * SHA-256 runs at ~1.5 GB/s here (SHA-NI), against ~30 MB/s of output for liblzma: hashing
 * a .ko.xz costs ~1/50 of decompressing it. An uncompressed module is not hashed when a
 * run fills an empty cache: its reader loads only the sections it needs (a quarter of the
 * bytes), so hashing all of it would cost more than reading it again when its state is new
 * (a module whose signature the run checks with SHA-256 is hashed whole by the reader in
 * passing: that digest goes to the result cache, kp_open_opts.whole).
 * One that a run with packs misses (changed since: rebuilt, touched, reinstalled) is
 * hashed after it is read, up to KP_FC_PLAIN_HASH_MAX bytes a run, so that its entry has a
 * content key too.
 *
 * The result cache (file/inputs.h) gets the content key of each module found by its state
 * or read with one (kp_in_note_bytes()), also one hashed by a deferred store (the run waits
 * for those before it writes its manifest: kp_facts_cache_wait_stored()): a replay that
 * finds the module's state changed compares its bytes instead of running.
 */
#include "facts-cache.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "file/inputs.h"
#include "cache/trusted-dir.h"
#include "file/bytes.h"
#include "facts-pack.h"
#include "facts-cache-keys.h"
#include "util/content-hash.h"
#include "util/fs-trust.h"
#include "util/io.h"
#include "facts-serial.h"
#include "sig-memo.h"
#include "btf-memo.h"
#include "index-memo.h"
#include "kmod-memo.h"

static bool is_off(const char *v)
{
	return v && (!strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "no"));
}

int kp_facts_cache_dir(enum kp_cache_scope scope, char *buf, size_t len)
{
	const char *env = getenv("KOPOLICY_CACHE_DIR");
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	int n;

	if (is_off(getenv("KOPOLICY_CACHE")))
		return 1;
	if (env && *env)
		n = snprintf(buf, len, "%s/facts-v%d", env, KP_FACTS_FORMAT);
	else if (scope == KP_CACHE_SYSTEM)
		n = snprintf(buf, len, "/var/cache/kopolicy/facts-v%d", KP_FACTS_FORMAT);
	else if (xdg && xdg[0] == '/') /* XDG: a relative value is invalid and ignored */
		n = snprintf(buf, len, "%s/kopolicy/facts-v%d", xdg, KP_FACTS_FORMAT);
	else if (home && home[0] == '/')
		n = snprintf(buf, len, "%s/.cache/kopolicy/facts-v%d", home, KP_FACTS_FORMAT);
	else
		return -1;
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* @dir (ROOT/facts-vN), made when missing, when it and ROOT pass the trust test; else -1. */
static int open_dir(const char *dir)
{
	const char *base;
	char root[4096];
	int rootfd, fd;

	if (kp_trusted_split(dir, root, sizeof(root), &base) < 0)
		return -1;
	rootfd = kp_trusted_dir_open(root, true, NULL);
	if (rootfd < 0)
		return -1;
	fd = kp_trusted_subdir(rootfd, base, true, NULL);
	close(rootfd);
	return fd;
}

struct kp_facts_cache *kp_facts_cache_new(const char *dir)
{
	struct kp_facts_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->dir = strdup(dir);
	if (!c->dir || pthread_mutex_init(&c->lock, NULL) != 0) {
		free(c->dir);
		free(c);
		return NULL;
	}
	if (kp_fc_defer_init(&c->defer) < 0) {
		pthread_mutex_destroy(&c->lock);
		free(c->dir);
		free(c);
		return NULL;
	}
	c->w.fd = -1;
	c->w.rfd = -1;
	/* another release or another reader (KP_READER_ID: a digest of its sources): a miss */
	c->build = kp_fc_build_tag();
	c->euid = geteuid();
	kp_fs_devs_init(&c->devs);
	/* created now (a read-only place stays read-only: lookups only, or none) */
	c->dirfd = open_dir(dir);
	return c;
}

struct kp_sig_memo *kp_facts_cache_sig_memo(struct kp_facts_cache *c)
{
	pthread_mutex_lock(&c->lock);
	if (!c->memo)
		c->memo = kp_sig_memo_new(c->dirfd);
	pthread_mutex_unlock(&c->lock);
	return c->memo;
}

struct kp_btf_memo *kp_facts_cache_btf_memo(struct kp_facts_cache *c, const unsigned char *scope,
					    bool in_place)
{
	struct kp_btf_memo *m;

	pthread_mutex_lock(&c->lock);
	if (!c->btf_memo)
		c->btf_memo = in_place ? kp_btf_memo_open(c->dirfd, scope)
				       : kp_btf_memo_new(c->dirfd, scope);
	m = c->btf_memo && kp_btf_memo_has_scope(c->btf_memo, scope) ? c->btf_memo : NULL;
	pthread_mutex_unlock(&c->lock);
	return m;
}

void kp_facts_cache_btf_counts(struct kp_facts_cache *c, struct kp_btf_memo_counts *out)
{
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&c->lock);
	if (c->btf_memo)
		kp_btf_memo_counts(c->btf_memo, out);
	pthread_mutex_unlock(&c->lock);
}

struct kp_index_memo *kp_facts_cache_index_memo(struct kp_facts_cache *c)
{
	struct kp_index_memo *m;

	pthread_mutex_lock(&c->lock);
	if (!c->index_memo)
		c->index_memo = kp_index_memo_new(c->dirfd);
	m = c->index_memo;
	pthread_mutex_unlock(&c->lock);
	return m;
}

void kp_facts_cache_index_counts(struct kp_facts_cache *c, struct kp_index_memo_counts *out)
{
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&c->lock);
	if (c->index_memo)
		kp_index_memo_counts(c->index_memo, out);
	pthread_mutex_unlock(&c->lock);
}

struct kp_kmod_memo *kp_facts_cache_kmod_memo(struct kp_facts_cache *c, const char *question)
{
	struct kp_kmod_memo *m;

	pthread_mutex_lock(&c->lock);
	if (!c->kmod_memo)
		c->kmod_memo = kp_kmod_memo_new(c->dirfd, question);
	m = kp_kmod_memo_is_for(c->kmod_memo, question) ? c->kmod_memo : NULL;
	pthread_mutex_unlock(&c->lock);
	return m;
}

void kp_facts_cache_kmod_counts(struct kp_facts_cache *c, struct kp_kmod_memo_counts *out)
{
	pthread_mutex_lock(&c->lock);
	kp_kmod_memo_counts(c->kmod_memo, out);
	pthread_mutex_unlock(&c->lock);
}

void kp_facts_cache_counts(const struct kp_facts_cache *c, struct kp_cache_counts *out)
{
	*out = c->n;
}

uint64_t kp_facts_cache_max_size(void)
{
	const char *v = getenv("KOPOLICY_CACHE_MAX_SIZE");
	unsigned long long n;
	char *end;

	if (!v || !*v)
		return KP_FACTS_DEFAULT_MAX;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || n == 0)
		return KP_FACTS_DEFAULT_MAX;
	switch (*end) {
	case 'G':
		n <<= 10;
		/* fall through */
	case 'M':
		n <<= 10;
		/* fall through */
	case 'K':
		n <<= 10;
		end++;
		break;
	default:
		break;
	}
	return *end ? KP_FACTS_DEFAULT_MAX : n;
}

static void add_entry(struct kp_facts_cache *c, struct kp_fc_rec *r, const unsigned char *p,
		      size_t len)
{
	if (len > KP_FC_ENTRY_MAX)
		return;
	pthread_mutex_lock(&c->lock);
	kp_fc_writer_add(c, &c->w, r, p, len);
	pthread_mutex_unlock(&c->lock);
}

/* An encoding buffer: a free one of the pool, a new one, or NULL (out of memory). */
static struct kp_facts_buf *enc_get(struct kp_facts_cache *c)
{
	struct kp_facts_buf *b = NULL;

	pthread_mutex_lock(&c->lock);
	if (c->nenc)
		b = c->enc[--c->nenc];
	pthread_mutex_unlock(&c->lock);
	return b ? b : calloc(1, sizeof(*b));
}

/* Back to the pool (under @c->lock), or freed when the pool is full. */
static void enc_put(struct kp_facts_cache *c, struct kp_facts_buf *b)
{
	if (c->nenc < KP_FC_ENC_POOL) {
		c->enc[c->nenc++] = b;
		return;
	}
	kp_facts_buf_release(b);
	free(b);
}

/*
 * Encodes @m as an entry for @r (its state, key and flags set) into a buffer of the pool
 * (no allocation per module once the pool's buffers have grown: fresh pages cost a page
 * fault each), outside the lock, and appends it to the run's pack. 0 or -1.
 */
static int store(struct kp_facts_cache *c, const struct kp_module *m, struct kp_fc_rec *r)
{
	struct kp_facts_buf *b = enc_get(c);
	unsigned char key[KP_FC_KEY_LEN];
	int ret = -1;

	if (!b)
		return -1;
	kp_fc_entry_key(r, key);
	b->len = KP_FC_HEADER_LEN;
	b->oom = 0;
	if (kp_facts_encode(m, b) == 0 && b->len - KP_FC_HEADER_LEN <= KP_FC_ENTRY_MAX) {
		kp_fc_make_header(c, b->data, r->flags & 0xff, key, m->file_size,
				  b->len - KP_FC_HEADER_LEN);
		kp_store32(b->data + 64, kp_fc_entry_crc(b->data, b->data + KP_FC_HEADER_LEN,
							 b->len - KP_FC_HEADER_LEN));
		ret = 0;
	}
	pthread_mutex_lock(&c->lock);
	if (ret == 0)
		ret = kp_fc_writer_add(c, &c->w, r, b->data, b->len);
	enc_put(c, b);
	pthread_mutex_unlock(&c->lock);
	return ret;
}

void kp_fc_store_job(struct kp_facts_cache *c, const struct fc_job *j)
{
	struct kp_fc_rec r = { .flags = j->flags };

	memcpy(r.st, j->st, sizeof(r.st));
	r.hash = kp_fc_state_hash(r.st);
	if (j->hash_later && kp_fc_content_key_at(c, j->m->path, r.st, r.key) == 0) {
		r.flags |= KP_FC_F_CONTENT;
		/* the result cache's manifest is written after this (kp_facts_cache_wait_stored) */
		if (j->note)
			kp_in_note_bytes(r.st, r.key);
	}
	if (store(c, j->m, &r) == 0)
		count(&c->n.stored);
}

/*
 * Stores @m for @r now, or queues it (@hash_later: a content key still to make). An entry
 * with its content key made already (a miss in a cache that has packs: rarer) is stored now.
 */
static void store_or_defer(struct kp_facts_cache *c, const struct kp_open_opts *opts,
			   struct kp_module *m, struct kp_fc_rec *r, bool hash_later)
{
	if (opts->defer_store && !(r->flags & KP_FC_F_CONTENT) &&
	    kp_fc_defer(c, m, r->st, r->flags, hash_later, !opts->ima_xattr) == 0)
		return;
	if (hash_later && kp_fc_content_key_at(c, m->path, r->st, r->key) == 0) {
		r->flags |= KP_FC_F_CONTENT;
		kp_fc_note_bytes(opts, r->st, r->key);
	}
	if (store(c, m, r) == 0)
		count(&c->n.stored);
}

/*
 * An empty cache (no pack to look in): the module is read first and stored under the state
 * the reader's own open() saw, then hashed when compressed: no stat() of its own, which is
 * a tenth of what reading a small uncompressed module costs.
 */
static int read_and_store(struct kp_facts_cache *c, const char *path,
			  const struct kp_open_opts *opts, struct kp_open_opts *direct,
			  struct kp_decoders *dec, struct kp_module **out, struct kp_err *err)
{
	struct kp_fc_rec r = { .flags = kp_fc_entry_flags(direct) };
	struct kp_whole_sha256 whole = { .set = false };
	struct timespec before;
	struct stat st;
	int ret;

	clock_gettime(CLOCK_REALTIME, &before); /* the settle rule's time: before the read */
	direct->state = &st;
	direct->whole = &whole;
	ret = kp_module_open_with(path, direct, dec, out, err);
	direct->state = NULL;
	direct->whole = NULL;
	if (!S_ISREG(st.st_mode)) /* not opened: not counted, as a file stat() refuses */
		return ret;
	count(&c->n.misses);
	if (ret < 0)
		return ret;
	kp_file_state(&st, r.st);
	if (!kp_fc_trusted(c, path, &st) || !kp_state_settled(r.st, &before))
		return 0; /* the state does not name the bytes read: not stored */
	r.hash = kp_fc_state_hash(r.st);
	/*
	 * An uncompressed module the reader hashed whole in passing (its signature checked, -b):
	 * the bytes of this state, for the result cache (no entry's key: not hashed otherwise)
	 */
	if (whole.set && !kp_fc_hashed_by_name(path) && kp_fc_still_in_state(path, r.st))
		kp_fc_note_bytes(opts, r.st, whole.sha256);
	/* a content key only for the bytes read: kp_fc_content_key_at() checks the state it hashes
	 */
	store_or_defer(c, opts, *out, &r, kp_fc_hashed_by_name(path));
	return 0;
}

int kp_facts_cache_open(struct kp_facts_cache *c, const char *path, const struct kp_open_opts *opts,
			struct kp_decoders *dec, struct kp_module **out, struct kp_err *err)
{
	return kp_facts_cache_open_stat(c, path, NULL, opts, dec, out, err);
}

bool kp_facts_cache_wants_state(struct kp_facts_cache *c)
{
	if (c->dirfd < 0)
		return false;
	kp_fc_load_packs(c);
	return c->npacks > 0;
}

int kp_facts_cache_open_stat(struct kp_facts_cache *c, const char *path, const struct stat *given,
			     const struct kp_open_opts *opts, struct kp_decoders *dec,
			     struct kp_module **out, struct kp_err *err)
{
	struct kp_open_opts direct = *opts;
	struct kp_fc_rec r = { .flags = kp_fc_entry_flags(opts) }, hit;
	struct stat pre, post, got_st, *got;
	struct timespec before;
	struct kp_module *m;
	bool trust;

	*out = NULL;
	if (c->dirfd < 0) /* no cache directory */
		return kp_module_open_with(path, &direct, dec, out, err);
	kp_fc_load_packs(c);
	if (!c->npacks)
		return read_and_store(c, path, opts, &direct, dec, out, err);
	/*
	 * Not a regular file, or gone: the reader says what it is. The caller's stat() is as
	 * good as one here: taken before the file is read, recorded for the result cache.
	 */
	if (given)
		pre = *given;
	else if (kp_stat_in(opts->root, path, &pre) < 0)
		return kp_module_open_with(path, &direct, dec, out, err);
	if (!S_ISREG(pre.st_mode))
		return kp_module_open_with(path, &direct, dec, out, err);
	kp_file_state(&pre, r.st);
	r.hash = kp_fc_state_hash(r.st);
	trust = kp_fc_trusted(c, path, &pre);
	m = trust ? kp_fc_lookup(c, r.st, NULL, path, opts, (uint64_t)pre.st_size, NULL, &hit)
		  : NULL;
	if (m) {
		count(&c->n.hits);
		count(&c->n.stat_hits);
		/* the facts of these bytes: the result cache records them (no read) */
		if (hit.flags & KP_FC_F_CONTENT)
			kp_fc_note_bytes(opts, r.st, hit.key);
		*out = m;
		return 0;
	}
	/* the settle rule's time (kp_state_settled()): before the file is hashed or read */
	clock_gettime(CLOCK_REALTIME, &before);
	/*
	 * Compressed: looked up by content too (also when the state is not trusted: entries
	 * with content keys are made only from trusted states). An uncompressed module has no
	 * content key, so hashing one whose state is not trusted could find nothing.
	 */
	if (kp_fc_hashed_by_name(path) &&
	    kp_fc_content_key(c, opts->root, path, &pre, r.key) == 0) {
		unsigned char *raw = NULL;

		r.flags |= KP_FC_F_CONTENT;
		m = kp_fc_lookup(c, NULL, r.key, path, opts, (uint64_t)pre.st_size, &raw, NULL);
		if (m) {
			/* the same entry under this file's state: a stat hit next time */
			count(&c->n.hits);
			if (trust && kp_state_settled(r.st, &before)) {
				add_entry(c, &r, raw,
					  kp_load64(raw + 56, false) + KP_FC_HEADER_LEN);
				kp_fc_note_bytes(opts, r.st, r.key);
			}
			free(raw);
			*out = m;
			return 0;
		}
	}
	count(&c->n.misses);
	got = opts->state ? opts->state : &got_st;
	direct.state = got;
	if (kp_module_open_with(path, &direct, dec, out, err) < 0)
		return -1;
	if (!trust || !kp_state_settled(r.st, &before))
		return 0; /* the state does not name the bytes read (see the top): not stored */
	/* the file read is not the one looked up (replaced since, or a link on the way) */
	if (!kp_fc_same_state(&pre, got))
		return 0;
	/* uncompressed, changed since the cache was filled: its content key too (see the top) */
	if (!(r.flags & KP_FC_F_CONTENT) &&
	    __atomic_add_fetch(&c->plain_hashed, (uint64_t)pre.st_size, __ATOMIC_RELAXED) <=
		    KP_FC_PLAIN_HASH_MAX &&
	    kp_fc_content_key(c, opts->root, path, &pre, r.key) == 0)
		r.flags |= KP_FC_F_CONTENT;
	/*
	 * A content key must name the bytes that were read: the file must not have changed
	 * since it was hashed. An entry found by state alone needs no second stat(): a file
	 * changed since @pre has left that state for good (ctime only moves forward), so no
	 * later run looks the entry up (a change within one timestamp tick goes unseen by a
	 * stat() either way).
	 */
	if (!(r.flags & KP_FC_F_CONTENT) ||
	    (kp_stat_in(opts->root, path, &post) == 0 && kp_fc_same_state(&pre, &post))) {
		store_or_defer(c, opts, *out, &r, false);
		if (r.flags & KP_FC_F_CONTENT)
			kp_fc_note_bytes(opts, r.st, r.key);
	}
	return 0;
}

/* After a run that stored entries: prune when the last pruning is KP_FC_PRUNE_EVERY old. */
static void auto_prune(const struct kp_facts_cache *c)
{
	struct kp_cache_usage u;
	struct kp_err err;
	struct stat st;
	int fd;

	if (fstatat(c->dirfd, "last-prune", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    st.st_mtim.tv_sec + KP_FC_PRUNE_EVERY > time(NULL))
		return;
	fd = openat(c->dirfd, "last-prune", O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return;
	futimens(fd, NULL);
	close(fd);
	kp_fc_prune_at(c->dirfd, kp_facts_cache_max_size(), &u, &err);
}

void kp_facts_cache_free(struct kp_facts_cache *c)
{
	time_t now = time(NULL);
	bool wrote = false;

	if (!c)
		return;
	/* every module still waiting is stored: the pack is finished below */
	kp_fc_defer_finish(c);
	/* least recently used = oldest mtime: refresh the packs hits came from, now and then */
	for (size_t i = 0; i < c->npacks; i++) {
		if (c->packs[i].used && c->packs[i].mtime + KP_FC_TOUCH_EVERY < now)
			futimens(c->packs[i].fd, NULL);
		kp_fc_pack_close(&c->packs[i]);
	}
	free(c->packs);
	if (c->n.stored || c->w.n || c->w.nspilled)
		wrote = kp_fc_writer_finish(c, &c->w) == 0 && kp_fc_writer_publish(c, &c->w) == 0;
	kp_fc_writer_close(c, &c->w);
	for (size_t i = 0; i < c->nenc; i++) {
		kp_facts_buf_release(c->enc[i]);
		free(c->enc[i]);
	}
	if (wrote) {
		kp_fc_merge_packs(c);
		auto_prune(c);
	}
	kp_sig_memo_free(c->memo); /* what this run verified, for the next ones */
	kp_btf_memo_free(c->btf_memo);
	kp_index_memo_free(c->index_memo);
	kp_kmod_memo_free(c->kmod_memo); /* libkmod's answers of this run, for the next ones */
	if (c->dirfd >= 0)
		close(c->dirfd);
	pthread_mutex_destroy(&c->lock);
	free(c->dir);
	EVP_MD_free(c->sha256);
	free(c);
}
