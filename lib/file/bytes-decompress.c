// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The one file reader's decompression (bytes.h): compression detected by magic, the
 * per-thread decoders and output buffers within the read's memory budget, and bytes in
 * memory or from a file descriptor decompressed or streamed (the decompressors are behind
 * decompress.h; their library loaded first, dl/lazy-lib.h, or the read fails saying why).
 * Files are opened and read by bytes.c.
 */
#include "bytes-internal.h"

#include <stdlib.h>
#include <string.h>

#include "decompress.h"
#include "dl/lazy-lib.h"
#include "mem-budget.h"

static const unsigned char magic_xz[] = { 0xfd, '7', 'z', 'X', 'Z', 0x00 };
static const unsigned char magic_zstd[] = { 0x28, 0xb5, 0x2f, 0xfd };
static const unsigned char magic_gzip[] = { 0x1f, 0x8b };

const char *kp_compression_name(enum kp_compression c)
{
	switch (c) {
	case KP_COMP_XZ:
		return "xz";
	case KP_COMP_ZSTD:
		return "zstd";
	case KP_COMP_GZIP:
		return "gzip";
	case KP_COMP_NONE:
		break;
	}
	return "none";
}

enum kp_compression kp_detect_compression(const unsigned char *p, size_t len)
{
	if (len >= sizeof(magic_xz) && !memcmp(p, magic_xz, sizeof(magic_xz)))
		return KP_COMP_XZ;
	if (len >= sizeof(magic_zstd) && !memcmp(p, magic_zstd, sizeof(magic_zstd)))
		return KP_COMP_ZSTD;
	if (len >= sizeof(magic_gzip) && !memcmp(p, magic_gzip, sizeof(magic_gzip)))
		return KP_COMP_GZIP;
	return KP_COMP_NONE;
}

void kp_decoders_set_budget(struct kp_decoders *d, struct kp_mem_budget *b)
{
	if (d)
		d->budget = b;
}

struct kp_decoders *kp_decoders_new(void)
{
	return calloc(1, sizeof(struct kp_decoders));
}

void kp_decoders_free(struct kp_decoders *d)
{
	if (!d)
		return;
	kp_xz_state_free(d->xz);
	kp_zstd_state_free(d->zstd);
	kp_gzip_state_free(d->gzip);
	free(d->spare);
	free(d->file);
	free(d);
}

/* The thread's file buffer sized for @len, or NULL (too big to keep, or no memory). */
unsigned char *kp_decoders_file_buffer(struct kp_decoders *d, size_t len)
{
	if (!d || len > KP_DECODERS_FILE_MAX)
		return NULL;
	if (d->file_cap < len) {
		size_t cap = len < 65536 ? 65536 : len;
		unsigned char *p = realloc(d->file, cap);

		if (!p)
			return NULL;
		d->file = p;
		d->file_cap = cap;
	}
	return d->file;
}

/* A streaming buffer: what it holds goes to the sink, and it starts again empty. */
static int outbuf_flush(struct kp_outbuf *o, struct kp_err *err)
{
	char sz[32];

	if (!o->len)
		return 0;
	if (o->len > o->max - o->streamed)
		return kp_err_set(err, "decompressed size exceeds the limit of %s",
				  kp_format_size(o->max, sz, sizeof(sz)));
	if (o->sink(o->data, o->len, o->sink_arg)) {
		o->stopped = true;
		return kp_err_set(err, "stopped while decompressing");
	}
	o->streamed += o->len;
	o->len = 0;
	return 0;
}

int kp_outbuf_reserve(struct kp_outbuf *o, size_t extra, struct kp_err *err)
{
	size_t need, ncap;
	unsigned char *p;

	if (o->sink) {
		if (extra <= o->cap - o->len)
			return 0;
		if (outbuf_flush(o, err) < 0)
			return -1;
		return extra <= o->cap ? 0 : kp_err_set(err, "internal error: stream buffer");
	}
	need = extra > SIZE_MAX - o->len ? SIZE_MAX : o->len + extra;
	if (need <= o->cap)
		return 0;
	/* Growing past the first chunk: stop early if what came out is not even ELF. */
	if (o->elf_only && o->len >= 4 && memcmp(o->data, "\177ELF", 4))
		return kp_err_set(err, "decompressed data is not an ELF file");
	if (need > o->max) {
		char sz[32];

		if (o->cap >= o->max)
			return kp_err_set(err, "decompressed size exceeds the limit of %s%s",
					  kp_format_size(o->max, sz, sizeof(sz)),
					  o->elf_only ? " (decompression bomb? see --max-size)"
						      : "");
		need = o->max;
	}
	ncap = o->cap ? o->cap : need;
	while (ncap < need)
		ncap = ncap > SIZE_MAX / 2 ? SIZE_MAX : ncap * 2;
	if (ncap > o->max)
		ncap = o->max;
	/*
	 * Growth past the reservation, checked while decoding: the new buffer is taken whole
	 * (realloc() may hold the old and the new one at once), the old one given back after.
	 */
	if (o->budget && ncap > o->held) {
		if (!kp_mem_budget_take(o->budget, ncap, false)) {
			o->short_of_budget = true;
			o->wanted = ncap;
			return kp_err_set(err, "decompressed size: the read's memory budget is "
					       "held by other files");
		}
		p = realloc(o->data, ncap);
		kp_mem_budget_give(o->budget, p ? o->held : ncap);
		if (!p)
			return kp_err_set(err, "out of memory decompressing (%zu bytes)", ncap);
		o->held = ncap;
		o->data = p;
		o->cap = ncap;
		return 0;
	}
	p = realloc(o->data, ncap);
	if (!p)
		return kp_err_set(err, "out of memory decompressing (%zu bytes)", ncap);
	o->data = p;
	o->cap = ncap;
	return 0;
}

/*
 * The library that decodes @comp loaded (dl/lazy-lib.h: on first use), before any of its
 * functions is called: 0, or -1 with @err saying why it cannot be (a broken install).
 */
static int decoder_loaded(enum kp_compression comp, struct kp_err *err)
{
	switch (comp) {
	case KP_COMP_XZ:
		return kp_lazy_require(kp_lazy_liblzma(), err);
	case KP_COMP_ZSTD:
		return kp_lazy_require(kp_lazy_libzstd(), err);
	case KP_COMP_GZIP:
		return kp_lazy_require(kp_lazy_libz(), err);
	default:
		return 0;
	}
}

/* One decoding of @in into @o (reserved already). */
static int decode(const unsigned char *in, size_t len, enum kp_compression comp,
		  struct kp_outbuf *o, struct kp_decoders *dec, struct kp_err *err)
{
	int r;

	switch (comp) {
	case KP_COMP_XZ:
		r = kp_decompress_xz(in, len, o, dec ? &dec->xz : NULL, err);
		break;
	case KP_COMP_ZSTD:
		r = kp_decompress_zstd(in, len, o, dec ? &dec->zstd : NULL, err);
		break;
	case KP_COMP_GZIP:
		r = kp_decompress_gzip(in, len, o, dec ? &dec->gzip : NULL, err);
		break;
	default:
		r = kp_err_set(err, "internal error: unknown compression");
	}
	return r;
}

int kp_bytes_decompress(const unsigned char *in, size_t len, enum kp_compression comp,
			size_t max_size, bool elf_only, struct kp_decoders *dec,
			struct kp_bytes *out, struct kp_err *err)
{
	struct kp_mem_budget *budget = dec ? dec->budget : NULL;
	char sz[32], lim[32];
	size_t want;

	if (decoder_loaded(comp, err) < 0)
		return -1;
	want = comp == KP_COMP_XZ     ? kp_xz_size_hint(in, len)
	       : comp == KP_COMP_ZSTD ? kp_zstd_size_hint(in, len)
				      : kp_gzip_size_hint(in, len);

	/*
	 * Allocate what the stream declares (one allocation, no copies), else the usual ratio
	 * of compressed modules. Either way the cap holds and the buffer grows if the hint lied;
	 * one spare byte lets the decoder see the end of the stream without another reserve.
	 */
	if (!want || want > max_size)
		want = len < max_size / 4 ? len * 4 : max_size;
	else
		want = want < max_size ? want + 1 : want;
	for (;;) {
		struct kp_outbuf o = { .max = max_size, .elf_only = elf_only, .budget = budget };
		bool spare = dec && dec->spare && dec->spare_cap >= want;
		size_t take = spare && dec->spare_cap > want ? dec->spare_cap : want;

		if (take > max_size)
			take = max_size;
		/* holding nothing: wait for what the other threads give back */
		if (budget && !kp_mem_budget_take(budget, take, true))
			return kp_err_set(
				err, "needs %s decompressed, more than the memory budget of %s",
				kp_format_size(take, sz, sizeof(sz)),
				kp_format_size(max_size, lim, sizeof(lim)));
		o.held = budget ? take : 0;
		/* The thread's spare buffer when it is big enough: no allocation, pages there. */
		if (spare) {
			o.data = dec->spare;
			o.cap = dec->spare_cap > max_size ? max_size : dec->spare_cap;
			dec->spare = NULL;
		}
		if (kp_outbuf_reserve(&o, want, err) == 0 &&
		    decode(in, len, comp, &o, dec, err) == 0) {
			out->data = o.data;
			out->len = o.len;
			out->cap = o.cap;
			out->comp = comp;
			out->keeper = dec;
			out->budget = budget;
			out->held = o.held;
			return 0;
		}
		free(o.data);
		if (budget)
			kp_mem_budget_give(budget, o.held);
		if (!o.short_of_budget)
			return -1;
		/* larger than declared and the rest is taken: again, reserving that much first */
		want = o.wanted;
	}
}

int kp_stream_in_read(const struct kp_stream_in *s, size_t *got, unsigned char *buf, size_t cap,
		      const unsigned char **p, size_t *n, struct kp_err *err)
{
	size_t want = s->len - *got < cap ? s->len - *got : cap;

	if (s->in) {
		*p = s->in + *got;
		*n = s->len - *got;
		*got = s->len;
		return 0;
	}
	if (kp_bytes_pread(s->fd, buf, want, s->off + *got, err) < 0)
		return -1;
	*p = buf;
	*n = want;
	*got += want;
	return 0;
}

/* kp_bytes_stream() and, @first, kp_bytes_stream_first(). */
static int stream_mem(const unsigned char *in, size_t len, size_t max, bool first,
		      int (*fn)(const unsigned char *p, size_t n, void *arg), void *arg,
		      struct kp_err *err)
{
	enum kp_compression comp = kp_detect_compression(in, len);
	struct kp_outbuf o = {
		.max = max, .sink = fn, .sink_arg = arg, .cap = KP_STREAM_CHUNK, .first = first
	};
	int r;

	if (comp == KP_COMP_NONE)
		return kp_err_set(err, "not compressed (xz, zstd or gzip)");
	if (decoder_loaded(comp, err) < 0)
		return -1;
	o.data = malloc(o.cap);
	if (!o.data)
		return kp_err_set(err, "out of memory");
	if (comp == KP_COMP_ZSTD) {
		struct kp_stream_in s = { .in = in, .fd = -1, .len = len };

		r = kp_zstd_stream(&s, &o, err);
	} else {
		r = decode(in, len, comp, &o, NULL, err);
	}
	if (r == 0) {
		r = outbuf_flush(&o, err);
	} else if (first && !o.stopped) {
		/* what was decoded before the error reaches the sink too (within @max) */
		struct kp_err ignored;

		outbuf_flush(&o, &ignored);
	}
	free(o.data);
	return r < 0 && first && o.cut ? -2 : r;
}

int kp_bytes_stream(const unsigned char *in, size_t len, size_t max,
		    int (*fn)(const unsigned char *p, size_t n, void *arg), void *arg,
		    struct kp_err *err)
{
	return stream_mem(in, len, max, false, fn, arg, err);
}

int kp_bytes_stream_first(const unsigned char *in, size_t len, size_t max,
			  int (*fn)(const unsigned char *p, size_t n, void *arg), void *arg,
			  struct kp_err *err)
{
	return stream_mem(in, len, max, true, fn, arg, err);
}

int kp_bytes_stream_fd(int fd, uint64_t off, size_t len, size_t max,
		       int (*fn)(const unsigned char *p, size_t n, void *arg), void *arg,
		       struct kp_err *err)
{
	struct kp_stream_in s = { .fd = fd, .off = off, .len = len };
	struct kp_outbuf o = { .max = max, .sink = fn, .sink_arg = arg, .cap = KP_STREAM_CHUNK };
	unsigned char head[8], *in;
	size_t nhead = len < sizeof(head) ? len : sizeof(head);
	enum kp_compression comp;
	int r;

	if (kp_bytes_pread(fd, head, nhead, off, err) < 0)
		return -1;
	comp = kp_detect_compression(head, nhead);
	if (decoder_loaded(comp, err) < 0)
		return -1;
	if (comp == KP_COMP_GZIP) {
		/* gzip: read whole (its window is 32 KiB; the input is what it costs) */
		in = malloc(len ? len : 1);
		if (!in)
			return kp_err_set(err, "out of memory (%zu bytes)", len);
		r = kp_bytes_pread(fd, in, len, off, err);
		if (r == 0)
			r = kp_bytes_stream(in, len, max, fn, arg, err);
		free(in);
		return r;
	}
	o.data = malloc(o.cap);
	if (!o.data)
		return kp_err_set(err, "out of memory");
	r = comp == KP_COMP_ZSTD ? kp_zstd_stream(&s, &o, err)
	    : comp == KP_COMP_XZ ? kp_xz_stream(&s, &o, err)
				 : kp_err_set(err, "not compressed (xz, zstd or gzip)");
	if (r == 0)
		r = outbuf_flush(&o, err);
	free(o.data);
	return r;
}

static int copy_in(const unsigned char *in, size_t len, size_t max_size, bool elf_only,
		   struct kp_bytes *out, struct kp_err *err)
{
	enum kp_compression comp = kp_detect_compression(in, len);
	char sz[32];

	memset(out, 0, sizeof(*out));
	out->file_len = len;
	if (comp != KP_COMP_NONE)
		return kp_bytes_decompress(in, len, comp, max_size, elf_only, NULL, out, err);
	if (len > max_size)
		return kp_err_set(err, "file is larger than the limit of %s (see --max-size)",
				  kp_format_size(max_size, sz, sizeof(sz)));
	out->data = malloc(len ? len : 1);
	if (!out->data)
		return kp_err_set(err, "out of memory (%zu bytes)", len);
	memcpy(out->data, in, len);
	out->len = len;
	return 0;
}

int kp_bytes_from_buffer(const unsigned char *in, size_t len, size_t max_size, struct kp_bytes *out,
			 struct kp_err *err)
{
	return copy_in(in, len, max_size, true, out, err);
}

int kp_bytes_from_text_buffer(const unsigned char *in, size_t len, size_t max_size,
			      struct kp_bytes *out, struct kp_err *err)
{
	return copy_in(in, len, max_size, false, out, err);
}
