// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What libkmod reads, checked before it reads it (modprobe-index.h): depmod's .bin indexes
 * walked once with every offset bounded, the modprobe.d entries it would open, and the text
 * indexes read for the chain's fallback and the out-of-tree listing.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache/index-memo.h"
#include "file/bytes.h"
#include "file/inputs.h"
#include "file/rootfs.h"
#include "modprobe-chain-internal.h"
#include "modprobe-index.h"
#include "modprobe-snapshot.h"
#include "util/io.h"
#include "util/module-name.h"

int kp_chain_read_text_index(const struct kp_root_dir *root, const char *moddir, const char *name,
			     struct kp_bytes *b, struct kp_err *err)
{
	char *path, *real;
	int r;

	if (asprintf(&path, "%s/%s", moddir, name) < 0)
		return kp_err_set(err, "out of memory");
	/* a symlink is followed inside the root, as that system reads it */
	real = kp_root_resolve_path(root->path, path);
	if (!real) {
		r = errno == ELOOP
			    ? kp_err_errno(err, ELOOP, "%s: cannot resolve inside the root: %s",
					   path, strerror(ELOOP))
			    : kp_err_set(err, "out of memory");
		free(path);
		return r;
	}
	r = kp_read_file_in(root, real, KP_CHAIN_MAX_INDEX, b, err);
	free(real);
	free(path);
	return r;
}

/*
 * 0 when libkmod, opening @path by name on the host, reads what the system at @root would;
 * else -1 with "@path: @what ..." (a symlink leading out of the root, or looping).
 */
static int kmod_reads_root(const char *root, const char *path, const char *what, struct kp_err *err)
{
	int same = kp_root_same_on_host(root, path);

	if (same < 0)
		return kp_err_set(err, "out of memory");
	if (!same)
		return kp_err_set(err,
				  "%s: a symlink that leads out of %s (or loops): refused as %s "
				  "(libkmod would follow it on the host)",
				  path, root, what);
	return 0;
}

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
 * depbin_has()). Each index is checked once per chain, and not at all when @c's memo says
 * that the file in this very state passed before (cache/index-memo.h).
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

/* Whether @fd is still in the state @st (nothing wrote to it, nothing replaced it). */
static bool same_state(int fd, const struct stat *st)
{
	struct stat now;
	uint64_t a[8], b[8];

	if (fstat(fd, &now) < 0)
		return false;
	kp_file_state(st, a);
	kp_file_state(&now, b);
	return !memcmp(a, b, sizeof(a));
}

/*
 * The index open as @fd (state @st) checked, mapped and walked, unless the memo knows its
 * state passed; with @keep, its mapping kept in @c. 0, or -1 with @err.
 *
 * The memo is asked only about the descriptor's own state (never a name), and only for the
 * root's own files: a private copy (a root that others could change, modprobe-snapshot.c)
 * is made anew by every run, so it is walked every time; keying it by its bytes would cost
 * a SHA-256 of the same bytes the walk reads once.
 */
static int check_open_index(struct kp_chain *c, int fd, const struct stat *st, bool keep,
			    struct kp_err *err)
{
	unsigned char key[KP_INDEX_MEMO_KEY_LEN];
	struct timespec before;
	struct kp_bytes b;
	bool keyed = false;
	int r;

	if (c->memo && !c->kc->active) {
		/* before any of its bytes are read: the settle rule's reference */
		clock_gettime(CLOCK_REALTIME, &before);
		keyed = kp_index_memo_key(c->memo, fd, st, &before, key) == 0;
	}
	if (keyed && kp_index_memo_passed(c->memo, key)) {
		/* passed in this state: mapped only for depbin_has(), and still that state */
		if (!keep)
			return 0;
		if (kp_bytes_map_fd(fd, st, IDX_MAX_SIZE, &b, err) < 0)
			return -1;
		if (same_state(fd, st)) {
			c->depbin = b;
			return 0;
		}
		kp_bytes_release(&b); /* changed meanwhile: walked as any other */
		keyed = false;
	}
	/* mapped (no copy: the hook's budget), checked under the SIGBUS guard */
	if (kp_bytes_map_fd(fd, st, IDX_MAX_SIZE, &b, err) < 0)
		return -1;
	{
		struct index_call ic = { .b = &b, .err = err };

		r = kp_bytes_guard(&b, index_check_cb, &ic, err);
	}
	/* counted; stored only when it passed and nothing wrote to the file while it was walked */
	kp_index_memo_put(c->memo, r == 0 && keyed && same_state(fd, st) ? key : NULL);
	if (r == 0 && keep)
		c->depbin = b;
	else
		kp_bytes_release(&b);
	return r;
}

int kp_chain_check_index(struct kp_chain *c, const char *name, bool keep, struct kp_err *err)
{
	struct stat st;
	char *path, *shown;
	int fd, r;

	if (asprintf(&path, "%s/%s", kp_kmod_dir(c->kc, c->moddir), name) < 0)
		return kp_err_set(err, "out of memory");
	if (asprintf(&shown, "%s/%s", c->moddir, name) < 0) {
		free(path);
		return kp_err_set(err, "out of memory");
	}
	/*
	 * A link out of the root refused as before, whichever copy libkmod reads; with a
	 * snapshot, the file then copied through the pinned root, and the copy checked and read.
	 */
	if (kmod_reads_root(c->root, shown, "a depmod index", err) < 0 ||
	    kp_kmod_copy_file(c->kc, name, IDX_MAX_SIZE, err) < 0) {
		free(shown);
		free(path);
		return -1;
	}
	/* opened once: what is walked or mapped is this file, and its state keys the memo */
	fd = kp_open_regular(path, &st, err);
	if (fd < 0) {
		r = kp_in_lstat(path, &st) < 0 && errno == ENOENT ? 0 : kp_err_prefix(err, shown);
		free(shown);
		free(path);
		return r;
	}
	/*
	 * depmod creates every optional index and leaves it empty when it has nothing to write
	 * (kmod's output_builtin_bin()/output_builtin_alias_bin() without modules.builtin or
	 * modules.builtin.modinfo); libkmod's index_file_open() then fails exactly as for a
	 * missing file, so an empty optional index is no index, not an error.
	 */
	r = !keep && st.st_size == 0 ? 0 : check_open_index(c, fd, &st, keep, err);
	close(fd);
	if (r < 0)
		kp_err_prefix(err, shown);
	free(shown);
	free(path);
	return r;
}

/*
 * Whether libkmod's exact search of modules.dep.bin (kmod's index_search__node(): the
 * prefix, then the child of the next key byte, a value where the key ends) finds @key.
 * The index passed kp_chain_index_check(): every offset is in the file and each step
 * goes down.
 */
static size_t depbin_search(const unsigned char *d, const char *key)
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
				return 0;
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
			return (w & IDX_NODE_VALUES) && be32(d + pos) > 0 ? pos : 0;
		}
		if (!(w & IDX_NODE_CHILDS) || (unsigned char)key[i] < first ||
		    (unsigned char)key[i] > last)
			return 0;
		w = be32(d + pos + 4 * ((size_t)(unsigned char)key[i] - first));
		if (!(w & IDX_NODE_MASK))
			return 0;
		i++;
	}
}

struct search_call {
	const unsigned char *d;
	size_t len;
	const char *key;
	bool found;
	char *value; /* NULL, or where the first value goes (@size bytes) */
	size_t size;
	int copied; /* 1: the value copied, 0: none, -1: longer than @size */
};

static int search_cb(void *arg)
{
	struct search_call *sc = arg;
	size_t pos = depbin_search(sc->d, sc->key), end;

	sc->found = pos != 0;
	/* the values: a count, then each a priority and a string (kmod's index.c) */
	if (!sc->found || !sc->value || sc->len - pos < 8)
		return 0;
	end = idx_string(sc->d, sc->len, pos + 8);
	if (!end)
		return 0;
	if (end - (pos + 8) > sc->size) {
		sc->copied = -1;
		return 0;
	}
	memcpy(sc->value, sc->d + pos + 8, end - (pos + 8));
	sc->copied = 1;
	return 0;
}

/* depbin_search() on the mapped modules.dep.bin, under the SIGBUS guard. */
static bool depbin_has(const struct kp_chain *c, const char *key)
{
	struct search_call sc = { .d = c->depbin.data, .len = c->depbin.len, .key = key };

	if (!c->depbin.data)
		return false;
	return kp_bytes_guard(&c->depbin, search_cb, &sc, NULL) == 0 && sc.found;
}

int kp_chain_depbin_line(const struct kp_chain *c, const char *name, char *buf, size_t size)
{
	struct search_call sc = {
		.d = c->depbin.data, .len = c->depbin.len, .key = name, .value = buf, .size = size
	};

	if (!c->depbin.data || !size || kp_bytes_guard(&c->depbin, search_cb, &sc, NULL) < 0)
		return 0;
	return sc.copied;
}

/*
 * Before a libkmod lookup of @name: the indexes it can reach are checked. A name in
 * modules.dep.bin (checked at open) ends libkmod's search there; any other name can reach
 * modules.symbols.bin and modules.alias.bin, checked then (once). Checking the large
 * alias index only when it can be read keeps the usual hook call cheap.
 */
int kp_chain_check_lookup(struct kp_chain *c, const char *name, struct kp_err *err)
{
	char key[4096];
	size_t i = kp_modname_copy(key, sizeof(key), name, SIZE_MAX);

	/* brackets: libkmod normalises differently there; never assume what it finds */
	if (!name[i] && !strpbrk(name, "[]*?") && depbin_has(c, key))
		return 0;
	if (!c->symbols_checked) {
		if (kp_chain_check_index(c, "modules.symbols.bin", false, err) < 0)
			return -1;
		c->symbols_checked = true;
	}
	if (!c->alias_checked) {
		if (kp_chain_check_index(c, "modules.alias.bin", false, err) < 0)
			return -1;
		c->alias_checked = true;
	}
	return 0;
}

int kp_modprobe_config_check(const char *root, const char *const *paths, struct kp_err *err)
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
		d = kp_opendir_root(root, paths[i]); /* inside @root, by descriptors */
		if (!d)
			continue;
		/* the names libkmod reads (kmod's conf_files_filter_out()): *.conf, no dot first */
		while ((de = readdir(d))) {
			size_t n = strlen(de->d_name);

			if (de->d_name[0] == '.' || n < 6 || strcmp(de->d_name + n - 5, ".conf"))
				continue;
			/* under a root, each name: links among them (d_type may not say) */
			if (!kp_root_is_host(root) &&
			    (de->d_type == DT_LNK || de->d_type == DT_UNKNOWN)) {
				char *p;
				int r;

				if (asprintf(&p, "%s/%s", paths[i], de->d_name) < 0) {
					closedir(d);
					return kp_err_set(err, "out of memory");
				}
				r = kmod_reads_root(root, p, "modprobe configuration", err);
				free(p);
				if (r < 0) {
					closedir(d);
					return -1;
				}
			}
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
