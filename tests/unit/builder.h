/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A test world built in memory, without ELF files: modules (struct kp_module filled field by
 * field, everything in its arena), a kernel base from Module.symvers text, the facts of a target
 * kernel (a release string selects the profile), then the graph and the loader simulation.
 * Each tb_* call that cannot go on (out of memory, a full table) aborts: the tests are small.
 */
#ifndef KP_TEST_BUILDER_H
#define KP_TEST_BUILDER_H

#include <stdbool.h>
#include <stdint.h>

#include "graph/graph.h"
#include "kernel/kernel-facts.h"
#include "sim/loader.h"
#include "tap.h"

/* Each list of a built module holds at most this many entries. */
#define TB_MAX 160

struct tb_world {
	struct kp_module_set set;
	struct kp_kernel_base *base; /* NULL until tb_symvers() */
	struct kp_kernel_facts facts;
	struct kp_graph g;
	struct kp_simulation sim;
	bool ran;
	char dmesg[8192]; /* tb_dmesg()'s buffer */
	char ids[1024];	  /* tb_findings()'s */
	char letters[32]; /* tb_taints()', tb_global()'s */
};

/*
 * A world for the kernel @release ("6.12.37", "6.12.37+deb13-amd64", "7.2.13+deb14-amd64"):
 * the profile of that version, Debian's when the release is Debian's. Every config fact is
 * off (no MODVERSIONS, no MODULE_SIG, no vermagic or struct module size known).
 */
void tb_init(struct tb_world *w, const char *release);
/* The same with an explicit distribution (profile tests: Debian rules on an upstream string). */
void tb_init_distro(struct tb_world *w, const char *release, enum kp_distro d);
/* Adds Module.symvers text (lines "0xCRC\tsym\towner\tEXPORT_SYMBOL[_GPL]\tns") to the base. */
void tb_symvers(struct tb_world *w, const char *text); /* Loads a base file (Module.symvers[.gz],
							  System.map, vmlinux) into the base. */
void tb_base_file(struct tb_world *w, const char *path);
/* Adds the module file @path (read by the reader at tb_run()/tb_graph()) to the set. */
void tb_module_file(struct tb_world *w, const char *path);

/*
 * The standard kernel of the tests (Module.symvers 5.6+ layout; CRCs 0x11111111 ...):
 *   printk (plain), gpl_fn (GPL), module_layout (plain), ns_fn (GPL, namespace MY_NS),
 *   fut_fn (GPL_FUTURE), in-tree module drivers/misc/base-mod: base_fn (plain), base_gpl (GPL).
 */
void tb_std_kernel(struct tb_world *w);

/*
 * A module named @name added to the set (set order = command-line order): license "GPL",
 * in-tree, a .symtab, x86_64, no __versions, no signature, vermagic "6.12.0 SMP mod_unload "
 * (defaults without modinfo tags).
 */
struct kp_module *tb_module(struct tb_world *w, const char *name);
/*
 * Adds modinfo tag @key (license, name, vermagic, staging, test, livepatch, import_ns): the
 * first tag of a key sets the shortcut. Other facts (intree, has_symtab ...) are set directly.
 */
void tb_modinfo(struct kp_module *m, const char *key, const char *value);
/* An export in @table; gpl_only as the table says (tb_export_flag() for __kflagstab). */
void tb_export(struct kp_module *m, const char *name, enum kp_export_table table);
/* v7.1+ layout: __ksymtab with a __kflagstab GPL bit. */
void tb_export_flag(struct kp_module *m, const char *name, bool gpl_only);
/* The last export gets a namespace / a CRC (and its table a __kcrctab). */
void tb_export_ns(struct kp_module *m, const char *ns);
void tb_export_crc(struct kp_module *m, uint32_t crc);
/* An undefined symbol, the next .symtab index. */
void tb_import(struct kp_module *m, const char *name);
void tb_import_weak(struct kp_module *m, const char *name);
/*
 * The strtab fixtures' shapes (an @image_size-byte file, its symbol names out of bounds): an
 * import @name whose name runs to the file's end (strtab_page), or an import whose name starts
 * at file offset @off, past the image (strtab_guard; weak when @weak).
 */
void tb_import_name_past_end(struct kp_module *m, uint64_t image_size, const char *name);
void tb_import_name_outside(struct kp_module *m, uint64_t image_size, uint64_t off, bool weak);
/* A defined symbol with a special st_shndx (SHN_COMMON, SHN_LIVEPATCH, >= e_shnum). */
void tb_special(struct kp_module *m, const char *name, uint32_t shndx);
/* A __versions entry (the module gets an SHF_ALLOC __versions); ext: __version_ext_*. */
void tb_version(struct kp_module *m, const char *name, uint32_t crc);
void tb_ext_version(struct kp_module *m, const char *name, uint32_t crc);
/*
 * A relocation type the loader meets in relocation section @section (SHT_RELA when @rela),
 * after those added before; @percpu: the section applies to .data..percpu.
 */
void tb_reloc(struct kp_module *m, uint32_t type, bool rela, const char *section, bool percpu);
/* A symbol_get(@sym) call site. */
void tb_symget(struct kp_module *m, const char *sym, enum kp_symget_method how, bool request);
/* An appended signature that parses as PKCS#7 (id_type 2, zero params, one DER message). */
void tb_signed(struct kp_module *m, const char *hash, const char *pkey);
/* The same with signed attributes, as lib/read/sig-verify.c records them (pkcs7_verify()). */
void tb_signed_authattrs(struct kp_module *m, const char *hash, const char *pkey);

/* Builds the graph (one thread) and runs the simulation; aborts on failure. */
void tb_run(struct tb_world *w);
/* Graph only (graph tests): no simulation. */
void tb_graph(struct tb_world *w);
/* The graph node / verdict of module @name (aborts when absent). */
size_t tb_node(const struct tb_world *w, const char *name);
const struct kp_verdict *tb_v(const struct tb_world *w, const char *name);
/* The kernel's lines for @name, joined by '\n' ("" for none). */
const char *tb_dmesg(struct tb_world *w, const char *name);
/* The verdict's finding ids, joined by ',' ("" for none). */
const char *tb_findings(struct tb_world *w, const char *name);
/* The finding @id of @name, or NULL. */
const struct kp_finding *tb_finding(const struct tb_world *w, const char *name, const char *id);
/* Taint letters of the module (mod->taints) / of the global mask after the run. */
const char *tb_taints(struct tb_world *w, const char *name);
const char *tb_global(struct tb_world *w);
/* The symbol_get() result for @sym of @name, or NULL. */
const struct kp_symget_result *tb_symget_result(const struct tb_world *w, const char *name,
						const char *sym);
void tb_free(struct tb_world *w);

/*
 * Runs @w, checks module "m"'s errno, dmesg and findings (ids, comma-separated) as three
 * TAP lines named after @what, and frees @w.
 */
void tb_expect(struct tap *t, struct tb_world *w, int err, const char *dmesg, const char *findings,
	       const char *what);
/* The same, and module "m"'s taint letters as a fourth TAP line unless @taints is NULL. */
void tb_expect_taints(struct tap *t, struct tb_world *w, int err, const char *dmesg,
		      const char *findings, const char *taints, const char *what);

/* Like tap_is_str() for multi-line text: the TAP line shows '\n' as "\\n". */
void tb_is_text(struct tap *t, const char *got, const char *want, const char *what);

#endif
