/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The facts of one .ko, as pure data: what the file says, no policy.
 * Everything a struct kp_module points to lives in its arena and is released
 * by kp_module_free().
 */
#ifndef KP_MODULE_H
#define KP_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "file/bytes.h"
#include "file/ima-xattr.h"
#include "util/util.h"

struct kp_modinfo_entry {
	const char *key;
	const char *value; /* "" for a tag without '=' */
};

/* Export tables, named after the section each one comes from. */
enum kp_export_table {
	KP_KSYMTAB,	       /* EXPORT_SYMBOL */
	KP_KSYMTAB_GPL,	       /* EXPORT_SYMBOL_GPL */
	KP_KSYMTAB_GPL_FUTURE, /* EXPORT_SYMBOL_GPL_FUTURE (removed in 5.12) */
	KP_KSYMTAB_UNUSED,     /* EXPORT_UNUSED_SYMBOL (removed in 5.12) */
	KP_KSYMTAB_UNUSED_GPL, /* EXPORT_UNUSED_SYMBOL_GPL (removed in 5.12) */
	KP_KSYMTAB_NTABLES,
};

struct kp_export {
	const char *name;
	const char *ns; /* NULL when the export has no namespace */
	enum kp_export_table table;
	bool gpl_only; /* the loader's GPL_ONLY class: __ksymtab_gpl[_unused] or kflagstab bit */
	bool has_crc;
	uint32_t crc;
	uint32_t hash; /* kp_hash_string(name): lookups by name use it instead of hashing */
};

/* 16 bytes: a whole tree has some 200,000 imports. */
struct kp_import {
	const char *name;
	uint32_t hash; /* kp_hash_string(name): lookups by name use it instead of hashing */
	/* .symtab index (at most KP_IMPORT_MAX_SYMIDX): the loader resolves in this order */
	uint32_t symidx : 31;
	uint32_t weak : 1;
};
#define KP_IMPORT_MAX_SYMIDX 0x7fffffffu

struct kp_version {
	const char *name;
	uint32_t crc;
	uint32_t hash; /* kp_hash_string(name): compared before the name */
};

/*
 * A defined .symtab symbol simplify_symbols() treats specially: SHN_COMMON, SHN_LIVEPATCH,
 * or a section index past e_shnum (kernel/module/main.c, the st_shndx switch).
 */
/* SHN_LIVEPATCH (include/uapi/linux/elf.h): resolved by livepatch, skipped by the loader. */
#define KP_SHN_LIVEPATCH 0xff20

struct kp_special_sym {
	const char *name;
	uint32_t symidx;
	uint32_t shndx; /* the raw st_shndx */
};

/* elf_validity_cache_index_versions() (v6.14+) verdict on the extended version tables. */
enum kp_ext_versions_state {
	KP_EXT_VERSIONS_NONE,	     /* neither section */
	KP_EXT_VERSIONS_OK,	     /* both, at least as many names as CRCs */
	KP_EXT_VERSIONS_ONE_MISSING, /* "extended version crc+name presence does not match" */
	KP_EXT_VERSIONS_FEW_NAMES,   /* "more extended version crcs than names" */
};

/* elf_validity_cache_strtab() (v6.13+) verdict on the symbol string table. */
enum kp_symstr_state {
	KP_SYMSTR_OK,
	KP_SYMSTR_EMPTY,	  /* "empty symbol string table" */
	KP_SYMSTR_NO_LEADING_NUL, /* "symbol string table missing leading NUL" */
	KP_SYMSTR_UNTERMINATED,	  /* "symbol string table isn't NUL terminated" */
	KP_SYMSTR_NAME_OOB,	  /* "symbol name out of bounds in string table" (no newline) */
};

enum kp_versions_format {
	KP_VERSIONS_NONE,
	KP_VERSIONS_FIXED,  /* struct modversion_info { unsigned long crc; char name[64 -
			       sizeof(long)]; } */
	KP_VERSIONS_UBUNTU, /* Ubuntu SAUCE { u32 next; u32 crc; char name[]; } records */
};

/*
 * pkcs7_note when the only objection to the message is its signed attributes (pkcs7_verify(),
 * VERIFYING_MODULE_SIGNATURE): the kernel's line; 7.0+ waives it for an ML-DSA signer.
 */
#define KP_SIG_NOTE_AUTHATTRS "Invalid module sig (has authattrs)"

struct kp_signature {
	bool present;
	uint8_t algo;
	uint8_t hash;
	uint8_t id_type; /* 2 = PKEY_ID_PKCS7 */
	uint8_t signer_len;
	uint8_t key_id_len;
	uint32_t sig_len;
	bool malformed;	  /* marker present but sig_len does not fit the file (mod_check_sig) */
	bool params_zero; /* algo, hash, signer_len, key_id_len and padding all 0, as PKCS#7 needs
			   */
	bool pkcs7_der;	  /* the blob is one DER SEQUENCE exactly sig_len long */

	/* The PKCS#7 message as libcrypto reads it (lib/read/sig-verify.c); NULL/0 when absent. */
	int pkcs7_err;		     /* pkcs7_parse_message(): 0, -EBADMSG, -EINVAL, -ENOPKG */
	int pkcs7_verify_err;	     /* after parsing, before trust (pkcs7_verify()): 0 or -errno */
	const char *pkcs7_note;	     /* why pkcs7_err or pkcs7_verify_err, for reports */
	const char *hash_algo;	     /* kernel spelling: "sha256", "sha3-512", "md5", ... */
	const char *pkey_algo;	     /* "rsa", "ecdsa", "mldsa65", ... or the OID */
	const char *signer;	     /* issuer (issuer+serial) as text, NULL for a key id signer */
	const unsigned char *issuer; /* DER Name of the signer's issuer */
	size_t issuer_len;
	const unsigned char *serial; /* INTEGER contents */
	size_t serial_len;
	const unsigned char *skid; /* subjectKeyIdentifier signer (sign-file -k) */
	size_t skid_len;
	const unsigned char *sig_bytes; /* the signature value */
	size_t sig_bytes_len;
	unsigned nsigners;	       /* SignerInfos in the message (the first is checked) */
	unsigned char digest[64];      /* hash_algo over the module before the signature */
	unsigned digest_len;	       /* 0: not computed (not asked, or libcrypto lacks it) */
	unsigned char file_sha256[32]; /* the whole file: Debian's module-hash blacklist */
	bool have_file_sha256;
	/*
	 * The id of the verdict of the key whose key_id is @verdict_key_id over this signature
	 * (kp_sig_verdict_id(), a function of them only), kept by kp_keyring_preverify() on the
	 * one thread that checks this module, so that the simulation does not compute it again.
	 */
	unsigned char verdict_id[32];
	unsigned char verdict_key_id[32];
	bool have_verdict_id;
};

/*
 * One relocation type a module uses in a section the loader relocates: apply_relocations()
 * (kernel/module/main.c) hands every SHT_REL/SHT_RELA section whose target is SHF_ALLOC to
 * the architecture's apply_relocate() / apply_relocate_add(). Listed once per (type, REL or
 * RELA), in the order the loader meets them (section order, then entry order).
 */
struct kp_reloc_use {
	uint32_t type;
	bool rela;	     /* from an SHT_RELA section (apply_relocate_add()) */
	bool percpu;	     /* applies to .data..percpu (relocated only by KP_F_PERCPU_RELOCS) */
	const char *section; /* the first relocation section that holds it, e.g. ".rela.text" */
	uint32_t shndx;	     /* that section's index (apply_relocations() walks them in order) */
	uint32_t index;	     /* the entry's index in that section */
	uint32_t count;	     /* how many entries of the module's relocated sections use it */
};

enum kp_symget_method {
	KP_SYMGET_EXACT, /* argument register loaded from a string, traced through relocations */
	KP_SYMGET_HEURISTIC, /* string referenced by the calling function, not traced to the call */
	KP_SYMGET_DYNAMIC,   /* argument computed at run time */
};

/* When a call site runs (lib/read/symbol-get/symbol-get-reach.c). */
enum kp_symget_when {
	KP_SYMGET_WHEN_UNKNOWN, /* no call graph: code not decoded (architecture, size) */
	KP_SYMGET_AT_LOAD,	/* reached from init by direct calls, or in .init.text */
	KP_SYMGET_WHEN_CALLED,	/* only through a function pointer or from exit */
};

struct kp_symget {
	const char *symbol;  /* NULL for dynamic call sites */
	const char *format;  /* dynamic: a printf format seen in the function, or NULL */
	const char *section; /* call site */
	uint64_t offset;
	const char *function; /* enclosing function symbol, or NULL */
	enum kp_symget_method method;
	bool request; /* found through symbol_request() (request_module first) */
	enum kp_symget_when when;
	/*
	 * KP_SYMGET_AT_LOAD: the direct calls from init to the site's function, the function
	 * names separated by ' ' (init's own name first, not its init_module alias); NULL for
	 * a site in .init.text not reached by direct calls, and for the other kinds.
	 */
	const char *path;
};

/* "load", "called" or "unknown": kp_symget.when as the JSON outputs name it. */
const char *kp_symget_when_name(enum kp_symget_when w);
/*
 * When a call site runs, in words: "at load (init_fn -> a -> b)", "at load (in .init.text)",
 * "when called (from f, not reached from init by direct calls)" or "when it runs (not
 * determined: no call graph)"; @path and @function as in struct kp_symget. Allocated, NULL
 * when out of memory.
 */
char *kp_symget_when_text(enum kp_symget_when w, const char *path, const char *function);

/*
 * An export whose name field is relocated outside the module's strings (exports.c): against
 * __ksymtab_strings with a target before its start or past its end (x86 and arm64 PREL32,
 * absolute pointers elsewhere), or against a symbol whose bytes at load time the file does not
 * give (undefined, absolute, a section the loader does not copy). The loader's name is that
 * address, not a string of the file.
 */
struct kp_wild_export {
	bool present;
	enum kp_export_table table;
	uint32_t index; /* the entry's index in its table */
	int64_t offset; /* the name's address - __ksymtab_strings' address (target NULL) */
	/* NULL: the name points outside __ksymtab_strings; else it is relocated against a
	 * symbol whose bytes the reader cannot tell, described here ("the undefined symbol x") */
	const char *target;
	/* the name field's relocation: its section's index and its index there (the order
	 * apply_relocations() applies it in) */
	uint32_t rel_shndx, rel_index;
};

struct kp_module {
	const char *path;
	const char *name;	  /* struct module.name in .gnu.linkonce.this_module */
	const char *modinfo_name; /* modinfo name= (NULL if absent) */

	enum kp_compression compression;
	size_t file_size;
	size_t image_size; /* after decompression, signature included */
	bool is64;
	bool big_endian;
	uint16_t machine;

	struct kp_modinfo_entry *modinfo;
	size_t nmodinfo;
	size_t nmodinfo_sections;

	/* Shortcuts into modinfo, as the loader's get_modinfo() sees them (first tag wins). */
	const char *license; /* NULL: no license= tag (the loader says "unspecified") */
	bool license_gpl_compatible;
	const char *vermagic;
	const char *srcversion;
	bool intree;
	bool staging;
	bool test;
	bool livepatch;
	bool retpoline;
	const char **import_ns; /* all import_ns= tags, in file order */
	size_t nimport_ns;
	const char **depends; /* depends= split on ',' */
	size_t ndepends;

	struct kp_export *exports; /* __ksymtab first, then __ksymtab_gpl, ... in table order */
	size_t nexports;
	bool has_kcrctab[KP_KSYMTAB_NTABLES];
	bool has_kflagstab;
	struct kp_wild_export wild_export; /* the only one the reader accepts; not in exports */

	struct kp_import *imports; /* SHN_UNDEF symbols in .symtab order */
	size_t nimports;
	bool has_symtab;
	struct kp_special_sym *special_syms; /* in .symtab order */
	size_t nspecial_syms;
	uint32_t shnum; /* e_shnum: st_shndx at or above it is invalid */
	/* The raw e_shnum/e_shstrndx (extended numbering: 0/SHN_XINDEX) the loader compares. */
	uint16_t raw_shnum, raw_shstrndx;
	bool sec0_set;	    /* section 0 has a type, size or address (sh_size: extended count) */
	uint32_t sec0_type; /* its sh_type, for the loader's line */
	uint64_t shoff; /* e_shoff: a kernel without the st_shndx check reads sechdrs[st_shndx] */
	enum kp_symstr_state symstr_state;
	/*
	 * Symbols whose name, read as the loader before v6.13 reads it (the file's bytes at
	 * .strtab's sh_offset + st_name), no NUL ends before the end of the file.
	 */
	uint32_t symname_past_end;
	/*
	 * The first SHN_UNDEF one, strong or weak, whose name starts in the file (.symtab index;
	 * 0: none): simplify_symbols() resolves both with find_symbol()
	 */
	uint32_t import_name_past_end;
	/* The first defined one kallsyms keeps (layout_symtab()): .symtab index, 0: none */
	uint32_t kept_name_past_end;
	/*
	 * The first SHN_UNDEF one (strong or weak) whose name starts at or past the end of the
	 * file (.symtab index; 0: none), and that start as a file offset (.strtab's sh_offset +
	 * st_name): simplify_symbols() hands find_symbol() a pointer there before v6.13
	 */
	uint32_t import_name_outside;
	uint64_t import_name_outside_off;

	enum kp_versions_format versions_format;
	bool versions_alloc; /* __versions is SHF_ALLOC: the loader uses it */
	struct kp_version *versions;
	size_t nversions;
	bool has_ext_versions; /* both tables present and consistent: ext_versions is valid */
	enum kp_ext_versions_state ext_versions_state;
	bool versions_distinct; /* no name twice in versions (see kp_read_versions()) */
	bool ext_versions_distinct;
	/* the same for ext_versions */ /* no name twice in the list check_version() walks
					   (see below) */
	struct kp_version *ext_versions;
	size_t next_versions;

	uint64_t this_module_size; /* sizeof(struct module) the module was built for */

	struct kp_reloc_use *relocs; /* relocation types the loader applies (relocs.c) */
	size_t nrelocs;
	const char *relocs_problem; /* a relocation section could not be read: why, or NULL */

	struct kp_signature sig;

	bool imports_symbol_get;
	struct kp_symget *symget;
	size_t nsymget;
	const char *symget_backend; /* exact call-site analysis ("riscv64"), NULL: heuristic only */
	size_t nsymput;		    /* __symbol_put call sites */
	/* call sites left when the module's analysis budget ran out (symbol-get.c) */
	size_t nsymget_unanalysed;
	bool symget_skipped; /* not traced at all: kp_open_opts.no_symbol_get */
	/* the file's security.ima, file system and owner (kp_open_opts.ima_xattr; never cached) */
	struct kp_ima_file ima;

	bool full_modinfo; /* modinfo holds every tag, not only the loader's */

	/*
	 * .BTF and .BTF.base (6.11+), the first section of each name, as find_module_sections()
	 * hands them to btf_module_notify(). The bytes are kept only when read with
	 * kp_open_opts.keep_btf (kept_btf set); has_btf/has_btf_base always.
	 */
	bool has_btf;
	bool has_btf_base;
	bool kept_btf;
	const unsigned char *btf;
	size_t btf_len;
	const unsigned char *btf_base;
	size_t btf_base_len;
	/*
	 * Read with kp_open_opts.btf_judge: the bytes are not kept; btf_sha256 is their digest
	 * (kp_btf_digest(); cached with the facts) and, once the judge has decided (while the
	 * module is read, or from its memo on a facts cache hit: kp_module_judge_btf()),
	 * btf_judged is set with btf_err (0 or a negative errno) and btf_why (NULL when empty).
	 * The judge's verdict depends on the kernel's BTF: it is never cached with the facts.
	 */
	bool btf_digested;
	unsigned char btf_sha256[32];
	bool btf_judged;
	int btf_err;
	const char *btf_why;

	/*
	 * The interface digest (read/module-iface.h), made when the module is read and cached
	 * with the facts; iface_digested false: none (OpenSSL failed, a module built by hand).
	 * A caller that changes the interface's fields afterwards clears iface_digested.
	 */
	bool iface_digested;
	unsigned char iface_sha256[32];

	struct kp_arena arena;
};

/*
 * Strings that outlive the modules read with them (a kernel base's export names):
 * a symbol name found in the pool is pointed to instead of copied into the module's
 * arena, which saves most of a whole tree's memory. The pool is read from several
 * reading threads at once and must not change while they run.
 */
struct kp_name_pool {
	/* A NUL-terminated string equal to the @len bytes at @name, or NULL. */
	const char *(*find)(const void *ctx, const char *name, size_t len);
	/* Optional: the same, @hash == kp_hash_bytes(@name, @len) given by the caller. */
	const char *(*find_hashed)(const void *ctx, const char *name, size_t len, uint32_t hash);
	const void *ctx;
};

struct kp_open_opts {
	size_t max_size;		  /* 0: KP_DEFAULT_MAX_SIZE */
	const struct kp_name_pool *names; /* NULL: every name is copied */
	/*
	 * Keep every .modinfo tag (alias=, parm=, firmware= ...). Without it only the tags
	 * the loader reads are kept, which saves most of the memory of a whole-tree scan.
	 */
	bool full_modinfo;
	/*
	 * KP_SIG_* flags: hash the module for signature verification; the whole file is read
	 * even when it need not be.
	 */
	unsigned sig_digest;
	/* Keep the .BTF and .BTF.base bytes (the target checks module BTF against its own). */
	bool keep_btf;
	/*
	 * With keep_btf: the module's BTF is judged while it is read (or from the judge's memo
	 * when the facts are cached) and its bytes are not kept (kp_module.btf_judged).
	 */
	const struct kp_btf_judge *btf_judge;
	/* Read the file's security.ima into kp_module.ima (the target's IMA appraises modules). */
	bool ima_xattr;
	/*
	 * Not NULL: set to the file's stat as the reader opened it (st_mode 0 when it was
	 * not opened), so the facts cache stores a module read without a stat() of its own.
	 */
	struct stat *state;
	/*
	 * Not NULL: the system's root (-b ROOT, --root); a path under it is opened inside it,
	 * by descriptors (kp_open_regular_in()), never through a link swapped on the way.
	 */
	const struct kp_root_dir *root;
	/*
	 * For the facts cache (kp_facts_cache_open(), which the module set calls when its read
	 * options name one; the reader ignores it): a module read (a miss) is stored later,
	 * by kp_facts_cache_store_pending()'s thread or when it is settled, not by the reading
	 * thread (kp_ctx_read_range()).
	 */
	bool defer_store;
	/*
	 * symbol_get() call sites are not traced (kp_module.symget_skipped): a reader that
	 * does not use them (the hook under a policy that ignores symbol-get). Cached apart.
	 */
	bool no_symbol_get;
	/*
	 * Not NULL: set when the reader made the SHA-256 of the whole file as it is on disk in
	 * passing (an uncompressed module whose signature's digest, with sig_digest, is
	 * SHA-256: the one pass over the signed part continued over the signature). For the
	 * facts cache's result-cache records (kp_in_note_bytes()); not a fact of the module.
	 */
	struct kp_whole_sha256 *whole;
};

/* kp_open_opts.whole: @set (false before the read) and the file's SHA-256. */
struct kp_whole_sha256 {
	bool set;
	unsigned char sha256[32];
};

struct kp_btf_verdict;
/*
 * What btf_module_notify() makes of a module's BTF, decided by the caller (it knows the
 * kernel's BTF and rules: kernel/btf-judge.h). @digest is the SHA-256 of the module's .BTF
 * and .BTF.base (kp_btf_digest()); @btf (NULL: only the digest is known, a facts cache hit)
 * and @base (NULL: none) their bytes. Returns 0 with @v set, 1 when the verdict needs the
 * bytes it was not given, -1 when out of memory. Called from several threads at once.
 */
struct kp_btf_judge {
	int (*judge)(void *ctx, const unsigned char *digest, const unsigned char *btf,
		     size_t btf_len, const unsigned char *base, size_t base_len,
		     struct kp_btf_verdict *v);
	void *ctx;
};

/* The SHA-256 of a module's .BTF (@btf) and .BTF.base (@base, NULL: none); 0, or -1 (OpenSSL). */
int kp_btf_digest(const unsigned char *btf, size_t btf_len, const unsigned char *base,
		  size_t base_len, unsigned char out[32]);

/*
 * For a module read with kp_open_opts.btf_judge whose verdict is not known yet (a facts
 * cache hit): asks @j with the digest alone. 0: judged (or nothing to judge); 1: the judge
 * needs the bytes (read the module again); -1: out of memory.
 */
int kp_module_judge_btf(struct kp_module *m, const struct kp_btf_judge *j);
/*
 * For a module read with kp_open_opts.keep_btf and no judge (the hook reads its chain before
 * it knows the kernel's BTF): asks @j with the kept bytes' digest (made when they were read,
 * btf_sha256, else now) and the bytes. The bytes stay; btf_sha256 is not changed. 0: judged (or
 * nothing to judge); -1: out of memory, or OpenSSL failed (not judged: checked as before).
 */
int kp_module_judge_kept_btf(struct kp_module *m, const struct kp_btf_judge *j);

enum {
	KP_SIG_DIGEST = 1 << 0,	     /* the signed part, with the signature's hash */
	KP_SIG_FILE_SHA256 = 1 << 1, /* the whole file (Debian's module-hash blacklist) */
};

/* Reads @path; on failure *@out is NULL and @err says why. */
int kp_module_open(const char *path, const struct kp_open_opts *opts, struct kp_module **out,
		   struct kp_err *err);
/* Same over a buffer (the fuzzer, tests); @path is only a label. */
/* The same with the calling thread's decoders (kp_decoders_new()), reused across files. */
int kp_module_open_with(const char *path, const struct kp_open_opts *opts, struct kp_decoders *dec,
			struct kp_module **out, struct kp_err *err);
int kp_module_open_buffer(const char *path, const unsigned char *buf, size_t len,
			  const struct kp_open_opts *opts, struct kp_module **out,
			  struct kp_err *err);
void kp_module_free(struct kp_module *m);

/*
 * For whoever fills a struct kp_module (the reader's files, the facts cache's decoder in
 * cache/facts-serial-arena.c): a symbol name for @m, @names' copy when the pool has it (no
 * copy), else one in @m's arena; NULL when out of memory.
 */
const char *kp_module_symname(struct kp_module *m, const struct kp_name_pool *names,
			      const char *name, size_t len);
/* The same for a name whose kp_hash_bytes() the caller has (an import's, kept in it). */
const char *kp_module_symname_hashed(struct kp_module *m, const struct kp_name_pool *names,
				     const char *name, size_t len, uint32_t hash);
/* A zeroed array of @n elements in @m's arena, for fillers that count first; NULL: no memory. */
void *kp_module_array(struct kp_module *m, size_t n, size_t elem);

/* The first value of modinfo @key, as the loader's get_modinfo(); NULL if absent. */
const char *kp_module_modinfo(const struct kp_module *m, const char *key);

const char *kp_export_table_section(enum kp_export_table t);

/* The sections of each export table, and whether the loader treats it as GPL-only. */
struct kp_export_table_info {
	const char *ksymtab;
	const char *kcrctab;
	bool gpl_only; /* find_symbol() arrays in kernel/module/main.c (<= 5.11 incl. unused) */
};
extern const struct kp_export_table_info kp_export_tables[KP_KSYMTAB_NTABLES];
/* Pending __kflagstab layout: one byte per __ksymtab entry. */
#define KP_KSYM_FLAG_GPL_ONLY 0x1

#endif
