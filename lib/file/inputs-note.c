// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What one look-up of the inputs manifest says (inputs-internal.h): the class of the file
 * system it is on, the digest that lets a trusted state still hold, the entry recorded.
 */
#include "inputs-internal.h"

#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "util/content-hash.h"
#include "util/fs-trust.h"
#include "util/io.h"
#include "util/util.h"

#define SUM_MAX ((uint64_t)16 << 20) /* bytes: a larger file is not summed (K_SUMMED) */

const struct evp_md_st *kp_inputs_md(struct kp_inputs *in)
{
	EVP_MD *md;

	pthread_mutex_lock(&in->lock);
	if (!in->md)
		in->md = EVP_MD_fetch(NULL, "SHA256", NULL);
	md = in->md;
	pthread_mutex_unlock(&in->lock);
	return md;
}

/*
 * The class of the file system holding what @st describes (fs-trust.h): from the table of
 * file systems seen, else fstatfs(@fd) when it is open (>= 0), else statfs(@path); -1 when
 * that fails or @path changed meanwhile.
 */
int kp_inputs_fs_class(struct kp_inputs *in, const char *path, bool follow, int fd,
		       const struct stat *st)
{
	int c;

	pthread_mutex_lock(&in->lock);
	c = kp_fs_devs_find(&in->devs, (uint64_t)st->st_dev);
	pthread_mutex_unlock(&in->lock);
	if (c >= 0)
		return c;
	c = fd >= 0 ? kp_fs_class_of_fd(fd) : kp_fs_class_of_path(path, st, follow);
	if (c < 0)
		return -1;
	pthread_mutex_lock(&in->lock);
	kp_fs_devs_add(&in->devs, (uint64_t)st->st_dev, (enum kp_fs_class)c);
	pthread_mutex_unlock(&in->lock);
	return c;
}

/*
 * The class of the file system an absent @path would be on: its nearest ancestor that
 * exists, by the path's spelling ("x/../proc/y" asks "x/../proc", which exists only when x
 * does). -1 when none can be told.
 */
static int absent_class(struct kp_inputs *in, const char *path)
{
	char dir[4096];
	struct stat st;

	if (strlen(path) >= sizeof(dir))
		return -1;
	strcpy(dir, path);
	for (;;) {
		char up[4096];

		if (kp_fs_parent(dir, up, sizeof(up)) < 0)
			return -1;
		if (stat(up, &st) == 0)
			return kp_inputs_fs_class(in, up, true, -1, &st);
		if (!strcmp(up, ".") || !strcmp(up, "/") || !strcmp(up, dir))
			return -1;
		strcpy(dir, up);
	}
}

/*
 * A module's or a kernel image's file name: the facts cache keys modules by their bytes, the
 * signature memo an image's certificates; hashing them again would cost a miss a pass over
 * the tree, or over an image a warm run does not read (not summed).
 */
static bool module_name(const char *path)
{
	static const char *const ext[] = { ".ko", ".ko.xz", ".ko.zst", ".ko.gz" };
	const char *base = strrchr(path, '/');
	size_t n = strlen(path);

	if (!strncmp(base ? base + 1 : path, "vmlinu", 6))
		return true;
	for (size_t i = 0; i < KP_ARRAY_SIZE(ext); i++) {
		size_t l = strlen(ext[i]);

		if (n >= l && !strcmp(path + n - l, ext[i]))
			return true;
	}
	return false;
}

/* The digest remembered for the trusted state @v into @h: true, else false. */
static bool memo_find(struct kp_inputs *in, const uint64_t *v, unsigned char *h)
{
	bool found = false;

	pthread_mutex_lock(&in->lock);
	for (unsigned int i = 0; i < in->nmemo && !found; i++) {
		if (!memcmp(in->memo[i].st, v, sizeof(in->memo[i].st))) {
			memcpy(h, in->memo[i].h, KP_CONTENT_HASH_LEN);
			found = true;
		}
	}
	pthread_mutex_unlock(&in->lock);
	return found;
}

static void memo_add(struct kp_inputs *in, const uint64_t *v, const unsigned char *h)
{
	unsigned int i;

	pthread_mutex_lock(&in->lock);
	i = in->memo_next;
	in->memo_next = (i + 1) % MEMO;
	if (in->nmemo < MEMO)
		in->nmemo++;
	memcpy(in->memo[i].st, v, sizeof(in->memo[i].st));
	memcpy(in->memo[i].h, h, KP_CONTENT_HASH_LEN);
	pthread_mutex_unlock(&in->lock);
}

/*
 * The digest that lets the trusted state @st of @path still hold when only the state changed
 * (K_SUMMED, K_LISTED) into @h: of a regular file read whole (small, not a module) or of a
 * directory's listing, on a file system whose stat() is the kernel's. @fd: @path as the run
 * opened it, else -1 (opened here, when still in that state). 0, or -1 when there is none
 * (the state alone decides).
 */
static int state_digest(struct kp_inputs *in, const char *path, bool follow, const struct stat *st,
			int fd, enum kp_fs_class cls, unsigned char h[KP_CONTENT_HASH_LEN])
{
	uint64_t v[8];
	int own = -1, r;

	if (cls != KP_FS_LOCAL)
		return -1;
	if (S_ISREG(st->st_mode)) {
		if ((uint64_t)st->st_size > SUM_MAX || module_name(path) ||
		    !kp_state_trusted(st, cls, in->euid))
			return -1;
	} else if (!S_ISDIR(st->st_mode)) {
		return -1;
	}
	kp_file_state(st, v);
	/* a trusted state names its bytes (and a directory's, its names): one digest */
	if (memo_find(in, v, h))
		return 0;
	if (fd < 0) {
		own = kp_inputs_open_same(path, follow, v);
		if (own < 0)
			return -1;
		fd = own;
	}
	r = kp_inputs_digest_fd(fd, st, v, kp_inputs_md(in), h);
	if (own >= 0)
		close(own);
	if (r == 0)
		memo_add(in, v, h);
	return r;
}

/*
 * Records the result of a stat() of @path: @r (0 or -1 with @errnum) and @st; @fd is the
 * file when it was opened (else -1). Anything on a file system of the running kernel
 * (procfs, sysfs, /dev, ...) makes the run uncacheable whatever the path's spelling; on a
 * file system whose stat() is not the kernel's, only regular files are recorded. A regular
 * file opened in a state that does not name its bytes (fs-trust.h) is recorded with the
 * SHA-256 of its bytes, hashed here from @fd.
 */
void kp_inputs_note(struct kp_inputs *in, const char *path, bool follow, int r, int errnum,
		    const struct stat *st, int fd)
{
	unsigned char h[KP_CONTENT_HASH_LEN];
	struct entry e = { .path = path, .flags = follow ? F_FOLLOW : 0 };
	bool given_up;
	int cls;

	pthread_mutex_lock(&in->lock);
	given_up = in->uncacheable != NULL;
	pthread_mutex_unlock(&in->lock);
	if (given_up)
		return; /* not stored: no statfs() or hashing for it */
	cls = r == 0 ? kp_inputs_fs_class(in, path, follow, fd, st) : absent_class(in, path);
	if (cls < 0) {
		kp_inputs_mark(
			in, "an input's file system could not be told (statfs failed or it moved)");
		return;
	}
	if (cls == KP_FS_KERNEL) {
		kp_inputs_mark(in,
			       "it reads the running kernel's state (procfs, sysfs, /dev, ...)");
		return;
	}
	if (cls == KP_FS_LOCAL)
		e.flags |= F_LOCAL;
	if (r != 0) {
		if (cls != KP_FS_LOCAL) {
			kp_inputs_mark(
				in, "a path is looked up on a file system whose stat() is not the "
				    "kernel's (FUSE, NFS, ...)");
			return;
		}
		e.kind = K_ABSENT;
		e.err = errnum;
		kp_inputs_add(in, &e);
		return;
	}
	if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode) && !S_ISLNK(st->st_mode)) {
		kp_inputs_mark(in, "an input is not a regular file");
		return;
	}
	if (!S_ISREG(st->st_mode) && cls != KP_FS_LOCAL) {
		kp_inputs_mark(in,
			       "a directory or link is on a file system whose stat() is not the "
			       "kernel's (FUSE, NFS, ...)");
		return;
	}
	e.kind = K_STATE;
	kp_file_state(st, e.st);
	if (S_ISREG(st->st_mode) && fd >= 0 &&
	    !kp_state_trusted(st, (enum kp_fs_class)cls, in->euid)) {
		if (kp_content_hash_fd_md(fd, (uint64_t)st->st_size, kp_inputs_md(in), h) < 0) {
			kp_inputs_mark(in,
				       "an input whose state is not trusted could not be hashed");
			return;
		}
		e.kind = K_HASHED;
		e.content = h;
		e.clen = KP_CONTENT_HASH_LEN;
	} else if (state_digest(in, path, follow, st, fd, (enum kp_fs_class)cls, h) == 0) {
		e.kind = S_ISDIR(st->st_mode) ? K_LISTED : K_SUMMED;
		e.content = h;
		e.clen = KP_CONTENT_HASH_LEN;
	}
	kp_inputs_add(in, &e);
}
