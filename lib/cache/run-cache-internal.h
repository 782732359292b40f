/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Inside the result cache: the files of runs-vN/ (run-cache-files.c) for run-cache.c. */
#ifndef KP_RUN_CACHE_INTERNAL_H
#define KP_RUN_CACHE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* A growing byte string of length-prefixed fields. */
struct kbuf {
	unsigned char *p;
	size_t len, cap;
};
/* Appends @len bytes as one field (32-bit length, bytes); 0 or -1. */
int kp_kbuf_add(struct kbuf *k, const void *p, size_t len);

/* An unnamed file in @dfd, else a named temporary one (@tmp gets its name); fd or -1. */
int kp_rc_tmpfile(int dfd, char *tmp, size_t len);
/* Writes the header @h (64 bytes) at offset 0 of @fd, whose size must be @size; 0 or -1. */
int kp_rc_finish_entry(int fd, const unsigned char *h, uint64_t size);
/*
 * Names the finished entry @fd (@tmp when it is a named temporary file) @name in the
 * trusted directory @dfd (runs-vN), replacing an older one atomically, then prunes it to
 * its budget; 0 or -1.
 */
int kp_rc_publish(int dfd, int fd, const char *tmp, const char *name, uint64_t size);
/* The share of KOPOLICY_CACHE_MAX_SIZE the result cache keeps (a quarter). */
uint64_t kp_rc_budget(void);
/* Closes @fd and removes its temporary name (in @dfd) when it has one. */
void kp_rc_tmp_drop(int dfd, int fd, const char *tmp);
/* The name of the result cache's directory under the cache root: runs-vN. */
#define KP_RC_STR_(x)  #x
#define KP_RC_STR(x)   KP_RC_STR_(x)
#define KP_RC_DIR_NAME "runs-v" KP_RC_STR(KP_RUNS_FORMAT)

#endif
