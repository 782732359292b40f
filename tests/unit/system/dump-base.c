// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dump-base: loads kernel export sources into one base and prints it, for
 * tests/corpus/check-base.sh and for eyeballing.
 *
 *   dump-base [--all] [--symvers F] [--vmlinux F] [--system-map F] [FILE...]
 *   dump-base --tree ROOT [--release R] [--all]
 *
 * FILE is auto-detected. --tree opens ROOT/lib/modules/<release>, prints what
 * it found to stderr and loads every export source found there.
 * Output: one line per export, sorted: NAME TAB OWNER TAB TABLE TAB NS TAB CRC,
 * NS "-" when none and "?" when unknown, CRC "-" when unknown. Without --all
 * only vmlinux exports are printed. A summary goes to stderr. Exit 2 on error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/kernel-base.h"
#include "system/kernel-tree.h"

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void show_tree(const struct kp_tree *t)
{
	fprintf(stderr,
		"tree: release %s\n  moddir %s\n  symvers %s\n  config %s\n"
		"  System.map %s%s%s\n  vmlinux %s\n  built-in modules %zu, modprobe blacklist "
		"%zu\n",
		t->release, t->moddir, t->symvers_path ? t->symvers_path : "-",
		t->config_path ? t->config_path : "-",
		t->system_map_path ? t->system_map_path : "-", t->system_map_stub ? " stub " : "",
		t->system_map_stub ? t->system_map_stub : "",
		t->vmlinux_path ? t->vmlinux_path : "-", t->nbuiltin, t->nmodprobe_blacklist);
}

static int print_base(const struct kp_kernel_base *b, bool all)
{
	struct kp_base_stats st;
	char **lines;
	size_t n = 0;

	lines = calloc(kp_base_count(b) + 1, sizeof(*lines));
	if (!lines)
		return -1;
	for (size_t i = 0; i < kp_base_count(b); i++) {
		const struct kp_ksym *k = kp_base_at(b, i);
		char crc[16] = "-";

		if (!all && !k->vmlinux)
			continue;
		if (k->has_crc)
			snprintf(crc, sizeof(crc), "0x%08x", k->crc);
		if (asprintf(&lines[n], "%s\t%s\t%s\t%s\t%s", k->name, k->owner,
			     kp_export_table_section(k->table),
			     k->ns	   ? k->ns
			     : k->ns_known ? "-"
					   : "?",
			     crc) < 0)
			return -1;
		n++;
	}
	qsort(lines, n, sizeof(*lines), cmp_line);
	for (size_t i = 0; i < n; i++) {
		puts(lines[i]);
		free(lines[i]);
	}
	free(lines);
	kp_base_stats(b, &st);
	fprintf(stderr,
		"dump-base: release %s: %zu entries, %zu vmlinux (%zu GPL-only, "
		"%zu namespaced, %zu with CRC), %zu of modules, %zu duplicates, "
		"%zu conflicts%s%s\n",
		kp_base_release(b) ? kp_base_release(b) : "unknown", st.nsyms, st.nvmlinux,
		st.ngpl_only, st.nnamespaced, st.ncrc, st.nmodule, st.nduplicates, st.nconflicts,
		st.first_conflict ? ": first: " : "", st.first_conflict ? st.first_conflict : "");
	return 0;
}

int main(int argc, char **argv)
{
	const char *root = NULL, *release = NULL;
	struct kp_kernel_base *b;
	struct kp_err err = { 0 };
	bool all = false;
	int ret = 0;

	if (kp_base_new(&b) < 0)
		return 2;
	for (int i = 1; i < argc && !ret; i++) {
		const char *opt = argv[i], *arg = i + 1 < argc ? argv[i + 1] : NULL;
		int r = 0;

		if (!strcmp(opt, "--all")) {
			all = true;
			continue;
		}
		if (!strcmp(opt, "--tree") || !strcmp(opt, "--release")) {
			if (!arg)
				goto usage;
			*(opt[2] == 't' ? &root : &release) = arg;
			i++;
			continue;
		}
		if (!strcmp(opt, "--symvers") && arg)
			r = kp_base_load_symvers(b, argv[++i], &err);
		else if (!strcmp(opt, "--vmlinux") && arg)
			r = kp_base_load_vmlinux(b, argv[++i], &err);
		else if (!strcmp(opt, "--system-map") && arg)
			r = kp_base_load_system_map(b, argv[++i], &err);
		else if (opt[0] == '-')
			goto usage;
		else
			r = kp_base_load(b, opt, &err);
		if (r < 0) {
			fprintf(stderr, "dump-base: %s\n", err.msg);
			ret = 2;
		}
	}
	if (!ret && root) {
		struct kp_tree t;

		if (kp_tree_open(&t, root, release, NULL, &err) < 0 ||
		    (show_tree(&t), kp_tree_load_base(&t, b, true, &err)) < 0) {
			fprintf(stderr, "dump-base: %s\n", err.msg);
			ret = 2;
		}
		if (t.root)
			kp_tree_release(&t);
	}
	if (!ret && print_base(b, all) < 0)
		ret = 2;
	kp_base_free(b);
	return ret;
usage:
	fprintf(stderr, "usage: dump-base [--all] [--symvers F] [--vmlinux F] [--system-map F] "
			"[FILE...] | --tree ROOT [--release R]\n");
	kp_base_free(b);
	return 2;
}
