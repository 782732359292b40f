// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The facts cache's pack writer (facts-pack.h): a run's entries appended to an unnamed file,
 * the index and footer written when it ends, the file named once whole; merging packs, under a
 * lock file no other user can open.
 */
#include "facts-pack.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "cache/trusted-dir.h"
#include "util/io.h"

/* A name for a temporary file in the packs directory, unique across processes and threads. */
static void tmp_name(char *buf, unsigned seq)
{
	snprintf(buf, KP_FC_NAME_LEN, ".tmp-%ld-%ld-%u", (long)getpid(), (long)gettid(), seq);
}

/* The writer's file, made on the first entry: an unnamed file, else a temporary name. */
static int writer_open(struct kp_facts_cache *c, struct kp_fc_writer *w)
{
	int dfd;

	if (w->fd >= 0 || w->failed)
		return w->failed ? -1 : 0;
	w->failed = true;
	dfd = kp_fc_packs_dir(c->dirfd, true);
	if (dfd < 0)
		return -1;
	w->fd = openat(dfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		tmp_name(w->tmp, __atomic_fetch_add(&c->seq, 1, __ATOMIC_RELAXED));
		w->fd = openat(dfd, w->tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
			       0644);
		w->named = w->fd >= 0;
	}
	/* 0644 whatever the umask: a group-writable pack is never believed */
	if (w->fd >= 0 && fchmod(w->fd, 0644) < 0) {
		close(w->fd);
		w->fd = -1;
		if (w->named)
			unlinkat(dfd, w->tmp, 0);
	}
	/* the records wait there: they are needed only once the run ends (peak memory) */
	if (w->fd >= 0)
		w->rfd = openat(dfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	close(dfd);
	if (w->fd < 0)
		return -1;
	w->failed = false;
	return 0;
}

static int writer_flush(struct kp_fc_writer *w)
{
	if (w->blen && kp_write_all(w->fd, w->buf, w->blen) < 0)
		w->failed = true;
	w->blen = 0;
	return w->failed ? -1 : 0;
}

/* A buffer with @room bytes free after what it holds (flushed when needed); 0 or -1. */
static int writer_room(struct kp_fc_writer *w, size_t room)
{
	if (!w->buf) {
		w->buf = malloc(KP_FC_WRITE_BUF);
		if (!w->buf)
			return -1;
		w->bcap = KP_FC_WRITE_BUF;
	}
	return w->bcap - w->blen < room ? writer_flush(w) : 0;
}

/* Appends the entry @p (@len bytes) for @r's state and key; under @c->lock. */
int kp_fc_writer_add(struct kp_facts_cache *c, struct kp_fc_writer *w, struct kp_fc_rec *r,
		     const unsigned char *p, size_t len)
{
	if (writer_open(c, w) < 0 || kp_grow(&w->recs, &w->cap, w->n + 1, sizeof(*w->recs)) < 0)
		return -1;
	if (len <= KP_FC_WRITE_BUF / 2 && writer_room(w, len) == 0) {
		memcpy(w->buf + w->blen, p, len);
		w->blen += len;
	} else if (writer_flush(w) < 0 || kp_write_all(w->fd, p, len) < 0) {
		w->failed = true;
		return -1;
	}
	r->off = w->off;
	r->len = (uint32_t)len;
	w->off += len;
	w->recs[w->n++] = *r;
	if (w->rfd >= 0 && w->n >= KP_FC_SPILL_RECS) {
		if (kp_write_all(w->rfd, (const unsigned char *)w->recs, w->n * sizeof(*w->recs)) <
		    0) {
			w->failed = true;
			return -1;
		}
		w->nspilled += w->n;
		w->n = 0;
	}
	return 0;
}

/* Records by state hash, state, flags, then where the entry is (the first written first). */
static int cmp_rec_state(const void *a, const void *b)
{
	const struct kp_fc_rec *x = a, *y = b;
	int d;

	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	d = memcmp(x->st, y->st, sizeof(x->st));
	if (d)
		return d;
	if ((x->flags & 0xff) != (y->flags & 0xff))
		return (x->flags & 0xff) < (y->flags & 0xff) ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* Key slots (record numbers into @arg) by content key, then flags. */
static int cmp_key_slot(const void *a, const void *b, void *arg)
{
	const struct kp_fc_rec *recs = arg;
	const struct kp_fc_rec *x = &recs[*(const uint32_t *)a], *y = &recs[*(const uint32_t *)b];
	int d = memcmp(x->key, y->key, KP_FC_KEY_LEN);

	if (d)
		return d;
	return (x->flags & 0xff) < (y->flags & 0xff) ? -1 : (x->flags & 0xff) > (y->flags & 0xff);
}

/*
 * Writes the index and footer after the entries; 0, or -1 (the writer's file is then
 * useless). A state read twice (the same file named twice) keeps its first entry.
 */
int kp_fc_writer_finish(struct kp_facts_cache *c, struct kp_fc_writer *w)
{
	unsigned char *idx = NULL;
	uint32_t *keys = NULL;
	size_t n = 0, nkeys = 0, len;
	int r = -1;

	if (w->fd < 0 || w->failed || !(w->n + w->nspilled) || writer_flush(w) < 0)
		return -1;
	if (w->nspilled) { /* the records back in memory, the spilled ones first */
		size_t total = (size_t)w->nspilled + w->n;
		size_t bytes = (size_t)w->nspilled * sizeof(struct kp_fc_rec);
		struct kp_fc_rec *all = malloc(total * sizeof(*all));

		if (!all || kp_pread_all(w->rfd, all, bytes, 0) != (ssize_t)bytes) {
			free(all);
			return -1;
		}
		if (w->n)
			memcpy(all + w->nspilled, w->recs, w->n * sizeof(*all));
		free(w->recs);
		w->recs = all;
		w->n = w->cap = total;
		w->nspilled = 0;
	}
	qsort(w->recs, w->n, sizeof(*w->recs), cmp_rec_state);
	for (size_t i = 0; i < w->n; i++) {
		const struct kp_fc_rec *prev = n ? &w->recs[n - 1] : NULL;

		if (prev && prev->hash == w->recs[i].hash &&
		    !memcmp(prev->st, w->recs[i].st, sizeof(prev->st)) &&
		    (prev->flags & 0xff) == (w->recs[i].flags & 0xff))
			continue;
		w->recs[n++] = w->recs[i];
	}
	len = n * KP_FC_REC_LEN + n * 4 + KP_FC_FOOTER_LEN;
	idx = malloc(len);
	keys = malloc(n * sizeof(*keys));
	if (!idx || !keys)
		goto out;
	for (size_t i = 0; i < n; i++) {
		kp_fc_rec_put(idx + i * KP_FC_REC_LEN, &w->recs[i]);
		if (w->recs[i].flags & KP_FC_F_CONTENT)
			keys[nkeys++] = (uint32_t)i;
	}
	qsort_r(keys, nkeys, sizeof(*keys), cmp_key_slot, w->recs);
	for (size_t i = 0; i < nkeys; i++)
		kp_store32(idx + n * KP_FC_REC_LEN + 4 * i, keys[i]);
	kp_fc_footer_put(c, idx + n * KP_FC_REC_LEN + nkeys * 4, n, w->off, nkeys);
	r = kp_write_all(w->fd, idx, n * KP_FC_REC_LEN + nkeys * 4 + KP_FC_FOOTER_LEN);
out:
	free(idx);
	free(keys);
	return r;
}

/* Names the finished writer's file packs/<pid>-<time>.pack; 0 or -1. */
int kp_fc_writer_publish(struct kp_facts_cache *c, struct kp_fc_writer *w)
{
	char proc[64], name[KP_FC_NAME_LEN];
	struct timespec now;
	int dfd, r = -1;

	dfd = kp_fc_packs_dir(c->dirfd, false);
	if (dfd < 0)
		return -1;
	clock_gettime(CLOCK_REALTIME, &now);
	for (int i = 0; i < 8 && r < 0; i++) {
		snprintf(name, sizeof(name), "%lld%09ld-%ld-%d.pack", (long long)now.tv_sec,
			 now.tv_nsec, (long)getpid(), i);
		if (w->named) {
			/* renameat2(RENAME_NOREPLACE) is not everywhere: link, then unlink */
			r = linkat(dfd, w->tmp, dfd, name, 0);
		} else {
			snprintf(proc, sizeof(proc), "/proc/self/fd/%d", w->fd);
			r = linkat(AT_FDCWD, proc, dfd, name, AT_SYMLINK_FOLLOW);
		}
		if (r < 0 && errno != EEXIST)
			break;
	}
	if (w->named)
		unlinkat(dfd, w->tmp, 0);
	close(dfd);
	return r;
}

void kp_fc_writer_close(struct kp_facts_cache *c, struct kp_fc_writer *w)
{
	if (w->fd >= 0) {
		close(w->fd);
		if (w->named) { /* published or not: the temporary name goes */
			int dfd = kp_fc_packs_dir(c->dirfd, false);

			if (dfd >= 0) {
				unlinkat(dfd, w->tmp, 0);
				close(dfd);
			}
		}
	}
	if (w->rfd >= 0)
		close(w->rfd);
	free(w->recs);
	free(w->buf);
	memset(w, 0, sizeof(*w));
	w->fd = -1;
	w->rfd = -1;
}

/* Copies every valid entry of the pack @p into @w; 0, or -1 when @w failed. */
static int merge_pack(struct kp_facts_cache *c, struct kp_fc_writer *w, const struct kp_fc_pack *p)
{
	for (uint64_t i = 0; i < p->nrec; i++) {
		unsigned char *buf, key[KP_FC_KEY_LEN];
		struct kp_fc_rec r;

		if (!kp_fc_rec_get(p->recs + i * KP_FC_REC_LEN, &r) || r.len < KP_FC_HEADER_LEN ||
		    r.len > KP_FC_ENTRY_MAX)
			continue;
		buf = malloc(r.len);
		if (!buf)
			return -1;
		kp_fc_entry_key(&r, key);
		if (kp_pread_all(p->fd, buf, r.len, r.off) == (ssize_t)r.len &&
		    kp_fc_header_ok(c, buf, r.len, r.flags & 0xff, key, r.st[2]) &&
		    kp_fc_writer_add(c, w, &r, buf, r.len) < 0) {
			free(buf);
			return -1;
		}
		free(buf);
	}
	return 0;
}

static int cmp_smallest(const void *a, const void *b)
{
	const struct kp_dir_file *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * The merge's lock file of the cache directory @dirfd, one nobody but root or the user running
 * can open: flock() takes any descriptor open for reading, so a lock file others can read
 * (0644, as made before) could be held by any of them for ever and no run would merge again.
 * Such a file is replaced (a run holding the old one merges beside ours: packs are written
 * whole and named once, the worst is one merge too many). The descriptor, or -1.
 */
static int merge_lock(int dirfd)
{
	const int flags = O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
	struct stat st;
	int fd = openat(dirfd, "lock", flags, 0600);

	if (fd >= 0 && fstat(fd, &st) == 0 && kp_trusted_file(&st) && !(st.st_mode & 077))
		return fd;
	if (fd >= 0)
		close(fd);
	if (unlinkat(dirfd, "lock", 0) < 0 && errno != ENOENT)
		return -1;
	fd = openat(dirfd, "lock", flags | O_EXCL, 0600);
	if (fd >= 0 && (fstat(fd, &st) < 0 || !kp_trusted_file(&st) || (st.st_mode & 077))) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * More than KP_FC_MAX_PACKS packs: the smallest ones (all but KP_FC_MAX_PACKS / 2 - 1) become one,
 * so lookups open few files. One process at a time (merge_lock()); a run that finds it taken
 * leaves the merging to the holder.
 */
void kp_fc_merge_packs(struct kp_facts_cache *c)
{
	struct kp_fc_writer w = { .fd = -1, .rfd = -1 };
	struct kp_dir_file *names = NULL;
	size_t n, merge;
	int lock, dfd = -1;

	lock = merge_lock(c->dirfd);
	if (lock < 0)
		return;
	if (flock(lock, LOCK_EX | LOCK_NB) < 0)
		goto out;
	dfd = kp_fc_packs_dir(c->dirfd, false);
	if (dfd < 0 || kp_fc_list_packs(dfd, &names, &n) < 0 || n <= KP_FC_MAX_PACKS)
		goto out;
	qsort(names, n, sizeof(*names), cmp_smallest);
	merge = n - (KP_FC_MAX_PACKS / 2 - 1);
	for (size_t i = 0; i < merge; i++) {
		struct kp_fc_pack p;

		if (kp_fc_pack_open(c, dfd, names[i].name, &p) < 0)
			continue; /* not a pack of this build: pruning removes it */
		if (merge_pack(c, &w, &p) < 0) {
			kp_fc_pack_close(&p);
			goto out;
		}
		kp_fc_pack_close(&p);
	}
	if (kp_fc_writer_finish(c, &w) < 0 || kp_fc_writer_publish(c, &w) < 0)
		goto out;
	for (size_t i = 0; i < merge; i++)
		unlinkat(dfd, names[i].name, 0);
out:
	kp_fc_writer_close(c, &w);
	free(names);
	if (dfd >= 0)
		close(dfd);
	close(lock); /* and the lock with it */
}
