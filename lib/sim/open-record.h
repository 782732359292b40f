/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Loader lines printed without a newline. printk() keeps such a record open, and readers of
 * the log (dmesg) see it only when the next printk() closes it: as the first line of the next
 * load that prints anything, or not at all when nothing prints after it. A simulated load
 * records its lines as it prints them (struct kp_verdict.messages); these two turn them into
 * what dmesg shows during each load.
 */
#ifndef KP_SIM_OPEN_RECORD_H
#define KP_SIM_OPEN_RECORD_H

#include <stdbool.h>
#include <stddef.h>

#include "sim/loader.h"

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
