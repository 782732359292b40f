/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What libkmod reads, checked before it reads it: libkmod opens its files without
 * O_NONBLOCK and trusts the offsets of depmod's .bin indexes, so a FIFO in modprobe.d
 * blocks it forever and a corrupt index can loop it or read out of bounds.
 */
#ifndef KP_MODPROBE_INDEX_H
#define KP_MODPROBE_INDEX_H

#include <stddef.h>

#include "util/util.h"

/*
 * Checks a libkmod .bin index (@len bytes) before libkmod reads it: header, every node
 * offset inside the file, children below their parent (as depmod writes them), each node
 * reached once, strings and value tables inside the file. 0, or -1 with the reason.
 */
int kp_chain_index_check(const unsigned char *d, size_t len, struct kp_err *err);
/*
 * The modprobe configuration @paths (NULL-terminated, as given to kmod_new()) of the
 * system at @root: any entry libkmod would open that is not a regular file or a directory
 * (a FIFO, a device, a socket) is refused with "PATH: not a regular file: ..."; under a
 * root, so is a symlink that leads on the host elsewhere than inside the root (libkmod
 * follows it on the host). 0 or -1.
 */
int kp_modprobe_config_check(const char *root, const char *const *paths, struct kp_err *err);

#endif
