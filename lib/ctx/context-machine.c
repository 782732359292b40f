// SPDX-License-Identifier: LGPL-2.1-or-later
#include "context-machine.h"

#include "context-image.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "file/bytes.h"
#include "file/rootfs.h"
#include "system/kernel-read.h"
#include "system/stuck-reader.h"

/* An IMA policy is a few hundred lines at most; securityfs lists the active one. */
#define IMA_POLICY_MAX ((size_t)1 << 20)

/*
 * The IMA policy: --ima-policy FILE (an error when it cannot be read), else the live
 * system's active one, <root>/sys/kernel/security/ima/policy, when readable
 * (CONFIG_IMA_READ_POLICY; root only). Kept in the context, lent to the facts options.
 */
static int read_ima_policy(struct kp_ctx *c, const struct kp_root_dir *rd, const char *root,
			   bool live, struct kp_err *err)
{
	const char *path = c->o.ima_policy;
	char live_path[4200];
	struct kp_bytes b;
	struct kp_err why = { 0 };
	size_t len;

	if (!path && live && root) {
		snprintf(live_path, sizeof(live_path), "%s/sys/kernel/security/ima/policy",
			 strcmp(root, "/") ? root : "");
		path = live_path;
	}
	if (!path)
		return 0;
	/* the live one opened inside the root (kp_open_regular_in()), the command line's by name */
	if (kp_bytes_read_text_in(c->o.ima_policy ? NULL : rd, path, IMA_POLICY_MAX, &b, &why) <
	    0) {
		if (!c->o.ima_policy)
			return 0; /* not readable: the command line's policy is assumed */
		*err = why;
		return kp_err_prefix(err, path);
	}
	free(c->ima_policy_text);
	free(c->ima_policy_source);
	c->ima_policy_text = malloc(b.len + 1);
	c->ima_policy_source = strdup(path);
	if (!c->ima_policy_text || !c->ima_policy_source) {
		kp_bytes_release(&b);
		return kp_err_set(err, "out of memory");
	}
	len = b.len;
	memcpy(c->ima_policy_text, b.data, len);
	c->ima_policy_text[len] = '\0';
	kp_bytes_release(&b);
	if (strlen(c->ima_policy_text) != len) {
		kp_err_set(err, "an IMA policy is text: this file holds a NUL byte");
		return kp_err_prefix(err, path);
	}
	c->o.fo.ima_policy = c->ima_policy_text;
	c->o.fo.ima_policy_source = c->ima_policy_source;
	return 0;
}

/* dkms_cert_path()'s line callback: the last mok_certificate= of framework.conf wins */
struct dkms_conf {
	const char *root; /* "" for the host's */
	char *out;
	size_t len;
};

static int dkms_conf_line(const char *text, size_t tlen, void *arg)
{
	struct dkms_conf *dc = arg;
	char line[4200], *v;
	size_t n;

	if (tlen >= sizeof(line))
		tlen = sizeof(line) - 1;
	memcpy(line, text, tlen);
	line[tlen] = '\0';
	v = line + strspn(line, " \t");
	if (strncmp(v, "mok_certificate=", 16))
		return 0;
	v += 16;
	v[strcspn(v, "\n#")] = '\0';
	n = strlen(v);
	while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		v[--n] = '\0';
	if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
		v[n - 1] = '\0';
		v++;
	}
	/* only a plain absolute path under the root: no shell expansion is done */
	if (v[0] == '/' && !strchr(v, '$') && !strchr(v, '`'))
		snprintf(dc->out, dc->len, "%s%s", dc->root, v);
	return 0;
}

/*
 * dkms(8): mok_certificate= of framework.conf (default /var/lib/dkms/mok.pub), the file read
 * inside @rd (kp_open_regular_in(): a link there never leads to a host file).
 */
static void dkms_cert_path(const struct kp_root_dir *rd, const char *root, char *out, size_t len)
{
	struct dkms_conf dc = { .root = root && strcmp(root, "/") ? root : "",
				.out = out,
				.len = len };
	struct kp_err ignored = { 0 };
	char path[4200];

	snprintf(out, len, "%s/var/lib/dkms/mok.pub", dc.root);
	snprintf(path, sizeof(path), "%s/etc/dkms/framework.conf", dc.root);
	/* absent or unreadable: the default */
	(void)kp_bytes_lines_in(rd, path, (size_t)1 << 20, dkms_conf_line, &dc, &ignored);
}

/*
 * The hook's reads of EFI variables: efivarfs' read waits uninterruptibly for a firmware call
 * (efivar_get_variable() -> efi_queue_work(): wait_for_completion(),
 * drivers/firmware/efi/runtime-wrappers.c, 5.10 to 7.2) that may never return, so each is
 * done by a child its deadline can abandon (kp_read_kernel_file_watched()), marked while it
 * runs (system/stuck-reader.h). A later runtime call queues behind the stuck one (on
 * efivars_lock or efi_runtime_lock, drivers/firmware/efi/vars.c): while an earlier hook's
 * reader lives in this boot, no variable is read, each present one unreadable at once; a
 * lookup or stat() asks no firmware (fs/efivarfs/inode.c simple_lookup(), 5.10 to 7.2), so
 * an absent one stays absent.
 */
struct efi_bounded {
	struct kp_reader_marks marks;
	pid_t stuck; /* an earlier hook's reader still waiting, else 0 */
};

static void efi_child_started(void *data, pid_t child)
{
	(void)kp_reader_marks_add(data, "efi", child); /* unmarked: later hooks wait, as before */
}

static void efi_child_ended(void *data, pid_t child)
{
	kp_reader_marks_remove(data, "efi", child);
}

/* A variable read as above (kp_efi_reader): the error without the path put first. */
static int read_efi_var_bounded(void *data, const struct kp_root_dir *root, const char *path,
				size_t max, struct kp_bytes *out, struct kp_err *err)
{
	struct efi_bounded *b = data;
	const struct kp_read_watch w = { efi_child_started, efi_child_ended, &b->marks };
	size_t n = strlen(path);
	struct stat st;

	if (b->stuck) {
		if (kp_stat_in(root, path, &st) < 0) {
			int e = errno;

			return kp_err_errno(err, e, "%s", strerror(e));
		}
		return kp_err_errno(err, EBUSY,
				    "not read: the reader of an earlier hook (pid %d) still waits "
				    "for the firmware",
				    (int)b->stuck);
	}
	if (kp_read_kernel_file_watched(root, path, max, &w, out, err) == 0)
		return 0;
	if (!strncmp(err->msg, path, n) && !strncmp(err->msg + n, ": ", 2))
		memmove(err->msg, err->msg + n + 2, strlen(err->msg + n + 2) + 1);
	return -1;
}

/* The marks opened and looked at once for the variables' reads; a refusal is said. */
static void efi_bounded_open(struct kp_ctx *c, struct efi_bounded *b)
{
	struct kp_err e = { 0 };
	char msg[sizeof(e.msg) + 96];

	kp_reader_marks_init(&b->marks, c->o.reader_marks_dir);
	b->stuck = 0;
	if (kp_reader_marks_open(&b->marks, &e) < 0) {
		if (c->env.log) {
			snprintf(msg, sizeof(msg),
				 "readers of EFI variables left behind not marked: %s", e.msg);
			c->env.log(c->env.log_data, b->marks.dir, msg);
		}
		return;
	}
	if (kp_reader_marks_find(&b->marks, "efi", &b->stuck) != 1)
		b->stuck = 0;
}

/* --efi-vars DIR: an efivarfs directory, or /sys/firmware/efi holding efivars/. */
/*
 * @rd: the root @dir is under (its files opened inside it), NULL for a directory of the host;
 * @bounded: read as read_efi_var_bounded() does (the hook)
 */
static int read_efi(struct kp_ctx *c, const struct kp_root_dir *rd, const char *dir, bool bounded,
		    struct kp_err *err)
{
	kp_efi_reader *read = bounded ? read_efi_var_bounded : NULL;
	char efivars[4200], mokvars[4200];
	struct efi_bounded b = { .marks.dfd = -1 };
	struct stat st;
	int r;

	if (bounded)
		efi_bounded_open(c, &b);
	snprintf(efivars, sizeof(efivars), "%s/efivars", dir);
	if (kp_stat_in(rd, efivars, &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(mokvars, sizeof(mokvars), "%s/mok-variables", dir);
		r = kp_efi_read(&c->efi, rd, &c->keys, efivars, mokvars, read, &b, err);
	} else {
		r = kp_efi_read(&c->efi, rd, &c->keys, dir, NULL, read, &b, err);
	}
	kp_reader_marks_release(&b.marks);
	if (r < 0)
		return -1;
	c->have_efi = true;
	return 0;
}

/*
 * @root's directory as the run pinned it (the running system's or the tree's, when it names
 * the same root), else pinned into @own now (released by the caller); NULL: the host's.
 */
static const struct kp_root_dir *machine_rootdir(const struct kp_ctx *c, const char *root,
						 struct kp_root_dir *own)
{
	own->path = NULL;
	own->fd = -1;
	if (kp_root_is_host(root))
		return NULL;
	if (c->have_run && c->run.rootdir.path && !strcmp(c->run.rootdir.path, root))
		return &c->run.rootdir;
	if (c->have_tree && c->tree.rootdir.path && !strcmp(c->tree.rootdir.path, root))
		return &c->tree.rootdir;
	kp_root_dir_pin(own, root);
	return own;
}

static int machine_keys(struct kp_ctx *c, const struct kp_root_dir *rd, const char *root, bool live,
			bool bounded, struct kp_err *err)
{
	struct kp_facts_opts *fo = &c->o.fo;
	char path[4200];
	struct stat st;

	if (read_ima_policy(c, rd, root, live, err) < 0)
		return -1;
	if (c->o.efi_vars && strcmp(c->o.efi_vars, "none")) {
		if (!kp_is_dir(c->o.efi_vars)) {
			kp_err_set(err, "no such directory of EFI variables");
			return kp_err_prefix(err, c->o.efi_vars);
		}
		if (read_efi(c, NULL, c->o.efi_vars, bounded, err) < 0)
			return -1;
	} else if (root && !c->o.efi_vars && !c->o.no_kernel_keys) {
		snprintf(path, sizeof(path), "%s/sys/firmware/efi", strcmp(root, "/") ? root : "");
		if (kp_stat_in(rd, path, &st) == 0 && S_ISDIR(st.st_mode)) {
			if (read_efi(c, rd, path, bounded, err) < 0)
				return -1;
		} else if (live && fo->secure_boot < 0) {
			fo->secure_boot = 0; /* no /sys/firmware/efi: not an EFI boot */
		}
	}
	if (c->have_efi) {
		if (fo->secure_boot < 0 && c->efi.secure_boot >= 0)
			fo->secure_boot = c->efi.secure_boot;
		if (fo->mok_trusted < 0 && c->efi.mok_trusted >= 0)
			fo->mok_trusted = c->efi.mok_trusted;
	}
	for (size_t i = 0; i < c->o.nmoks; i++)
		if (kp_keyring_add_mok_file(&c->keys, c->o.moks[i].path, c->o.moks[i].pending,
					    err) < 0)
			return kp_err_prefix(err, c->o.moks[i].path);
	if (c->o.dkms_key) {
		if (kp_keyring_add_named_cert(&c->keys, c->o.dkms_key, "the DKMS key", err) < 0)
			return kp_err_prefix(err, c->o.dkms_key);
	} else if (root) {
		/* recognised by name only: a key that cannot be read is no error */
		struct kp_err ignored = { 0 };

		dkms_cert_path(rd, root, path, sizeof(path));
		if (kp_keyring_add_named_cert_in(&c->keys, rd, path, "the DKMS key", &ignored) <
			    0 &&
		    !strcmp(ignored.msg, "out of memory"))
			return kp_err_set(err, "out of memory");
	}
	if (c->keys.nsources)
		fo->keys = &c->keys;
	return 0;
}

int kp_ctx_machine_keys(struct kp_ctx *c, const char *root, bool live, bool bounded,
			struct kp_err *err)
{
	struct kp_root_dir own;
	const struct kp_root_dir *rd = machine_rootdir(c, root, &own);
	int r = machine_keys(c, rd, root, live, bounded, err);

	kp_root_dir_unpin(&own);
	return r;
}

void kp_ctx_warn_unplaced(struct kp_ctx *c)
{
	/* never silently: a certificate that may be revoked is not trusted (sig-keys.h) */
	const char *img;
	size_t n = kp_keyring_unplaced(&c->keys, &img);
	char line[1400];

	if (n && c->env.log) {
		snprintf(line, sizeof(line),
			 "warning: %zu certificate%s of the kernel image outside its "
			 "system certificate list (the kernel may have a revocation list): "
			 "not trusted; give a trusted one with --trusted-cert",
			 n, n == 1 ? "" : "s");
		c->env.log(c->env.log_data, img, line);
	}
}

int kp_ctx_machine_facts(struct kp_ctx *c, struct kp_err *err)
{
	char line[1400];

	kp_keyring_apply_model(&c->keys, &c->facts.keymodel);
	if (kp_ctx_image_pending(c)) {
		/* its certificates not read yet: said in this place when they are */
		c->image.unplaced_due = true;
		c->image.unplaced_at = c->image.nheld;
	} else {
		kp_ctx_warn_unplaced(c);
	}
	if (!c->have_efi)
		return 0;
	for (size_t i = 0; i < c->efi.nnotes; i++) {
		snprintf(line, sizeof(line), "EFI variables: %s", c->efi.notes[i]);
		if (kp_facts_assume(&c->facts, line) < 0)
			return kp_err_set(err, "out of memory");
	}
	if (c->efi.secure_boot < 0 && c->o.fo.secure_boot < 0 &&
	    kp_facts_assume(&c->facts, "EFI variables: the Secure Boot state is unknown (give "
				       "--secure-boot on|off)") < 0)
		return kp_err_set(err, "out of memory");
	return 0;
}
