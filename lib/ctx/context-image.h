/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The tree's kernel image read beside the modules (lib/ctx only). The certificates of a
 * compressed vmlinuz (0.6-0.8 s of single-threaded xz decoding on amd64-6.1) are needed
 * only when the first signature is verified; reading and hashing the modules is not. So a
 * run with a thread to spare starts the image on its own thread where the keys are read
 * (kp_keyring_image_begin()) and settles it after the modules are read, before they are
 * verified; the report is the one the run would give reading the image first:
 *   - the image's keys, revocations and source line go where they would have been;
 *   - what the run logs meanwhile is held and said at settling, with the warning about the
 *     image's certificates outside its lists (kp_ctx_machine_facts()) in its place, and not
 *     at all when the image fails: then the run fails with the image's error, as it would
 *     have before reading any module;
 *   - the facts' "no key source" assumption is decided then (kp_facts_keys_settled());
 *   - the modules are hashed for their signatures whether or not the image holds a key.
 */
#ifndef KP_CONTEXT_IMAGE_H
#define KP_CONTEXT_IMAGE_H

#include "context.h"

/*
 * Starts reading the image @path (under @root, NULL for none: opened inside it) into c->keys
 * (in place of kp_keyring_add_kernel_image_in()),
 * when the run has a second thread, no progress display and no other kernel image: true when
 * started, false when it is to be read now.
 */
bool kp_ctx_image_begin(struct kp_ctx *c, const struct kp_root_dir *root, const char *path,
			size_t max);
/* True while the image is being read. */
bool kp_ctx_image_pending(const struct kp_ctx *c);
/* The image's keys into c->keys, the held lines said: 0, or -1 with the image's error (again
 * on every later call). Nothing to do without an image being read. */
int kp_ctx_image_settle(struct kp_ctx *c, struct kp_err *err);
/* Waits for an image not settled and drops it and the held lines (kp_ctx_release()). */
void kp_ctx_image_release(struct kp_ctx *c);

#endif
