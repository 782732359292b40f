// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A stored manifest checked against the files as they are now (kp_inputs_recheck(),
 * inputs.h): every entry's state, else the digest that stands for it. A large manifest's
 * entries are looked up from several threads first (inputs-precheck.c); the walk here then
 * checks in order only those that did not plainly hold.
 */
#include "inputs.h"
#include "inputs-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/io.h"
#include "util/util.h"

long kp_inputs_decode(const unsigned char *m, size_t len, size_t off, char *path, struct entry *e)
{
	uint64_t pl, cl;

	if (off > len || len - off < REC_HEAD)
		return -1;
	/* every field is set below when the record is well formed: no memset() per entry */
	e->path = path;
	e->kind = m[off];
	e->flags = m[off + 1];
	pl = kp_load64(m + off + 2, false);
	e->err = (int)(int64_t)kp_load64(m + off + 10, false);
	for (int k = 0; k < 8; k++)
		e->st[k] = kp_load64(m + off + 18 + 8 * k, false);
	cl = kp_load64(m + off + 82, false);
	if (pl == 0 || pl >= KP_INPUTS_PATH_MAX || cl > CONTENT_MAX ||
	    len - off - REC_HEAD < pl + cl || e->kind < K_STATE || e->kind > K_KEYED ||
	    (e->flags & ~(F_FOLLOW | F_LOCAL)) ||
	    (e->kind >= K_HASHED && cl != KP_CONTENT_HASH_LEN) ||
	    (e->kind >= K_SUMMED && !(e->flags & F_LOCAL)))
		return -1;
	if (memchr(m + off + REC_HEAD, '\0', pl))
		return -1;
	if (path) {
		memcpy(path, m + off + REC_HEAD, pl);
		path[pl] = '\0';
	}
	e->rec = m + off;
	e->content = m + off + REC_HEAD + pl;
	e->clen = cl;
	return (long)(REC_HEAD + pl + cl);
}

int kp_inputs_head_count(const unsigned char *m, size_t len, uint64_t *count)
{
	if (len < 16 || memcmp(m, MAGIC, 8))
		return -1;
	*count = kp_load64(m + 8, false);
	/* a count the records cannot hold: malformed, said at once */
	return *count > len / REC_HEAD ? -1 : 0;
}

/* kp_inputs_walk() with the paths copied into @path, or not at all (NULL). */
static long walk_records(const unsigned char *m, size_t len, char *path,
			 bool (*fn)(void *arg, const struct entry *e), void *arg)
{
	uint64_t n;
	size_t off = 16;

	if (kp_inputs_head_count(m, len, &n) < 0)
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		struct entry e;
		long rl = kp_inputs_decode(m, len, off, path, &e);

		if (rl < 0 || (fn && !fn(arg, &e)))
			return -1;
		off += (size_t)rl;
	}
	return off == len ? (long)n : -1;
}

long kp_inputs_walk(const unsigned char *m, size_t len,
		    bool (*fn)(void *arg, const struct entry *e), void *arg)
{
	char path[KP_INPUTS_PATH_MAX];

	return walk_records(m, len, path, fn, arg);
}

/* kp_inputs_offsets()'s walk: each entry's offset noted. */
struct offsets {
	const unsigned char *m;
	size_t *off;
	size_t n;
};

static bool note_offset(void *arg, const struct entry *e)
{
	struct offsets *o = arg;

	o->off[o->n++] = (size_t)(e->rec - o->m);
	return true;
}

long kp_inputs_offsets(const unsigned char *m, size_t len, size_t *off, size_t *n)
{
	struct offsets o = { .m = m, .off = off };
	long r = walk_records(m, len, NULL, note_offset, &o);

	*n = o.n;
	return r;
}

/* The bytes of the regular file @path, still in the state @v, still hash to @hash. */
static bool same_bytes(const char *path, const uint64_t *v, const unsigned char *hash)
{
	unsigned char h[KP_CONTENT_HASH_LEN];
	struct stat st;
	uint64_t now[8];
	bool same = false;
	/* O_NONBLOCK: what replaced the file since the stat() may be a FIFO */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0)
		return false;
	if (fstat(fd, &st) == 0) {
		kp_file_state(&st, now);
		same = !memcmp(now, v, sizeof(now)) &&
		       kp_content_hash_fd(fd, (uint64_t)st.st_size, h) == 0 &&
		       !memcmp(h, hash, sizeof(h));
	}
	close(fd);
	return same;
}

/* A manifest being checked (kp_inputs_recheck()). */
struct check {
	struct kp_fs_devs devs; /* the file systems seen */
	const unsigned char *m;
	size_t len;
	struct timespec start;
	uid_t euid;
	bool by_digest;	      /* an entry held by its digest, its state changed */
	bool no_refresh;      /* a new state may not be stored (too new, untrusted, no memory) */
	unsigned char *fresh; /* @m with the new states of the entries that held by digest */
	/* the modules hashed again (K_KEYED) */
	struct kp_inputs_rehash rh;
	/* NULL: stop at the first entry that fails; else every one that fails, listed here */
	struct kp_inputs_changed *changed;
};

/*
 * The entry @e of a K_HASHED, K_SUMMED, K_LISTED or K_KEYED kind whose state changed to @v
 * (@st: the stat() that gave it) but kept its type and permissions (and size for a file:
 * kp_inputs_check_entry()'s V_DIGEST) still holds by its digest: on a file system whose
 * stat() is the kernel's, the same bytes or listing. Its new state then goes into @c's fresh
 * manifest when it may be stored (a K_HASHED entry stays one: its bytes are compared on
 * every check).
 */
static bool holds_by_digest(struct check *c, const struct entry *e, const struct stat *st,
			    const uint64_t *v)
{
	unsigned char h[KP_CONTENT_HASH_LEN];
	size_t at = (size_t)(e->rec - c->m);
	bool same;
	int fd;

	if (e->kind == K_KEYED) {
		/* a module another user can write is not taken by its bytes (fs-trust.h) */
		if (!kp_state_trusted(st, KP_FS_LOCAL, c->euid))
			return false;
		if (v[2] > KP_INPUTS_REHASH_MAX - c->rh.bytes) {
			c->rh.over = true;
			return false;
		}
		c->rh.bytes += v[2];
		c->rh.files++;
	}
	fd = kp_inputs_open_same(e->path, e->flags & F_FOLLOW, v);
	if (fd < 0)
		return false;
	same = kp_fs_class_of_fd(fd) == KP_FS_LOCAL &&
	       kp_inputs_digest_fd(fd, st, v, NULL, h) == 0 && !memcmp(h, e->content, sizeof(h));
	close(fd);
	if (!same)
		return false;
	c->by_digest = true;
	/* a state too new, or one that does not name the file's bytes, is not stored */
	if (kp_inputs_state_too_new(v, &c->start) ||
	    (e->kind == K_SUMMED && !kp_state_trusted(st, KP_FS_LOCAL, c->euid)))
		c->no_refresh = true;
	if (c->no_refresh)
		return true;
	if (!c->fresh) {
		c->fresh = malloc(c->len);
		if (!c->fresh) {
			c->no_refresh = true;
			return true;
		}
		memcpy(c->fresh, c->m, c->len);
	}
	for (int k = 0; k < 8; k++)
		kp_store64(c->fresh + at + 18 + 8 * k, v[k]);
	return true;
}

enum kp_inputs_verdict kp_inputs_check_entry(const struct entry *e, struct kp_fs_devs *devs,
					     struct stat *st, uint64_t v[8])
{
	int r;

	if (e->kind == K_CONTENT) {
		unsigned char buf[CONTENT_MAX];
		int fd = open(e->path, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? kp_pread_all(fd, buf, sizeof(buf), 0) : -1;

		if (fd >= 0)
			close(fd);
		return n >= 0 && (size_t)n == e->clen && !memcmp(buf, e->content, e->clen)
			       ? V_HOLDS
			       : V_FAILS;
	}
	r = (e->flags & F_FOLLOW) ? stat(e->path, st) : lstat(e->path, st);
	if (e->kind == K_ABSENT)
		return r < 0 && errno == e->err ? V_HOLDS : V_FAILS;
	if (r < 0)
		return V_FAILS;
	kp_file_state(st, v);
	/*
	 * A digest stands for the bytes (a directory's: the names) of the same type and
	 * permissions, and for a file the same size: anything else fails without reading
	 */
	if (memcmp(v, e->st, 8 * sizeof(*v)))
		return e->kind >= K_HASHED && v[7] == e->st[7] &&
				       (e->kind == K_LISTED || v[2] == e->st[2])
			       ? V_DIGEST
			       : V_FAILS;
	/*
	 * A state recorded on a file system whose stat() the kernel keeps must still be on
	 * one: a device number reused by a FUSE mount would report any state.
	 */
	if (e->flags & F_LOCAL) {
		int c = kp_fs_devs_find(devs, (uint64_t)st->st_dev);

		if (c < 0) {
			c = kp_fs_class_of_path(e->path, st, e->flags & F_FOLLOW);
			if (c < 0)
				return V_FAILS;
			kp_fs_devs_add(devs, (uint64_t)st->st_dev, (enum kp_fs_class)c);
		}
		if (c != KP_FS_LOCAL)
			return V_FAILS;
	}
	return e->kind != K_HASHED || same_bytes(e->path, e->st, e->content) ? V_HOLDS : V_FAILS;
}

/*
 * The entry still holds (@arg: the check): by its look-up, else by its digest, which may
 * store its new state in the check's fresh manifest and counts what was hashed again.
 */
static bool holds(void *arg, const struct entry *e)
{
	struct check *chk = arg;
	struct stat st;
	uint64_t v[8];

	switch (kp_inputs_check_entry(e, &chk->devs, &st, v)) {
	case V_HOLDS:
		return true;
	case V_DIGEST:
		return holds_by_digest(chk, e, &st, v);
	default:
		return false;
	}
}

/*
 * kp_inputs_changes()'s walk: each entry checked (holds()); one that fails is listed in
 * @arg's changed list, and the walk goes on. False only when the list cannot grow.
 */
static bool list_failing(void *arg, const struct entry *e)
{
	struct check *chk = arg;
	struct kp_inputs_changed *c = chk->changed;
	char *path, **paths;

	if (holds(arg, e))
		return true;
	c->n++;
	/* a path recorded twice (stat() and lstat(), or opened again) is listed once */
	for (size_t i = c->npaths; i-- > 0;)
		if (!strcmp(c->paths[i], e->path))
			return true;
	if (c->npaths == KP_INPUTS_CHANGED_MAX)
		return false;
	paths = realloc(c->paths, (c->npaths + 1) * sizeof(*paths));
	if (!paths)
		return false;
	c->paths = paths;
	path = strdup(e->path);
	if (!path)
		return false;
	c->paths[c->npaths++] = path;
	return true;
}

/*
 * kp_inputs_walk() with @fn, the entries of a large manifest looked up from several threads
 * first (kp_inputs_precheck(); @stop: @fn stops the walk at the first entry that fails):
 * @fn is then called only on those that did not plainly hold, still from this thread in the
 * manifest's order, so that what depends on the entries before (the first that fails, the
 * order of those listed, the budget of modules hashed again, the fresh manifest) is the
 * one-thread walk's. An entry that failed is looked up again: the answer is the one of that
 * look-up, as it would be in a walk that reached it then.
 */
static long walk_checked(const unsigned char *m, size_t len, unsigned jobs, bool stop,
			 bool (*fn)(void *arg, const struct entry *e), void *arg)
{
	struct kp_inputs_prechecked pc;
	char path[KP_INPUTS_PATH_MAX];
	long r;

	if (kp_inputs_precheck(m, len, jobs, stop, &pc) < 0)
		return kp_inputs_walk(m, len, fn, arg);
	r = pc.whole ? (long)pc.n : -1;
	for (size_t i = 0; i < pc.n; i++) {
		struct entry e;

		if (pc.verdict[i] == V_HOLDS)
			continue;
		if (kp_inputs_decode(m, len, pc.off[i], path, &e) < 0 || !fn(arg, &e)) {
			r = -1;
			break;
		}
	}
	kp_inputs_prechecked_release(&pc);
	return r;
}

int kp_inputs_changes(const unsigned char *m, size_t len, struct kp_inputs_changed *changed)
{
	/* the new states of those that held by their bytes: a manifest carried over's */
	struct check c = { .m = m, .len = len, .euid = geteuid(), .changed = changed };

	memset(changed, 0, sizeof(*changed));
	memset(&c.devs, 0, sizeof(c.devs));
	clock_gettime(CLOCK_REALTIME, &c.start);
	changed->whole = kp_inputs_walk(m, len, list_failing, &c) >= 0;
	changed->stale = c.by_digest && c.no_refresh;
	if (changed->stale)
		free(c.fresh);
	else
		changed->fresh = c.fresh;
	return changed->whole ? 0 : -1;
}

int kp_inputs_recheck_listed(const unsigned char *m, size_t len, unsigned char **fresh,
			     struct kp_inputs_rehash *rh, struct kp_inputs_changed *changed,
			     unsigned jobs)
{
	struct check c = { .m = m, .len = len, .euid = geteuid(), .changed = changed };
	bool whole;
	int r;

	if (fresh)
		*fresh = NULL;
	memset(changed, 0, sizeof(*changed));
	memset(&c.devs, 0, sizeof(c.devs));
	clock_gettime(CLOCK_REALTIME, &c.start);
	whole = walk_checked(m, len, jobs, false, list_failing, &c) >= 0;
	if (rh)
		*rh = c.rh;
	if (whole && !changed->n) {
		/* every entry held: kp_inputs_recheck()'s answer, nothing listed */
		r = c.by_digest ? 2 : 1;
		if (r == 2 && fresh && !c.no_refresh)
			*fresh = c.fresh;
		else
			free(c.fresh);
		return r;
	}
	/* kp_inputs_changes()'s */
	changed->whole = whole;
	changed->stale = c.by_digest && c.no_refresh;
	if (changed->stale)
		free(c.fresh);
	else
		changed->fresh = c.fresh;
	return 0;
}

void kp_inputs_changed_release(struct kp_inputs_changed *changed)
{
	if (!changed)
		return;
	for (size_t i = 0; i < changed->npaths; i++)
		free(changed->paths[i]);
	free(changed->paths);
	free(changed->fresh);
	memset(changed, 0, sizeof(*changed));
}

int kp_inputs_recheck(const unsigned char *m, size_t len, unsigned char **fresh)
{
	return kp_inputs_recheck_counted(m, len, fresh, NULL, 1);
}

int kp_inputs_recheck_counted(const unsigned char *m, size_t len, unsigned char **fresh,
			      struct kp_inputs_rehash *rh, unsigned jobs)
{
	struct check c = { .m = m, .len = len, .euid = geteuid() };
	int r;

	if (fresh)
		*fresh = NULL;
	/* no /dev entry: a state recorded as on a local file system is checked as one */
	memset(&c.devs, 0, sizeof(c.devs));
	clock_gettime(CLOCK_REALTIME, &c.start);
	r = walk_checked(m, len, jobs, true, holds, &c) < 0 ? 0 : c.by_digest ? 2 : 1;
	if (rh)
		*rh = c.rh;
	if (r == 2 && fresh && !c.no_refresh)
		*fresh = c.fresh;
	else
		free(c.fresh);
	return r;
}

int kp_inputs_unchanged(const unsigned char *m, size_t len)
{
	return kp_inputs_recheck(m, len, NULL) != 0;
}

size_t kp_inputs_count(const unsigned char *m, size_t len)
{
	long n = kp_inputs_walk(m, len, NULL, NULL);

	return n < 0 ? 0 : (size_t)n;
}
