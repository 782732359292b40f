// SPDX-License-Identifier: LGPL-2.1-or-later
#include "rootopen.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

/* openat2() retried this often when a rename or mount elsewhere made a ".." unsure (EAGAIN) */
#define OPENAT2_TRIES 16

int kp_root_dir_open(const char *root)
{
	return open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

void kp_root_dir_pin(struct kp_root_dir *r, const char *path)
{
	r->path = path;
	r->fd = path && path[0] && strcmp(path, "/") ? kp_root_dir_open(path) : -1;
}

void kp_root_dir_unpin(struct kp_root_dir *r)
{
	if (r->path && r->fd >= 0)
		close(r->fd);
	r->path = NULL;
	r->fd = -1;
}

int kp_fd_reopen(int pathfd, int flags)
{
	char proc[32];

	if (flags & O_CREAT) {
		errno = EINVAL;
		return -1;
	}
	/* fs/proc/fd.c proc_fd_link(): the descriptor's own path, not a name looked up again */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pathfd);
	return open(proc, flags);
}

const char *kp_root_rel(const char *root, const char *path)
{
	size_t rl;

	if (!root || !root[0] || !strcmp(root, "/"))
		return NULL;
	rl = strlen(root);
	while (rl > 1 && root[rl - 1] == '/')
		rl--;
	if (strncmp(path, root, rl) || (path[rl] != '/' && path[rl] != '\0'))
		return NULL;
	return path + rl;
}

int kp_root_openat(int rootfd, const char *rel, int flags)
{
#ifdef SYS_openat2
	/*
	 * fs/namei.c (5.6+): RESOLVE_IN_ROOT makes @rootfd the lookup's root for absolute
	 * targets and "..", and fails a ".." with EAGAIN when a rename or mount raced it;
	 * it blocks magic links today, RESOLVE_NO_MAGICLINKS says so for good. No
	 * RESOLVE_NO_XDEV: an installed system's /usr or /boot may be another mount.
	 */
	struct open_how how = {
		.flags = (unsigned long long)(unsigned)flags,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int fd = -1;

	if (flags & O_CREAT) {
		errno = EINVAL;
		return -1;
	}
	if (!rel[0])
		rel = ".";
	for (int i = 0; i < OPENAT2_TRIES; i++) {
		fd = (int)syscall(SYS_openat2, rootfd, rel, &how, sizeof(how));
		if (fd >= 0 || errno != EAGAIN)
			break;
	}
	/* no openat2 (before 5.6), a seccomp filter that refuses it, or ".." raced each time */
	if (fd >= 0 || (errno != ENOSYS && errno != EPERM && errno != EAGAIN))
		return fd;
#endif
	return kp_root_openat_walk(rootfd, rel, flags);
}

/* The walk's state: the directories entered (their descriptors) and the path still to do. */
struct walk {
	int rootfd;
	int *dirs;
	size_t depth, cap;
	char *todo;
	size_t pos;
	unsigned links;
};

static int walk_cur(const struct walk *w)
{
	return w->depth ? w->dirs[w->depth - 1] : w->rootfd;
}

static void walk_pop(struct walk *w)
{
	if (w->depth)
		close(w->dirs[--w->depth]);
}

static int walk_push(struct walk *w, int fd)
{
	if (w->depth == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 16;
		int *d = realloc(w->dirs, cap * sizeof(*d));

		if (!d) {
			close(fd);
			errno = ENOMEM;
			return -1;
		}
		w->dirs = d;
		w->cap = cap;
	}
	w->dirs[w->depth++] = fd;
	return 0;
}

/*
 * @lfd (O_PATH|O_NOFOLLOW) is a symlink: its target replaces it, ahead of what remains of
 * the path; an absolute one restarts at the root. 0, or -1 with errno.
 */
static int walk_follow(struct walk *w, int lfd)
{
	char target[PATH_MAX];
	struct statfs sf;
	ssize_t n;
	size_t rest;
	char *next;

	if (++w->links > KP_ROOT_MAX_LINKS) {
		errno = ELOOP;
		return -1;
	}
	/* procfs links (/proc/self/root, /proc/N/fd/M) jump where their text does not say */
	if (fstatfs(lfd, &sf) < 0)
		return -1;
	if (sf.f_type == PROC_SUPER_MAGIC) {
		errno = ELOOP;
		return -1;
	}
	n = readlinkat(lfd, "", target, sizeof(target) - 1);
	if (n < 0)
		return -1;
	target[n] = '\0';
	if (target[0] == '/')
		while (w->depth)
			walk_pop(w);
	rest = strlen(w->todo + w->pos);
	next = malloc((size_t)n + 1 + rest + 1);
	if (!next) {
		errno = ENOMEM;
		return -1;
	}
	memcpy(next, target, (size_t)n);
	next[n] = '/';
	memcpy(next + n + 1, w->todo + w->pos, rest + 1);
	free(w->todo);
	w->todo = next;
	w->pos = 0;
	return 0;
}

/* One step: the next component of the path entered, followed or opened (the last one). */
static int walk_step(struct walk *w, int flags, int *out)
{
	char name[NAME_MAX + 1];
	struct stat st;
	size_t n;
	bool last;
	int fd;

	while (w->todo[w->pos] == '/')
		w->pos++;
	n = strcspn(w->todo + w->pos, "/");
	if (!n) {
		/* the path ended on a directory (the root, ".", ".." or a trailing '/') */
		*out = openat(walk_cur(w), ".", flags);
		return *out < 0 ? -1 : 1;
	}
	if (n > NAME_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(name, w->todo + w->pos, n);
	name[n] = '\0';
	w->pos += n;
	if (!strcmp(name, "."))
		return 0;
	if (!strcmp(name, "..")) {
		walk_pop(w); /* never above the root: the root has no descriptor to pop */
		return 0;
	}
	last = !w->todo[w->pos + strspn(w->todo + w->pos, "/")];
	fd = openat(walk_cur(w), name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return -1;
	}
	if (S_ISLNK(st.st_mode)) {
		int r = walk_follow(w, fd);

		close(fd);
		return r;
	}
	if (!last) {
		if (!S_ISDIR(st.st_mode)) {
			close(fd);
			errno = ENOTDIR;
			return -1;
		}
		return walk_push(w, fd);
	}
	close(fd);
	/* a link swapped in since the O_PATH open fails here with ELOOP: followed on the retry */
	*out = openat(walk_cur(w), name, flags | O_NOFOLLOW);
	if (*out >= 0)
		return 1;
	if (errno != ELOOP || ++w->links > KP_ROOT_MAX_LINKS)
		return -1;
	w->pos -= n;
	return 0;
}

int kp_root_openat_walk(int rootfd, const char *rel, int flags)
{
	struct walk w = { .rootfd = rootfd };
	int fd = -1, r, e;

	if (flags & O_CREAT) {
		errno = EINVAL;
		return -1;
	}
	w.todo = strdup(rel);
	if (!w.todo) {
		errno = ENOMEM;
		return -1;
	}
	while ((r = walk_step(&w, flags, &fd)) == 0)
		;
	e = errno;
	while (w.depth)
		walk_pop(&w);
	free(w.dirs);
	free(w.todo);
	if (r < 0) {
		errno = e;
		return -1;
	}
	return fd;
}
