// SPDX-License-Identifier: GPL-2.0-or-later
/* kopolicy: argument parsing shared by all commands, and dispatch. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache/run-cache.h"
#include "cache/btf-memo.h"
#include "cache/index-memo.h"
#include "cache/kmod-memo.h"
#include "cache/sig-memo.h"
#include "cache/trusted-dir.h"
#include "cli.h"
#include "cache/base-cache.h"
#include "cache/facts-cache.h"

static const struct {
	const char *name;
	int (*run)(struct kp_cli *cli, int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "check", cmd_check,
	  "predict loads, taints and symbol_get() results under the loader rules" },
	{ "explain", cmd_explain, "show why one module loads, fails or is proprietary" },
	{ "graph", cmd_graph,
	  "dependency graph: providers, export classes, cycles (text, json, dot)" },
	{ "hook", cmd_hook, "judge a modprobe load against the running kernel (modprobe.d hook)" },
	{ "info", cmd_info, "show what modules contain: modinfo, exports, imports, versions" },
	{ "cache", cmd_cache, "show, prune or clear the cache of module facts" },
};

void kp_cli_error(const char *path, const char *fmt, ...)
{
	int saved = errno; /* for a %m in @fmt: writing the prefix may change errno */
	va_list ap;

	/* One line whatever the path and message hold (kp_escape_write()). */
	fputs("kopolicy: ", stderr);
	if (path)
		kp_escaped_fprintf(stderr, "%s: ", path);
	errno = saved;
	va_start(ap, fmt);
	kp_escaped_vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int kp_cli_bad_option(const char *cmd, const char *optstring, char **argv)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "";
	bool is_long = arg && !strncmp(arg, "--", 2);
	char prefix[64] = "";

	if (cmd)
		snprintf(prefix, sizeof(prefix), "%s: ", cmd);
	if (is_long && optopt == 0)
		kp_cli_error(NULL, "%sunrecognized option '%s'", prefix, arg);
	else if (is_long)
		kp_cli_error(NULL, "%soption '%.*s' requires an argument", prefix,
			     (int)strcspn(arg, "="), arg);
	else if (optopt > 0 && optopt < 128 && strchr(optstring, optopt))
		kp_cli_error(NULL, "%soption requires an argument -- '%c'", prefix, optopt);
	else if (optopt > 32 && optopt < 127)
		kp_cli_error(NULL, "%sinvalid option -- '%c'", prefix, optopt);
	else
		kp_cli_error(NULL, "%sinvalid option '%s'", prefix, arg);
	fprintf(stderr, "Try 'kopolicy %s%s--help' for more information.\n", cmd ? cmd : "",
		cmd ? " " : "");
	return KP_EXIT_ERROR;
}

int kp_cli_parse_size(const char *s, size_t *out)
{
	const unsigned long long max = (unsigned long long)64 << 30; /* 64G: far above any module */
	unsigned long long v;
	unsigned shift = 0;
	char *end;

	/* digits only: strtoull() would take "-1" as the largest value */
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'G':
	case 'g':
		shift += 10;
		/* fall through */
	case 'M':
	case 'm':
		shift += 10;
		/* fall through */
	case 'K':
	case 'k':
		shift += 10;
		end++;
		break;
	case '\0':
		break;
	default:
		return -1;
	}
	if (*end || v == 0 || v > max >> shift || (v << shift) > SIZE_MAX)
		return -1;
	*out = (size_t)(v << shift);
	return 0;
}

/* A progress line on stderr: only on a terminal that can take "\r\033[K" (not TERM=dumb). */
static bool progress_wanted(void)
{
	const char *term = getenv("TERM");

	return isatty(STDERR_FILENO) && term && *term && strcmp(term, "dumb");
}

void kp_cli_progress(size_t done, size_t total, void *data)
{
	static const char *const clear = "\r\033[K";
	FILE *f = data ? data : stderr; /* the terminal, not the result cache's copy */

	if (done >= total)
		fputs(clear, f);
	else
		fprintf(f, "%sreading modules: %zu/%zu", clear, done, total);
	fflush(f);
}

/*
 * The cache root @root (the directory holding facts-vN/ and runs-vN/) passes the trust test
 * (lib/cache/trusted-dir.h), or does not exist yet (the caches make it under the same test,
 * or go without). Else one line says why it is not used, once, and the run goes on without
 * the cache: as root with a user's KOPOLICY_CACHE_DIR (sudo -E), a directory that user can
 * write is neither read nor written, and root's own cache is not substituted for it (the
 * environment named this one on purpose). A user's HOME or XDG_CACHE_HOME does not get here:
 * root's own cache is used instead (kp_facts_cache_dir_own(), said under KOPOLICY_CACHE_STATS).
 */
static bool cache_usable(struct kp_cli_cache *cc, const char *root)
{
	struct kp_err err = { 0 };
	int fd;

	if (*cc->refused && !strcmp(cc->refused, root))
		return false;
	/* walked once a run: the caches walk it again as they open it (the result cache and the
	 * facts cache share one root) */
	if (*cc->usable && !strcmp(cc->usable, root))
		return true;
	fd = kp_trusted_dir_open(root, false, &err);
	if (fd >= 0)
		close(fd);
	if (fd >= 0 || kp_err_errnum(&err) != EPERM) {
		snprintf(cc->usable, sizeof(cc->usable), "%s", root);
		return true;
	}
	kp_cli_error(NULL, "cache directory %s not used: %s; running without the cache", root,
		     err.msg);
	snprintf(cc->refused, sizeof(cc->refused), "%s", root);
	return false;
}

/* The cache root of the facts directory @dir (ROOT/facts-vN) into @root; 0 or -1. */
static int cache_root(const char *dir, char *root, size_t len)
{
	const char *slash = strrchr(dir, '/');
	int n;

	if (!slash || slash == dir)
		return -1;
	n = snprintf(root, len, "%.*s", (int)(slash - dir), dir);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/*
 * The user's facts directory (kp_facts_cache_dir_own()) into @dir, picked on the first call
 * and kept in @cc for the result cache and the facts and base caches: 0, or not 0 (none).
 */
static int user_dir(struct kp_cli_cache *cc, char dir[4096])
{
	if (!cc->user_picked) {
		cc->user_r = kp_facts_cache_dir_own(cc->user_dir, sizeof(cc->user_dir), cc->moved,
						    sizeof(cc->moved));
		cc->user_picked = true;
	}
	if (cc->user_r == 0)
		memcpy(dir, cc->user_dir, sizeof(cc->user_dir));
	return cc->user_r;
}

/*
 * The result cache for this command, or NULL: under the user's cache directory (the one
 * holding facts-vN/), not for --no-cache or KOPOLICY_CACHE=off, nor when the trust test
 * refuses that directory.
 */
static struct kp_run_cache *run_cache(const struct kp_cli *cli, const char *cmd, int argc,
				      char **argv, char *why, size_t wlen)
{
	char dir[4096], root[4096];

	why[0] = '\0';
	/* wanted first: a command without it (the hook) neither walks nor reports the directory */
	if (cli->no_cache || !kp_run_cache_wanted(cmd, argc, argv) ||
	    user_dir(cli->cache, dir) != 0 || cache_root(dir, root, sizeof(root)) < 0 ||
	    !cache_usable(cli->cache, root))
		return NULL;
	return kp_run_cache_new(root, cmd, argc, argv, why, wlen);
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: kopolicy [OPTIONS] COMMAND [ARGS...]\n"
		   "Predict what the Linux module loader will do with compiled kernel modules.\n"
		   "\n"
		   "Commands:\n");
	for (size_t i = 0; i < KP_ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n"
		   "Options (before or after the command):\n"
		   "  -j, --jobs N        read, resolve and format with N threads (default: one\n"
		   "                      per CPU); before the command, also the threads that\n"
		   "                      re-check a stored result's inputs\n"
		   "      --max-size SIZE refuse modules larger than SIZE once decompressed\n"
		   "                      (default 512M; K, M, G suffixes); also what all\n"
		   "                      reading threads together hold decompressed\n"
		   "      --no-cache      read every module file, without the facts cache\n"
		   "                      (see kopolicy cache --help)\n"
		   "  -h, --help          show this help (kopolicy COMMAND --help for a command)\n"
		   "  -V, --version       show the version\n"
		   "\n"
		   "Exit status: 0 success, 1 findings at or above --fail-on (check), 2 usage or\n"
		   "input errors (any file that could not be read). See kopolicy(1).\n");
}

/*
 * The facts directory (@dir, ROOT/facts-vN) and the cache root (@root) both caches use: the
 * system's (/var/cache/kopolicy) for the hook when root may create it or it can be read,
 * else the user's (the effective user's own when the environment's is another user's:
 * kp_facts_cache_dir_own()). 0, or -1 (off, none, refused by the trust test).
 */
static int pick_root(struct kp_cli_cache *cc, char dir[4096], char root[4096])
{
	int r = kp_facts_cache_dir(KP_CACHE_SYSTEM, dir, 4096);

	if (r == 0 && !(cc->system && (geteuid() == 0 || access(dir, R_OK | X_OK) == 0)))
		r = user_dir(cc, dir);
	if (r != 0 || cache_root(dir, root, 4096) < 0 || !cache_usable(cc, root))
		return -1;
	return 0;
}

struct kp_facts_cache *kp_cli_facts_cache(const struct kp_cli *cli)
{
	struct kp_cli_cache *cc = cli->cache;
	char dir[4096], root[4096];

	if (!cc || cli->no_cache)
		return NULL;
	if (cc->tried)
		return cc->cache;
	cc->tried = true;
	if (pick_root(cc, dir, root) == 0)
		cc->cache = kp_facts_cache_new(dir);
	return cc->cache;
}

struct kp_base_cache *kp_cli_base_cache(const struct kp_cli *cli)
{
	struct kp_cli_cache *cc = cli->cache;
	const char *off = getenv("KOPOLICY_BASE_CACHE");
	char dir[4096], root[4096];

	if (!cc || cli->no_cache)
		return NULL;
	if (off && (!strcmp(off, "off") || !strcmp(off, "0") || !strcmp(off, "no")))
		return NULL;
	if (cc->base_tried)
		return cc->base;
	cc->base_tried = true;
	if (pick_root(cc, dir, root) == 0)
		cc->base = kp_base_cache_new(root);
	return cc->base;
}

/* The edit distance of @a and @b (insertions, deletions, substitutions), at most 32. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strnlen(a, 32), lb = strnlen(b, 32), row[33];

	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/* "did you mean" for a mistyped command: the nearest within two edits, or a unique prefix. */
static void suggest_command(const char *typed)
{
	const char *best = NULL;
	size_t best_d = 3, nprefix = 0;

	for (size_t i = 0; i < KP_ARRAY_SIZE(commands); i++) {
		size_t d = edit_distance(typed, commands[i].name);

		if (*typed && !strncmp(commands[i].name, typed, strlen(typed)))
			nprefix++, d = d < 2 ? d : 1;
		if (d < best_d) {
			best_d = d;
			best = commands[i].name;
		}
	}
	if (best && nprefix <= 1)
		fprintf(stderr, "Did you mean 'kopolicy %s'?\n", best);
}

int kp_cli_common_option(struct kp_cli *cli, int c, const char *arg)
{
	switch (c) {
	case KP_OPT_NO_CACHE:
		cli->no_cache = true;
		return 1;
	case 'j': {
		char *end;
		long v = strtol(arg, &end, 10);

		if (*end || v < 1 || v > 1024) {
			kp_cli_error(NULL, "--jobs takes a number from 1 to 1024");
			exit(KP_EXIT_ERROR);
		}
		cli->jobs = (unsigned)v;
		return 1;
	}
	case 'S':
		if (kp_cli_parse_size(arg, &cli->max_size) < 0) {
			kp_cli_error(NULL, "--max-size takes a size from 1 to 64G, such as 512M");
			exit(KP_EXIT_ERROR);
		}
		return 1;
	default:
		return 0;
	}
}

/* KOPOLICY_CACHE_STATS: how the signatures were checked (cache/sig-memo.h). */
static void sig_stats(struct kp_facts_cache *c)
{
	struct kp_sig_memo_counts n;

	kp_sig_memo_counts(kp_facts_cache_sig_memo(c), &n);
	if (n.hits || n.verified || n.images)
		fprintf(stderr,
			"kopolicy: signatures: %llu verified, %llu from the cache, %llu to store; "
			"%llu kernel image(s) from the cache\n",
			(unsigned long long)n.verified, (unsigned long long)n.hits,
			(unsigned long long)n.stored, (unsigned long long)n.images);
}

/* KOPOLICY_CACHE_STATS: how the modules' BTF was judged (cache/btf-memo.h). */
static void btf_stats(struct kp_facts_cache *c)
{
	struct kp_btf_memo_counts n;

	kp_facts_cache_btf_counts(c, &n);
	if (n.in_place && (n.hits || n.checked))
		fprintf(stderr,
			"kopolicy: module BTF: %llu checked, %llu from the cache"
			" (%llu searched in the memo file, not loaded)\n",
			(unsigned long long)n.checked, (unsigned long long)n.hits,
			(unsigned long long)n.searched);
	else if (n.hits || n.checked)
		fprintf(stderr, "kopolicy: module BTF: %llu checked, %llu from the cache\n",
			(unsigned long long)n.checked, (unsigned long long)n.hits);
}

/* KOPOLICY_CACHE_STATS: how the depmod indexes were checked (cache/index-memo.h). */
static void index_stats(struct kp_facts_cache *c)
{
	struct kp_index_memo_counts n;

	kp_facts_cache_index_counts(c, &n);
	if (n.hits || n.checked)
		fprintf(stderr,
			"kopolicy: depmod indexes: %llu checked (%llu to the cache), %llu from "
			"the cache\n",
			(unsigned long long)n.checked, (unsigned long long)n.stored,
			(unsigned long long)n.hits);
}

/* KOPOLICY_CACHE_STATS: how libkmod's answers were had (cache/kmod-memo.h). */
static void kmod_stats(struct kp_facts_cache *c)
{
	struct kp_kmod_memo_counts n;

	kp_facts_cache_kmod_counts(c, &n);
	if (n.replayed || n.asked || n.opened)
		fprintf(stderr,
			"kopolicy: libkmod: %llu answer(s) from the cache, %llu asked, opened %llu "
			"time(s); %llu stored, %llu refused\n",
			(unsigned long long)n.replayed, (unsigned long long)n.asked,
			(unsigned long long)n.opened, (unsigned long long)n.stored,
			(unsigned long long)n.refused);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { { "jobs", required_argument, NULL, 'j' },
					      { "max-size", required_argument, NULL, 'S' },
					      { "no-cache", no_argument, NULL, KP_OPT_NO_CACHE },
					      { "help", no_argument, NULL, 'h' },
					      { "version", no_argument, NULL, 'V' },
					      {} };
	struct kp_cli_cache cache = { 0 };
	struct kp_run_cache *runs;
	bool stats = getenv("KOPOLICY_CACHE_STATS") != NULL;
	char note[320], off[320], splice[1536], carry[256];
	int all_argc = argc - 1;
	char **all_argv = argv + 1;
	struct kp_cli cli = { .prog = "kopolicy", .progress = progress_wanted(), .cache = &cache };

	/*
	 * a recompute measures the splice beside it only for a run asking for the cache's
	 * counts; KOPOLICY_SPLICE=measure (read only then) recomputes in place of a splice
	 */
	const char *splice_env = stats ? getenv("KOPOLICY_SPLICE") : NULL;

	cli.measure_splice = stats;
	cli.use_splice = !(splice_env && !strcmp(splice_env, "measure"));
	int c, rc;

	/*
	 * Decompressed modules are large, short-lived buffers: keep them in their own
	 * mappings so they go back to the system when freed (a fixed threshold also stops
	 * glibc from raising it after the first large free), and keep arenas few. A run is
	 * short: the heap's free top is kept for its later allocations, not given back with
	 * brk() to be faulted in again (a used splice on amd64-6.1: 110 -> 97 brk(), 110 fewer
	 * page faults). A larger top pad was measured and not taken: calloc() clears what the
	 * padded top serves (a used splice ran 8.5 M more instructions for 700 fewer faults).
	 */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	mallopt(M_ARENA_MAX, 4);
	/*
	 * OpenSSL is initialised without openssl.cnf nor $OPENSSL_CONF when libcrypto is loaded,
	 * on first use (lib/dl/lazy-crypto.c).
	 */

	/* Our own messages for bad options (kp_cli_bad_option()), not getopt's. */
	opterr = 0;
	/* '+': stop at the command name; the command parses the rest. */
	while ((c = getopt_long(argc, argv, "+j:hV", opts, NULL)) != -1) {
		if (kp_cli_common_option(&cli, c, optarg))
			continue;
		switch (c) {
		case 'h':
			usage(stdout);
			return KP_EXIT_OK;
		case 'V':
			printf("kopolicy %s\n", PACKAGE_VERSION);
			return KP_EXIT_OK;
		default:
			return kp_cli_bad_option(NULL, "+j:hV", argv);
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return KP_EXIT_ERROR;
	}
	for (size_t i = 0; i < KP_ARRAY_SIZE(commands); i++) {
		if (strcmp(argv[optind], commands[i].name))
			continue;
		argc -= optind;
		argv += optind;
		optind = 0; /* reset getopt for the command */
		cache.system = !strcmp(commands[i].name, "hook");
		/* every input unchanged since a run with the same key: its result, replayed */
		runs = run_cache(&cli, commands[i].name, all_argc, all_argv, off, sizeof(off));
		/* -j before the command sets the replay's threads; after it, the command's */
		if (runs && kp_run_cache_replay(runs, cli.jobs, &rc)) {
			kp_run_cache_finish(runs, -1, note, sizeof(note));
			if (stats)
				fprintf(stderr, "kopolicy: result cache: %s\n", note);
			if (stats && *cache.moved)
				fprintf(stderr, "kopolicy: cache: %s\n", cache.moved);
			return rc;
		}
		cli.progress_f = stderr;
		if (runs && kp_run_cache_record(runs) < 0) {
			kp_run_cache_finish(runs, -1, note, sizeof(note));
			runs = NULL;
		}
		cli.runs = runs;
		rc = commands[i].run(&cli, argc, argv);
		cli.runs = NULL;
		/* the content keys of the modules still being stored go into the manifest too */
		if (runs)
			kp_facts_cache_wait_stored(cache.cache);
		snprintf(splice, sizeof(splice), "%s", kp_run_cache_command_note(runs));
		/* stdout and stderr as they were: the lines below are not part of the result */
		kp_run_cache_finish_carried(runs, rc, note, sizeof(note), carry, sizeof(carry));
		if (stats && *note)
			fprintf(stderr, "kopolicy: result cache: %s\n", note);
		if (stats && *splice)
			fprintf(stderr, "kopolicy: result cache: %s\n", splice);
		if (stats && *carry)
			fprintf(stderr, "kopolicy: result cache: %s\n", carry);
		if (stats && *off)
			fprintf(stderr, "kopolicy: result cache: off: %s\n", off);
		if (stats && *cache.moved)
			fprintf(stderr, "kopolicy: cache: %s\n", cache.moved);
		if (cache.cache && stats) {
			struct kp_cache_counts n;

			kp_facts_cache_counts(cache.cache, &n);
			fprintf(stderr,
				"kopolicy: cache: %llu hits (%llu by stat), %llu misses, %llu "
				"stored, "
				"%llu refused\n",
				(unsigned long long)n.hits, (unsigned long long)n.stat_hits,
				(unsigned long long)n.misses, (unsigned long long)n.stored,
				(unsigned long long)n.rejected);
			sig_stats(cache.cache);
			btf_stats(cache.cache);
			index_stats(cache.cache);
			kmod_stats(cache.cache);
		}
		if (cache.base && stats) {
			struct kp_base_counts n;

			kp_base_cache_counts(cache.base, &n);
			fprintf(stderr,
				"kopolicy: base cache: %llu hits, %llu misses, %llu stored, %llu "
				"refused\n",
				(unsigned long long)n.hits, (unsigned long long)n.misses,
				(unsigned long long)n.stored, (unsigned long long)n.rejected);
		}
		kp_facts_cache_free(cache.cache);
		kp_base_cache_free(cache.base);
		return rc;
	}
	kp_cli_error(NULL, "unknown command '%s'", argv[optind]);
	suggest_command(argv[optind]);
	fputs("Try 'kopolicy --help' for more information.\n", stderr);
	return KP_EXIT_ERROR;
}
