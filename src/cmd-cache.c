// SPDX-License-Identifier: GPL-2.0-or-later
/* kopolicy cache: show, prune or clear the facts cache (lib/cache/facts-cache.h). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cache/base-cache.h"
#include "cache/run-cache.h"
#include "cache/trusted-dir.h"
#include "cli.h"
#include "cache/facts-cache.h"

static void cache_usage(FILE *f)
{
	fprintf(f,
		"Usage: kopolicy cache [show|prune|clear] [--system] [--max-size SIZE]\n"
		"The cache of module facts: what reading each module file produced, found by the\n"
		"file's state (and a compressed file's SHA-256), so unchanged modules are not\n"
		"decompressed or parsed again. One pack file per run that read modules.\n"
		"The result cache (runs-v%d): the output and exit status of check, graph, info\n"
		"and explain runs with the inputs each read (every file's and directory's state,\n"
		"every path found absent); a run with the same arguments, environment and\n"
		"unchanged inputs replays it.\n"
		"The base cache (base-v1): the kernel's Module.symvers, config and vmlinux BTF\n"
		"index as the hook parsed them, found by each file's state (or SHA-256), used\n"
		"without parsing. Signature verdicts (facts-v%d/sigs): signatures that verified.\n"
		"\n"
		"  show             the directory, its entries, packs and disk use (the default)\n"
		"  prune            remove the least recently used kernel bases down to a\n"
		"                   quarter of SIZE, signature verdicts and packs down to what\n"
		"                   is left of SIZE, and results down to a quarter of SIZE\n"
		"  clear            remove every pack, signature verdict, result and kernel\n"
		"                   base (base-v1), and\n"
		"                   the facts-v1 ...\n"
		"                   directories older releases left (never read again)\n"
		"      --system     the hook's cache, /var/cache/kopolicy, not the user's\n"
		"      --max-size SIZE  prune down to SIZE (K, M, G suffixes; default\n"
		"                   $KOPOLICY_CACHE_MAX_SIZE, else 256M)\n"
		"  -h, --help       show this help\n"
		"\n"
		"Directory: $KOPOLICY_CACHE_DIR, else $XDG_CACHE_HOME/kopolicy, else\n"
		"~/.cache/kopolicy (facts-v%d and runs-v%d below it). --no-cache or\n"
		"KOPOLICY_CACHE=off: every command runs without either; KOPOLICY_RUN_CACHE=off:\n"
		"without the result cache only.\n"
		"A directory that anyone but you or root could write (it, or one above it) is\n"
		"not used: one line says why and the run goes on without the cache; this command\n"
		"refuses it (exit 2). One that HOME or XDG_CACHE_HOME names (sudo -E) is replaced\n"
		"by your own, ~/.cache/kopolicy of your home in the password database (root:\n"
		"/root/.cache/kopolicy): this command says so, other commands under\n"
		"KOPOLICY_CACHE_STATS. prune and clear remove links as links, never following\n"
		"them. See kopolicy(1), CACHE TRUST.\n",
		KP_RUNS_FORMAT, KP_FACTS_FORMAT, KP_FACTS_FORMAT, KP_RUNS_FORMAT);
}

static void print_usage(const char *dir, const struct kp_cache_usage *u,
			const struct kp_run_usage *ru, const struct kp_base_usage *bu)
{
	char sz[32];

	printf("directory: %s\n", dir);
	printf("entries: %" PRIu64 "\n", u->entries);
	printf("packs: %" PRIu64 "\n", u->packs);
	printf("disk use: %" PRIu64 " bytes (%s)\n", u->bytes,
	       kp_format_size((size_t)u->bytes, sz, sizeof(sz)));
	printf("results: %" PRIu64 "\n", ru->entries);
	printf("results disk use: %" PRIu64 " bytes (%s)\n", ru->bytes,
	       kp_format_size((size_t)ru->bytes, sz, sizeof(sz)));
	printf("signature verdicts: %" PRIu64 " (%" PRIu64 " files, %" PRIu64 " kernel image(s))\n",
	       u->sig_verdicts, u->sig_files, u->sig_images);
	printf("signature verdicts disk use: %" PRIu64 " bytes (%s)\n", u->sig_bytes,
	       kp_format_size((size_t)u->sig_bytes, sz, sizeof(sz)));
	/* those files by kind: what each memo beside the facts keeps */
	printf("memo files by kind: verdicts %" PRIu64 ", kernel images %" PRIu64
	       ", image states %" PRIu64 ", module BTF %" PRIu64 ", depmod indexes %" PRIu64
	       ", libkmod answers %" PRIu64 "\n",
	       u->sig_files - u->sig_images - u->sig_states - u->sig_btf - u->sig_indexes -
		       u->sig_kmod,
	       u->sig_images, u->sig_states, u->sig_btf, u->sig_indexes, u->sig_kmod);
	printf("kernel bases: %" PRIu64 "\n", bu->entries);
	printf("kernel bases disk use: %" PRIu64 " bytes (%s)\n", bu->bytes,
	       kp_format_size((size_t)bu->bytes, sz, sizeof(sz)));
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
	struct kp_run_usage ru;
	struct kp_base_usage bu = { 0 };
	uint64_t base_removed = 0;
	struct kp_err err = { 0 };
	const char *action = "show";
	char dir[4096], root[4096], moved[1024] = "", *slash;
	int c, r, fd;

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
	if ((scope == KP_CACHE_USER ? kp_facts_cache_dir_own(dir, sizeof(dir), moved, sizeof(moved))
				    : kp_facts_cache_dir(scope, dir, sizeof(dir))) != 0) {
		kp_cli_error(NULL, "cache: no cache directory (set HOME or KOPOLICY_CACHE_DIR)");
		return KP_EXIT_ERROR;
	}
	/* the results beside the facts: ROOT/facts-vN and ROOT/runs-vN */
	snprintf(root, sizeof(root), "%s", dir);
	slash = strrchr(root, '/');
	if (slash && slash != root)
		*slash = '\0';
	/* a directory the trust test refuses is neither shown nor pruned nor cleared */
	fd = kp_trusted_dir_open(root, false, &err);
	if (fd < 0 && kp_err_errnum(&err) == EPERM) {
		kp_cli_error(NULL, "cache: cache directory %s not used: %s", root, err.msg);
		return KP_EXIT_ERROR;
	}
	if (fd >= 0)
		close(fd);
	if (!strcmp(action, "show"))
		r = kp_facts_cache_usage(dir, &u, &err) < 0 ||
				    kp_run_cache_usage(root, &ru, &err) < 0
			    ? -1
			    : kp_base_cache_usage(root, &bu, &err);
	else if (!strcmp(action, "prune"))
		/* SIZE holds the kernel bases (a quarter at most), the memo and the packs */
		r = kp_base_cache_prune(root, max / 4, &bu, &err) < 0 ||
				    kp_facts_cache_prune(dir, max - bu.bytes, &u, &err) < 0
			    ? -1
			    : kp_run_cache_prune(root, max / 4, &ru, &err);
	else
		r = kp_facts_cache_clear(dir, &u, &err) < 0 ||
				    kp_run_cache_clear(root, &ru, &err) < 0
			    ? -1
			    : kp_base_cache_clear(root, &base_removed, &err);
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
	if (*moved)
		printf("note: %s\n", moved);
	if (strcmp(action, "show"))
		printf("removed: %" PRIu64 " files\n",
		       u.removed + ru.removed + base_removed + bu.removed);
	print_usage(dir, &u, &ru, &bu);
	return KP_EXIT_OK;
}
