/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What kmod-memo.c (the memo) and kmod-memo-key.c (its key) share. */
#ifndef KP_CACHE_KMOD_MEMO_INTERNAL_H
#define KP_CACHE_KMOD_MEMO_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "kmod-memo.h"
#include "util/fs-trust.h"

struct kp_byte_writer;

/* this format, in the key's tag: another version's memos are other files' */
#define KP_KMOD_MEMO_TAG "kopolicy libkmod answers 1 " PACKAGE_VERSION

/* One answer: its kind (kp_kmod_memo_get()'s type), the question, libkmod's code, strings. */
struct kp_kmod_rec {
	char type;
	char *q;
	int32_t code;
	size_t n;
	char **s;
};

/* The memo of one hook run (kmod-memo.h). */
struct kp_kmod_memo {
	int dirfd;	    /* the facts directory (borrowed); -1: nothing read or written */
	char *question;	    /* the name the hook was asked about */
	char *moddir;	    /* after the first kp_kmod_memo_bind() */
	char **paths;	    /* its modprobe.d directories, NULL-terminated */
	bool bound;	    /* the key was computed whole and every state is trusted and settled */
	bool gone;	    /* unbound for good (a bind with other directories, or a failed key) */
	bool added;	    /* records libkmod answered this run */
	unsigned char *key; /* with @bound: the key (tag and states) */
	size_t keylen;
	char name[64];		/* the memo file */
	struct timespec before; /* the settle rule's reference, taken before libkmod reads */
	uid_t euid;
	struct kp_fs_devs devs;
	struct kp_kmod_rec *recs;
	size_t nrecs, cap;
	struct kp_kmod_memo_counts counts;
};

/* The tag into @w: this format, the directories kmod_new() is given, the question. */
void kp_kmod_memo_put_tag(struct kp_byte_writer *w, const struct kp_kmod_memo *m);
/*
 * The key as things are now into @w (the tag, then the states of the release directory's
 * files libkmod opens, each modprobe.d directory and its entries, /proc/cmdline's bytes):
 * false when some input cannot key a memo (not trusted, not settled, unreadable).
 */
bool kp_kmod_memo_make_key(struct kp_kmod_memo *m, struct kp_byte_writer *w);

#endif
