// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Reading the context's modules (context.h): files and directories added to the set, the
 * entries read a range at a time with their signatures verified on every thread, the facts
 * cache's misses stored after the read phase, each failure said.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "file/inputs.h"
#include "cache/facts-cache.h"
#include "util/parallel.h"
#include "context.h"
#include "context-image.h"
#include "context-internal.h"

ssize_t kp_ctx_add_files(struct kp_ctx *c, char **paths, int npaths, struct kp_err *err)
{
	size_t empty = 0;

	for (int i = 0; i < npaths; i++) {
		size_t before = c->set.n;
		struct stat st;

		if (kp_set_add_path(&c->set, paths[i]) < 0) {
			kp_err_set(err, "out of memory");
			return kp_err_prefix(err, paths[i]);
		}
		if (c->set.n == before && kp_in_stat(paths[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			char **grown = realloc(c->empty_dirs,
					       (c->nempty_dirs + 1) * sizeof(*c->empty_dirs));

			if (grown)
				c->empty_dirs = grown;
			if (!grown || !(grown[c->nempty_dirs] = strdup(paths[i]))) {
				kp_err_set(err, "out of memory");
				return kp_err_prefix(err, paths[i]);
			}
			c->nempty_dirs++;
			kp_ctx_say(c, paths[i], KP_CTX_EMPTY_DIR);
			empty++;
		}
	}
	kp_ctx_say_walk_warnings(c); /* said before the read's errors, as the walk met them */
	return (ssize_t)empty;
}

struct preverify_job {
	const struct kp_keyring *keys;
	struct kp_module_set *set;
	size_t from;
};

/* A signature OpenSSL failed to verify: the module's error, as a file that cannot be read. */
static void preverify_slice(void *arg, size_t begin, size_t end)
{
	const struct preverify_job *j = arg;

	for (size_t i = begin; i < end; i++) {
		struct kp_set_entry *e = &j->set->entries[j->from + i];
		struct kp_err err = { 0 };

		if (!e->mod || kp_keyring_preverify(j->keys, &e->mod->sig, &err) == 0)
			continue;
		e->error = strdup(err.msg);
		if (!e->error)
			abort(); /* cannot even report: out of memory (as kp_set_read()) */
		kp_set_drop_module(j->set, e);
	}
}

/*
 * The signatures of set entries [@from, @to) verified on every thread (ECDSA P-384: ~1 ms
 * each), so that the single-threaded simulation finds each verdict in the memo.
 */
static bool preverify(struct kp_ctx *c, size_t from, size_t to)
{
	if (kp_keyring_empty(&c->keys) || !c->keys.memo || to <= from)
		return false;
	kp_parallel_for(to - from, c->env.jobs, 16, preverify_slice,
			&(struct preverify_job){ &c->keys, &c->set, from });
	return true;
}

/* Reads set entries [@from, @to); their misses wait in the facts cache to be stored. */
size_t kp_ctx_read_entries(struct kp_ctx *c, size_t from, size_t to)
{
	size_t failed;
	struct kp_err image_err = { 0 };
	/* The modules share the base's symbol names: it is freed after them. */
	struct kp_name_pool names = { 0 };
	struct kp_read_opts ro = {
		.open = { .max_size = c->env.max_size,
			  .full_modinfo = c->env.full_modinfo,
			  /* an image being read may hold keys: hashed as if it did */
			  .sig_digest = (kp_keyring_empty(&c->keys) && !kp_ctx_image_pending(c)
						 ? 0
						 : KP_SIG_DIGEST) |
					(c->keys.nblacklist ? KP_SIG_FILE_SHA256 : 0),
			  .keep_btf = c->facts.vmlinux_btf != NULL,
			  .btf_judge = kp_ctx_btf_judge(c),
			  .ima_xattr = kp_ima_policy_appraises_modules(&c->facts.ima) },
		.jobs = c->env.jobs,
		.progress = c->env.progress,
		.progress_data = c->env.progress_data,
	};

	if (kp_ctx_base(c)) {
		names = kp_base_name_pool(kp_ctx_base(c));
		ro.open.names = &names;
	}
	if (c->env.cache)
		ro.cache = c->env.cache(c->env.cache_data);
	/* the misses are stored after the read phase, beside what follows it (facts-defer.c) */
	ro.open.defer_store = true;
	failed = kp_set_read_range(&c->set, from, to, &ro);
	/* the image's keys now, before the first verification; its error is the run's */
	if (kp_ctx_image_settle(c, &image_err) < 0)
		return failed;
	if (preverify(c, from, to)) {
		failed = 0; /* its errors too */
		for (size_t i = from; i < to && i < c->set.n; i++)
			failed += c->set.entries[i].error != NULL;
	}
	return failed;
}

/* The facts cache's thread stores the misses now, beside the caller's single-threaded work. */
void kp_ctx_store_pending(struct kp_ctx *c)
{
	if (c->env.cache)
		kp_facts_cache_store_pending(c->env.cache(c->env.cache_data));
}

size_t kp_ctx_read_range(struct kp_ctx *c, size_t from, size_t to)
{
	size_t failed = kp_ctx_read_entries(c, from, to);

	kp_ctx_store_pending(c);
	return failed;
}

/*
 * Adds @paths to the set, reads every entry, says each failure. Returns how many failed
 * (directories without modules included), or -1 with @err.
 */
ssize_t kp_ctx_read_modules(struct kp_ctx *c, char **paths, int npaths, struct kp_err *err)
{
	ssize_t failed = kp_ctx_add_files(c, paths, npaths, err);

	if (failed < 0)
		return -1;
	failed += (ssize_t)kp_ctx_read_entries(c, 0, c->set.n);
	if (kp_ctx_image_settle(c, err) < 0)
		return -1; /* the image failed: the run stops as before any module was read */
	for (size_t i = 0; i < c->set.n; i++)
		if (c->set.entries[i].error)
			kp_ctx_say(c, c->set.entries[i].path, c->set.entries[i].error);
	return failed;
}
