// SPDX-License-Identifier: LGPL-2.1-or-later
/* MODVERSIONS and vermagic: kernel/module/version.c and check_modinfo() in kernel/module/main.c. */
#include <errno.h>
#include <string.h>

#include "rules.h"

/* @v's name is @name, whose kp_hash_string() is @hash. */
static bool same_name(const struct kp_version *v, const char *name, uint32_t hash)
{
	return v->name == name || (v->hash == hash && !strcmp(v->name, name));
}

/* @list indexed by name into @ld->ver_index; 0, or -1 (out of memory: no index). */
static int index_versions(struct kp_loading *ld, const struct kp_version *list, size_t n)
{
	kp_loading_release(ld);
	if (kp_symbol_index_init(&ld->ver_index, n) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (kp_symbol_index_add_hashed(&ld->ver_index, list[i].name, list[i].hash,
					       (void *)&list[i]) < 0) {
			kp_symbol_index_release(&ld->ver_index);
			return -1;
		}
	}
	ld->ver_index_of = list;
	return 0;
}

/*
 * The first entry named @name in @list, as the kernel's strcmp() walk finds it. When the
 * list has no name twice, any match is the first: the walk starts at @ld's hint (where the
 * last lookup ended: the lists mostly follow .symtab order). modpost writes __versions in
 * the order of the objects' symbol tables, which the link can reorder (amdgpu: thousands
 * of misses, 28 % of its hook): at the first miss of a long list an index by name takes
 * over, whose first entry per name is the walk's.
 */
static const struct kp_version *find_version(struct kp_loading *ld, const struct kp_version *list,
					     size_t n, bool distinct, const char *name,
					     uint32_t hash)
{
	size_t start = 0;

	if (ld->ver_index_of == list) {
		const struct kp_symbol_index_entry *e =
			kp_symbol_index_find_hashed(&ld->ver_index, name, hash);

		return e ? e->value : NULL;
	}
	if (distinct && ld->ver_hint < n) {
		start = ld->ver_hint;
		if (same_name(&list[start], name, hash)) {
			ld->ver_hint = start + 1;
			return &list[start];
		}
		if (n >= 64 && index_versions(ld, list, n) == 0)
			return find_version(ld, list, n, distinct, name, hash);
	}
	for (size_t k = 0; k < n; k++) {
		size_t i = start + k < n ? start + k : start + k - n;

		if (same_name(&list[i], name, hash)) {
			ld->ver_hint = i + 1;
			return &list[i];
		}
	}
	return NULL;
}

void kp_loading_release(struct kp_loading *ld)
{
	if (ld->ver_index_of)
		kp_symbol_index_release(&ld->ver_index);
	ld->ver_index_of = NULL;
}

static bool bad_version(struct kp_sim_ctx *c, struct kp_loading *ld, const char *symname,
			const struct kp_version *ver, const struct kp_found *fs)
{
	kp_msg(c, ld, "%s: disagrees about version of symbol %s", ld->info_name, symname);
	kp_finding(ld->v, "crc-mismatch", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, symname,
		   "was built against %s with CRC 0x%08x, the kernel has 0x%08x", symname, ver->crc,
		   fs->crc);
	return false;
}

/*
 * check_version(): kernel/module/version.c v5.19+ (kernel/module.c before), same logic since
 * 4.x; v6.14+ uses only the extended tables when the module has them (no force-load path,
 * a missing entry is accepted with a one-time warning, also on Debian).
 */
bool kp_rule_check_version(struct kp_sim_ctx *c, struct kp_loading *ld, const char *symname,
			   const struct kp_found *fs)
{
	const struct kp_module *m = ld->m;
	const struct kp_version *ver;
	uint32_t hash;

	if (!c->f->modversions)
		return true;
	/* Exporting module didn't supply crcs?  OK, we're already tainted. */
	if (!fs->has_crc)
		return true;
	hash = symname == fs->name ? fs->name_hash : kp_hash_string(symname);
	/* elf_validity_cache_index_versions(): IGNORE_MODVERSIONS zeroes the ext indices too */
	if (c->p->has[KP_F_EXT_MODVERSIONS] && m->has_ext_versions &&
	    !(c->f->init_flags & KP_INIT_IGNORE_MODVERSIONS)) {
		ver = find_version(ld, m->ext_versions, m->next_versions, m->ext_versions_distinct,
				   symname, hash);
		if (ver)
			return ver->crc == fs->crc || bad_version(c, ld, symname, ver, fs);
		if (!kp_once_done(c, KP_ONCE_NO_EXT_VERSION)) {
			kp_msg(c, ld, "%s: no extended symbol version for %s", ld->info_name,
			       symname);
			kp_once_mark(c, KP_ONCE_NO_EXT_VERSION);
		}
		return true;
	}
	/* No versions at all?  modprobe --force does this. */
	if (!ld->has_versions)
		return kp_try_to_force_load(c, ld, symname) == 0;
	ver = find_version(ld, m->versions, m->nversions, m->versions_distinct, symname, hash);
	if (ver)
		return ver->crc == fs->crc || bad_version(c, ld, symname, ver, fs);
	/* "Broken toolchain": upstream warns once and accepts; Debian warns and rejects. */
	if (c->f->missing_version_fatal) {
		kp_msg(c, ld, "%s: no symbol version for %s", ld->info_name, symname);
		kp_finding(
			ld->v, "missing-symbol-version", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, symname,
			"__versions has no entry for %s (rejected by this distribution's kernel)",
			symname);
		return false;
	}
	if (!kp_once_done(c, KP_ONCE_NO_VERSION)) {
		kp_msg(c, ld, "%s: no symbol version for %s", ld->info_name, symname);
		kp_once_mark(c, KP_ONCE_NO_VERSION);
	}
	return true;
}

/* check_modstruct_version(): the CRC of module_layout (v2.6.x … v6.12; -ENOEXEC on mismatch). */
int kp_rule_check_modstruct_version(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	struct kp_found fs;

	if (!c->f->modversions || !kp_find_symbol(c, "module_layout", true, &fs))
		return 0;
	return kp_rule_check_version(c, ld, "module_layout", &fs) ? 0 : -ENOEXEC;
}

/* same_magic(): with MODVERSIONS and __versions, the release (first word) is not compared. */
static bool same_magic(const char *a, const char *b, bool has_crcs)
{
	if (has_crcs) {
		a += strcspn(a, " ");
		b += strcspn(b, " ");
	}
	return !strcmp(a, b);
}

/* check_modinfo(): vermagic and (v6.4+) livepatch support (v4.x … v7.2). */
int kp_rule_check_modinfo_vermagic(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	/* MODULE_INIT_IGNORE_VERMAGIC: modmagic = NULL, as if the module had none */
	const char *modmagic =
		(c->f->init_flags & KP_INIT_IGNORE_VERMAGIC) ? NULL : ld->m->vermagic;

	if (!modmagic) {
		int err = kp_try_to_force_load(c, ld, "bad vermagic");

		if (err) {
			kp_finding(ld->v, "no-vermagic", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
				   "the module has no vermagic and the kernel cannot force-load");
			return err;
		}
	} else if (c->f->vermagic &&
		   !same_magic(modmagic, c->f->vermagic, c->f->modversions && ld->has_versions)) {
		kp_msg(c, ld, "%s: version magic '%s' should be '%s'", ld->info_name, modmagic,
		       c->f->vermagic);
		kp_finding(ld->v, "vermagic-mismatch", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
			   "built for '%s', the kernel is '%s'", modmagic, c->f->vermagic);
		return -ENOEXEC;
	}
	/* check_modinfo_livepatch(): here v6.4+, among check_modinfo()'s taints before (taint.c) */
	if (ld->m->livepatch && !c->f->livepatch && c->p->has[KP_F_TAINT_AFTER_DUP]) {
		kp_msg(c, ld,
		       "%s: module is marked as livepatch module, but livepatch support is "
		       "disabled",
		       ld->name);
		return -ENOEXEC;
	}
	return 0;
}
