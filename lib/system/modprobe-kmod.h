/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libkmod's context for the modprobe chain and the kernel tree (modprobe-kmod.c). */
#ifndef KP_MODPROBE_KMOD_H
#define KP_MODPROBE_KMOD_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include <libkmod.h>

/* The first libkmod error of a call, kept so that silent empty results can be told apart. */
struct kp_kmod_log {
	char msg[256];
	bool set;
};

/* libkmod's log function: the first message at LOG_ERR or worse into @data (a kp_kmod_log). */
void kp_kmod_log_fn(void *data, int priority, const char *file, int line, const char *fn,
		    const char *format, va_list args);

/*
 * kmod_new(@dir, @paths) as the chain and the kernel tree call it: what libkmod prints while
 * it parses the configuration (to stderr, its log until one is set: a bad line, a directory
 * among the files, a bad option on the command line) printed as before when @echo, and kept
 * in *@said (malloc'ed, "" when it printed nothing; NULL when it could not be kept) so that a
 * replay of libkmod's answers (cache/kmod-memo.h) prints the same. The context's log is
 * silenced: the caller sets its own. The context, or NULL.
 */
struct kmod_ctx *kp_kmod_new_said(const char *dir, const char *const *paths, bool echo,
				  char **said);

/*
 * The path of the libkmod shared object loaded in this process (dl_iterate_phdr()) into
 * @buf (@len bytes): @buf, or NULL when none is (or its name does not fit).
 */
const char *kp_kmod_library(char *buf, size_t len);

#endif
