// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The run's manifest handed to the result cache (kp_inputs_stream(), inputs.h): every
 * digested record checked still in its state, the module digests put in.
 */
#include "inputs.h"
#include "inputs-internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/io.h"
#include "util/util.h"

#define STREAM_CHUNK 16384 /* bytes of the spill file read back at a time to store it */

/*
 * The digested records among the @len bytes of whole records at @p (K_HASHED, K_SUMMED,
 * K_LISTED) are still in their recorded states: their digests are of what the run read. The
 * bytes of whole records scanned (a record cut at the end is left), -1 when one changed.
 */
static long scan_digested(const unsigned char *p, size_t len)
{
	char path[4096];
	size_t off = 0;

	while (len - off >= REC_HEAD) {
		uint64_t pl = kp_load64(p + off + 2, false), cl = kp_load64(p + off + 82, false);
		unsigned char kind = p[off];
		struct stat st;
		uint64_t v[8];
		int r;

		if (pl > len - off - REC_HEAD || cl > len - off - REC_HEAD - pl)
			break;
		if (kind >= K_HASHED) {
			/* a path this long is refused at the replay (walk()) */
			if (pl >= sizeof(path))
				return -1;
			memcpy(path, p + off + REC_HEAD, pl);
			path[pl] = '\0';
			r = (p[off + 1] & F_FOLLOW) ? stat(path, &st) : lstat(path, &st);
			if (r < 0)
				return -1;
			kp_file_state(&st, v);
			for (int k = 0; k < 8; k++)
				if (v[k] != kp_load64(p + off + 18 + 8 * k, false))
					return -1;
		}
		off += REC_HEAD + pl + cl;
	}
	return (long)off;
}

/*
 * Hands the records, spilled then buffered, to @fn in whole records: @fn returns the bytes
 * of whole records it took (a record cut at the end is given again with what follows), <= 0
 * to stop. 0 when every record was taken, else -1; *@why is set here only when the spilled
 * records could not be read (no memory, a read error), the caller's otherwise.
 */
static int walk_records(const struct kp_inputs *in,
			long (*fn)(const unsigned char *p, size_t len, void *arg), void *arg,
			const char **why)
{
	/* the largest record: a path and a pseudo-file's bytes */
	size_t cap = REC_HEAD + 4096 + CONTENT_MAX;
	unsigned char *chunk = NULL;
	long used;
	int r = -1;

	if (in->spilled) {
		chunk = malloc(cap);
		if (!chunk) {
			*why = "out of memory";
			return -1;
		}
	}
	for (uint64_t off = 0; off < in->spilled; off += (uint64_t)used) {
		size_t n = in->spilled - off < cap ? (size_t)(in->spilled - off) : cap;

		if (kp_pread_all(in->spill, chunk, n, off) != (ssize_t)n) {
			*why = "the inputs' temporary file could not be read";
			goto out;
		}
		used = fn(chunk, n, arg);
		if (used <= 0) /* a record longer than any recorded: never, unless corrupted */
			goto out;
	}
	if (in->len && fn(in->buf, in->len, arg) != (long)in->len)
		goto out;
	r = 0;
out:
	free(chunk);
	return r;
}

static long scan_digested_fn(const unsigned char *p, size_t len, void *arg)
{
	(void)arg;
	return scan_digested(p, len);
}

/*
 * Every digested record still in its state at the end of the run (a file or directory
 * changed after it was digested: what the run read may not be what was digested, and a
 * replay that compares digests would not see it). 0 or -1 with @why.
 */
static int digests_hold(struct kp_inputs *in, const char **why)
{
	*why = "an input changed during the run";
	return walk_records(in, scan_digested_fn, NULL, why);
}

/*
 * Puts the whole records among the @len bytes at @p to @put (under @in->lock), each K_STATE
 * record of a regular file on a local file system whose state has a module digest
 * (kp_in_note_bytes()) as a K_KEYED one with it; adds the bytes put to *@out. The bytes of
 * whole records taken (a record cut at the end is left to the next call), -1 when @put
 * failed.
 */
static long put_keyed(const struct kp_inputs *in, const unsigned char *p, size_t len,
		      kp_inputs_put put, void *arg, uint64_t *out)
{
	size_t off = 0, run = 0; /* the unchanged records from @run to @off: put at once */

	while (len - off >= REC_HEAD) {
		uint64_t pl = kp_load64(p + off + 2, false), cl = kp_load64(p + off + 82, false);
		unsigned char h[REC_HEAD];
		uint64_t v[8];
		size_t i;

		if (pl > len - off - REC_HEAD || cl > len - off - REC_HEAD - pl)
			break;
		if (p[off] != K_STATE || !(p[off + 1] & F_LOCAL) || cl) {
			off += REC_HEAD + pl + cl;
			continue;
		}
		for (int k = 0; k < 8; k++)
			v[k] = kp_load64(p + off + 18 + 8 * k, false);
		if (!S_ISREG((mode_t)v[7]) ||
		    !in->keyed[i = kp_inputs_keyed_slot(in->keyed, in->kcap, v)].st[7]) {
			off += REC_HEAD + pl;
			continue;
		}
		memcpy(h, p + off, REC_HEAD);
		h[0] = K_KEYED;
		kp_store64(h + 82, KP_CONTENT_HASH_LEN);
		if ((off > run && put(arg, p + run, off - run) < 0) || put(arg, h, REC_HEAD) < 0 ||
		    put(arg, p + off + REC_HEAD, (size_t)pl) < 0 ||
		    put(arg, in->keyed[i].h, KP_CONTENT_HASH_LEN) < 0)
			return -1;
		*out += off - run + REC_HEAD + pl + KP_CONTENT_HASH_LEN;
		off += REC_HEAD + pl;
		run = off;
	}
	if (off > run && put(arg, p + run, off - run) < 0)
		return -1;
	*out += off - run;
	return (long)off;
}

struct keyed_put {
	const struct kp_inputs *in;
	kp_inputs_put put;
	void *arg;
	uint64_t *body;
};

static long put_keyed_fn(const unsigned char *p, size_t len, void *arg)
{
	const struct keyed_put *k = arg;

	return put_keyed(k->in, p, len, k->put, k->arg, k->body);
}

/*
 * The records, spilled then buffered, to @put with the module digests put in
 * (put_keyed()); the bytes put in *@body. 0 or -1 with @why.
 */
static int stream_keyed(const struct kp_inputs *in, kp_inputs_put put, void *arg, uint64_t *body,
			const char **why)
{
	struct keyed_put k = { in, put, arg, body };

	*body = 0;
	*why = "cannot write the entry";
	return walk_records(in, put_keyed_fn, &k, why);
}

int kp_inputs_stream(struct kp_inputs *in, kp_inputs_put put, void *arg, uint64_t *len,
		     uint64_t *count, const char **why)
{
	unsigned char chunk[STREAM_CHUNK];
	uint64_t body;
	int r = -1;

	*len = 0;
	*count = 0;
	pthread_mutex_lock(&in->lock);
	body = in->spilled + in->len;
	*why = in->uncacheable;
	if (*why || digests_hold(in, why) < 0)
		goto out;
	memcpy(chunk, MAGIC, 8);
	kp_store64(chunk + 8, in->n);
	*why = "cannot write the entry";
	if (put(arg, chunk, 16) < 0)
		goto out;
	if (in->nkeyed) {
		if (stream_keyed(in, put, arg, &body, why) < 0)
			goto out;
		goto done;
	}
	/* the spilled records, read back a chunk at a time, then the buffer's */
	for (uint64_t off = 0; off < in->spilled;) {
		size_t n = in->spilled - off < sizeof(chunk) ? (size_t)(in->spilled - off)
							     : sizeof(chunk);

		if (kp_pread_all(in->spill, chunk, n, off) != (ssize_t)n) {
			*why = "the inputs' temporary file could not be read";
			goto out;
		}
		if (put(arg, chunk, n) < 0)
			goto out;
		off += n;
	}
	if (in->len && put(arg, in->buf, in->len) < 0)
		goto out;
done:
	*why = NULL;
	*len = 16 + body;
	*count = in->n;
	r = 0;
out:
	pthread_mutex_unlock(&in->lock);
	return r;
}
