/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The running system, read from procfs and sysfs under a root (default "/";
 * tests use a fake root): release, loaded modules with their taint, module
 * signature enforcement, lockdown, the global taint mask, module_blacklist=,
 * the exports /proc/kallsyms shows, and the installed tree of that release.
 * Facts that cannot be read are "unknown" (with a note), not errors.
 */
#ifndef KP_RUNNING_H
#define KP_RUNNING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/kernel-base.h"
#include "kernel/kernel-config.h"
#include "file/rootopen.h"
#include "kernel-tree.h"
#include "util/util.h"

/* One line of /proc/modules (kernel/module/procfs.c m_show()). */
struct kp_loaded_module {
	const char *name;
	uint64_t size;
	int refcount;	    /* -1 without CONFIG_MODULE_UNLOAD ("-") */
	const char **users; /* modules using this one ("used by"; "[permanent]" kept) */
	size_t nusers;
	const char *state;     /* "Live", "Loading" or "Unloading" */
	const char *taint;     /* letters ("POE"), "" if none: sysfs taint, else /proc/modules' */
	bool taint_from_sysfs; /* ROOT/sys/module/<name>/taint was read */
	bool proprietary;      /* 'P' in taint: exports seen through it are not GPL-usable */
	/* sys/module/<name>/import_ns (7.1+: one namespace a line, only when it imports one) */
	const char **import_ns;
	size_t nimport_ns;
	bool import_ns_from_sysfs; /* the file was read */
};

struct kp_running {
	char *root;
	/* @root's directory, pinned at open: its procfs and sysfs files are opened inside it */
	struct kp_root_dir rootdir;
	const char *release; /* proc/sys/kernel/osrelease, or uname(2) for the host root */
	bool release_from_uname;

	struct kp_loaded_module *modules; /* /proc/modules order */
	size_t nmodules;
	bool have_proc_modules;

	int sig_enforce;      /* sys/module/module/parameters/sig_enforce: 1, 0, -1 unknown */
	const char *lockdown; /* "none", "integrity", "confidentiality", NULL unknown */
	bool have_tainted;
	unsigned long tainted;	       /* proc/sys/kernel/tainted */
	const char *cmdline;	       /* proc/cmdline, NULL if unreadable */
	const char **module_blacklist; /* module_blacklist= of the command line (last one wins) */
	size_t nmodule_blacklist;

	struct kp_kernel_base *kallsyms; /* vmlinux exports from proc/kallsyms, or NULL */
	const char *kallsyms_note;	 /* why kallsyms is NULL */

	bool have_tree;
	struct kp_tree tree;   /* lib/modules/<release> under the root */
	const char *tree_note; /* why have_tree is false */

	struct kp_kconfig config; /* the tree's config, else proc/config.gz; .known false if none */
	const char *config_note;  /* why config.known is false (absent or malformed) */

	struct kp_arena arena;
};

/*
 * Reads the running system under @root (NULL or "/": this machine). Fails
 * only when the release cannot be found, or /proc/modules or a module's taint
 * file is malformed ("PATH:LINE: why"); an unusable kallsyms, tree or config
 * leaves a note instead. Release @r with
 * kp_running_release() after success.
 */
int kp_running_open(struct kp_running *r, const char *root, struct kp_err *err);

/* What kp_running_open_opts() reads beyond the release, /proc/modules, sysfs taints,
 * signature enforcement, lockdown, the taint mask and the command line. */
enum {
	KP_RUNNING_KALLSYMS = 1 << 0, /* proc/kallsyms (60-85 ms on a real kernel) */
	KP_RUNNING_TREE = 1 << 1,     /* lib/modules/<release> and the kernel config */
	KP_RUNNING_ALL = KP_RUNNING_KALLSYMS | KP_RUNNING_TREE,
};

/*
 * Same, reading only what @flags asks for (the modprobe hook reads neither: it
 * opens the tree itself). @release, when not NULL, is taken instead of the live one. @kc:
 * libkmod's private copy of the run, shared with its other readers (kp_tree_open()), or
 * NULL.
 */
int kp_running_open_opts(struct kp_running *r, const char *root, const char *release,
			 unsigned flags, struct kp_kmod_copy *kc, struct kp_err *err);
void kp_running_release(struct kp_running *r);

/* The loaded module @name ('-' and '_' alike), or NULL. */
const struct kp_loaded_module *kp_running_find(const struct kp_running *r, const char *name);

#endif
