// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The command line's side of the context (lib/ctx/context.h): the options that name the
 * target kernel, and the environment a command gives the context (read options, the facts
 * cache, progress and diagnostics on stderr).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ctx-options.h"

static void bad_value(const char *opt, const char *arg, const char *want)
{
	kp_cli_error(NULL, "%s: unknown value '%s' (%s)", opt, arg, want);
	exit(KP_EXIT_ERROR);
}

/* on/off, yes/no, 1/0 */
static int on_off(const char *opt, const char *arg)
{
	if (!strcmp(arg, "on") || !strcmp(arg, "yes") || !strcmp(arg, "1"))
		return 1;
	if (!strcmp(arg, "off") || !strcmp(arg, "no") || !strcmp(arg, "0"))
		return 0;
	bad_value(opt, arg, "on or off");
	return -1;
}

int kp_ctx_option(struct kp_ctx_opts *o, int c, const char *arg)
{
	switch (c) {
	case 'k':
		if (o->nkernels == KP_ARRAY_SIZE(o->kernels)) {
			kp_cli_error(NULL, "too many --kernel options");
			exit(KP_EXIT_ERROR);
		}
		o->kernels[o->nkernels++] = arg;
		return 1;
	case 0x100:
		o->fo.config_path = arg;
		return 1;
	case 0x101:
		o->fo.release = arg;
		return 1;
	case 0x102:
		o->fo.version = arg;
		return 1;
	case 0x103:
		o->fo.rules = arg;
		return 1;
	case 0x104:
		o->fo.distro = arg;
		return 1;
	case 0x105:
		o->fo.vermagic = arg;
		return 1;
	case 0x106:
		o->fo.sig_enforce = 1;
		return 1;
	case 0x107:
		if (!arg || !strcmp(arg, "integrity"))
			o->fo.lockdown = 1;
		else if (!strcmp(arg, "none"))
			o->fo.lockdown = 0;
		else if (!strcmp(arg, "confidentiality"))
			o->fo.lockdown = 2;
		else
			bad_value("--lockdown", arg, "none, integrity or confidentiality");
		return 1;
	case 0x108:
		o->fo.untrusted_signatures = true;
		return 1;
	case 0x109:
		o->fo.allow_missing_ns = 1;
		return 1;
	case 0x10a:
		o->fo.cmdline = arg;
		return 1;
	case 0x1f0: /* modprobe --force: MODULE_INIT_IGNORE_MODVERSIONS|_VERMAGIC */
		o->fo.init_flags |= KP_INIT_IGNORE_MODVERSIONS | KP_INIT_IGNORE_VERMAGIC;
		return 1;
	case 0x1f1:
		o->fo.init_flags |= KP_INIT_IGNORE_MODVERSIONS;
		return 1;
	case 0x1f2:
		o->fo.init_flags |= KP_INIT_IGNORE_VERMAGIC;
		return 1;
	case 'b':
		o->basedir = arg;
		return 1;
	case 0x10b:
		o->running = true;
		return 1;
	case 0x10c:
		o->root = arg;
		return 1;
	case 0x10d:
		if (o->ntrusted_certs == KP_ARRAY_SIZE(o->trusted_certs)) {
			kp_cli_error(NULL, "too many --trusted-cert options");
			exit(KP_EXIT_ERROR);
		}
		o->trusted_certs[o->ntrusted_certs++] = arg;
		return 1;
	case 0x10f:
		o->no_kernel_keys = true;
		return 1;
	case 0x130:
		o->efi_vars = arg;
		return 1;
	case 0x131:
	case 0x132:
		if (o->nmoks == KP_ARRAY_SIZE(o->moks)) {
			kp_cli_error(NULL, "too many --mok/--mok-pending options");
			exit(KP_EXIT_ERROR);
		}
		o->moks[o->nmoks].path = arg;
		o->moks[o->nmoks++].pending = c == 0x132;
		return 1;
	case 0x133:
		o->fo.secure_boot = on_off("--secure-boot", arg);
		return 1;
	case 0x134:
		o->fo.mok_trusted = on_off("--trust-mok", arg);
		return 1;
	case 0x135:
		o->dkms_key = arg;
		return 1;
	case 0x136:
		o->this_machine = true;
		return 1;
	case 0x137:
		o->vmlinux_btf = arg;
		return 1;
	case 0x13c:
		o->ima_policy = arg;
		return 1;
	case 0x10e:
		if (o->nkernel_images == KP_ARRAY_SIZE(o->kernel_images)) {
			kp_cli_error(NULL, "too many --kernel-image options");
			exit(KP_EXIT_ERROR);
		}
		o->kernel_images[o->nkernel_images++] = arg;
		return 1;
	default:
		return 0;
	}
}

/* Progress for long reads only: a module set of 64 files or more. */
static void ctx_progress(size_t done, size_t total, void *data)
{
	if (total >= 64)
		kp_cli_progress(done, total, data);
}

static struct kp_facts_cache *ctx_cache(void *data)
{
	return kp_cli_facts_cache(data);
}

static struct kp_base_cache *ctx_base_cache(void *data)
{
	return kp_cli_base_cache(data);
}

static void ctx_log(void *data, const char *path, const char *msg)
{
	(void)data;
	kp_cli_error(path, "%s", msg);
}

void kp_cli_ctx_init(struct kp_ctx *ctx, const struct kp_cli *cli, const struct kp_ctx_opts *opts)
{
	struct kp_ctx_env env = {
		.max_size = cli->max_size,
		.jobs = cli->jobs,
		.full_modinfo = cli->full_modinfo,
		.cache = ctx_cache,
		.base_cache = ctx_base_cache,
		.cache_data = (void *)cli,
		.log = ctx_log,
	};

	if (cli->progress) {
		env.progress = ctx_progress;
		env.progress_data = cli->progress_f;
	}
	kp_ctx_init(ctx, opts, &env);
}

int kp_cli_ctx_load(struct kp_ctx *ctx, char **paths, int npaths, unsigned flags)
{
	struct kp_err err = { 0 };

	if (kp_ctx_load(ctx, paths, npaths, flags, &err) < 0) {
		kp_cli_error(NULL, "%s", err.msg);
		return KP_EXIT_ERROR;
	}
	return 0;
}
