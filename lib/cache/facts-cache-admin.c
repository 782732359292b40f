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

#include "cache/trusted-dir.h"
#include "sig-memo.h"
#include "util/io.h"

/* Every file of DIR/packs, temporary ones removed as @mode says. */
enum walk_mode {
	WALK_LOOK, /* count only */
	WALK_TIDY, /* also remove temporary files older than KP_FC_TMP_MAX_AGE, and links (prune) */
	WALK_CLEAR, /* also remove every temporary file and link */
};

struct walk {
	int packs_fd;		   /* packs/ (O_PATH), -1 when there is none */
	struct kp_dir_file *packs; /* newest first */
	size_t n;
	uint64_t removed;
};

/*
 * The packs of the trusted facts directory @dfd. Links in place of packs/ or inside it are
 * removed as links when tidying, never followed.
 */
static int walk_at(int dfd, enum walk_mode mode, struct walk *w, struct kp_err *err)
{
	time_t now = time(NULL);
	struct dirent *de;
	DIR *d;

	memset(w, 0, sizeof(*w));
	w->packs_fd =
		kp_trusted_subdir_tidy(dfd, KP_FC_PACK_DIR, mode != WALK_LOOK, &w->removed, err);
	if (w->packs_fd < 0)
		return kp_err_errnum(err) == ENOENT ? 0 : -1;
	if (mode != WALK_LOOK)
		kp_trusted_remove_links(w->packs_fd, &w->removed);
	d = kp_dir_list_at(w->packs_fd, ".");
	if (!d)
		return kp_err_set(err, "%s: %s", KP_FC_PACK_DIR, strerror(errno));
	while ((de = readdir(d))) {
		struct stat st;

		if (strncmp(de->d_name, ".tmp-", 5) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (mode == WALK_CLEAR ||
		    (mode == WALK_TIDY && st.st_mtim.tv_sec + KP_FC_TMP_MAX_AGE < now))
			if (unlinkat(dirfd(d), de->d_name, 0) == 0)
				w->removed++;
	}
	closedir(d);
	if (kp_fc_list_packs(w->packs_fd, &w->packs, &w->n) < 0)
		return kp_err_set(err, "out of memory");
	return 0;
}

static void walk_end(struct walk *w)
{
	if (w->packs_fd >= 0)
		close(w->packs_fd);
	free(w->packs);
}

/* Counts the first @to packs @w names and their entries into @u. */
static void usage_of(const struct walk *w, size_t to, struct kp_cache_usage *u)
{
	struct kp_facts_cache c = { .dirfd = -1 };

	u->packs = 0;
	u->entries = 0;
	u->bytes = 0;
	c.build = kp_fc_build_tag();
	for (size_t i = 0; i < to; i++) {
		struct kp_fc_pack pk;

		u->packs++;
		u->bytes += w->packs[i].bytes;
		if (kp_fc_pack_open(&c, w->packs_fd, w->packs[i].name, &pk) == 0) {
			u->entries += pk.nrec;
			kp_fc_pack_close(&pk);
		}
	}
}

/*
 * The facts directory @dir (ROOT/facts-vN) for show, prune and clear: its descriptor in
 * *@dfd, -1 when there is none; ROOT's in *@rootfd (-1 when absent), @base its last
 * component. A link in its place is removed as a link when @tidy. 0, or -1 with @err (the
 * trust test refused ROOT or the directory).
 */
static int open_facts(const char *dir, bool tidy, int *rootfd, int *dfd, const char **base,
		      uint64_t *removed, struct kp_err *err)
{
	char root[4096];

	*rootfd = -1;
	*dfd = -1;
	if (kp_trusted_split(dir, root, sizeof(root), base) < 0)
		return kp_err_set(err, "%s: not a cache directory", dir);
	*rootfd = kp_trusted_dir_open(root, false, err);
	if (*rootfd < 0)
		return kp_err_errnum(err) == ENOENT ? 0 : -1;
	*dfd = kp_trusted_subdir_tidy(*rootfd, *base, tidy, removed, err);
	if (*dfd < 0 && kp_err_errnum(err) != ENOENT)
		return kp_err_prefix(err, root);
	return 0;
}

static void close_fds(int a, int b)
{
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
}

/* The signature memo of @dfd into @u, its oldest files beyond @max_bytes removed. */
static void sig_usage(int dfd, uint64_t max_bytes, struct kp_cache_usage *u)
{
	struct kp_sig_memo_usage s = { 0 };

	if (max_bytes == UINT64_MAX)
		kp_sig_memo_usage_at(dfd, &s);
	else
		kp_sig_memo_prune_at(dfd, max_bytes, &s);
	u->sig_files = s.files;
	u->sig_bytes = s.bytes;
	u->sig_verdicts = s.verdicts;
	u->sig_images = s.images;
	u->sig_states = s.states;
	u->sig_btf = s.btf;
	u->sig_indexes = s.indexes;
	u->sig_kmod = s.kmod;
	u->removed += s.removed;
}

int kp_facts_cache_usage(const char *dir, struct kp_cache_usage *u, struct kp_err *err)
{
	const char *base;
	int rootfd, dfd, r;
	struct walk w = { .packs_fd = -1 };

	memset(u, 0, sizeof(*u));
	r = open_facts(dir, false, &rootfd, &dfd, &base, &u->removed, err);
	if (r == 0 && dfd >= 0 && (r = walk_at(dfd, WALK_LOOK, &w, err)) == 0) {
		usage_of(&w, w.n, u);
		sig_usage(dfd, UINT64_MAX, u);
	}
	walk_end(&w);
	close_fds(rootfd, dfd);
	return r;
}

int kp_fc_prune_at(int dfd, uint64_t max_bytes, struct kp_cache_usage *u, struct kp_err *err)
{
	struct walk w;
	uint64_t total = 0;
	size_t keep = 0;

	if (walk_at(dfd, WALK_TIDY, &w, err) < 0) {
		u->removed += w.removed;
		walk_end(&w);
		return -1;
	}
	/* the newest packs that fit; the older ones go (least recently used: oldest mtime) */
	while (keep < w.n && total + w.packs[keep].bytes <= max_bytes)
		total += w.packs[keep++].bytes;
	for (size_t i = keep; i < w.n; i++)
		if (unlinkat(w.packs_fd, w.packs[i].name, 0) == 0)
			w.removed++;
	usage_of(&w, keep, u);
	u->removed += w.removed;
	walk_end(&w);
	return 0;
}

int kp_facts_cache_prune(const char *dir, uint64_t max_bytes, struct kp_cache_usage *u,
			 struct kp_err *err)
{
	const char *base;
	int rootfd, dfd, r;

	memset(u, 0, sizeof(*u));
	r = open_facts(dir, true, &rootfd, &dfd, &base, &u->removed, err);
	if (r == 0 && dfd >= 0) {
		/* the memo first (small, and each verdict saves a public-key operation) */
		sig_usage(dfd, max_bytes, u);
		r = kp_fc_prune_at(dfd, max_bytes - u->sig_bytes, u, err);
	}
	close_fds(rootfd, dfd);
	return r;
}

int kp_facts_cache_clear(const char *dir, struct kp_cache_usage *u, struct kp_err *err)
{
	struct walk w = { .packs_fd = -1 };
	const char *base;
	int rootfd, dfd, r;

	memset(u, 0, sizeof(*u));
	r = open_facts(dir, true, &rootfd, &dfd, &base, &u->removed, err);
	if (r < 0 || dfd < 0)
		goto out;
	r = walk_at(dfd, WALK_CLEAR, &w, err);
	u->removed += w.removed;
	if (r < 0)
		goto out;
	for (size_t i = 0; i < w.n; i++)
		if (unlinkat(w.packs_fd, w.packs[i].name, 0) == 0)
			u->removed++;
	if (w.packs_fd >= 0)
		unlinkat(dfd, KP_FC_PACK_DIR, AT_REMOVEDIR);
	/* the files of the directory itself: as links when they are links */
	unlinkat(dfd, "last-prune", 0);
	unlinkat(dfd, "lock", 0);
	kp_sig_memo_clear_at(dfd, &u->removed);
	kp_trusted_remove_links(dfd, &u->removed);
	unlinkat(rootfd, base, AT_REMOVEDIR);
out:
	walk_end(&w);
	close_fds(rootfd, dfd);
	return r;
}

/* Removes @name of @dfd and, for a directory, all below it (not across mounts); counts files. */
static void remove_tree(int dfd, const char *name, dev_t dev, int depth, uint64_t *removed)
{
	struct dirent *de;
	struct stat st;
	DIR *d;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_dev != dev)
		return;
	if (!S_ISDIR(st.st_mode)) {
		if (unlinkat(dfd, name, 0) == 0)
			(*removed)++;
		return;
	}
	d = depth < 16 ? kp_dir_list_at(dfd, name) : NULL;
	if (!d)
		return;
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
	/* only in a directory that passes the trust test (trusted-dir.h) */
	pfd = kp_trusted_dir_open(*p ? p : "/", false, NULL);
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
