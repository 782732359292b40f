// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The files the libraries loaded on first use (lazy-lib.h) would be loaded from, without
 * loading them, for the result cache's key (cache/run-cache-key.c), which takes the file of
 * every library the program runs with: loading all seven for it would cost a warm replay more
 * than linking them did (their relocation in dlopen()'s longer scope: 1.6 M instructions).
 *
 * The dynamic linker finds the SONAME of a program without RPATH or RUNPATH in
 * LD_LIBRARY_PATH's directories, then through /etc/ld.so.cache (ldconfig's), then in its
 * default directories. Every file the cache names for the SONAME is given (the one the linker
 * takes, by the entry's flags and the processor's capabilities, is among them), so that a
 * library replaced, or another one the cache names, is another key. With LD_LIBRARY_PATH set,
 * no cache, a cache in another format or damaged, or a SONAME it does not name, that library
 * is loaded instead: the key then takes its file as the linker found it (dl_iterate_phdr()).
 * The cache is a root-owned file of the dynamic linker's own; it is read bounds-checked all
 * the same (glibc's sysdeps/generic/dl-cache.h: the "glibc-ld.so.cache1.1" table, after the
 * old "ld.so-1.7.0" one in caches of glibc before 2.32).
 */
#include "lazy-lib.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/io.h"

#define CACHE_PATH "/etc/ld.so.cache"
#define CACHE_MAX  ((size_t)16 << 20)
#define MAGIC_OLD  "ld.so-1.7.0"
#define MAGIC_NEW  "glibc-ld.so.cache1.1"
#define OLD_HEAD   16 /* magic, padding, number of entries (32 bits) */
#define OLD_ENTRY  12 /* flags, key, value (32 bits each) */
#define NEW_HEAD   48 /* magic and version, number of entries, string bytes, flags, ... */
#define NEW_ENTRY  24 /* flags, key, value, OS version (32 bits each), hwcap (64) */

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The cache's bytes (@*len), or NULL: none, not a regular file, too large, unreadable. */
static unsigned char *read_cache(size_t *len)
{
	int fd = open(CACHE_PATH, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	unsigned char *p = NULL;
	struct stat st;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uint64_t)st.st_size <= CACHE_MAX) {
		p = malloc((size_t)st.st_size);
		if (p && kp_pread_all(fd, p, (size_t)st.st_size, 0) != (ssize_t)st.st_size) {
			free(p);
			p = NULL;
		}
		*len = (size_t)st.st_size;
	}
	close(fd);
	return p;
}

/*
 * The new format's table in @p (@len bytes): its start, its length in *@n and its number of
 * entries in *@nlibs (all within it), or NULL. Its strings are at offsets from its start.
 */
static const unsigned char *new_table(const unsigned char *p, size_t len, size_t *n, size_t *nlibs)
{
	uint64_t off = 0;

	if (len >= OLD_HEAD && !memcmp(p, MAGIC_OLD, strlen(MAGIC_OLD))) {
		off = OLD_HEAD + (uint64_t)get32(p + 12) * OLD_ENTRY;
		off = (off + 7) & ~(uint64_t)7; /* the new table is aligned as its 64-bit hwcap */
	}
	if (off > len || len - off < NEW_HEAD || memcmp(p + off, MAGIC_NEW, strlen(MAGIC_NEW)))
		return NULL;
	*n = len - (size_t)off;
	*nlibs = get32(p + off + 20);
	if (*nlibs > (*n - NEW_HEAD) / NEW_ENTRY)
		return NULL;
	return p + off;
}

/* The NUL-terminated string at @off of the @n bytes at @t, or NULL. */
static const char *str_at(const unsigned char *t, size_t n, uint32_t off)
{
	if (off >= n || !memchr(t + off, '\0', n - off))
		return NULL;
	return (const char *)t + off;
}

int kp_lazy_files(int (*fn)(const char *path, void *arg), void *arg)
{
	struct kp_lazy_lib *const all[] = {
		kp_lazy_libcrypto(), kp_lazy_libkmod(), kp_lazy_libelf(),   kp_lazy_liblzma(),
		kp_lazy_libzstd(),   kp_lazy_libz(),	kp_lazy_libjsonc(),
	};
	const char *llp = getenv("LD_LIBRARY_PATH");
	const unsigned char *t = NULL;
	size_t len = 0, n = 0, nlibs = 0;
	unsigned char *p = NULL;
	int r = 0;

	/* the linker looks there first: which file it takes is its choice then */
	if (!llp || !*llp) {
		p = read_cache(&len);
		t = p ? new_table(p, len, &n, &nlibs) : NULL;
	}
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]) && r == 0; i++) {
		size_t found = 0;

		for (size_t e = 0; t && e < nlibs && r == 0; e++) {
			const unsigned char *ent = t + NEW_HEAD + e * NEW_ENTRY;
			const char *key = str_at(t, n, get32(ent + 4));
			const char *value = str_at(t, n, get32(ent + 8));

			if (!key || !value || value[0] != '/' || strcmp(key, all[i]->soname))
				continue;
			r = fn(value, arg);
			found++;
		}
		/* loaded: dl_iterate_phdr() gives the file (one that cannot be: none) */
		if (!found && r == 0)
			kp_lazy_require(all[i], NULL);
	}
	free(p);
	return r;
}
