// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The keyring's keys from a kernel image (sig-keys.h): its certificates (image-certs.c) into
 * keys and revocations, read in place or by a thread beside the modules
 * (kp_keyring_image_begin()), and where an installed kernel's image is.
 */
#include "sig-keys-internal.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/x509.h>

#include "file/inputs.h"
#include "file/rootopen.h"
#include "image-certs-internal.h"

/*
 * The certificates of @f into @kr by role (their X509 taken), and the source line:
 * "kernel image PATH: N certificates" (the trusted ones, and those of no list when the image
 * has no revocation list), then the revocation list's and the untrusted ones if any.
 */
static int take_certs(struct kp_keyring *kr, struct found_certs *f, const enum img_role *role,
		      const char *label, const char *path)
{
	int keys = 0, revoked = 0, unplaced = 0;
	char line[8800];

	for (size_t i = 0; i < f->n; i++) {
		X509 *x = f->c[i].x;
		int r;

		f->c[i].x = NULL;
		if (role[i] == ROLE_REVOCATION) {
			if (kp_keyring_add_revoked(kr, x, false, true, label) < 0)
				return -1;
			revoked++;
			continue;
		}
		r = kp_keyring_add_x509(kr, x, label, KP_KEY_KERNEL);
		if (r < 0)
			return -1;
		if (r > 0 && role[i] != ROLE_SYSTEM) {
			struct kp_trusted_key *k = &kr->keys[kr->nkeys - 1];
			const struct kp_keyring_model *m = kr->have_model ? &kr->model : NULL;

			k->list_unknown = true;
			k->beside_revocation = role[i] == ROLE_UNPLACED_BESIDE;
			kp_key_place(k, m, false, &k->keyring, &k->pass);
			kp_key_place(k, m, true, &k->keyring_after, &k->pass_after);
		}
		if (role[i] == ROLE_UNPLACED_BESIDE)
			unplaced += r;
		else
			keys += r;
	}
	snprintf(line, sizeof(line), "kernel image %s: %d certificate%s", path, keys,
		 keys == 1 ? "" : "s");
	if (revoked)
		snprintf(line + strlen(line), sizeof(line) - strlen(line),
			 ", %d in its revocation list", revoked);
	if (unplaced)
		snprintf(line + strlen(line), sizeof(line) - strlen(line),
			 ", %d outside its certificate lists (not trusted)", unplaced);
	return kp_keyring_add_line(&kr->arena, &kr->sources, &kr->nsources,
				   kp_arena_strdup(&kr->arena, line));
}

int kp_keyring_add_kernel_image(struct kp_keyring *kr, const char *path, size_t max,
				struct kp_err *err)
{
	return kp_keyring_add_kernel_image_in(kr, NULL, path, max, err);
}

int kp_keyring_add_kernel_image_in(struct kp_keyring *kr, const struct kp_root_dir *root,
				   const char *path, size_t max, struct kp_err *err)
{
	struct found_certs f = { 0 };
	enum img_role *role = NULL;
	const char *label = kp_arena_strdup(&kr->arena, path);
	int r = -1;

	if (!label)
		return kp_err_set(err, "out of memory");
	if (kp_image_certs_get(kr->memo, root, path, max, &f, &role, err) == 0)
		r = take_certs(kr, &f, role, label, label) < 0 ? kp_err_set(err, "out of memory")
							       : 0;
	kp_found_certs_release(&f);
	free(role);
	return r;
}

struct kp_image_read {
	pthread_t thread;
	struct kp_sig_memo *memo;
	char *path;
	/* the root @path lies under, its own copy (path and directory): the thread's */
	struct kp_root_dir root;
	bool in_root;
	size_t max;
	struct found_certs f;
	enum img_role *role;
	int r;
	struct kp_err err;
	/* where kp_keyring_add_kernel_image() would have put its keys, revocations, line */
	size_t nkeys, nrevoked, nsources;
};

static void *image_thread(void *arg)
{
	struct kp_image_read *p = arg;

	p->r = kp_image_certs_get(p->memo, p->in_root ? &p->root : NULL, p->path, p->max, &p->f,
				  &p->role, &p->err);
	return NULL;
}

struct kp_image_read *kp_keyring_image_begin(struct kp_keyring *kr, const char *path, size_t max)
{
	return kp_keyring_image_begin_in(kr, NULL, path, max);
}

static void image_read_free(struct kp_image_read *p)
{
	if (p->root.fd >= 0)
		close(p->root.fd);
	free((char *)p->root.path);
	free(p->path);
	free(p);
}

struct kp_image_read *kp_keyring_image_begin_in(struct kp_keyring *kr,
						const struct kp_root_dir *root, const char *path,
						size_t max)
{
	struct kp_image_read *p;

	if (!kp_image_slow_payload(root, path))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->root.fd = -1;
	/* the caller's root may go before _end(): the thread keeps its own */
	p->in_root = root && root->path;
	if (!(p->path = strdup(path)) || (p->in_root && !(p->root.path = strdup(root->path))) ||
	    (p->in_root && root->fd >= 0 &&
	     (p->root.fd = fcntl(root->fd, F_DUPFD_CLOEXEC, 0)) < 0)) {
		image_read_free(p);
		return NULL;
	}
	p->memo = kr->memo;
	p->max = max;
	p->nkeys = kr->nkeys;
	p->nrevoked = kr->nrevoked;
	p->nsources = kr->nsources;
	if (pthread_create(&p->thread, NULL, image_thread, p) != 0) {
		image_read_free(p);
		return NULL;
	}
	return p;
}

/* Elements [@from, @n) of @base (each @size bytes) moved to @at (< @from), the rest after. */
static void rotate(void *base, size_t size, size_t at, size_t from, size_t n)
{
	unsigned char *b = base;

	/* three reversals, element by element, swapping byte by byte: no allocation */
	for (int pass = 0; pass < 3; pass++) {
		size_t lo = pass == 1 ? from : at, hi = pass == 0 ? from : n;

		for (; hi > lo + 1; lo++, hi--)
			for (size_t k = 0; k < size; k++) {
				unsigned char t = b[lo * size + k];

				b[lo * size + k] = b[(hi - 1) * size + k];
				b[(hi - 1) * size + k] = t;
			}
	}
}

int kp_keyring_image_end(struct kp_keyring *kr, struct kp_image_read *p, struct kp_err *err)
{
	size_t keys0 = kr->nkeys, revoked0 = kr->nrevoked, sources0 = kr->nsources;
	const char *label;
	int r;

	pthread_join(p->thread, NULL);
	r = p->r;
	if (r < 0) {
		*err = p->err;
	} else if (!(label = kp_arena_strdup(&kr->arena, p->path)) ||
		   take_certs(kr, &p->f, p->role, label, label) < 0) {
		r = kp_err_set(err, "out of memory");
	} else {
		/* what take_certs() appended goes where it would have been at _begin() */
		rotate(kr->keys, sizeof(*kr->keys), p->nkeys, keys0, kr->nkeys);
		rotate(kr->revoked, sizeof(*kr->revoked), p->nrevoked, revoked0, kr->nrevoked);
		rotate(kr->revoked_mok, sizeof(*kr->revoked_mok), p->nrevoked, revoked0,
		       kr->nrevoked);
		rotate(kr->revoked_image, sizeof(*kr->revoked_image), p->nrevoked, revoked0,
		       kr->nrevoked);
		rotate(kr->revoked_source, sizeof(*kr->revoked_source), p->nrevoked, revoked0,
		       kr->nrevoked);
		rotate(kr->sources, sizeof(*kr->sources), p->nsources, sources0, kr->nsources);
	}
	kp_found_certs_release(&p->f);
	free(p->role);
	image_read_free(p);
	return r;
}

int kp_installed_image_path(const char *root, const char *release, char *path, size_t len)
{
	const struct kp_root_dir rd = { .path = root, .fd = -1 };

	return kp_installed_image_path_in(&rd, release, path, len);
}

int kp_installed_image_path_in(const struct kp_root_dir *rd, const char *release, char *path,
			       size_t len)
{
	const char *root = rd->path;

	static const char *const where[][2] = {
		{ "/boot/vmlinuz-", "" },
		{ "/lib/modules/", "/vmlinuz" },
		{ "/usr/lib/modules/", "/vmlinuz" },
		{ "/boot/vmlinux-", "" },
	};

	if (!release)
		return 0;
	if (!root || !strcmp(root, "/"))
		root = "";
	for (size_t i = 0; i < KP_ARRAY_SIZE(where); i++) {
		FILE *f;

		struct kp_err quiet = { 0 };
		struct stat st;
		int fd;

		snprintf(path, len, "%s%s%s%s", root, where[i][0], release, where[i][1]);
		if (kp_root_rel(root, path)) {
			/* under a root: a regular file there, every link followed inside it */
			fd = kp_open_regular_in(rd, path, &st, &quiet);
			if (fd < 0)
				continue;
			close(fd);
			return 1;
		}
		f = kp_in_fopen(path, "rb");
		if (!f)
			continue;
		fclose(f);
		return 1;
	}
	return 0;
}

int kp_keyring_add_installed_image(struct kp_keyring *kr, const char *root, const char *release,
				   size_t max, struct kp_err *err)
{
	const struct kp_root_dir rd = { .path = root, .fd = -1 };
	char path[4096];

	if (!kp_installed_image_path_in(&rd, release, path, sizeof(path)))
		return 0;
	return kp_keyring_add_kernel_image_in(kr, &rd, path, max, err) < 0
		       ? kp_err_prefix(err, path)
		       : 1;
}
