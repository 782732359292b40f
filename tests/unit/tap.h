/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Minimal TAP producer for the unit tests (read by automake's tap-driver.sh). */
#ifndef KP_TAP_H
#define KP_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tap {
	int n;
	int failed;
};

static inline void tap_ok(struct tap *t, int cond, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline void tap_ok(struct tap *t, int cond, const char *fmt, ...)
{
	va_list ap;

	t->n++;
	printf("%sok %d - ", cond ? "" : "not ", t->n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!cond)
		t->failed++;
	fflush(stdout);
}

#define tap_is_str(t, got, want, what)                                                 \
	do {                                                                           \
		const char *g_ = (got), *w_ = (want);                                  \
		int ok_ = (g_ == NULL && w_ == NULL) || (g_ && w_ && !strcmp(g_, w_)); \
		tap_ok(t, ok_, "%s: '%s'", what, g_ ? g_ : "(null)");                  \
		if (!ok_)                                                              \
			printf("#   expected '%s'\n", w_ ? w_ : "(null)");             \
	} while (0)

#define tap_is_int(t, got, want, what)                                   \
	do {                                                             \
		long long g_ = (long long)(got), w_ = (long long)(want); \
		tap_ok(t, g_ == w_, "%s: %lld", what, g_);               \
		if (g_ != w_)                                            \
			printf("#   expected %lld\n", w_);               \
	} while (0)

/* tap_is_int() with a printf-formatted label. */
static inline void tap_is_intf(struct tap *t, long long got, long long want, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static inline void tap_is_intf(struct tap *t, long long got, long long want, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	tap_is_int(t, got, want, what);
}

static inline int tap_done(struct tap *t)
{
	printf("1..%d\n", t->n);
	return t->failed ? 1 : 0;
}

/* Path of a file under the source tree ($srcdir from the test harness, else "."). */
static inline const char *tap_srcpath(const char *rel)
{
	static __thread char buf[4096];
	const char *top = getenv("srcdir");

	snprintf(buf, sizeof(buf), "%s/%s", top ? top : ".", rel);
	return buf;
}

#endif
