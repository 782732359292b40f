// SPDX-License-Identifier: LGPL-2.1-or-later
#include "module-set.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool kp_is_module_filename(const char *name)
{
	static const char *const suffixes[] = { ".ko", ".ko.xz", ".ko.zst", ".ko.gz" };
	size_t len = strlen(name);

	for (size_t i = 0; i < KP_ARRAY_SIZE(suffixes); i++) {
		size_t sl = strlen(suffixes[i]);

		if (len > sl && !strcmp(name + len - sl, suffixes[i]))
			return true;
	}
	return false;
}

static struct kp_set_entry *push_entry(struct kp_module_set *set, const char *path)
{
	struct kp_set_entry *ent;

	if (kp_grow(&set->entries, &set->cap, set->n + 1, sizeof(*set->entries)) < 0)
		return NULL;
	ent = &set->entries[set->n];
	memset(ent, 0, sizeof(*ent));
	ent->path = strdup(path);
	if (!ent->path)
		return NULL;
	set->n++;
	return ent;
}

static int push_error(struct kp_module_set *set, const char *path, const char *what, int errnum)
{
	struct kp_set_entry *ent = push_entry(set, path);
	char buf[256];

	if (!ent)
		return -ENOMEM;
	if (errnum)
		snprintf(buf, sizeof(buf), "%s: %s", what, strerror(errnum));
	else
		snprintf(buf, sizeof(buf), "%s", what);
	ent->error = strdup(buf);
	return ent->error ? 0 : -ENOMEM;
}

struct dir_entry {
	char *path;
	unsigned char type; /* DT_* from readdir(), DT_UNKNOWN if the filesystem does not say */
};

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct dir_entry *)a)->path, ((const struct dir_entry *)b)->path);
}

/* DT_* of @ent, from readdir() when the filesystem gives it, else lstat(). */
static unsigned char entry_type(const struct dir_entry *ent)
{
	struct stat st;

	if (ent->type != DT_UNKNOWN)
		return ent->type;
	if (lstat(ent->path, &st) < 0)
		return DT_UNKNOWN;
	return S_ISDIR(st.st_mode)   ? DT_DIR
	       : S_ISREG(st.st_mode) ? DT_REG
	       : S_ISLNK(st.st_mode) ? DT_LNK
				     : DT_UNKNOWN;
}

static int add_dir(struct kp_module_set *set, const char *dir, unsigned depth)
{
	struct dir_entry *ents = NULL;
	size_t n = 0, cap = 0, dlen = strlen(dir);
	bool slash = dlen && dir[dlen - 1] == '/';
	struct dirent *de;
	DIR *d;
	int r = 0;

	if (depth > 64)
		return push_error(set, dir, "directory nesting too deep", 0);
	d = opendir(dir);
	if (!d)
		return push_error(set, dir, "cannot open directory", errno);
	while ((de = readdir(d))) {
		size_t nlen;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		/* Only directories and module files matter: skip the rest before allocating. */
		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN &&
		    !kp_is_module_filename(de->d_name))
			continue;
		if (kp_grow(&ents, &cap, n + 1, sizeof(*ents)) < 0) {
			r = -ENOMEM;
			break;
		}
		nlen = strlen(de->d_name);
		ents[n].path = malloc(dlen + nlen + 2);
		if (!ents[n].path) {
			r = -ENOMEM;
			break;
		}
		memcpy(ents[n].path, dir, dlen);
		if (!slash)
			ents[n].path[dlen] = '/';
		memcpy(ents[n].path + dlen + !slash, de->d_name, nlen + 1);
		ents[n].type = de->d_type;
		n++;
	}
	closedir(d);
	if (n > 1)
		qsort(ents, n, sizeof(*ents), cmp_entry);
	for (size_t i = 0; i < n && r == 0; i++) {
		const char *base = strrchr(ents[i].path, '/') + 1;
		unsigned char type = entry_type(&ents[i]);

		if (type == DT_DIR)
			r = add_dir(set, ents[i].path, depth + 1);
		else if ((type == DT_REG || type == DT_LNK) && kp_is_module_filename(base))
			r = push_entry(set, ents[i].path) ? 0 : -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		free(ents[i].path);
	free(ents);
	return r;
}

int kp_set_add_path(struct kp_module_set *set, const char *path)
{
	struct stat st;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return add_dir(set, path, 0);
	/* Files (and anything unreadable) are entries: reading reports the problem. */
	return push_entry(set, path) ? 0 : -ENOMEM;
}

struct worker_ctx {
	struct kp_module_set *set;
	const struct kp_read_opts *opts;
	atomic_size_t next;
	atomic_size_t done;
	atomic_size_t failed;
	size_t end;
	pthread_mutex_t progress_lock;
};

static void read_one(struct kp_set_entry *ent, const struct kp_open_opts *o,
		     struct kp_decoders *dec)
{
	struct kp_err err = { "" };

	if (ent->mod || ent->error)
		return;
	if (kp_module_open_with(ent->path, o, dec, &ent->mod, &err) < 0) {
		ent->error = strdup(err.msg[0] ? err.msg : "unknown error");
		if (!ent->error)
			abort(); /* cannot even report: out of memory */
	}
}

static void *worker(void *data)
{
	struct worker_ctx *c = data;
	struct kp_decoders *dec = kp_decoders_new(); /* NULL (no memory): one-shot decoding */

	for (;;) {
		size_t i = atomic_fetch_add(&c->next, 1);
		size_t done;

		if (i >= c->end)
			break;
		read_one(&c->set->entries[i], &c->opts->open, dec);
		if (c->set->entries[i].error)
			atomic_fetch_add(&c->failed, 1);
		done = atomic_fetch_add(&c->done, 1) + 1;
		if (c->opts->progress && pthread_mutex_trylock(&c->progress_lock) == 0) {
			c->opts->progress(done, c->set->n, c->opts->progress_data);
			pthread_mutex_unlock(&c->progress_lock);
		}
	}
	kp_decoders_free(dec);
	return NULL;
}

size_t kp_set_read(struct kp_module_set *set, const struct kp_read_opts *opts)
{
	return kp_set_read_range(set, 0, set->n, opts);
}

size_t kp_set_read_range(struct kp_module_set *set, size_t from, size_t to,
			 const struct kp_read_opts *opts)
{
	struct worker_ctx c = { .set = set, .opts = opts, .end = to < set->n ? to : set->n };
	unsigned jobs = opts->jobs;
	pthread_t *threads;
	size_t started = 0;

	if (!jobs) {
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

		jobs = ncpu > 0 ? (unsigned)ncpu : 1;
	}
	if (from > c.end)
		from = c.end;
	if (jobs > c.end - from)
		jobs = c.end > from ? (unsigned)(c.end - from) : 1;
	atomic_init(&c.next, from);
	atomic_init(&c.done, from);
	atomic_init(&c.failed, 0);
	pthread_mutex_init(&c.progress_lock, NULL);
	threads = kp_calloc(jobs, sizeof(*threads));
	for (unsigned i = 1; threads && i < jobs; i++)
		if (pthread_create(&threads[started], NULL, worker, &c) == 0)
			started++;
	worker(&c); /* the calling thread works too */
	for (size_t i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	free(threads);
	pthread_mutex_destroy(&c.progress_lock);
	if (opts->progress && c.end == set->n)
		opts->progress(set->n, set->n, opts->progress_data);
	return atomic_load(&c.failed);
}

void kp_set_free(struct kp_module_set *set)
{
	for (size_t i = 0; i < set->n; i++) {
		free(set->entries[i].path);
		free(set->entries[i].error);
		kp_module_free(set->entries[i].mod);
	}
	free(set->entries);
	memset(set, 0, sizeof(*set));
}
