// SPDX-License-Identifier: GPL-2.0-or-later
/* kopolicy info [--json] FILE|DIR... */
#include "config.h"

#include <getopt.h>
#include <stdlib.h>

#include "ctx-options.h"
#include "info-output.h"

#define INFO_WINDOW 256

static void info_usage(FILE *f)
{
	fputs("Usage: kopolicy info [--json] [--pretty] [--trusted-cert F] [--kernel-image F]\n"
	      "                     FILE|DIR...\n"
	      "Show the modinfo, exports (GPL-only, namespace, CRC), imports in .symtab order,\n"
	      "__versions, signature and symbol_get() targets of each module.\n"
	      "Directories are searched for *.ko, *.ko.xz, *.ko.zst and *.ko.gz.\n"
	      "\n"
	      "  --json           machine-readable output (schema_version 1, see kopolicy(1))\n"
	      "  --pretty         indent the JSON\n"
	      "  --trusted-cert F check signatures against this certificate (PEM or DER;\n"
	      "                   repeatable)\n"
	      "  --kernel-image F ... and against the certificates compiled into this\n"
	      "                   vmlinuz/vmlinux (repeatable; its revocation list's\n"
	      "                   certificates are revocations)\n"
	      "  -j, --jobs N     read with N threads\n"
	      "  --max-size SIZE  largest decompressed module accepted (default 512M), and\n"
	      "                   the decompressed bytes all threads hold at once\n",
	      f);
}

int cmd_info(struct kp_cli *cli, int argc, char **argv)
{
	static const struct option opts[] = { { "json", no_argument, NULL, 'J' },
					      { "pretty", no_argument, NULL, 'P' },
					      { "help", no_argument, NULL, 'h' },
					      { "trusted-cert", required_argument, NULL, 'T' },
					      { "kernel-image", required_argument, NULL, 'I' },
					      KP_CLI_COMMON_LONGOPTS,
					      {} };
	bool json = false, pretty = false;
	struct kp_info_writer w = { .f = stdout };
	struct kp_ctx_opts o;
	struct kp_ctx ctx;
	struct kp_keyring keys;
	struct kp_err err = { 0 };
	ssize_t empty;
	size_t failed = 0;
	int c;

	kp_keyring_init(&keys);

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
		case 'T':
			if (kp_keyring_add_cert_file(&keys, optarg, &err) < 0) {
				kp_cli_error(optarg, "%s", err.msg);
				kp_keyring_release(&keys);
				return KP_EXIT_ERROR;
			}
			break;
		case 'I':
			if (kp_keyring_add_kernel_image(&keys, optarg,
							cli->max_size ? cli->max_size
								      : KP_DEFAULT_MAX_SIZE,
							&err) < 0) {
				kp_cli_error(optarg, "%s", err.msg);
				kp_keyring_release(&keys);
				return KP_EXIT_ERROR;
			}
			break;
		case 'h':
			kp_keyring_release(&keys);
			info_usage(stdout);
			return KP_EXIT_OK;
		default:
			kp_keyring_release(&keys);
			return kp_cli_bad_option("info", "hj:", argv);
		}
	}
	if (optind >= argc) {
		kp_keyring_release(&keys);
		kp_cli_error(NULL, "info: no module files given");
		info_usage(stderr);
		return KP_EXIT_ERROR;
	}
	/* The modules only, with every .modinfo tag, checked against the keys given. */
	cli->full_modinfo = true;
	kp_ctx_opts_init(&o);
	kp_cli_ctx_init(&ctx, cli, &o);
	kp_ctx_take_keys(&ctx, &keys);
	w.keys = ctx.keys.nsources ? &ctx.keys : NULL; /* named even when they held no key */
	empty = kp_ctx_add_files(&ctx, argv + optind, argc - optind, &err);
	if (empty < 0) {
		kp_cli_error(NULL, "%s", err.msg);
		kp_ctx_release(&ctx);
		return KP_EXIT_ERROR;
	}
	failed = (size_t)empty;
	kp_info_begin(&w);
	/* A window at a time: the memory of a whole-tree scan stays that of one window. */
	for (size_t from = 0; from < ctx.set.n; from += INFO_WINDOW) {
		size_t to = from + INFO_WINDOW < ctx.set.n ? from + INFO_WINDOW : ctx.set.n;

		failed += kp_ctx_read_range(&ctx, from, to);
		for (size_t i = from; i < to; i++) {
			struct kp_set_entry *e = &ctx.set.entries[i];

			if (e->error)
				kp_cli_error(e->path, "%s", e->error);
			kp_info_entry(&w, e);
			kp_set_drop_module(&ctx.set, e);
		}
	}
	kp_info_end(&w);
	kp_ctx_release(&ctx);
	if (fflush(stdout) != 0) {
		kp_cli_error(NULL, "write error on standard output");
		return KP_EXIT_ERROR;
	}
	return failed ? KP_EXIT_ERROR : KP_EXIT_OK;
}
