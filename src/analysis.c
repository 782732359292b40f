// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "analysis.h"

void kp_analysis_init(struct kp_analysis *a)
{
	memset(a, 0, sizeof(*a));
	kp_facts_opts_init(&a->fo);
}

int kp_analysis_option(struct kp_analysis *a, int c, const char *arg)
{
	switch (c) {
	case 'k':
		if (a->nkernels == KP_ARRAY_SIZE(a->kernels)) {
			kp_cli_error(NULL, "too many --kernel options");
			exit(KP_EXIT_ERROR);
		}
		a->kernels[a->nkernels++] = arg;
		return 1;
	case 0x100:
		a->fo.config_path = arg;
		return 1;
	case 0x101:
		a->fo.release = arg;
		return 1;
	case 0x102:
		a->fo.version = arg;
		return 1;
	case 0x103:
		a->fo.rules = arg;
		return 1;
	case 0x104:
		a->fo.distro = arg;
		return 1;
	case 0x105:
		a->fo.vermagic = arg;
		return 1;
	case 0x106:
		a->fo.sig_enforce = 1;
		return 1;
	case 0x107:
		a->fo.lockdown = 1;
		return 1;
	case 0x108:
		a->fo.untrusted_signatures = true;
		return 1;
	case 0x109:
		a->fo.allow_missing_ns = 1;
		return 1;
	case 0x10a:
		a->fo.cmdline = arg;
		return 1;
	default:
		return 0;
	}
}

/* A directory given as --kernel: its Module.symvers (headers dir, build dir or tree). */
static int load_kernel_path(struct kp_analysis *a, const char *path)
{
	static const char *const inside[] = { "Module.symvers", "build/Module.symvers" };
	struct kp_err err = { "" };
	struct stat st;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		for (size_t i = 0; i < KP_ARRAY_SIZE(inside); i++) {
			char *p = NULL;
			int r;

			if (asprintf(&p, "%s/%s", path, inside[i]) < 0)
				return -1;
			if (stat(p, &st) == 0) {
				r = kp_base_load(a->base, p, &err);
				if (r < 0)
					kp_cli_error(NULL, "%s", err.msg);
				free(p);
				return r;
			}
			free(p);
		}
		kp_cli_error(path, "no Module.symvers in this directory");
		return -1;
	}
	if (kp_base_load(a->base, path, &err) < 0) {
		kp_cli_error(NULL, "%s", err.msg);
		return -1;
	}
	return 0;
}

/* No --kernel: the running kernel's Module.symvers and config, as installed by the distribution. */
static int default_kernel(struct kp_analysis *a)
{
	static const char *const symvers[][2] = {
		{ "/lib/modules/", "/build/Module.symvers" },
		{ "/usr/src/linux-headers-", "/Module.symvers" },
		{ "/boot/symvers-", ".gz" },
		{ "/lib/modules/", "/symvers.gz" },
	};
	char *release = a->release_buf, *config = a->config_buf, *path = a->symvers_buf;
	struct utsname u;
	struct stat st;

	if (uname(&u) < 0)
		return -1;
	snprintf(release, sizeof(a->release_buf), "%s", u.release);
	for (size_t i = 0; i < KP_ARRAY_SIZE(symvers); i++) {
		snprintf(path, sizeof(a->symvers_buf), "%s%s%s", symvers[i][0], release,
			 symvers[i][1]);
		if (stat(path, &st) == 0) {
			a->kernels[a->nkernels++] = path;
			break;
		}
	}
	if (!a->nkernels) {
		kp_cli_error(NULL,
			     "no kernel exports given and none found for the running kernel "
			     "%s (install its headers, or use --kernel)",
			     release);
		return -1;
	}
	if (!a->fo.release)
		a->fo.release = release;
	snprintf(config, sizeof(a->config_buf), "/boot/config-%s", release);
	if (!a->fo.config_path && stat(config, &st) == 0)
		a->fo.config_path = config;
	return load_kernel_path(a, path);
}

int kp_analysis_run(struct kp_analysis *a, const struct kp_cli *cli, char **paths, int npaths,
		    bool simulate)
{
	struct kp_err err = { "" };

	if (kp_base_new(&a->base) < 0) {
		kp_cli_error(NULL, "out of memory");
		return KP_EXIT_ERROR;
	}
	for (size_t i = 0; i < a->nkernels; i++)
		if (load_kernel_path(a, a->kernels[i]) < 0)
			return KP_EXIT_ERROR;
	if (!a->nkernels && default_kernel(a) < 0)
		return KP_EXIT_ERROR;
	if (a->fo.release && kp_base_set_release(a->base, a->fo.release, &err) < 0) {
		kp_cli_error(NULL, "%s", err.msg);
		return KP_EXIT_ERROR;
	}
	if (kp_facts_build(&a->facts, &a->fo, a->base, &err) < 0) {
		kp_cli_error(NULL, "%s", err.msg);
		return KP_EXIT_ERROR;
	}
	a->read_failures = kp_cli_read_modules(cli, &a->set, paths, npaths);
	if (kp_graph_build(&a->graph, &a->set, a->nkernels ? a->base : NULL, &err) < 0) {
		kp_cli_error(NULL, "%s", err.msg);
		return KP_EXIT_ERROR;
	}
	if (!simulate)
		return 0;
	if (kp_simulate(&a->graph, &a->facts, &a->sim, &err) < 0) {
		kp_cli_error(NULL, "%s", err.msg);
		return KP_EXIT_ERROR;
	}
	a->have_sim = true;
	return 0;
}

void kp_analysis_free(struct kp_analysis *a)
{
	if (a->have_sim)
		kp_simulation_free(&a->sim);
	kp_graph_free(&a->graph);
	kp_set_free(&a->set);
	kp_facts_release(&a->facts);
	kp_base_free(a->base);
	memset(a, 0, sizeof(*a));
}
