// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The running system under a root (running.h): its release, lockdown and signature
 * enforcement, command line, kallsyms, its modules tree and configuration. The loaded
 * modules (/proc/modules, each one's taint and import_ns): running-modules.c.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "kernel/kernel-base.h"
#include "file/inputs.h"
#include "file/rootfs.h"
#include "kernel-read.h"
#include "running-internal.h"
#include "util/module-name.h"

#define KALLSYMS_MAX_SIZE ((size_t)256 << 20)

/*
 * A small file's first line into the arena, NULL if absent or unreadable; -1 on other errors.
 * @read: kp_read_first_line_in(), or kp_read_kernel_first_line_in() for a read that can sleep
 * on a lock an oops left held; both open @rel inside the root by descriptors.
 */
static int first_line_by(struct kp_running *r, const char *rel, const char **out,
			 int (*read)(const struct kp_root_dir *, const char *, char *, size_t,
				     struct kp_err *),
			 struct kp_err *err)
{
	char buf[4096];
	char *path = running_path(r, rel);
	int ret;

	*out = NULL;
	if (!path)
		return kp_err_set(err, "out of memory");
	ret = read(&r->rootdir, path, buf, sizeof(buf), err);
	free(path);
	if (ret < 0) {
		int e = kp_err_errnum(err);

		return e == ENOENT || e == EACCES || e == EPERM ? 0 : -1;
	}
	*out = running_dup(r, buf, strlen(buf));
	return *out ? 0 : kp_err_set(err, "out of memory");
}

static int first_line(struct kp_running *r, const char *rel, const char **out, struct kp_err *err)
{
	return first_line_by(r, rel, out, kp_read_first_line_in, err);
}

static int read_release(struct kp_running *r, struct kp_err *err)
{
	struct utsname u;

	if (first_line(r, "proc/sys/kernel/osrelease", &r->release, err) < 0)
		return -1;
	if (r->release && *r->release)
		return 0;
	if (!kp_root_is_host(r->root))
		return kp_err_set(err,
				  "%s: cannot tell the kernel release: no "
				  "proc/sys/kernel/osrelease",
				  r->root);
	if (uname(&u) < 0)
		return kp_err_set(err, "uname: %s", strerror(errno));
	r->release = running_dup(r, u.release, strlen(u.release));
	r->release_from_uname = true;
	return r->release ? 0 : kp_err_set(err, "out of memory");
}

static int read_security(struct kp_running *r, struct kp_err *err)
{
	const char *v;

	r->sig_enforce = -1;
	/* param_attr_show() takes kernel_param_lock(NULL), the built-ins' param_lock (5.10-7.2) */
	if (first_line_by(r, "sys/module/module/parameters/sig_enforce", &v,
			  kp_read_kernel_first_line_in, err) < 0)
		return -1;
	if (v) {
		if (!strcmp(v, "Y") || !strcmp(v, "1"))
			r->sig_enforce = 1;
		else if (!strcmp(v, "N") || !strcmp(v, "0"))
			r->sig_enforce = 0;
	}
	/* "[none] integrity confidentiality": the bracketed one is in force. */
	if (first_line(r, "sys/kernel/security/lockdown", &v, err) < 0)
		return -1;
	if (v) {
		const char *open = strchr(v, '['), *close = open ? strchr(open, ']') : NULL;

		if (open && close) {
			r->lockdown = running_dup(r, open + 1, (size_t)(close - open - 1));
			if (!r->lockdown)
				return kp_err_set(err, "out of memory");
		}
	}
	if (first_line(r, "proc/sys/kernel/tainted", &v, err) < 0)
		return -1;
	if (v && running_all_digits(v, strlen(v))) {
		r->have_tainted = true;
		r->tainted = strtoul(v, NULL, 10);
	}
	return 0;
}

/* module_blacklist=a,b on the command line: a charp parameter, the last one wins. */
static int read_cmdline(struct kp_running *r, struct kp_err *err)
{
	static const char key[] = "module_blacklist=";
	const char *last = NULL;
	size_t last_len = 0, cap = 0;

	if (first_line(r, "proc/cmdline", &r->cmdline, err) < 0)
		return -1;
	if (!r->cmdline)
		return 0;
	for (const char *p = r->cmdline; *p;) {
		size_t n = strcspn(p, " ");

		if (n > sizeof(key) - 1 && !strncmp(p, key, sizeof(key) - 1)) {
			last = p + sizeof(key) - 1;
			last_len = n - (sizeof(key) - 1);
		}
		p += n;
		p += strspn(p, " ");
	}
	while (last && last_len) {
		size_t n = 0;

		while (n < last_len && last[n] != ',')
			n++;
		if (n) {
			if (kp_grow(&r->module_blacklist, &cap, r->nmodule_blacklist + 1,
				    sizeof(*r->module_blacklist)) < 0)
				return kp_err_set(err, "out of memory");
			r->module_blacklist[r->nmodule_blacklist] = running_dup(r, last, n);
			if (!r->module_blacklist[r->nmodule_blacklist])
				return kp_err_set(err, "out of memory");
			r->nmodule_blacklist++;
		}
		if (n == last_len)
			break;
		last += n + 1;
		last_len -= n + 1;
	}
	return 0;
}

static int note(struct kp_running *r, const char **where, const char *msg)
{
	*where = running_dup(r, msg, strlen(msg));
	return *where ? 0 : -1;
}

static int read_kallsyms(struct kp_running *r, struct kp_err *err)
{
	char *path = running_path(r, "proc/kallsyms");
	struct kp_err e = { 0 };
	struct kp_kernel_base *b;
	int ret = 0;

	if (!path)
		return kp_err_set(err, "out of memory");
	if (kp_base_new(&b) < 0) {
		free(path);
		return kp_err_set(err, "out of memory");
	}
	if (kp_base_load_system_map_in(b, &r->rootdir, path, &e) < 0 ||
	    kp_base_set_kernel_release(b, r->release, &e) < 0) {
		kp_base_free(b);
		ret = note(r, &r->kallsyms_note, e.msg);
	} else {
		r->kallsyms = b;
	}
	free(path);
	return ret < 0 ? kp_err_set(err, "out of memory") : 0;
}

static int read_tree_and_config(struct kp_running *r, struct kp_kmod_copy *kc, struct kp_err *err)
{
	struct kp_err e = { 0 };
	struct stat st;
	char *procfg;

	if (kp_tree_open(&r->tree, r->root, r->release, kc, &e) == 0)
		r->have_tree = true;
	else if (note(r, &r->tree_note, e.msg) < 0)
		return kp_err_set(err, "out of memory");
	if (r->have_tree && r->tree.config_path) {
		if (kp_kconfig_load_in(&r->config, &r->tree.rootdir, r->tree.config_path, &e) < 0 &&
		    note(r, &r->config_note, e.msg) < 0)
			return kp_err_set(err, "out of memory");
		return 0;
	}
	procfg = running_path(r, "proc/config.gz");
	if (!procfg)
		return kp_err_set(err, "out of memory");
	if (kp_stat_in(&r->rootdir, procfg, &st) == 0 && S_ISREG(st.st_mode)) {
		if (kp_kconfig_load_in(&r->config, &r->rootdir, procfg, &e) < 0 &&
		    note(r, &r->config_note, e.msg) < 0) {
			free(procfg);
			return kp_err_set(err, "out of memory");
		}
	} else if (note(r, &r->config_note,
			"no boot/config-<release> and no "
			"proc/config.gz") < 0) {
		free(procfg);
		return kp_err_set(err, "out of memory");
	}
	free(procfg);
	return 0;
}

int kp_running_open_opts(struct kp_running *r, const char *root, const char *release,
			 unsigned flags, struct kp_kmod_copy *kc, struct kp_err *err)
{
	memset(r, 0, sizeof(*r));
	kp_in_uncacheable("the running kernel");
	r->sig_enforce = -1;
	r->root = strdup(root && *root ? root : "/");
	if (!r->root)
		return kp_err_set(err, "out of memory");
	/* its procfs and sysfs files opened under the directory @root names now */
	kp_root_dir_pin(&r->rootdir, r->root);
	if (release) {
		r->release = running_dup(r, release, strlen(release));
		if (!r->release) {
			kp_running_release(r);
			return kp_err_set(err, "out of memory");
		}
	} else if (read_release(r, err) < 0) {
		kp_running_release(r);
		return -1;
	}
	/* The release becomes a path component (lib/modules/<release>). */
	if (strchr(r->release, '/') || !strcmp(r->release, "..") || !strcmp(r->release, ".")) {
		kp_err_set(err, "invalid kernel release '%s'", r->release);
		kp_running_release(r);
		return -1;
	}
	if (kp_running_read_modules(r, err) < 0 || read_security(r, err) < 0 ||
	    read_cmdline(r, err) < 0 ||
	    ((flags & KP_RUNNING_KALLSYMS) && read_kallsyms(r, err) < 0) ||
	    ((flags & KP_RUNNING_TREE) && read_tree_and_config(r, kc, err) < 0)) {
		kp_running_release(r);
		return -1;
	}
	return 0;
}

int kp_running_open(struct kp_running *r, const char *root, struct kp_err *err)
{
	return kp_running_open_opts(r, root, NULL, KP_RUNNING_ALL, NULL, err);
}

void kp_running_release(struct kp_running *r)
{
	kp_root_dir_unpin(&r->rootdir);
	free(r->root);
	free(r->modules);
	free(r->module_blacklist);
	kp_base_free(r->kallsyms);
	if (r->have_tree)
		kp_tree_release(&r->tree);
	kp_kconfig_release(&r->config);
	kp_arena_release(&r->arena);
	memset(r, 0, sizeof(*r));
}

const struct kp_loaded_module *kp_running_find(const struct kp_running *r, const char *name)
{
	for (size_t i = 0; i < r->nmodules; i++)
		if (kp_modname_eq(r->modules[i].name, name))
			return &r->modules[i];
	return NULL;
}
