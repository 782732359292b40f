/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The shared libraries loaded on first use (lazy-lib.c): libcrypto, libkmod, libelf, liblzma,
 * libzstd, libz and libjson-c are not linked (no NEEDED entry: the dynamic loader would map and
 * relocate them before main() in every process, the modprobe hook's included) but dlopen()ed
 * by the SONAME configure found (KP_LIB*_SONAME) the first time one of their functions is
 * called. Each has a stub file (lazy-crypto.c, ...) defining every function the program calls
 * under the library's own name and prototype (its header included: the compiler checks each),
 * calling through an address dlsym() gave once.
 *
 * A library that cannot be loaded (a broken install) is an ordinary error where a caller asks
 * first, kp_lazy_require(); a stub called without that, on a library that cannot be loaded,
 * says so on stderr (the library, the symbol, dlerror()) and exits with status 2 (man page,
 * EXIT STATUS): the stubs have no error value to return.
 */
#ifndef KP_DL_LAZY_LIB_H
#define KP_DL_LAZY_LIB_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

struct kp_err;

/*
 * One library: what its stub file declares (label .. load_once), and what its load writes
 * once, under @once (fns, ok, why), read without a lock after pthread_once() returned.
 */
struct kp_lazy_lib {
	const char *label;	  /* "libcrypto": for messages */
	const char *soname;	  /* dlopen()ed by this name only, never a path */
	const char *const *names; /* the symbols the stubs call, by index */
	void **fns;		  /* their addresses, in @names' order */
	size_t n;
	/* NULL, or the library's own initialisation once its symbols are there: NULL, or why not */
	const char *(*ready)(void *const *fns);
	void (*load_once)(void); /* the stub file's pthread_once() routine: kp_lazy_load() */
	pthread_once_t once;
	bool ok;       /* loaded, every symbol found, ready */
	char why[384]; /* !ok: what failed (dlerror()'s text, or the missing symbol) */
};

/* The libraries (each defined by its stub file). */
struct kp_lazy_lib *kp_lazy_libcrypto(void);
struct kp_lazy_lib *kp_lazy_libkmod(void);
struct kp_lazy_lib *kp_lazy_libelf(void);
struct kp_lazy_lib *kp_lazy_liblzma(void);
struct kp_lazy_lib *kp_lazy_libzstd(void);
struct kp_lazy_lib *kp_lazy_libz(void);
struct kp_lazy_lib *kp_lazy_libjsonc(void);

/* @lib loaded (the first call loads it): 0, or -1 with @err saying what failed. */
int kp_lazy_require(struct kp_lazy_lib *lib, struct kp_err *err);

/*
 * @fn(path, @arg) for each file the dynamic linker would load one of the libraries above from,
 * as /etc/ld.so.cache names them, without loading them (lazy-files.c); a library the cache
 * cannot tell is loaded instead (dl_iterate_phdr() then finds its file). 0, or the first
 * nonzero @fn returned.
 */
int kp_lazy_files(int (*fn)(const char *path, void *arg), void *arg);

/* The load, run once by @lib->load_once: dlopen(), dlsym() of every name, @lib->ready. */
void kp_lazy_load(struct kp_lazy_lib *lib);

/* A stub's library could not be loaded: one line on stderr, _exit(2). */
_Noreturn void kp_lazy_die(const struct kp_lazy_lib *lib, const char *name);

/* The address of @lib's function @i (@name, for the message if the library is missing). */
static inline void *kp_lazy_fn(struct kp_lazy_lib *lib, size_t i, const char *name)
{
	pthread_once(&lib->once, lib->load_once);
	if (__builtin_expect(!lib->ok, 0))
		kp_lazy_die(lib, name);
	return lib->fns[i];
}

#endif
