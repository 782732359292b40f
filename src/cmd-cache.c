// SPDX-License-Identifier: GPL-2.0-or-later
/* kopolicy cache: show, prune or clear the facts cache (lib/read/facts-cache.h). */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "read/facts-cache.h"

static void cache_usage(FILE *f)
{
	fprintf(f,
		"Usage: kopolicy cache [show|prune|clear] [--system] [--max-size SIZE]\n"
		"The cache of module facts: what reading each module file produced, found by the\n"
		"file's state (and a compressed file's SHA-256), so unchanged modules are not\n"
		"decompressed or parsed again. One pack file per run that read modules.\n"
		"\n"
		"  show             the directory, its entries, packs and disk use (the default)\n"
		"  prune            remove the least recently used packs down to SIZE\n"
		"  clear            remove every pack, and the facts-v1 ... directories older\n"
		"                   releases left (a format never read again)\n"
		"      --system     the hook's cache, /var/cache/kopolicy, not the user's\n"
		"      --max-size SIZE  prune down to SIZE (K, M, G suffixes; default\n"
		"                   $KOPOLICY_CACHE_MAX_SIZE, else 256M)\n"
		"  -h, --help       show this help\n"
		"\n"
		"Directory: $KOPOLICY_CACHE_DIR, else $XDG_CACHE_HOME/kopolicy, else\n"
		"~/.cache/kopolicy (facts-v%d below it). --no-cache or KOPOLICY_CACHE=off: every\n"
		"command reads modules without it.\n",
		KP_FACTS_FORMAT);
}

static void print_usage(const char *dir, const struct kp_cache_usage *u)
{
	char sz[32];

	printf("directory: %s\n", dir);
	printf("entries: %" PRIu64 "\n", u->entries);
	printf("packs: %" PRIu64 "\n", u->packs);
	printf("disk use: %" PRIu64 " bytes (%s)\n", u->bytes,
	       kp_format_size((size_t)u->bytes, sz, sizeof(sz)));
}

int cmd_cache(struct kp_cli *cli, int argc, char **argv)
{
	static const struct option opts[] = { { "system", no_argument, NULL, 's' },
					      { "max-size", required_argument, NULL, 'S' },
					      { "help", no_argument, NULL, 'h' },
					      {} };
	uint64_t max = kp_facts_cache_max_size();
	enum kp_cache_scope scope = KP_CACHE_USER;
	struct kp_cache_usage u;
	struct kp_err err = { 0 };
	const char *action = "show";
	char dir[4096];
	int c, r;

	(void)cli;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			scope = KP_CACHE_SYSTEM;
			break;
		case 'S': {
			size_t v;

			if (kp_cli_parse_size(optarg, &v) < 0) {
				kp_cli_error(NULL, "cache: --max-size takes a size such as 256M");
				return KP_EXIT_ERROR;
			}
			max = v;
			break;
		}
		case 'h':
			cache_usage(stdout);
			return KP_EXIT_OK;
		default:
			cache_usage(stderr);
			return KP_EXIT_ERROR;
		}
	}
	if (optind < argc)
		action = argv[optind++];
	if (optind < argc ||
	    (strcmp(action, "show") && strcmp(action, "prune") && strcmp(action, "clear"))) {
		kp_cli_error(NULL, "cache: unknown action '%s' (show, prune or clear)", action);
		return KP_EXIT_ERROR;
	}
	/* KOPOLICY_CACHE=off turns reading through the cache off, not its management */
	unsetenv("KOPOLICY_CACHE");
	if (kp_facts_cache_dir(scope, dir, sizeof(dir)) != 0) {
		kp_cli_error(NULL, "cache: no cache directory (set HOME or KOPOLICY_CACHE_DIR)");
		return KP_EXIT_ERROR;
	}
	if (!strcmp(action, "show"))
		r = kp_facts_cache_usage(dir, &u, &err);
	else if (!strcmp(action, "prune"))
		r = kp_facts_cache_prune(dir, max, &u, &err);
	else
		r = kp_facts_cache_clear(dir, &u, &err);
	if (r < 0) {
		kp_cli_error(NULL, "cache: %s", err.msg);
		return KP_EXIT_ERROR;
	}
	if (!strcmp(action, "clear")) {
		char names[256];
		uint64_t old;

		kp_facts_cache_clear_obsolete(dir, names, sizeof(names), &old);
		if (*names)
			printf("removed obsolete: %s (%" PRIu64 " files)\n", names, old);
	}
	if (strcmp(action, "show"))
		printf("removed: %" PRIu64 " files\n", u.removed);
	print_usage(dir, &u);
	return KP_EXIT_OK;
}
