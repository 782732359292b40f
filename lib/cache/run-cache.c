// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The result cache (run-cache.h): made for a command, its entry stored after the output
 * (key, manifest: this run's or the previous entry's carried over, the store kept for a
 * later miss, then the header) and named, and the previous entry's store and stdout read
 * back for the command. Recording the output is run-cache-capture.c's, the key
 * run-cache-key.c's, replaying an entry run-cache-replay.c's, the files of runs-vN
 * run-cache-files.c's; the entry's layout is in run-cache-internal.h.
 *
 * After the output, what is left is written in one writev(): the buffer, then (a manifest
 * carried over) key, manifest and the store's pieces, none copied into the buffer.
 */
#include "run-cache.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <zlib.h> /* crc32_combine() */

#include "file/inputs.h"
#include "run-cache-internal.h"
#include "trusted-dir.h"
#include "util/crc32.h"

int kp_run_cache_dir(const char *root, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/runs-v%d", root, KP_RUNS_FORMAT);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* ROOT/runs-vN, made when missing, when it and ROOT pass the trust test; -1 otherwise. */
static int open_dir(const char *root)
{
	int rootfd = kp_trusted_dir_open(root, true, NULL), dfd;

	if (rootfd < 0)
		return -1;
	dfd = kp_trusted_subdir(rootfd, KP_RC_DIR_NAME, true, NULL);
	close(rootfd);
	return dfd;
}

static bool is_off(const char *v)
{
	return v && (!strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "no"));
}

bool kp_run_cache_wanted(const char *cmd, int argc, char **argv)
{
	static const char *const cacheable[] = { "check", "graph", "info", "explain" };
	bool known = false;

	for (size_t i = 0; i < KP_ARRAY_SIZE(cacheable); i++)
		known |= !strcmp(cmd, cacheable[i]);
	if (!known || is_off(getenv("KOPOLICY_RUN_CACHE")))
		return false;
	for (int i = 0; i < argc; i++)
		if (!strcmp(argv[i], "--no-cache") || !strcmp(argv[i], "--running") ||
		    !strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return false;
	return true;
}

struct kp_run_cache *kp_run_cache_new(const char *root, const char *cmd, int argc, char **argv,
				      char *why, size_t wlen)
{
	struct kp_run_cache *rc;
	uint64_t h = 0xcbf29ce484222325u;

	if (wlen)
		why[0] = '\0';
	if (!kp_run_cache_wanted(cmd, argc, argv))
		return NULL;
	snprintf(why, wlen, "out of memory");
	rc = calloc(1, sizeof(*rc));
	if (!rc)
		return NULL;
	if (pthread_mutex_init(&rc->lock, NULL) != 0) {
		free(rc);
		return NULL;
	}
	rc->tfd = -1;
	rc->ifd = -1;
	rc->dfd = open_dir(root);
	if (rc->dfd < 0)
		snprintf(why, wlen, "%s/%s cannot be opened or made, or is not trusted", root,
			 KP_RC_DIR_NAME);
	if (rc->dfd < 0 || kp_rc_build_key(rc, argc, argv, why, wlen) < 0) {
		if (rc->dfd >= 0)
			close(rc->dfd);
		pthread_mutex_destroy(&rc->lock);
		free(rc->key.p);
		free(rc);
		return NULL;
	}
	for (size_t i = 0; i < rc->key.len; i++) {
		h ^= rc->key.p[i];
		h *= 0x100000001b3u;
	}
	snprintf(rc->name, sizeof(rc->name), "%016llx.run", (unsigned long long)h);
	if (wlen)
		why[0] = '\0';
	return rc;
}

/* The store kept (kp_run_cache_keep_pieces()) let go: its buffers freed. */
static void keep_release(struct kp_run_cache *rc)
{
	for (size_t i = 0; i < rc->nkeep_own; i++)
		free(rc->keep_own[i]);
	rc->nkeep_own = 0;
	rc->nkeepv = 0;
	rc->nkeep = 0;
}

/* kp_inputs_stream()'s writer: the manifest's bytes into the entry. */
static int put_manifest(void *arg, const void *p, size_t len)
{
	struct kp_run_cache *rc = arg;

	kp_rc_append(rc, p, len);
	/* kept whole only for the comparison with a manifest carried over */
	if (rc->carried && !rc->broken) {
		if (kp_grow(&rc->fresh_m.p, &rc->fresh_m.cap, rc->fresh_m.len + len, 1) < 0) {
			free(rc->carried);
			rc->carried = NULL;
			rc->carry_why = "out of memory";
		} else {
			memcpy(rc->fresh_m.p + rc->fresh_m.len, p, len);
			rc->fresh_m.len += len;
		}
	}
	return rc->broken ? -1 : 0;
}

void kp_run_cache_carry(struct kp_run_cache *rc)
{
	rc->carry_asked = true;
}

int kp_run_cache_use_carried(struct kp_run_cache *rc, const char **why)
{
	free(rc->carried);
	rc->carried = NULL;
	rc->carry_why = NULL;
	if (!rc->prev_m) {
		*why = "the stored manifest was not kept";
		return -1;
	}
	if (kp_inputs_carry_noted(rc->in, rc->prev_m, rc->nprev_m, &rc->changed, &rc->carried,
				  &rc->ncarried_len, &rc->ncarried, &rc->carry_why) < 0) {
		*why = rc->carry_why ? rc->carry_why : "out of memory";
		return -1;
	}
	rc->use_carried = true;
	return 0;
}

/*
 * The entry's manifest carried over (kp_run_cache_carry()), when this run's is about to be
 * streamed: the module digests the run was told of are all in (kp_in_note_bytes()).
 */
static void carry(struct kp_run_cache *rc)
{
	if (!rc->prev_m) {
		rc->carry_why = "the stored manifest was not kept";
		return;
	}
	kp_inputs_carry(rc->in, rc->prev_m, rc->nprev_m, &rc->changed, &rc->carried,
			&rc->ncarried_len, &rc->ncarried, &rc->carry_why);
}

/* The manifest carried over against the one this run stored, in @note (@len bytes). */
static void compare_carried(struct kp_run_cache *rc, bool stored, char *note, size_t len)
{
	char what[200];
	int r;

	if (!rc->carry_asked)
		return;
	if (!stored) {
		snprintf(note, len, "manifest not compared: this run's was not stored");
		return;
	}
	if (!rc->carried) {
		snprintf(note, len, "manifest not carried: %s",
			 rc->carry_why ? rc->carry_why : "out of memory");
		return;
	}
	r = kp_inputs_differ(rc->carried, rc->ncarried_len, rc->fresh_m.p, rc->fresh_m.len, what,
			     sizeof(what));
	if (r == 0)
		snprintf(note, len, "manifest carried: the same (%zu inputs, %zu replaced)",
			 kp_inputs_count(rc->carried, rc->ncarried_len), rc->ncarried);
	else
		snprintf(note, len, "manifest carried: differs (%s)", what);
}

/* kp_inputs_stream()'s writer that keeps nothing: the recorder's checks alone. */
static int put_none(void *arg, const void *p, size_t len)
{
	(void)arg;
	(void)p;
	(void)len;
	return 0;
}

/*
 * The previous entry's manifest carried over (kp_run_cache_use_carried()) appended as the
 * entry's, its length in *@mlen and its entries in *@count, after the recorder's own checks
 * of what this run read (kp_inputs_stream(): not uncacheable, its digested inputs held).
 * 0, or -1 with @why.
 */
static int store_carried(struct kp_run_cache *rc, uint64_t *mlen, uint64_t *count, const char **why)
{
	struct kp_rc_piece v[2 + KP_RC_PIECES];

	if (kp_inputs_stream(rc->in, put_none, NULL, mlen, count, why) < 0)
		return -1;
	/* key, manifest and store in one write */
	v[0] = (struct kp_rc_piece){ rc->key.p, rc->key.len };
	v[1] = (struct kp_rc_piece){ rc->carried, rc->ncarried_len };
	memcpy(v + 2, rc->keepv, rc->nkeepv * sizeof(*v));
	kp_rc_append_pieces(rc, v, 2 + rc->nkeepv);
	*mlen = rc->ncarried_len;
	/* kp_inputs_carry_noted() wrote the stored head and as many entries as it counts */
	*count = kp_load64(rc->carried + 8, false);
	return 0;
}

/* Writes key, manifest and header and names the entry; 0, or -1 with @why. */
static int store(struct kp_run_cache *rc, int status, const char **why)
{
	unsigned char h[HDR_LEN];
	uint64_t mlen, count, size;
	int r;

	/* no memory, too many open files: a later run can answer otherwise */
	if (kp_env_failure()) {
		*why = "an environmental failure during the run";
		return -1;
	}
	kp_rc_close_chunk(rc);
	if (rc->use_carried) {
		if (store_carried(rc, &mlen, &count, why) < 0)
			return -1;
	} else {
		kp_rc_append(rc, rc->key.p, rc->key.len);
		if (rc->carry_asked)
			carry(rc);
		if (kp_inputs_stream(rc->in, put_manifest, rc, &mlen, &count, why) < 0)
			return -1;
		kp_rc_append_pieces(rc, rc->keepv, rc->nkeepv);
	}
	*why = "cannot write the entry";
	rc->ninputs = (size_t)count;
	if (kp_rc_flush(rc) < 0)
		return -1;
	memset(h, 0, HDR_LEN);
	memcpy(h, MAGIC, 8);
	kp_store32(h + 8, KP_RUNS_FORMAT);
	kp_store32(h + 12, (uint32_t)status);
	kp_store64(h + 16, rc->olen);
	kp_store64(h + 24, rc->key.len);
	kp_store64(h + 32, mlen);
	kp_store64(h + 40, rc->nkeep);
	/* @rc->crc covers what follows the header: CRC(header || rest) from both */
	size = HDR_LEN + rc->olen + rc->key.len + mlen + rc->nkeep;
	kp_store32(h + 48, (uint32_t)crc32_combine(kp_crc32(0, h, HDR_LEN), rc->crc,
						   (z_off_t)(size - HDR_LEN)));
	r = kp_rc_finish_entry(rc->tfd, h, size);
	if (r == 0 && size > kp_rc_budget()) {
		*why = "larger than a quarter of KOPOLICY_CACHE_MAX_SIZE";
		return -1;
	}
	return r < 0 ? -1 : kp_rc_publish(rc->dfd, rc->tfd, rc->tmp, rc->name, size);
}

void kp_run_cache_finish(struct kp_run_cache *rc, int status, char *note, size_t len)
{
	kp_run_cache_finish_carried(rc, status, note, len, NULL, 0);
}

void kp_run_cache_finish_carried(struct kp_run_cache *rc, int status, char *note, size_t len,
				 char *carry, size_t clen)
{
	const char *why = "the output could not be written";
	char over[96] = "";
	bool stored = false;

	if (len)
		note[0] = '\0';
	if (clen)
		carry[0] = '\0';
	if (!rc)
		return;
	if (len)
		snprintf(note, len, "%s", rc->note);
	if (rc->orig_out) {
		fflush(stdout);
		fflush(stderr);
		stdout = rc->orig_out;
		stderr = rc->orig_err;
		kp_inputs_attach(NULL);
		if (status < 0 || status > 255)
			why = "no exit status";
		if (rc->rehash_over)
			snprintf(over, sizeof(over),
				 "; not replayed: more than %llu MiB of modules to hash again",
				 (unsigned long long)(KP_INPUTS_REHASH_MAX >> 20));
		stored = !rc->broken && status >= 0 && status < 256 && store(rc, status, &why) == 0;
		if (stored)
			snprintf(note, len, "miss, stored (%zu inputs%s)", rc->ninputs, over);
		else
			snprintf(note, len, "miss, not stored: %s", why);
		if (clen)
			compare_carried(rc, stored, carry, clen);
	}
	if (rc->out)
		fclose(rc->out);
	if (rc->err)
		fclose(rc->err);
	free(rc->cap_out.vbuf);
	kp_inputs_attach(NULL);
	kp_inputs_free(rc->in);
	kp_rc_tmp_drop(rc->dfd, rc->ifd, rc->itmp);
	kp_rc_tmp_drop(rc->dfd, rc->tfd, rc->tmp);
	close(rc->dfd);
	free(rc->buf);
	free(rc->key.p);
	keep_release(rc);
	if (rc->prev_map)
		munmap(rc->prev_map, rc->nprev_map);
	free(rc->prev_joined);
	free(rc->carried);
	free(rc->fresh_m.p);
	kp_inputs_changed_release(&rc->changed);
	pthread_mutex_destroy(&rc->lock);
	free(rc);
}

int kp_run_cache_keep_pieces(struct kp_run_cache *rc, const struct kp_rc_piece *v, size_t n,
			     unsigned char *const *own, size_t nown)
{
	keep_release(rc);
	if (n > KP_RC_PIECES || nown > KP_RC_PIECES) {
		for (size_t i = 0; i < nown; i++)
			free(own[i]);
		return -1;
	}
	memcpy(rc->keep_own, own, nown * sizeof(*own));
	rc->nkeep_own = nown;
	for (size_t i = 0; i < n; i++) {
		rc->keepv[i] = v[i];
		rc->nkeep += v[i].len;
	}
	rc->nkeepv = n;
	return 0;
}

const unsigned char *kp_run_cache_previous(const struct kp_run_cache *rc, size_t *len)
{
	*len = rc->nprev;
	return rc->prev;
}

/* The stdout chunks of @p (@len bytes, well formed: run-cache-replay.c) copied to @to, if
 * set; their byte count, and in *@one the only non-empty one when there is exactly one. */
static size_t stdout_bytes(const unsigned char *p, size_t len, unsigned char *to,
			   const unsigned char **one)
{
	size_t n = 0, chunks = 0;

	*one = NULL;
	for (size_t off = 0; len - off >= 5; off += 5 + (size_t)kp_load32(p + off + 1, false)) {
		size_t c = kp_load32(p + off + 1, false);

		if (p[off] != 1 || !c)
			continue;
		if (to)
			memcpy(to + n, p + off + 5, c);
		*one = ++chunks == 1 ? p + off + 5 : NULL;
		n += c;
	}
	return n;
}

const unsigned char *kp_run_cache_previous_output(struct kp_run_cache *rc, size_t *len)
{
	const unsigned char *one;
	size_t n;

	if (rc->prev && !rc->prev_joined_done) {
		rc->prev_joined_done = true;
		n = stdout_bytes(rc->prev_out, rc->nprev_out, NULL, &one);
		if (one || !n) {
			rc->prev_stdout = one ? one : rc->prev; /* no byte: any address */
		} else if ((rc->prev_joined = malloc(n))) {
			stdout_bytes(rc->prev_out, rc->nprev_out, rc->prev_joined, &one);
			rc->prev_stdout = rc->prev_joined;
			kp_rc_drop_pages(rc->prev_out, rc->nprev_out); /* read from the copy now */
		}
		rc->nprev_stdout = rc->prev_stdout ? n : 0;
	}
	*len = rc->nprev_stdout;
	return rc->prev_stdout;
}

bool kp_run_cache_previous_quiet(const struct kp_run_cache *rc)
{
	return rc->prev && rc->prev_quiet;
}

const struct kp_inputs_changed *kp_run_cache_changes(const struct kp_run_cache *rc)
{
	return rc->prev ? &rc->changed : NULL;
}

void kp_run_cache_note(struct kp_run_cache *rc, const char *note)
{
	size_t used = strlen(rc->keep_note);

	snprintf(rc->keep_note + used, sizeof(rc->keep_note) - used, "%s%s", used ? "; " : "",
		 note);
}

const char *kp_run_cache_command_note(const struct kp_run_cache *rc)
{
	return rc ? rc->keep_note : "";
}
