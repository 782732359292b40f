/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Loader lines printed without a newline. vprintk_store() commits such a record without
 * finalizing it (prb_commit(), kernel/printk/printk.c, 5.10+), and readers of the log (dmesg,
 * the console) see only finalized records: it is finalized when the next record is reserved,
 * by anyone's printk() (prb_reserve(); only a KERN_CONT line of the same caller is appended to
 * it instead). kopolicy knows the loader's lines of the later loads, not what the init() of a
 * module it loads prints nor any other kernel message: it shows the line first among the lines
 * of the next load that prints one (the 7.2.13 oracle: strtab_prefix_then, strtab_weakpage_*), and
 * the load that printed it says, in its finding (KP_OPEN_RECORD_NOTE), that it may come
 * earlier. A simulated load records its lines as it prints them (struct kp_verdict.messages);
 * these turn them into what dmesg shows during each load.
 */
#ifndef KP_SIM_OPEN_RECORD_H
#define KP_SIM_OPEN_RECORD_H

#include <stdbool.h>
#include <stddef.h>

#include "sim/loader.h"

/* Where dmesg shows such a line: appended to the finding of the load that prints it. */
#define KP_OPEN_RECORD_NOTE                                                                        \
	" (the kernel prints this line without a newline: its log shows it only when the next "    \
	"line is printed, by anyone; kopolicy shows it first among the messages of the next load " \
	"it predicts to print a line, but the init() of a module loaded in between (whose output " \
	"kopolicy cannot know) or any other kernel message shows it earlier, and while nothing "   \
	"prints nothing shows it)"

/* Whether the loader prints line @msg without a newline (the formats are listed in the .c). */
bool kp_msg_unterminated(const char *msg);

/*
 * Of the lines @v printed, how many dmesg shows during its load: all but a last one printed
 * without a newline (an open record, shown with the next load's first line).
 */
size_t kp_msgs_shown(const struct kp_verdict *v);

/*
 * The open record an earlier load left that dmesg shows first during @v's load (@v prints
 * something), or NULL: the last line of the latest earlier load in @sim's load order that
 * printed anything, when it has no newline.
 */
const char *kp_open_record_before(const struct kp_simulation *sim, const struct kp_verdict *v);

#endif
