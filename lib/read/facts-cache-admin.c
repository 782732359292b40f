// SPDX-License-Identifier: LGPL-2.1-or-later
/* The facts cache's management (facts-cache.h): show (usage), prune and clear. */
#include "facts-pack.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Every file of DIR/packs, temporary ones removed as @mode says. */
enum walk_mode {
	WALK_LOOK,  /* count only */
	WALK_TIDY,  /* also remove temporary files older than TMP_MAX_AGE (prune) */
	WALK_CLEAR, /* also remove every temporary file */
};

struct walk {
	struct kp_dir_file *packs; /* newest first */
	size_t n;
	uint64_t removed;
};

static int walk(const char *dir, enum walk_mode mode, struct walk *w, struct kp_err *err)
{
	time_t now = time(NULL);
	struct dirent *de;
	char p[4200];
	DIR *d;
	int dfd;

	memset(w, 0, sizeof(*w));
	if ((size_t)snprintf(p, sizeof(p), "%s/%s", dir, PACK_DIR) >= sizeof(p))
		return kp_err_set(err, "%s: path too long", dir);
	d = opendir(p);
	if (!d)
		return errno == ENOENT ? 0 : kp_err_set(err, "%s: %s", p, strerror(errno));
	dfd = dirfd(d);
	while ((de = readdir(d))) {
		struct stat st;

		if (strncmp(de->d_name, ".tmp-", 5) ||
		    fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (mode == WALK_CLEAR ||
		    (mode == WALK_TIDY && st.st_mtim.tv_sec + TMP_MAX_AGE < now))
			if (unlinkat(dfd, de->d_name, 0) == 0)
				w->removed++;
	}
	if (kp_fc_list_packs(dfd, &w->packs, &w->n) < 0) {
		closedir(d);
		return kp_err_set(err, "out of memory");
	}
	closedir(d);
	return 0;
}

/* Counts the first @to packs @w names and their entries into @u. */
static void usage_of(const char *dir, const struct walk *w, size_t to, struct kp_cache_usage *u)
{
	struct kp_facts_cache c = { .dirfd = -1 };
	char p[4200];
	int dfd;

	u->packs = 0;
	u->entries = 0;
	u->bytes = 0;
	snprintf(p, sizeof(p), "%s/%s", dir, PACK_DIR);
	dfd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	c.build = kp_fc_build_tag();
	for (size_t i = 0; i < to; i++) {
		struct pack pk;

		u->packs++;
		u->bytes += w->packs[i].bytes;
		if (dfd >= 0 && kp_fc_pack_open(&c, dfd, w->packs[i].name, &pk) == 0) {
			u->entries += pk.nrec;
			kp_fc_pack_close(&pk);
		}
	}
	if (dfd >= 0)
		close(dfd);
}

int kp_facts_cache_usage(const char *dir, struct kp_cache_usage *u, struct kp_err *err)
{
	struct walk w;

	memset(u, 0, sizeof(*u));
	if (walk(dir, WALK_LOOK, &w, err) < 0)
		return -1;
	usage_of(dir, &w, w.n, u);
	free(w.packs);
	return 0;
}

int kp_facts_cache_prune(const char *dir, uint64_t max_bytes, struct kp_cache_usage *u,
			 struct kp_err *err)
{
	struct walk w;
	uint64_t total = 0;
	size_t keep = 0;
	char p[4200];

	memset(u, 0, sizeof(*u));
	if (walk(dir, WALK_TIDY, &w, err) < 0)
		return -1;
	/* the newest packs that fit; the older ones go (least recently used: oldest mtime) */
	while (keep < w.n && total + w.packs[keep].bytes <= max_bytes)
		total += w.packs[keep++].bytes;
	for (size_t i = keep; i < w.n; i++) {
		snprintf(p, sizeof(p), "%s/%s/%s", dir, PACK_DIR, w.packs[i].name);
		if (unlink(p) == 0)
			w.removed++;
	}
	usage_of(dir, &w, keep, u);
	u->removed = w.removed;
	free(w.packs);
	return 0;
}

int kp_facts_cache_clear(const char *dir, struct kp_cache_usage *u, struct kp_err *err)
{
	struct walk w;
	char p[4200];

	memset(u, 0, sizeof(*u));
	if (walk(dir, WALK_CLEAR, &w, err) < 0)
		return -1;
	for (size_t i = 0; i < w.n; i++) {
		snprintf(p, sizeof(p), "%s/%s/%s", dir, PACK_DIR, w.packs[i].name);
		if (unlink(p) == 0)
			w.removed++;
	}
	u->removed = w.removed;
	free(w.packs);
	snprintf(p, sizeof(p), "%s/%s", dir, PACK_DIR);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/last-prune", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/lock", dir);
	unlink(p);
	rmdir(dir);
	return 0;
}

/* Removes @name of @dfd and, for a directory, all below it (not across mounts); counts files. */
static void remove_tree(int dfd, const char *name, dev_t dev, int depth, uint64_t *removed)
{
	struct dirent *de;
	struct stat st;
	DIR *d;
	int fd;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_dev != dev)
		return;
	if (!S_ISDIR(st.st_mode)) {
		if (unlinkat(dfd, name, 0) == 0)
			(*removed)++;
		return;
	}
	fd = depth < 16 ? openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			remove_tree(dirfd(d), de->d_name, dev, depth + 1, removed);
	closedir(d);
	unlinkat(dfd, name, AT_REMOVEDIR);
}

int kp_facts_cache_clear_obsolete(const char *dir, char *names, size_t len, uint64_t *removed)
{
	const char *slash = strrchr(dir, '/');
	size_t used = 0;
	char p[4200];
	int pfd;

	*removed = 0;
	if (len)
		names[0] = '\0';
	if (!slash || (size_t)snprintf(p, sizeof(p), "%.*s", (int)(slash - dir), dir) >= sizeof(p))
		return 0;
	pfd = open(*p ? p : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return 0;
	for (int v = 1; v < KP_FACTS_FORMAT; v++) {
		struct stat st;
		int n;

		snprintf(p, sizeof(p), "facts-v%d", v);
		if (fstatat(pfd, p, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
			continue;
		remove_tree(pfd, p, st.st_dev, 0, removed);
		n = snprintf(names + used, len - used, "%s%s", used ? " " : "", p);
		if (n > 0 && (size_t)n < len - used)
			used += (size_t)n;
	}
	close(pfd);
	return 0;
}
