// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The key of libkmod's answers (kmod-memo.h): the state of everything kmod 30 reads for the
 * hook's questions, each trusted and settled, or no key at all.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kmod-memo-internal.h"
#include "util/byte-writer.h"
#include "util/fs-trust.h"
#include "util/io.h"
#include "util/util.h"

/* kmod 30 reads at most 4095 bytes of it (KCMD_LINE_SIZE); more is compared all the same */
#define CMDLINE_MAX 8192
#define ABSENT	    0xffffffffu

/*
 * What libkmod 30 opens in the release directory for the hook's questions: libkmod.c's
 * index_files[] with ".bin" (lookups, dependencies, built-ins), kmod_config_new()'s
 * modules.softdep.
 */
static const char *const moddir_files[] = {
	"modules.dep.bin",	     "modules.alias.bin",   "modules.symbols.bin",
	"modules.builtin.alias.bin", "modules.builtin.bin", "modules.softdep",
};

void kp_kmod_memo_put_tag(struct kp_byte_writer *w, const struct kp_kmod_memo *m)
{
	kp_bw_str(w, KP_KMOD_MEMO_TAG);
	kp_bw_str(w, m->moddir);
	for (size_t i = 0; m->paths[i]; i++)
		kp_bw_str(w, m->paths[i]);
	kp_bw_str(w, NULL);
	kp_bw_str(w, m->question);
}

/*
 * A state into @w: "absent", or the eight values of kp_file_state(). False when it cannot
 * key a memo: not trusted (for a directory: one others can write names into), not settled.
 */
static bool put_state(struct kp_kmod_memo *m, struct kp_byte_writer *w, int fd,
		      const struct stat *st)
{
	uint64_t v[8];
	int cls = kp_fs_devs_find(&m->devs, (uint64_t)st->st_dev);

	if (cls < 0) {
		cls = kp_fs_class_of_fd(fd);
		if (cls < 0)
			return false;
		kp_fs_devs_add(&m->devs, (uint64_t)st->st_dev, (enum kp_fs_class)cls);
	}
	if (!kp_state_trusted(st, (enum kp_fs_class)cls, m->euid) ||
	    (S_ISDIR(st->st_mode) && (st->st_mode & (S_IWGRP | S_IWOTH))))
		return false;
	kp_file_state(st, v);
	if (!kp_state_settled(v, &m->before))
		return false;
	kp_bw_put32(w, 8);
	for (size_t i = 0; i < 8; i++)
		kp_bw_put64(w, v[i]);
	return true;
}

/* @name of @dfd as libkmod reaches it (links followed): its state or "absent". */
static bool put_entry(struct kp_kmod_memo *m, struct kp_byte_writer *w, int dfd, const char *name)
{
	struct stat st, st2;
	int fd = openat(dfd, name, O_PATH | O_CLOEXEC);
	bool ok;

	if (fd < 0) {
		if (errno != ENOENT)
			return false;
		kp_bw_put32(w, ABSENT);
		return true;
	}
	ok = fstat(fd, &st) == 0 && put_state(m, w, fd, &st);
	/* the name still reaches that file (its class was judged by that descriptor) */
	ok = ok && fstatat(dfd, name, &st2, 0) == 0 && st2.st_dev == st.st_dev &&
	     st2.st_ino == st.st_ino;
	close(fd);
	return ok;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of @dfd that kmod 30's conf_files_filter_out() keeps, sorted; NULL on failure. */
static char **conf_names(int dfd, size_t *n)
{
	DIR *d = kp_dir_list_at(dfd, ".");
	struct dirent *de;
	char **v = NULL;
	size_t cap = 0;
	bool fail = false;

	*n = 0;
	if (!d)
		return NULL;
	while (!fail && (de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (de->d_name[0] == '.' || len < 6 ||
		    (strcmp(de->d_name + len - 5, ".conf") &&
		     strcmp(de->d_name + len - 6, ".alias")))
			continue;
		if (kp_grow(&v, &cap, *n + 1, sizeof(*v)) < 0 || !(v[*n] = strdup(de->d_name)))
			fail = true;
		else
			(*n)++;
	}
	closedir(d);
	if (!fail && !v)
		v = calloc(1, sizeof(*v));
	if (fail || !v) {
		for (size_t i = 0; i < *n; i++)
			free(v[i]);
		free(v);
		return NULL;
	}
	qsort(v, *n, sizeof(*v), cmp_names);
	return v;
}

/* A modprobe.d directory given to kmod_new(): its state, then its entries'. */
static bool put_conf_dir(struct kp_kmod_memo *m, struct kp_byte_writer *w, const char *path)
{
	struct stat st;
	char **names;
	size_t n = 0;
	bool ok;
	int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dfd < 0)
		return false;
	ok = fstat(dfd, &st) == 0 && put_state(m, w, dfd, &st);
	names = ok ? conf_names(dfd, &n) : NULL;
	ok = ok && names;
	if (ok)
		kp_bw_put32(w, n);
	for (size_t i = 0; i < n; i++) {
		if (ok) {
			kp_bw_str(w, names[i]);
			ok = put_entry(m, w, dfd, names[i]);
		}
		free(names[i]);
	}
	free(names);
	close(dfd);
	return ok;
}

/* The host's /proc/cmdline, which kmod 30 parses whatever the root: its bytes, whole. */
static bool put_cmdline(struct kp_byte_writer *w)
{
	char buf[CMDLINE_MAX];
	size_t len = 0;
	int fd = open("/proc/cmdline", O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		kp_bw_put32(w, ABSENT); /* libkmod parses nothing then */
		return true;
	}
	while (len < sizeof(buf)) {
		ssize_t r = read(fd, buf + len, sizeof(buf) - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			close(fd);
			return false;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	kp_bw_put32(w, len);
	kp_bw_put(w, buf, len);
	return true;
}

bool kp_kmod_memo_make_key(struct kp_kmod_memo *m, struct kp_byte_writer *w)
{
	int dfd = open(m->moddir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct stat st;
	bool ok;

	kp_kmod_memo_put_tag(w, m);
	if (dfd < 0)
		return false;
	/* the release directory: names looked up in it nobody else can swap */
	ok = fstat(dfd, &st) == 0 && !(st.st_mode & (S_IWGRP | S_IWOTH)) &&
	     (st.st_uid == 0 || st.st_uid == m->euid);
	for (size_t i = 0; ok && i < KP_ARRAY_SIZE(moddir_files); i++)
		ok = put_entry(m, w, dfd, moddir_files[i]);
	close(dfd);
	for (size_t i = 0; ok && m->paths[i]; i++)
		ok = put_conf_dir(m, w, m->paths[i]);
	ok = ok && put_cmdline(w);
	return ok && !w->failed;
}
