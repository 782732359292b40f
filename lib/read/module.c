// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Opening a module: bytes -> signature trailer -> ELF -> each reader in turn.
 * The image is released before returning; the facts stay in the module's arena.
 * Its BTF read, digested and judged: module-btf.c. libcrypto is loaded before the first
 * module is read (dl/lazy-lib.h): one that cannot be is that module's error.
 */
#include <string.h>
#include <sys/stat.h>

#include "dl/lazy-lib.h"
#include "module-iface.h"
#include "module-internal.h"

void *kp_module_push(struct kp_module *m, void *array, size_t *n, size_t *cap, size_t elem)
{
	void **arr = array;

	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		void *p;

		if (ncap > SIZE_MAX / elem)
			return NULL;
		p = kp_arena_alloc(&m->arena, ncap * elem);
		if (!p)
			return NULL;
		if (*n)
			memcpy(p, *arr, *n * elem);
		*arr = p;
		*cap = ncap;
	}
	memset((char *)*arr + *n * elem, 0, elem);
	return (char *)*arr + (*n)++ * elem;
}

void *kp_module_array(struct kp_module *m, size_t n, size_t elem)
{
	void *p;

	if (n > SIZE_MAX / elem)
		return NULL;
	p = kp_arena_alloc(&m->arena, n * elem);
	if (p)
		memset(p, 0, n * elem);
	return p;
}

const char *kp_module_symname(struct kp_module *m, const struct kp_name_pool *names,
			      const char *name, size_t len)
{
	const char *shared = names ? names->find(names->ctx, name, len) : NULL;

	return shared ? shared : kp_arena_strndup(&m->arena, name, len);
}

const char *kp_module_modinfo(const struct kp_module *m, const char *key)
{
	for (size_t i = 0; i < m->nmodinfo; i++)
		if (!strcmp(m->modinfo[i].key, key) && m->modinfo[i].value)
			return m->modinfo[i].value;
	return NULL;
}

/*
 * struct module { enum module_state state; struct list_head list; char name[MODULE_NAME_LEN]; ... }
 */
static int read_this_module(struct kp_module *m, const struct kp_elf *e, struct kp_err *err)
{
	size_t idx = kp_elf_find_section(e, ".gnu.linkonce.this_module");
	uint64_t name_off = e->is64 ? 24 : 12;
	uint64_t name_len = 64 - (e->is64 ? 8 : 4);
	const struct kp_section *s;
	const unsigned char *nul;

	if (!idx)
		return kp_err_set(err, "no .gnu.linkonce.this_module section: not a kernel module");
	s = &e->sections[idx];
	if (s->type == SHT_NOBITS)
		return kp_err_set(err, "debuginfo-only file (allocated sections are NOBITS), "
				       "not a loadable module");
	m->this_module_size = s->size;
	if (!s->data || s->size < name_off + name_len)
		return kp_err_set(err,
				  ".gnu.linkonce.this_module is too small (%llu bytes) for "
				  "struct module",
				  (unsigned long long)s->size);
	nul = memchr(s->data + name_off, '\0', name_len);
	if (!nul || nul == s->data + name_off)
		return kp_err_set(err,
				  "struct module in .gnu.linkonce.this_module has no valid name");
	m->name = kp_arena_strndup(&m->arena, (const char *)s->data + name_off,
				   (size_t)(nul - (s->data + name_off)));
	if (!m->name)
		return kp_err_set(err, "out of memory");
	return 0;
}

static const char *elf_type_name(uint16_t t)
{
	switch (t) {
	case ET_EXEC:
		return "an executable (ET_EXEC)";
	case ET_DYN:
		return "a shared object or PIE (ET_DYN)";
	case ET_CORE:
		return "a core dump (ET_CORE)";
	default:
		return "not relocatable";
	}
}

/*
 * What the facts of @e will take in the arena, most of it known before reading: the
 * import and version arrays, the exports, the kept modinfo tags and the names no pool
 * holds. One chunk of that size instead of a doubling series saves a tree's worth of slack.
 */
static size_t arena_estimate(const struct kp_module *m, const struct kp_elf *e,
			     const struct kp_name_pool *names)
{
	size_t est = 1024 + strlen(m->path);

	est += e->nundef * (sizeof(struct kp_import) + sizeof(struct kp_version));
	if (!names)
		est += e->nundef * 24;
	for (int t = 0; t < KP_KSYMTAB_NTABLES; t++) {
		size_t idx = kp_elf_find_section(e, kp_export_tables[t].ksymtab);

		if (idx)
			est += (size_t)(e->sections[idx].size / 8) * sizeof(struct kp_export);
	}
	/*
	 * The PKCS#7 message's parts copied (sig-verify.c: the signature, the signer's ids) and
	 * the first block of the relocation types (relocs.c, kp_module_push()'s 16): without
	 * them nearly every module of a tree ran past its reservation by a few hundred bytes into
	 * chunks of 1 KiB and more, mostly empty (amd64-6.1: 22.8 MB of arenas for 14.7 MB used,
	 * 17.1 MB with them; `graph --no-cache` peaks at 38 MB instead of 44).
	 */
	if (m->sig.present && !m->sig.malformed)
		est += m->sig.sig_len < 65536 ? m->sig.sig_len : 65536;
	est += 16 * sizeof(struct kp_reloc_use);
	return est;
}

/*
 * The sections the readers below use; a sparse image loads only these (and the
 * relocations that apply to them). The symbol_get() tracer needs the code too: the
 * image is completed for the modules that import __symbol_get.
 */
static bool reader_wants(const char *name, uint32_t type, uint64_t flags)
{
	static const char *const names[] = {
		".modinfo",	      ".gnu.linkonce.this_module", "__versions",
		"__version_ext_crcs", "__version_ext_names",	   "__kflagstab",
	};

	(void)flags;
	if (type == SHT_SYMTAB || type == SHT_STRTAB || type == SHT_SYMTAB_SHNDX)
		return true;
	if (!strncmp(name, "__ksymtab", 9) || !strncmp(name, "__kcrctab", 9))
		return true; /* every export table, __ksymtab_strings */
	for (size_t i = 0; i < KP_ARRAY_SIZE(names); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

/* The same and the module's BTF, when it is kept (kp_read_btf()). */
static bool reader_wants_btf(const char *name, uint32_t type, uint64_t flags)
{
	return reader_wants(name, type, flags) || !strcmp(name, ".BTF") ||
	       !strcmp(name, ".BTF.base");
}

static int load_bytes(void *ctx, uint64_t off, uint64_t len, struct kp_err *err)
{
	return kp_bytes_load(ctx, off, len, err);
}

/* The signature trailer of a sparse image: the file's last bytes, then the blob they size. */
static size_t read_sparse_signature(struct kp_module *m, struct kp_bytes *b, struct kp_err *err)
{
	uint64_t tail = b->len < 4096 ? b->len : 4096;
	size_t elf_len;

	if (kp_bytes_load(b, b->len - tail, tail, err) < 0)
		return SIZE_MAX;
	elf_len = kp_read_signature(m, b->data, b->len);
	if (elf_len < b->len - tail) {
		/* A blob longer than the tail read: load it and read the trailer again. */
		if (kp_bytes_load(b, elf_len, b->len - tail - elf_len, err) < 0)
			return SIZE_MAX;
		memset(&m->sig, 0, sizeof(m->sig));
		elf_len = kp_read_signature(m, b->data, b->len);
	}
	return elf_len;
}

/*
 * The signature's PKCS#7 message; with @want_digest the whole file is hashed (and loaded), and
 * when the image is the file's bytes (uncompressed) its SHA-256 may go to @whole.
 */
static int read_pkcs7(struct kp_module *m, struct kp_bytes *b, size_t elf_len, unsigned want_digest,
		      struct kp_whole_sha256 *whole, struct kp_err *err)
{
	if (!m->sig.present)
		return 0;
	if (m->sig.malformed)
		want_digest = 0;
	if (want_digest && b->sparse && kp_bytes_load(b, 0, b->len, err) < 0)
		return -1;
	if (b->comp != KP_COMP_NONE || b->len != b->file_len)
		whole = NULL;
	switch (kp_read_pkcs7(m, b->data, elf_len, b->len, want_digest, whole)) {
	case 0:
		return 0;
	case -2:
		return kp_err_set(err, "cannot hash it for its signature check: OpenSSL failed "
				       "(out of memory or an internal error)");
	default:
		return kp_err_set(err, "out of memory");
	}
}

/*
 * No ELF image left once a signature trailer is taken off. When the trailer itself is not a
 * signature the kernel can parse, the kernel never reaches the ELF: module_sig_check()
 * fails with EBADMSG first (mod_check_sig() / the PKCS#7 parser, 4.x-7.x). Say that
 * rather than only "not an ELF file".
 */
static int bad_signed_image(const struct kp_module *m, struct kp_err *err)
{
	char why[sizeof(err->msg)];

	if (!m->sig.present || (!m->sig.malformed && m->sig.pkcs7_der))
		return -1;
	snprintf(why, sizeof(why), "%s", err->msg);
	return kp_err_set(err,
			  "%s: its signature trailer (sig_len %u) is not a signature the kernel "
			  "can parse: the kernel rejects it with EBADMSG before reading the ELF",
			  why, m->sig.sig_len);
}

/*
 * The kernel reads the ELF only after module_sig_check(). A trailer it rejects with EBADMSG
 * (sig_len past the file, or a "PKCS#7 message" that does not parse) or one it only notes
 * (another id_type: -ENOPKG, info->len = the file minus the marker, mod_verify_sig(), 5.x-7.x)
 * can size a blob that starts inside the ELF: the image it leaves is no ELF. The module is
 * then read from the file minus the marker (ELF readers ignore trailing bytes), so that the
 * kernel's verdict is reported under the module's name.
 */
static bool trailer_before_elf(const struct kp_module *m)
{
	return m->sig.present && (m->sig.malformed || !m->sig.pkcs7_der);
}

/* One read_image() call, kept by from_bytes() so that a SIGBUS jump leaves nothing unfreed. */
struct read_call {
	struct kp_module *m;
	struct kp_bytes *b;
	const struct kp_name_pool *names;
	unsigned want_digest; /* hash the whole file for the signature check */
	bool no_symbol_get;   /* kp_open_opts.no_symbol_get */
	bool keep_btf;
	const struct kp_btf_judge *btf_judge; /* kp_open_opts.btf_judge */
	struct kp_err *err;
	struct kp_elf e;
	/* kp_open_opts.whole: the file's SHA-256 when made in passing */
	struct kp_whole_sha256 *whole;
};

static int read_image(struct read_call *c)
{
	struct kp_module *m = c->m;
	struct kp_bytes *b = c->b;
	const struct kp_name_pool *names = c->names;
	struct kp_err *err = c->err;
	unsigned want_digest = c->want_digest;
	const struct kp_elf_source src = { .load = load_bytes,
					   .ctx = b,
					   .want = c->keep_btf ? reader_wants_btf : reader_wants,
					   .alloc_relocs = true };
	unsigned char *image = b->data;
	size_t len = b->len;
	struct kp_elf *const ep = &c->e;
	size_t sig_off; /* where the signature blob starts (the kernel's modlen) */
	size_t elf_len; /* the image read as ELF */
	int r = -1;

	m->image_size = len;
	if (b->sparse) {
		sig_off = read_sparse_signature(m, b, err);
		if (sig_off == SIZE_MAX)
			return -1;
		elf_len = sig_off;
		if (kp_elf_open_module(ep, image, elf_len, len, &src, err) < 0) {
			if (!trailer_before_elf(m))
				return bad_signed_image(m, err);
			elf_len = len - KP_SIG_MARKER_LEN;
			if (kp_elf_open_module(ep, image, elf_len, len, &src, err) < 0)
				return bad_signed_image(m, err);
		}
	} else {
		sig_off = kp_read_signature(m, image, len);
		elf_len = sig_off;
		if (kp_elf_open_module(ep, image, elf_len, len, NULL, err) < 0) {
			if (!trailer_before_elf(m))
				return bad_signed_image(m, err);
			elf_len = len - KP_SIG_MARKER_LEN;
			if (kp_elf_open_module(ep, image, elf_len, len, NULL, err) < 0)
				return bad_signed_image(m, err);
		}
	}
	m->is64 = ep->is64;
	m->big_endian = ep->big_endian;
	m->machine = ep->machine;
	if (ep->type != ET_REL) {
		kp_err_set(err, "not a kernel module: ELF file is %s", elf_type_name(ep->type));
		goto out;
	}
	if (kp_arena_reserve(&m->arena, arena_estimate(m, ep, names)) < 0) {
		kp_err_set(err, "out of memory");
		goto out;
	}
	m->path = kp_arena_strdup(&m->arena, m->path);
	if (!m->path) {
		kp_err_set(err, "out of memory");
		goto out;
	}
	if (read_this_module(m, ep, err) < 0 || kp_read_modinfo(m, ep, err) < 0 ||
	    kp_read_imports(m, ep, names, err) < 0 || kp_read_exports(m, ep, names, err) < 0 ||
	    kp_read_versions(m, ep, names, err) < 0 || kp_read_relocs(m, ep, err) < 0 ||
	    kp_read_btf(m, ep, c->keep_btf, c->btf_judge, err) < 0)
		goto out;
	if (m->imports_symbol_get && c->no_symbol_get)
		m->symget_skipped = true;
	else if (m->imports_symbol_get && b->sparse) {
		/* The tracer reads code, relocations and strings: the whole file, then. */
		kp_elf_close(ep);
		if (kp_bytes_load(b, 0, len, err) < 0 ||
		    kp_elf_open_module(ep, image, elf_len, len, NULL, err) < 0)
			return -1;
	}
	if (m->imports_symbol_get && !m->symget_skipped && kp_read_symbol_get(m, ep, err) < 0)
		goto out;
	if (read_pkcs7(m, b, sig_off, want_digest, c->whole, err) < 0)
		goto out;
	/* OpenSSL failing: no digest (the simulation's store makes it when it needs it) */
	m->iface_digested = kp_module_iface_digest(m, NULL, m->iface_sha256) == 0;
	r = 0;
out:
	kp_elf_close(ep);
	return r;
}

static int read_image_cb(void *arg)
{
	return read_image(arg);
}

/* @path is borrowed until read_image() copies it into the arena (sized by then). */
static struct kp_module *module_new(const char *path)
{
	struct kp_module *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->path = path;
	return m;
}

/* Builds the module from bytes already read; takes ownership of @b. */
static int from_bytes(const char *path, struct kp_bytes *b, const struct kp_open_opts *opts,
		      struct kp_module **out, struct kp_err *err)
{
	struct kp_module *m;
	int r;

	/*
	 * libcrypto (the signature, its digests) loaded on first use (dl/lazy-lib.h): a broken
	 * install is this module's error; libelf is the ELF reader's (elf-file.c).
	 */
	if (kp_lazy_require(kp_lazy_libcrypto(), err) < 0) {
		kp_bytes_release(b);
		return -1;
	}
	m = module_new(path);
	if (!m) {
		kp_bytes_release(b);
		return kp_err_set(err, "out of memory");
	}
	m->compression = b->comp;
	m->file_size = b->file_len;
	m->full_modinfo = opts && opts->full_modinfo;
	struct read_call call = { .m = m,
				  .b = b,
				  .names = opts ? opts->names : NULL,
				  .want_digest = opts ? opts->sig_digest : 0,
				  .whole = opts ? opts->whole : NULL,
				  .no_symbol_get = opts && opts->no_symbol_get,
				  .keep_btf = opts && opts->keep_btf,
				  .btf_judge = opts ? opts->btf_judge : NULL,
				  .err = err };

	/* a mapped (large) file: a SIGBUS while reading it is this file's error */
	r = kp_bytes_guard(b, read_image_cb, &call, err);
	if (r < 0)
		kp_elf_abandon(&call.e); /* what a jump left open (no-op after a normal return) */
	kp_bytes_release(b);
	if (r < 0) {
		kp_module_free(m);
		return -1;
	}
	*out = m;
	return 0;
}

static size_t max_size(const struct kp_open_opts *opts)
{
	return opts && opts->max_size ? opts->max_size : KP_DEFAULT_MAX_SIZE;
}

int kp_module_open(const char *path, const struct kp_open_opts *opts, struct kp_module **out,
		   struct kp_err *err)
{
	return kp_module_open_with(path, opts, NULL, out, err);
}

int kp_module_open_with(const char *path, const struct kp_open_opts *opts, struct kp_decoders *dec,
			struct kp_module **out, struct kp_err *err)
{
	struct kp_bytes b;
	int r;

	*out = NULL;
	r = kp_bytes_read_elf_in(opts ? opts->root : NULL, path, max_size(opts), dec, &b, err);
	if (opts && opts->state) {
		struct stat *st = opts->state;

		memset(st, 0, sizeof(*st));
		st->st_dev = b.dev;
		st->st_ino = b.ino;
		st->st_mode = b.mode;
		st->st_uid = b.uid;
		st->st_size = b.size;
		st->st_mtim = b.mtim;
		st->st_ctim = b.ctim;
	}
	if (r < 0)
		return -1;
	return from_bytes(path, &b, opts, out, err);
}

int kp_module_open_buffer(const char *path, const unsigned char *buf, size_t len,
			  const struct kp_open_opts *opts, struct kp_module **out,
			  struct kp_err *err)
{
	struct kp_bytes b;

	*out = NULL;
	if (kp_bytes_from_buffer(buf, len, max_size(opts), &b, err) < 0)
		return -1;
	return from_bytes(path, &b, opts, out, err);
}

void kp_module_free(struct kp_module *m)
{
	if (!m)
		return;
	kp_arena_release(&m->arena);
	free(m);
}
