// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Kernel trees and the running system under a fake root (tests/unit/system/root*); then a
 * tree whose config, Module.symvers and System.map are absolute links, with the directory
 * they lead to swapped for a link to the host's after kp_tree_open() resolved them (the
 * race, made deterministic): the kernel's files are read inside the tree's pinned root.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "system/kernel-tree.h"
#include "system/running.h"
#include "../tap.h"

#define BASE "tests/unit/system/"
#define REL  "5.10.0-test"

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = s ? strlen(s) : 0, b = strlen(suffix);

	return s && a >= b && !strcmp(s + a - b, suffix);
}

static void test_tree(struct tap *t)
{
	char *root = strdup(tap_srcpath(BASE "root"));
	struct kp_tree tr;
	struct kp_kernel_base *b;
	struct kp_kconfig c = { 0 };
	struct kp_err err = { 0 };
	int r = kp_tree_open(&tr, root, NULL, NULL, &err);

	tap_ok(t, r == 0, "tree opens, release picked%s%s", r ? ": " : "", r ? err.msg : "");
	if (r) {
		free(root);
		return;
	}
	tap_is_str(t, tr.release, REL, "the only release");
	tap_ok(t, ends_with(tr.moddir, "/lib/modules/" REL), "moddir %s", tr.moddir);
	/* build -> /usr/src/linux-headers-<r> is absolute: resolved inside the root. */
	tap_ok(t, ends_with(tr.symvers_path, "root/usr/src/linux-headers-" REL "/Module.symvers"),
	       "Module.symvers through the build link: %s", tr.symvers_path);
	tap_ok(t, ends_with(tr.config_path, "root/boot/config-" REL), "config %s", tr.config_path);
	tap_ok(t, tr.system_map_path == NULL, "Debian stub System.map not used");
	tap_ok(t, ends_with(tr.system_map_stub, "boot/System.map-" REL), "stub recorded");
	tap_ok(t, tr.vmlinux_path == NULL, "no vmlinux");
	tap_is_int(t, tr.nbuiltin, 3, "modules.builtin entries");
	tap_ok(t, kp_tree_is_builtin(&tr, "usb_storage") && kp_tree_is_builtin(&tr, "usb-storage"),
	       "usb-storage built in ('-' and '_')");
	tap_ok(t, kp_tree_is_builtin(&tr, "ext4") && !kp_tree_is_builtin(&tr, "nvidia"),
	       "ext4 built in, nvidia not");
	tap_is_int(t, tr.nmodprobe_blacklist, 2, "modprobe.d blacklist entries (libkmod)");
	tap_ok(t,
	       tr.nmodprobe_blacklist == 2 && ((!strcmp(tr.modprobe_blacklist[0], "pcspkr") &&
						!strcmp(tr.modprobe_blacklist[1], "nouveau")) ||
					       (!strcmp(tr.modprobe_blacklist[1], "pcspkr") &&
						!strcmp(tr.modprobe_blacklist[0], "nouveau"))),
	       "blacklisted: pcspkr, nouveau");

	if (kp_base_new(&b) < 0)
		abort();
	r = kp_tree_load_base(&tr, b, true, &err);
	tap_ok(t, r == 0, "tree base loads%s%s", r ? ": " : "", r ? err.msg : "");
	tap_is_str(t, kp_base_release(b), REL, "base release from the tree");
	tap_ok(t,
	       kp_base_lookup(b, "dma_buf_get") && kp_base_lookup(b, "dma_buf_get")->ns &&
		       !strcmp(kp_base_lookup(b, "dma_buf_get")->ns, "DMA_BUF"),
	       "tree base: dma_buf_get in DMA_BUF");
	kp_base_free(b);
	r = kp_tree_load_config(&tr, &c, &err);
	tap_ok(t, r == 0 && c.modversions && !c.module_sig_force, "tree config loads");
	kp_kconfig_release(&c);
	kp_tree_release(&tr);

	r = kp_tree_open(&tr, root, "9.9.9", NULL, &err);
	tap_ok(t, r < 0 && strstr(err.msg, "9.9.9: no such directory (releases there: " REL ")"),
	       "unknown release: %s", err.msg);
	free(root);
}

static void test_tree_multi(struct tap *t)
{
	char *root = strdup(tap_srcpath(BASE "root-multi"));
	struct kp_tree tr;
	struct kp_kernel_base *b;
	struct kp_err err = { 0 };
	int r = kp_tree_open(&tr, root, NULL, NULL, &err);

	tap_ok(t, r < 0 && strstr(err.msg, "2 kernel releases, choose one: 5.4.0-a, 5.4.0-b"),
	       "two releases: %s", err.msg);
	r = kp_tree_open(&tr, root, "5.4.0-a", NULL, &err);
	tap_ok(t, r == 0, "explicit release opens");
	if (r) {
		free(root);
		return;
	}
	tap_ok(t, ends_with(tr.symvers_path, "boot/symvers-5.4.0-a.gz"),
	       "boot/symvers-<r>.gz found: %s", tr.symvers_path);
	tap_ok(t, tr.config_path == NULL, "no config");
	tap_ok(t, kp_tree_is_builtin(&tr, "vfat"), "vfat built in");
	if (kp_base_new(&b) < 0)
		abort();
	tap_ok(t, kp_tree_load_base(&tr, b, false, &err) == 0 && kp_base_lookup(b, "suse_only"),
	       "base from symvers .gz");
	kp_base_free(b);
	tap_ok(t,
	       kp_tree_load_config(&tr, &(struct kp_kconfig){ 0 }, &err) < 0 &&
		       strstr(err.msg, "no kernel config for 5.4.0-a"),
	       "missing config: %s", err.msg);
	kp_tree_release(&tr);

	r = kp_tree_open(&tr, root, "5.4.0-b", NULL, &err);
	if (kp_base_new(&b) < 0)
		abort();
	tap_ok(t,
	       r == 0 && kp_tree_load_base(&tr, b, false, &err) < 0 &&
		       strstr(err.msg, "no kernel exports for 5.4.0-b"),
	       "no export source: %s", err.msg);
	kp_base_free(b);
	if (r == 0)
		kp_tree_release(&tr);
	free(root);
}

static void test_running(struct tap *t)
{
	char *root = strdup(tap_srcpath(BASE "root"));
	const struct kp_loaded_module *m;
	struct kp_running run;
	struct kp_err err = { 0 };
	int r = kp_running_open(&run, root, &err);

	tap_ok(t, r == 0, "running system opens%s%s", r ? ": " : "", r ? err.msg : "");
	if (r) {
		free(root);
		return;
	}
	tap_is_str(t, run.release, REL, "release from proc/sys/kernel/osrelease");
	tap_is_int(t, run.release_from_uname, 0, "not from uname");
	tap_is_int(t, run.nmodules, 8, "proc/modules lines");
	m = kp_running_find(&run, "nvidia");
	tap_ok(t,
	       m && m->size == 56508416 && m->refcount == 1 && m->nusers == 1 &&
		       !strcmp(m->users[0], "nvidia_uvm") && !strcmp(m->state, "Live"),
	       "nvidia: size, refcount, users, state");
	tap_ok(t, m && !strcmp(m->taint, "POE") && m->taint_from_sysfs && m->proprietary,
	       "nvidia: taint POE from sysfs, proprietary");
	m = kp_running_find(&run, "nvidia-uvm");
	tap_ok(t, m && !strcmp(m->taint, "POE") && !m->taint_from_sysfs && m->proprietary,
	       "nvidia_uvm: taint from proc/modules (no sysfs file)");
	m = kp_running_find(&run, "vboxdrv");
	tap_ok(t, m && !strcmp(m->taint, "OE") && !m->proprietary, "vboxdrv: OE, not proprietary");
	m = kp_running_find(&run, "ext4");
	tap_ok(t, m && !strcmp(m->taint, "") && m->taint_from_sysfs && m->nusers == 0,
	       "ext4: untainted, no users");
	m = kp_running_find(&run, "crc32c_intel");
	tap_ok(t, m && m->nusers == 1 && !strcmp(m->users[0], "[permanent]"), "[permanent] kept");
	m = kp_running_find(&run, "loading_mod");
	tap_ok(t, m && !strcmp(m->taint, "O") && !strcmp(m->state, "Loading"),
	       "state mark '+' dropped from the taint letters");
	m = kp_running_find(&run, "9pnet");
	tap_ok(t, m && m->size == 106496 && m->nusers == 1 && !strcmp(m->users[0], "9p"),
	       "9pnet: a name that starts with a digit");
	tap_is_int(t, run.sig_enforce, 1, "sig_enforce Y");
	tap_is_str(t, run.lockdown, "integrity", "lockdown in brackets");
	tap_ok(t, run.have_tainted && run.tainted == 12289, "proc/sys/kernel/tainted");
	tap_is_int(t, run.nmodule_blacklist, 2, "module_blacklist=: last one wins");
	tap_ok(t,
	       run.nmodule_blacklist == 2 && !strcmp(run.module_blacklist[0], "evil") &&
		       !strcmp(run.module_blacklist[1], "bad-mod"),
	       "module_blacklist names");
	tap_ok(t,
	       run.kallsyms && kp_base_lookup(run.kallsyms, "gpl_func") &&
		       kp_base_lookup(run.kallsyms, "gpl_func")->gpl_only,
	       "kallsyms exports");
	tap_ok(t, run.have_tree && !strcmp(run.tree.release, REL), "tree of the running release");
	tap_ok(t, run.config.known && run.config.modversions, "config from boot/config-<r>");
	kp_running_release(&run);
	free(root);

	root = strdup(tap_srcpath(BASE "root-multi"));
	r = kp_running_open(&run, root, &err);
	tap_ok(t, r < 0 && strstr(err.msg, "cannot tell the kernel release"),
	       "fake root without osrelease: %s", err.msg);
	free(root);
}

/* @text into the file TOP/@rel (its directories made) */
static void put(const char *top, const char *rel, const char *text)
{
	char p[PATH_MAX * 2], cmd[PATH_MAX * 2 + 32];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", p);
	f = system(cmd) == 0 ? fopen(p, "w") : NULL;
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		perror(p);
		exit(99);
	}
}

/* TOP/@rel a symlink to @target */
static void link_to(const char *top, const char *target, const char *rel)
{
	char p[PATH_MAX * 2];

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	if (symlink(target, p) < 0) {
		perror(p);
		exit(99);
	}
}

/* the kernel's files of one system, @who ("root", "host") and @crc telling which was read */
static void kernel_files(const char *top, const char *dir, const char *who, const char *crc,
			 bool sig)
{
	char rel[PATH_MAX], text[512];

	snprintf(rel, sizeof(rel), "%s/config", dir);
	snprintf(text, sizeof(text), "CONFIG_MODVERSIONS=y\n%s\nCONFIG_KP_%s=y\n",
		 sig ? "CONFIG_MODULE_SIG=y" : "# CONFIG_MODULE_SIG is not set", who);
	put(top, rel, text);
	snprintf(rel, sizeof(rel), "%s/Module.symvers", dir);
	snprintf(text, sizeof(text), "%s\tkp_sym\tvmlinux\tEXPORT_SYMBOL\t\n", crc);
	put(top, rel, text);
	snprintf(rel, sizeof(rel), "%s/System.map", dir);
	snprintf(text, sizeof(text),
		 "ffffffff81001000 T kp_%s_sym\n"
		 "ffffffff82000000 R __start___ksymtab\n"
		 "ffffffff82000000 r __ksymtab_kp_%s_sym\n"
		 "ffffffff8200000c R __stop___ksymtab\n"
		 "ffffffff8200000c R __start___ksymtab_gpl\n"
		 "ffffffff8200000c R __stop___ksymtab_gpl\n",
		 who, who);
	put(top, rel, text);
}

static void test_tree_swapped(struct tap *t)
{
	char top[PATH_MAX], root[PATH_MAX + 8], from[PATH_MAX * 2], to[PATH_MAX * 2];
	char host[PATH_MAX + 8], rel[PATH_MAX * 2];
	struct kp_kconfig c = { 0 };
	struct kp_err err = { 0 };
	struct kp_kernel_base *b;
	const struct kp_ksym *k;
	struct kp_tree tr;
	int r;

	snprintf(top, sizeof(top), "%s/kp-tree.XXXXXX", getenv("TMPDIR") ?: "/tmp");
	if (!mkdtemp(top))
		exit(99);
	snprintf(root, sizeof(root), "%s/root", top);
	snprintf(host, sizeof(host), "%s/host", top);
	/* ROOT/k: the files the links name when the tree is opened */
	kernel_files(top, "root/k", "root", "0x11111111", true);
	put(top, "root/lib/modules/" REL "/modules.order", "");
	put(top, "root/boot/.keep", "");
	link_to(top, "/k/config", "root/boot/config-" REL);
	put(top, "root/usr/src/linux-headers-" REL "/.keep", "");
	link_to(top, "/k/Module.symvers", "root/usr/src/linux-headers-" REL "/Module.symvers");
	link_to(top, "/k/System.map", "root/boot/System.map-" REL);
	/* the host's, which a path open through the swapped link reads */
	kernel_files(top, "host", "host", "0x99999999", false);
	/* ROOT/<host>: where the swapped link leads inside the root */
	snprintf(rel, sizeof(rel), "root%s", host);
	kernel_files(top, rel, "root2", "0x22222222", true);

	r = kp_tree_open(&tr, root, REL, NULL, &err);
	tap_ok(t, r == 0, "swap: tree opens%s%s", r ? ": " : "", r ? err.msg : "");
	if (r)
		goto out;
	tap_ok(t, tr.config_path && tr.symvers_path && tr.system_map_path,
	       "swap: config, Module.symvers and System.map found");
	/* ROOT/k swapped for an absolute link to the host's directory */
	snprintf(from, sizeof(from), "%s/k", root);
	snprintf(to, sizeof(to), "%s/k-old", root);
	if (rename(from, to) < 0 || symlink(host, from) < 0)
		exit(99);
	if (kp_base_new(&b) < 0)
		abort();
	r = kp_tree_load_base(&tr, b, true, &err);
	tap_ok(t, r == 0, "swap: base loads%s%s", r ? ": " : "", r ? err.msg : "");
	k = kp_base_lookup(b, "kp_sym");
	tap_ok(t, k && k->has_crc && k->crc == 0x22222222,
	       "swap: Module.symvers read inside the root (CRC 0x%08x, host's 0x99999999)",
	       k ? k->crc : 0);
	tap_ok(t, kp_base_lookup(b, "kp_root2_sym") && !kp_base_lookup(b, "kp_host_sym"),
	       "swap: System.map read inside the root, not the host's");
	kp_base_free(b);
	r = kp_tree_load_config(&tr, &c, &err);
	tap_ok(t,
	       r == 0 && kp_kconfig_get(&c, "CONFIG_KP_root2") &&
		       !kp_kconfig_get(&c, "CONFIG_KP_host"),
	       "swap: config read inside the root%s%s", r ? ": " : "", r ? err.msg : "");
	tap_is_str(t, kp_kconfig_get(&c, "CONFIG_MODULE_SIG"), "y",
		   "swap: the root's CONFIG_MODULE_SIG (the host's is not set)");
	kp_kconfig_release(&c);
	kp_tree_release(&tr);
	tap_is_int(t, tr.rootdir.fd, 0, "swap: the pinned root released with the tree");
out:
	snprintf(rel, sizeof(rel), "rm -rf '%s'", top);
	if (system(rel) != 0)
		tap_ok(t, 0, "temporary directory removed");
}

int main(void)
{
	struct tap t = { 0 };

	test_tree(&t);
	test_tree_multi(&t);
	test_running(&t);
	test_tree_swapped(&t);
	return tap_done(&t);
}
