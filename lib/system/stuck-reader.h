/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Marks of the readers a hook left behind (stuck-reader.c). A child that reads an EFI
 * variable (system/kernel-read.h) can wait for the firmware for ever: efivarfs_file_read() ->
 * efivar_get_variable() -> efi_queue_work(), which waits with wait_for_completion() while
 * holding efi_runtime_lock (drivers/firmware/efi/runtime-wrappers.c, 5.10 to 7.2), so every
 * later runtime call queues behind it. A hook that gives up at its deadline leaves such a child
 * behind; its mark, a file of a trusted directory (cache/trusted-dir.h: root's /run/kopolicy by
 * default), tells later hooks of the same boot that the variables cannot be read while that
 * child lives, so that they answer at once instead of queueing for their whole --timeout.
 *
 * A mark is the file "KIND-reader.PID" holding "BOOT_ID PID START HOOK_PID HOOK_START\n"
 * (boot_id of /proc/sys/kernel/random/boot_id; the reader's pid and start time, field 22 of
 * /proc/PID/stat; the same of the hook that waits for it). It is written while the hook waits
 * and removed once the reader is reaped; it says "left behind" only while the reader lives
 * (the same start time: no reused pid) in the boot that wrote it and its hook has ended (a
 * hook still waiting, run beside this one, is no reason not to read). One whose reader ended,
 * or of another boot, is stale and removed. Only a regular file owned by root or us and
 * writable by nobody else, in a directory that passes the trust test, is believed: anyone
 * else's is ignored, never obeyed.
 */
#ifndef KP_STUCK_READER_H
#define KP_STUCK_READER_H

#include <stdbool.h>
#include <sys/types.h>

#include "util/util.h"

struct kp_reader_marks {
	const char *dir; /* the marks' directory, NULL: none kept */
	int dfd;	 /* its O_PATH descriptor once opened, else -1 */
	char boot[40];	 /* this boot's id, once opened */
};

/* Marks kept in @dir (NULL: none), not opened yet. */
void kp_reader_marks_init(struct kp_reader_marks *m, const char *dir);
/*
 * The directory opened (made, 0755, when missing) under the trust test and this boot's id
 * read: 0 (also with no directory); -1 with @err when refused or unreadable: no mark is then
 * believed or kept.
 */
int kp_reader_marks_open(struct kp_reader_marks *m, struct kp_err *err);
/*
 * A mark of @kind ("efi") whose reader was left behind: 1 with its pid in *@pid, else 0
 * (stale marks removed). 0 when not opened.
 */
int kp_reader_marks_find(struct kp_reader_marks *m, const char *kind, pid_t *pid);
/*
 * Marks @pid, a reader of @kind this process is about to wait for: 0, or -1 when it cannot.
 * Decides nothing on errno: safe while @pid, a clone(CLONE_VM) child sharing it, runs.
 */
int kp_reader_marks_add(struct kp_reader_marks *m, const char *kind, pid_t pid);
/* The mark of @pid removed: its reader was reaped. */
void kp_reader_marks_remove(struct kp_reader_marks *m, const char *kind, pid_t pid);
void kp_reader_marks_release(struct kp_reader_marks *m);

#endif
