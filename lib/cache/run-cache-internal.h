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
 * Names the finished entry @fd (@tmp when it is a named temporary file) @name in @dir,
 * replacing an older one atomically, then prunes @dir to its budget; 0 or -1.
 */
int kp_rc_publish(const char *dir, int fd, const char *tmp, const char *name, uint64_t size);
/* The share of KOPOLICY_CACHE_MAX_SIZE the result cache keeps (a quarter). */
uint64_t kp_rc_budget(void);
/* Closes @fd and removes its temporary name when it has one. */
void kp_rc_tmp_drop(const char *dir, int fd, const char *tmp);

#endif
