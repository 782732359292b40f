// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The loader of the libraries loaded on first use (lib/dl/lazy-lib.c): a SONAME that names no
 * library, a path instead of a SONAME and a symbol the library lacks each give
 * kp_lazy_require() an error naming them, the same on a second call (one load); a stub called
 * on such a library writes one line naming the library, the symbol and dlerror()'s text and
 * exits with status 2; zlib by its SONAME resolves crc32() and its value is the known one; the
 * program's own zlib stub (lib/dl/lazy-z.c) gives it too. kp_lazy_files() (lazy-files.c) names
 * the file zlib was loaded from, as ld.so.cache names it, and with LD_LIBRARY_PATH set none.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "dl/lazy-lib.h"
#include "tap.h"
#include "util/util.h"

#define BOGUS  "libkopolicy-test-no-such-library.so.0"
#define PREFIX "kopolicy: error: libbogus cannot be loaded: "

static const char *const crc_names[] = { "crc32" };
static const char *const missing_names[] = { "crc32", "kp_test_no_such_symbol" };
static void *fns_bogus[1], *fns_path[1], *fns_z[1], *fns_missing[2];

static void load_bogus(void);
static void load_path(void);
static void load_z(void);
static void load_missing(void);
static struct kp_lazy_lib bogus = { .label = "libbogus",
				    .soname = BOGUS,
				    .names = crc_names,
				    .fns = fns_bogus,
				    .n = 1,
				    .load_once = load_bogus,
				    .once = PTHREAD_ONCE_INIT };
static struct kp_lazy_lib path = { .label = "libz",
				   .soname = "/usr/lib/libz.so.1",
				   .names = crc_names,
				   .fns = fns_path,
				   .n = 1,
				   .load_once = load_path,
				   .once = PTHREAD_ONCE_INIT };
static struct kp_lazy_lib z = { .label = "libz",
				.soname = KP_LIBZ_SONAME,
				.names = crc_names,
				.fns = fns_z,
				.n = 1,
				.load_once = load_z,
				.once = PTHREAD_ONCE_INIT };
static struct kp_lazy_lib missing = { .label = "libz",
				      .soname = KP_LIBZ_SONAME,
				      .names = missing_names,
				      .fns = fns_missing,
				      .n = 2,
				      .load_once = load_missing,
				      .once = PTHREAD_ONCE_INIT };

static void load_bogus(void)
{
	kp_lazy_load(&bogus);
}

static void load_path(void)
{
	kp_lazy_load(&path);
}

static void load_z(void)
{
	kp_lazy_load(&z);
}

static void load_missing(void)
{
	kp_lazy_load(&missing);
}

/* kp_lazy_files()'s callback: the paths, one a line, into the 8 KiB at @arg. */
static int collect(const char *path, void *arg)
{
	char *out = arg;
	size_t n = strlen(out);

	snprintf(out + n, 8192 - n, "%s\n", path);
	return 0;
}

/* A stub's call on @lib in a child: its exit status (-1: not exited) and its stderr. */
static int die_in_child(struct kp_lazy_lib *lib, char *out, size_t len)
{
	int p[2], st;
	ssize_t n;
	size_t got = 0;
	pid_t pid;

	if (pipe(p) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(p[0]);
		dup2(p[1], STDERR_FILENO);
		kp_lazy_fn(lib, 0, "kp_test_symbol");
		_exit(99); /* not reached: kp_lazy_fn() exits */
	}
	close(p[1]);
	while (got + 1 < len && (n = read(p[0], out + got, len - 1 - got)) > 0)
		got += (size_t)n;
	out[got] = '\0';
	close(p[0]);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

int main(void)
{
	struct tap t = { 0 };
	struct kp_err err = { 0 };
	char line[1024];
	const char *nl;
	bool ok;
	uLong (*crc)(uLong, const Bytef *, uInt);
	int r;

	r = kp_lazy_require(&bogus, &err);
	tap_is_int(&t, r, -1, "a SONAME that names no library: an error");
	tap_ok(&t, strstr(err.msg, "libbogus cannot be loaded") && strstr(err.msg, BOGUS),
	       "it names the library and the SONAME (%s)", err.msg);
	err.msg[0] = '\0';
	r = kp_lazy_require(&bogus, &err);
	tap_ok(&t, r == -1 && strstr(err.msg, BOGUS), "the same error on a second call");

	r = die_in_child(&bogus, line, sizeof(line));
	tap_is_int(&t, r, 2, "a stub on a library that cannot be loaded exits with status 2");
	nl = strchr(line, '\n');
	ok = !strncmp(line, PREFIX, strlen(PREFIX)) &&
	     strstr(line, BOGUS ": cannot open shared object file") &&
	     strstr(line, "(needed for kp_test_symbol)\n") && nl && !nl[1];
	if (nl)
		line[nl - line] = '\0'; /* the TAP line's own end */
	tap_ok(&t, ok, "one line naming the library, dlerror()'s text and the symbol (%s)", line);

	err.msg[0] = '\0';
	r = kp_lazy_require(&path, &err);
	tap_ok(&t, r == -1 && strstr(err.msg, "no SONAME to load it by"),
	       "a path is refused, not opened (%s)", err.msg);

	err.msg[0] = '\0';
	r = kp_lazy_require(&missing, &err);
	tap_ok(&t,
	       r == -1 && strstr(err.msg, "has no kp_test_no_such_symbol") &&
		       strstr(err.msg, KP_LIBZ_SONAME),
	       "a symbol the library lacks: an error naming it (%s)", err.msg);

	r = kp_lazy_require(&z, &err);
	tap_is_int(&t, r, 0, "zlib by its SONAME " KP_LIBZ_SONAME ": loaded");
	crc = (uLong(*)(uLong, const Bytef *, uInt))z.fns[0];
	tap_ok(&t, r == 0 && crc && crc(0, (const Bytef *)"123456789", 9) == 0xcbf43926u,
	       "crc32() resolved and called: the check value");

	r = kp_lazy_require(kp_lazy_libz(), &err);
	tap_is_int(&t, r, 0, "the program's zlib: loaded");
	tap_is_int(&t, crc32_z(0, (const Bytef *)"123456789", 9), 0xcbf43926u,
		   "its crc32_z() stub: the check value");

	{
		static char files[8192], want[4096];
		Dl_info di;

		unsetenv("LD_LIBRARY_PATH");
		r = kp_lazy_files(collect, files);
		tap_ok(&t, r == 0 && dladdr(z.fns[0], &di) && di.dli_fname,
		       "kp_lazy_files(): the files of the seven");
		snprintf(want, sizeof(want), "%s\n", di.dli_fname ? di.dli_fname : "?");
		tap_ok(&t, strstr(files, want) != NULL,
		       "... among them the one zlib was loaded from (%s)",
		       di.dli_fname ? di.dli_fname : "?");
		files[0] = '\0';
		setenv("LD_LIBRARY_PATH", "/nonexistent", 1);
		r = kp_lazy_files(collect, files);
		tap_ok(&t, r == 0 && !files[0], "with LD_LIBRARY_PATH set: none (they are loaded)");
	}
	return tap_done(&t);
}
