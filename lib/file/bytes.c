// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The one file reader (bytes.h): regular files only, read with pread() (sparse images of
 * uncompressed files), larger modules mapped, text read by lines. Opening them (under a root
 * or not) is bytes-open.c's, decompression bytes-decompress.c's, the guard of mapped modules
 * bytes-guard.c's.
 */
#include "bytes-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decompress.h"
#include "inputs.h"
#include "mem-budget.h"
#include "rootopen.h"
#include "util/io.h"

int kp_bytes_pread(int fd, unsigned char *buf, size_t len, uint64_t off, struct kp_err *err)
{
	ssize_t n = kp_pread_all(fd, buf, len, off);

	if (n < 0)
		return kp_err_set(err, "read error: %s", strerror(errno));
	if ((size_t)n < len)
		return kp_err_set(err, "file shrank while being read");
	return 0;
}

/* Uncompressed modules larger than this are mapped (see kp_bytes_guard()), smaller read. */
#define KP_MAP_MIN ((size_t)1 << 20)

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
	if (kp_bytes_pread(b->fd, b->data + off, (size_t)len, off, err) < 0)
		return -1;
	if (b->nloaded < KP_ARRAY_SIZE(b->loaded))
		b->nloaded++;
	b->loaded[b->nloaded - 1].off = off;
	b->loaded[b->nloaded - 1].end = end;
	return 0;
}

static int read_text_fd(int fd, const struct stat *st, size_t max, struct kp_bytes *out,
			struct kp_err *err);
static void set_state(struct kp_bytes *out, const struct stat *st);

int kp_bytes_read_text(const char *path, size_t max, struct kp_bytes *out, struct kp_err *err)
{
	return kp_bytes_read_text_in(NULL, path, max, out, err);
}

int kp_bytes_read_text_in(const struct kp_root_dir *root, const char *path, size_t max,
			  struct kp_bytes *out, struct kp_err *err)
{
	struct stat st;
	int fd;

	memset(out, 0, sizeof(*out));
	fd = kp_open_regular_in(root, path, &st, err);
	if (fd < 0)
		return -1;
	return read_text_fd(fd, &st, max, out, err);
}

/* Reads the open @fd (closed here) to its end into @out. */
static int read_text_fd(int fd, const struct stat *stp, size_t max, struct kp_bytes *out,
			struct kp_err *err)
{
	struct kp_outbuf o = { .max = max };
	const struct stat st = *stp;
	char sz[32];
	int r = 0;

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
	if (r == 0)
		set_state(out, &st);
	free(o.data);
	close(fd);
	return r;
}

int kp_bytes_map(const char *path, size_t max, struct kp_bytes *out, struct kp_err *err)
{
	return kp_bytes_map_in(NULL, path, max, out, err);
}

int kp_bytes_map_in(const struct kp_root_dir *root, const char *path, size_t max,
		    struct kp_bytes *out, struct kp_err *err)
{
	struct stat st;
	int fd, r;

	memset(out, 0, sizeof(*out));
	fd = kp_open_regular_in(root, path, &st, err);
	if (fd < 0)
		return -1;
	r = kp_bytes_map_fd(fd, &st, max, out, err);
	close(fd);
	return r;
}

int kp_bytes_map_fd(int fd, const struct stat *st, size_t max, struct kp_bytes *out,
		    struct kp_err *err)
{
	char sz[32];
	void *p;

	memset(out, 0, sizeof(*out));
	if ((uint64_t)st->st_size > max)
		return kp_err_errno(err, EFBIG, "larger than the limit of %s",
				    kp_format_size(max, sz, sizeof(sz)));
	if (st->st_size == 0)
		return kp_err_set(err, "empty file");
	p = mmap(NULL, (size_t)st->st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		int e = errno;

		return kp_err_errno(err, e, "cannot map: %s", strerror(e));
	}
	out->data = p;
	out->len = out->file_len = (size_t)st->st_size;
	out->mapped = true;
	return 0;
}

int kp_bytes_lines(const char *path, size_t max, int (*fn)(const char *line, size_t len, void *arg),
		   void *arg, struct kp_err *err)
{
	return kp_bytes_lines_in(NULL, path, max, fn, arg, err);
}

int kp_bytes_lines_in(const struct kp_root_dir *root, const char *path, size_t max,
		      int (*fn)(const char *line, size_t len, void *arg), void *arg,
		      struct kp_err *err)
{
	const size_t chunk = (size_t)256 << 10;
	unsigned char head[8];
	char *buf = NULL;
	size_t have = 0, total = 0;
	struct stat st;
	char sz[32];
	ssize_t n;
	int fd, r = 0;

	fd = kp_open_regular_in(root, path, &st, err);
	if (fd < 0)
		return -1;
	do
		n = pread(fd, head, sizeof(head), 0);
	while (n < 0 && errno == EINTR);
	if (n > 0 && kp_detect_compression(head, (size_t)n) != KP_COMP_NONE) {
		/* compressed: decoded whole (same cap), then the same lines */
		struct kp_bytes b;

		close(fd);
		r = kp_bytes_read_text_in(root, path, max, &b, err);
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

	if (kp_bytes_pread(fd, head, nhead, 0, err) < 0)
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
	buf = kp_decoders_file_buffer(dec, len);
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
	r = kp_bytes_pread(fd, buf, len, 0, err);
	if (r == 0)
		r = kp_bytes_decompress(buf, len, comp, max_size, elf_only, dec, out, err);
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

static int bytes_read(const struct kp_root_dir *root, const char *path, size_t max_size,
		      bool elf_only, struct kp_decoders *dec, struct kp_bytes *out,
		      struct kp_err *err)
{
	struct stat st;
	char sz[32];
	int fd, r;

	memset(out, 0, sizeof(*out));
	fd = kp_open_regular_in(root, path, &st, err);
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
	return kp_bytes_read_in(NULL, path, max_size, out, err);
}

int kp_bytes_read_in(const struct kp_root_dir *root, const char *path, size_t max_size,
		     struct kp_bytes *out, struct kp_err *err)
{
	struct kp_bytes sparse;

	/* Whole: the callers of this one read it as a buffer. */
	if (bytes_read(root, path, max_size, false, NULL, &sparse, err) < 0)
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
	return bytes_read(NULL, path, max_size, true, dec, out, err);
}

int kp_bytes_read_elf_in(const struct kp_root_dir *root, const char *path, size_t max_size,
			 struct kp_decoders *dec, struct kp_bytes *out, struct kp_err *err)
{
	return bytes_read(root, path, max_size, true, dec, out, err);
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
