// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libkmod's context as the modprobe chain and the kernel tree make it (modprobe-kmod.h):
 * kmod_new() with what it prints while it parses modprobe.d kept for a replay of its answers
 * (cache/kmod-memo.h), the first error of a call caught, and the libkmod file this process
 * loaded, whose state the memo records.
 */
#include "modprobe-kmod.h"

#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

void kp_kmod_log_fn(void *data, int priority, const char *file, int line, const char *fn,
		    const char *format, va_list args)
{
	struct kp_kmod_log *log = data;

	if (!log || priority > LOG_ERR || log->set)
		return;
	vsnprintf(log->msg, sizeof(log->msg), format, args);
	log->msg[strcspn(log->msg, "\n")] = '\0';
	log->set = true;
}

static void kmod_silent(void *data, int priority, const char *file, int line, const char *fn,
			const char *format, va_list args)
{
}

struct kmod_ctx *kp_kmod_new_said(const char *dir, const char *const *paths, bool echo, char **said)
{
	FILE *real = stderr, *mem;
	struct kmod_ctx *ctx;
	char *buf = NULL;
	size_t len = 0;

	*said = NULL;
	fflush(stderr);
	/*
	 * libkmod logs to the FILE that stderr is when kmod_new() runs (its log_data), not to
	 * descriptor 2: a stream swapped in for that call alone gets its messages, and a signal
	 * handler's write(2) still reaches the terminal. Written on at once, as before. No other
	 * thread prints meanwhile: the tree and the chain are opened before the module reads'
	 * pool, and the threads that may run (the facts cache's writer, the kernel-image
	 * reader) print nothing.
	 */
	mem = open_memstream(&buf, &len);
	if (mem)
		stderr = mem;
	ctx = kmod_new(dir, paths);
	if (ctx)
		kmod_set_log_fn(ctx, kmod_silent, NULL); /* never to @mem once it is closed */
	stderr = real;
	if (!mem)
		return ctx;
	if (fclose(mem) == 0 && buf) {
		if (echo)
			fwrite(buf, 1, len, stderr);
		if (!memchr(buf, '\0', len))
			*said = buf; /* kept only when it is one string, whole */
		else
			free(buf);
	} else {
		free(buf);
	}
	return ctx;
}

struct lib_find {
	char *buf;
	size_t len;
	bool found;
};

static int lib_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct lib_find *lf = data;
	const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;

	(void)size;
	if (!base || strncmp(base + 1, "libkmod.so", 10) || info->dlpi_name[0] != '/')
		return 0;
	lf->found = snprintf(lf->buf, lf->len, "%s", info->dlpi_name) < (int)lf->len;
	return 1;
}

const char *kp_kmod_library(char *buf, size_t len)
{
	struct lib_find lf = { .buf = buf, .len = len };

	dl_iterate_phdr(lib_cb, &lf);
	return lf.found ? buf : NULL;
}
