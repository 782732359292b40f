/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The machine's side of module signatures for a context (lib/ctx only): its EFI variables
 * (Secure Boot, db, dbx, MOK and pending MOK enrolments), --mok certificates and the DKMS
 * signing key, read into the context's keyring and facts options; after the facts are
 * built, the keyring model applied and what could not be read said as assumptions.
 */
#ifndef KP_CONTEXT_MACHINE_H
#define KP_CONTEXT_MACHINE_H

#include "context.h"

/*
 * Reads them. @root: the system's root (--running, -b ROOT, the modprobe hook,
 * --this-machine), NULL for files alone (then only --efi-vars, --mok, --dkms-key); @live: it
 * is the running system, so a missing sys/firmware/efi means no EFI boot (Secure Boot off);
 * @bounded: the caller answers at a deadline (the hook), so the EFI variables are read by a
 * child it can abandon (system/kernel-read.h), a FIFO standing in for efivarfs as for procfs.
 */
int kp_ctx_machine_keys(struct kp_ctx *c, const char *root, bool live, bool bounded,
			struct kp_err *err);
/* After kp_facts_build(): the keyring model applied, the notes added to the facts. */
int kp_ctx_machine_facts(struct kp_ctx *c, struct kp_err *err);
/* The warning about the kernel image's certificates outside its lists, if there are any. */
void kp_ctx_warn_unplaced(struct kp_ctx *c);

#endif
