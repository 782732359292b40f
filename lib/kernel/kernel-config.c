// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Kernel .config files as scripts/kconfig/confdata.c writes them:
 *   CONFIG_X=y | m | 123 | 0x1f | "string with \" and \\ escaped"
 *   # CONFIG_X is not set
 *   # any other comment (the header names the arch and version)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel-config.h"
#include "file/rootfs.h"

#define KCONFIG_MAX_SIZE ((size_t)64 << 20)

struct parse {
	struct kp_kconfig *c;
	const char *label;
	size_t lineno;
	size_t cap;
	struct kp_err *err;
};

static bool is_sym_char(char ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
	       ch == '_';
}

static int add(struct parse *p, const char *name, size_t nlen, const char *value, size_t vlen)
{
	struct kp_kconfig *c = p->c;
	struct kp_kconfig_entry *e;

	if (kp_grow(&c->entries, &p->cap, c->nentries + 1, sizeof(*c->entries)) < 0)
		return kp_err_set(p->err, "out of memory");
	e = &c->entries[c->nentries];
	e->name = kp_arena_strndup(&c->arena, name, nlen);
	e->value = kp_arena_strndup(&c->arena, value, vlen);
	if (!e->name || !e->value)
		return kp_err_set(p->err, "out of memory");
	e->line = p->lineno;
	c->nentries++;
	return 0;
}

/* "# Linux/x86 6.12.118 Kernel Configuration" */
static int header(struct parse *p, const char *s, size_t len)
{
	static const char pre[] = "# Linux/", post[] = " Kernel Configuration";
	const char *arch, *sp;

	if (p->c->version || len < sizeof(pre) + sizeof(post) || strncmp(s, pre, sizeof(pre) - 1) ||
	    memcmp(s + len - (sizeof(post) - 1), post, sizeof(post) - 1))
		return 0;
	arch = s + sizeof(pre) - 1;
	len -= sizeof(pre) - 1 + sizeof(post) - 1;
	sp = memchr(arch, ' ', len);
	if (!sp || sp == arch || (size_t)(sp - arch) + 1 >= len)
		return 0;
	p->c->arch = kp_arena_strndup(&p->c->arena, arch, (size_t)(sp - arch));
	p->c->version = kp_arena_strndup(&p->c->arena, sp + 1, len - (size_t)(sp - arch) - 1);
	if (!p->c->arch || !p->c->version)
		return kp_err_set(p->err, "out of memory");
	return 0;
}

static int comment(struct parse *p, const char *s, size_t len)
{
	static const char not_set[] = " is not set";
	size_t n = 0;

	/* "# CONFIG_X is not set" */
	if (len > 9 && !strncmp(s, "# CONFIG_", 9)) {
		while (2 + n < len && is_sym_char(s[2 + n]))
			n++;
		if (len - 2 - n == sizeof(not_set) - 1 && !memcmp(s + 2 + n, not_set, len - 2 - n))
			return add(p, s + 2, n, "n", 1);
	}
	return header(p, s, len);
}

static int assignment(struct parse *p, const char *s, size_t len)
{
	const char *eq = memchr(s, '=', len), *v;
	char *buf;
	size_t n = 0, vlen;
	int r;

	for (size_t i = 0; s + i < (eq ? eq : s + len); i++)
		if (!is_sym_char(s[i]))
			eq = NULL;
	if (!eq || eq - s <= 7 || strncmp(s, "CONFIG_", 7))
		return kp_err_set(p->err, "%s:%zu: expected CONFIG_NAME=value or a # comment",
				  p->label, p->lineno);
	v = eq + 1;
	vlen = len - (size_t)(v - s);
	if (!vlen || v[0] != '"') {
		for (size_t i = 0; i < vlen; i++)
			if ((unsigned char)v[i] <= ' ')
				return kp_err_set(p->err,
						  "%s:%zu: blank in the unquoted value of "
						  "%.*s",
						  p->label, p->lineno, (int)(eq - s), s);
		return add(p, s, (size_t)(eq - s), v, vlen);
	}
	/* Quoted string: drop the quotes, undo \" and \\. */
	if (vlen < 2 || v[vlen - 1] != '"')
		return kp_err_set(p->err, "%s:%zu: unterminated string value of %.*s", p->label,
				  p->lineno, (int)(eq - s), s);
	buf = malloc(vlen);
	if (!buf)
		return kp_err_set(p->err, "out of memory");
	for (size_t i = 1; i + 1 < vlen; i++) {
		if (v[i] == '\\' && i + 2 < vlen)
			i++;
		else if (v[i] == '"') {
			free(buf);
			return kp_err_set(p->err, "%s:%zu: unescaped quote in the value of %.*s",
					  p->label, p->lineno, (int)(eq - s), s);
		}
		buf[n++] = v[i];
	}
	r = add(p, s, (size_t)(eq - s), buf, n);
	free(buf);
	return r;
}

/* The last assignment of @name ("CONFIG_X" or "X"): a symbol set twice, the last one wins. */
static const struct kp_kconfig_entry *find(const struct kp_kconfig *c, const char *name)
{
	const struct kp_symbol_index_entry *e;
	char full[256];

	if (strncmp(name, "CONFIG_", 7)) {
		snprintf(full, sizeof(full), "CONFIG_%s", name);
		name = full;
	}
	e = kp_symbol_index_find(&c->index, name); /* one entry per name: the last assignment */
	return e ? e->value : NULL;
}

const char *kp_kconfig_get(const struct kp_kconfig *c, const char *name)
{
	const struct kp_kconfig_entry *e;
	struct kp_kv kv;
	char full[256];

	if (c->map.data) {
		if (strncmp(name, "CONFIG_", 7)) {
			snprintf(full, sizeof(full), "CONFIG_%s", name);
			name = full;
		}
		switch (kp_kvtab_find(&c->table, name, &kv)) {
		case 1:
			return kv.value;
		case 0:
			return NULL;
		default:
			*c->damaged = true; /* the caller parses again */
			return NULL;
		}
	}
	e = find(c, name);
	return e ? e->value : NULL;
}

bool kp_kconfig_is_y(const struct kp_kconfig *c, const char *name)
{
	const char *v = kp_kconfig_get(c, name);

	return v && !strcmp(v, "y");
}

/*
 * The options that fix PAGE_SIZE before v6.9's CONFIG_PAGE_SHIFT (arch/Kconfig, v6.9+: from
 * the HAVE_PAGE_SIZE_* choice), one choice per architecture; the first =y one decides. Each
 * row is the arch/<arch>/include/asm/page.h test of the kernels that have the option.
 */
static const struct {
	const char *name;
	unsigned shift;
} page_size_options[] = {
	/* arch/Kconfig PAGE_SIZE_* (v6.9+); arch/{mips,loongarch,hexagon,sh}/Kconfig before it
	 * (and in 6.1 arch/powerpc/Kconfig's def_bool copies of PPC_*_PAGES) */
	{ "CONFIG_PAGE_SIZE_4KB", 12 },
	{ "CONFIG_PAGE_SIZE_8KB", 13 },
	{ "CONFIG_PAGE_SIZE_16KB", 14 },
	{ "CONFIG_PAGE_SIZE_32KB", 15 },
	{ "CONFIG_PAGE_SIZE_64KB", 16 },
	{ "CONFIG_PAGE_SIZE_256KB", 18 },
	/* arch/arm64/Kconfig ARM64_*_PAGES (all versions) */
	{ "CONFIG_ARM64_4K_PAGES", 12 },
	{ "CONFIG_ARM64_16K_PAGES", 14 },
	{ "CONFIG_ARM64_64K_PAGES", 16 },
	/* arch/powerpc/Kconfig PPC_*_PAGES (all versions; PPC_PAGE_SHIFT 12/14/16/18) */
	{ "CONFIG_PPC_4K_PAGES", 12 },
	{ "CONFIG_PPC_16K_PAGES", 14 },
	{ "CONFIG_PPC_64K_PAGES", 16 },
	{ "CONFIG_PPC_256K_PAGES", 18 },
	/* arch/parisc/Kconfig PARISC_PAGE_SIZE_* (all versions; v6.9+ also PAGE_SHIFT) */
	{ "CONFIG_PARISC_PAGE_SIZE_4KB", 12 },
	{ "CONFIG_PARISC_PAGE_SIZE_16KB", 14 },
	{ "CONFIG_PARISC_PAGE_SIZE_64KB", 16 },
	/* arch/ia64/Kconfig IA64_PAGE_SIZE_* (5.10, 6.1; ia64 is gone from 6.12) */
	{ "CONFIG_IA64_PAGE_SIZE_4KB", 12 },
	{ "CONFIG_IA64_PAGE_SIZE_8KB", 13 },
	{ "CONFIG_IA64_PAGE_SIZE_16KB", 14 },
	{ "CONFIG_IA64_PAGE_SIZE_64KB", 16 },
	/* arch/arc/Kconfig ARC_PAGE_SIZE_*K (all versions; uapi/asm/page.h before v6.9) */
	{ "CONFIG_ARC_PAGE_SIZE_4K", 12 },
	{ "CONFIG_ARC_PAGE_SIZE_8K", 13 },
	{ "CONFIG_ARC_PAGE_SIZE_16K", 14 },
	/* arch/microblaze/Kconfig MICROBLAZE_*_PAGES (5.10; 6.1 has a fixed 4 KiB) */
	{ "CONFIG_MICROBLAZE_4K_PAGES", 12 },
	{ "CONFIG_MICROBLAZE_16K_PAGES", 14 },
	{ "CONFIG_MICROBLAZE_64K_PAGES", 16 },
	/* arch/nds32/Kconfig.cpu ANDES_PAGE_SIZE_* (5.10; nds32 is gone from 6.1) */
	{ "CONFIG_ANDES_PAGE_SIZE_4KB", 12 },
	{ "CONFIG_ANDES_PAGE_SIZE_8KB", 13 },
	/* no choice before v6.9, a fixed 8 KiB: alpha, sparc64 (page_64.h), openrisc,
	 * m68k's Sun-3 and ColdFire; v6.9+ they select HAVE_PAGE_SIZE_8KB (PAGE_SHIFT=13) */
	{ "CONFIG_ALPHA", 13 },
	{ "CONFIG_SPARC64", 13 },
	{ "CONFIG_OPENRISC", 13 },
	{ "CONFIG_SUN3", 13 },
	{ "CONFIG_COLDFIRE", 13 },
};

unsigned kp_kconfig_page_shift(const struct kp_kconfig *c)
{
	const char *v = kp_kconfig_get(c, "CONFIG_PAGE_SHIFT");

	/* mm/Kconfig PAGE_SHIFT (v6.9+): 12 .. 18 (hexagon's 256 KiB) */
	if (v) {
		char *end;
		unsigned long s = strtoul(v, &end, 10);

		if (end != v && !*end && s >= 12 && s <= 18)
			return (unsigned)s;
		return 0;
	}
	for (size_t i = 0; i < sizeof(page_size_options) / sizeof(page_size_options[0]); i++)
		if (kp_kconfig_is_y(c, page_size_options[i].name))
			return page_size_options[i].shift;
	return 0;
}

static const char *string_or_null(const struct kp_kconfig *c, const char *name)
{
	const char *v = kp_kconfig_get(c, name);

	return v && strcmp(v, "n") ? v : NULL;
}

static void shortcuts(struct kp_kconfig *c)
{
	c->modules = kp_kconfig_is_y(c, "MODULES");
	c->modversions = kp_kconfig_is_y(c, "MODVERSIONS");
	c->basic_modversions = kp_kconfig_is_y(c, "BASIC_MODVERSIONS");
	c->extended_modversions = kp_kconfig_is_y(c, "EXTENDED_MODVERSIONS");
	c->module_rel_crcs = kp_kconfig_is_y(c, "MODULE_REL_CRCS");
	c->module_sig = kp_kconfig_is_y(c, "MODULE_SIG");
	c->module_sig_force = kp_kconfig_is_y(c, "MODULE_SIG_FORCE");
	c->module_sig_all = kp_kconfig_is_y(c, "MODULE_SIG_ALL");
	c->module_force_load = kp_kconfig_is_y(c, "MODULE_FORCE_LOAD");
	c->module_unload = kp_kconfig_is_y(c, "MODULE_UNLOAD");
	c->module_force_unload = kp_kconfig_is_y(c, "MODULE_FORCE_UNLOAD");
	c->allow_missing_ns = kp_kconfig_is_y(c, "MODULE_ALLOW_MISSING_NAMESPACE_IMPORTS");
	c->livepatch = kp_kconfig_is_y(c, "LIVEPATCH");
	c->strict_module_rwx = kp_kconfig_is_y(c, "STRICT_MODULE_RWX");
	c->trim_unused_ksyms = kp_kconfig_is_y(c, "TRIM_UNUSED_KSYMS");
	c->prel32 = kp_kconfig_is_y(c, "HAVE_ARCH_PREL32_RELOCATIONS");
	c->lockdown_lsm = kp_kconfig_is_y(c, "SECURITY_LOCKDOWN_LSM");
	c->lockdown_early = kp_kconfig_is_y(c, "SECURITY_LOCKDOWN_LSM_EARLY");
	c->lockdown_force_integrity = kp_kconfig_is_y(c, "LOCK_DOWN_KERNEL_FORCE_INTEGRITY");
	c->lockdown_force_confidentiality =
		kp_kconfig_is_y(c, "LOCK_DOWN_KERNEL_FORCE_CONFIDENTIALITY");
	c->module_sig_blacklist = kp_kconfig_is_y(c, "MODULE_SIG_BLACKLIST");
	c->module_sig_hash = string_or_null(c, "MODULE_SIG_HASH");
	c->localversion = string_or_null(c, "LOCALVERSION");
}

int kp_kconfig_load_buffer(struct kp_kconfig *c, const char *label, const unsigned char *buf,
			   size_t len, struct kp_err *err)
{
	struct parse p = { .c = c, .label = label, .err = err };
	const char *pos = (const char *)buf, *end = pos + len;

	kp_kconfig_release(c);
	/*
	 * Sized once: an entry per line at most, and every name and value with its NUL fits
	 * in the text's own length (the label and header aside): no copy per doubling, which
	 * costs the hook more in page faults than the parsing itself.
	 */
	for (const char *q = pos; q < end && (q = memchr(q, '\n', (size_t)(end - q))); q++)
		p.cap++;
	p.cap++;
	c->entries = calloc(p.cap, sizeof(*c->entries));
	if (!c->entries || kp_arena_reserve(&c->arena, len + strlen(label) + 256) < 0)
		return kp_err_set(err, "out of memory");
	c->path = kp_arena_strdup(&c->arena, label);
	if (!c->path)
		return kp_err_set(err, "out of memory");
	while (pos < end) {
		const char *nl = memchr(pos, '\n', (size_t)(end - pos));
		size_t l = nl ? (size_t)(nl - pos) : (size_t)(end - pos);
		int r = 0;

		p.lineno++;
		if (memchr(pos, '\0', l))
			return kp_err_set(err, "%s:%zu: NUL byte: not a text file", label,
					  p.lineno);
		if (l && pos[l - 1] == '\r')
			l--;
		if (l && pos[0] == '#')
			r = comment(&p, pos, l);
		else if (l)
			r = assignment(&p, pos, l);
		if (r < 0)
			return -1;
		pos = nl ? nl + 1 : end;
	}
	if (!c->nentries)
		return kp_err_set(err, "%s: no CONFIG_ lines: not a kernel configuration", label);
	/*
	 * Indexed once parsing is over (the array no longer moves), the last assignment of
	 * each name only (it wins, as in kconfig): lookups stay O(1) however often a name is
	 * repeated (last to first, a name is added when not indexed yet).
	 */
	if (kp_symbol_index_init(&c->index, c->nentries) < 0)
		return kp_err_set(err, "out of memory");
	for (size_t i = c->nentries; i-- > 0;)
		if (!kp_symbol_index_find(&c->index, c->entries[i].name) &&
		    kp_symbol_index_add(&c->index, c->entries[i].name, &c->entries[i]) < 0)
			return kp_err_set(err, "out of memory");
	shortcuts(c);
	c->known = true;
	return 0;
}

int kp_kconfig_load(struct kp_kconfig *c, const char *path, struct kp_err *err)
{
	return kp_kconfig_load_in(c, NULL, path, err);
}

int kp_kconfig_load_in(struct kp_kconfig *c, const struct kp_root_dir *root, const char *path,
		       struct kp_err *err)
{
	struct kp_bytes b;
	int r;

	kp_kconfig_release(c);
	if (kp_read_file_in(root, path, KCONFIG_MAX_SIZE, &b, err) < 0)
		return -1;
	r = kp_kconfig_load_buffer(c, path, b.data, b.len, err);
	kp_bytes_release(&b);
	return r;
}

void kp_kconfig_release(struct kp_kconfig *c)
{
	if (c->cache && c->damaged && *c->damaged)
		kp_base_cache_drop(c->cache, &c->key); /* parsed and stored again next time */
	kp_base_map_release(&c->map);
	free(c->entries);
	kp_symbol_index_release(&c->index);
	kp_arena_release(&c->arena);
	memset(c, 0, sizeof(*c));
}

/* ------------------------------------------------------------------ through the base cache */

/* The table of the parsed @c: each symbol's last assignment, the header's arch and version. */
static int encode(const struct kp_kconfig *c, unsigned char **tab, size_t *len)
{
	const struct kp_kv attrs[] = { { .name = "arch", .value = c->arch },
				       { .name = "version", .value = c->version } };
	struct kp_kv *kv = malloc((c->nentries ? c->nentries : 1) * sizeof(*kv));
	size_t n = 0;
	int r;

	if (!kv)
		return -1;
	for (size_t i = 0; i < c->nentries; i++) {
		const struct kp_kconfig_entry *e = &c->entries[i];

		if (find(c, e->name) != e || e->line > UINT32_MAX)
			continue; /* set again later: the last one wins */
		kv[n++] = (struct kp_kv){ .name = e->name,
					  .value = e->value,
					  .line = (uint32_t)e->line };
	}
	r = kp_kvtab_encode(kv, n, attrs, KP_ARRAY_SIZE(attrs), tab, len);
	free(kv);
	return r;
}

/* @c from a mapped table (@map taken over): 0, or -1 (damaged: @map released, @c empty). */
static int from_table(struct kp_kconfig *c, const char *path, struct kp_base_map *map)
{
	const char *arch, *version;

	kp_kconfig_release(c);
	if (kp_kvtab_open(&c->table, map->data, map->len) < 0 || !c->table.n ||
	    kp_kvtab_attr(&c->table, "arch", &arch) < 0 ||
	    kp_kvtab_attr(&c->table, "version", &version) < 0)
		goto bad;
	c->map = *map;
	memset(map, 0, sizeof(*map));
	c->path = kp_arena_strdup(&c->arena, path);
	c->damaged = kp_arena_alloc(&c->arena, sizeof(*c->damaged));
	c->arch = arch;
	c->version = version;
	if (!c->path || !c->damaged) {
		kp_kconfig_release(c);
		return -1;
	}
	*c->damaged = false;
	shortcuts(c);
	if (*c->damaged) {
		kp_kconfig_release(c);
		return -1;
	}
	c->known = true;
	return 0;
bad:
	kp_kconfig_release(c);
	kp_base_map_release(map);
	return -1;
}

int kp_kconfig_load_cached(struct kp_kconfig *c, const struct kp_root_dir *root, const char *path,
			   struct kp_base_cache *cache, struct kp_err *err)
{
	struct kp_base_input in = { .fd = -1 }, *inp = &in;
	struct kp_err why = { 0 };
	struct kp_base_key key;
	struct kp_base_map map = { 0 };
	struct kp_bytes text;
	unsigned char *tab;
	size_t tlen;
	int r;

	if (!cache)
		return kp_kconfig_load_in(c, root, path, err);
	if (kp_base_input_open_in(&in, root, path, &why) < 0 ||
	    kp_base_key_make(&key, "kconfig", &inp, 1, KCONFIG_MAX_SIZE, &why) < 0) {
		kp_base_input_close(&in);
		return kp_kconfig_load_in(c, root, path, err);
	}
	if (kp_base_cache_get(cache, &key, &map) == 1) {
		if (from_table(c, path, &map) == 0) {
			c->cache = cache;
			c->key = key;
			kp_base_input_close(&in);
			return 0;
		}
		kp_base_cache_drop(cache, &key); /* damaged: parsed and stored again */
	}
	kp_base_cache_note_miss(cache);
	if (kp_base_input_read(&in, KCONFIG_MAX_SIZE, &why) < 0 ||
	    kp_bytes_from_text_buffer(in.raw, in.len, KCONFIG_MAX_SIZE, &text, &why) < 0) {
		kp_base_input_close(&in);
		return kp_kconfig_load_in(c, root, path, err); /* its messages */
	}
	r = kp_kconfig_load_buffer(c, path, text.data, text.len, err);
	kp_bytes_release(&text);
	key.storable = key.storable && !in.changed;
	if (r == 0 && key.storable && encode(c, &tab, &tlen) == 0) {
		kp_base_cache_put(cache, &key, tab, tlen);
		free(tab);
	}
	kp_base_input_close(&in);
	return r;
}
