// SPDX-License-Identifier: LGPL-2.1-or-later
/* .ko.zst: libzstd streaming decoder (concatenated frames, or the first only: @first). */
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_d_stableOutBuffer, checked at run time (1.4.6) */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "decompress.h"
#include "util/util.h"

size_t kp_zstd_size_hint(const unsigned char *in, size_t len)
{
	unsigned long long n = ZSTD_getFrameContentSize(in, len);

	if (n == ZSTD_CONTENTSIZE_UNKNOWN || n == ZSTD_CONTENTSIZE_ERROR || n > SIZE_MAX)
		return 0;
	return (size_t)n;
}

void kp_zstd_state_free(void *state)
{
	/* none made, none freed: libzstd is loaded on first use, not to free nothing */
	if (state)
		ZSTD_freeDCtx(state);
}

int kp_decompress_zstd(const unsigned char *in, size_t len, struct kp_outbuf *o, void **state,
		       struct kp_err *err)
{
	/* A context kept by the reading thread keeps its buffers between modules. */
	ZSTD_DCtx *dctx = state && *state ? *state : ZSTD_createDCtx();
	ZSTD_inBuffer ib = { in, len, 0 };
	size_t last = 1;
	int ret = 0;

	if (!dctx)
		return kp_err_set(err, "zstd: out of memory");
	if (state) {
		*state = dctx;
		ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only);
	}
	/* Refuse windows over 256 MiB: kbuild's `zstd -T0 --ultra -22` stays far below. */
	ZSTD_DCtx_setParameter(dctx, ZSTD_d_windowLogMax, 28);
	/* last == 0: a frame ended (and all it holds was written); with @first, the end */
	while (ib.pos < ib.size && !(o->first && last == 0)) {
		ZSTD_outBuffer ob;

		if (o->cap == o->len && kp_outbuf_reserve(o, o->cap, err) < 0) {
			ret = -1;
			break;
		}
		ob.dst = o->data;
		ob.size = o->cap;
		ob.pos = o->len;
		last = ZSTD_decompressStream(dctx, &ob, &ib);
		o->len = ob.pos;
		if (ZSTD_isError(last)) {
			ret = kp_err_set(err, "zstd: %s", ZSTD_getErrorName(last));
			break;
		}
		/* Input consumed but the decoder still holds output: make room and flush it. */
		while (ret == 0 && ib.pos == ib.size && last != 0 && ob.pos == ob.size) {
			if (kp_outbuf_reserve(o, o->cap, err) < 0) {
				ret = -1;
				break;
			}
			ob.dst = o->data;
			ob.size = o->cap;
			ob.pos = o->len; /* a streaming buffer starts again empty */
			last = ZSTD_decompressStream(dctx, &ob, &ib);
			o->len = ob.pos;
			if (ZSTD_isError(last))
				ret = kp_err_set(err, "zstd: %s", ZSTD_getErrorName(last));
		}
	}
	if (ret == 0 && last != 0) {
		o->cut = true;
		ret = kp_err_set(err, "zstd: truncated zstd stream");
	}
	if (!state)
		ZSTD_freeDCtx(dctx);
	return ret;
}

/*
 * The output mapping of a stream decoded in place (ZSTD_d_stableOutBuffer): @max bytes of
 * address space, touched only as written; MAP_FAILED when it cannot be had (32-bit address
 * space) or this libzstd cannot decode into it.
 */
static unsigned char *stable_output(ZSTD_DCtx *dctx, size_t max)
{
#if ZSTD_VERSION_NUMBER >= 10406
	void *p;

	if (ZSTD_versionNumber() < 10406 || max == 0)
		return MAP_FAILED;
	p = mmap(NULL, max, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
		 0);
	if (p == MAP_FAILED)
		return MAP_FAILED;
	if (ZSTD_isError(ZSTD_DCtx_setParameter(dctx, ZSTD_d_stableOutBuffer, 1))) {
		munmap(p, max);
		return MAP_FAILED;
	}
	return p;
#else
	(void)dctx;
	(void)max;
	return MAP_FAILED;
#endif
}

/* Whether the @n bytes at @p are all zero. */
static bool all_zero(const unsigned char *p, size_t n)
{
	return n == 0 || (p[0] == 0 && !memcmp(p, p + 1, n - 1));
}

/*
 * Gives back the whole pages of [@from, @to) of the private anonymous mapping @base that hold
 * only zeros: read again (a match of the decoder) they are zero pages, the same bytes.
 */
static void drop_zero_pages(unsigned char *base, size_t from, size_t to, size_t page)
{
	size_t run = from;

	for (size_t at = from; at + page <= to; at += page) {
		if (all_zero(base + at, page))
			continue;
		if (at > run)
			madvise(base + run, at - run, MADV_DONTNEED);
		run = at + page;
	}
	to -= (to - from) % page;
	if (to > run)
		madvise(base + run, to - run, MADV_DONTNEED);
}

/* The output of [@from, @to) of @p to @o's sink, KP_STREAM_CHUNK bytes at most at a time. */
static int stream_hand(struct kp_outbuf *o, const unsigned char *p, size_t from, size_t to,
		       struct kp_err *err)
{
	while (from < to) {
		size_t n = to - from < o->cap ? to - from : o->cap;

		if (o->sink(p + from, n, o->sink_arg)) {
			o->stopped = true;
			return kp_err_set(err, "stopped while decompressing");
		}
		o->streamed += n;
		from += n;
	}
	return 0;
}

int kp_zstd_stream(const struct kp_stream_in *s, struct kp_outbuf *o, struct kp_err *err)
{
	ZSTD_DCtx *dctx = ZSTD_createDCtx();
	size_t page = (size_t)sysconf(_SC_PAGESIZE), inbuf_cap = ZSTD_DStreamInSize();
	size_t got = 0, handed = 0, last = 1;
	unsigned char *inbuf = NULL, *out;
	ZSTD_inBuffer ib = { NULL, 0, 0 }, sub;
	size_t want = ZSTD_FRAMEHEADERSIZE_MAX;
	ZSTD_outBuffer ob;
	bool full = false;
	char sz[32];
	int ret = 0;

	if (!dctx)
		return kp_err_set(err, "zstd: out of memory");
	ZSTD_DCtx_setParameter(dctx, ZSTD_d_windowLogMax, 28);
	if (!s->in && !(inbuf = malloc(inbuf_cap))) {
		ZSTD_freeDCtx(dctx);
		return kp_err_set(err, "zstd: out of memory");
	}
	/*
	 * Decoded in place into one mapping: no window buffer beside it, and its pages of zeros
	 * (an image's .bss and padding) given back as they are passed. Otherwise o's buffer,
	 * handed on each time it is full, and zstd's own window.
	 */
	out = stable_output(dctx, o->max);
	ob.dst = out != MAP_FAILED ? out : o->data;
	ob.size = out != MAP_FAILED ? o->max : o->cap;
	ob.pos = 0;
	for (;;) {
		if (ib.pos == ib.size && got < s->len) {
			const unsigned char *p;
			size_t n;

			ret = kp_stream_in_read(s, &got, inbuf, inbuf_cap, &p, &n, err);
			if (ret < 0)
				break;
			ib.src = p;
			ib.size = n;
			ib.pos = 0;
		}
		if (ib.pos == ib.size && (last == 0 || !full))
			break; /* the input is used up and the decoder holds nothing more */
		/*
		 * What the decoder asks for next (the next block and the header after it), not
		 * more: one block decoded per call, so pages of zeros are given back 128 KiB at
		 * most after they are written (a .bss is megabytes of RLE blocks in a few bytes).
		 */
		sub.src = (const unsigned char *)ib.src + ib.pos;
		sub.size = ib.size - ib.pos < want ? ib.size - ib.pos : want;
		sub.pos = 0;
		last = ZSTD_decompressStream(dctx, &ob, &sub);
		ib.pos += sub.pos;
		want = last ? last : ZSTD_FRAMEHEADERSIZE_MAX;
		if (ZSTD_isError(last)) {
			if (out != MAP_FAILED &&
			    ZSTD_getErrorCode(last) == ZSTD_error_dstSize_tooSmall)
				ret = kp_err_set(err, "decompressed size exceeds the limit of %s",
						 kp_format_size(o->max, sz, sizeof(sz)));
			else
				ret = kp_err_set(err, "zstd: %s", ZSTD_getErrorName(last));
			break;
		}
		full = ob.pos == ob.size;
		if (out == MAP_FAILED) {
			o->len = ob.pos;
			if (o->first && last == 0)
				break; /* the first frame ended, all of it written */
			if (full && (ret = kp_outbuf_reserve(o, o->cap, err)) < 0)
				break;
			ob.pos = o->len; /* emptied by the sink */
			continue;
		}
		if (stream_hand(o, out, handed, ob.pos, err) < 0) {
			ret = -1;
			break;
		}
		drop_zero_pages(out, handed - handed % page, ob.pos - ob.pos % page, page);
		handed = ob.pos;
		if (o->first && last == 0)
			break; /* the first frame ended, all of it handed */
		if (full && last != 0) {
			ret = kp_err_set(err, "decompressed size exceeds the limit of %s",
					 kp_format_size(o->max, sz, sizeof(sz)));
			break;
		}
	}
	if (ret == 0 && last != 0) {
		o->cut = true;
		ret = kp_err_set(err, "zstd: truncated zstd stream");
	}
	if (out != MAP_FAILED)
		munmap(out, o->max);
	else if (ret == 0)
		o->len = ob.pos;
	free(inbuf);
	ZSTD_freeDCtx(dctx);
	return ret;
}
