// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A stored manifest carried over to a run that read again only the inputs that changed
 * (kp_inputs_carry(), inputs.h: a splice's entry), and two manifests compared as sets of
 * entries (kp_inputs_differ(): the carried one against the one a whole run recorded).
 */
#include "inputs.h"
#include "inputs-internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/io.h"
#include "util/util.h"

/* A manifest being carried over (kp_inputs_carry()). */
struct carry {
	struct kp_inputs *in; /* the recorder whose module digests stand for bytes read */
	const struct kp_inputs_changed *ch;
	unsigned char *out; /* the manifest carried over, being written */
	size_t len, cap;
	struct timespec start;
	uid_t euid;
	size_t carried; /* entries replaced */
	const char *why;
	const char **sorted; /* @ch's paths in strcmp() order: each entry looked up in log n */
	/*
	 * every changed path a module whose state now is the one whose bytes the run noted
	 * (kp_inputs_carry_noted()): the bytes the run read, not bytes written after
	 */
	bool noted;
};

static int cmp_path(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* @c->ch's paths sorted into @c->sorted; false when out of memory. */
static bool index_paths(struct carry *c)
{
	size_t n = c->ch->npaths;

	if (!n)
		return true;
	c->sorted = malloc(n * sizeof(*c->sorted));
	if (!c->sorted) {
		c->why = "out of memory";
		return false;
	}
	memcpy(c->sorted, c->ch->paths, n * sizeof(*c->sorted));
	qsort(c->sorted, n, sizeof(*c->sorted), cmp_path);
	return true;
}

static bool listed(const struct carry *c, const char *path)
{
	return c->ch->npaths &&
	       bsearch(&path, c->sorted, c->ch->npaths, sizeof(*c->sorted), cmp_path);
}

/* Appends @len bytes to @c->out; false when out of memory. */
static bool put(struct carry *c, const void *p, size_t len)
{
	if (kp_grow(&c->out, &c->cap, c->len + len, 1) < 0) {
		c->why = "out of memory";
		return false;
	}
	memcpy(c->out + c->len, p, len);
	c->len += len;
	return true;
}

/* The module digest @c->in has for the state @v (kp_in_note_bytes()) into @h: true, else false. */
static bool keyed(struct carry *c, const uint64_t *v, unsigned char *h)
{
	bool found = false;
	size_t i;

	pthread_mutex_lock(&c->in->lock);
	if (c->in->kcap) {
		i = kp_inputs_keyed_slot(c->in->keyed, c->in->kcap, v);
		found = c->in->keyed[i].st[7] != 0;
		if (found)
			memcpy(h, c->in->keyed[i].h, KP_CONTENT_HASH_LEN);
	}
	pthread_mutex_unlock(&c->in->lock);
	return found;
}

/*
 * The entry @e of a path that changed, recorded again as this run's recorder would record
 * it: the state stat() gives (a regular file still, of the same type, on a file system of
 * the same class, not too new), its digest again when its state does not name its bytes
 * (K_HASHED, K_SUMMED), and a module state with a digest of its bytes noted in this run
 * (the facts cache's content key: kp_in_note_bytes()) K_KEYED with it, else K_STATE, as
 * kp_inputs_stream() writes them. False with @c->why when it cannot be.
 */
static bool replace(struct carry *c, const struct entry *e)
{
	unsigned char h[KP_CONTENT_HASH_LEN], head[REC_HEAD];
	unsigned char kind = e->kind == K_KEYED ? K_STATE : e->kind;
	size_t pl = strlen(e->path);
	bool digest = false;
	struct stat st;
	uint64_t v[8];
	int r, fd;

	if (kind != K_STATE && kind != K_HASHED && kind != K_SUMMED) {
		c->why = "a changed input is not a file recorded by its state";
		return false;
	}
	/* a digest made now would be of the bytes now, maybe not those the run read */
	if (c->noted && kind != K_STATE) {
		c->why = "a changed input is recorded by its bytes, not its state";
		return false;
	}
	r = (e->flags & F_FOLLOW) ? stat(e->path, &st) : lstat(e->path, &st);
	if (r < 0 || !S_ISREG(st.st_mode) || (st.st_mode & S_IFMT) != (e->st[7] & S_IFMT)) {
		c->why = "a changed input is no longer a regular file";
		return false;
	}
	kp_file_state(&st, v);
	if (kp_inputs_state_too_new(v, &c->start)) {
		c->why = "a changed input changed less than a second ago";
		return false;
	}
	if ((e->flags & F_LOCAL) &&
	    kp_fs_class_of_path(e->path, &st, e->flags & F_FOLLOW) != KP_FS_LOCAL) {
		c->why = "a changed input is no longer on a local file system";
		return false;
	}
	if (kind == K_SUMMED && !kp_state_trusted(&st, KP_FS_LOCAL, c->euid)) {
		c->why = "a changed input's state is no longer trusted";
		return false;
	}
	if (kind != K_STATE) {
		fd = kp_inputs_open_same(e->path, e->flags & F_FOLLOW, v);
		if (fd < 0) {
			c->why = "a changed input changed while it was carried";
			return false;
		}
		r = kp_inputs_digest_fd(fd, &st, v, NULL, h);
		close(fd);
		if (r < 0) {
			c->why = "a changed input could not be hashed";
			return false;
		}
		digest = true;
	} else if ((e->flags & F_LOCAL) && keyed(c, v, h)) {
		kind = K_KEYED;
		digest = true;
	} else if (c->noted) {
		c->why = "a changed module is not in the state whose bytes the run read";
		return false;
	}
	memcpy(head, e->rec, REC_HEAD);
	head[0] = kind;
	for (int k = 0; k < 8; k++)
		kp_store64(head + 18 + 8 * k, v[k]);
	kp_store64(head + 82, digest ? KP_CONTENT_HASH_LEN : 0);
	if (!put(c, head, REC_HEAD) || !put(c, e->path, pl) || (digest && !put(c, h, sizeof(h))))
		return false;
	c->carried++;
	return true;
}

/* kp_inputs_walk()'s callback: an entry of a changed path replaced, the others kept. */
static bool carry_one(void *arg, const struct entry *e)
{
	struct carry *c = arg;

	if (listed(c, e->path))
		return replace(c, e);
	return put(c, e->rec, REC_HEAD + strlen(e->path) + e->clen);
}

/* kp_inputs_carry() and kp_inputs_carry_noted() (@noted). */
static int carry_over(struct kp_inputs *in, const unsigned char *m, size_t len,
		      const struct kp_inputs_changed *ch, bool noted, unsigned char **out,
		      size_t *olen, size_t *carried, const char **why)
{
	struct carry c = { .in = in, .ch = ch, .euid = geteuid(), .noted = noted };

	*out = NULL;
	*olen = 0;
	*carried = 0;
	if (!ch || !ch->whole) {
		*why = "the changed inputs are not all known";
		return -1;
	}
	if (ch->stale) {
		*why = "an input held by its bytes has a new state that may not be stored";
		return -1;
	}
	/* the same entries, those that held by their bytes in their new states */
	if (ch->fresh)
		m = ch->fresh;
	clock_gettime(CLOCK_REALTIME, &c.start);
	/*
	 * sized once for as many bytes as the stored manifest (a replaced entry differs by a
	 * digest at most): no doubling and copy of a megabyte, nor zeroing of what is written
	 */
	if (len) {
		c.out = malloc(len);
		c.cap = c.out ? len : 0;
	}
	/* the head (magic, count) as stored: the entries are as many */
	if (!index_paths(&c) || len < 16 || !put(&c, m, 16) ||
	    kp_inputs_walk(m, len, carry_one, &c) < 0) {
		*why = c.why ? c.why : "the stored manifest is malformed";
		free(c.sorted);
		free(c.out);
		return -1;
	}
	free(c.sorted);
	*out = c.out;
	*olen = c.len;
	*carried = c.carried;
	return 0;
}

int kp_inputs_carry(struct kp_inputs *in, const unsigned char *m, size_t len,
		    const struct kp_inputs_changed *ch, unsigned char **out, size_t *olen,
		    size_t *carried, const char **why)
{
	return carry_over(in, m, len, ch, false, out, olen, carried, why);
}

int kp_inputs_carry_noted(struct kp_inputs *in, const unsigned char *m, size_t len,
			  const struct kp_inputs_changed *ch, unsigned char **out, size_t *olen,
			  size_t *carried, const char **why)
{
	return carry_over(in, m, len, ch, true, out, olen, carried, why);
}

/* A record of a manifest: its bytes (kp_inputs_differ()). */
struct rec {
	const unsigned char *p;
	size_t len;
};

/* A manifest's records, in the order recorded. */
struct recs {
	struct rec *r;
	size_t n, cap;
};

static bool collect(void *arg, const struct entry *e)
{
	struct recs *r = arg;

	if (kp_grow(&r->r, &r->cap, r->n + 1, sizeof(*r->r)) < 0)
		return false;
	r->r[r->n].p = e->rec;
	r->r[r->n].len = REC_HEAD + strlen(e->path) + e->clen;
	r->n++;
	return true;
}

static int cmp_rec(const void *x, const void *y)
{
	const struct rec *a = x, *b = y;
	int d = memcmp(a->p, b->p, a->len < b->len ? a->len : b->len);

	return d ? d : (a->len > b->len) - (a->len < b->len);
}

/*
 * What differs between the record @a and those of its path in @b: its kind, flags, error,
 * state or digest where @b has one of the same path, else that @b has none.
 */
static const char *what_differs(const struct rec *a, const struct recs *b)
{
	uint64_t pl = kp_load64(a->p + 2, false);
	const char *what = "not in the other";

	for (size_t i = 0; i < b->n; i++) {
		const unsigned char *q = b->r[i].p;

		if (kp_load64(q + 2, false) != pl || memcmp(q + REC_HEAD, a->p + REC_HEAD, pl))
			continue;
		if (!cmp_rec(a, &b->r[i]))
			return "recorded once more in one of them";
		what = q[0] != a->p[0]		       ? "its kind"
		       : q[1] != a->p[1]	       ? "its flags"
		       : memcmp(q + 10, a->p + 10, 8)  ? "its error"
		       : memcmp(q + 18, a->p + 18, 64) ? "its state"
		       : b->r[i].len != a->len	       ? "its digest's length"
						       : "its digest";
	}
	return what;
}

int kp_inputs_differ(const unsigned char *a, size_t alen, const unsigned char *b, size_t blen,
		     char *note, size_t len)
{
	struct recs ra = { 0 }, rb = { 0 };
	int r = -1;

	if (kp_inputs_walk(a, alen, collect, &ra) < 0 ||
	    kp_inputs_walk(b, blen, collect, &rb) < 0) {
		snprintf(note, len, "malformed, or out of memory");
		goto out;
	}
	/* the order is the run's: modules are read on several threads */
	if (ra.n)
		qsort(ra.r, ra.n, sizeof(*ra.r), cmp_rec);
	if (rb.n)
		qsort(rb.r, rb.n, sizeof(*rb.r), cmp_rec);
	r = 0;
	for (size_t i = 0; i < ra.n && i < rb.n; i++) {
		if (!cmp_rec(&ra.r[i], &rb.r[i]))
			continue;
		/* the first that differs, in the order of their bytes: kind, flags, path */
		uint64_t pl = kp_load64(ra.r[i].p + 2, false);

		snprintf(note, len, "the entry of %.*s: %s", (int)(pl < 160 ? pl : 160),
			 (const char *)ra.r[i].p + REC_HEAD, what_differs(&ra.r[i], &rb));
		r = 1;
		goto out;
	}
	if (ra.n != rb.n) {
		snprintf(note, len, "%zu entries where the other has %zu", ra.n, rb.n);
		r = 1;
	}
out:
	free(ra.r);
	free(rb.r);
	return r;
}
