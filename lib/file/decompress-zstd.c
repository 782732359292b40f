// SPDX-License-Identifier: LGPL-2.1-or-later
/* .ko.zst: libzstd streaming decoder (handles concatenated frames). */
#include <zstd.h>

#include "decompress.h"

size_t kp_zstd_size_hint(const unsigned char *in, size_t len)
{
	unsigned long long n = ZSTD_getFrameContentSize(in, len);

	if (n == ZSTD_CONTENTSIZE_UNKNOWN || n == ZSTD_CONTENTSIZE_ERROR || n > SIZE_MAX)
		return 0;
	return (size_t)n;
}

void kp_zstd_state_free(void *state)
{
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
	while (ib.pos < ib.size) {
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
	if (ret == 0 && last != 0)
		ret = kp_err_set(err, "zstd: truncated zstd stream");
	if (!state)
		ZSTD_freeDCtx(dctx);
	return ret;
}
