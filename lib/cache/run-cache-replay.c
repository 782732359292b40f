// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Replaying a result cache entry (run-cache.h): the entry mapped and checked (trusted, whole,
 * ours, the same key, its CRC, its inputs unchanged: looked up from several threads for a
 * large manifest), its output written again, an entry whose inputs were rewritten with the
 * same bytes stored again with their new states, and a miss's store and manifest (in the
 * mapping) and changed inputs kept for the command.
 */
#include "run-cache.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "file/inputs.h"
#include "file/bytes.h"
#include "run-cache-internal.h"
#include "trusted-dir.h"
#include "util/crc32.h"
#include "util/io.h"

#define TOUCH_EVERY 3600 /* a hit refreshes its entry's mtime (least recently used) */

static uint32_t entry_crc(const unsigned char *p, size_t len)
{
	unsigned char h[HDR_LEN];

	memcpy(h, p, HDR_LEN);
	memset(h + 48, 0, 4);
	return kp_crc32(kp_crc32(0, h, HDR_LEN), p + HDR_LEN, len - HDR_LEN);
}

/* The output chunks of @p (@len bytes) are well formed; written to stdout/stderr if @write. */
static bool chunks(const unsigned char *p, uint64_t len, bool write)
{
	uint64_t off = 0;

	while (off < len) {
		uint32_t n;

		if (len - off < 5 || (p[off] != 1 && p[off] != 2))
			return false;
		n = kp_load32(p + off + 1, false);
		if (len - off - 5 < n)
			return false;
		if (write)
			kp_write_all(p[off] == 1 ? STDOUT_FILENO : STDERR_FILENO, p + off + 5, n);
		off += 5 + (uint64_t)n;
	}
	return true;
}

/* The output chunks of @p (@len bytes, well formed: chunks()) hold no byte for stderr. */
static bool quiet(const unsigned char *p, uint64_t len)
{
	for (uint64_t off = 0; off < len; off += 5 + (uint64_t)kp_load32(p + off + 1, false))
		if (p[off] == 2 && kp_load32(p + off + 1, false))
			return false;
	return true;
}

/* An entry mapped for a replay. */
struct replay {
	const struct kp_run_cache *rc;
	unsigned jobs; /* threads looking up the manifest's entries (file/inputs.h) */
	const unsigned char *m;
	uint64_t size, olen, klen, mlen, slen;
	bool intact;	      /* whole, ours, the same key: only its inputs may have changed */
	int how;	      /* kp_inputs_recheck()'s answer */
	unsigned char *fresh; /* the manifest with new states, when they are to be stored */
	/* the modules hashed again */
	struct kp_inputs_rehash rh;
	bool listed;			  /* the recheck listed what changed: @changed */
	struct kp_inputs_changed changed; /* until keep_store() hands it to the run cache */
};

/* Under kp_bytes_guard() (a file truncated under the mapping): 1 when the entry is whole,
 * ours and its inputs all unchanged, else 0. */
static int entry_holds(void *arg)
{
	struct replay *r = arg;
	const unsigned char *m = r->m;

	if (!(!memcmp(m, MAGIC, 8) && kp_load32(m + 8, false) == KP_RUNS_FORMAT &&
	      r->olen <= r->size && r->klen <= r->size && r->mlen <= r->size &&
	      r->slen <= r->size && HDR_LEN + r->olen + r->klen + r->mlen + r->slen == r->size &&
	      r->klen == r->rc->key.len && !memcmp(m + HDR_LEN + r->olen, r->rc->key.p, r->klen) &&
	      kp_load32(m + 48, false) == entry_crc(m, (size_t)r->size) &&
	      chunks(m + HDR_LEN, r->olen, false)))
		return 0;
	r->intact = true;
	/* a miss keeps an entry with a store and every input that changed (keep_store()): one
	 * walk lists them, going on past the first instead of starting again */
	if (r->slen) {
		r->listed = true;
		r->how = kp_inputs_recheck_listed(m + HDR_LEN + r->olen + r->klen, (size_t)r->mlen,
						  &r->fresh, &r->rh, &r->changed, r->jobs);
	} else {
		r->how = kp_inputs_recheck_counted(m + HDR_LEN + r->olen + r->klen, (size_t)r->mlen,
						   &r->fresh, &r->rh, r->jobs);
	}
	return r->how != 0;
}

/*
 * Under kp_bytes_guard(): writes the replayed entry again to @r->rc's unnamed file (its
 * descriptor in @r->rc->tfd) with the manifest @r->fresh; the new header is left in @r->rc's
 * buffer. 0 or -1.
 */
static int rewrite(void *arg)
{
	const struct replay *r = arg;
	struct kp_run_cache *rc = (struct kp_run_cache *)r->rc;
	uint64_t body = r->olen + r->klen;
	const unsigned char *store = r->m + HDR_LEN + body + r->mlen;
	unsigned char h[HDR_LEN];
	uint32_t crc;

	memcpy(h, r->m, HDR_LEN);
	memset(h + 48, 0, 4);
	crc = kp_crc32(kp_crc32(0, h, HDR_LEN), r->m + HDR_LEN, (size_t)body);
	crc = kp_crc32(crc, r->fresh, (size_t)r->mlen);
	crc = kp_crc32(crc, store, (size_t)r->slen);
	kp_store32(h + 48, crc);
	if (kp_write_all(rc->tfd, h, HDR_LEN) < 0 ||
	    kp_write_all(rc->tfd, r->m + HDR_LEN, (size_t)body) < 0 ||
	    kp_write_all(rc->tfd, r->fresh, (size_t)r->mlen) < 0 ||
	    kp_write_all(rc->tfd, store, (size_t)r->slen) < 0)
		return -1;
	memcpy(rc->buf, h, HDR_LEN);
	return 0;
}

/*
 * A hit through its inputs' bytes (states changed, as after a depmod that wrote the same
 * indexes): the entry stored again with the new states, so that the next replay needs
 * stat()s only. Best effort: the replay stands whatever happens here.
 */
static const char *refresh(struct kp_run_cache *rc, struct replay *r, struct kp_bytes *b)
{
	unsigned char h[HDR_LEN];
	struct kp_err err;
	const char *why = "cannot write the entry";

	rc->buf = malloc(HDR_LEN);
	rc->tfd = kp_rc_tmpfile(rc->dfd, rc->tmp, sizeof(rc->tmp));
	if (rc->buf && rc->tfd >= 0 && kp_bytes_guard(b, rewrite, r, &err) == 0) {
		memcpy(h, rc->buf, HDR_LEN);
		if (kp_rc_finish_entry(rc->tfd, h, r->size) == 0 &&
		    kp_rc_publish(rc->dfd, rc->tfd, rc->tmp, rc->name, r->size) == 0) {
			why = NULL;
			rc->tmp[0] = '\0'; /* named now: not to be removed */
		}
	}
	free(rc->buf);
	rc->buf = NULL;
	kp_rc_tmp_drop(rc->dfd, rc->tfd, rc->tmp);
	rc->tfd = -1;
	return why;
}

/*
 * Under kp_bytes_guard(): what the miss keeps of an intact entry, its store and manifest read
 * in the mapping (kept_store()), with the entries of its manifest that changed (every one
 * checked: a splice is only a candidate when it knows all of them).
 */
static int keep_store(void *arg)
{
	struct replay *r = arg;
	struct kp_run_cache *rc = (struct kp_run_cache *)r->rc;

	rc->prev_quiet = quiet(r->m + HDR_LEN, r->olen);
	if (r->listed) {
		rc->changed = r->changed; /* @rc's now */
		memset(&r->changed, 0, sizeof(r->changed));
	} else {
		kp_inputs_changes(r->m + HDR_LEN + r->olen + r->klen, (size_t)r->mlen,
				  &rc->changed);
	}
	/* for a manifest carried over (kp_run_cache_carry()): not copied, as the store */
	rc->prev_m = r->m + HDR_LEN + r->olen + r->klen;
	rc->nprev_m = (size_t)r->mlen;
	return 0;
}

/*
 * The store and manifest of the intact entry @r (mapped at @m) for the miss, read where they
 * are mapped: the mapping is @rc's for the run (kp_run_cache_free() unmaps it), so the
 * entry's ~7 MB on a large tree are not copied and touched again.
 *
 * Its readers (the splice: src/check-splice-use.c, src/check-splice.c) read it without
 * kp_bytes_guard(): they read module files under their own guards (one per thread, not
 * nested) and cannot be jumped out of. A SIGBUS cannot come from kopolicy itself: an entry
 * is never written in place, it is published by rename() (kp_rc_publish()) and removed by
 * unlink(), both of which leave this mapping's file whole. The entry and its directory are
 * trusted (kp_trusted_file(), kp_trusted_dir_open(): owned by the user or root, writable by
 * nobody else), so only they could truncate it under the run, by hand, as they could kill
 * it; a truncation before the checks (entry_holds(), under the guard) is a miss.
 */
static void kept_store(struct kp_run_cache *rc, const struct replay *r, unsigned char *m)
{
	/* the key's pages out of the run's RSS; the manifest's stay (the carry reads it at the
	 * end of the run), and the output's: the splice reads it
	 * (kp_run_cache_previous_output() drops them once it has joined them into a copy) */
	kp_rc_drop_pages(m + HDR_LEN + r->olen, (size_t)r->klen);
	rc->prev = m + HDR_LEN + r->olen + r->klen + r->mlen;
	rc->nprev = (size_t)r->slen;
	rc->prev_map = m;
	rc->nprev_map = (size_t)r->size;
	rc->prev_out = m + HDR_LEN;
	rc->nprev_out = (size_t)r->olen;
}

static int emit(void *arg)
{
	const struct replay *r = arg;

	chunks(r->m + HDR_LEN, r->olen, true);
	return 0;
}

int kp_run_cache_replay(struct kp_run_cache *rc, unsigned jobs, int *status)
{
	struct replay r = { .rc = rc, .jobs = jobs };
	struct kp_bytes b = { 0 };
	unsigned char *m = NULL;
	struct kp_err err;
	struct stat st;
	int fd, hit = 0;

	fd = openat(rc->dfd, rc->name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return 0;
	/* only what the user or root wrote: the CRC is no authentication (run-cache.h) */
	if (fstat(fd, &st) < 0 || !kp_trusted_file(&st) || st.st_size < HDR_LEN ||
	    (uint64_t)st.st_size > ((uint64_t)1 << 36))
		goto out;
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED) {
		m = NULL;
		goto out;
	}
	r.m = m;
	r.size = (uint64_t)st.st_size;
	r.olen = kp_load64(m + 16, false);
	r.klen = kp_load64(m + 24, false);
	r.mlen = kp_load64(m + 32, false);
	r.slen = kp_load64(m + 40, false);
	b.data = m;
	b.len = (size_t)st.st_size;
	b.mapped = true;
	if (kp_bytes_guard(&b, entry_holds, &r, &err) != 1) {
		rc->rehash_over = r.rh.over;
		/* a miss through changed inputs: what the command kept, for it to use */
		if (r.intact && r.slen) {
			if (kp_bytes_guard(&b, keep_store, &r, &err) < 0) {
				kp_inputs_changed_release(&rc->changed);
				rc->prev_m = NULL;
				rc->nprev_m = 0;
			} else {
				kept_store(rc, &r, m);
				m = NULL; /* @rc's now */
			}
		}
		goto out;
	}
	*status = (int)kp_load32(m + 12, false);
	hit = 1;
	snprintf(rc->note, sizeof(rc->note), "hit, replayed");
	/* truncated by hand between the check and here: what was written stays, exit 2 */
	if (kp_bytes_guard(&b, emit, &r, &err) < 0) {
		fprintf(stderr, "kopolicy: result cache: %s\n", err.msg);
		*status = 2;
	} else if (r.how == 2) {
		const char *why = r.fresh ? refresh(rc, &r, &b)
					  : "a new state is less than a second old or not trusted";
		char mods[96] = "";

		if (r.rh.files)
			snprintf(mods, sizeof(mods), "; %llu module%s hashed again, %llu bytes",
				 (unsigned long long)r.rh.files, r.rh.files == 1 ? "" : "s",
				 (unsigned long long)r.rh.bytes);
		snprintf(rc->note, sizeof(rc->note),
			 "hit, replayed (inputs rewritten with the same bytes; %s%s%s)",
			 why ? "entry not refreshed: " : "entry refreshed", why ? why : "", mods);
	}
	if (st.st_mtim.tv_sec + TOUCH_EVERY < time(NULL))
		futimens(fd, NULL);
out:
	free(r.fresh);
	kp_inputs_changed_release(&r.changed); /* what keep_store() did not take */
	if (m)
		munmap(m, (size_t)st.st_size);
	close(fd);
	return hit;
}
