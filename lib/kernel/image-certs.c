// SPDX-License-Identifier: LGPL-2.1-or-later
/* The certificates compiled into a kernel image: see image-certs-internal.h. */
#include "image-certs-internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/x509.h>

#include "file/bytes.h"
#include "util/content-hash.h"
#include "util/io.h"

#define TAIL_REACH (65536 + 16)

void kp_found_certs_release(struct found_certs *f)
{
	for (size_t i = 0; i < f->n; i++)
		X509_free(f->c[i].x);
	free(f->c);
	memset(f, 0, sizeof(*f));
}

#define ROLE_SHIFT 30
#define LEN_MASK   KP_SIG_MEMO_LEN_MASK

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
static int scan_certs(struct found_certs *f, const unsigned char *p, size_t len)
{
	size_t next;

	return scan_certs_from(f, p, len, 0, len, &next);
}

/* The 4-byte word of @t at @at in either byte order: @be says which matched @v. */
static bool word_is(const unsigned char *t, size_t n, size_t at, uint32_t v, int *be)
{
	if (at + 4 > n || v == 0)
		return false;
	if (*be != 1 && kp_load32(t + at, false) == v) {
		*be = 0;
		return true;
	}
	if (*be != 0 && kp_load32(t + at, true) == v) {
		*be = 1;
		return true;
	}
	return false;
}

/* The offset of the first non-zero 4-byte word of @t from @at on, at most 8 bytes later. */
static size_t next_word(const unsigned char *t, size_t n, size_t at)
{
	for (size_t end = at + 8; at < end && at + 4 <= n && !memcmp(t + at, "\0\0\0\0", 4);)
		at += 4;
	return at;
}

struct run {
	size_t a, b; /* certificates [a, b) of the image, each starting where the last ends */
	bool sized;  /* followed by its length: "<list>_size: .quad (or .long) end - start" */
	bool msize;  /* and then by the first's length: module_cert_size (v5.13+ system list) */
};

/*
 * The role of each certificate of @f. The linker puts certs/'s .init.rodata (__INITRODATA)
 * in certs/Makefile's object order: system_certificates.o (the system list, the extra
 * certificate's space, system_certificate_list_size, module_cert_size) before
 * revocation_certificates.o (the revocation list, revocation_certificate_list_size), each
 * list after .align 8 and followed, after .align 8, by its size as a .quad (.long without
 * CONFIG_64BIT: so in the 5.10.262, 6.1.192 and 7.2.13 trees; only the low 4 bytes are
 * compared, so either fits), in the image's byte order. The system list is the sized run
 * followed by module_cert_size, else the first sized run (kernels before module_cert_size);
 * the revocation list the one other sized run, else the first sized run after the system
 * list. 0, or -1 when out of memory.
 */
static int classify(const struct found_certs *f, enum img_role *role)
{
	struct run *r = calloc(f->n ? f->n : 1, sizeof(*r));
	size_t nr = 0, sys = SIZE_MAX, rev = SIZE_MAX, nsized = 0;

	if (!r)
		return -1;
	for (size_t a = 0; a < f->n;) {
		size_t b = a + 1, total = f->c[a].len;
		const struct img_cert *last;
		size_t at = 0;
		int be = -1;

		while (b < f->n && f->c[b].off == f->c[b - 1].off + f->c[b - 1].len)
			total += f->c[b++].len;
		last = &f->c[b - 1];
		r[nr].a = a;
		r[nr].b = b;
		r[nr].sized = total <= UINT32_MAX &&
			      word_is(last->tail, last->ntail, 0, (uint32_t)total, &be);
		if (!r[nr].sized && total <= UINT32_MAX &&
		    word_is(last->tail, last->ntail, 0, (uint32_t)last->len, &be)) {
			/*
			 * system_extra_cert_used: scripts/insert-sys-cert put the run's last
			 * certificate in the extra space (and added it to the list's size)
			 */
			at = next_word(last->tail, last->ntail, 4);
			r[nr].sized = word_is(last->tail, last->ntail, at, (uint32_t)total, &be);
		}
		if (r[nr].sized) {
			/* module_cert_size after the size: a .quad's other half, .align 8 */
			at = next_word(last->tail, last->ntail, at + 4);
			r[nr].msize =
				word_is(last->tail, last->ntail, at, (uint32_t)f->c[a].len, &be);
			nsized++;
		}
		nr++;
		a = b;
	}
	for (size_t i = 0; i < nr && sys == SIZE_MAX; i++)
		if (r[i].sized && r[i].msize)
			sys = i;
	if (sys != SIZE_MAX && nsized == 2) {
		for (size_t i = 0; i < nr; i++)
			if (r[i].sized && i != sys)
				rev = i;
	} else {
		for (size_t i = 0; i < nr && sys == SIZE_MAX; i++)
			if (r[i].sized)
				sys = i;
		for (size_t i = sys == SIZE_MAX ? nr : sys + 1; i < nr && rev == SIZE_MAX; i++)
			if (r[i].sized)
				rev = i;
	}
	for (size_t i = 0; i < nr; i++)
		for (size_t k = r[i].a; k < r[i].b; k++)
			role[k] = i == sys	    ? ROLE_SYSTEM
				  : i == rev	    ? ROLE_REVOCATION
				  : rev != SIZE_MAX ? ROLE_UNPLACED_BESIDE
						    : ROLE_UNPLACED;
	free(r);
	return 0;
}

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
 * The same over a decompressed stream (kp_bytes_stream()): a window of the last bytes, so a
 * certificate (at most 4 + 65535 bytes: 30 82 len) across two pieces is still seen whole,
 * with the words after it (TAIL_REACH).
 */
#define CERT_MAX (4 + 65535 + 13 + TAIL_REACH + TAIL_LEN)
struct cert_stream {
	struct found_certs *f;
	unsigned char *win;
	size_t len, cap;
	uint64_t base; /* the image offset of win[0] */
	uint64_t out;  /* the bytes decoded so far */
	int n;	       /* 0, or -1 when out of memory */
};

static int cert_stream_scan(struct cert_stream *cs, size_t limit)
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

static int cert_stream_piece(const unsigned char *p, size_t n, void *arg)
{
	struct cert_stream *cs = arg;

	if (kp_grow(&cs->win, &cs->cap, cs->len + n, 1) < 0) {
		cs->n = -1;
		return -1;
	}
	memcpy(cs->win + cs->len, p, n);
	cs->len += n;
	cs->out += n;
	/* start positions whose certificate may not have arrived whole wait for the next piece */
	return cs->len > CERT_MAX ? cert_stream_scan(cs, cs->len - CERT_MAX) : 0;
}

/*
 * The certificates of the compressed payload at @off (@len bytes) of the file @fd: neither it
 * nor its output is ever held whole. 0, or -1 with @err.
 *
 * Decoded to the end, never stopped once the lists are found: nothing in the stream says that
 * no certificate follows, and one that does changes the roles classify() gives. After certs/'s
 * .init.rodata come the .init.rodata of later objects (crypto/asymmetric_keys/selftest.c's
 * certificates with FIPS_SIGNATURE_SELFTEST, v6.0+), a built-in initramfs (INIT_RAM_FS, at the
 * end of .init.data), the zeros of .bss and the relocations; Debian's System.map is a stub,
 * so the lists' addresses are not known beforehand either. On amd64-6.1 the one certificate
 * ends at 40.4 of 65.9 MB; decoding the rest costs 0.14 s, which the thread of
 * kp_keyring_image_begin() spends beside the modules.
 */
static int stream_certs(struct found_certs *f, int fd, size_t off, size_t len, size_t max,
			struct kp_err *err)
{
	struct cert_stream cs = { .f = f };
	int r = kp_bytes_stream_fd(fd, off, len, max, cert_stream_piece, &cs, err);

	if (r == 0 && cs.n >= 0)
		cert_stream_scan(&cs, cs.len);
	free(cs.win);
	if (cs.n < 0)
		return kp_err_set(err, "out of memory");
	return r < 0 ? -1 : 0;
}

/* The end of a bzImage's code (@p: its header): the setup sectors, then syssize paragraphs. */
static uint64_t bzimage_code_end(const unsigned char *p)
{
	return ((uint64_t)(p[0x1f1] ? p[0x1f1] : 4) + 1) * 512 +
	       (uint64_t)kp_load32(p + 0x1f4, false) * 16;
}

/*
 * The payload of an x86 bzImage (arch/x86/boot/header.S: payload_offset, payload_length) of
 * @len bytes, @hlen of them at @p: 1, 0 when it is no bzImage, -1 when the payload lies
 * outside the file, -2 when the code after it does (syssize: the 16-byte paragraphs after
 * the setup sectors, up to where an EFI signature begins; so on Debian's 5.10, 6.1, 6.12 and
 * 7.2 images).
 */
static int bzimage_payload(const unsigned char *p, size_t hlen, size_t len, size_t *off,
			   size_t *plen)
{
	size_t setup, start, size;

	if (hlen < 0x250 || memcmp(p + 0x202, "HdrS", 4))
		return 0;
	setup = ((size_t)(p[0x1f1] ? p[0x1f1] : 4) + 1) * 512;
	start = setup + kp_load32(p + 0x248, false);
	size = kp_load32(p + 0x24c, false);
	if (start >= len || size == 0 || size > len - start)
		return -1;
	if (bzimage_code_end(p) > len)
		return -2;
	*off = start;
	*plen = size;
	return 1;
}

/*
 * An EFI zboot image (drivers/firmware/efi/libstub/zboot-header.S: "zimg", offset, size): 1,
 * 0 when it is no zboot image, -1 when the payload lies outside the file.
 */
static int zboot_payload(const unsigned char *p, size_t hlen, size_t len, size_t *off, size_t *plen)
{
	size_t start, size;

	if (hlen < 0x40 || memcmp(p, "MZ", 2) || memcmp(p + 4, "zimg", 4))
		return 0;
	start = kp_load32(p + 8, false);
	size = kp_load32(p + 12, false);
	if (start >= len || size == 0 || size > len - start)
		return -1;
	*off = start;
	*plen = size;
	return 1;
}

/*
 * Whether the PE header of an EFI image (@hlen bytes at @p: a bzImage's EFI stub, an EFI
 * zboot image, an arm64 or riscv Image) says the file of @len bytes is longer: the file
 * bytes of its sections (PointerToRawData + SizeOfRawData: the end of syssize on Debian's
 * amd64 5.10, 6.1, 6.12 and 7.2), or its signature (the security directory: file offset and
 * size of the Authenticode signature sbsign appends). 0, or -1 with @err.
 */
static int pe_image_cut(const unsigned char *p, size_t hlen, size_t len, struct kp_err *err)
{
	size_t pe, opt, sec, nd, dd, nsec;
	uint64_t end = 0, at, size;

	if (hlen < 0x40 || memcmp(p, "MZ", 2))
		return 0;
	pe = kp_load32(p + 0x3c, false);
	if (pe > hlen - 24 || memcmp(p + pe, "PE\0\0", 4))
		return 0;
	opt = pe + 24;
	sec = opt + kp_load16(p + pe + 20, false); /* SizeOfOptionalHeader */
	nsec = kp_load16(p + pe + 6, false);
	for (size_t i = 0; i < nsec && sec + 40 * i + 24 <= hlen; i++) {
		const unsigned char *h = p + sec + 40 * i;
		uint64_t e = (uint64_t)kp_load32(h + 20, false) + kp_load32(h + 16, false);

		end = e > end ? e : end;
	}
	if (end > len)
		return kp_err_set(
			err, "truncated EFI image: %zu of the %" PRIu64 " bytes its sections take",
			len, end);
	/* PE32 or PE32+: NumberOfRvaAndSizes, then the data directories (security: the 5th) */
	if (opt + 2 > hlen)
		return 0;
	switch (kp_load16(p + opt, false)) {
	case 0x10b:
		nd = opt + 92;
		break;
	case 0x20b:
		nd = opt + 108;
		break;
	default:
		return 0;
	}
	dd = nd + 4 + 4 * 8;
	if (dd + 8 > hlen || kp_load32(p + nd, false) < 5)
		return 0;
	at = kp_load32(p + dd, false);
	size = kp_load32(p + dd + 4, false);
	if (size && (at > len || size > len - at))
		return kp_err_set(err, "truncated EFI image: its signature lies past the end of "
				       "the file");
	return 0;
}

/*
 * Whether the header of an image read as it is (@hlen bytes at @p of a file of @len) says
 * the file is longer: an arm zImage's (arch/arm/boot/compressed/head.S, v2.6+: magic
 * 0x016f2818 at 0x24, then the load address and the zImage's end: its size, the xz payload
 * inside) or a vmlinux's section headers (the ELF header's e_shoff, e_shnum, e_shentsize:
 * the linker writes them last). 0, or -1 with @err.
 */
static int whole_image_cut(const unsigned char *p, size_t hlen, size_t len, struct kp_err *err)
{
	uint64_t shoff, need;

	if (hlen >= 0x30 &&
	    (kp_load32(p + 0x24, false) == 0x016f2818 || kp_load32(p + 0x24, true) == 0x016f2818)) {
		bool be = kp_load32(p + 0x24, true) == 0x016f2818;
		uint32_t start = kp_load32(p + 0x28, be), end = kp_load32(p + 0x2c, be);

		if (end > start && end - start > len)
			return kp_err_set(err,
					  "truncated zImage: %zu of the %" PRIu32
					  " bytes its header gives",
					  len, end - start);
		return 0;
	}
	if (hlen < 0x40 || memcmp(p, "\177ELF", 4) || (p[4] != 1 && p[4] != 2) ||
	    (p[5] != 1 && p[5] != 2) || p[6] != 1)
		return 0;
	if (p[4] == 1) {
		shoff = kp_load32(p + 0x20, p[5] == 2);
		need = (uint64_t)kp_load16(p + 0x2e, p[5] == 2) * kp_load16(p + 0x30, p[5] == 2);
	} else {
		shoff = kp_load64(p + 0x28, p[5] == 2);
		need = (uint64_t)kp_load16(p + 0x3a, p[5] == 2) * kp_load16(p + 0x3c, p[5] == 2);
	}
	if (shoff && (shoff > len || need > len - shoff))
		return kp_err_set(err, "truncated vmlinux: its section headers lie past the end "
				       "of the file");
	return 0;
}

/* The certificates of the @len bytes of the file @fd as they are, read a piece at a time. */
static int raw_certs(struct found_certs *f, int fd, size_t len, struct kp_err *err)
{
	struct cert_stream cs = { .f = f };
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
		r = cert_stream_piece(buf, want, &cs);
	}
	if (r == 0 && cs.n >= 0)
		cert_stream_scan(&cs, cs.len);
	free(buf);
	free(cs.win);
	if (cs.n < 0)
		return kp_err_set(err, "out of memory");
	return r < 0 ? -1 : 0;
}

/*
 * Where the certificates of an image of @flen bytes are, from its first @hlen bytes at @head:
 * the compressed payload of a bzImage (1) or an EFI zboot image (2) at *@off, *@plen bytes;
 * else the whole file (0). -1 with @err when the headers say that the file is cut short (a
 * half-written image: its certificates would be fewer or none).
 */
static int image_layout(const unsigned char *head, size_t hlen, size_t flen, size_t *off,
			size_t *plen, struct kp_err *err)
{
	int n;

	switch (bzimage_payload(head, hlen, flen, off, plen)) {
	case -1:
		return kp_err_set(err,
				  "truncated bzImage: its payload lies past the end of the file");
	case -2:
		return kp_err_set(
			err, "truncated bzImage: %zu of the %" PRIu64 " bytes its header gives",
			flen, bzimage_code_end(head));
	case 1:
		n = 1;
		break;
	default:
		switch (zboot_payload(head, hlen, flen, off, plen)) {
		case -1:
			return kp_err_set(err, "truncated EFI zboot image: its payload lies past "
					       "the end of the file");
		case 1:
			n = 2;
			break;
		default:
			if (whole_image_cut(head, hlen, flen, err) < 0)
				return -1;
			*off = 0;
			*plen = flen;
			n = 0;
		}
	}
	return pe_image_cut(head, hlen, flen, err) < 0 ? -1 : n;
}

/*
 * The certificates of an image streamed from the file, never held whole: the compressed
 * payload of a bzImage or an EFI zboot image, else the whole file, compressed (an
 * Image.gz) or not (a vmlinux). 0, 1 when a file no header described was read as it is
 * (the payload of an s390 image or an arm zImage is inside it: embedded_certs()), -1 with
 * @err (a read error, a payload that does not decode, headers saying that the file is cut
 * short: image_layout()), -2 when it is to be read whole (image_certs(): a bzImage or zboot
 * image whose payload is not compressed, a file empty or over the cap, for kp_bytes_read() to
 * say so).
 */
#define IMAGE_HEAD 4096
static int image_stream_certs(struct found_certs *f, const struct kp_root_dir *root,
			      const char *path, size_t max, struct kp_err *err)
{
	unsigned char head[IMAGE_HEAD], magic[8];
	size_t hlen, off, plen, flen;
	enum kp_compression comp;
	struct stat st;
	int fd = kp_open_regular_in(root, path, &st, err), n = -2, kind;
	ssize_t r;

	if (fd < 0)
		return -1;
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
	kind = image_layout(head, hlen, flen, &off, &plen, err);
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
		if (kind == 0 && (n = raw_certs(f, fd, flen, err)) == 0 &&
		    (hlen < 0x40 || memcmp(head, "\177ELF", 4)))
			n = 1;
		goto out;
	}
	/* kbuild's *_with_size: xz and zstd payloads end with the 4-byte size */
	if ((comp == KP_COMP_XZ || comp == KP_COMP_ZSTD) && plen > 4 && kind == 1)
		plen -= 4;
	n = stream_certs(f, fd, off, plen, max, err);
out:
	close(fd);
	return n;
}

/* A compressed payload inside an image, found by its magic. */
struct embedded_kind {
	const char *name;
	const char *magic;
	size_t len;
	/*
	 * The output past which a stream that then fails is the payload, damaged, not a chance
	 * magic in the code: xz's stream and block headers are CRC-checked (a chance magic
	 * decodes nothing: @header_crc, and the file ending inside it means it is cut), a zstd
	 * block holds at most 128 KiB (ZSTD_BLOCKSIZE_MAX).
	 */
	uint64_t payload_out;
	bool header_crc;
};

/*
 * The certificates of the compressed stream at @in (@len bytes to the end of the image, of
 * the kind @k), decoded up to its end and streamed through the scanner, never held whole,
 * what follows it ignored (kp_bytes_stream_first()): the payload of a self-decompressing
 * image, at no offset a header gives, between the decompressor's code before and after it.
 * An arm zImage's xz (arch/arm/boot/compressed/piggy.S), an s390 image's zstd (arch/s390/boot:
 * the decompressor, then .vmlinux.bin.compressed, then more of the decompressor). At most
 * @max bytes of output. 0 when decoded to its end, 1 when it is no stream (a chance magic:
 * it failed before giving a certificate or more than @k->payload_out bytes, and the image
 * did not end inside it), 2 when the image ended inside a zstd frame that gave nothing yet
 * (a chance magic near the end, or the payload cut in its first block: embedded_certs()
 * decides), -1 with @err when out of memory or it is the payload, damaged: cut short by the
 * end of the file (an image half written), corrupt or past @max; its certificates are then
 * not all known.
 */
static int embedded_stream_certs(struct found_certs *f, const struct embedded_kind *k,
				 const unsigned char *in, size_t len, size_t max,
				 struct kp_err *err)
{
	struct cert_stream cs = { .f = f };
	size_t n0 = f->n;
	struct kp_err why;
	int r = kp_bytes_stream_first(in, len, max, cert_stream_piece, &cs, &why);

	if (cs.n >= 0 && cs.len) /* nothing decoded (no stream at @in): no window to scan */
		cert_stream_scan(&cs, cs.len);
	free(cs.win);
	if (cs.n < 0)
		return kp_err_set(err, "out of memory");
	if (r == 0)
		return 0;
	if (r == -2 && (cs.out > 0 || k->header_crc))
		return kp_err_set(err, "truncated image: its %s payload ends with the file (%s)",
				  k->name, why.msg);
	if (f->n > n0 || cs.out > k->payload_out)
		return kp_err_set(err, "the %s payload inside the image: %s", k->name, why.msg);
	return r == -2 ? 2 : 1;
}

/*
 * None in plain sight: the certificates of an xz payload inside the image (arm zImage), else
 * of a zstd one (s390: Debian's 6.12 and 7.2 s390x images, CONFIG_KERNEL_ZSTD); each place
 * the stream's magic stands is tried until one gives certificates. 1 when one was decoded
 * to its end, 0 when none was, -1 with @err (out of memory, a damaged payload:
 * embedded_stream_certs(); and when none decoded to its end but the image ended inside a
 * zstd frame: the payload cut before its first block's end).
 */
static int embedded_certs(struct found_certs *f, const struct kp_bytes *b, size_t max,
			  struct kp_err *err)
{
	static const struct embedded_kind payload[] = {
		{ .name = "xz",
		  .magic = "\xfd"
			   "7zXZ\0",
		  .len = 6,
		  .payload_out = 0,
		  .header_crc = true },
		{ .name = "zstd",
		  .magic = "\x28\xb5\x2f\xfd",
		  .len = 4,
		  .payload_out = (uint64_t)128 << 10 },
	};
	bool whole = false, cut = false;

	for (size_t k = 0; k < KP_ARRAY_SIZE(payload); k++) {
		const unsigned char *x = b->data;

		while (f->n == 0 && (x = memmem(x, b->len - (size_t)(x - b->data), payload[k].magic,
						payload[k].len))) {
			int r = embedded_stream_certs(f, &payload[k], x,
						      b->len - (size_t)(x - b->data), max, err);

			if (r < 0)
				return -1;
			whole |= r == 0;
			cut |= r == 2;
			x++;
		}
	}
	if (f->n == 0 && !whole && cut)
		return kp_err_set(err, "truncated image: its zstd payload ends with the file "
				       "(zstd: truncated zstd stream)");
	return whole;
}

/* The certificates of an image without a compressed payload, read whole as @b. */
static int image_certs(struct found_certs *f, const struct kp_bytes *b, size_t max,
		       struct kp_err *err)
{
	if (scan_certs(f, b->data, b->len) < 0)
		return kp_err_set(err, "out of memory");
	return f->n == 0 && embedded_certs(f, b, max, err) < 0 ? -1 : 0;
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

/* SHA-256 of the image file's bytes (its memo key); -1 when it cannot be read. */
static int image_key(const struct kp_root_dir *root, const char *path, size_t max,
		     unsigned char key[32])
{
	struct kp_err err;
	struct stat st;
	int fd = kp_open_regular_in(root, path, &st, &err), r = -1;

	if (fd < 0)
		return -1;
	if ((uint64_t)st.st_size <= (uint64_t)max)
		r = kp_content_hash_fd(fd, (uint64_t)st.st_size, key);
	close(fd);
	return r;
}

/*
 * The certificates of the image @path into @f (not from the memo). 0, or -1 with @err; also
 * when no header said what the file is, it holds no certificate in plain sight and no xz or
 * zstd payload inside it decodes to its end: an s390 image or arm zImage cut before its
 * payload, or a file kopolicy cannot read certificates from (not "0 certificates").
 */
static int read_image(struct found_certs *f, const struct kp_root_dir *root, const char *path,
		      size_t max, struct kp_err *err)
{
	struct kp_bytes b;
	int n = image_stream_certs(f, root, path, max, err);
	bool raw = n == 1;

	if (n == -1)
		return -1;
	if (n == -2 || f->n == 0) {
		/* not streamed, or none found: the image whole (an xz payload inside: zImage) */
		if (kp_bytes_read_in(root, path, max, &b, err) < 0)
			return -1;
		n = n == -2 ? image_certs(f, &b, max, err) : embedded_certs(f, &b, max, err);
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
	unsigned char key[32], *der = NULL;
	bool keyed;
	size_t len;
	uint32_t n;

	*role = NULL;
	/* seen before (the same bytes): its certificates without decompressing it again */
	keyed = memo && image_key(root, path, max, key) == 0;
	if (keyed && kp_sig_memo_image_get(memo, key, &der, &len, &n) == 0) {
		bool stored;

		*role = calloc(n ? n : 1, sizeof(**role));
		stored = *role && stored_certs(f, *role, der, n) == 0;
		free(der);
		return stored ? 0 : kp_err_set(err, "out of memory");
	}
	if (read_image(f, root, path, max, err) < 0)
		return -1;
	*role = calloc(f->n ? f->n : 1, sizeof(**role));
	if (!*role || classify(f, *role) < 0)
		return kp_err_set(err, "out of memory");
	der = keyed ? memo_blob(f, *role, &len) : NULL;
	if (der)
		kp_sig_memo_image_put(memo, key, der, len, (uint32_t)f->n);
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
	if (r == (ssize_t)hlen && (bzimage_payload(head, hlen, flen, &off, &plen) == 1 ||
				   zboot_payload(head, hlen, flen, &off, &plen) == 1)) {
		r = kp_pread_all(fd, magic, plen < sizeof(magic) ? plen : sizeof(magic), off);
		if (r > 0) {
			enum kp_compression comp = kp_detect_compression(magic, (size_t)r);

			slow = comp != KP_COMP_NONE && comp != KP_COMP_ZSTD;
		}
	}
	close(fd);
	return slow;
}
