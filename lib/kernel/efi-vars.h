/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The firmware's side of module signatures, read from the EFI variables a running system
 * exposes (efivarfs, and shim's MOK config table under /sys/firmware/efi/mok-variables) or
 * from a directory laid out the same way (--efi-vars DIR): Secure Boot's state, the
 * certificates of db and MokListRT, the revocations of dbx and MokListXRT, whether MOK keys
 * are trusted for the .machine keyring (MokListTrustedRT), and the enrolment mokutil left
 * pending for the next boot (MokNew). Each variable that exists but cannot be read is a note.
 */
#ifndef KP_EFI_VARS_H
#define KP_EFI_VARS_H

#include <stdbool.h>
#include <stddef.h>

#include "sig-keys.h"
#include "util/util.h"

struct kp_efi_state {
	bool efi;	 /* the directory exists: an EFI boot */
	int secure_boot; /* SecureBoot (and SetupMode 0, MokSBStateRT not 1): 1, 0, -1 unknown */
	int mok_trusted; /* MokListTrustedRT present: 1, absent: 0, unreadable: -1 */
	bool validation_disabled; /* MokSBStateRT = 1 (mokutil --disable-validation) */
	bool pending;		  /* MokNew: an enrolment waits for the next boot */
	size_t npending;	  /* its certificates */
	const char **notes;	  /* what could not be read, or was malformed */
	size_t nnotes;
	struct kp_arena arena;
};

/*
 * Reads the variables under @efivars (efivarfs: NAME-GUID files, a 4-byte attribute word
 * first) and @mokvars (the MOK config table: NAME files, raw data; may be NULL) into @st and
 * their certificates and hashes into @kr. Absent variables are facts (not set), unreadable
 * ones are notes. -1 only when out of memory. Paths under @root (a system's root, not the
 * host's) are opened inside it (kp_open_regular_in()): a link, FIFO or device there never
 * leads the read to a host file or blocks it; NULL: the host's, by name. (A @read other than
 * kp_bytes_read_in() says for itself what it opens and may wait on.)
 */
struct kp_root_dir;
struct kp_bytes;
/*
 * How a variable's file is read: as kp_bytes_read_in() (file/bytes.h), 0, or -1 with @err
 * (without the path) and its errno (ENOENT: absent). The hook passes a reader whose read a
 * deadline can abandon (ctx/context-machine.c), since efivarfs_file_read() waits for the
 * firmware's answer uninterruptibly.
 */
typedef int kp_efi_reader(void *data, const struct kp_root_dir *root, const char *path, size_t max,
			  struct kp_bytes *out, struct kp_err *err);
/* The same read through @read (NULL: kp_bytes_read_in()), given @data. */
int kp_efi_read(struct kp_efi_state *st, const struct kp_root_dir *root, struct kp_keyring *kr,
		const char *efivars, const char *mokvars, kp_efi_reader *read, void *data,
		struct kp_err *err);
void kp_efi_release(struct kp_efi_state *st);

#endif
