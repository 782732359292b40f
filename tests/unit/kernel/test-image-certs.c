// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The certificates of kernel images (kp_keyring_add_kernel_image()) and the zstd stream under
 * it (kp_bytes_stream_fd(), decoded in place with its pages of zeros given back): bzImages
 * built here with a zstd payload as kbuild writes it (no content size, a large window, the
 * 4-byte size after it), checked against the same bytes uncompressed; the output handed to
 * the sink byte for byte, with matches reaching back into pages given back; several frames;
 * truncated and corrupt payloads and the size cap, each one line; an xz image read on its own
 * thread (kp_keyring_image_begin(), _end()) while a certificate file is added: the keyring of
 * the image read in order. Images of every format cut short or damaged: test-image-damaged.c.
 *
 * With arguments (--list IMAGE...): each image's certificates, one line each (subject, key
 * id, SHA-256 of the public key), to compare two builds on real images.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/crypto.h>

#include "file/bytes.h"
#include "image-fixture.h"
#include "kernel/sig-keys.h"
#include "tap.h"

/* A bzImage (arch/x86/boot/header.S) around @payload, with kbuild's 4-byte size after it. */
static void bzimage(const char *path, const unsigned char *payload, size_t plen, size_t rawlen,
		    size_t say_len)
{
	size_t total = 1024 + plen + 4;
	unsigned char *img = calloc(1, total);

	if (!img)
		exit(99);
	img[0x1f1] = 1; /* setup_sects: the payload starts after 2 * 512 bytes */
	memcpy(img + 0x202, "HdrS", 4);
	for (int i = 0; i < 4; i++) {
		img[0x248 + i] = 0;
		img[0x24c + i] = (unsigned char)((say_len ? say_len : plen + 4) >> (8 * i));
		img[1024 + plen + i] = (unsigned char)(rawlen >> (8 * i));
	}
	memcpy(img + 1024, payload, plen);
	spew(path, img, total);
	free(img);
}

/* The keyring as one line: each key's subject, source and keyring, then each source line. */
static void keyring_line(const struct kp_keyring *kr, char *out, size_t outlen)
{
	size_t at = (size_t)snprintf(out, outlen, "%zu:", kr->nkeys);

	for (size_t i = 0; i < kr->nkeys && at < outlen; i++)
		at += (size_t)snprintf(out + at, outlen - at, " %s<%s>", kr->keys[i].subject,
				       kr->keys[i].source);
	for (size_t i = 0; i < kr->nsources && at < outlen; i++)
		at += (size_t)snprintf(out + at, outlen - at, " | %s", kr->sources[i]);
}

/*
 * The image read as kp_keyring_add_kernel_image() between a certificate file before and one
 * after (@sync), or begun on its thread before the second file and ended after it: the
 * keyring as one line, or "error: msg", or "not begun".
 */
static void around(const char *path, const char *cert_a, const char *cert_b, bool sync, char *out,
		   size_t outlen)
{
	struct kp_keyring kr;
	struct kp_err err = { { 0 }, 0 };
	struct kp_image_read *p = NULL;
	int r = 0;

	kp_keyring_init(&kr);
	kp_keyring_add_cert_file(&kr, cert_a, &err);
	if (sync)
		r = kp_keyring_add_kernel_image(&kr, path, KP_DEFAULT_MAX_SIZE, &err);
	else if (!(p = kp_keyring_image_begin(&kr, path, KP_DEFAULT_MAX_SIZE)))
		snprintf(out, outlen, "not begun");
	kp_keyring_add_cert_file(&kr, cert_b, &err);
	if (p)
		r = kp_keyring_image_end(&kr, p, &err);
	if (r < 0)
		snprintf(out, outlen, "error: %s", err.msg);
	else if (sync || p)
		keyring_line(&kr, out, outlen);
	kp_keyring_release(&kr);
}

struct collect {
	unsigned char *p;
	size_t len, cap, pieces, largest;
};

static int collect(const unsigned char *p, size_t n, void *arg)
{
	struct collect *c = arg;

	if (c->len + n > c->cap)
		return 1;
	memcpy(c->p + c->len, p, n);
	c->len += n;
	c->pieces++;
	if (n > c->largest)
		c->largest = n;
	return 0;
}

static int list(int argc, char **argv)
{
	for (int i = 2; i < argc; i++) {
		struct kp_keyring kr;
		struct kp_err err = { { 0 }, 0 };

		kp_keyring_init(&kr);
		if (kp_keyring_add_kernel_image(&kr, argv[i], KP_DEFAULT_MAX_SIZE, &err) < 0)
			printf("%s: error: %s\n", argv[i], err.msg);
		for (size_t k = 0; k < kr.nkeys; k++) {
			printf("%s: %s / %s / ", argv[i], kr.keys[k].subject, kr.keys[k].id_hex);
			for (int b = 0; b < 32; b++)
				printf("%02x", kr.keys[k].key_id[b]);
			putchar('\n');
		}
		for (size_t s = 0; s < kr.nsources; s++)
			printf("%s: source: %s\n", argv[i], kr.sources[s]);
		kp_keyring_release(&kr);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct tap t = { 0 };
	char dir[] = "/tmp/kp-image-certs-XXXXXX", path[4096], plain[4096], got[2048], want[2048],
	     want2[2048];
	/* tap_srcpath() returns one buffer */
	char *ca = strdup(tap_srcpath("tests/data/sig/distro-cert.pem")),
	     *cb = strdup(tap_srcpath("tests/data/sig/other-cert.pem"));
	size_t rawlen, zlen;
	unsigned char *raw, *z;
	struct collect c = { 0 };
	struct kp_err err = { { 0 }, 0 };
	int fd;

	if (argc > 1 && !strcmp(argv[1], "--list"))
		return list(argc, argv);
	raw = raw_image(&rawlen);
	if (!ca || !cb || !mkdtemp(dir))
		return 99;
	snprintf(plain, sizeof(plain), "%s/vmlinux", dir);
	spew(plain, raw, rawlen);
	certs_of(plain, KP_DEFAULT_MAX_SIZE, want, sizeof(want));
	tap_ok(&t, !strncmp(want, "2:", 2), "the uncompressed image: its 2 certificates (%s)",
	       want);

	/* one frame, as kbuild writes it */
	z = zstd_frames(raw, rawlen, 1, &zlen);
	snprintf(path, sizeof(path), "%s/vmlinuz", dir);
	bzimage(path, z, zlen, rawlen, 0);
	certs_of(path, KP_DEFAULT_MAX_SIZE, got, sizeof(got));
	tap_is_str(&t, got, want, "zstd bzImage: the same certificates as uncompressed");
	around(path, ca, cb, false, got, sizeof(got));
	tap_is_str(&t, got, "not begun", "... not worth a thread (decoded in place, fast)");

	/* the stream itself, byte for byte */
	c.cap = rawlen;
	c.p = malloc(c.cap);
	fd = open(path, O_RDONLY);
	if (!c.p || fd < 0)
		return 99;
	tap_is_int(&t, kp_bytes_stream_fd(fd, 1024, zlen, KP_DEFAULT_MAX_SIZE, collect, &c, &err),
		   0, "kp_bytes_stream_fd() of the payload");
	tap_ok(&t, c.len == rawlen && !memcmp(c.p, raw, rawlen),
	       "... hands over exactly the decompressed bytes (%zu of %zu), zero pages given back",
	       c.len, rawlen);
	tap_ok(&t, c.largest <= KP_STREAM_CHUNK && c.pieces >= rawlen / KP_STREAM_CHUNK,
	       "... in pieces of at most KP_STREAM_CHUNK (%zu pieces, largest %zu)", c.pieces,
	       c.largest);
	c.len = c.pieces = c.largest = 0;
	tap_is_int(&t, kp_bytes_stream(z, zlen, KP_DEFAULT_MAX_SIZE, collect, &c, &err), 0,
		   "kp_bytes_stream() of the same payload in memory");
	tap_ok(&t, c.len == rawlen && !memcmp(c.p, raw, rawlen), "... the same bytes");
	/* a cap past any address space: no mapping that large, through zstd's own window */
	c.len = c.pieces = c.largest = 0;
	tap_is_int(&t, kp_bytes_stream_fd(fd, 1024, zlen, (size_t)1 << 62, collect, &c, &err), 0,
		   "kp_bytes_stream_fd() without the in-place mapping");
	tap_ok(&t, c.len == rawlen && !memcmp(c.p, raw, rawlen) && c.largest <= KP_STREAM_CHUNK,
	       "... the same bytes, in pieces of at most KP_STREAM_CHUNK");
	c.len = 0;
	tap_is_int(&t, kp_bytes_stream_fd(fd, 1024, zlen, rawlen - 1, collect, &c, &err), -1,
		   "a cap one byte short of the output");
	tap_is_str(&t, err.msg, "decompressed size exceeds the limit of 12582911 bytes",
		   "... is refused, one line");
	close(fd);
	free(z);

	/* three frames, one after the other (zstd -T, or concatenated by hand) */
	z = zstd_frames(raw, rawlen, 3, &zlen);
	bzimage(path, z, zlen, rawlen, 0);
	certs_of(path, KP_DEFAULT_MAX_SIZE, got, sizeof(got));
	tap_is_str(&t, got, want, "zstd bzImage of three frames: the same certificates");

	/* cut: the header says the payload is shorter than the stream */
	bzimage(path, z, zlen / 2, rawlen, 0);
	certs_of(path, KP_DEFAULT_MAX_SIZE, got, sizeof(got));
	tap_is_str(&t, got, "error: zstd: truncated zstd stream",
		   "a zstd payload cut in the middle: one line");
	/* the file ends before the payload it declares */
	bzimage(path, z, zlen, rawlen, zlen + 4096);
	certs_of(path, KP_DEFAULT_MAX_SIZE, got, sizeof(got));
	tap_is_str(&t, got, "error: truncated bzImage: its payload lies past the end of the file",
		   "a payload past the end of the file: one line");
	/* corrupt bytes in the middle of a frame */
	damage(z, zlen / 3);
	bzimage(path, z, zlen, rawlen, 0);
	certs_of(path, KP_DEFAULT_MAX_SIZE, got, sizeof(got));
	tap_ok(&t, !strncmp(got, "error: zstd: ", 13) && !strchr(got, '\n'),
	       "a corrupt zstd payload: one line (%s)", got);
	free(z);

	/* xz, as Debian's 5.10 and 6.1 images: streamed from the file too */
	z = xz_stream(raw, rawlen, &zlen);
	bzimage(path, z, zlen, rawlen, 0);
	certs_of(path, KP_DEFAULT_MAX_SIZE, got, sizeof(got));
	tap_is_str(&t, got, want, "xz bzImage: the same certificates as uncompressed");
	fd = open(path, O_RDONLY);
	c.len = c.pieces = c.largest = 0;
	tap_is_int(&t, kp_bytes_stream_fd(fd, 1024, zlen, KP_DEFAULT_MAX_SIZE, collect, &c, &err),
		   0, "kp_bytes_stream_fd() of the xz payload");
	tap_ok(&t, c.len == rawlen && !memcmp(c.p, raw, rawlen) && c.largest <= KP_STREAM_CHUNK,
	       "... the decompressed bytes, in pieces of at most KP_STREAM_CHUNK");
	close(fd);
	/* on its own thread (kp_keyring_image_begin()): the same keyring as read in order */
	around(path, ca, cb, true, want2, sizeof(want2));
	around(path, ca, cb, false, got, sizeof(got));
	tap_ok(&t, !strncmp(want2, "4:", 2),
	       "xz bzImage between two certificate files: 4 keys (%s)", want2);
	tap_is_str(&t, got, want2,
		   "... read on its own thread meanwhile: its keys and line where they would be");
	bzimage(path, z, zlen - 100, rawlen, 0);
	certs_of(path, KP_DEFAULT_MAX_SIZE, got, sizeof(got));
	tap_is_str(&t, got, "error: xz: truncated xz stream", "an xz payload cut short: one line");
	around(path, ca, cb, false, got, sizeof(got));
	tap_is_str(&t, got, "error: xz: truncated xz stream",
		   "... on its own thread: the same line");
	/* a compressed Image (no header: the whole file is the stream) */
	spew(path, z, zlen);
	certs_of(path, KP_DEFAULT_MAX_SIZE, got, sizeof(got));
	tap_is_str(&t, got, want, "Image.xz (the whole file compressed): the same certificates");
	certs_of(path, (size_t)8 << 20, got, sizeof(got));
	tap_is_str(&t, got, "error: decompressed size exceeds the limit of 8 MiB",
		   "... over the cap: one line");
	free(z);

	/*
	 * An s390 image (Debian's 6.12 and 7.2 s390x, CONFIG_KERNEL_ZSTD): the decompressor's
	 * code, the zstd payload at no offset a header gives, its 4-byte size, more code
	 */
	z = zstd_frames(raw, rawlen, 1, &zlen);
	embedded_image(path, z, zlen, rawlen, NULL, 0);
	certs_of(path, KP_DEFAULT_MAX_SIZE, got, sizeof(got));
	tap_is_str(&t, got, want, "s390 image (zstd payload inside): the same certificates");
	/* a chance zstd magic in the code before it: tried, decoded into nothing, passed */
	embedded_image(path, z, zlen, rawlen, "\x28\xb5\x2f\xfd\x00\x58", 6);
	certs_of(path, KP_DEFAULT_MAX_SIZE, got, sizeof(got));
	tap_is_str(&t, got, want, "... behind a chance zstd magic in the code: the same");
	free(z);
	/* an arm zImage (arch/arm/boot/compressed/piggy.S): an xz payload inside, code after */
	z = xz_stream(raw, rawlen, &zlen);
	embedded_image(path, z, zlen, rawlen, NULL, 0);
	certs_of(path, KP_DEFAULT_MAX_SIZE, got, sizeof(got));
	tap_is_str(&t, got, want, "arm zImage (xz payload inside): the same certificates");
	embedded_image(path, z, zlen, rawlen,
		       "\xfd"
		       "7zXZ\0\0\x01",
		       8);
	certs_of(path, KP_DEFAULT_MAX_SIZE, got, sizeof(got));
	tap_is_str(&t, got, want, "... behind a chance xz magic in the code: the same");
	free(z);

	/* the decompressed size over the cap */
	z = zstd_frames(raw, rawlen, 1, &zlen);
	bzimage(path, z, zlen, rawlen, 0);
	certs_of(path, (size_t)8 << 20, got, sizeof(got));
	tap_is_str(&t, got, "error: decompressed size exceeds the limit of 8 MiB",
		   "an image decompressing past --max-size: one line");
	free(z);

	unlink(path);
	unlink(plain);
	rmdir(dir);
	free(c.p);
	free(raw);
	free(ca);
	free(cb);
	return tap_done(&t);
}
