// SPDX-License-Identifier: LGPL-2.1-or-later
#include "efi-vars.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "efi-siglist.h"
#include "file/bytes.h"
#include "file/rootopen.h"

#define EFI_VAR_MAX ((size_t)4 << 20)

/* "@path: @what" into the notes: -1 when out of memory. */
static int note(struct kp_efi_state *st, const char *path, const char *what)
{
	char line[1200];
	const char **p = kp_arena_alloc(&st->arena, (st->nnotes + 1) * sizeof(*p));

	snprintf(line, sizeof(line), "%s: %s", path, what);
	if (!p)
		return -1;
	if (st->nnotes)
		memcpy(p, st->notes, st->nnotes * sizeof(*p));
	p[st->nnotes] = kp_arena_strdup(&st->arena, line);
	if (!p[st->nnotes])
		return -1;
	st->nnotes++;
	st->notes = p;
	return 0;
}

/* Where the variables are and how they are read (kp_efi_read()'s @root and @read). */
struct efi_src {
	const struct kp_root_dir *root;
	kp_efi_reader *read; /* NULL: kp_bytes_read_in() */
	void *data;
};

/*
 * One variable: 1 with its data in @b (*@data, *@len point into it), 0 when absent, -1 when
 * unreadable (a note says why) or out of memory (*@oom). @raw: the MOK config table's files
 * have no attribute word.
 */
static int read_var(struct kp_efi_state *st, const struct efi_src *src, const char *dir,
		    const char *name, const char *guid, bool raw, struct kp_bytes *b,
		    const unsigned char **data, size_t *len, bool *oom)
{
	char path[4200], why[700];
	struct kp_err e = { 0 };
	uint32_t attrs;

	if (guid)
		snprintf(path, sizeof(path), "%s/%s-%s", dir, name, guid);
	else
		snprintf(path, sizeof(path), "%s/%s", dir, name);
	/*
	 * kp_bytes_read_in() decompresses by magic: no variable starts with one (an attribute word,
	 * a signature list's type GUID, a flag byte)
	 */
	if ((src->read ? src->read(src->data, src->root, path, EFI_VAR_MAX, b, &e)
		       : kp_bytes_read_in(src->root, path, EFI_VAR_MAX, b, &e)) < 0) {
		if (kp_err_errnum(&e) == ENOENT)
			return 0;
		snprintf(why, sizeof(why), "cannot read: %s", e.msg);
		*oom = note(st, path, why) < 0;
		return -1;
	}
	if (raw) {
		*data = b->data;
		*len = b->len;
		return 1;
	}
	if (kp_efivar_split(b->data, b->len, &attrs, data, len) < 0) {
		kp_bytes_release(b);
		*oom = note(st, path, "shorter than efivarfs' attribute word") < 0;
		return -1;
	}
	return 1;
}

/* A one-byte flag variable (SecureBoot, SetupMode, MokSBStateRT): 1, 0, or -1 unknown. */
static int flag(struct kp_efi_state *st, const struct efi_src *src, const char *dir,
		const char *name, const char *guid, bool raw, int absent, bool *oom)
{
	struct kp_bytes b;
	const unsigned char *d;
	size_t len;
	int r = read_var(st, src, dir, name, guid, raw, &b, &d, &len, oom);

	if (r <= 0)
		return r == 0 ? absent : -1;
	r = len >= 1 ? d[0] == 1 : -1;
	kp_bytes_release(&b);
	return r;
}

/* A signature-list variable into @kr: from the MOK table first, then efivarfs. */
static int siglist(struct kp_efi_state *st, const struct efi_src *src, struct kp_keyring *kr,
		   const char *efivars, const char *mokvars, const char *name, const char *guid,
		   enum kp_esl_role role, int *count, bool *oom, struct kp_err *err)
{
	struct kp_bytes b;
	const unsigned char *d;
	size_t len;
	char label[4200];
	int r = 0, n;

	*count = 0;
	if (mokvars)
		r = read_var(st, src, mokvars, name, NULL, true, &b, &d, &len, oom);
	if (r > 0) {
		snprintf(label, sizeof(label), "%s/%s", mokvars, name);
	} else {
		if (*oom)
			return -1;
		r = read_var(st, src, efivars, name, guid, false, &b, &d, &len, oom);
		if (r <= 0)
			return *oom ? -1 : 0; /* absent, or unreadable (noted) */
		snprintf(label, sizeof(label), "%s/%s-%s", efivars, name, guid);
	}
	n = kp_keyring_add_esl(kr, d, len, role, label, err);
	kp_bytes_release(&b);
	if (n < 0) {
		if (!strcmp(err->msg, "out of memory"))
			return -1;
		/* the kernel keeps what preceded the error: so does the keyring */
		char why[700];

		snprintf(why, sizeof(why), "malformed signature list: %s", err->msg);
		if (note(st, label, why) < 0)
			return -1;
		return 1;
	}
	*count = n;
	return 1;
}

int kp_efi_read(struct kp_efi_state *st, const struct kp_root_dir *root, struct kp_keyring *kr,
		const char *efivars, const char *mokvars, kp_efi_reader *read, void *data,
		struct kp_err *err)
{
	const struct efi_src src = { root, read, data };
	static const struct {
		const char *name, *guid;
		enum kp_esl_role role;
	} lists[] = {
		{ "db", KP_EFI_IMAGE_SECURITY_GUID, KP_ESL_DB },
		{ "dbx", KP_EFI_IMAGE_SECURITY_GUID, KP_ESL_DBX },
		{ "MokListRT", KP_EFI_SHIM_LOCK_GUID, KP_ESL_MOK },
		{ "MokListXRT", KP_EFI_SHIM_LOCK_GUID, KP_ESL_MOKX },
		{ "MokNew", KP_EFI_SHIM_LOCK_GUID, KP_ESL_MOK_PENDING },
	};
	struct stat sb;
	bool oom = false;
	int sbvar, setup, moksb;

	memset(st, 0, sizeof(*st));
	st->secure_boot = -1;
	st->mok_trusted = -1;
	if (kp_stat_in(root, efivars, &sb) < 0 || !S_ISDIR(sb.st_mode)) {
		/* no efivarfs: not booted with EFI (or not mounted: said) */
		if (note(st, efivars, "no EFI variables (not an EFI boot?)") < 0)
			return kp_err_set(err, "out of memory");
		return 0;
	}
	st->efi = true;
	/* efi_get_secureboot_mode(): SecureBoot 1, not in setup mode, shim validating */
	sbvar = flag(st, &src, efivars, "SecureBoot", KP_EFI_GLOBAL_GUID, false, 0, &oom);
	setup = flag(st, &src, efivars, "SetupMode", KP_EFI_GLOBAL_GUID, false, 0, &oom);
	moksb = -1;
	if (mokvars)
		moksb = flag(st, &src, mokvars, "MokSBStateRT", NULL, true, -2, &oom);
	if (moksb < 0)
		moksb = flag(st, &src, efivars, "MokSBStateRT", KP_EFI_SHIM_LOCK_GUID, false, 0,
			     &oom);
	st->validation_disabled = moksb == 1;
	if (sbvar == 0 || setup == 1 || moksb == 1)
		st->secure_boot = 0;
	else if (sbvar == 1 && setup == 0)
		st->secure_boot = 1;
	/* uefi_check_trust_mok_keys(): the MOK config table's entry; efivarfs' mirror else */
	{
		int t = -2;

		if (mokvars)
			t = flag(st, &src, mokvars, "MokListTrustedRT", NULL, true, -2, &oom);
		if (t == -2)
			t = flag(st, &src, efivars, "MokListTrustedRT", KP_EFI_SHIM_LOCK_GUID,
				 false, -2, &oom);
		/* its presence decides, whatever it holds; unreadable: unknown */
		st->mok_trusted = t == -2 ? 0 : t == -1 && st->nnotes ? -1 : 1;
	}
	for (size_t i = 0; i < KP_ARRAY_SIZE(lists) && !oom; i++) {
		int count, r = siglist(st, &src, kr, efivars, mokvars, lists[i].name, lists[i].guid,
				       lists[i].role, &count, &oom, err);

		if (r < 0)
			return kp_err_set(err, "out of memory");
		if (lists[i].role == KP_ESL_MOK_PENDING && r > 0) {
			st->pending = true;
			st->npending = (size_t)count;
		}
	}
	if (oom)
		return kp_err_set(err, "out of memory");
	return 0;
}

void kp_efi_release(struct kp_efi_state *st)
{
	kp_arena_release(&st->arena);
	memset(st, 0, sizeof(*st));
}
