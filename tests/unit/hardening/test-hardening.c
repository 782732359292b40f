// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Issue 14 at the library level: a module file that shrinks while it is read gives an
 * error (no SIGBUS), the libkmod index check, the one escaping rule, exact sizes, and
 * linear time on duplicate keys.
 */
#include "config.h"

#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "file/bytes.h"
#include "system/modprobe-index.h"
#include "util/symbol-index.h"
#include "tap.h"
#include "util/util.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *escaped(const char *s, size_t len)
{
	static char buf[512];
	FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");

	memset(buf, 0, sizeof(buf));
	kp_escape_write(f, s, len);
	fclose(f);
	return buf;
}

struct touch {
	const unsigned char *p;
	unsigned char first;
};

static int touch_end(void *arg)
{
	struct touch *tc = arg;

	return *(volatile const unsigned char *)tc->p;
}

static int touch_start(void *arg)
{
	struct touch *tc = arg;

	tc->first = *(volatile const unsigned char *)(tc->p - ((size_t)2400 << 10) + 1);
	return 0;
}

/* A guard inside a guard (the replay's, around its manifest's threaded look-up). */
struct nest {
	const struct kp_bytes *b;
	struct touch *tc;
	int inner;
	struct kp_err err;
};

static int nested(void *arg)
{
	struct nest *n = arg;

	n->inner = kp_bytes_guard(n->b, touch_start, n->tc, &n->err);
	/* the inner guard has ended: the outer one must still catch this */
	return touch_end(n->tc);
}

/* A 2.4 MiB "module" (ELF magic, then filler) shrunk to 100 bytes after it was opened. */
static void shrink(struct tap *t, bool with_decoders)
{
	char path[] = "/tmp/kp-shrink-XXXXXX";
	size_t len = (size_t)2400 << 10;
	unsigned char *buf = calloc(1, len);
	struct kp_decoders *dec = with_decoders ? kp_decoders_new() : NULL;
	struct kp_bytes b;
	struct kp_err err = { 0 };
	int fd = mkstemp(path), r;

	memcpy(buf, "\177ELF", 4);
	tap_ok(t, fd >= 0 && write(fd, buf, len) == (ssize_t)len, "wrote a 2.4 MiB file");
	r = kp_bytes_read_elf(path, KP_DEFAULT_MAX_SIZE, dec, &b, &err);
	tap_ok(t, r == 0, "read it (%s)", with_decoders ? "thread decoders" : "one-shot");
	tap_ok(t, ftruncate(fd, 100) == 0, "shrank it to 100 bytes");
	if (r == 0 && b.mapped) {
		/* before the fix: touching the lost part of the mapping was a SIGBUS */
		struct touch tc = { .p = b.data + len - 1 };

		r = kp_bytes_guard(&b, touch_end, &tc, &err);
		tap_ok(t, r < 0 && strstr(err.msg, "shrank"),
		       "mapped: reading the lost part is an error: %s", err.msg);
		r = kp_bytes_guard(&b, touch_start, &tc, &err);
		tap_ok(t, r == 0 && tc.first == 0x7f, "mapped: what is left still reads");
		{
			/* before the fix: the inner guard's end unarmed the outer one: SIGBUS */
			struct nest n = { .b = &b, .tc = &tc, .inner = -1 };

			r = kp_bytes_guard(&b, nested, &n, &err);
			tap_ok(t, n.inner == 0 && r < 0 && strstr(err.msg, "shrank"),
			       "mapped: a guard inside a guard, ended: the outer one still catches "
			       "the lost part");
		}
		kp_bytes_release(&b);
	} else if (r == 0) {
		r = kp_bytes_load(&b, len - 4096, 4096, &err);
		tap_ok(t, r < 0 && strstr(err.msg, "shrank"),
		       "sparse: reading the lost part is an error: %s", err.msg);
		kp_bytes_release(&b);
	}
	close(fd);
	unlink(path);
	kp_decoders_free(dec);
	free(buf);
}

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static void index_check(struct tap *t)
{
	unsigned char d[64] = { 0 };
	struct kp_err err = { 0 };

	/* header, a leaf at 12 ("a\0", one value (prio 0, "x\0")), root at 21 -> child 'a' */
	put32(d, 0xB007F457u);
	put32(d + 4, 0x00020001u);
	put32(d + 8, 21 | 0x20000000u); /* root: CHILDS */
	/* leaf at 12: VALUES: count 1, priority 0, "x" */
	put32(d + 12, 1);
	put32(d + 16, 0);
	d[20] = 'x';
	d[21] = 'a';
	d[22] = 'a';
	/* the root at 21 would overlap: put it at 24 instead */
	put32(d + 8, 24 | 0x20000000u);
	d[24] = 'a';
	d[25] = 'a';
	put32(d + 26, 12 | 0x40000000u);
	tap_ok(t, kp_chain_index_check(d, 30, &err) == 0, "a well-formed index passes (%s)",
	       err.msg);
	put32(d + 8, 0x7ffffff0u);
	tap_ok(t, kp_chain_index_check(d, 30, &err) < 0 && strstr(err.msg, "out of the file"),
	       "a root offset out of the file: %s", err.msg);
	put32(d + 8, 24 | 0x20000000u);
	put32(d + 26, 24 | 0x20000000u); /* the child is the node itself: a loop */
	tap_ok(t, kp_chain_index_check(d, 30, &err) < 0 && strstr(err.msg, "forward"),
	       "a node that is its own child: %s", err.msg);
	put32(d + 26, 12 | 0x40000000u);
	put32(d + 12, 0x7fffffff);
	tap_ok(t, kp_chain_index_check(d, 30, &err) < 0 && strstr(err.msg, "values"),
	       "a value count past the end: %s", err.msg);
	tap_ok(t, kp_chain_index_check((const unsigned char *)"garbage!garbage!", 16, &err) < 0,
	       "no magic: %s", err.msg);
}

static char *formatted(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *formatted(const char *fmt, ...)
{
	static char buf[512];
	FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");
	va_list ap;

	memset(buf, 0, sizeof(buf));
	va_start(ap, fmt);
	kp_escaped_vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
	return buf;
}

int main(void)
{
	struct tap t = { 0 };
	char sz[32];

	shrink(&t, false); /* mapped: over 1 MiB */
	shrink(&t, true);
	{
		/* a small one comes back sparse, with or without decoders */
		struct kp_bytes b;
		struct kp_err err = { 0 };
		char path[] = "/tmp/kp-small-XXXXXX";
		int fd = mkstemp(path);

		tap_ok(&t,
		       fd >= 0 && write(fd, "\177ELF....", 8) == 8 &&
			       kp_bytes_read_elf(path, KP_DEFAULT_MAX_SIZE, NULL, &b, &err) == 0 &&
			       b.sparse && !b.mapped,
		       "a small module is read, not mapped");
		if (fd >= 0 && b.sparse)
			kp_bytes_release(&b);
		close(fd);
		unlink(path);
	}
	index_check(&t);

	tap_is_str(&t, kp_format_size(1024, sz, sizeof(sz)), "1 KiB", "1K");
	tap_is_str(&t, kp_format_size((size_t)512 << 20, sz, sizeof(sz)), "512 MiB", "512M");
	tap_is_str(&t, kp_format_size(1536, sz, sizeof(sz)), "1536 bytes", "1.5K");

	tap_is_str(&t, escaped("a\nb", 3), "a\\nb", "newline");
	tap_is_str(&t, escaped("a\\nb", 4), "a\\\\nb", "a backslash stays distinct from an escape");
	tap_is_str(&t, escaped("\033[31m", 5), "\\x1b[31m", "CSI");
	tap_is_str(&t, escaped("\xff\xfe", 2), "\\xff\\xfe", "invalid UTF-8");
	tap_is_str(&t, escaped("caf\xc3\xa9", 5), "caf\xc3\xa9", "valid UTF-8 kept");
	tap_is_str(&t, escaped("\xe2\x80\xae", 3), "\\u{202e}", "bidi override");
	tap_is_str(&t, escaped("\xc2\x9b", 2), "\\u{009b}", "C1 CSI");
	tap_is_str(&t, formatted("%s: %zu %08x %lld %c%%", "a\nb", (size_t)7, 0xabcu, -5LL, 'q'),
		   "a\\nb: 7 00000abc -5 q%",
		   "escaped printf: strings escaped, numbers and format as is");
	tap_is_str(&t, formatted("[%-6s|%4s|%.*s]", "a\tb", "x", 2, "\033zz"),
		   "[a\\tb  |   x|\\x1bz]", "escaped printf: widths pad the escaped text");

	{
		struct kp_symbol_index idx;
		double t0 = now();
		int ok = kp_symbol_index_init(&idx, 16) == 0;
		size_t n = 0;

		for (int i = 0; ok && i < 200000; i++)
			ok = kp_symbol_index_add(&idx, "same", NULL) == 0;
		for (const struct kp_symbol_index_entry *e = kp_symbol_index_find(&idx, "same"); e;
		     e = kp_symbol_index_next(e))
			n++;
		tap_ok(&t, ok && n == 200000, "200k entries of one key, in order");
		tap_ok(&t, now() - t0 < 2.0, "... added in linear time (%.2f s)", now() - t0);
		kp_symbol_index_release(&idx);
	}
	return tap_done(&t);
}
