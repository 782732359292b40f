/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The readers that fill a struct kp_module, one file each; used by module.c only. */
#ifndef KP_MODULE_INTERNAL_H
#define KP_MODULE_INTERNAL_H

#include "elf-file.h"
#include "module.h"

/* modinfo.c: .modinfo tags in file order and the loader's shortcuts. */
int kp_read_modinfo(struct kp_module *m, const struct kp_elf *e, struct kp_err *err);
/* exports.c: __ksymtab* tables with namespaces and __kcrctab* CRCs. */
int kp_read_exports(struct kp_module *m, struct kp_elf *e, const struct kp_name_pool *names,
		    struct kp_err *err);
/* imports.c: undefined symbols in .symtab order. */
int kp_read_imports(struct kp_module *m, const struct kp_elf *e, const struct kp_name_pool *names,
		    struct kp_err *err);
/* versions.c: __versions (both layouts) and extended modversions. */
int kp_read_versions(struct kp_module *m, const struct kp_elf *e, const struct kp_name_pool *names,
		     struct kp_err *err);
/* signature.c: the appended module signature; returns the ELF length without it. */
size_t kp_read_signature(struct kp_module *m, const unsigned char *image, size_t len);
/* strlen("~Module signature appended~\n") */
#define KP_SIG_MARKER_LEN 28
/*
 * sig-verify.c: the PKCS#7 message of a present, well-formed trailer (after the arena is
 * reserved); @want_digest (KP_SIG_* flags) also hashes @image (@signed_len bytes signed,
 * @file_len in all); with @whole (NULL: not wanted) and a SHA-256 digest, @image's whole
 * SHA-256 too (the same pass), @image being the file's bytes (kp_open_opts.whole).
 * 0, -1 when out of memory, -2 when OpenSSL failed to hash the module.
 */
int kp_read_pkcs7(struct kp_module *m, const unsigned char *image, size_t signed_len,
		  size_t file_len, unsigned want_digest, struct kp_whole_sha256 *whole);
/* relocs.c: the relocation types of the sections apply_relocations() relocates. */
int kp_read_relocs(struct kp_module *m, struct kp_elf *e, struct kp_err *err);
/* relocs.c: a section whose SHF_ALLOC the loader clears before it lays the module out. */
bool kp_loader_unallocs(const char *name);
/*
 * module-btf.c: .BTF and .BTF.base as find_module_sections() takes them
 * (any_section_objs(), v5.11+): kept in the arena with @keep, or judged in place by @judge.
 */
int kp_read_btf(struct kp_module *m, const struct kp_elf *e, bool keep,
		const struct kp_btf_judge *judge, struct kp_err *err);
/* symbol-get.c: targets of symbol_get()/symbol_request() call sites. */
int kp_read_symbol_get(struct kp_module *m, struct kp_elf *e, struct kp_err *err);

/* Appends to an arena-backed array; arrays grow by doubling inside the arena. */
void *kp_module_push(struct kp_module *m, void *array, size_t *n, size_t *cap, size_t elem);

#endif
