// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What libkmod reads under a root, and when it reads a private copy (modprobe-snapshot.h).
 * libkmod opens its indexes and configuration by name on the host (kmod's
 * index_file_open() and conf_files_list(), kmod 30), after kopolicy checked them: a name
 * that someone else can replace in between hands libkmod other bytes. Where nobody but
 * root or the run's user can change any directory, link or file on the way (the caches'
 * trust test, cache/trusted-dir.h), it reads by name;
 * else it reads a copy made through the root's pinned directory. Either way the files are
 * checked (modprobe-index.c) before kmod_new(): the copy is what is checked.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "file/bytes.h"
#include "file/inputs.h"
#include "file/rootfs.h"
#include "modprobe-chain-internal.h"
#include "modprobe-index.h"
#include "modprobe-snapshot.h"
#include "cache/trusted-dir.h"
#include "util/io.h"

/* The names of a release directory libkmod 30 reads: its indexes and modules.softdep. */
static const char *const kmod_files[] = {
	"modules.dep.bin",     "modules.builtin.bin", "modules.builtin.alias.bin",
	"modules.symbols.bin", "modules.alias.bin",   "modules.softdep",
	"modules.weakdep",
};

/*
 * @dir and each name of it libkmod reads (@names, else every *.conf) can be read by name:
 * the caches' trust walk (cache/trusted-dir.h) for the directory, kp_trusted_entry() for
 * each name.
 */
static bool dir_trusted(const char *dir, const char *const *names, size_t nnames)
{
	struct kp_err err = { 0 };
	struct dirent *de;
	DIR *d;
	int dfd = kp_trusted_dir_open_local(dir, &err);
	bool ok = dfd >= 0;

	for (size_t i = 0; ok && i < nnames; i++)
		ok = kp_trusted_entry(dfd, dir, names[i], &err) == 0;
	/* listed through the checked descriptor, never by name again */
	d = ok && !names ? kp_dir_list_at(dfd, ".") : NULL;
	if (!names && !d)
		ok = false;
	while (d && ok && (de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (de->d_name[0] == '.' || n < 6 || strcmp(de->d_name + n - 5, ".conf"))
			continue;
		ok = kp_trusted_entry(dfd, dir, de->d_name, &err) == 0;
	}
	if (d)
		closedir(d);
	if (dfd >= 0)
		close(dfd);
	return ok;
}

bool kp_kmod_trusted(const char *moddir, const char *const *paths)
{
	bool ok = dir_trusted(moddir, kmod_files, KP_ARRAY_SIZE(kmod_files));

	for (size_t i = 0; ok && paths[i]; i++)
		ok = dir_trusted(paths[i], NULL, 0);
	return ok;
}

/* Copies the open regular file @in (@st, at most @max bytes) to @name in @dirfd, 0600. */
static int copy_fd(int in, const struct stat *st, size_t max, int dirfd, const char *name,
		   struct kp_err *err)
{
	unsigned char buf[65536];
	size_t total = 0;
	int out;

	if ((uint64_t)st->st_size > max)
		return kp_err_errno(err, EFBIG, "larger than the index limit");
	out = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		return kp_err_errno(err, errno, "cannot copy for libkmod: %s", strerror(errno));
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (n > 0 && (total += (size_t)n) > max) ||
		    (n > 0 && kp_write_all(out, buf, (size_t)n) < 0)) {
			int e = n < 0 ? errno : total > max ? EFBIG : errno;

			close(out);
			unlinkat(dirfd, name, 0);
			return kp_err_errno(err, e, "cannot copy for libkmod: %s", strerror(e));
		}
		if (n == 0)
			break;
	}
	if (close(out) < 0) {
		unlinkat(dirfd, name, 0);
		return kp_err_errno(err, errno, "cannot copy for libkmod: %s", strerror(errno));
	}
	return 0;
}

/*
 * @src (a file of the root) into the snapshot as @name, opened through the pinned root
 * (kp_open_regular_in(): links resolved inside it, never a FIFO); absent: nothing. 0, or
 * -1 with "@src: why".
 */
static int snapshot_copy(struct kp_kmod_copy *k, const char *src, const char *name, size_t max,
			 struct kp_err *err)
{
	struct stat st;
	int fd, r;

	fd = kp_open_regular_in(&k->rootdir, src, &st, err);
	if (fd < 0)
		return kp_err_errnum(err) == ENOENT ? 0 : kp_err_prefix(err, src);
	r = copy_fd(fd, &st, max, k->modfd, name, err);
	close(fd);
	return r < 0 ? kp_err_prefix(err, src) : 0;
}

int kp_kmod_copy_file(struct kp_kmod_copy *k, const char *name, size_t max, struct kp_err *err)
{
	char *src;
	int r;

	if (!k->active)
		return 0;
	if (faccessat(k->modfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		return 0; /* copied once */
	if (asprintf(&src, "%s/%s", k->moddir, name) < 0)
		return kp_err_set(err, "out of memory");
	r = snapshot_copy(k, src, name, max, err);
	free(src);
	return r;
}

/* The *.conf names of the configuration directory @dir into the snapshot's "conf.@i". */
static int snapshot_conf_dir(struct kp_kmod_copy *k, size_t i, const char *dir, char **copy,
			     struct kp_err *err)
{
	char sub[32];
	struct dirent *de;
	DIR *d;
	int r = 0, subfd;

	snprintf(sub, sizeof(sub), "conf.%zu", i);
	if (mkdirat(k->snapfd, sub, 0700) < 0 ||
	    (subfd = openat(k->snapfd, sub, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return kp_err_errno(err, errno, "%s: cannot copy for libkmod: %s", dir,
				    strerror(errno));
	if (asprintf(copy, "%s/%s", k->snapdir, sub) < 0) {
		close(subfd);
		return kp_err_set(err, "out of memory");
	}
	d = kp_opendir_in(&k->rootdir, dir);
	while (d && r == 0 && (de = readdir(d))) {
		size_t n = strlen(de->d_name);
		struct stat st;
		char *src;
		int fd;

		if (de->d_name[0] == '.' || n < 6 || strcmp(de->d_name + n - 5, ".conf"))
			continue;
		if (asprintf(&src, "%s/%s", dir, de->d_name) < 0) {
			r = kp_err_set(err, "out of memory");
			break;
		}
		fd = kp_open_regular_in(&k->rootdir, src, &st, err);
		if (fd >= 0) {
			r = copy_fd(fd, &st, KP_CHAIN_MAX_INDEX, subfd, de->d_name, err);
			close(fd);
		} else if (kp_err_errnum(err) != ENOENT && kp_err_errnum(err) != EISDIR) {
			r = -1; /* libkmod skips directories and what vanished, nothing else */
		}
		if (r < 0)
			kp_err_prefix(err, src);
		free(src);
	}
	if (d)
		closedir(d);
	close(subfd);
	return r;
}

/*
 * libkmod 30 stat()s each module it names (kmod_module_new_from_path()) under its
 * directory: each entry of the release directory but the files copied is linked from the
 * copy to the root's own, for that stat() only. kopolicy opens the modules itself, inside
 * the root (set_paths() names them under @k->moddir). What a swapped link target can change:
 * libkmod stat()s the dependencies of a modules.dep.bin line (module_parse_depline(), not the
 * module itself) and keeps only the path it was given; the stat() result is used only to fail.
 * A directory below the release directory swapped for a link to a host path would make that
 * result tell whether the host path exists: modprobe-chain.c takes neither answer (each
 * dependency must be a file inside the root; where libkmod failed, the checked index's line
 * gives them), so the answer depends on the root alone; the bytes judged are the root's.
 */
static int snapshot_links(struct kp_kmod_copy *k, struct kp_err *err)
{
	struct dirent *de;
	DIR *d = kp_opendir_in(&k->rootdir, k->moddir);
	int r = 0;

	if (!d)
		return kp_err_errno(err, errno, "%s: %s", k->moddir, strerror(errno));
	while (r == 0 && (de = readdir(d))) {
		bool copied = !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..");
		char *target;

		for (size_t i = 0; !copied && i < KP_ARRAY_SIZE(kmod_files); i++)
			copied = !strcmp(de->d_name, kmod_files[i]);
		if (copied)
			continue;
		if (asprintf(&target, "%s/%s", k->moddir, de->d_name) < 0)
			return kp_err_set(err, "out of memory");
		if (symlinkat(target, k->modfd, de->d_name) < 0)
			r = kp_err_errno(err, errno, "%s: cannot link for libkmod: %s", target,
					 strerror(errno));
		free(target);
	}
	closedir(d);
	return r;
}

/*
 * @k's copy locked as live (kp_kmod_copy_sweep()) through its own descriptor, held until
 * kp_kmod_copy_remove(); then the copies that killed runs left beside it removed. Where the
 * file system takes no lock, a later run cannot take one either and leaves the copy.
 */
static void lock_and_sweep(struct kp_kmod_copy *k)
{
	const char *self = strrchr(k->snapdir, '/');
	int parentfd;

	k->lockfd = openat(k->snapfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (k->lockfd < 0 || flock(k->lockfd, LOCK_EX | LOCK_NB) < 0)
		return;
	parentfd = openat(k->snapfd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (parentfd < 0)
		return;
	kp_kmod_copy_sweep(parentfd, self ? self + 1 : k->snapdir);
	close(parentfd);
}

/*
 * A new directory of mode 0700 with a random name (KP_KMOD_COPY_PREFIX and 6 letters or digits,
 * into @name) made in the directory @pfd: 0, or -1 with errno.
 */
static int make_unique(int pfd, char *name, size_t len)
{
	static const char chars[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char r[6];

	for (int tries = 0; tries < 100; tries++) {
		size_t n = (size_t)snprintf(name, len, "%s", KP_KMOD_COPY_PREFIX);

		if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
			return -1;
		for (size_t i = 0; i < sizeof(r) && n + 1 < len; i++)
			name[n++] = chars[r[i] % (sizeof(chars) - 1)];
		name[n] = '\0';
		if (mkdirat(pfd, name, 0700) == 0)
			return 0;
		if (errno != EEXIST)
			return -1;
	}
	return -1;
}

/*
 * @k's copy directory made under @parent: @parent first walked under the caches' trust test
 * (cache/trusted-dir.h: nobody but root or the caller can change the way to it; a sticky
 * @parent such as /tmp may be writable by others), then a 0700 directory made in what was
 * walked and checked alone. Nothing is made where the walk refuses. 0, or -1 with @why (the
 * reason alone, nothing left behind); @refused set when the trust test refused it (else
 * making it failed).
 */
static int make_snapdir(struct kp_kmod_copy *k, const char *parent, bool *refused,
			struct kp_err *why)
{
	char name[sizeof(KP_KMOD_COPY_PREFIX) + 8], *dir;
	int pfd, fd;

	*refused = false;
	pfd = kp_trusted_parent_open_local(parent, why);
	if (pfd < 0) {
		*refused = why->errnum == EPERM;
		if (!*refused)
			kp_err_errno(why, why->errnum, "%s", strerror(why->errnum));
		return -1;
	}
	if (make_unique(pfd, name, sizeof(name)) < 0) {
		kp_err_errno(why, errno, "%s", strerror(errno));
		close(pfd);
		return -1;
	}
	if (asprintf(&dir, "%s/%s", parent, name) < 0)
		dir = NULL;
	k->snapdir = dir ? kp_arena_strdup(&k->arena, dir) : NULL;
	free(dir);
	if (!k->snapdir) {
		unlinkat(pfd, name, AT_REMOVEDIR);
		close(pfd);
		return kp_err_set(why, "out of memory");
	}
	/* from here kp_kmod_copy_remove() removes it, and kp_kmod_copy_unlink() at a deadline */
	k->active = true;
	fd = kp_trusted_subdir(pfd, name, false, why);
	if (fd < 0) {
		unlinkat(pfd, name, AT_REMOVEDIR);
		close(pfd);
		k->active = false;
		*refused = true;
		return -1;
	}
	close(pfd);
	k->snapfd = fd;
	lock_and_sweep(k);
	return 0;
}

/* @err's line for the last place tried, @parent (@tried: what was tried before it, if any). */
static int snapdir_failed(const struct kp_kmod_copy *k, const char *tried, const char *parent,
			  bool refused, const struct kp_err *why, struct kp_err *err)
{
	if (!refused)
		return kp_err_errno(err, why->errnum,
				    "%s%s: cannot make a directory for libkmod: %s", tried, parent,
				    why->msg);
	return kp_err_errno(err, EPERM,
			    "libkmod's copy of %s refused: %s%s: %s (set TMPDIR to a directory "
			    "only root can change)",
			    k->moddir, tried, parent, why->msg);
}

/*
 * Where the copy goes: $TMPDIR when set (absolute), else the first of /run and /dev/shm that
 * is a tmpfs (the copy never reaches a disk: 5-80 ms less on a hook run) where it can be made
 * and trusted, else /tmp; a failure names what was tried and why each was passed over.
 * 0, or -1 with @err.
 */
static int make_snapdir_default(struct kp_kmod_copy *k, struct kp_err *err)
{
	static const char *const tmpfs_dirs[] = { "/run", "/dev/shm" };
	const char *tmp = getenv("TMPDIR");
	struct kp_err why = { 0 };
	char tried[3 * sizeof(why.msg)];
	size_t len;
	bool refused;

	if (tmp && tmp[0] == '/') {
		if (make_snapdir(k, tmp, &refused, &why) == 0)
			return 0;
		return snapdir_failed(k, refused ? "TMPDIR=" : "", tmp, refused, &why, err);
	}
	len = (size_t)snprintf(tried, sizeof(tried), "TMPDIR %s, tried",
			       tmp ? "not absolute" : "unset");
	for (size_t i = 0; i < KP_ARRAY_SIZE(tmpfs_dirs); i++) {
		struct statfs sf;

		if (statfs(tmpfs_dirs[i], &sf) < 0)
			kp_err_errno(&why, errno, "%s", strerror(errno));
		else if (sf.f_type != TMPFS_MAGIC)
			kp_err_set(&why, "not a tmpfs");
		else if (make_snapdir(k, tmpfs_dirs[i], &refused, &why) == 0)
			return 0;
		if (len < sizeof(tried))
			len += (size_t)snprintf(tried + len, sizeof(tried) - len, " %s (%s),",
						tmpfs_dirs[i], why.msg);
	}
	if (make_snapdir(k, "/tmp", &refused, &why) == 0)
		return 0;
	if (len < sizeof(tried))
		snprintf(tried + len, sizeof(tried) - len, " then ");
	return snapdir_failed(k, tried, "/tmp", refused, &why, err);
}

/* @k's root and release directory, its own: a copy outlives the user that made it. */
static int copy_source(struct kp_kmod_copy *k, const struct kp_root_dir *rootdir,
		       const char *moddir, struct kp_err *err)
{
	k->snapfd = k->modfd = k->lockfd = -1;
	k->rootdir.fd = -1;
	k->rootdir.path = rootdir->path ? kp_arena_strdup(&k->arena, rootdir->path) : NULL;
	k->moddir = kp_arena_strdup(&k->arena, moddir);
	if ((rootdir->path && !k->rootdir.path) || !k->moddir)
		return kp_err_set(err, "out of memory");
	if (rootdir->fd >= 0 && (k->rootdir.fd = fcntl(rootdir->fd, F_DUPFD_CLOEXEC, 0)) < 0)
		return kp_err_errno(err, errno, "%s: %s", rootdir->path, strerror(errno));
	return 0;
}

static int copy_open(struct kp_kmod_copy *k, const struct kp_root_dir *rootdir, const char *moddir,
		     const char *const *paths, struct kp_err *err)
{
	char *dir;
	int r;

	if (copy_source(k, rootdir, moddir, err) < 0 || make_snapdir_default(k, err) < 0)
		return -1;
	if (mkdirat(k->snapfd, "mod", 0700) < 0 ||
	    (k->modfd = openat(k->snapfd, "mod", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) <
		    0)
		return kp_err_errno(err, errno, "%s: cannot make a directory for libkmod: %s",
				    k->snapdir, strerror(errno));
	if (asprintf(&dir, "%s/mod", k->snapdir) < 0)
		return kp_err_set(err, "out of memory");
	k->kmoddir = kp_arena_strdup(&k->arena, dir);
	free(dir);
	if (!k->kmoddir)
		return kp_err_set(err, "out of memory");
	for (size_t i = 0; paths[i] && i < KP_KMOD_CONF_DIRS; i++) {
		char *copy = NULL;

		r = snapshot_conf_dir(k, i, paths[i], &copy, err);
		k->kpaths[i] = copy ? kp_arena_strdup(&k->arena, copy) : NULL;
		free(copy);
		if (r < 0)
			return -1;
		if (!k->kpaths[i])
			return kp_err_set(err, "out of memory");
	}
	/* modules.softdep and modules.weakdep: kmod_new() reads them with the configuration */
	for (size_t i = 5; i < KP_ARRAY_SIZE(kmod_files); i++)
		if (kp_kmod_copy_file(k, kmod_files[i], KP_CHAIN_MAX_INDEX, err) < 0)
			return -1;
	return snapshot_links(k, err);
}

int kp_kmod_copy_open(struct kp_kmod_copy *k, const struct kp_root_dir *rootdir, const char *moddir,
		      const char *const *paths, struct kp_err *err)
{
	kp_kmod_copy_remove(k); /* what a failed attempt left, if any */
	/* a failure here depends on $TMPDIR and the way to it, which no manifest holds */
	if (copy_open(k, rootdir, moddir, paths, err) < 0) {
		kp_in_uncacheable("no private copy for libkmod");
		return -1;
	}
	return 0;
}

bool kp_kmod_copy_of(const struct kp_kmod_copy *k, const char *moddir)
{
	return k->active && !strcmp(k->moddir, moddir);
}

void kp_kmod_copy_remove(struct kp_kmod_copy *k)
{
	if (k->active) {
		kp_kmod_copy_unlink(k);
		/* a deadline from here on finds no copy: what it would read is freed below */
		k->active = false;
		atomic_signal_fence(memory_order_seq_cst);
		if (k->modfd >= 0)
			close(k->modfd);
		if (k->snapfd >= 0)
			close(k->snapfd);
		if (k->lockfd >= 0)
			close(k->lockfd); /* the copy is gone: nothing left to sweep */
	}
	kp_root_dir_unpin(&k->rootdir);
	kp_arena_release(&k->arena);
	memset(k, 0, sizeof(*k));
}

const char *const kp_kmod_conf_dirs[KP_KMOD_CONF_DIRS] = {
	"etc/modprobe.d",     "run/modprobe.d", "usr/local/lib/modprobe.d",
	"usr/lib/modprobe.d", "lib/modprobe.d",
};

int kp_chain_kmod_prepare(struct kp_chain *c, const char **paths, const char **kpaths,
			  struct kp_err *err)
{
	size_t np = 0;

	paths[0] = NULL;
	for (size_t i = 0; i < KP_CHAIN_CONF_DIRS; i++) {
		/* inside the root: ROOT/etc -> /etc is the root's etc, not the host's */
		char *d = kp_root_resolve_dir(c->root, kp_kmod_conf_dirs[i]);
		const char *kept = NULL;

		if (!d && errno == ELOOP)
			kept = "";
		else if (d && !kp_is_dir(d))
			kept = "";
		else if (d)
			kept = kp_arena_strdup(&c->arena, d);
		free(d);
		if (!kept)
			return kp_err_set(err, "out of memory");
		if (*kept) {
			paths[np++] = kept;
			paths[np] = NULL;
		}
	}
	/*
	 * libkmod opens what it reads without O_NONBLOCK and trusts the indexes' offsets:
	 * a FIFO blocks it forever, a corrupt index can loop it. Both refused here first.
	 * Under a root it reads by name: where anyone but root or the caller could swap a
	 * name after the check, it reads a checked private copy instead.
	 */
	if (kp_modprobe_config_check(c->root, paths, err) < 0)
		return -1;
	/* the run's copy when it has one (kp_chain_open() gave it): read, not made again */
	if (!c->kc->active && !kp_root_is_host(c->root) && !kp_kmod_trusted(c->moddir, paths) &&
	    kp_kmod_copy_open(c->kc, &c->rootdir, c->moddir, paths, err) < 0)
		return -1;
	memcpy(kpaths, kp_kmod_paths(c->kc, paths), (KP_CHAIN_CONF_DIRS + 1) * sizeof(*kpaths));
	if (kp_chain_check_index(c, "modules.dep.bin", true, err) < 0 ||
	    kp_chain_check_index(c, "modules.builtin.bin", false, err) < 0 ||
	    kp_chain_check_index(c, "modules.builtin.alias.bin", false, err) < 0)
		return -1;
	/* its checks recorded the copy's own files, gone by a replay: not stored */
	if (c->kc->active)
		kp_in_uncacheable("libkmod read a private copy of the root's indexes");
	return 0;
}
