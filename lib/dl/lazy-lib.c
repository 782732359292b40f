// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The loader behind the stubs of lazy-lib.h: a library dlopen()ed by its SONAME with
 * RTLD_NOW | RTLD_LOCAL (every symbol bound now, none of them lent to later libraries), every
 * symbol its stubs call looked up at once, so that a library that loaded has them all and a
 * stub never fails half-way through a run. A definition preloaded into the global scope
 * (LD_PRELOAD) is taken first, as it would have been for the linked library, and the library
 * is then made global for the interposer to reach it.
 *
 * Global mutable state, which lib/ otherwise has none of: each stub file's table of addresses
 * and its outcome (struct kp_lazy_lib), written once under its pthread_once() and only read
 * after. It cannot be otherwise: a stub has the library's own
 * prototype, no context argument to carry a handle in, and is called from the read pool's
 * threads. The handles are never closed: the addresses stay in use until the process ends.
 */
#include "lazy-lib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/util.h"

/*
 * @name's address: a definition in the global scope first, as the dynamic linker would have
 * bound a linked library's (a library preloaded with LD_PRELOAD interposes on it, as the tests
 * stall libkmod; *@interposed set), never the program's own (a stub exported by mistake
 * would call itself); else @h's own. NULL with dlerror() set when @h has none.
 */
static void *lookup(void *h, const char *name, bool *interposed)
{
	void *p;
	Dl_info self, di;

	dlerror(); /* no earlier error read as this look-up's */
	p = dlsym(RTLD_DEFAULT, name);
	if (p && dladdr((void *)lookup, &self) && dladdr(p, &di) &&
	    di.dli_fbase != self.dli_fbase) {
		*interposed = true;
		return p;
	}
	dlerror();
	return dlsym(h, name);
}

void kp_lazy_load(struct kp_lazy_lib *lib)
{
	const char *e, *why;
	bool interposed = false;
	void *h;

	lib->ok = false;
	/* "" would be the program itself, a path whatever file is there */
	if (!lib->soname[0] || strchr(lib->soname, '/')) {
		snprintf(lib->why, sizeof(lib->why), "%s: no SONAME to load it by ('%s')",
			 lib->label, lib->soname);
		return;
	}
	h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		e = dlerror();
		snprintf(lib->why, sizeof(lib->why), "%s cannot be loaded: %s", lib->label,
			 e ? e : lib->soname);
		return;
	}
	for (size_t i = 0; i < lib->n; i++) {
		/* dlerror() tells a symbol whose value is NULL from a missing one */
		lib->fns[i] = lookup(h, lib->names[i], &interposed);
		e = dlerror();
		if (e || !lib->fns[i]) {
			snprintf(lib->why, sizeof(lib->why), "%s (%s) has no %s: %s", lib->label,
				 lib->soname, lib->names[i], e ? e : "NULL");
			dlclose(h);
			return;
		}
	}
	/*
	 * An interposer finds the library's own definition with dlsym(RTLD_NEXT), in the
	 * global scope, as it would a linked library's: made global then (RTLD_NOLOAD: the
	 * same object), and only then.
	 */
	if (interposed && !dlopen(lib->soname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL))
		dlerror();
	why = lib->ready ? lib->ready(lib->fns) : NULL;
	if (why) {
		snprintf(lib->why, sizeof(lib->why), "%s (%s): %s", lib->label, lib->soname, why);
		return; /* kept mapped: its initialisation may have registered handlers */
	}
	lib->ok = true;
}

int kp_lazy_require(struct kp_lazy_lib *lib, struct kp_err *err)
{
	pthread_once(&lib->once, lib->load_once);
	return lib->ok ? 0 : kp_err_set(err, "%s", lib->why);
}

_Noreturn void kp_lazy_die(const struct kp_lazy_lib *lib, const char *name)
{
	/* one write: the line is not interleaved with another thread's */
	char line[sizeof(lib->why) + 128];
	int n = snprintf(line, sizeof(line), "kopolicy: error: %s (needed for %s)\n", lib->why,
			 name);

	if (n > 0)
		(void)!write(STDERR_FILENO, line,
			     (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
	_exit(2);
}
