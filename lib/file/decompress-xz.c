// SPDX-License-Identifier: LGPL-2.1-or-later
/* .ko.xz: liblzma stream decoder (kbuild uses xz --check=crc32 --lzma2=dict=1MiB). */
#include <lzma.h>
#include <stdlib.h>

#include "decompress.h"

static const char *xz_strerror(lzma_ret r)
{
	switch (r) {
	case LZMA_MEM_ERROR:
		return "out of memory";
	case LZMA_FORMAT_ERROR:
		return "not an xz stream";
	case LZMA_OPTIONS_ERROR:
		return "unsupported xz options";
	case LZMA_DATA_ERROR:
		return "corrupt xz data";
	case LZMA_BUF_ERROR:
		return "truncated xz stream";
	case LZMA_MEMLIMIT_ERROR:
		return "xz dictionary exceeds memory limit";
	default:
		return "xz decoder error";
	}
}

size_t kp_xz_size_hint(const unsigned char *in, size_t len)
{
	lzma_stream_flags flags;
	lzma_index *idx = NULL;
	uint64_t memlimit = (uint64_t)16 << 20, size = 0;
	size_t pos;

	/* A single stream (what kbuild writes): the footer locates the index. */
	if (len < 2 * LZMA_STREAM_HEADER_SIZE ||
	    lzma_stream_footer_decode(&flags, in + len - LZMA_STREAM_HEADER_SIZE) != LZMA_OK ||
	    flags.backward_size > len - 2 * LZMA_STREAM_HEADER_SIZE)
		return 0;
	pos = len - LZMA_STREAM_HEADER_SIZE - (size_t)flags.backward_size;
	if (lzma_index_buffer_decode(&idx, &memlimit, NULL, in, &pos,
				     len - LZMA_STREAM_HEADER_SIZE) == LZMA_OK) {
		size = lzma_index_uncompressed_size(idx);
		lzma_index_end(idx, NULL);
	}
	return size > SIZE_MAX ? 0 : (size_t)size;
}

void kp_xz_state_free(void *state)
{
	if (state) {
		lzma_end(state);
		free(state);
	}
}

int kp_decompress_xz(const unsigned char *in, size_t len, struct kp_outbuf *o, void **state,
		     struct kp_err *err)
{
	lzma_stream one = LZMA_STREAM_INIT, *sp = &one;
	lzma_ret r;
	int ret = 0;

	if (state) {
		/* Kept by the reading thread: the decoder reuses its dictionary when it fits. */
		if (!*state) {
			*state = malloc(sizeof(lzma_stream));
			if (!*state)
				return kp_err_set(err, "xz: out of memory");
			*(lzma_stream *)*state = (lzma_stream)LZMA_STREAM_INIT;
		}
		sp = *state;
	}
	/*
	 * 256 MiB dictionary limit: kbuild uses 1 MiB, xz -9 uses 64 MiB. One stream, what
	 * follows it ignored: the kernel's module_xz_decompress() (6.x kernel/module/
	 * decompress.c) stops at XZ_STREAM_END the same way (no LZMA_CONCATENATED: kp_outbuf's
	 * @first is always so for xz).
	 */
	r = lzma_stream_decoder(sp, (uint64_t)256 << 20, 0);
	if (r != LZMA_OK)
		return kp_err_set(err, "xz: %s", xz_strerror(r));
	sp->next_in = in;
	sp->avail_in = len;
	for (;;) {
		if (o->cap == o->len && kp_outbuf_reserve(o, o->cap, err) < 0) {
			ret = -1;
			break;
		}
		sp->next_out = o->data + o->len;
		sp->avail_out = o->cap - o->len;
		r = lzma_code(sp, LZMA_FINISH);
		o->len = o->cap - sp->avail_out;
		if (r == LZMA_STREAM_END)
			break;
		if (r != LZMA_OK) {
			/* LZMA_FINISH with all the input given: it ended inside the stream */
			o->cut = r == LZMA_BUF_ERROR;
			ret = kp_err_set(err, "xz: %s", xz_strerror(r));
			break;
		}
		/*
		 * LZMA_OK: more room needed, or progress made; a stuck truncated stream gives
		 * BUF_ERROR.
		 */
	}
	if (!state)
		lzma_end(&one);
	return ret;
}

int kp_xz_stream(const struct kp_stream_in *s, struct kp_outbuf *o, struct kp_err *err)
{
	const size_t cap = (size_t)256 << 10;
	lzma_stream st = LZMA_STREAM_INIT;
	unsigned char *buf = s->in ? NULL : malloc(cap);
	size_t got = 0;
	lzma_ret r;
	int ret = 0;

	if (!s->in && !buf)
		return kp_err_set(err, "xz: out of memory");
	/* as kp_decompress_xz(): 256 MiB dictionary limit, one stream */
	r = lzma_stream_decoder(&st, (uint64_t)256 << 20, 0);
	if (r != LZMA_OK) {
		free(buf);
		return kp_err_set(err, "xz: %s", xz_strerror(r));
	}
	for (;;) {
		if (st.avail_in == 0 && got < s->len) {
			const unsigned char *p;
			size_t n;

			ret = kp_stream_in_read(s, &got, buf, cap, &p, &n, err);
			if (ret < 0)
				break;
			st.next_in = p;
			st.avail_in = n;
		}
		if (o->cap == o->len && (ret = kp_outbuf_reserve(o, o->cap, err)) < 0)
			break;
		st.next_out = o->data + o->len;
		st.avail_out = o->cap - o->len;
		/* the input read piece by piece: finished only once the last piece is in */
		r = lzma_code(&st, got == s->len ? LZMA_FINISH : LZMA_RUN);
		o->len = o->cap - st.avail_out;
		if (r == LZMA_STREAM_END)
			break;
		if (r != LZMA_OK) {
			o->cut = r == LZMA_BUF_ERROR;
			ret = kp_err_set(err, "xz: %s", xz_strerror(r));
			break;
		}
	}
	lzma_end(&st);
	free(buf);
	return ret;
}
