/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The facts cache's keys (facts-cache-keys.c) for facts-cache.c (lib/cache only): when a
 * file's state names its bytes, and the SHA-256 of its bytes.
 */
#ifndef KP_FACTS_CACHE_KEYS_H
#define KP_FACTS_CACHE_KEYS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "facts-cache.h"

/* @a and @b are the same state (device, inode, size, mtime, ctime). */
bool kp_fc_same_state(const struct stat *a, const struct stat *b);
/* SHA-256 of the file's bytes as they are on disk; -1 if it cannot be read or changed. */
int kp_fc_content_key(struct kp_facts_cache *c, const struct kp_root_dir *root, const char *path,
		      const struct stat *pre, unsigned char *key);
/* The file at @path is still in the state @v the reader recorded (a stat() not recorded). */
bool kp_fc_still_in_state(const char *path, const uint64_t *v);
/* kp_fc_content_key() for a deferred store: only while the file is still in the state @v. */
int kp_fc_content_key_at(struct kp_facts_cache *c, const char *path, const uint64_t *v,
			 unsigned char *key);
/* The state @st of @path names its bytes (fs-trust.h): a stat() lookup or store is sound. */
bool kp_fc_trusted(struct kp_facts_cache *c, const char *path, const struct stat *st);
/* The module in the state @st holds the bytes whose SHA-256 is @key (file/inputs.h). */
void kp_fc_note_bytes(const struct kp_open_opts *opts, const uint64_t *st,
		      const unsigned char *key);
/* Compressed by its name (.ko.xz, .ko.zst, .ko.gz): worth a content key. */
bool kp_fc_hashed_by_name(const char *path);

#endif
