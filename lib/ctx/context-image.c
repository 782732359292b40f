// SPDX-License-Identifier: LGPL-2.1-or-later
#include "context-image.h"

#include <stdlib.h>
#include <string.h>

#include "context-machine.h"
#include "util/parallel.h"

struct kp_ctx_held {
	char *path; /* NULL: none */
	char *msg;
};

/* c->env.log while the image is read: the line kept to be said at settling. */
static void hold(void *data, const char *path, const char *msg)
{
	struct kp_ctx *c = data;
	struct kp_ctx_image *im = &c->image;
	struct kp_ctx_held *h;

	if (kp_grow(&im->held, &im->cap, im->nheld + 1, sizeof(*im->held)) == 0) {
		h = &im->held[im->nheld];
		h->path = path ? strdup(path) : NULL;
		h->msg = strdup(msg);
		if (h->msg && (!path || h->path)) {
			im->nheld++;
			return;
		}
		free(h->path);
		free(h->msg);
	}
	/* out of memory: said now rather than lost */
	im->log(im->log_data, path, msg);
}

bool kp_ctx_image_begin(struct kp_ctx *c, const struct kp_root_dir *root, const char *path,
			size_t max)
{
	struct kp_ctx_image *im = &c->image;

	if (im->read || kp_parallel_jobs(c->env.jobs) < 2 || c->env.progress || c->o.nkernel_images)
		return false;
	im->path = strdup(path);
	if (!im->path)
		return false;
	im->read = kp_keyring_image_begin_in(&c->keys, root, path, max);
	if (!im->read) {
		free(im->path);
		im->path = NULL;
		return false;
	}
	im->log = c->env.log;
	im->log_data = c->env.log_data;
	if (im->log) {
		c->env.log = hold;
		c->env.log_data = c;
	}
	return true;
}

bool kp_ctx_image_pending(const struct kp_ctx *c)
{
	return c->image.read != NULL;
}

static void drop_held(struct kp_ctx_image *im)
{
	for (size_t i = 0; i < im->nheld; i++) {
		free(im->held[i].path);
		free(im->held[i].msg);
	}
	free(im->held);
	im->held = NULL;
	im->nheld = im->cap = 0;
}

int kp_ctx_image_settle(struct kp_ctx *c, struct kp_err *err)
{
	struct kp_ctx_image *im = &c->image;
	int r;

	if (!im->read) {
		if (im->failed)
			*err = im->err;
		return im->failed ? -1 : 0;
	}
	r = kp_keyring_image_end(&c->keys, im->read, &im->err);
	im->read = NULL;
	if (im->log) {
		c->env.log = im->log;
		c->env.log_data = im->log_data;
	}
	if (r == 0 && c->keys.have_model) {
		/* the image's keys placed as kp_ctx_machine_facts() placed the others */
		struct kp_keyring_model m = c->keys.model;

		kp_keyring_apply_model(&c->keys, &m);
	}
	if (r == 0 && kp_facts_keys_settled(&c->facts) < 0)
		r = kp_err_set(&im->err, "out of memory");
	if (r < 0) {
		kp_err_prefix(&im->err, im->path);
		im->failed = true;
		drop_held(im);
		*err = im->err;
		return -1;
	}
	for (size_t i = 0; i <= im->nheld; i++) {
		if (im->unplaced_due && im->unplaced_at == i)
			kp_ctx_warn_unplaced(c);
		if (i < im->nheld && c->env.log)
			c->env.log(c->env.log_data, im->held[i].path, im->held[i].msg);
	}
	im->unplaced_due = false;
	drop_held(im);
	return 0;
}

void kp_ctx_image_release(struct kp_ctx *c)
{
	struct kp_ctx_image *im = &c->image;
	struct kp_err ignored;

	if (im->read) {
		kp_keyring_image_end(&c->keys, im->read, &ignored);
		im->read = NULL;
	}
	free(im->path);
	im->path = NULL;
	drop_held(im);
}
