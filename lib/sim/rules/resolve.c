// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Symbol resolution: simplify_symbols(), resolve_symbol(),
 * verify_namespace_is_imported() and ref_module() of kernel/module/main.c.
 */
#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "rules.h"

/* mod_strncmp(): v6.16+, '-' and '_' compare equal (build-time module name mangling). */
static bool modname_prefix_equal(const char *pat, const char *modname, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char a = pat[i] == '-' ? '_' : pat[i];
		char b = modname[i] == '-' ? '_' : modname[i];

		if (a != b)
			return false;
		if (!a)
			break;
	}
	return true;
}

/*
 * verify_module_namespace(): v6.16+, "module:<pat>[,<pat>...]" grants the export to modules
 * whose mod->name matches a pattern (a trailing '*' is a prefix match).
 */
static bool verify_module_namespace(const char *ns, const char *modname)
{
	static const char prefix[] = "module:";
	size_t modlen = strlen(modname);
	const char *sep;

	if (strncmp(ns, prefix, sizeof(prefix) - 1))
		return false;
	for (ns += sizeof(prefix) - 1; *ns; ns = sep) {
		size_t len;
		bool glob = false;

		sep = ns + strcspn(ns, ",");
		len = (size_t)(sep - ns);
		if (sep[-1] == '*') { /* as the kernel: the byte before the separator */
			len--;
			glob = true;
		}
		if (*sep)
			sep++;
		if (modname_prefix_equal(ns, modname, len) && (glob || len == modlen))
			return true;
	}
	return false;
}

/*
 * verify_namespace_is_imported(): v5.4+ (fatal unless
 * CONFIG_MODULE_ALLOW_MISSING_NAMESPACE_IMPORTS); v6.16+ first tries module: namespaces.
 */
static int verify_namespace_is_imported(struct kp_sim_ctx *c, struct kp_loading *ld,
					const char *name, const char *ns)
{
	if (!c->p->has[KP_F_NAMESPACES] || !ns || !ns[0])
		return 0;
	if (c->p->has[KP_F_MODULE_NAMESPACES] && verify_module_namespace(ns, ld->name))
		return 0;
	for (size_t i = 0; i < ld->m->nimport_ns; i++)
		if (!strcmp(ld->m->import_ns[i], ns))
			return 0;
	kp_msg(c, ld, "%s: module uses symbol (%s) from namespace %s, but does not import it.",
	       ld->name, name, ns);
	if (c->f->allow_missing_ns)
		return 0;
	if (c->p->has[KP_F_MODULE_NAMESPACES] && !strncmp(ns, "module:", 7))
		kp_finding(ld->v, "missing-namespace", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, name,
			   "%s is exported only to the modules %s, and %s is not one of them", name,
			   ns + 7, ld->name);
	else
		kp_finding(ld->v, "missing-namespace", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, name,
			   "uses %s from namespace %s without MODULE_IMPORT_NS(%s)", name, ns, ns);
	return -EINVAL;
}

enum resolved { RESOLVED, NOT_FOUND, REJECTED };

/*
 * resolve_symbol(), v5.9 … v6.12: find, using_gplonly, inherit_taint, CRC, namespace,
 * ref_module.
 */
static enum resolved resolve_symbol(struct kp_sim_ctx *c, struct kp_loading *ld,
				    const struct kp_import *imp, const struct kp_ksym *base_hit,
				    int *err)
{
	bool gplok = !(ld->v->taints & (1UL << KP_TAINT_PROPRIETARY_MODULE));
	const char *name = imp->name;
	struct kp_found fs;

	if (!kp_find_symbol_k(c, name, imp->hash, base_hit, gplok, &fs))
		return NOT_FOUND;
	/* check_exported_symbol() (<= v5.11): find_symbol() itself warns, before anything else. */
	if (fs.gpl_future && !gplok)
		kp_msg(c, ld,
		       "Symbol %s is being used by a non-GPL module, which will not be "
		       "allowed in the future",
		       name);
	if (fs.gpl_only)
		ld->using_gplonly_symbols = true;
	if (!kp_rule_inherit_taint(c, ld, &fs, name))
		return NOT_FOUND;
	if (!kp_rule_check_version(c, ld, name, &fs)) {
		*err = -EINVAL;
		return REJECTED;
	}
	*err = verify_namespace_is_imported(c, ld, name, fs.ns);
	if (*err)
		return REJECTED;
	/* ref_module(): owners in the simulation are live; nothing to wait for. */
	return RESOLVED;
}

static bool ignore_undef_symbol(const struct kp_sim_ctx *c, uint16_t machine, const char *name)
{
	/* arch hooks: x86 _GLOBAL_OFFSET_TABLE_ (v5.12+), ppc64 .TOC. (kp_loader_defines) */
	if ((machine == EM_386 || machine == EM_X86_64) && c->p->has[KP_F_GOT_EXEMPT] &&
	    !strcmp(name, "_GLOBAL_OFFSET_TABLE_"))
		return true;
	return kp_loader_defines(machine, name);
}

/*
 * simplify_symbols() before f9d69d5e7bde ("module: Fix kernel panic when a symbol st_shndx is
 * out of bounds", 7.0; 6.1.168, 6.12.80): the default branch adds
 * info->sechdrs[st_shndx].sh_addr, a read past the section header table. Where it lands in
 * the buffer holding the module (oob-read.c) decides: leftover bytes (the symbol gets a
 * garbage address and the load goes on, as a 5.10 boot shows for e_shnum + 2), the guard
 * page (the kernel oopses), or beyond (unpredictable).
 */
static int unchecked_section_index(struct kp_sim_ctx *c, struct kp_loading *ld,
				   const struct kp_special_sym *s)
{
	const struct kp_module *m = ld->m;
	uint64_t entsize = m->is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	uint64_t field = m->is64 ? offsetof(Elf64_Shdr, sh_addr) : offsetof(Elf32_Shdr, sh_addr);
	uint64_t off = m->shoff + (uint64_t)s->shndx * entsize + field;
	const char *line;

	switch (kp_oob_read(m, c->f->page_shift, off, m->is64 ? 8 : 4)) {
	case KP_OOB_INSIDE:
		kp_finding(ld->v, "invalid-section-index", KP_SEV_WARNING, KP_CONS_WARN, s->name,
			   "%s has section index %u, past the %u sections: this kernel reads "
			   "past its section table instead of refusing the module (inside the "
			   "module's buffer: the symbol gets a garbage address, the load goes on)",
			   s->name, s->shndx, m->shnum);
		return 0;
	case KP_OOB_BEYOND:
		kp_finding(
			ld->v, "kernel-oops", KP_SEV_WARNING, KP_CONS_WARN, s->name,
			"%s has section index %u, past the %u sections: this kernel reads "
			"%llu bytes into the image, past its buffer and the guard page after it: "
			"it oopses unless other memory happens to be mapped there",
			s->name, s->shndx, m->shnum, (unsigned long long)off);
		return 0;
	case KP_OOB_UNKNOWN:
		kp_finding(ld->v, "kernel-oops", KP_SEV_WARNING, KP_CONS_WARN, s->name,
			   "%s has section index %u, past the %u sections: this kernel reads "
			   "sechdrs[%u].sh_addr at byte %llu of a %llu-byte image, past it: in "
			   "the rest of its last page (a garbage address, the load goes on) or "
			   "in the guard page after it (an oops) depending on the kernel's page "
			   "size, which is not known (give --kernel-config)",
			   s->name, s->shndx, m->shnum, s->shndx, (unsigned long long)off,
			   (unsigned long long)m->image_size);
		return 0;
	case KP_OOB_GUARD:
		break;
	}
	if ((line = kp_oob_fault_line(m->machine)))
		kp_msg(c, ld, "%s", line);
	kp_finding(ld->v, "kernel-oops", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, s->name,
		   "%s has section index %u, past the %u sections: this kernel reads "
		   "sechdrs[%u].sh_addr at byte %llu of a %llu-byte image, in the guard page "
		   "after the buffer: the kernel oopses (global taint D, the loading process is "
		   "killed)",
		   s->name, s->shndx, m->shnum, s->shndx, (unsigned long long)off,
		   (unsigned long long)m->image_size);
	return KP_ERR_OOPS;
}

/*
 * The st_shndx switch of simplify_symbols() for a defined symbol (all versions; the
 * st_shndx >= e_shnum check is KP_F_SHNDX_CHECK). Returns the error it assigns, or 0.
 */
static int defined_symbol(struct kp_sim_ctx *c, struct kp_loading *ld,
			  const struct kp_special_sym *s)
{
	if (s->shndx == SHN_COMMON) {
		if (!strncmp(s->name, "__gnu_lto", 9))
			return 0;
		kp_msg(c, ld, "%s: please compile with -fno-common", ld->name);
		kp_finding(ld->v, "common-symbol", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, s->name,
			   "%s is a common (SHN_COMMON) symbol: modules must be built with "
			   "-fno-common",
			   s->name);
		return -ENOEXEC;
	}
	if (s->shndx == KP_SHN_LIVEPATCH || s->shndx < ld->m->shnum)
		return 0;
	if (!c->p->has[KP_F_SHNDX_CHECK])
		return unchecked_section_index(c, ld, s);
	kp_msg(c, ld, "%s: Symbol %s has an invalid section index %u (max %u)", ld->name, s->name,
	       s->shndx, ld->m->shnum - 1);
	kp_finding(ld->v, "invalid-section-index", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, s->name,
		   "%s has section index %u, past the module's %u sections", s->name, s->shndx,
		   ld->m->shnum);
	return -ENOEXEC;
}

/*
 * resolve_symbol() before v6.13 (5.10 … 6.12): the name running into the guard page
 * (name_into_guard_page()) begins an export in a table find_symbol() searches, so its
 * cmp_name() reads the name on into the page, module_mutex held: the oops comes there, not
 * in the printk (no hang before 5.13), and the lock stays held (stall.c). A weak symbol's
 * too: simplify_symbols() calls resolve_symbol_wait() for every SHN_UNDEF one and looks at
 * the binding only after find_symbol() (5.10.262, 6.1.192, 6.12.118 sources; booted:
 * strtab_weakprefix_then).
 */
static int name_begins_export(struct kp_sim_ctx *c, struct kp_loading *ld,
			      const struct kp_import *imp)
{
	const struct kp_module *m = ld->m;
	bool gplok = !(ld->v->taints & (1UL << KP_TAINT_PROPRIETARY_MODULE));
	struct kp_prefix_hit hit;
	const char *line;

	if (!kp_find_symbol_prefix(c, ld->node, imp->name, strlen(imp->name), gplok, &hit))
		return 0;
	if ((line = kp_oob_fault_line(m->machine)))
		kp_msg(c, ld, "%s", line);
	ld->v->holds_module_mutex = true;
	kp_finding(ld->v, "kernel-oops", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, imp->name,
		   "the name of %sundefined symbol %u (%s...) runs to the end of the file, which "
		   "fills its last page, and begins %s's export %s: this kernel reads names from "
		   "the file (no string-table check before 6.13) and find_symbol(), called by "
		   "resolve_symbol() holding module_mutex, compares it with that export and reads "
		   "it on into the guard page after the loader's copy: the kernel oopses (global "
		   "taint D, the loading process is killed) and the lock stays held, so every "
		   "later module load blocks for ever",
		   imp->weak ? "weak " : "", (unsigned)imp->symidx, imp->name, hit.owner, hit.name);
	return KP_ERR_OOPS;
}

/*
 * simplify_symbols() before v6.13 (no elf_validity_cache_strtab()): a strong undefined
 * symbol whose name, read from the file at .strtab's offset + st_name, runs to the end of a
 * module that fills its last page. find_symbol()'s strcmp() (a name that begins an export up
 * to there) or else the "Unknown symbol" printk reads it on into the unmapped guard page
 * after the loader's vmalloc'd copy: the 6.1 and 6.12 oracles (strtab_page) oops in string()
 * under vsnprintf() and the loader is killed. Before v5.13 (KP_F_PRINTK_LOCKLESS) that
 * printk formats under logbuf_lock with interrupts off: the 5.10.262 oracle prints nothing
 * more (the oops only with oops=panic, whose panic() busts the lock) and the machine hangs.
 * A name whose bytes begin an export that find_symbol() searches faults there first
 * (find-prefix.c), holding module_mutex, outside printk: name_begins_export(), a weak name
 * too. Any other weak name is not found, every comparison stopping inside its bytes, and a
 * weak symbol not found is never printed: simplify_symbols() goes on (booted on 5.10.262,
 * 6.1.192, 6.12.118: strtab_weakpage_then).
 */
static int name_into_guard_page(struct kp_sim_ctx *c, struct kp_loading *ld,
				const struct kp_import *imp)
{
	const struct kp_module *m = ld->m;
	const char *line;
	int err;

	if (c->p->has[KP_F_SYMSTRTAB_CHECKS] || !m->import_name_past_end ||
	    imp->symidx != m->import_name_past_end ||
	    kp_oob_read(m, c->f->page_shift, m->image_size, 1) != KP_OOB_GUARD)
		return 0;
	if ((err = name_begins_export(c, ld, imp)))
		return err;
	if (imp->weak) {
		kp_finding(ld->v, "bad-symbol-strtab", KP_SEV_WARNING, KP_CONS_WARN, imp->name,
			   "the name of weak undefined symbol %u (%s...) runs to the end of the "
			   "file, which fills its last page: this kernel reads names from the file "
			   "(no string-table check before 6.13) and find_symbol() compares it with "
			   "the exports it searches, but no export begins with these bytes, so "
			   "every comparison stops inside them: not found, and a weak symbol that "
			   "is not found is left 0 without a line (once a module exporting a name "
			   "that begins so is loaded, the same comparison reads on into the guard "
			   "page after the loader's copy: an oops)",
			   (unsigned)imp->symidx, imp->name);
		return 0;
	}
	if (!c->p->has[KP_F_PRINTK_LOCKLESS]) {
		ld->v->hangs = true;
		kp_finding(
			ld->v, "kernel-hang", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, imp->name,
			"the name of undefined symbol %u (%s...) runs to the end of the file, "
			"which fills its last page: this kernel reads names from the file (no "
			"string-table check before 6.13) and its \"Unknown symbol\" printk reads "
			"this one on into the guard page after its copy of the module; before "
			"5.13 printk formats its line holding logbuf_lock with interrupts off, "
			"and the oops leaves the lock held: the machine hangs at the next printk "
			"(the oops is never logged; global taint D; a name that begins an "
			"exported one faults in find_symbol() instead: an oops without the hang)",
			(unsigned)imp->symidx, imp->name);
		return KP_ERR_OOPS;
	}
	if ((line = kp_oob_fault_line(m->machine)))
		kp_msg(c, ld, "%s", line);
	kp_finding(ld->v, "kernel-oops", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, imp->name,
		   "the name of undefined symbol %u (%s...) runs to the end of the file, which "
		   "fills its last page: this kernel reads names from the file (no string-table "
		   "check before 6.13) and simplify_symbols() reads this one on into the guard "
		   "page after its copy of the module (find_symbol()'s comparisons or the "
		   "\"Unknown symbol\" printk): the kernel oopses (global taint D, the loading "
		   "process is killed)",
		   (unsigned)imp->symidx, imp->name);
	return KP_ERR_OOPS;
}

/*
 * resolve_symbol() before v6.13 (5.10 … 6.12; no elf_validity_cache_strtab()): an undefined
 * symbol, strong or weak, whose name starts past the end of the file. simplify_symbols() hands
 * info->strtab + st_name, a pointer past the loader's vmalloc'd copy, to resolve_symbol(),
 * which takes module_mutex and calls find_symbol(): its bsearch()'s cmp_name() reads the name's
 * first byte. In the guard page that is an oops with module_mutex held (observed on 6.1.192,
 * 6.12.118, 5.10.262: the loader is killed, the lock stays held and every later load sleeps
 * in mutex_lock(), stall.c). In the rest of the last page it reads zeros (init_on_alloc): an
 * empty name, not found. Beyond the guard page nothing can be said.
 */
static int name_outside_file(struct kp_sim_ctx *c, struct kp_loading *ld,
			     const struct kp_import *imp)
{
	const struct kp_module *m = ld->m;
	uint64_t off = m->import_name_outside_off;
	const char *line;

	if (c->p->has[KP_F_SYMSTRTAB_CHECKS] || !m->import_name_outside ||
	    imp->symidx != m->import_name_outside)
		return 0;
	switch (kp_oob_read(m, c->f->page_shift, off, 1)) {
	case KP_OOB_INSIDE:
		return 0;
	case KP_OOB_UNKNOWN:
		kp_finding(ld->v, "kernel-oops", KP_SEV_WARNING, KP_CONS_WARN, NULL,
			   "the name of undefined symbol %u starts at byte %llu of a %llu-byte "
			   "file, past its end: in the rest of its last page (an empty name, not "
			   "found) or in the guard page after it, where find_symbol() faults "
			   "holding module_mutex (an oops, every later module load blocks), "
			   "depending on the kernel's page size, which is not known (give "
			   "--kernel-config)",
			   (unsigned)imp->symidx, (unsigned long long)off,
			   (unsigned long long)m->image_size);
		return 0;
	case KP_OOB_BEYOND:
		kp_finding(ld->v, "kernel-oops", KP_SEV_WARNING, KP_CONS_WARN, NULL,
			   "the name of undefined symbol %u starts at byte %llu of a %llu-byte "
			   "file, past its buffer and the guard page after it: find_symbol() "
			   "reads it holding module_mutex; the kernel oopses (and every later "
			   "module load blocks) unless other memory happens to be mapped there",
			   (unsigned)imp->symidx, (unsigned long long)off,
			   (unsigned long long)m->image_size);
		return 0;
	case KP_OOB_GUARD:
		break;
	}
	if ((line = kp_oob_fault_line(m->machine)))
		kp_msg(c, ld, "%s", line);
	ld->v->holds_module_mutex = true;
	kp_finding(ld->v, "kernel-oops", KP_SEV_ERROR, KP_CONS_LOAD_FAIL, NULL,
		   "the name of undefined symbol %u starts at byte %llu of a %llu-byte file, in "
		   "the guard page after the loader's copy of it: this kernel reads names from "
		   "the file (no string-table check before 6.13) and resolve_symbol() looks this "
		   "one up with find_symbol() holding module_mutex: the kernel oopses (global "
		   "taint D, the loading process is killed) and the lock stays held, so every "
		   "later module load blocks for ever",
		   (unsigned)imp->symidx, (unsigned long long)off,
		   (unsigned long long)m->image_size);
	return KP_ERR_OOPS;
}

/* An SHN_UNDEF symbol: resolve_symbol_wait() and the Unknown symbol line. */
static int undefined_symbol(struct kp_sim_ctx *c, struct kp_loading *ld,
			    const struct kp_import *imp)
{
	const struct kp_module *m = ld->m;
	const struct kp_ksym *base_hit;
	enum resolved r;
	int err = name_outside_file(c, ld, imp);

	if (err)
		return err;
	err = name_into_guard_page(c, ld, imp);
	if (err)
		return err;
	base_hit = kp_import_base_hit(c, ld, imp);
	r = resolve_symbol(c, ld, imp, base_hit, &err);
	if (r == RESOLVED)
		return 0;
	if (r == NOT_FOUND && (imp->weak || ignore_undef_symbol(c, m->machine, imp->name)))
		return 0;
	if (r == NOT_FOUND)
		err = -ENOENT;
	if (c->p->has[KP_F_ERRNO_IN_UNKNOWN])
		kp_msg(c, ld, "%s: Unknown symbol %s (err %d)", ld->name, imp->name, err);
	else
		kp_msg(c, ld, "%s: Unknown symbol %s (err %d)", ld->name, imp->name,
		       r == NOT_FOUND ? 0 : err);
	if (r == NOT_FOUND) {
		bool gplok = !(ld->v->taints & (1UL << KP_TAINT_PROPRIETARY_MODULE));
		struct kp_found any;

		if (!gplok && kp_find_symbol_k(c, imp->name, imp->hash, base_hit, true, &any) &&
		    any.gpl_only)
			kp_finding(ld->v, "gpl-only-symbol", KP_SEV_ERROR, KP_CONS_LOAD_FAIL,
				   imp->name,
				   "%s is EXPORT_SYMBOL_GPL and the module is "
				   "proprietary (P): not visible to it",
				   imp->name);
		else if (!kp_find_symbol_k(c, imp->name, imp->hash, base_hit, true, &any))
			kp_finding(ld->v, "unknown-symbol", KP_SEV_ERROR, KP_CONS_LOAD_FAIL,
				   imp->name,
				   "%s is not exported by the kernel or any loaded "
				   "module",
				   imp->name);
	}
	return err;
}

/*
 * simplify_symbols(): every .symtab symbol in index order; the last error wins (all versions).
 * Undefined symbols and the special defined ones are two lists, merged by index.
 */
int kp_rule_simplify_symbols(struct kp_sim_ctx *c, struct kp_loading *ld)
{
	const struct kp_module *m = ld->m;
	size_t i = 0, k = 0;
	int ret = 0;

	while (i < m->nimports || k < m->nspecial_syms) {
		int err;

		if (k == m->nspecial_syms ||
		    (i < m->nimports && m->imports[i].symidx < m->special_syms[k].symidx))
			err = undefined_symbol(c, ld, &m->imports[i++]);
		else
			err = defined_symbol(c, ld, &m->special_syms[k++]);
		if (err == KP_ERR_OOPS)
			return err; /* the process is killed there */
		if (err)
			ret = err;
	}
	return ret;
}
