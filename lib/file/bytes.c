// SPDX-License-Identifier: LGPL-2.1-or-later
#include "bytes.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inputs.h"
#include "decompress.h"
#include "mem-budget.h"
#include "util/io.h"

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

/* Uncompressed modules larger than this are mapped (see kp_bytes_guard()), smaller read. */
#define KP_MAP_MIN ((size_t)1 << 20)

struct kp_decoders {
	void *xz, *zstd, *gzip; /* decoder states, created on first use */
	unsigned char *spare;	/* an output buffer handed back by kp_bytes_release() */
	size_t spare_cap;
	unsigned char *file; /* a compressed input or a sparse image, one file at a time */
	size_t file_cap;
	struct kp_mem_budget *budget; /* shared with the other threads of the read, or NULL */
};

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
static unsigned char *file_buffer(struct kp_decoders *d, size_t len)
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
	if (o->sink(o->data, o->len, o->sink_arg))
		return kp_err_set(err, "stopped while decompressing");
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

static int decompress(const unsigned char *in, size_t len, enum kp_compression comp,
		      size_t max_size, bool elf_only, struct kp_decoders *dec, struct kp_bytes *out,
		      struct kp_err *err)
{
	struct kp_mem_budget *budget = dec ? dec->budget : NULL;
	char sz[32], lim[32];
	size_t want = comp == KP_COMP_XZ     ? kp_xz_size_hint(in, len)
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

static int pread_all(int fd, unsigned char *buf, size_t len, uint64_t off, struct kp_err *err)
{
	ssize_t n = kp_pread_all(fd, buf, len, off);

	if (n < 0)
		return kp_err_set(err, "read error: %s", strerror(errno));
	if ((size_t)n < len)
		return kp_err_set(err, "file shrank while being read");
	return 0;
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
	if (pread_all(s->fd, buf, want, s->off + *got, err) < 0)
		return -1;
	*p = buf;
	*n = want;
	*got += want;
	return 0;
}

int kp_bytes_stream(const unsigned char *in, size_t len, size_t max,
		    int (*fn)(const unsigned char *p, size_t n, void *arg), void *arg,
		    struct kp_err *err)
{
	enum kp_compression comp = kp_detect_compression(in, len);
	struct kp_outbuf o = { .max = max, .sink = fn, .sink_arg = arg, .cap = KP_STREAM_CHUNK };
	int r;

	if (comp == KP_COMP_NONE)
		return kp_err_set(err, "not compressed (xz, zstd or gzip)");
	o.data = malloc(o.cap);
	if (!o.data)
		return kp_err_set(err, "out of memory");
	if (comp == KP_COMP_ZSTD) {
		struct kp_stream_in s = { .in = in, .fd = -1, .len = len };

		r = kp_zstd_stream(&s, &o, err);
	} else {
		r = decode(in, len, comp, &o, NULL, err);
	}
	if (r == 0)
		r = outbuf_flush(&o, err);
	free(o.data);
	return r;
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

	if (pread_all(fd, head, nhead, off, err) < 0)
		return -1;
	comp = kp_detect_compression(head, nhead);
	if (comp == KP_COMP_GZIP) {
		/* gzip: read whole (its window is 32 KiB; the input is what it costs) */
		in = malloc(len ? len : 1);
		if (!in)
			return kp_err_set(err, "out of memory (%zu bytes)", len);
		r = pread_all(fd, in, len, off, err);
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
		return decompress(in, len, comp, max_size, elf_only, NULL, out, err);
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

int kp_bytes_load(struct kp_bytes *b, uint64_t off, uint64_t len, struct kp_err *err)
{
	uint64_t end;

	if (!b->sparse || len == 0)
		return 0;
	if (off > b->len || len > b->len - off)
		return kp_err_set(err, "internal error: load past the end of the file");
	end = off + len;
	for (unsigned i = 0; i < b->nloaded; i++)
		if (b->loaded[i].off <= off && end <= b->loaded[i].end)
			return 0;
	if (pread_all(b->fd, b->data + off, (size_t)len, off, err) < 0)
		return -1;
	if (b->nloaded < KP_ARRAY_SIZE(b->loaded))
		b->nloaded++;
	b->loaded[b->nloaded - 1].off = off;
	b->loaded[b->nloaded - 1].end = end;
	return 0;
}

static const char *not_regular(mode_t mode)
{
	if (S_ISDIR(mode))
		return "is a directory";
	if (S_ISFIFO(mode))
		return "is a FIFO, not a regular file";
	if (S_ISSOCK(mode))
		return "is a socket, not a regular file";
	if (S_ISCHR(mode))
		return "is a character device, not a regular file";
	if (S_ISBLK(mode))
		return "is a block device, not a regular file";
	return "not a regular file";
}

int kp_open_regular(const char *path, struct stat *st, struct kp_err *err)
{
	struct stat pre;
	int fd, e;

	/*
	 * stat() before open(): opening a device can act (a tape rewinds, a watchdog arms)
	 * and opening a FIFO without a writer blocks. O_NONBLOCK covers a FIFO swapped in
	 * between the two; fstat() then refuses it.
	 */
	if (kp_in_stat(path, &pre) < 0) {
		e = errno;
		return kp_err_errno(err, e, "cannot open: %s", strerror(e));
	}
	if (!S_ISREG(pre.st_mode))
		return kp_err_errno(err, S_ISDIR(pre.st_mode) ? EISDIR : EINVAL, "%s",
				    not_regular(pre.st_mode));
	/* the state recorded is the fstat() of what was opened, the one returned in @st */
	fd = kp_in_open_stat(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, st);
	if (fd < 0) {
		e = errno;
		return kp_err_errno(err, e, "cannot open: %s", strerror(e));
	}
	if (!S_ISREG(st->st_mode)) {
		close(fd);
		return kp_err_errno(err, S_ISDIR(st->st_mode) ? EISDIR : EINVAL, "%s",
				    not_regular(st->st_mode));
	}
	return fd;
}

int kp_bytes_read_text(const char *path, size_t max, struct kp_bytes *out, struct kp_err *err)
{
	struct kp_outbuf o = { .max = max };
	struct stat st;
	char sz[32];
	int fd, r = 0;

	memset(out, 0, sizeof(*out));
	fd = kp_open_regular(path, &st, err);
	if (fd < 0)
		return -1;
	/*
	 * To the end whatever the reported size: procfs and sysfs say 0 or 4096. A regular
	 * file's size sizes the buffer at once (no copy per doubling; the 64 KiB over it are
	 * what the last, empty read() asks for and are never touched).
	 */
	if (S_ISREG(st.st_mode) && st.st_size > 0 && (uint64_t)st.st_size < max &&
	    kp_outbuf_reserve(&o, (size_t)st.st_size + 65536, err) < 0) {
		r = -1;
		goto out;
	}
	for (;;) {
		ssize_t n;

		if (o.len >= max) {
			r = kp_err_errno(err, EFBIG, "larger than the limit of %s",
					 kp_format_size(max, sz, sizeof(sz)));
			goto out;
		}
		if (kp_outbuf_reserve(&o, 65536, err) < 0) {
			r = -1;
			goto out;
		}
		n = read(fd, o.data + o.len, o.cap - o.len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			r = kp_err_errno(err, e, "read error: %s", strerror(e));
			goto out;
		}
		if (n == 0)
			break;
		o.len += (size_t)n;
	}
	if (kp_detect_compression(o.data, o.len) != KP_COMP_NONE) {
		/* A compressed text (config.gz, symvers-*.zst): decoded as text, same cap. */
		r = kp_bytes_from_text_buffer(o.data, o.len, max, out, err) < 0 ? -1 : 0;
		goto out;
	}
	out->data = o.data;
	out->len = out->file_len = o.len;
	o.data = NULL;
out:
	free(o.data);
	close(fd);
	return r;
}

int kp_bytes_map(const char *path, size_t max, struct kp_bytes *out, struct kp_err *err)
{
	struct stat st;
	char sz[32];
	void *p;
	int fd;

	memset(out, 0, sizeof(*out));
	fd = kp_open_regular(path, &st, err);
	if (fd < 0)
		return -1;
	if ((uint64_t)st.st_size > max) {
		close(fd);
		return kp_err_errno(err, EFBIG, "larger than the limit of %s",
				    kp_format_size(max, sz, sizeof(sz)));
	}
	if (st.st_size == 0) {
		close(fd);
		return kp_err_set(err, "empty file");
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		int e = errno;

		close(fd);
		return kp_err_errno(err, e, "cannot map: %s", strerror(e));
	}
	close(fd);
	out->data = p;
	out->len = out->file_len = (size_t)st.st_size;
	out->mapped = true;
	return 0;
}

int kp_bytes_lines(const char *path, size_t max, int (*fn)(const char *line, size_t len, void *arg),
		   void *arg, struct kp_err *err)
{
	const size_t chunk = (size_t)256 << 10;
	unsigned char head[8];
	char *buf = NULL;
	size_t have = 0, total = 0;
	struct stat st;
	char sz[32];
	ssize_t n;
	int fd, r = 0;

	fd = kp_open_regular(path, &st, err);
	if (fd < 0)
		return -1;
	do
		n = pread(fd, head, sizeof(head), 0);
	while (n < 0 && errno == EINTR);
	if (n > 0 && kp_detect_compression(head, (size_t)n) != KP_COMP_NONE) {
		/* compressed: decoded whole (same cap), then the same lines */
		struct kp_bytes b;

		close(fd);
		r = kp_bytes_read_text(path, max, &b, err);
		if (r < 0)
			return r;
		for (const char *p = (const char *)b.data, *end = p + b.len; p < end && r == 0;) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);

			r = fn(p, l, arg);
			p = nl ? nl + 1 : end;
		}
		kp_bytes_release(&b);
		return r;
	}
	buf = malloc(chunk);
	if (!buf) {
		close(fd);
		return kp_err_set(err, "out of memory");
	}
	/* one buffer, reused: no mapping, no copy of the whole file, lines handed over in place */
	for (;;) {
		char *p = buf, *end;

		n = read(fd, buf + have, chunk - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			r = kp_err_errno(err, e, "read error: %s", strerror(e));
			break;
		}
		total += (size_t)n;
		if (total > max) {
			r = kp_err_errno(err, EFBIG, "larger than the limit of %s",
					 kp_format_size(max, sz, sizeof(sz)));
			break;
		}
		have += (size_t)n;
		end = buf + have;
		for (char *nl; r == 0 && (nl = memchr(p, '\n', (size_t)(end - p))); p = nl + 1)
			r = fn(p, (size_t)(nl - p), arg);
		if (r == 0 && n == 0 && p < end)
			r = fn(p, (size_t)(end - p), arg); /* the last line, without a newline */
		if (r != 0 || n == 0)
			break;
		have = (size_t)(end - p);
		if (have == chunk) {
			r = kp_err_set(err, "a line longer than %s",
				       kp_format_size(chunk, sz, sizeof(sz)));
			break;
		}
		memmove(buf, p, have);
	}
	free(buf);
	close(fd);
	return r;
}

/*
 * SIGBUS on a mapped module (the file shrank under the mapping: a package upgrade
 * rewriting it in place) becomes an error of that file. The handler is installed once
 * per process; what it needs is the calling thread's own: the jump buffer and the mapped
 * range of the read in progress. A SIGBUS anywhere else keeps its default action.
 */
static __thread sigjmp_buf *bus_env;
static __thread const unsigned char *bus_lo, *bus_hi;
static pthread_once_t bus_once = PTHREAD_ONCE_INIT;
static struct sigaction bus_prev; /* set once, before the handler can run */

static void bus_handler(int sig, siginfo_t *si, void *uc)
{
	const unsigned char *a = si ? si->si_addr : NULL;

	if (bus_env && a >= bus_lo && a < bus_hi)
		siglongjmp(*bus_env, 1);
	/* not a guarded read: whoever handled SIGBUS before (the hook), else the default */
	if ((bus_prev.sa_flags & SA_SIGINFO) && bus_prev.sa_sigaction) {
		bus_prev.sa_sigaction(sig, si, uc);
	} else if (bus_prev.sa_handler != SIG_DFL && bus_prev.sa_handler != SIG_IGN &&
		   bus_prev.sa_handler) {
		bus_prev.sa_handler(sig);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static void bus_install(void)
{
	struct sigaction sa = { .sa_sigaction = bus_handler, .sa_flags = SA_SIGINFO };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &bus_prev);
}

int kp_bytes_guard(const struct kp_bytes *b, int (*fn)(void *), void *arg, struct kp_err *err)
{
	sigjmp_buf env;
	int r;

	if (!b->mapped)
		return fn(arg);
	pthread_once(&bus_once, bus_install);
	/*
	 * 0: the signal mask is not saved (that is a system call on every guarded read, and
	 * the facts cache guards one per module lookup); after the jump out of the handler
	 * SIGBUS is still blocked, so it is unblocked here, on the rare path.
	 */
	if (sigsetjmp(env, 0)) {
		sigset_t bus;

		bus_env = NULL;
		sigemptyset(&bus);
		sigaddset(&bus, SIGBUS);
		pthread_sigmask(SIG_UNBLOCK, &bus, NULL);
		return kp_err_set(err, "file shrank while being read (SIGBUS on its mapping)");
	}
	bus_lo = b->data;
	bus_hi = b->data + b->len;
	bus_env = &env;
	r = fn(arg);
	bus_env = NULL;
	return r;
}

/*
 * A file read with pread(): a file that shrinks while it is read (a package upgrade
 * rewriting it in place) gives a read error. A compressed file is read whole (into the
 * thread's buffer when it fits) and decompressed; an uncompressed one is returned sparse,
 * its fd open: the reader loads only the parts it looks at. With @map, an uncompressed
 * file is mapped instead (larger modules: faulting in their big tables costs less than
 * copying them), to be read only under kp_bytes_guard().
 */
static int bytes_pread(int fd, size_t len, size_t max_size, bool elf_only, bool map,
		       struct kp_decoders *dec, struct kp_bytes *out, struct kp_err *err)
{
	unsigned char head[8], *buf;
	size_t nhead = len < sizeof(head) ? len : sizeof(head);
	enum kp_compression comp;
	bool kept;
	int r;

	if (pread_all(fd, head, nhead, 0, err) < 0)
		return -1;
	comp = kp_detect_compression(head, nhead);
	if (map && comp == KP_COMP_NONE) {
		/* private and writable: libelf may convert in place, copy-on-write */
		void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);

		if (p != MAP_FAILED) {
			out->data = p;
			out->len = len;
			out->mapped = true;
			return 0;
		}
	}
	buf = file_buffer(dec, len);
	kept = buf != NULL;
	if (!buf)
		buf = malloc(len);
	if (!buf)
		return kp_err_set(err, "out of memory (%zu bytes)", len);
	if (comp == KP_COMP_NONE) {
		out->data = buf;
		out->len = len;
		out->sparse = true;
		out->borrowed = kept;
		out->keeper = dec;
		out->fd = fd;
		return 0;
	}
	r = pread_all(fd, buf, len, 0, err);
	if (r == 0)
		r = decompress(buf, len, comp, max_size, elf_only, dec, out, err);
	if (!kept)
		free(buf);
	return r;
}

static void set_state(struct kp_bytes *out, const struct stat *st)
{
	out->dev = st->st_dev;
	out->ino = st->st_ino;
	out->mode = st->st_mode;
	out->uid = st->st_uid;
	out->size = st->st_size;
	out->mtim = st->st_mtim;
	out->ctim = st->st_ctim;
}

static int bytes_read(const char *path, size_t max_size, bool elf_only, struct kp_decoders *dec,
		      struct kp_bytes *out, struct kp_err *err)
{
	struct stat st;
	char sz[32];
	int fd, r;

	memset(out, 0, sizeof(*out));
	fd = kp_open_regular(path, &st, err);
	if (fd < 0)
		return -1;
	if (st.st_size == 0) {
		r = kp_err_set(err, "empty file");
		goto out_close;
	}
	if ((uint64_t)st.st_size > max_size) {
		r = kp_err_set(err, "file is larger than the limit of %s (see --max-size)",
			       kp_format_size(max_size, sz, sizeof(sz)));
		goto out_close;
	}
	out->file_len = (size_t)st.st_size;
	r = bytes_pread(fd, (size_t)st.st_size, max_size, elf_only,
			elf_only && (size_t)st.st_size > KP_MAP_MIN, dec, out, err);
	set_state(out, &st);
	if (r == 0 && out->sparse)
		return 0; /* the fd is the sparse bytes' now */
	out->file_len = (size_t)st.st_size;
out_close:
	set_state(out, &st);
	close(fd);
	return r;
}

int kp_bytes_read(const char *path, size_t max_size, struct kp_bytes *out, struct kp_err *err)
{
	struct kp_bytes sparse;

	/* Whole: the callers of this one read it as a buffer. */
	if (bytes_read(path, max_size, false, NULL, &sparse, err) < 0)
		return -1;
	if (!sparse.sparse) {
		*out = sparse;
		return 0;
	}
	if (kp_bytes_load(&sparse, 0, sparse.len, err) < 0) {
		kp_bytes_release(&sparse);
		return -1;
	}
	close(sparse.fd);
	*out = sparse;
	out->sparse = false;
	out->fd = -1;
	out->nloaded = 0;
	return 0;
}

int kp_bytes_read_elf(const char *path, size_t max_size, struct kp_decoders *dec,
		      struct kp_bytes *out, struct kp_err *err)
{
	return bytes_read(path, max_size, true, dec, out, err);
}

void kp_bytes_release(struct kp_bytes *b)
{
	struct kp_decoders *d = b->keeper;

	if (b->budget)
		kp_mem_budget_give(b->budget, b->held);
	if (b->sparse)
		close(b->fd);
	if (b->borrowed) {
		/* the thread's file buffer: it stays with the thread */
	} else if (b->mapped) {
		munmap(b->data, b->len);
	} else if (d && !b->sparse && b->data && b->cap <= KP_DECODERS_SPARE_MAX &&
		   (!d->spare || d->spare_cap < b->cap)) {
		/* Keep the larger of the two as the thread's spare output buffer. */
		free(d->spare);
		d->spare = b->data;
		d->spare_cap = b->cap;
	} else {
		free(b->data);
	}
	memset(b, 0, sizeof(*b));
}
