// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The chain modprobe would load, and the live state it loads into, for
 * `kopolicy hook`. libkmod does the resolving when depmod's .bin indexes
 * exist (kmod_new() on the release directory inside the root, the root's
 * modprobe.d directories as configuration); the text fallback reads
 * modules.dep lines "path: dep dep ..." the way kmod_module_parse_depline()
 * does (dependencies prepended: the last one listed is loaded first).
 *
 * The live state is read here rather than with kp_running_open(), which also
 * parses /proc/kallsyms and the whole tree configuration: the kernel alone
 * takes 60-80 ms to print kallsyms, three times the hook's budget.
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <libkmod.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>

#include "file/bytes.h"
#include "file/inputs.h"
#include "kernel-tree.h"
#include "modprobe-chain.h"
#include "graph/module-set.h"
#include "file/rootfs.h"
#include "util/module-name.h"

#define WALK_MAX_DEPTH 16
#define WALK_MAX_FILES 100000

/* ------------------------------------------------------------------ symbol sets */

static void symset_put(const char **keys, size_t *lens, size_t cap, const char *k, size_t len)
{
	size_t i = kp_hash_bytes(k, len) & (cap - 1);

	while (keys[i])
		i = (i + 1) & (cap - 1);
	keys[i] = k;
	lens[i] = len;
}

int kp_symset_add(struct kp_symset *s, const char *name)
{
	size_t len = strlen(name);

	if (kp_symset_has(s, name, len))
		return 0;
	if (2 * (s->n + 1) > s->cap) {
		size_t ncap = s->cap ? 2 * s->cap : 64;
		const char **keys = kp_calloc(ncap, sizeof(*keys));
		size_t *lens = kp_calloc(ncap, sizeof(*lens));

		if (!keys || !lens || ncap > SIZE_MAX / 4) {
			free(keys);
			free(lens);
			return -1;
		}
		for (size_t i = 0; i < s->cap; i++)
			if (s->keys[i])
				symset_put(keys, lens, ncap, s->keys[i], s->lens[i]);
		free(s->keys);
		free(s->lens);
		s->keys = keys;
		s->lens = lens;
		s->cap = ncap;
	}
	symset_put(s->keys, s->lens, s->cap, name, len);
	s->n++;
	return 0;
}

bool kp_symset_has(const struct kp_symset *s, const char *name, size_t len)
{
	if (!s->cap)
		return false;
	for (size_t i = kp_hash_bytes(name, len) & (s->cap - 1); s->keys[i];
	     i = (i + 1) & (s->cap - 1))
		if (s->lens[i] == len && !memcmp(s->keys[i], name, len))
			return true;
	return false;
}

void kp_symset_free(struct kp_symset *s)
{
	free(s->keys);
	free(s->lens);
	memset(s, 0, sizeof(*s));
}

/* ------------------------------------------------------------------ live state */

/* ------------------------------------------------------------------ chain */

/* The first libkmod error of a call, kept so that silent empty results can be told apart. */
struct kmod_log {
	char msg[256];
	bool set;
};

static void kmod_log_fn(void *data, int priority, const char *file, int line, const char *fn,
			const char *format, va_list args)
{
	struct kmod_log *log = data;

	if (!log || priority > LOG_ERR || log->set)
		return;
	vsnprintf(log->msg, sizeof(log->msg), format, args);
	log->msg[strcspn(log->msg, "\n")] = '\0';
	log->set = true;
}

static int read_text_index(const char *moddir, const char *name, struct kp_bytes *b,
			   struct kp_err *err)
{
	char *path;
	int r;

	if (asprintf(&path, "%s/%s", moddir, name) < 0)
		return kp_err_set(err, "out of memory");
	r = kp_read_file(path, KP_CHAIN_MAX_INDEX, b, err);
	free(path);
	return r;
}

/* ------------------------------------------------------------------ what libkmod reads */

/*
 * libkmod's index format (kmod's libkmod-index.c, as depmod writes it): a header (magic,
 * version, root offset; big-endian 32-bit words), then nodes. A node word holds flags in
 * its top 4 bits and the node's file offset in the low 28. A node: [prefix string if
 * PREFIX] [first, last bytes and last - first + 1 child words if CHILDS] [a value count
 * and that many (priority, string) pairs if VALUES]. depmod writes children before their
 * parent, so in a file it wrote every child lies below its parent: a walk that requires
 * it, and each node reached once, ends after at most one look at each byte.
 */
#define IDX_MAGIC	0xB007F457u
#define IDX_VERSION_MAJ 0x0002u
#define IDX_NODE_PREFIX 0x80000000u
#define IDX_NODE_VALUES 0x40000000u
#define IDX_NODE_CHILDS 0x20000000u
#define IDX_NODE_FLAGS	0xF0000000u
#define IDX_NODE_MASK	0x0FFFFFFFu
#define IDX_HEADER_SIZE 12u
#define IDX_MAX_SIZE	((size_t)256 << 20)

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A NUL-terminated string at @off: its end + 1, or 0 if it runs past the file. */
static size_t idx_string(const unsigned char *d, size_t len, size_t off)
{
	const unsigned char *nul = off < len ? memchr(d + off, '\0', len - off) : NULL;

	return nul ? (size_t)(nul - d) + 1 : 0;
}

int kp_chain_index_check(const unsigned char *d, size_t len, struct kp_err *err)
{
	unsigned char *seen;
	uint32_t *stack;
	size_t sp = 0;
	int r = 0;

	if (len < IDX_HEADER_SIZE || be32(d) != IDX_MAGIC)
		return kp_err_set(err, "not a depmod index (bad magic)");
	if (be32(d + 4) >> 16 != IDX_VERSION_MAJ)
		return kp_err_set(err, "unsupported depmod index version 0x%08x", be32(d + 4));
	if (len > IDX_MAX_SIZE)
		return kp_err_set(err, "larger than the index limit");
	/*
	 * Every push is a child word of the file, so the stack never holds more than len / 4
	 * (+ the root); the bitmap marks node offsets reached.
	 */
	seen = calloc(len / 8 + 1, 1);
	stack = malloc((len / 4 + 2) * sizeof(*stack));
	if (!seen || !stack) {
		free(seen);
		free(stack);
		return kp_err_set(err, "out of memory");
	}
	stack[sp++] = be32(d + 8);
	while (sp && r == 0) {
		uint32_t w = stack[--sp];
		size_t off = w & IDX_NODE_MASK, pos = off;

		if (off < IDX_HEADER_SIZE || off > len) { /* an empty node may end the file */
			r = kp_err_set(err,
				       "corrupt depmod index: node offset 0x%x out of the file", w);
			break;
		}
		if (seen[off / 8] & (1u << (off % 8))) {
			r = kp_err_set(err, "corrupt depmod index: node 0x%zx reached twice", off);
			break;
		}
		seen[off / 8] |= (unsigned char)(1u << (off % 8));
		if ((w & IDX_NODE_PREFIX) && !(pos = idx_string(d, len, pos))) {
			r = kp_err_set(err, "corrupt depmod index: prefix past the end");
			break;
		}
		if (w & IDX_NODE_CHILDS) {
			size_t n;

			if (len - pos < 2 || d[pos] > d[pos + 1] ||
			    len - pos - 2 < 4 * ((size_t)d[pos + 1] - d[pos] + 1)) {
				r = kp_err_set(err,
					       "corrupt depmod index: child table past the end");
				break;
			}
			n = (size_t)d[pos + 1] - d[pos] + 1;
			pos += 2;
			for (const unsigned char *c = d + pos, *e = c + 4 * n; c < e; c += 4) {
				uint32_t cw = be32(c);

				if (!(cw & IDX_NODE_MASK))
					continue; /* no child for this byte */
				/* written before its parent: below it in the file */
				if ((cw & IDX_NODE_MASK) >= off) {
					r = kp_err_set(err,
						       "corrupt depmod index: node 0x%zx points "
						       "forward",
						       off);
					break;
				}
				stack[sp++] = cw;
			}
			pos += 4 * n;
		}
		if (r == 0 && (w & IDX_NODE_VALUES)) {
			uint32_t n;

			if (len - pos < 4) {
				r = kp_err_set(err, "corrupt depmod index: values past the end");
				break;
			}
			n = be32(d + pos);
			pos += 4;
			if (n > (len - pos) / 5) {
				r = kp_err_set(err, "corrupt depmod index: %u values in a node", n);
				break;
			}
			for (uint32_t i = 0; i < n && r == 0; i++) {
				if (len - pos < 4 || !(pos = idx_string(d, len, pos + 4)))
					r = kp_err_set(err,
						       "corrupt depmod index: value past the end");
			}
		}
	}
	free(seen);
	free(stack);
	return r;
}

/*
 * Checks the .bin index @name of @c's release directory before libkmod may read it:
 * absent is fine (libkmod does without it), anything else must be a regular file that
 * passes kp_chain_index_check(). With @keep, the bytes stay in @c (modules.dep.bin, for
 * depbin_has()). Each index is checked once per chain.
 */
struct index_call {
	const struct kp_bytes *b;
	struct kp_err *err;
};

static int index_check_cb(void *arg)
{
	const struct index_call *ic = arg;

	return kp_chain_index_check(ic->b->data, ic->b->len, ic->err);
}

static int check_index(struct kp_chain *c, const char *name, bool keep, struct kp_err *err)
{
	struct kp_bytes b;
	struct stat st;
	char *path;
	int r;

	if (asprintf(&path, "%s/%s", c->moddir, name) < 0)
		return kp_err_set(err, "out of memory");
	/*
	 * depmod creates every optional index and leaves it empty when it has nothing to write
	 * (kmod's output_builtin_bin()/output_builtin_alias_bin() without modules.builtin or
	 * modules.builtin.modinfo); libkmod's index_file_open() then fails exactly as for a
	 * missing file, so an empty optional index is no index, not an error.
	 */
	if (!keep && kp_in_stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0) {
		free(path);
		return 0;
	}
	/* mapped (no copy: the hook's budget), checked under the SIGBUS guard */
	r = kp_bytes_map(path, IDX_MAX_SIZE, &b, err);
	if (r < 0) {
		r = kp_in_lstat(path, &st) < 0 && errno == ENOENT ? 0 : kp_err_prefix(err, path);
		free(path);
		return r;
	}
	{
		struct index_call ic = { .b = &b, .err = err };

		r = kp_bytes_guard(&b, index_check_cb, &ic, err);
	}
	if (r == 0 && keep)
		c->depbin = b;
	else
		kp_bytes_release(&b);
	if (r < 0)
		kp_err_prefix(err, path);
	free(path);
	return r;
}

/*
 * Whether libkmod's exact search of modules.dep.bin (kmod's index_search__node(): the
 * prefix, then the child of the next key byte, a value where the key ends) finds @key.
 * The index passed kp_chain_index_check(): every offset is in the file and each step
 * goes down.
 */
static bool depbin_search(const unsigned char *d, const char *key)
{
	uint32_t w;
	size_t i = 0;

	for (w = be32(d + 8);;) {
		size_t pos = w & IDX_NODE_MASK;
		unsigned first = 0, last = 0;

		if (w & IDX_NODE_PREFIX) {
			const char *p = (const char *)d + pos;
			size_t n = strlen(p);

			if (strncmp(p, key + i, n))
				return false;
			i += n;
			pos += n + 1;
		}
		if (w & IDX_NODE_CHILDS) {
			first = d[pos];
			last = d[pos + 1];
			pos += 2;
		}
		if (!key[i]) {
			if (w & IDX_NODE_CHILDS)
				pos += 4 * ((size_t)last - first + 1);
			return (w & IDX_NODE_VALUES) && be32(d + pos) > 0;
		}
		if (!(w & IDX_NODE_CHILDS) || (unsigned char)key[i] < first ||
		    (unsigned char)key[i] > last)
			return false;
		w = be32(d + pos + 4 * ((size_t)(unsigned char)key[i] - first));
		if (!(w & IDX_NODE_MASK))
			return false;
		i++;
	}
}

struct search_call {
	const unsigned char *d;
	const char *key;
	bool found;
};

static int search_cb(void *arg)
{
	struct search_call *sc = arg;

	sc->found = depbin_search(sc->d, sc->key);
	return 0;
}

/* depbin_search() on the mapped modules.dep.bin, under the SIGBUS guard. */
static bool depbin_has(const struct kp_chain *c, const char *key)
{
	struct search_call sc = { .d = c->depbin.data, .key = key };

	if (!c->depbin.data)
		return false;
	return kp_bytes_guard(&c->depbin, search_cb, &sc, NULL) == 0 && sc.found;
}

/*
 * Before a libkmod lookup of @name: the indexes it can reach are checked. A name in
 * modules.dep.bin (checked at open) ends libkmod's search there; any other name can reach
 * modules.symbols.bin and modules.alias.bin, checked then (once). Checking the large
 * alias index only when it can be read keeps the usual hook call cheap.
 */
static int check_lookup(struct kp_chain *c, const char *name, struct kp_err *err)
{
	char key[4096];
	size_t i = kp_modname_copy(key, sizeof(key), name, SIZE_MAX);

	/* brackets: libkmod normalises differently there; never assume what it finds */
	if (!name[i] && !strpbrk(name, "[]*?") && depbin_has(c, key))
		return 0;
	if (!c->symbols_checked) {
		if (check_index(c, "modules.symbols.bin", false, err) < 0)
			return -1;
		c->symbols_checked = true;
	}
	if (!c->alias_checked) {
		if (check_index(c, "modules.alias.bin", false, err) < 0)
			return -1;
		c->alias_checked = true;
	}
	return 0;
}

int kp_modprobe_config_check(const char *const *paths, struct kp_err *err)
{
	for (size_t i = 0; paths[i]; i++) {
		struct dirent *de;
		struct stat st;
		DIR *d;

		if (kp_in_stat(paths[i], &st) < 0)
			continue; /* libkmod skips what is not there */
		if (!S_ISDIR(st.st_mode)) {
			if (!S_ISREG(st.st_mode))
				return kp_err_set(err, "%s: %s", paths[i],
						  "not a regular file: refused as modprobe "
						  "configuration");
			continue;
		}
		d = kp_in_opendir(paths[i]);
		if (!d)
			continue;
		/* the names libkmod reads (kmod's conf_files_filter_out()): *.conf, no dot first */
		while ((de = readdir(d))) {
			size_t n = strlen(de->d_name);

			if (de->d_name[0] == '.' || n < 6 || strcmp(de->d_name + n - 5, ".conf"))
				continue;
			if (fstatat(dirfd(d), de->d_name, &st, 0) < 0 || S_ISDIR(st.st_mode) ||
			    S_ISREG(st.st_mode))
				continue; /* libkmod skips directories and what vanished */
			kp_err_set(err,
				   "%s/%s: not a regular file: refused as modprobe configuration",
				   paths[i], de->d_name);
			closedir(d);
			return -1;
		}
		closedir(d);
	}
	return 0;
}

int kp_chain_open(struct kp_chain *c, const char *root, const char *moddir,
		  const char *const *builtin, size_t nbuiltin, const char *const *blacklist,
		  size_t nblacklist, struct kp_err *err)
{
	static const char *const conf_dirs[] = {
		"etc/modprobe.d", "run/modprobe.d",	"usr/local/lib/modprobe.d",
		"lib/modprobe.d", "usr/lib/modprobe.d",
	};
	const char *paths[KP_ARRAY_SIZE(conf_dirs) + 1] = { NULL };
	char *bin = NULL;
	size_t np = 0;
	int r;

	memset(c, 0, sizeof(*c));
	c->root = kp_arena_strdup(&c->arena, root && *root ? root : "/");
	c->moddir = kp_arena_strdup(&c->arena, moddir);
	c->builtin = builtin;
	c->nbuiltin = nbuiltin;
	c->blacklist = blacklist;
	c->nblacklist = nblacklist;
	if (!c->root || !c->moddir || asprintf(&bin, "%s/modules.dep.bin", moddir) < 0) {
		kp_chain_close(c);
		return kp_err_set(err, "out of memory");
	}
	if (!kp_is_file(bin)) {
		struct kp_bytes b;

		free(bin);
		r = read_text_index(moddir, "modules.dep", &b, err);
		if (r < 0 && kp_err_errnum(err) == ENOENT) {
			kp_chain_close(c);
			return kp_err_set(err,
					  "%s: no depmod indexes (neither modules.dep.bin nor "
					  "modules.dep): run depmod for this release",
					  moddir);
		}
		if (r < 0) {
			kp_chain_close(c);
			return -1;
		}
		/* a private NUL-terminated copy: the lines are cut in place */
		c->dep_text = malloc(b.len + 1);
		if (!c->dep_text) {
			kp_bytes_release(&b);
			kp_chain_close(c);
			return kp_err_set(err, "out of memory");
		}
		memcpy(c->dep_text, b.data, b.len);
		c->dep_text[b.len] = '\0';
		c->dep_len = b.len;
		kp_bytes_release(&b);
		c->source = KP_CHAIN_TEXT;
		return 0;
	}
	free(bin);
	for (size_t i = 0; i < KP_ARRAY_SIZE(conf_dirs); i++) {
		char *d = kp_root_path(c->root, conf_dirs[i]);
		const char *kept = NULL;

		if (d && !kp_is_dir(d))
			kept = "";
		else if (d)
			kept = kp_arena_strdup(&c->arena, d);
		free(d);
		if (!kept) {
			kp_chain_close(c);
			return kp_err_set(err, "out of memory");
		}
		if (*kept)
			paths[np++] = kept;
	}
	/*
	 * libkmod opens what it reads without O_NONBLOCK and trusts the indexes' offsets:
	 * a FIFO blocks it forever, a corrupt index can loop it. Both refused here first.
	 */
	if (kp_modprobe_config_check(paths, err) < 0 ||
	    check_index(c, "modules.dep.bin", true, err) < 0 ||
	    check_index(c, "modules.builtin.bin", false, err) < 0 ||
	    check_index(c, "modules.builtin.alias.bin", false, err) < 0) {
		kp_chain_close(c);
		return -1;
	}
	/* An empty list (not NULL): never the host's own /etc/modprobe.d. */
	kp_in_note_kmod(moddir, paths);
	c->ctx = kmod_new(moddir, paths);
	if (!c->ctx) {
		kp_chain_close(c);
		return kp_err_set(err, "%s: libkmod cannot open the indexes", moddir);
	}
	kmod_set_log_priority(c->ctx, LOG_ERR);
	kmod_set_log_fn(c->ctx, kmod_log_fn, NULL);
	c->source = KP_CHAIN_LIBKMOD;
	return 0;
}

void kp_chain_close(struct kp_chain *c)
{
	if (c->ctx)
		kmod_unref(c->ctx);
	if (c->depbin.data)
		kp_bytes_release(&c->depbin);
	free(c->dep_text);
	free(c->mods);
	kp_arena_release(&c->arena);
	memset(c, 0, sizeof(*c));
}

static bool is_builtin(const struct kp_chain *c, const char *name)
{
	return kp_sorted_contains(c->builtin, c->nbuiltin, name);
}

static bool is_blacklisted(const struct kp_chain *c, const char *name)
{
	for (size_t i = 0; i < c->nblacklist; i++)
		if (kp_modname_eq(c->blacklist[i], name))
			return true;
	return false;
}

/* A module file as libkmod or modules.dep names it, kept inside the root. */
static int set_paths(struct kp_chain *c, struct kp_chain_module *m, const char *file,
		     struct kp_err *err)
{
	size_t ml = strlen(c->moddir);
	char *p = NULL;

	if (!strncmp(file, c->moddir, ml) && file[ml] == '/')
		p = strdup(file);
	else if (file[0] == '/') /* an absolute modules.dep entry (old depmod) */
		p = kp_root_path(c->root, file);
	else if (asprintf(&p, "%s/%s", c->moddir, file) < 0)
		p = NULL;
	m->path = p ? kp_arena_strdup(&c->arena, p) : NULL;
	free(p);
	if (!m->path)
		return kp_err_set(err, "out of memory");
	if (!strncmp(m->path, c->moddir, ml) && m->path[ml] == '/')
		m->relpath = m->path + ml + 1;
	else
		m->relpath = m->path;
	return 0;
}

static struct kp_chain_module *chain_find(struct kp_chain *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->mods[i].name, name))
			return &c->mods[i];
	return NULL;
}

/* Appends module @name (file @file, NULL for none) unless it is there already. */
static int chain_add(struct kp_chain *c, size_t *cap, const char *name, const char *file,
		     bool target, struct kp_err *err)
{
	char norm[256];
	struct kp_chain_module *m;

	kp_modname_copy(norm, sizeof(norm), name, SIZE_MAX);
	m = chain_find(c, norm);
	if (m) {
		m->target |= target;
		return 0;
	}
	if (c->n >= KP_CHAIN_MAX_MODULES)
		return kp_err_set(err, "%s: more than %d modules on one chain", c->moddir,
				  KP_CHAIN_MAX_MODULES);
	if (kp_grow(&c->mods, cap, c->n + 1, sizeof(*c->mods)) < 0)
		return kp_err_set(err, "out of memory");
	m = &c->mods[c->n];
	memset(m, 0, sizeof(*m));
	m->name = kp_arena_strdup(&c->arena, norm);
	if (!m->name)
		return kp_err_set(err, "out of memory");
	m->target = target;
	m->blacklisted = is_blacklisted(c, norm);
	if (file) {
		if (set_paths(c, m, file, err) < 0)
			return -1;
	} else if (is_builtin(c, norm)) {
		m->builtin = true;
	} else {
		return kp_err_set(err, "%s: module %s has no file and is not built in", c->moddir,
				  norm);
	}
	c->n++;
	return 0;
}

static int resolve_kmod(struct kp_chain *c, const char *name, const char *norm, size_t *cap,
			struct kp_err *err)
{
	struct kmod_log log = { "", false };
	struct kmod_list *list = NULL, *l;
	int r;

	if (check_lookup(c, name, err) < 0)
		return -1;
	kmod_set_log_fn(c->ctx, kmod_log_fn, &log);
	r = kmod_module_new_from_lookup(c->ctx, name, &list);
	if (r < 0) {
		kmod_set_log_fn(c->ctx, kmod_log_fn, NULL);
		return kp_err_set(err, "%s: libkmod cannot look up '%s': %s", c->moddir, name,
				  log.set ? log.msg : strerror(-r));
	}
	r = 0;
	kmod_list_foreach(l, list)
	{
		struct kmod_module *mod = kmod_module_get_module(l);
		const char *mname = kmod_module_get_name(mod);
		struct kmod_list *deps, *d;
		bool alias = strcmp(mname, norm) != 0;

		if (r < 0) {
			kmod_module_unref(mod);
			continue;
		}
		c->via_alias |= alias;
		if (alias && is_blacklisted(c, mname)) {
			c->nblacklisted++;
			kmod_module_unref(mod);
			continue;
		}
		log.set = false;
		deps = kmod_module_get_dependencies(mod);
		if (!deps && log.set)
			r = kp_err_set(err, "%s: dependencies of %s: %s", c->moddir, mname,
				       log.msg);
		kmod_list_foreach(d, deps)
		{
			struct kmod_module *dm = kmod_module_get_module(d);

			if (r == 0)
				r = chain_add(c, cap, kmod_module_get_name(dm),
					      kmod_module_get_path(dm), false, err);
			kmod_module_unref(dm);
		}
		kmod_module_unref_list(deps);
		if (r == 0)
			r = chain_add(c, cap, mname, kmod_module_get_path(mod), true, err);
		kmod_module_unref(mod);
	}
	kmod_module_unref_list(list);
	kmod_set_log_fn(c->ctx, kmod_log_fn, NULL);
	return r;
}

/* The modules.dep line of module @norm, cut out of the text (NUL at ':'); NULL if none. */
static char *dep_line(struct kp_chain *c, const char *norm, char **deps_out, size_t *deps_len)
{
	char *pos = c->dep_text, *end = c->dep_text + c->dep_len;

	while (pos < end) {
		char *nl = memchr(pos, '\n', (size_t)(end - pos));
		char *lend = nl ? nl : end;
		char *colon = memchr(pos, ':', (size_t)(lend - pos));

		if (colon && colon > pos) {
			char name[256], key[512];
			size_t kl = (size_t)(colon - pos);

			if (kl < sizeof(key)) {
				memcpy(key, pos, kl);
				key[kl] = '\0';
				kp_modname_from_path(name, sizeof(name), key, KP_MODNAME_KO);
				if (!strcmp(name, norm)) {
					*deps_out = colon + 1;
					*deps_len = (size_t)(lend - colon - 1);
					return pos;
				}
			}
		}
		pos = nl ? nl + 1 : end;
	}
	return NULL;
}

static int text_add_with_deps(struct kp_chain *c, const char *norm, size_t *cap, bool target,
			      struct kp_err *err)
{
	char *deps, *line, key[512], list[65536];
	char *toks[KP_CHAIN_MAX_MODULES];
	size_t dl, nt = 0;
	char *save = NULL;

	line = dep_line(c, norm, &deps, &dl);
	if (!line)
		return kp_err_set(err, "%s/modules.dep: no line for %s", c->moddir, norm);
	if ((size_t)(deps - 1 - line) >= sizeof(key) || dl >= sizeof(list))
		return kp_err_set(err, "%s/modules.dep: the line of %s is too long", c->moddir,
				  norm);
	memcpy(key, line, (size_t)(deps - 1 - line));
	key[deps - 1 - line] = '\0';
	memcpy(list, deps, dl);
	list[dl] = '\0';
	for (char *t = strtok_r(list, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save)) {
		if (nt == KP_ARRAY_SIZE(toks))
			return kp_err_set(err, "%s/modules.dep: %s has too many dependencies",
					  c->moddir, norm);
		toks[nt++] = t;
	}
	/* kmod_module_parse_depline() prepends: the last dependency listed comes first. */
	while (nt--) {
		char name[256];

		kp_modname_from_path(name, sizeof(name), toks[nt], KP_MODNAME_KO);
		if (chain_add(c, cap, name, toks[nt], false, err) < 0)
			return -1;
	}
	return chain_add(c, cap, norm, key, target, err);
}

/* modules.alias lines "alias PATTERN MODULE": every module whose pattern matches @name. */
static int text_aliases(struct kp_chain *c, const char *name, size_t *cap, bool *found,
			struct kp_err *err)
{
	struct kp_bytes b;
	const char *pos, *end;
	int r = read_text_index(c->moddir, "modules.alias", &b, err);

	*found = false;
	if (r < 0 && kp_err_errnum(err) == ENOENT)
		return 0;
	if (r < 0)
		return -1;
	pos = (const char *)b.data;
	end = pos + b.len;
	r = 0;
	while (pos < end && r == 0) {
		const char *nl = memchr(pos, '\n', (size_t)(end - pos));
		size_t n = nl ? (size_t)(nl - pos) : (size_t)(end - pos);
		char line[1024], *save = NULL, *kw, *pat, *mod;

		if (n < sizeof(line)) {
			memcpy(line, pos, n);
			line[n] = '\0';
			kw = strtok_r(line, " \t", &save);
			pat = kw ? strtok_r(NULL, " \t", &save) : NULL;
			mod = pat ? strtok_r(NULL, " \t\r", &save) : NULL;
			if (mod && !strcmp(kw, "alias") && !fnmatch(pat, name, 0)) {
				char norm[256];

				kp_modname_copy(norm, sizeof(norm), mod, SIZE_MAX);
				*found = true;
				c->via_alias = true;
				if (is_blacklisted(c, norm))
					c->nblacklisted++;
				else
					r = text_add_with_deps(c, norm, cap, true, err);
			}
		}
		pos = nl ? nl + 1 : end;
	}
	kp_bytes_release(&b);
	return r;
}

static int resolve_text(struct kp_chain *c, const char *name, const char *norm, size_t *cap,
			struct kp_err *err)
{
	char *deps;
	size_t dl;
	bool found;

	if (dep_line(c, norm, &deps, &dl))
		return text_add_with_deps(c, norm, cap, true, err);
	if (text_aliases(c, name, cap, &found, err) < 0)
		return -1;
	if (!found && is_builtin(c, norm))
		return chain_add(c, cap, norm, NULL, true, err);
	return 0;
}

int kp_chain_resolve(struct kp_chain *c, const char *name, struct kp_err *err)
{
	char norm[256];
	size_t cap = 0;
	int r;

	free(c->mods);
	c->mods = NULL;
	c->n = 0;
	c->via_alias = false;
	c->nblacklisted = 0;
	if (!*name || strlen(name) >= sizeof(norm))
		return kp_err_set(err, "invalid module name");
	kp_modname_copy(norm, sizeof(norm), name, SIZE_MAX);
	if (c->source == KP_CHAIN_LIBKMOD)
		r = resolve_kmod(c, name, norm, &cap, err);
	else
		r = resolve_text(c, name, norm, &cap, err);
	if (r < 0)
		return -1;
	if (!c->n && !c->nblacklisted)
		return kp_err_errno(
			err, ENOENT, "module %s not found in %s%s", name, c->moddir,
			c->source == KP_CHAIN_TEXT ? " (text modules.dep and modules.alias)" : "");
	return 0;
}

int kp_chain_module_path(struct kp_chain *c, const char *name, const char **path,
			 const char **relpath, struct kp_err *err)
{
	struct kp_chain_module m = { 0 };
	char norm[256];

	*path = *relpath = NULL;
	kp_modname_copy(norm, sizeof(norm), name, SIZE_MAX);
	if (c->source == KP_CHAIN_LIBKMOD) {
		struct kmod_module *mod = NULL;
		const char *file;

		if (kmod_module_new_from_name(c->ctx, norm, &mod) < 0 || !mod)
			return kp_err_set(err, "out of memory");
		file = kmod_module_get_path(mod);
		if (file && set_paths(c, &m, file, err) < 0) {
			kmod_module_unref(mod);
			return -1;
		}
		kmod_module_unref(mod);
	} else {
		char *deps, *line = NULL;
		size_t dl;

		line = dep_line(c, norm, &deps, &dl);
		if (line) {
			char key[512];
			size_t kl = (size_t)(deps - 1 - line);

			if (kl >= sizeof(key))
				return kp_err_set(err, "%s/modules.dep: line too long", c->moddir);
			memcpy(key, line, kl);
			key[kl] = '\0';
			if (set_paths(c, &m, key, err) < 0)
				return -1;
		}
	}
	if (!m.path)
		return 0;
	*path = m.path;
	*relpath = m.relpath;
	return 0;
}

int kp_chain_symbol_owner(struct kp_chain *c, const char *symbol, const char **name,
			  struct kp_err *err)
{
	char key[512];

	*name = NULL;
	if (snprintf(key, sizeof(key), "symbol:%s", symbol) >= (int)sizeof(key))
		return 0;
	if (c->source == KP_CHAIN_LIBKMOD) {
		struct kmod_list *list = NULL;

		if (check_lookup(c, key, err) < 0)
			return -1;
		if (kmod_module_new_from_lookup(c->ctx, key, &list) < 0)
			return kp_err_set(err, "%s: libkmod cannot look up %s", c->moddir, key);
		if (list) {
			struct kmod_module *mod = kmod_module_get_module(list);

			*name = kp_arena_strdup(&c->arena, kmod_module_get_name(mod));
			kmod_module_unref(mod);
			kmod_module_unref_list(list);
			if (!*name)
				return kp_err_set(err, "out of memory");
		}
	} else {
		struct kp_bytes b;
		const char *pos, *end;
		int r = read_text_index(c->moddir, "modules.symbols", &b, err);
		size_t kl = strlen(key);

		if (r < 0)
			return kp_err_errnum(err) == ENOENT ? 0 : -1;
		pos = (const char *)b.data;
		end = pos + b.len;
		while (pos < end && !*name) {
			const char *nl = memchr(pos, '\n', (size_t)(end - pos));
			size_t n = nl ? (size_t)(nl - pos) : (size_t)(end - pos);

			/* "alias symbol:NAME MODULE" */
			if (n > 6 + kl + 1 && !memcmp(pos, "alias ", 6) &&
			    !memcmp(pos + 6, key, kl) && pos[6 + kl] == ' ') {
				const char *m = pos + 6 + kl + 1;
				size_t ml = n - 6 - kl - 1;
				char norm[256];

				while (ml && (m[ml - 1] == '\r' || m[ml - 1] == ' '))
					ml--;
				if (ml && ml < sizeof(norm)) {
					memcpy(norm, m, ml);
					norm[ml] = '\0';
					kp_modname_copy(norm, sizeof(norm), norm, SIZE_MAX);
					*name = kp_arena_strdup(&c->arena, norm);
					if (!*name) {
						kp_bytes_release(&b);
						return kp_err_set(err, "out of memory");
					}
				}
			}
			pos = nl ? nl + 1 : end;
		}
		kp_bytes_release(&b);
	}
	return 0;
}

/* ------------------------------------------------------------------ out-of-tree listing */

struct oot {
	struct kp_arena *arena;
	const char **names;
	const char **rels;
	size_t n, cap, files;
};

static int oot_add(struct oot *o, const char *rel, struct kp_err *err)
{
	char name[256];
	const char *r, *lm;

	/* an absolute entry of an old modules.dep: relative to its release directory */
	if (rel[0] == '/' && (lm = strstr(rel, "/lib/modules/")) && (r = strchr(lm + 13, '/')))
		rel = r + 1;
	if (!strncmp(rel, "kernel/", 7))
		return 0;
	kp_modname_from_path(name, sizeof(name), rel, KP_MODNAME_KO);
	if (!*name)
		return 0;
	if (o->n == o->cap) {
		size_t ncap = o->cap ? o->cap * 2 : 16;
		const char **nn = kp_arena_alloc(o->arena, ncap * sizeof(*nn));
		const char **nr = kp_arena_alloc(o->arena, ncap * sizeof(*nr));

		if (!nn || !nr)
			return kp_err_set(err, "out of memory");
		if (o->n) {
			memcpy(nn, o->names, o->n * sizeof(*nn));
			memcpy(nr, o->rels, o->n * sizeof(*nr));
		}
		o->names = nn;
		o->rels = nr;
		o->cap = ncap;
	}
	o->names[o->n] = kp_arena_strdup(o->arena, name);
	r = kp_arena_strdup(o->arena, rel);
	o->rels[o->n] = r;
	if (!o->names[o->n] || !r)
		return kp_err_set(err, "out of memory");
	o->n++;
	return 0;
}

static int walk(struct oot *o, const char *dir, const char *rel, unsigned depth, struct kp_err *err)
{
	struct dirent *de;
	DIR *d;
	int r = 0;

	if (depth > WALK_MAX_DEPTH)
		return 0;
	d = kp_in_opendir(dir);
	if (!d)
		return 0;
	while (r == 0 && (de = readdir(d))) {
		char *full = NULL, *sub = NULL;
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		if (!*rel && (!strcmp(de->d_name, "kernel") || !strcmp(de->d_name, "build") ||
			      !strcmp(de->d_name, "source")))
			continue;
		if (asprintf(&full, "%s/%s", dir, de->d_name) < 0) {
			r = kp_err_set(err, "out of memory");
			break;
		}
		if (asprintf(&sub, "%s%s%s", rel, *rel ? "/" : "", de->d_name) < 0) {
			free(full);
			r = kp_err_set(err, "out of memory");
			break;
		}
		if (kp_in_lstat(full, &st) == 0) {
			if (S_ISDIR(st.st_mode))
				r = walk(o, full, sub, depth + 1, err);
			else if ((S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) &&
				 kp_is_module_filename(de->d_name)) {
				if (++o->files > WALK_MAX_FILES)
					r = kp_err_set(err, "%s: more than %d module files", dir,
						       WALK_MAX_FILES);
				else
					r = oot_add(o, sub, err);
			}
		}
		free(full);
		free(sub);
	}
	closedir(d);
	return r;
}

static int cmp_pair(const void *a, const void *b)
{
	const char *const *x = a, *const *y = b;
	int d = strcmp(x[0], y[0]);

	return d ? d : strcmp(x[1], y[1]);
}

int kp_chain_out_of_tree(const char *moddir, struct kp_arena *arena, const char ***names,
			 const char ***relpaths, size_t *n, struct kp_err *err)
{
	struct oot o = { .arena = arena };
	struct kp_bytes b;
	const char **pairs;
	size_t k = 0;
	int r = read_text_index(moddir, "modules.dep", &b, err);

	*names = *relpaths = NULL;
	*n = 0;
	if (r == 0) {
		const char *pos = (const char *)b.data, *end = pos + b.len;

		while (pos < end && r == 0) {
			const char *nl = memchr(pos, '\n', (size_t)(end - pos));
			const char *lend = nl ? nl : end;
			const char *colon = memchr(pos, ':', (size_t)(lend - pos));
			char rel[512];

			if (colon && colon > pos && (size_t)(colon - pos) < sizeof(rel)) {
				memcpy(rel, pos, (size_t)(colon - pos));
				rel[colon - pos] = '\0';
				r = oot_add(&o, rel, err);
			}
			pos = nl ? nl + 1 : end;
		}
		kp_bytes_release(&b);
	} else if (kp_err_errnum(err) == ENOENT) {
		r = walk(&o, moddir, "", 0, err);
	}
	if (r < 0)
		return -1;
	if (!o.n)
		return 0;
	pairs = malloc(o.n * 2 * sizeof(*pairs));
	if (!pairs)
		return kp_err_set(err, "out of memory");
	for (size_t i = 0; i < o.n; i++) {
		pairs[2 * i] = o.names[i];
		pairs[2 * i + 1] = o.rels[i];
	}
	qsort(pairs, o.n, 2 * sizeof(*pairs), cmp_pair);
	for (size_t i = 0; i < o.n; i++) {
		if (k && !strcmp(o.names[k - 1], pairs[2 * i]))
			continue; /* modprobe loads the first one modules.dep lists */
		o.names[k] = pairs[2 * i];
		o.rels[k] = pairs[2 * i + 1];
		k++;
	}
	free(pairs);
	*names = o.names;
	*relpaths = o.rels;
	*n = k;
	return 0;
}

/* ------------------------------------------------------------------ filtered exports */

/* Module.symvers: the symbol is the second TAB-separated field. */
static bool keep_symvers(const struct kp_symset *wanted, const char *s, size_t n)
{
	const char *t1 = memchr(s, '\t', n), *t2;

	if (!t1)
		return true; /* malformed: let the parser say so */
	t2 = memchr(t1 + 1, '\t', n - (size_t)(t1 + 1 - s));
	if (!t2)
		return true;
	return kp_symset_has(wanted, t1 + 1, (size_t)(t2 - t1 - 1));
}

/* kallsyms / System.map: "ADDR TYPE NAME[\t[module]]". */
static bool keep_kallsyms(const struct kp_symset *wanted, const char *s, size_t n)
{
	const char *name, *dot;
	size_t nl;

	if (memchr(s, '\t', n))
		return false; /* a module's symbol: only vmlinux is read */
	name = memchr(s, ' ', n);
	name = name ? memchr(name + 1, ' ', n - (size_t)(name + 1 - s)) : NULL;
	if (!name)
		return true;
	name++;
	nl = n - (size_t)(name - s);
	if ((nl >= 17 && !memcmp(name, "__start___ksymtab", 17)) ||
	    (nl >= 16 && !memcmp(name, "__stop___ksymtab", 16)))
		return true;
	if (nl > 6 && !memcmp(name, "__crc_", 6))
		return kp_symset_has(wanted, name + 6, nl - 6);
	if (nl <= 10 || memcmp(name, "__ksymtab_", 10))
		return false;
	name += 10;
	nl -= 10;
	dot = memchr(name, '.', nl); /* v5.4: __ksymtab_<ns>.<sym> */
	if (dot) {
		nl -= (size_t)(dot + 1 - name);
		name = dot + 1;
	}
	return kp_symset_has(wanted, name, nl);
}

struct keep {
	const struct kp_symset *wanted;
	bool kallsyms;
	char *out;
	size_t len, cap;
	bool oom;
};

static int keep_line(const char *s, size_t n, void *arg)
{
	struct keep *k = arg;

	if (!n || !(k->kallsyms ? keep_kallsyms(k->wanted, s, n) : keep_symvers(k->wanted, s, n)))
		return 0;
	if (kp_grow(&k->out, &k->cap, k->len + n + 1, 1) < 0) {
		k->oom = true;
		return -1;
	}
	memcpy(k->out + k->len, s, n);
	k->len += n;
	k->out[k->len++] = '\n';
	return 0;
}

int kp_chain_load_exports(struct kp_kernel_base *b, const char *path, bool kallsyms,
			  const struct kp_symset *wanted, struct kp_err *err)
{
	struct keep k = { .wanted = wanted, .kallsyms = kallsyms };
	int r;

	/* line by line through one buffer: only the lines of wanted symbols are kept */
	r = kp_bytes_lines(path, kallsyms ? KP_CHAIN_MAX_KALLSYM : KP_CHAIN_MAX_SYMVERS, keep_line,
			   &k, err);
	if (k.oom)
		kp_err_set(err, "out of memory");
	if (r < 0) {
		free(k.out);
		return kp_err_prefix(err, path);
	}
	if (k.len && kallsyms)
		r = kp_base_load_system_map_buffer(b, path, (unsigned char *)k.out, k.len, err);
	else if (k.len)
		r = kp_base_load_symvers_buffer(b, path, (unsigned char *)k.out, k.len, err);
	free(k.out);
	return r < 0 ? -1 : 0;
}
