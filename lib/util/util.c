// SPDX-License-Identifier: LGPL-2.1-or-later
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* kp_env_failure(): written once (compare-and-swap from 0), read at the end of a run. */
static int env_failure;

bool kp_errno_environmental(int errnum)
{
	switch (errnum) {
	case ENOMEM:
	case EMFILE:
	case ENFILE:
	case EAGAIN:
	case ENOBUFS:
	case EIO:
	case ENOSPC:
	case EDQUOT:
		return true;
	default:
		return false;
	}
}

void kp_env_failure_note(int errnum)
{
	int none = 0;

	if (kp_errno_environmental(errnum))
		__atomic_compare_exchange_n(&env_failure, &none, errnum, false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED);
}

int kp_env_failure(void)
{
	return __atomic_load_n(&env_failure, __ATOMIC_RELAXED);
}

/*
 * @errno_now: errno when the caller made the message. A message without an errnum is still
 * an environmental failure when it says "out of memory", or quotes strerror() of an
 * environmental errno that is still errno ("read error: Input/output error").
 */
static int err_vset(struct kp_err *err, int errnum, int errno_now, const char *fmt, va_list ap)
{
	kp_env_failure_note(errnum);
	if (!err)
		return -1;
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	err->errnum = errnum;
	if (!errnum && strstr(err->msg, "out of memory"))
		kp_env_failure_note(ENOMEM);
	else if (!errnum && kp_errno_environmental(errno_now) &&
		 strstr(err->msg, strerror(errno_now)))
		kp_env_failure_note(errno_now);
	return -1;
}

int kp_err_set(struct kp_err *err, const char *fmt, ...)
{
	int errno_now = errno;
	va_list ap;

	va_start(ap, fmt);
	err_vset(err, 0, errno_now, fmt, ap);
	va_end(ap);
	return -1;
}

int kp_err_errno(struct kp_err *err, int errnum, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_vset(err, errnum, 0, fmt, ap);
	va_end(ap);
	return -1;
}

int kp_err_prefix(struct kp_err *err, const char *path)
{
	char msg[sizeof(err->msg)];
	int errnum;

	if (!err)
		return -1;
	errnum = err->errnum;
	snprintf(msg, sizeof(msg), "%s", err->msg);
	kp_err_set(err, "%s: %s", path, msg);
	err->errnum = errnum;
	return -1;
}

void *kp_calloc(size_t nmemb, size_t size)
{
	if (nmemb == 0 || size == 0)
		return NULL;
	return calloc(nmemb, size);
}

int kp_grow(void *array, size_t *cap, size_t need, size_t elem)
{
	void **arr = array;
	size_t ncap;
	void *p;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 8;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -1;
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / elem)
		return -1;
	p = realloc(*arr, ncap * elem);
	if (!p)
		return -1;
	/* New slots start zeroed: a field the caller forgets is 0, never heap garbage. */
	memset((char *)p + *cap * elem, 0, (ncap - *cap) * elem);
	*arr = p;
	*cap = ncap;
	return 0;
}

#define KP_ARENA_FIRST_CHUNK 2048
#define KP_ARENA_CHUNK	     65536
#define KP_ARENA_ALIGN	     _Alignof(uint64_t) /* records hold pointers and u64s, no more */

struct kp_arena_chunk {
	struct kp_arena_chunk *next;
	size_t used;
	size_t size;
	_Alignas(max_align_t) unsigned char data[];
};

static struct kp_arena_chunk *chunk_new(size_t size)
{
	struct kp_arena_chunk *c;

	if (size > SIZE_MAX - sizeof(*c))
		return NULL;
	c = malloc(sizeof(*c) + size);
	if (!c)
		return NULL;
	c->size = size;
	c->used = 0;
	c->next = NULL;
	return c;
}

/* @align is 1 (strings) or KP_ARENA_ALIGN (records): strings pack without padding. */
static void *arena_alloc(struct kp_arena *a, size_t size, size_t align)
{
	struct kp_arena_chunk *c = a->head;
	size_t at = c ? (c->used + align - 1) & ~(align - 1) : 0;

	if (!c || at > c->size || c->size - at < size) {
		size_t csize = a->next_chunk ? a->next_chunk : KP_ARENA_FIRST_CHUNK;

		if (csize < KP_ARENA_CHUNK)
			a->next_chunk = csize * 2 < KP_ARENA_CHUNK ? csize * 2 : KP_ARENA_CHUNK;
		c = chunk_new(csize < size ? size : csize);
		if (!c)
			return NULL;
		at = 0;
		/* A large one-off allocation goes behind the head so the head keeps its room. */
		if (a->head && size > KP_ARENA_CHUNK) {
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = a->head;
			a->head = c;
		}
	}
	c->used = at + size;
	return c->data + at;
}

void *kp_arena_alloc(struct kp_arena *a, size_t size)
{
	return arena_alloc(a, size ? size : 1, KP_ARENA_ALIGN);
}

int kp_arena_reserve(struct kp_arena *a, size_t size)
{
	if (a->head)
		return 0;
	a->head = chunk_new(size);
	if (!a->head)
		return -1;
	a->next_chunk = 1024; /* what the estimate missed: small */
	return 0;
}

char *kp_arena_strndup(struct kp_arena *a, const char *s, size_t len)
{
	char *p;

	if (len == SIZE_MAX)
		return NULL;
	p = arena_alloc(a, len + 1, 1);
	if (!p)
		return NULL;
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

char *kp_arena_strdup(struct kp_arena *a, const char *s)
{
	return kp_arena_strndup(a, s, strlen(s));
}

void kp_arena_release(struct kp_arena *a)
{
	struct kp_arena_chunk *c = a->head;

	while (c) {
		struct kp_arena_chunk *next = c->next;

		free(c);
		c = next;
	}
	a->head = NULL;
	a->next_chunk = 0;
}

uint32_t kp_hash_string(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 16777619u;
	}
	return h;
}

uint32_t kp_hash_bytes(const char *s, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void kp_sort_names(char **names, size_t n)
{
	if (n > 1)
		qsort(names, n, sizeof(*names), cmp_name);
}

bool kp_sorted_contains(const char *const *sorted, size_t n, const char *key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int d = strcmp(sorted[mid], key);

		if (!d)
			return true;
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

bool kp_is_identifier(const char *s, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++) {
		char ch = s[i];

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_')
			continue;
		if (i > 0 && ch >= '0' && ch <= '9')
			continue;
		return false;
	}
	return true;
}

const char *kp_format_size(size_t n, char *buf, size_t size)
{
	static const char *const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
	unsigned u = 0;

	/* Exact: the largest unit that divides @n, so 1K is "1 KiB", never "0 MiB". */
	while (u + 1 < KP_ARRAY_SIZE(units) && n && !(n & 1023)) {
		n >>= 10;
		u++;
	}
	snprintf(buf, size, "%zu %s", n, units[u]);
	return buf;
}

/* Length of the valid UTF-8 sequence at @s (at most @len bytes), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t len, uint32_t *cp)
{
	size_t n;
	uint32_t c;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, c = s[0] & 0x07;
	else
		return 0;
	if (n > len)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, UTF-16 surrogates, beyond U+10FFFF */
	if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

size_t kp_utf8_valid_len(const char *s, size_t len)
{
	uint32_t cp;

	return len ? utf8_len((const unsigned char *)s, len, &cp) : 0;
}

/* Code points shown escaped though valid: C1 controls, line separators, bidi controls. */
static bool invisible(uint32_t c)
{
	return (c >= 0x80 && c <= 0x9f) || c == 0x2028 || c == 0x2029 ||
	       (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) || c == 0x200e ||
	       c == 0x200f || c == 0x061c || c == 0xfeff;
}

void kp_escape_write(FILE *f, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < len) {
		size_t run = i, n;
		uint32_t cp;

		while (run < len && p[run] >= 0x20 && p[run] < 0x7f && p[run] != '\\')
			run++;
		if (run > i)
			fwrite(p + i, 1, run - i, f);
		i = run;
		if (i >= len)
			break;
		n = utf8_len(p + i, len - i, &cp);
		if (p[i] == '\\') {
			fputs("\\\\", f);
		} else if (p[i] == '\n') {
			fputs("\\n", f);
		} else if (p[i] == '\t') {
			fputs("\\t", f);
		} else if (p[i] == '\r') {
			fputs("\\r", f);
		} else if (p[i] < 0x80 || !n) {
			fprintf(f, "\\x%02x", p[i]); /* C0 controls, DEL, bytes of invalid UTF-8 */
		} else if (invisible(cp)) {
			fprintf(f, "\\u{%04x}", (unsigned)cp);
		} else {
			fwrite(p + i, 1, n, f);
			i += n;
			continue;
		}
		i++;
		if (n > 1 && invisible(cp))
			i += n - 1;
	}
}

/* The spec comes from the caller's checked format (kp_printf_fmt on the public entry). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
/* One conversion of kp_escaped_vfprintf(): @spec is "%...c" with its length modifiers. */
static void one_conversion(FILE *f, const char *spec, size_t slen, va_list *ap)
{
	char fmt[32], buf[128];
	int width = 0, prec = -1, lmod = 0;
	bool star_w = false, star_p = false, left = false;
	char conv = spec[slen - 1];
	const char *q = spec + 1;

	snprintf(fmt, sizeof(fmt), "%.*s", (int)slen, spec);
	for (; *q && strchr("-+ #0", *q); q++)
		left |= *q == '-';
	if (*q == '*') {
		star_w = true;
		q++;
	}
	for (; *q >= '0' && *q <= '9'; q++)
		width = width * 10 + (*q - '0');
	if (*q == '.') {
		q++;
		if (*q == '*')
			star_p = true;
		else
			for (prec = 0; *q >= '0' && *q <= '9'; q++)
				prec = prec * 10 + (*q - '0');
	}
	for (const char *m = spec + 1; m < spec + slen - 1; m++)
		if (*m == 'l')
			lmod++;
		else if (*m == 'z' || *m == 'j' || *m == 't')
			lmod = 3;
	if (star_w) {
		width = va_arg(*ap, int);
		left |= width < 0;
		width = width < 0 ? -width : width;
	}
	if (star_p)
		prec = va_arg(*ap, int);
	if (conv == 's' || conv == 'c') {
		char ch;
		const char *s;
		size_t n;

		if (conv == 'c') {
			ch = (char)va_arg(*ap, int);
			s = &ch;
			n = 1;
		} else {
			s = va_arg(*ap, const char *);
			if (!s)
				s = "(null)";
			n = prec >= 0 ? strnlen(s, (size_t)prec) : strlen(s);
		}
		if (width > 0) {
			/* padded (table columns): the escaped text, padded the way printf pads */
			char *tmp = NULL;
			size_t tlen = 0;
			FILE *m = open_memstream(&tmp, &tlen);

			if (m) {
				kp_escape_write(m, s, n);
				fclose(m);
				fprintf(f, left ? "%-*s" : "%*s", width, tmp ? tmp : "");
			}
			free(tmp);
			return;
		}
		kp_escape_write(f, s, n);
		return;
	}
	if (conv == '%') {
		fputc('%', f);
		return;
	}
	/* Numbers: formatted by the C library, with the arguments this spec takes. */
#define ONE(T)                                                                     \
	do {                                                                       \
		T v = va_arg(*ap, T);                                              \
		if (star_w && star_p)                                              \
			snprintf(buf, sizeof(buf), fmt, width, prec, v);           \
		else if (star_w || star_p)                                         \
			snprintf(buf, sizeof(buf), fmt, star_w ? width : prec, v); \
		else                                                               \
			snprintf(buf, sizeof(buf), fmt, v);                        \
	} while (0)
	if (strchr("eEfFgGaA", conv))
		ONE(double);
	else if (conv == 'p')
		ONE(void *);
	else if (lmod == 3)
		ONE(size_t);
	else if (lmod == 2)
		ONE(long long);
	else if (lmod == 1)
		ONE(long);
	else
		ONE(int);
#undef ONE
	fputs(buf, f);
}
#pragma GCC diagnostic pop

void kp_escaped_vfprintf(FILE *f, const char *fmt, va_list ap)
{
	const int saved = errno; /* for %m: writing may change errno */
	va_list cp;

	va_copy(cp, ap);
	while (*fmt) {
		const char *pct = strchr(fmt, '%'), *e;

		if (!pct) {
			fputs(fmt, f);
			break;
		}
		fwrite(fmt, 1, (size_t)(pct - fmt), f);
		e = pct + 1;
		while (*e && !strchr("diouxXeEfFgGaAcspnm%", *e))
			e++;
		if (!*e)
			break;
		if (*e == 'm') {
			const char *why = strerror(saved);

			kp_escape_write(f, why, strlen(why));
		} else {
			one_conversion(f, pct, (size_t)(e - pct + 1), &cp);
		}
		fmt = e + 1;
	}
	va_end(cp);
}

void kp_escaped_fprintf(FILE *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kp_escaped_vfprintf(f, fmt, ap);
	va_end(ap);
}
