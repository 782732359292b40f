// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The DER certificates in a kernel image's bytes (image-certs-parts.h): in a buffer, and in a
 * file or decompressed stream seen through a window, never held whole.
 */
#include "image-certs-parts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "file/bytes.h"
#include "util/io.h"

static void tail_of(struct img_cert *c, const unsigned char *p, size_t len, uint64_t base,
		    size_t end)
{
	size_t j = end;

	while (j < len && (base + j) % 4)
		j++;
	while (j + 4 <= len && j - end < TAIL_REACH && !memcmp(p + j, "\0\0\0\0", 4))
		j += 4;
	c->ntail = j < len ? (len - j < TAIL_LEN ? len - j : TAIL_LEN) : 0;
	memcpy(c->tail, p + j, c->ntail);
}

/*
 * The DER certificates in a kernel image: a SEQUENCE (30 82 len) holding a tbsCertificate
 * SEQUENCE that starts with the [0] version 3 field (30 82 len a0 03 02 01 02), as
 * certs/system_certificates.S includes them (and pem2der'ed by scripts/extract-cert.c).
 * @p is the image from offset @base on; starts before @limit are looked at. 0, or -1 when
 * out of memory.
 */
static int scan_certs_from(struct found_certs *f, const unsigned char *p, size_t len, uint64_t base,
			   size_t limit, size_t *next)
{
	size_t i;

	for (i = 0; i < limit && i + 13 < len; i++) {
		const unsigned char *q;
		struct img_cert *c;
		size_t clen;
		X509 *x;

		if (p[i] != 0x30 || p[i + 1] != 0x82 || p[i + 4] != 0x30 || p[i + 5] != 0x82 ||
		    memcmp(p + i + 8, "\xa0\x03\x02\x01\x02", 5))
			continue;
		clen = 4 + ((size_t)p[i + 2] << 8 | p[i + 3]);
		if (clen > len - i)
			continue;
		q = p + i;
		x = d2i_X509(NULL, &q, (long)clen);
		if (!x || (size_t)(q - (p + i)) != clen) {
			X509_free(x);
			continue;
		}
		if (kp_grow(&f->c, &f->cap, f->n + 1, sizeof(*f->c)) < 0) {
			X509_free(x);
			f->oom = true;
			*next = i;
			return -1;
		}
		c = &f->c[f->n++];
		c->x = x;
		c->off = base + i;
		c->len = clen;
		tail_of(c, p, len, base, i + clen);
		i += clen - 1;
	}
	*next = i;
	return 0;
}

/* Every certificate of @p (the whole image). */
int kp_certs_scan(struct found_certs *f, const unsigned char *p, size_t len)
{
	size_t next;

	return scan_certs_from(f, p, len, 0, len, &next);
}

int kp_cert_stream_scan(struct kp_cert_stream *cs, size_t limit)
{
	size_t next;

	if (scan_certs_from(cs->f, cs->win, cs->len, cs->base, limit, &next) < 0) {
		cs->n = -1;
		return -1;
	}
	if (next > cs->len)
		next = cs->len;
	memmove(cs->win, cs->win + next, cs->len - next);
	cs->len -= next;
	cs->base += next;
	return 0;
}

int kp_cert_stream_piece(const unsigned char *p, size_t n, void *arg)
{
	struct kp_cert_stream *cs = arg;

	if (kp_grow(&cs->win, &cs->cap, cs->len + n, 1) < 0) {
		cs->n = -1;
		return -1;
	}
	memcpy(cs->win + cs->len, p, n);
	cs->len += n;
	cs->out += n;
	/* start positions whose certificate may not have arrived whole wait for the next piece */
	return cs->len > CERT_MAX ? kp_cert_stream_scan(cs, cs->len - CERT_MAX) : 0;
}

/*
 * The certificates of the compressed payload at @off (@len bytes) of the file @fd: neither it
 * nor its output is ever held whole. 0, or -1 with @err.
 *
 * Decoded to the end, never stopped once the lists are found: nothing in the stream says that
 * no certificate follows, and one that does changes the roles kp_image_certs_classify() gives.
 * After certs/'s .init.rodata come the .init.rodata of later objects
 * (crypto/asymmetric_keys/selftest.c's certificates with FIPS_SIGNATURE_SELFTEST, v6.0+), a
 * built-in initramfs (INIT_RAM_FS, at the end of .init.data), the zeros of .bss and the
 * relocations; Debian's System.map is a stub, so the lists' addresses are not known beforehand
 * either. On amd64-6.1 the one certificate ends at 40.4 of 65.9 MB; decoding the rest costs 0.14 s,
 * which the thread of kp_keyring_image_begin() spends beside the modules.
 */
int kp_certs_stream_fd(struct found_certs *f, int fd, size_t off, size_t len, size_t max,
		       struct kp_err *err)
{
	struct kp_cert_stream cs = { .f = f };
	int r = kp_bytes_stream_fd(fd, off, len, max, kp_cert_stream_piece, &cs, err);

	if (r == 0 && cs.n >= 0)
		kp_cert_stream_scan(&cs, cs.len);
	free(cs.win);
	if (cs.n < 0)
		return kp_err_set(err, "out of memory");
	return r < 0 ? -1 : 0;
}

/* The certificates of the @len bytes of the file @fd as they are, read a piece at a time. */
int kp_certs_raw_fd(struct found_certs *f, int fd, size_t len, struct kp_err *err)
{
	struct kp_cert_stream cs = { .f = f };
	unsigned char *buf = malloc(KP_STREAM_CHUNK);
	size_t got = 0;
	int r = 0;

	if (!buf)
		return kp_err_set(err, "out of memory");
	while (got < len && r == 0) {
		size_t want = len - got < KP_STREAM_CHUNK ? len - got : KP_STREAM_CHUNK;
		ssize_t n = kp_pread_all(fd, buf, want, got);

		if (n < 0 || (size_t)n < want) {
			r = n < 0 ? kp_err_set(err, "read error: %s", strerror(errno))
				  : kp_err_set(err, "file shrank while being read");
			break;
		}
		got += want;
		r = kp_cert_stream_piece(buf, want, &cs);
	}
	if (r == 0 && cs.n >= 0)
		kp_cert_stream_scan(&cs, cs.len);
	free(buf);
	free(cs.win);
	if (cs.n < 0)
		return kp_err_set(err, "out of memory");
	return r < 0 ? -1 : 0;
}
