/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared pieces of the kopolicy commands. */
#ifndef KP_CLI_H
#define KP_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "graph/module-set.h"
#include "util/util.h"

/* Exit status, documented in kopolicy(1) EXIT STATUS. */
enum {
	KP_EXIT_OK = 0,
	KP_EXIT_FINDINGS = 1,
	KP_EXIT_ERROR = 2,
};

struct kp_facts_cache;
struct kp_run_cache;

/* The facts cache of a run, opened on first use (kp_cli_facts_cache()). */
struct kp_cli_cache {
	bool tried;
	bool system; /* the hook: /var/cache/kopolicy when it can be used */
	struct kp_facts_cache *cache;
	bool base_tried;
	struct kp_base_cache *base; /* the base cache, beside the facts cache */
	char refused[4096]; /* a cache directory the trust test refused (said once), or "" */
	char usable[4096];  /* the last one it passed (or that did not exist yet), or "" */
	/* the environment's cache directory replaced by the user's own, and why (stats), or "" */
	char moved[1024];
	/* the user's facts directory, picked once (kp_facts_cache_dir_own(): a trust walk) */
	bool user_picked;
	int user_r; /* its answer: 0, or not 0 (none) */
	char user_dir[4096];
};

struct kp_cli {
	const char *prog;
	unsigned jobs;
	size_t max_size;
	bool progress;	     /* stderr is a terminal */
	FILE *progress_f;    /* where progress goes: stderr as it was before the result cache */
	bool full_modinfo;   /* keep every .modinfo tag (info) */
	bool no_cache;	     /* --no-cache */
	bool measure_splice; /* KOPOLICY_CACHE_STATS: a recompute measures a splice beside it */
	bool use_splice;     /* a one-module change spliced (not KOPOLICY_SPLICE=measure) */
	struct kp_cli_cache *cache;
	struct kp_run_cache *runs; /* the result cache recording this run, or NULL */
};

/* The run's facts cache, or NULL (--no-cache, KOPOLICY_CACHE=off, no directory, no memory). */
struct kp_facts_cache *kp_cli_facts_cache(const struct kp_cli *cli);
/* The run's base cache (cache/base-cache.h) in the same cache root, or NULL as above. */
struct kp_base_cache *kp_cli_base_cache(const struct kp_cli *cli);

void kp_cli_error(const char *path, const char *fmt, ...) kp_printf_fmt(2, 3);
/*
 * After getopt_long() returned '?' (opterr is 0): "kopolicy: [CMD: ]unrecognized option ..."
 * or "... requires an argument", then "Try 'kopolicy [CMD ]--help' for more information."
 * on stderr. @optstring is the one given to getopt_long(). Returns KP_EXIT_ERROR.
 */
int kp_cli_bad_option(const char *cmd, const char *optstring, char **argv);

/* "reading modules: DONE/TOTAL" on stderr (a terminal), cleared at the end. */
void kp_cli_progress(size_t done, size_t total, void *data);

/* Parses a size with an optional K/M/G suffix. */
int kp_cli_parse_size(const char *s, size_t *out);

/* Handles -j/--jobs, --max-size and --no-cache inside any command; 1 if @c was one of them. */
int kp_cli_common_option(struct kp_cli *cli, int c, const char *arg);
#define KP_OPT_NO_CACHE 0x180
#define KP_CLI_COMMON_LONGOPTS                                                                  \
	{ "jobs", required_argument, NULL, 'j' }, { "max-size", required_argument, NULL, 'S' }, \
	{                                                                                       \
		"no-cache", no_argument, NULL, KP_OPT_NO_CACHE                                  \
	}

int cmd_info(struct kp_cli *cli, int argc, char **argv);
int cmd_check(struct kp_cli *cli, int argc, char **argv);
int cmd_graph(struct kp_cli *cli, int argc, char **argv);
int cmd_explain(struct kp_cli *cli, int argc, char **argv);
int cmd_hook(struct kp_cli *cli, int argc, char **argv);
int cmd_cache(struct kp_cli *cli, int argc, char **argv);

#endif
