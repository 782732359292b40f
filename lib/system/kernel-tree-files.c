// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The kernel-side files of a tree under a root, where distributions put them (Module.symvers,
 * config, System.map, vmlinux; Debian's "build" link), and the kernel's exports and config
 * loaded from them.
 */
#include <elf.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/kernel-base.h"
#include "kernel/kernel-base-cached.h"
#include "file/bytes.h"
#include "kernel-tree.h"
#include "kernel-tree-internal.h"
#include "file/rootfs.h"

/* @tmpl with every "%s" replaced by @release (malloc'ed). */
static char *expand(const char *tmpl, const char *release)
{
	size_t rl = strlen(release), n = strlen(tmpl) + 1;
	char *out, *o;

	for (const char *p = strstr(tmpl, "%s"); p; p = strstr(p + 2, "%s"))
		n += rl;
	out = o = malloc(n);
	if (!out)
		return NULL;
	while (*tmpl) {
		if (tmpl[0] == '%' && tmpl[1] == 's') {
			memcpy(o, release, rl);
			o += rl;
			tmpl += 2;
		} else {
			*o++ = *tmpl++;
		}
	}
	*o = '\0';
	return out;
}

/* ROOT/@tmpl (with %s = release, symlinks resolved inside ROOT) if it is a regular file. */
static char *candidate(const struct kp_tree *t, const char *tmpl)
{
	char *rel, *path;

	rel = expand(tmpl, t->release);
	if (!rel)
		return NULL;
	path = kp_root_resolve(t->root, rel);
	free(rel);
	if (path && !kp_is_file(path)) {
		free(path);
		return NULL;
	}
	return path;
}

/*
 * @name inside the tree's "build" directory: <modules dir>/build (Debian's link
 * to usr/src/linux-headers-<release>, absolute up to bullseye, relative since),
 * under lib/modules and then usr/lib/modules, resolved inside the root.
 */
static char *in_build(const struct kp_tree *t, const char *name)
{
	static const char *const bases[] = { "lib/modules/%s/build/", "usr/lib/modules/%s/build/" };
	char *path = NULL;

	for (size_t i = 0; i < KP_ARRAY_SIZE(bases) && !path; i++) {
		char *tmpl;

		if (asprintf(&tmpl, "%s%s", bases[i], name) < 0)
			return NULL;
		path = candidate(t, tmpl);
		free(tmpl);
	}
	return path;
}

static char *first_of(const struct kp_tree *t, const char *const *fmts, size_t n,
		      const char *build_name)
{
	char *p = build_name ? in_build(t, build_name) : NULL;

	for (size_t i = 0; i < n && !p; i++)
		p = candidate(t, fmts[i]);
	return p;
}

/* A vmlinux worth reading: ELF (or compressed) with a __ksymtab section. */
static bool usable_vmlinux(const char *path)
{
	unsigned char head[SELFMAG];
	bool ok = false;
	Elf *elf;
	struct stat st;
	int fd = kp_open_regular(path, &st, NULL); /* a FIFO named vmlinux must not block */
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (fd < 0)
		return false;
	if (read(fd, head, sizeof(head)) != (ssize_t)sizeof(head)) {
		close(fd);
		return false;
	}
	if (memcmp(head, ELFMAG, SELFMAG)) {
		close(fd);
		return kp_detect_compression(head, sizeof(head)) != KP_COMP_NONE;
	}
	if (elf_version(EV_CURRENT) == EV_NONE) {
		close(fd);
		return false;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL); /* not mapped: no SIGBUS if it shrinks */
	if (elf && elf_getshdrstrndx(elf, &shstrndx) == 0) {
		while (!ok && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			const char *name;

			if (!gelf_getshdr(scn, &sh))
				break;
			name = elf_strptr(elf, shstrndx, sh.sh_name);
			ok = name && !strcmp(name, "__ksymtab") && sh.sh_type != SHT_NOBITS;
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return ok;
}

void kp_tree_find_files(struct kp_tree *t)
{
	static const char *const symvers[] = {
		"usr/src/linux-headers-%s/Module.symvers",
		"boot/symvers-%s.gz",
		"boot/symvers-%s.xz",
		"boot/symvers-%s.zst",
		"boot/symvers-%s",
		"lib/modules/%s/symvers.gz",
		"lib/modules/%s/symvers.xz",
		"lib/modules/%s/symvers.zst",
		"usr/lib/modules/%s/symvers.gz",
		"usr/lib/modules/%s/symvers.xz",
		"usr/lib/modules/%s/symvers.zst",
	};
	static const char *const config[] = {
		"boot/config-%s",
		"lib/modules/%s/config",
		"usr/lib/modules/%s/config",
		"usr/src/linux-headers-%s/.config",
	};
	static const char *const maps[] = {
		"usr/lib/debug/boot/System.map-%s",
		"usr/lib/debug/lib/modules/%s/System.map", /* sid's -dbg (7.x) */
		"boot/System.map-%s",
		"lib/modules/%s/System.map",
		"usr/lib/modules/%s/System.map",
	};
	static const char *const vmlinux[] = {
		"usr/lib/debug/boot/vmlinux-%s",
		"usr/lib/debug/lib/modules/%s/vmlinux",
		"boot/vmlinux-%s",
		"boot/vmlinux-%s.xz",
		"boot/vmlinux-%s.gz",
		"boot/vmlinux-%s.zst",
		"lib/modules/%s/vmlinux",
		"usr/lib/modules/%s/vmlinux",
	};

	t->symvers_path = first_of(t, symvers, KP_ARRAY_SIZE(symvers), "Module.symvers");
	t->config_path = first_of(t, config, KP_ARRAY_SIZE(config), NULL);
	if (!t->config_path)
		t->config_path = in_build(t, ".config");
	for (size_t i = 0; i < KP_ARRAY_SIZE(maps) && !t->system_map_path; i++) {
		char *p = candidate(t, maps[i]);

		/* Debian's stub ("The real System.map is in the ...-dbg package") has no symbol */
		if (p && !kp_system_map_has_symbols(p)) {
			if (!t->system_map_stub)
				t->system_map_stub = p;
			else
				free(p);
			p = NULL;
		}
		t->system_map_path = p;
	}
	for (size_t i = 0; i <= KP_ARRAY_SIZE(vmlinux) && !t->vmlinux_path; i++) {
		char *p = i < KP_ARRAY_SIZE(vmlinux) ? candidate(t, vmlinux[i])
						     : in_build(t, "vmlinux");

		if (p && !usable_vmlinux(p)) {
			free(p);
			p = NULL;
		}
		t->vmlinux_path = p;
	}
}

char *kp_tree_btf_vmlinux(const struct kp_tree *t)
{
	char *p = in_build(t, "vmlinux");

	return p ? p : t->vmlinux_path ? strdup(t->vmlinux_path) : NULL;
}

int kp_tree_load_base(const struct kp_tree *t, struct kp_kernel_base *b, bool all,
		      struct kp_err *err)
{
	return kp_tree_load_base_cached(t, b, all, NULL, err);
}

int kp_tree_load_base_cached(const struct kp_tree *t, struct kp_kernel_base *b, bool all,
			     struct kp_base_cache *cache, struct kp_err *err)
{
	bool loaded = false;

	if (kp_base_set_kernel_release(b, t->release, err) < 0)
		return -1;
	if (t->symvers_path) {
		if (kp_base_load_symvers_cached(b, &t->rootdir, t->symvers_path, cache, NULL, err) <
		    0)
			return -1;
		loaded = true;
	}
	if (t->vmlinux_path && (all || !loaded)) {
		if (kp_base_load_vmlinux_in(b, &t->rootdir, t->vmlinux_path, err) < 0)
			return -1;
		loaded = true;
	}
	if (t->system_map_path && (all || !loaded)) {
		if (kp_base_load_system_map_in(b, &t->rootdir, t->system_map_path, err) < 0)
			return -1;
		loaded = true;
	}
	if (loaded)
		return 0;
	return kp_err_set(err,
			  "%s: no kernel exports for %s: no Module.symvers (build/, "
			  "usr/src/linux-headers-%s/, boot/symvers-%s.gz), vmlinux or System.map%s",
			  t->root, t->release, t->release, t->release,
			  t->system_map_stub ? " (only Debian's stub System.map; the real one is "
					       "in the -dbg package)"
					     : "");
}

bool kp_tree_has_exports(const struct kp_tree *t)
{
	return t->symvers_path || t->vmlinux_path || t->system_map_path;
}

int kp_tree_load_config(const struct kp_tree *t, struct kp_kconfig *c, struct kp_err *err)
{
	if (!t->config_path)
		return kp_err_set(err,
				  "%s: no kernel config for %s (boot/config-%s, "
				  "lib/modules/%s/config, build/.config)",
				  t->root, t->release, t->release, t->release);
	return kp_kconfig_load_in(c, &t->rootdir, t->config_path, err);
}
