// SPDX-License-Identifier: GPL-2.0-or-later
/* kopolicy info [--json] FILE|DIR... */
#include "config.h"

#include <getopt.h>
#include <stdlib.h>

#include "cli.h"
#include "info-output.h"

#define INFO_WINDOW 256

static void info_usage(FILE *f)
{
	fputs("Usage: kopolicy info [--json] [--pretty] FILE|DIR...\n"
	      "Show the modinfo, exports (GPL-only, namespace, CRC), imports in .symtab order,\n"
	      "__versions, signature and symbol_get() targets of each module.\n"
	      "Directories are searched for *.ko, *.ko.xz, *.ko.zst and *.ko.gz.\n"
	      "\n"
	      "  --json           machine-readable output (schema_version 1, see kopolicy(1))\n"
	      "  --pretty         indent the JSON\n"
	      "  -j, --jobs N     read with N threads\n"
	      "  --max-size SIZE  largest decompressed module accepted (default 512M)\n",
	      f);
}

int cmd_info(struct kp_cli *cli, int argc, char **argv)
{
	static const struct option opts[] = { { "json", no_argument, NULL, 'J' },
					      { "pretty", no_argument, NULL, 'P' },
					      { "help", no_argument, NULL, 'h' },
					      KP_CLI_COMMON_LONGOPTS,
					      {} };
	struct kp_module_set set = { 0 };
	bool json = false, pretty = false;
	struct kp_info_writer w = { .f = stdout };
	struct kp_read_opts ro;
	size_t failed = 0;
	int c;

	while ((c = getopt_long(argc, argv, "hj:", opts, NULL)) != -1) {
		if (kp_cli_common_option(cli, c, optarg))
			continue;
		switch (c) {
		case 'J':
			w.json = json = true;
			break;
		case 'P':
			w.pretty = pretty = true;
			break;
		case 'h':
			info_usage(stdout);
			return KP_EXIT_OK;
		default:
			info_usage(stderr);
			return KP_EXIT_ERROR;
		}
	}
	if (optind >= argc) {
		kp_cli_error(NULL, "info: no module files given");
		info_usage(stderr);
		return KP_EXIT_ERROR;
	}
	cli->full_modinfo = true;
	kp_cli_add_paths(&set, argv + optind, argc - optind);
	ro = kp_cli_read_opts(cli, set.n);
	kp_info_begin(&w);
	/* A window at a time: the memory of a whole-tree scan stays that of one window. */
	for (size_t from = 0; from < set.n; from += INFO_WINDOW) {
		size_t to = from + INFO_WINDOW < set.n ? from + INFO_WINDOW : set.n;

		failed += kp_set_read_range(&set, from, to, &ro);
		for (size_t i = from; i < to; i++) {
			if (set.entries[i].error)
				kp_cli_error(set.entries[i].path, "%s", set.entries[i].error);
			kp_info_entry(&w, &set.entries[i]);
			kp_module_free(set.entries[i].mod);
			set.entries[i].mod = NULL;
		}
	}
	kp_info_end(&w);
	kp_set_free(&set);
	if (fflush(stdout) != 0) {
		kp_cli_error(NULL, "write error on standard output");
		return KP_EXIT_ERROR;
	}
	return failed ? KP_EXIT_ERROR : KP_EXIT_OK;
}
