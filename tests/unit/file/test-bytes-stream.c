// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kp_bytes_stream_first() (bytes.h): the first xz stream, zstd frame or gzip member only,
 * the bytes after it ignored (a payload inside a self-decompressing kernel image), beside
 * kp_bytes_stream(), which decodes concatenated zstd frames and gzip members and fails on
 * what is not one. For each format: a payload followed by garbage, two payloads one after
 * the other, a payload cut in the middle (a one-line error, what came before it handed on),
 * a decompression bomb past the cap, and a sink that stops the decoding.
 */
#include <lzma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "compress.h"
#include "file/bytes.h"
#include "tap.h"

/* What the sink was handed: all of it, the number of calls, and when to stop. */
struct got {
	unsigned char *p;
	size_t len, cap;
	int calls;
	int stop_at; /* the call that returns non-zero (1: the first), 0: never */
	size_t biggest;
};

static int collect(const unsigned char *p, size_t n, void *arg)
{
	struct got *g = arg;

	g->calls++;
	if (n > g->biggest)
		g->biggest = n;
	if (g->stop_at && g->calls >= g->stop_at)
		return 1;
	if (g->len + n > g->cap) {
		size_t cap = (g->len + n) * 2;
		unsigned char *q = realloc(g->p, cap);

		if (!q)
			return 1;
		g->p = q;
		g->cap = cap;
	}
	memcpy(g->p + g->len, p, n);
	g->len += n;
	return 0;
}

static void got_reset(struct got *g)
{
	free(g->p);
	memset(g, 0, sizeof(*g));
}

enum fmt { XZ, ZSTD, GZIP };
static const char *const fmt_name[] = { "xz", "zstd", "gzip" };

/* @raw compressed as @f into a new buffer (*@zlen bytes); exits on failure. */
static unsigned char *pack(enum fmt f, const unsigned char *raw, size_t len, size_t *zlen)
{
	size_t cap = len + len / 2 + 65536, pos = 0;
	unsigned char *z = malloc(cap);

	if (!z)
		exit(99);
	switch (f) {
	case XZ:
		if (lzma_easy_buffer_encode(6, LZMA_CHECK_CRC32, NULL, raw, len, z, &pos, cap) !=
		    LZMA_OK)
			exit(99);
		*zlen = pos;
		break;
	case ZSTD:
		*zlen = ZSTD_compress(z, cap, raw, len, 3);
		if (ZSTD_isError(*zlen))
			exit(99);
		break;
	case GZIP:
		*zlen = tu_gzip(raw, len, z, cap);
		break;
	}
	return z;
}

/* @n bytes of text-like data (compressible, not trivially): seeded by @seed. */
static unsigned char *sample(size_t n, unsigned seed)
{
	unsigned char *p = malloc(n);
	uint32_t s = seed;

	if (!p)
		exit(99);
	for (size_t i = 0; i < n; i++) {
		s = s * 1103515245 + 12345;
		p[i] = (unsigned char)("abcdefgh ijklmnop\n"[(s >> 16) % 18]);
	}
	return p;
}

/* @a (@na bytes) then @b (@nb bytes) in a new buffer. */
static unsigned char *cat(const unsigned char *a, size_t na, const unsigned char *b, size_t nb)
{
	unsigned char *p = malloc(na + nb);

	if (!p)
		exit(99);
	memcpy(p, a, na);
	memcpy(p + na, b, nb);
	return p;
}

static void one_format(struct tap *t, enum fmt f)
{
	const char *name = fmt_name[f];
	const size_t rawlen = (size_t)1 << 20, raw2len = 300000;
	unsigned char *raw = sample(rawlen, 1), *raw2 = sample(raw2len, 2), *garbage;
	unsigned char *z, *z2, *in, *bomb, *zb;
	size_t zlen, z2len, zblen;
	struct got g = { 0 };
	struct kp_err err;
	char want[128], what[128];
	int r;

	z = pack(f, raw, rawlen, &zlen);
	z2 = pack(f, raw2, raw2len, &z2len);

	/* a payload followed by garbage (the decompressor's code after it) */
	garbage = sample(8192, 3);
	in = cat(z, zlen, garbage, 8192);
	r = kp_bytes_stream_first(in, zlen + 8192, KP_DEFAULT_MAX_SIZE, collect, &g, &err);
	snprintf(what, sizeof(what), "%s: first stream, garbage after it: decoded", name);
	tap_is_int(t, r, 0, what);
	tap_ok(t, g.len == rawlen && !memcmp(g.p, raw, rawlen),
	       "%s: the payload's bytes, %zu of %zu, in pieces of at most KP_STREAM_CHUNK (%zu)",
	       name, g.len, rawlen, g.biggest);
	tap_ok(t, g.biggest <= KP_STREAM_CHUNK, "%s: no piece over KP_STREAM_CHUNK", name);
	got_reset(&g);
	if (f == ZSTD) {
		/* kp_bytes_stream() unchanged: what follows the frame must be another frame */
		r = kp_bytes_stream(in, zlen + 8192, KP_DEFAULT_MAX_SIZE, collect, &g, &err);
		tap_ok(t, r == -1 && !strncmp(err.msg, "zstd: ", 6),
		       "zstd: kp_bytes_stream() still refuses the garbage after the frame (%s)",
		       err.msg);
		got_reset(&g);
	}
	free(in);

	/* two payloads one after the other: only the first */
	in = cat(z, zlen, z2, z2len);
	r = kp_bytes_stream_first(in, zlen + z2len, KP_DEFAULT_MAX_SIZE, collect, &g, &err);
	tap_ok(t, r == 0 && g.len == rawlen && !memcmp(g.p, raw, rawlen),
	       "%s: two streams, the first only: %zu bytes", name, g.len);
	got_reset(&g);
	/* kp_bytes_stream() unchanged: zstd frames and gzip members all, xz's first stream */
	r = kp_bytes_stream(in, zlen + z2len, KP_DEFAULT_MAX_SIZE, collect, &g, &err);
	if (f == XZ)
		tap_ok(t, r == 0 && g.len == rawlen && !memcmp(g.p, raw, rawlen),
		       "xz: kp_bytes_stream() decodes the first stream as before: %zu bytes",
		       g.len);
	else
		tap_ok(t,
		       r == 0 && g.len == rawlen + raw2len && !memcmp(g.p, raw, rawlen) &&
			       !memcmp(g.p + rawlen, raw2, raw2len),
		       "%s: kp_bytes_stream() decodes both as before: %zu bytes", name, g.len);
	got_reset(&g);
	free(in);

	/* cut in the middle: one line, and what was decoded before it was handed on */
	r = kp_bytes_stream_first(z, zlen / 2, KP_DEFAULT_MAX_SIZE, collect, &g, &err);
	snprintf(want, sizeof(want), "%s: truncated %s stream", name, name);
	snprintf(what, sizeof(what), "%s: a payload cut in the middle: -2 (the input ended)", name);
	tap_is_int(t, r, -2, what);
	tap_is_str(t, err.msg, want, "... saying so in one line");
	tap_ok(t, g.len > 0 && g.len < rawlen && !memcmp(g.p, raw, g.len),
	       "%s: what came before the cut reached the sink: %zu bytes, the payload's first",
	       name, g.len);
	got_reset(&g);

	/* a decompression bomb: 16 MiB of zeros (a few KiB packed), the cap 1 MiB */
	bomb = calloc(1, (size_t)16 << 20);
	if (!bomb)
		exit(99);
	zb = pack(f, bomb, (size_t)16 << 20, &zblen);
	free(bomb);
	in = cat(zb, zblen, garbage, 8192);
	r = kp_bytes_stream_first(in, zblen + 8192, (size_t)1 << 20, collect, &g, &err);
	snprintf(what, sizeof(what), "%s: a bomb (16 MiB from %zu bytes) past a 1 MiB cap: refused",
		 name, zblen);
	tap_is_int(t, r, -1, what);
	tap_is_str(t, err.msg, "decompressed size exceeds the limit of 1 MiB",
		   "... saying so in one line");
	tap_ok(t, g.len <= ((size_t)1 << 20), "%s: at most the cap handed on: %zu bytes", name,
	       g.len);
	got_reset(&g);
	free(in);
	free(zb);

	/* a sink that stops it: called no more */
	g.stop_at = 1;
	r = kp_bytes_stream_first(z, zlen, KP_DEFAULT_MAX_SIZE, collect, &g, &err);
	tap_ok(t, r == -1 && !strcmp(err.msg, "stopped while decompressing") && g.calls == 1,
	       "%s: stopped by the sink at its first piece, not called again (%d call(s), %s)",
	       name, g.calls, err.msg);
	got_reset(&g);

	free(garbage);
	free(z);
	free(z2);
	free(raw);
	free(raw2);
}

int main(void)
{
	struct tap t = { 0 };
	struct kp_err err;
	struct got g = { 0 };

	for (enum fmt f = XZ; f <= GZIP; f++)
		one_format(&t, f);
	tap_is_int(&t,
		   kp_bytes_stream_first((const unsigned char *)"\177ELF....", 8,
					 KP_DEFAULT_MAX_SIZE, collect, &g, &err),
		   -1, "not compressed: refused");
	tap_is_str(&t, err.msg, "not compressed (xz, zstd or gzip)", "... saying so");
	tap_is_int(&t, g.calls, 0, "... and nothing handed on");
	return tap_done(&t);
}
