// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * module-set-read.c: the modules of a set read, on the worker pool (files largest first, the
 * decompressed bytes within one budget), through the facts cache or directly; a module freed
 * after what waits for the facts cache is settled. The set's entries: module-set.c.
 */
#include "module-set.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cache/facts-cache.h"
#include "file/inputs.h"
#include "file/mem-budget.h"
#include "file/rootfs.h"
#include "util/parallel.h"

/*
 * Reading runs on the worker pool (kp_pool_run()): files largest first, while the set's facts
 * are still small, and never two huge modules (amdgpu, i915) decompressed at once. A job's
 * cost is the file's memory while read, estimated below.
 */
struct read_ctx {
	struct kp_module_set *set;
	const struct kp_read_opts *opts;
	struct kp_job *q;
	/*
	 * Each file's stat() (index - from), taken when the facts cache looks modules up by
	 * their state (recorded, kp_in_stat()) and handed to it: one stat() per module. NULL:
	 * the cache stat()s itself. st_mode 0: the stat() failed.
	 */
	struct stat *st;
	size_t from; /* progress counts the entries before the range as done */
	/* the decompressed bytes all threads together hold: --max-size, whatever --jobs */
	struct kp_mem_budget budget;
};

/*
 * A file's memory while read: the whole image once decompressed (~8x for xz, zstd, gzip).
 * @keep NULL: the stat() is not recorded (file/inputs.h): the size only orders the reading,
 * no result depends on it, and the reader records the file's state itself, next to this
 * one. Else the facts cache's stat(), recorded and kept in *@keep (zeroed when it fails).
 */
static size_t read_cost(const struct kp_root_dir *root, const char *path, struct stat *keep)
{
	static const char *const packed[] = { ".xz", ".zst", ".gz" };
	size_t len = strlen(path);
	struct stat st;

	if (keep) {
		if (kp_stat_in(root, path, keep) < 0) {
			memset(keep, 0, sizeof(*keep));
			return 0;
		}
		st = *keep;
	} else if (stat(path, &st) < 0) {
		return 0;
	}
	if (st.st_size <= 0)
		return 0;
	for (size_t i = 0; i < KP_ARRAY_SIZE(packed); i++) {
		size_t sl = strlen(packed[i]);

		if (len > sl && !strcmp(path + len - sl, packed[i]))
			return (uint64_t)st.st_size > SIZE_MAX / 8 ? SIZE_MAX
								   : (size_t)st.st_size * 8;
	}
	return (uint64_t)st.st_size > SIZE_MAX ? SIZE_MAX : (size_t)st.st_size;
}

static void cost_slice(void *ctx, size_t begin, size_t end)
{
	struct read_ctx *c = ctx;

	for (size_t k = begin; k < end; k++)
		c->q[k].cost = read_cost(c->set->root ? &c->set->rootdir : NULL,
					 kp_set_entry_file(&c->set->entries[c->q[k].index]),
					 c->st ? &c->st[c->q[k].index - c->from] : NULL);
}

/* kp_set_open_module() with the file's stat() already made (@st, or NULL). */
static int open_module_stat(struct kp_facts_cache *cache, const char *path, const struct stat *st,
			    const struct kp_open_opts *o, struct kp_decoders *dec,
			    struct kp_module **out, struct kp_err *err)
{
	int r;

	if (!cache)
		return kp_module_open_with(path, o, dec, out, err);
	r = kp_facts_cache_open_stat(cache, path, st, o, dec, out, err);
	if (r < 0 || !o->keep_btf || !o->btf_judge)
		return r;
	/* cached facts hold the BTF's digest: its verdict from the judge's memo, or a re-read */
	r = kp_module_judge_btf(*out, o->btf_judge);
	if (r == 0)
		return 0;
	kp_set_free_module(cache, *out);
	*out = NULL;
	if (r < 0)
		return kp_err_set(err, "out of memory");
	return kp_module_open_with(path, o, dec, out, err);
}

int kp_set_open_module(struct kp_facts_cache *cache, const char *path, const struct kp_open_opts *o,
		       struct kp_decoders *dec, struct kp_module **out, struct kp_err *err)
{
	return open_module_stat(cache, path, NULL, o, dec, out, err);
}

void kp_set_free_module(struct kp_facts_cache *cache, struct kp_module *m)
{
	if (!m)
		return;
	/* still waiting to be stored into the facts cache: stored now, it reads @m */
	kp_facts_cache_settle(cache, m);
	kp_module_free(m);
}

void kp_set_drop_module(struct kp_module_set *set, struct kp_set_entry *e)
{
	kp_set_free_module(set->cache, e->mod);
	e->mod = NULL;
}

/* @st: the file's recorded stat() for the facts cache (st_mode 0: failed), or NULL. */
static void read_one(struct kp_set_entry *ent, struct kp_facts_cache *cache, const struct stat *st,
		     const struct kp_open_opts *o, struct kp_decoders *dec)
{
	struct kp_err err = { 0 };
	int r;

	if (ent->mod || ent->error)
		return;
	/* through open_module_stat(): a cached module's BTF verdict comes from the judge's memo */
	r = open_module_stat(cache, kp_set_entry_file(ent), st && st->st_mode ? st : NULL, o, dec,
			     &ent->mod, &err);
	if (r < 0) {
		ent->error = strdup(err.msg[0] ? err.msg : "unknown error");
		if (!ent->error)
			abort(); /* cannot even report: out of memory */
	} else if (o->ima_xattr) {
		kp_ima_file_read_in(o->root, kp_set_entry_file(ent), &ent->mod->ima);
	}
}

/* Each thread's decoders, on the read's budget; NULL (no memory): one-shot decoding. */
static void *read_thread_start(void *ctx)
{
	struct read_ctx *c = ctx;
	struct kp_decoders *d = kp_decoders_new();

	kp_decoders_set_budget(d, &c->budget);
	return d;
}

static void read_thread_stop(void *ctx, void *state)
{
	(void)ctx;
	kp_decoders_free(state);
}

static bool read_job(void *ctx, void *state, size_t index)
{
	struct read_ctx *c = ctx;
	struct kp_set_entry *ent = &c->set->entries[index];

	read_one(ent, c->opts->cache, c->st ? &c->st[index - c->from] : NULL, &c->opts->open,
		 state);
	return ent->error != NULL;
}

static void read_progress(void *ctx, size_t done)
{
	struct read_ctx *c = ctx;

	done += c->from;
	if (c->opts->progress && done % 16 == 0) /* a terminal line, not a flood */
		c->opts->progress(done, c->set->n, c->opts->progress_data);
}

size_t kp_set_read(struct kp_module_set *set, const struct kp_read_opts *opts)
{
	return kp_set_read_range(set, 0, set->n, opts);
}

size_t kp_set_read_range(struct kp_module_set *set, size_t from, size_t to,
			 const struct kp_read_opts *opts)
{
	static const struct kp_pool_ops ops = {
		.thread_start = read_thread_start,
		.thread_stop = read_thread_stop,
		.run = read_job,
		.progress = read_progress,
	};
	struct kp_read_opts ro = *opts;
	struct read_ctx c = { .set = set, .opts = &ro };
	size_t end = to < set->n ? to : set->n, n, failed = 0;

	/* module files under the set's root are opened inside it (kp_open_regular_in()) */
	ro.open.root = set->root ? &set->rootdir : NULL;
	opts = &ro;

	if (from > end)
		from = end;
	if (opts->cache)
		set->cache = opts->cache; /* kp_set_release() settles what waits there */
	n = end - from;
	c.from = from;
	c.q = kp_calloc(n ? n : 1, sizeof(*c.q));
	if (!c.q) {
		/* No memory for the queue: read in set order, one thread, no budget. */
		for (size_t i = from; i < end; i++) {
			read_one(&set->entries[i], opts->cache, NULL, &opts->open, NULL);
			failed += set->entries[i].error != NULL;
		}
		return failed;
	}
	for (size_t k = 0; k < n; k++)
		c.q[k].index = from + k;
	/* no memory for the stat()s: the cache takes its own */
	if (n > 1 && opts->cache && kp_facts_cache_wants_state(opts->cache))
		c.st = kp_calloc(n, sizeof(*c.st));
	if (n > 1)
		kp_parallel_for(n, opts->jobs, 256, cost_slice, &c);
	kp_mem_budget_init(&c.budget,
			   opts->open.max_size ? opts->open.max_size : KP_DEFAULT_MAX_SIZE);
	failed = kp_pool_run(c.q, n, opts->jobs, &ops, &c);
	kp_mem_budget_destroy(&c.budget);
	free(c.st);
	free(c.q);
	if (opts->progress && end == set->n)
		opts->progress(set->n, set->n, opts->progress_data);
	return failed;
}
