// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Recording a run for the result cache (run-cache.h; the entry's layout: run-cache-internal.h):
 * stdout and stderr swapped for streams that write through and append what they write to the
 * entry as its output chunks, the inputs recorder attached (or paused), and the buffered
 * writer the rest of the entry goes through after the output (run-cache.c's store: key,
 * manifest, store), its CRC kept as it goes.
 */
#include "run-cache.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <zlib.h> /* crc32_combine() */

#include "file/inputs.h"
#include "run-cache-internal.h"
#include "util/crc32.h"
#include "util/io.h"

#define CAP_BUF ((size_t)64 << 10)

/* Writes @len bytes of the entry (buffered: a piece larger than the buffer straight from @p). */
static void twrite(struct kp_run_cache *rc, const void *p, size_t len)
{
	if (rc->broken)
		return;
	if (rc->blen + len > CAP_BUF) {
		if (kp_write_all(rc->tfd, rc->buf, rc->blen) < 0)
			rc->broken = true;
		rc->flushed += rc->blen;
		rc->blen = 0;
	}
	if (len > CAP_BUF) {
		if (kp_write_all(rc->tfd, p, len) < 0)
			rc->broken = true;
		rc->flushed += len;
		return;
	}
	memcpy(rc->buf + rc->blen, p, len);
	rc->blen += len;
}

void kp_rc_append(struct kp_run_cache *rc, const void *p, size_t len)
{
	rc->crc = kp_crc32(rc->crc, p, len);
	twrite(rc, p, len);
}

/* The head in the buffer, or in the file once written out; the bytes were hashed as they came. */
void kp_rc_close_chunk(struct kp_run_cache *rc)
{
	unsigned char h[5];

	if (!rc->ostream)
		return;
	h[0] = rc->ostream;
	kp_store32(h + 1, rc->onbytes);
	rc->ostream = 0;
	rc->crc = (uint32_t)crc32_combine(kp_crc32(rc->crc, h, 5), rc->ocrc, (z_off_t)rc->onbytes);
	if (rc->broken)
		return;
	if (rc->ohead >= rc->flushed)
		memcpy(rc->buf + (rc->ohead - rc->flushed), h, 5);
	else if (pwrite(rc->tfd, h, 5, (off_t)rc->ohead) != 5)
		rc->broken = true;
}

/* A store's megabytes are not copied into the buffer, nor written in as many calls as pieces. */
void kp_rc_append_pieces(struct kp_run_cache *rc, const struct kp_rc_piece *v, size_t n)
{
	struct iovec iov[3 + KP_RC_PIECES];
	uint64_t total = rc->blen;
	int k = 0;

	if (rc->broken)
		return;
	if (rc->blen)
		iov[k++] = (struct iovec){ .iov_base = rc->buf, .iov_len = rc->blen };
	for (size_t i = 0; i < n; i++) {
		if (!v[i].len)
			continue;
		rc->crc = kp_crc32(rc->crc, v[i].p, v[i].len);
		iov[k++] = (struct iovec){ .iov_base = (void *)v[i].p, .iov_len = v[i].len };
		total += v[i].len;
	}
	if (kp_writev_all(rc->tfd, iov, k) < 0)
		rc->broken = true;
	rc->flushed += total;
	rc->blen = 0;
}

int kp_rc_flush(struct kp_run_cache *rc)
{
	if (rc->broken || kp_write_all(rc->tfd, rc->buf, rc->blen) < 0)
		return -1;
	rc->flushed += rc->blen;
	rc->blen = 0;
	return 0;
}

/* @len output bytes of @stream (1 stdout, 2 stderr) appended to the open chunk, or to a new
 * one when the last was the other stream's or would pass 32 bits of length. */
static void tappend_output(struct kp_run_cache *rc, unsigned char stream, const char *p, size_t len)
{
	static const unsigned char head[5]; /* its length written when closed */

	if (!len)
		return;
	if (rc->ostream != stream || len > UINT32_MAX - rc->onbytes) {
		kp_rc_close_chunk(rc);
		twrite(rc, head, sizeof(head)); /* into the buffer, whole: 5 < CAP_BUF */
		rc->ohead = rc->flushed + rc->blen - sizeof(head);
		rc->ostream = stream;
		rc->onbytes = 0;
		rc->ocrc = 0;
		rc->olen += sizeof(head);
	}
	rc->ocrc = kp_crc32(rc->ocrc, p, len);
	twrite(rc, p, len);
	rc->onbytes += (uint32_t)len;
	rc->olen += len;
}

static ssize_t cap_write(void *cookie, const char *buf, size_t size)
{
	struct cap *c = cookie;

	if (kp_write_all(c->fd, buf, size) < 0 || size > UINT32_MAX) {
		__atomic_store_n(&c->rc->broken, true, __ATOMIC_RELAXED);
		return size > UINT32_MAX ? (ssize_t)size : -1;
	}
	pthread_mutex_lock(&c->rc->lock);
	tappend_output(c->rc, c->stream, buf, size);
	pthread_mutex_unlock(&c->rc->lock);
	return (ssize_t)size;
}

/* A stream over @c buffered as glibc would buffer the original (line for a terminal). */
static FILE *cap_stream(struct cap *c, bool unbuffered)
{
	static const cookie_io_functions_t io = { .write = cap_write };
	FILE *f = fopencookie(c, "w", io);

	size_t size = kp_rc_out_buffer_size();

	if (!f)
		return NULL;
	if (unbuffered) {
		setvbuf(f, NULL, _IONBF, 0);
		return f;
	}
	c->vbuf = malloc(size);
	if (!c->vbuf) {
		fclose(f);
		return NULL;
	}
	setvbuf(f, c->vbuf, isatty(c->fd) ? _IOLBF : _IOFBF, size);
	return f;
}

int kp_run_cache_record(struct kp_run_cache *rc)
{
	rc->tfd = kp_rc_tmpfile(rc->dfd, rc->tmp, sizeof(rc->tmp));
	/* the manifest goes there as it grows: the recorder keeps a buffer and a table */
	rc->ifd = kp_rc_tmpfile(rc->dfd, rc->itmp, sizeof(rc->itmp));
	if (rc->tfd < 0 || rc->ifd < 0)
		return -1;
	rc->buf = malloc(CAP_BUF);
	rc->in = kp_inputs_new(rc->ifd, 0);
	if (!rc->buf || !rc->in)
		return -1;
	/* room for the header, written last */
	rc->blen = HDR_LEN; /* not in @rc->crc */
	memset(rc->buf, 0, HDR_LEN);
	fflush(stdout);
	fflush(stderr);
	rc->cap_out = (struct cap){ .rc = rc, .fd = STDOUT_FILENO, .stream = 1 };
	rc->cap_err = (struct cap){ .rc = rc, .fd = STDERR_FILENO, .stream = 2 };
	rc->out = cap_stream(&rc->cap_out, false);
	rc->err = cap_stream(&rc->cap_err, true);
	if (!rc->out || !rc->err)
		return -1;
	rc->orig_out = stdout;
	rc->orig_err = stderr;
	stdout = rc->out;
	stderr = rc->err;
	kp_inputs_attach(rc->in);
	return 0;
}

void kp_run_cache_pause(struct kp_run_cache *rc, bool paused)
{
	if (rc && rc->orig_out)
		kp_inputs_attach(paused ? NULL : rc->in);
}

bool kp_run_cache_recording(const struct kp_run_cache *rc)
{
	return rc && rc->orig_out;
}
