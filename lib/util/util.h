/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Small helpers shared by every stage: error reporting, checked allocation,
 * a per-object string arena and growable arrays.
 */
#ifndef KP_UTIL_H
#define KP_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define KP_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define kp_printf_fmt(a, b) __attribute__((format(printf, a, b)))

/*
 * The one error convention of lib/: a function that fails fills @err (when not NULL) and
 * returns -1. The message is for the caller to print as "kopolicy: PATH: MSG"; errnum is
 * the errno a system call gave for it (ENOENT: the file is absent, which callers may take
 * as "unknown"), 0 when the failure has none. Negative errno values are only the kernel's,
 * as the simulation models them.
 */
struct kp_err {
	char msg[512];
	int errnum;
};

/* Formats @err (errnum 0) and returns -1, so error paths are one line: return kp_err_set(...). */
int kp_err_set(struct kp_err *err, const char *fmt, ...) kp_printf_fmt(2, 3);
/* The same with the errno behind the failure. */
int kp_err_errno(struct kp_err *err, int errnum, const char *fmt, ...) kp_printf_fmt(3, 4);
/* The errno behind @err's failure, 0 when none (or no @err). */
static inline int kp_err_errnum(const struct kp_err *err)
{
	return err ? err->errnum : 0;
}

/* Puts "@path: " before @err's message (errnum kept); returns -1. */
int kp_err_prefix(struct kp_err *err, const char *path);

/*
 * @errnum says the run's environment failed, not its input: out of memory, too many open
 * files (process or system), a resource temporarily unavailable, no buffer space, an I/O
 * error, a full disk or quota. Another run with the same inputs can answer differently.
 */
bool kp_errno_environmental(int errnum);
/*
 * The first environmental failure a kp_err was set with in this process (its errno; a
 * message saying "out of memory" counts as ENOMEM, one quoting strerror() of an
 * environmental errno that errno still holds counts as that errno), 0 when none. The
 * result cache does not store such a run. The one process-wide note of lib/util: set once,
 * never cleared, like errno it reaches the caller from any depth without a flag in every
 * interface.
 */
int kp_env_failure(void);
/* Notes @errnum as kp_env_failure() when it is environmental (the first one is kept). */
void kp_env_failure_note(int errnum);

/* Checked allocation: NULL only when @n is 0 or memory is exhausted. */
void *kp_calloc(size_t nmemb, size_t size);
/*
 * Grows *@array of *@cap elements of @elem bytes to hold at least @need elements; the new
 * elements are zeroed. Returns 0 or -1 when out of memory (the array is unchanged then).
 */
int kp_grow(void *array, size_t *cap, size_t need, size_t elem);

/*
 * A bump allocator for strings and small records: everything a module's facts
 * point to lives in its arena and is released with it in one call.
 */
struct kp_arena_chunk;
struct kp_arena {
	struct kp_arena_chunk *head;
	size_t next_chunk; /* size of the next chunk: starts small, doubles up to a limit */
};

/* @size bytes aligned for records (pointers, 64-bit integers); NULL on failure. */
void *kp_arena_alloc(struct kp_arena *a, size_t size);
/*
 * Gives an empty arena one chunk of @size bytes (no-op if it has one): callers that can
 * tell how much they will store get one allocation with little slack; what does not
 * fit goes to small chunks after it. -1 on allocation failure.
 */
int kp_arena_reserve(struct kp_arena *a, size_t size);
/* Copies @len bytes of @s and NUL-terminates; NULL on allocation failure. */
char *kp_arena_strndup(struct kp_arena *a, const char *s, size_t len);
char *kp_arena_strdup(struct kp_arena *a, const char *s);
void kp_arena_release(struct kp_arena *a);

/* FNV-1a: short keys, no allocation, good spread for symbol names. */
uint32_t kp_hash_string(const char *s);
/* The same over @len bytes: kp_hash_bytes(s, strlen(s)) == kp_hash_string(s). */
uint32_t kp_hash_bytes(const char *s, size_t len);

/* Sorted names: @n strings sorted by strcmp() (kp_sort_names()), found by binary search. */
void kp_sort_names(char **names, size_t n);
bool kp_sorted_contains(const char *const *sorted, size_t n, const char *key);

/* Byte-order aware loads from untrusted section data (callers check bounds). */
static inline uint16_t kp_load16(const unsigned char *p, bool big)
{
	return big ? (uint16_t)(p[0] << 8 | p[1]) : (uint16_t)(p[1] << 8 | p[0]);
}

static inline uint32_t kp_load32(const unsigned char *p, bool big)
{
	if (big)
		return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static inline uint64_t kp_load64(const unsigned char *p, bool big)
{
	uint64_t hi = kp_load32(big ? p : p + 4, big);
	uint64_t lo = kp_load32(big ? p + 4 : p, big);

	return hi << 32 | lo;
}

/* Little-endian stores: the byte order of every cache file kopolicy writes (read with
 * kp_load32/64(p, false)). */
static inline void kp_store32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static inline void kp_store64(unsigned char *p, uint64_t v)
{
	kp_store32(p, (uint32_t)v);
	kp_store32(p + 4, (uint32_t)(v >> 32));
}

/* The low @bits (1 to 63) bits of @v as a two's complement number (instruction immediates). */
static inline int64_t kp_sext(uint64_t v, unsigned bits)
{
	uint64_t m = (uint64_t)1 << (bits - 1);

	v &= ((uint64_t)1 << bits) - 1;
	return (int64_t)((v ^ m) - m);
}

/* True if @s (length @len, no NUL inside) is a C identifier as symbol names are. */
bool kp_is_identifier(const char *s, size_t len);

/* @n as exact text: "512 MiB", "1 KiB", "1536 bytes" (the largest unit dividing @n). */
const char *kp_format_size(size_t n, char *buf, size_t size);

/* Length of the valid UTF-8 sequence starting @s (@len bytes left), 0 if invalid. */
size_t kp_utf8_valid_len(const char *s, size_t len);

/*
 * The one escaping rule of every human-readable output (text reports, "kopolicy: PATH:
 * problem" lines, the hook's lines): printable ASCII and valid UTF-8 as they are; '\'
 * as "\\"; newline, tab and carriage return as "\n", "\t", "\r"; other control bytes,
 * DEL and each byte of invalid UTF-8 as "\xHH"; valid but invisible code points (C1
 * controls, U+2028/9, bidirectional controls, BOM) as "\u{HHHH}". Distinct strings stay
 * distinct, and nothing read from a file can start a line or drive the terminal.
 */
void kp_escape_write(FILE *f, const char *s, size_t len);
/*
 * fprintf() whose %s and %c arguments are written with kp_escape_write(); the format's
 * own text (newlines, colours) is written as is. Numbers as printf() formats them; %m is
 * strerror() of errno as it was on entry, escaped.
 */
void kp_escaped_vfprintf(FILE *f, const char *fmt, va_list ap);
void kp_escaped_fprintf(FILE *f, const char *fmt, ...) kp_printf_fmt(2, 3);

#endif
