// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A recorded file's state (inputs.h): when it is too new to be trusted, and the digests that
 * stand for a file's bytes or a directory's listing when only its state changed.
 */
#include "inputs-internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/fs-trust.h"
#include "util/io.h"
#include "util/util.h"

/* The state @st (kp_file_state()) changed less than KP_SETTLE_SECONDS before @start. */
bool kp_inputs_state_too_new(const uint64_t *st, const struct timespec *start)
{
	/* the caches' one settle rule (util/fs-trust.h), against the run's start */
	return !kp_state_settled(st, start);
}

static int cmp_listed(const void *a, const void *b)
{
	/* the type byte first, then the name */
	return strcmp(*(char *const *)a + 1, *(char *const *)b + 1);
}

/*
 * The entries of the directory open as @fd (besides "." and ".."), from getdents64() into
 * @*buf: each its type (DT_*, lstat()ed when the file system does not tell), its name and
 * its NUL, one after the other; their number into @n. 0 or -1.
 */
static int read_listing(int fd, char **buf, size_t *len, size_t *n)
{
	/* on the stack: a heap buffer this size is trimmed on every free (content-hash.c) */
	char dents[32768];
	size_t cap = 0;
	ssize_t got;

	while ((got = getdents64(fd, dents, sizeof(dents))) > 0) {
		for (size_t off = 0; off < (size_t)got;) {
			const struct dirent64 *de = (const struct dirent64 *)(dents + off);
			unsigned char type = de->d_type;
			size_t l = strlen(de->d_name);
			struct stat st;

			off += de->d_reclen;
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			if (type == DT_UNKNOWN) {
				if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
					return -1;
				type = (unsigned char)IFTODT(st.st_mode);
			}
			if (kp_grow((void **)buf, &cap, *len + l + 2, 1) < 0)
				return -1;
			(*buf)[*len] = (char)type;
			memcpy(*buf + *len + 1, de->d_name, l + 1);
			*len += l + 2;
			(*n)++;
		}
	}
	return got < 0 ? -1 : 0;
}

/*
 * The SHA-256 (@md as fetched, NULL: EVP_sha256()) of the directory @dfd's entries (besides
 * "." and ".."), sorted by name: each its type (DT_*, lstat()ed when the file system does
 * not tell) and its name with its terminating NUL. 0 or -1. @dfd itself is not moved (the
 * listing reads another open).
 */
static int listing_digest(int dfd, const EVP_MD *md, unsigned char h[KP_CONTENT_HASH_LEN])
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	EVP_MD_CTX *ctx = NULL;
	char *buf = NULL, **v = NULL;
	size_t len = 0, n = 0;
	unsigned int hl = KP_CONTENT_HASH_LEN;
	int r = -1;

	if (fd < 0)
		return -1;
	if (read_listing(fd, &buf, &len, &n) < 0)
		goto out;
	v = malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		goto out;
	for (size_t i = 0, off = 0; i < n; i++) {
		v[i] = buf + off;
		off += strlen(buf + off + 1) + 2;
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_listed);
	ctx = EVP_MD_CTX_new();
	if (!ctx || EVP_DigestInit_ex(ctx, md ? md : EVP_sha256(), NULL) != 1)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (EVP_DigestUpdate(ctx, v[i], strlen(v[i] + 1) + 2) != 1)
			goto out;
	if (EVP_DigestFinal_ex(ctx, h, &hl) == 1 && hl == KP_CONTENT_HASH_LEN)
		r = 0;
out:
	EVP_MD_CTX_free(ctx);
	free(v);
	free(buf);
	close(fd);
	return r;
}

/*
 * The digest of what @fd (open on a file that fstat() says is in the state @v) holds into
 * @h: its bytes (a regular file), its listing (a directory); then its state checked again
 * (changed while read: -1). @md: SHA-256 as fetched (NULL: EVP_sha256()). 0 or -1.
 */
int kp_inputs_digest_fd(int fd, const struct stat *st, const uint64_t *v, const EVP_MD *md,
			unsigned char h[KP_CONTENT_HASH_LEN])
{
	struct stat now;
	uint64_t w[8];
	int r = S_ISDIR(st->st_mode) ? listing_digest(fd, md, h)
				     : kp_content_hash_fd_md(fd, (uint64_t)st->st_size, md, h);

	if (r < 0 || fstat(fd, &now) < 0)
		return -1;
	kp_file_state(&now, w);
	return memcmp(v, w, sizeof(w)) ? -1 : 0;
}

/*
 * @path (stat()ed, or lstat()ed unless @follow) opened again, when it still is the file in
 * the state @v: the descriptor, else -1.
 */
int kp_inputs_open_same(const char *path, bool follow, const uint64_t *v)
{
	int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
	struct stat st;
	uint64_t w[8];
	int fd;

	/* O_NONBLOCK: what replaced the file may be a FIFO */
	fd = open(path, flags | (follow ? 0 : O_NOFOLLOW));
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0) {
		kp_file_state(&st, w);
		if (!memcmp(v, w, sizeof(w)))
			return fd;
	}
	close(fd);
	return -1;
}
