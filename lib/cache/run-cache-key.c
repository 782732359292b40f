// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The result cache's key (run-cache.h): everything besides the inputs that decides a
 * command's output (the binary and its libraries, the arguments, the working directory, the
 * environment variables that count, the system, the terminals), as length-prefixed fields.
 * The libraries loaded on first use (dl/lazy-lib.h) count by the files the dynamic linker's
 * cache names for them, not loaded for it (dl/lazy-files.c).
 */
#include "run-cache.h"

#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "dl/lazy-lib.h"
#include "run-cache-internal.h"
#include "util/io.h"

extern char **environ;

int kp_kbuf_add(struct kbuf *k, const void *p, size_t len)
{
	unsigned char l[4];

	if (kp_grow(&k->p, &k->cap, k->len + len + 4, 1) < 0)
		return -1;
	for (int i = 0; i < 4; i++)
		l[i] = (unsigned char)(len >> (8 * i));
	memcpy(k->p + k->len, l, 4);
	memcpy(k->p + k->len + 4, p, len);
	k->len += len + 4;
	return 0;
}

static int add_str(struct kbuf *k, const char *s)
{
	return kp_kbuf_add(k, s, strlen(s));
}

static int add_state(struct kbuf *k, const char *path)
{
	struct stat st;
	uint64_t v[6];

	if (stat(path, &st) < 0)
		return -1;
	v[0] = (uint64_t)st.st_dev;
	v[1] = (uint64_t)st.st_ino;
	v[2] = (uint64_t)st.st_size;
	v[3] = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
	v[4] = (uint64_t)st.st_ctim.tv_sec * 1000000000u + (uint64_t)st.st_ctim.tv_nsec;
	v[5] = (uint64_t)st.st_mode;
	return add_str(k, path) < 0 ? -1 : kp_kbuf_add(k, v, sizeof(v));
}

static int add_lib(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	/* the executable (""), the vDSO: not files */
	if (info->dlpi_name && info->dlpi_name[0] == '/')
		return add_state(arg, info->dlpi_name) < 0 ? 1 : 0;
	return 0;
}

/* A file a library loaded on first use would come from (kp_lazy_files()): its state. */
static int add_lazy_file(const char *path, void *arg)
{
	struct kbuf *k = arg;

	if (add_state(k, path) == 0)
		return 0;
	/* named by the dynamic linker's cache, but absent: so is the key */
	return add_str(k, path) < 0 || add_str(k, "absent") < 0 ? -1 : 0;
}

/* The environment variables that can change what a command prints. */
static bool env_counts(const char *e)
{
	/*
	 * the caches' own settings: where and how big, the statistics line (not captured), and
	 * whether a miss splices or recomputes (KOPOLICY_SPLICE=measure: the same output)
	 */
	static const char *const not [] = { "KOPOLICY_CACHE_DIR=", "KOPOLICY_CACHE_MAX_SIZE=",
					    "KOPOLICY_CACHE_STATS=", "KOPOLICY_RUN_CACHE=",
					    "KOPOLICY_SPLICE=" };
	static const char *const pre[] = { "KOPOLICY_", "NO_COLOR=", "TERM=",	"MODPROBE_",
					   "OPENSSL_",	"LD_",	     "LANG=",	"LC_",
					   "KMOD_",	"TZ=",	     "MALLOC_", "GLIBC_" };

	for (size_t i = 0; i < KP_ARRAY_SIZE(not ); i++)
		if (!strncmp(e, not [i], strlen(not [i])))
			return false;
	for (size_t i = 0; i < KP_ARRAY_SIZE(pre); i++)
		if (!strncmp(e, pre[i], strlen(pre[i])))
			return true;
	return false;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The buffer glibc gives stdout (_IO_file_doallocate()): st_blksize when below BUFSIZ. */
size_t kp_rc_out_buffer_size(void)
{
	struct stat st;

	if (fstat(STDOUT_FILENO, &st) == 0 && st.st_blksize > 0 && st.st_blksize < BUFSIZ)
		return (size_t)st.st_blksize;
	return BUFSIZ;
}

/* Everything besides the inputs that decides the output; 0, or -1 with @why (not cacheable). */
int kp_rc_build_key(struct kp_run_cache *rc, int argc, char **argv, char *why, size_t wlen)
{
	struct kbuf *k = &rc->key;
	char exe[PATH_MAX], cwd[PATH_MAX];
	const char *env[256];
	struct stat so, se;
	struct utsname u;
	size_t nenv = 0;
	ssize_t n;
	long v[8];

	snprintf(why, wlen, "out of memory");
	if (add_str(k, "kopolicy run v" PACKAGE_VERSION) < 0)
		return -1;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0 || (size_t)n >= sizeof(exe) - 1) {
		snprintf(why, wlen,
			 "/proc/self/exe cannot be read (%s): the executable is not known",
			 n < 0 ? strerror(errno) : "too long");
		return -1;
	}
	exe[n] = '\0';
	/* a rebuilt or upgraded binary or library is another key */
	if (add_state(k, exe) < 0) {
		snprintf(
			why, wlen,
			"the executable %s cannot be stat()ed (%s): a replaced binary would not be "
			"told from this one",
			exe, strerror(errno));
		return -1;
	}
	/*
	 * the files of the libraries loaded on first use (dl/lazy-lib.h), as when they were
	 * linked: an upgraded libelf, libkmod or json-c is another key (one the dynamic
	 * linker's cache does not tell is loaded: the walk below finds it)
	 */
	if (kp_lazy_files(add_lazy_file, k) != 0) {
		snprintf(why, wlen, "out of memory");
		return -1;
	}
	if (dl_iterate_phdr(add_lib, k) != 0) {
		snprintf(why, wlen, "a loaded library cannot be stat()ed (%s)", strerror(errno));
		return -1;
	}
	for (int i = 0; i < argc; i++)
		if (add_str(k, argv[i]) < 0)
			return -1;
	if (!getcwd(cwd, sizeof(cwd)) || !strncmp(cwd, "/proc", 5) || !strncmp(cwd, "/sys", 4)) {
		snprintf(why, wlen, "the working directory is unknown or on /proc or /sys");
		return -1;
	}
	if (add_str(k, cwd) < 0)
		return -1;
	for (char **e = environ; e && *e; e++) {
		if (!env_counts(*e))
			continue;
		if (nenv == KP_ARRAY_SIZE(env)) {
			snprintf(why, wlen, "more than %zu KOPOLICY_, LC_, LD_, ... variables",
				 KP_ARRAY_SIZE(env));
			return -1;
		}
		env[nenv++] = *e;
	}
	qsort(env, nenv, sizeof(*env), cmp_str);
	for (size_t i = 0; i < nenv; i++)
		if (add_str(k, env[i]) < 0)
			return -1;
	if (uname(&u) < 0) {
		snprintf(why, wlen, "uname() failed (%s)", strerror(errno));
		return -1;
	}
	if (add_str(k, u.sysname) < 0 || add_str(k, u.release) < 0 || add_str(k, u.version) < 0 ||
	    add_str(k, u.machine) < 0)
		return -1;
	v[0] = isatty(STDIN_FILENO);
	v[1] = isatty(STDOUT_FILENO);
	v[2] = isatty(STDERR_FILENO);
	v[3] = sysconf(_SC_NPROCESSORS_ONLN);
	v[4] = (long)geteuid();
	v[5] = (long)getegid();
	/* how stdout's writes are cut, and whether stderr's land between them in one file */
	v[6] = (long)kp_rc_out_buffer_size();
	v[7] = fstat(STDOUT_FILENO, &so) == 0 && fstat(STDERR_FILENO, &se) == 0 &&
	       so.st_dev == se.st_dev && so.st_ino == se.st_ino;
	return kp_kbuf_add(k, v, sizeof(v));
}
