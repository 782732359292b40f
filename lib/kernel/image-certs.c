// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The certificates compiled into a kernel image (image-certs-internal.h): the image read by
 * its layout (image-layout.h), streamed or whole, its certificates found and placed
 * (image-certs-parts.h), memoised by the image's state or bytes (sig-memo.h).
 */
#include "image-certs-parts.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/x509.h>

#include "file/bytes.h"
#include "image-layout.h"
#include "util/content-hash.h"
#include "util/io.h"

void kp_found_certs_release(struct found_certs *f)
{
	for (size_t i = 0; i < f->n; i++)
		X509_free(f->c[i].x);
	free(f->c);
	memset(f, 0, sizeof(*f));
}

#define ROLE_SHIFT 30
#define LEN_MASK   KP_SIG_MEMO_LEN_MASK

/* The certificates of an image for sig-memo.h: each its length (role in the top bits), DER. */
static unsigned char *memo_blob(const struct found_certs *f, const enum img_role *role, size_t *len)
{
	unsigned char *der = NULL, *p;
	size_t at = 0, cap = 0;

	for (size_t i = 0; i < f->n; i++) {
		int n = i2d_X509(f->c[i].x, NULL);

		if (n <= 0 || (size_t)n > LEN_MASK ||
		    kp_grow(&der, &cap, at + 4 + (size_t)n, 1) < 0) {
			free(der);
			return NULL;
		}
		kp_store32(der + at, (uint32_t)n | (uint32_t)role[i] << ROLE_SHIFT);
		p = der + at + 4;
		if (i2d_X509(f->c[i].x, &p) != n) {
			free(der);
			return NULL;
		}
		at += 4 + (size_t)n;
	}
	*len = at;
	return der ? der : malloc(1);
}

/*
 * The certificates of an image streamed from the file, never held whole: the compressed
 * payload of a bzImage or an EFI zboot image, else the whole file, compressed (an
 * Image.gz) or not (a vmlinux). 0, 1 when a file no header described was read as it is
 * (the payload of an s390 image or an arm zImage is inside it: kp_image_embedded_certs()), -1 with
 * @err (a read error, a payload that does not decode, headers saying that the file is cut
 * short: kp_image_layout()), -2 when it is to be read whole (image_certs(): a bzImage or zboot
 * image whose payload is not compressed, a file empty or over the cap, for kp_bytes_read() to
 * say so). @opened: the state of the file opened (kp_file_state()).
 */
#define IMAGE_HEAD 4096
static int image_stream_certs(struct found_certs *f, const struct kp_root_dir *root,
			      const char *path, size_t max, uint64_t *opened, struct kp_err *err)
{
	unsigned char head[IMAGE_HEAD], magic[8];
	size_t hlen, off, plen, flen;
	enum kp_compression comp;
	struct stat st;
	int fd = kp_open_regular_in(root, path, &st, err), n = -2, kind;
	ssize_t r;

	if (fd < 0)
		return -1;
	kp_file_state(&st, opened);
	/* empty or over the cap: kp_bytes_read() says so */
	if (st.st_size == 0 || (uint64_t)st.st_size > (uint64_t)max)
		goto out;
	flen = (size_t)st.st_size;
	hlen = flen < sizeof(head) ? flen : sizeof(head);
	r = kp_pread_all(fd, head, hlen, 0);
	if (r < 0 || (size_t)r < hlen) {
		n = r < 0 ? kp_err_set(err, "read error: %s", strerror(errno))
			  : kp_err_set(err, "file shrank while being read");
		goto out;
	}
	kind = kp_image_layout(head, hlen, flen, &off, &plen, err);
	if (kind < 0) {
		n = -1;
		goto out;
	}
	r = kp_pread_all(fd, magic, plen < sizeof(magic) ? plen : sizeof(magic), off);
	if (r < 0) {
		n = kp_err_set(err, "read error: %s", strerror(errno));
		goto out;
	}
	comp = kp_detect_compression(magic, (size_t)r);
	if (comp == KP_COMP_NONE) {
		/* read as it is: 1 when no header said what it is (an s390 image, garbage) */
		if (kind == 0 && (n = kp_certs_raw_fd(f, fd, flen, err)) == 0 &&
		    (hlen < 0x40 || memcmp(head, "\177ELF", 4)))
			n = 1;
		goto out;
	}
	/* kbuild's *_with_size: xz and zstd payloads end with the 4-byte size */
	if ((comp == KP_COMP_XZ || comp == KP_COMP_ZSTD) && plen > 4 && kind == 1)
		plen -= 4;
	n = kp_certs_stream_fd(f, fd, off, plen, max, err);
out:
	close(fd);
	return n;
}

/* The certificates of an image without a compressed payload, read whole as @b. */
static int image_certs(struct found_certs *f, const struct kp_bytes *b, size_t max,
		       struct kp_err *err)
{
	if (kp_certs_scan(f, b->data, b->len) < 0)
		return kp_err_set(err, "out of memory");
	return f->n == 0 && kp_image_embedded_certs(f, b, max, err) < 0 ? -1 : 0;
}

/*
 * The certificates sig-memo.h stored for an image (@n, @len bytes of length + DER each, the
 * role in the length's top bits) into @f and @role (at least @n). 0, or -1 when out of memory.
 */
static int stored_certs(struct found_certs *f, enum img_role *role, const unsigned char *p,
			uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t w = kp_load32(p, false);
		size_t clen = w & LEN_MASK;
		const unsigned char *q = p + 4;
		X509 *x = d2i_X509(NULL, &q, (long)clen);

		p += 4 + clen;
		if (!x)
			continue; /* it parsed when stored: the entry is used for what it holds */
		if (kp_grow(&f->c, &f->cap, f->n + 1, sizeof(*f->c)) < 0) {
			X509_free(x);
			return -1;
		}
		memset(&f->c[f->n], 0, sizeof(f->c[f->n]));
		f->c[f->n].x = x;
		role[f->n++] = (enum img_role)(w >> ROLE_SHIFT);
	}
	return 0;
}

/* An image's memo keys (sig-memo.h): of its state, of its bytes, each when there is one. */
struct image_keys {
	unsigned char state[32], bytes[32];
	bool by_state, by_bytes;
	uint64_t v[8]; /* the state opened (kp_file_state()) */
};

/*
 * The image is still in the state @v it was keyed by: what was read or hashed is what the
 * state names (not a file renamed over it meanwhile).
 */
static bool still_in_state(const struct kp_root_dir *root, const char *path, const uint64_t *v)
{
	struct kp_err err;
	struct stat st;
	uint64_t now[8];
	int fd = kp_open_regular_in(root, path, &st, &err);

	if (fd < 0)
		return false;
	close(fd);
	kp_file_state(&st, now);
	return !memcmp(now, v, sizeof(now));
}

/* Into @der, *@len, *@n: the certificates stored for the image @path (@k), 0; or -1. */
static int memo_get(struct kp_sig_memo *memo, const struct kp_root_dir *root, const char *path,
		    size_t max, struct image_keys *k, unsigned char **der, size_t *len, uint32_t *n)
{
	struct kp_err err;
	struct stat st;
	int fd = kp_open_regular_in(root, path, &st, &err), r = -1;

	memset(k, 0, sizeof(*k));
	if (fd < 0)
		return -1;
	kp_file_state(&st, k->v);
	/* a state that names the bytes: the image is not read */
	k->by_state = kp_sig_memo_image_state_key(fd, &st, geteuid(), k->state) == 0;
	if (k->by_state &&
	    kp_sig_memo_image_get(memo, KP_SIG_MEMO_BY_STATE, k->state, der, len, n) == 0) {
		close(fd);
		return 0;
	}
	k->by_bytes = (uint64_t)st.st_size <= (uint64_t)max &&
		      kp_content_hash_fd(fd, (uint64_t)st.st_size, k->bytes) == 0;
	close(fd);
	if (k->by_bytes &&
	    kp_sig_memo_image_get(memo, KP_SIG_MEMO_BY_BYTES, k->bytes, der, len, n) == 0) {
		r = 0;
		/* the same bytes in a new state (touched, reinstalled): keyed by it from now on */
		if (k->by_state && still_in_state(root, path, k->v))
			kp_sig_memo_image_put(memo, KP_SIG_MEMO_BY_STATE, k->state, *der, *len, *n);
	}
	return r;
}

/* True when @b (kp_bytes_read_in()) was read from the file in the state @v (kp_file_state()). */
static bool bytes_in_state(const struct kp_bytes *b, const uint64_t *v)
{
	struct stat st = { .st_dev = b->dev,
			   .st_ino = b->ino,
			   .st_size = b->size,
			   .st_mtim = b->mtim,
			   .st_ctim = b->ctim,
			   .st_mode = b->mode };
	uint64_t now[8];

	kp_file_state(&st, now);
	return !memcmp(now, v, sizeof(now));
}

/*
 * The certificates of the image @path into @f (not from the memo). 0, or -1 with @err; also
 * when no header said what the file is, it holds no certificate in plain sight and no xz or
 * zstd payload inside it decodes to its end: an s390 image or arm zImage cut before its
 * payload, or a file kopolicy cannot read certificates from (not "0 certificates").
 * *@same: false unless every file read was in the state @keyed (what memo_get() hashed).
 */
static int read_image(struct found_certs *f, const struct kp_root_dir *root, const char *path,
		      size_t max, const uint64_t *keyed, bool *same, struct kp_err *err)
{
	struct kp_bytes b;
	uint64_t opened[8] = { 0 };
	int n = image_stream_certs(f, root, path, max, opened, err);
	bool raw = n == 1;

	*same = !memcmp(opened, keyed, sizeof(opened));
	if (n == -1)
		return -1;
	if (n == -2 || f->n == 0) {
		/* not streamed, or none found: the image whole (an xz payload inside: zImage) */
		if (kp_bytes_read_in(root, path, max, &b, err) < 0)
			return -1;
		*same = *same && bytes_in_state(&b, keyed);
		n = n == -2 ? image_certs(f, &b, max, err)
			    : kp_image_embedded_certs(f, &b, max, err);
		if (n == 0 && raw && f->n == 0)
			n = kp_err_set(err, "no certificate and no complete xz or zstd payload: a "
					    "truncated image, or one kopolicy cannot read");
		kp_bytes_release(&b);
	}
	return n < 0 ? -1 : 0;
}

int kp_image_certs_get(struct kp_sig_memo *memo, const struct kp_root_dir *root, const char *path,
		       size_t max, struct found_certs *f, enum img_role **role, struct kp_err *err)
{
	struct image_keys k = { 0 };
	unsigned char *der = NULL;
	bool same;
	size_t len;
	uint32_t n;

	*role = NULL;
	/* seen before (the same state or bytes): its certificates without decompressing it */
	if (memo && memo_get(memo, root, path, max, &k, &der, &len, &n) == 0) {
		bool stored;

		*role = calloc(n ? n : 1, sizeof(**role));
		stored = *role && stored_certs(f, *role, der, n) == 0;
		free(der);
		return stored ? 0 : kp_err_set(err, "out of memory");
	}
	if (read_image(f, root, path, max, k.v, &same, err) < 0)
		return -1;
	*role = calloc(f->n ? f->n : 1, sizeof(**role));
	if (!*role || kp_image_certs_classify(f, *role) < 0)
		return kp_err_set(err, "out of memory");
	/*
	 * The bytes hashed (memo_get()) and the bytes read (read_image()) come from separate
	 * opens: stored under either key only when each file read was the one hashed, in the
	 * state it was keyed in, and still is (a write or rename of it moves its change time;
	 * a directory on the way swapped and swapped back leaves it as it was, and only the
	 * comparison of each open's state tells that another file was read meanwhile).
	 */
	if ((k.by_state || k.by_bytes) && (!same || !still_in_state(root, path, k.v)))
		k.by_state = k.by_bytes = false;
	/*
	 * Keyed by its bytes only when its state named them as well (trusted and settled, the
	 * same before and after): the bytes hashed and the bytes read come from two reads, and
	 * for a file whose state does not name its bytes (another user's, group-writable, FUSE)
	 * an equal state proves nothing: rewritten between them, its certificates would be
	 * stored under the digest of other bytes, and found for those bytes in any later run.
	 */
	if (!k.by_state)
		k.by_bytes = false;
	der = k.by_state || k.by_bytes ? memo_blob(f, *role, &len) : NULL;
	if (der && k.by_bytes)
		kp_sig_memo_image_put(memo, KP_SIG_MEMO_BY_BYTES, k.bytes, der, len,
				      (uint32_t)f->n);
	if (der && k.by_state)
		kp_sig_memo_image_put(memo, KP_SIG_MEMO_BY_STATE, k.state, der, len,
				      (uint32_t)f->n);
	free(der);
	return 0;
}

bool kp_image_slow_payload(const struct kp_root_dir *root, const char *path)
{
	unsigned char head[IMAGE_HEAD], magic[8];
	size_t hlen, off, plen, flen;
	struct kp_err err;
	struct stat st;
	bool slow = false;
	int fd = kp_open_regular_in(root, path, &st, &err);
	ssize_t r;

	if (fd < 0)
		return false;
	flen = (size_t)st.st_size;
	hlen = flen < sizeof(head) ? flen : sizeof(head);
	r = kp_pread_all(fd, head, hlen, 0);
	if (r == (ssize_t)hlen && (kp_bzimage_payload(head, hlen, flen, &off, &plen) == 1 ||
				   kp_zboot_payload(head, hlen, flen, &off, &plen) == 1)) {
		r = kp_pread_all(fd, magic, plen < sizeof(magic) ? plen : sizeof(magic), off);
		if (r > 0) {
			enum kp_compression comp = kp_detect_compression(magic, (size_t)r);

			slow = comp != KP_COMP_NONE && comp != KP_COMP_ZSTD;
		}
	}
	close(fd);
	return slow;
}
