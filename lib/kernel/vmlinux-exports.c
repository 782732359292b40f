// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Exports of a linked vmlinux: the __ksymtab* tables that the loader's
 * find_symbol() searches (kernel/module/main.c), with names and namespaces in
 * __ksymtab_strings and CRCs in the __kcrctab* table of the same class.
 *
 * Unlike a .ko (lib/read/exports.c), a linked image has no relocations left for
 * these tables: each field holds either an absolute address (pointer-sized)
 * or, with HAVE_ARCH_PREL32_RELOCATIONS (4.19+ on x86, arm64, ...), an s32
 * offset from the field's own address (sh_addr + offset). The layout is the
 * first of {PREL32 or absolute} x {3 or 2 fields} for which every name field
 * lands on a string in __ksymtab_strings, as in lib/read/exports.c.
 *
 * A CRC entry is a u32 (4.10+; literal since 5.19, resolved at link before)
 * or an unsigned long holding the absolute __crc_ value (<= 4.9): both read
 * as the number in the field. CONFIG_MODULE_REL_CRCS (ppc64, 4.10 .. 5.18)
 * is not decoded.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file/bytes.h"
#include "read/elf-file.h"
#include "kernel-base-internal.h"

struct layout {
	unsigned width;	 /* bytes per field */
	unsigned fields; /* value, name[, namespace] */
	bool prel32;
};

struct decoded {
	const char *name;
	const char *ns; /* NULL: none */
};

struct image {
	const char *path;
	struct kp_elf e;
	size_t strs; /* __ksymtab_strings */
	uint64_t addr_mask;
};

/* Where field @off of section @idx points under @l, as a link-time address. */
static bool field_target(const struct image *im, size_t idx, uint64_t off, const struct layout *l,
			 uint64_t *addr, uint64_t *raw)
{
	uint64_t v;

	if (!kp_elf_read_uint(&im->e, idx, off, l->width, &v))
		return false;
	*raw = v;
	if (l->prel32)
		v = im->e.sections[idx].addr + off + (uint64_t)(int64_t)(int32_t)(uint32_t)v;
	*addr = v & im->addr_mask;
	return true;
}

/* The string at link-time address @addr inside __ksymtab_strings, or NULL. */
static const char *string_at(const struct image *im, uint64_t addr)
{
	const struct kp_section *s = &im->e.sections[im->strs];

	if (addr < s->addr || addr - s->addr >= s->size)
		return NULL;
	return kp_elf_string_at(&im->e, im->strs, addr - s->addr, NULL);
}

static bool plain_string(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || (unsigned char)*s >= 0x7f)
			return false;
	return true;
}

static bool try_layout(const struct image *im, size_t tab, const struct layout *l,
		       struct decoded *out, size_t n)
{
	const struct kp_section *strs = &im->e.sections[im->strs];
	uint64_t esize = (uint64_t)l->width * l->fields;

	for (size_t i = 0; i < n; i++) {
		uint64_t base = i * esize, value, name, ns, raw;

		if (!field_target(im, tab, base, l, &value, &raw) ||
		    !field_target(im, tab, base + l->width, l, &name, &raw))
			return false;
		if (value >= strs->addr && value - strs->addr < strs->size)
			return false;
		out[i].name = string_at(im, name);
		if (!out[i].name || !out[i].name[0] || !plain_string(out[i].name))
			return false;
		out[i].ns = NULL;
		if (l->fields < 3)
			continue;
		if (!field_target(im, tab, base + 2 * l->width, l, &ns, &raw))
			return false;
		if (raw == 0)
			continue; /* NULL pointer / zero offset: no namespace (5.4 .. 6.4) */
		out[i].ns = string_at(im, ns);
		if (!out[i].ns || !plain_string(out[i].ns))
			return false;
		if (!out[i].ns[0])
			out[i].ns = NULL; /* "" since 6.5 */
	}
	return true;
}

static int read_crcs(struct image *im, enum kp_export_table t, struct kp_ksym *k, size_t n,
		     struct kp_err *err)
{
	size_t idx = kp_elf_find_section(&im->e, kp_export_tables[t].kcrctab);
	const struct kp_section *c;
	unsigned w;

	if (!idx || !n)
		return 0;
	c = &im->e.sections[idx];
	if (!c->data)
		return kp_err_set(err, "%s: %s has no contents in the file", im->path,
				  kp_export_tables[t].kcrctab);
	if (c->size % n || (c->size / n != 4 && c->size / n != 8))
		return kp_err_set(err, "%s: %s has %llu bytes for %zu exports", im->path,
				  kp_export_tables[t].kcrctab, (unsigned long long)c->size, n);
	w = (unsigned)(c->size / n);
	for (size_t i = 0; i < n; i++) {
		uint64_t v;

		if (!kp_elf_read_uint(&im->e, idx, (uint64_t)i * w, w, &v))
			return kp_err_set(err, "%s: %s is truncated", im->path,
					  kp_export_tables[t].kcrctab);
		k[i].has_crc = true;
		k[i].crc = (uint32_t)v;
	}
	return 0;
}

/* Pending kflagstab layout: one __ksymtab, GPL-only as bit 0 of a byte per entry. */
static int read_flagstab(struct image *im, struct kp_ksym *k, size_t n, struct kp_err *err)
{
	size_t idx = kp_elf_find_section(&im->e, "__kflagstab");

	if (!idx)
		return 0;
	if (im->e.sections[idx].size != n)
		return kp_err_set(err, "%s: __kflagstab has %llu entries for %zu exports", im->path,
				  (unsigned long long)im->e.sections[idx].size, n);
	for (size_t i = 0; i < n; i++) {
		uint64_t flags;

		if (!kp_elf_read_uint(&im->e, idx, i, 1, &flags))
			return kp_err_set(err, "%s: __kflagstab has no contents in the file",
					  im->path);
		k[i].gpl_only = flags & KP_KSYM_FLAG_GPL_ONLY;
		k[i].table = k[i].gpl_only ? KP_KSYMTAB_GPL : KP_KSYMTAB;
	}
	return 0;
}

static int read_table(struct kp_kernel_base *b, struct image *im, enum kp_export_table t,
		      size_t *total, struct kp_err *err)
{
	static const struct layout layouts[] = {
		{ 4, 3, true },	 { 4, 3, false }, { 4, 2, true },
		{ 4, 2, false }, { 8, 3, false }, { 8, 2, false },
	};
	size_t tab = kp_elf_find_section(&im->e, kp_export_tables[t].ksymtab);
	const struct layout *found = NULL;
	struct decoded *dec = NULL;
	struct kp_ksym *k = NULL;
	const struct kp_section *s;
	size_t n = 0;
	int r = -1;

	if (!tab)
		return 0;
	s = &im->e.sections[tab];
	if (s->size == 0)
		return 0;
	if (!s->data)
		return kp_err_set(err, "%s: %s has no contents (a debuginfo-only vmlinux?)",
				  im->path, kp_export_tables[t].ksymtab);
	dec = kp_calloc(s->size / 8 + 1, sizeof(*dec));
	if (!dec)
		return kp_err_set(err, "out of memory");
	for (size_t i = 0; i < KP_ARRAY_SIZE(layouts) && !found; i++) {
		const struct layout *l = &layouts[i];

		if ((l->width == 8 && !im->e.is64) || (l->width == 4 && !l->prel32 && im->e.is64))
			continue;
		if (s->size % (l->width * l->fields))
			continue;
		n = s->size / (l->width * l->fields);
		if (try_layout(im, tab, l, dec, n))
			found = l;
	}
	if (!found) {
		kp_err_set(err,
			   "%s: cannot decode %s (%llu bytes): no entry layout (absolute or "
			   "PREL32, 2 or 3 fields) names strings in __ksymtab_strings",
			   im->path, kp_export_tables[t].ksymtab, (unsigned long long)s->size);
		goto out;
	}
	k = kp_calloc(n, sizeof(*k));
	if (!k) {
		kp_err_set(err, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		k[i].name = dec[i].name;
		k[i].ns = dec[i].ns;
		k[i].ns_known = true;
		k[i].table = t;
		k[i].gpl_only = kp_export_tables[t].gpl_only;
	}
	if (read_crcs(im, t, k, n, err) < 0)
		goto out;
	if (t == KP_KSYMTAB && read_flagstab(im, k, n, err) < 0)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (kp_base_add(b, &k[i], err) < 0)
			goto out;
	*total += n;
	r = 0;
out:
	free(k);
	free(dec);
	return r;
}

/* "Linux version <release> (...)" from linux_banner, else from the first match in .rodata. */
static int read_release(struct kp_kernel_base *b, struct image *im, struct kp_err *err)
{
	static const char prefix[] = "Linux version ";
	const char *banner = NULL, *end;
	char release[128];

	for (size_t i = 1; i < im->e.nsyms && !banner; i++) {
		const struct kp_sym *sym = &im->e.syms[i];

		if (strcmp(sym->name, "linux_banner") || sym->shndx == SHN_UNDEF ||
		    sym->shndx >= im->e.nsections)
			continue;
		{
			const struct kp_section *sec = &im->e.sections[sym->shndx];

			if (sym->value >= sec->addr && sym->value - sec->addr < sec->size)
				banner = kp_elf_string_at(&im->e, sym->shndx,
							  sym->value - sec->addr, NULL);
		}
	}
	if (!banner) {
		size_t ro = kp_elf_find_section(&im->e, ".rodata");
		const struct kp_section *sec = ro ? &im->e.sections[ro] : NULL;

		if (sec && sec->data)
			banner = memmem(sec->data, sec->size, prefix, sizeof(prefix) - 1);
		if (banner &&
		    !memchr(banner, '\0',
			    sec->size - (size_t)((const unsigned char *)banner - sec->data)))
			banner = NULL;
	}
	if (!banner || strncmp(banner, prefix, sizeof(prefix) - 1))
		return 0;
	banner += sizeof(prefix) - 1;
	end = banner + strcspn(banner, " \n");
	if (end == banner || (size_t)(end - banner) >= sizeof(release))
		return 0;
	snprintf(release, sizeof(release), "%.*s", (int)(end - banner), banner);
	if (kp_base_set_kernel_release(b, release, err) < 0)
		return kp_base_err_prefix(err, im->path);
	return 0;
}

static int load_image(struct kp_kernel_base *b, const char *path, unsigned char *data, size_t len,
		      struct kp_err *err)
{
	struct image im = { .path = path };
	size_t total = 0;
	int r = -1;

	if (kp_elf_open(&im.e, data, len, err) < 0)
		return kp_base_err_prefix(err, path);
	im.addr_mask = im.e.is64 ? UINT64_MAX : UINT32_MAX;
	if (im.e.type == ET_REL) {
		kp_err_set(err, "%s: a relocatable object (a module?), not a linked vmlinux", path);
		goto out;
	}
	if (im.e.type != ET_EXEC && im.e.type != ET_DYN) {
		kp_err_set(err, "%s: ELF type %u is not a linked vmlinux", path, im.e.type);
		goto out;
	}
	if (!kp_elf_find_section(&im.e, "__ksymtab") &&
	    !kp_elf_find_section(&im.e, "__ksymtab_gpl")) {
		kp_err_set(err,
			   "%s: no __ksymtab sections: not a vmlinux (Debian's "
			   "linux-headers vmlinux holds only BTF; the full one is in the -dbg "
			   "package)",
			   path);
		goto out;
	}
	im.strs = kp_elf_find_section(&im.e, "__ksymtab_strings");
	if (!im.strs || !im.e.sections[im.strs].data) {
		kp_err_set(err, "%s: no __ksymtab_strings contents", path);
		goto out;
	}
	kp_base_begin_load(b, KP_SRC_VMLINUX);
	for (int t = 0; t < KP_KSYMTAB_NTABLES; t++)
		if (read_table(b, &im, (enum kp_export_table)t, &total, err) < 0)
			goto out;
	if (!total) {
		kp_err_set(err, "%s: the export tables are empty", path);
		goto out;
	}
	r = read_release(b, &im, err);
out:
	kp_elf_close(&im.e);
	return r;
}

int kp_base_load_vmlinux(struct kp_kernel_base *b, const char *path, struct kp_err *err)
{
	return kp_base_load_vmlinux_in(b, NULL, path, err);
}

int kp_base_load_vmlinux_in(struct kp_kernel_base *b, const struct kp_root_dir *root,
			    const char *path, struct kp_err *err)
{
	struct kp_bytes bytes;
	int r;

	/*
	 * Read, not mapped: a vmlinux rewritten while it is read gives an error, not SIGBUS.
	 * A debug vmlinux is hundreds of MiB: the cap is four times the module cap.
	 */
	if (kp_bytes_read_in(root, path, KP_DEFAULT_MAX_SIZE * 4, &bytes, err) < 0)
		return kp_base_err_prefix(err, path);
	r = load_image(b, path, bytes.data, bytes.len, err);
	kp_bytes_release(&bytes);
	return r;
}
