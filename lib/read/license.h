/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef KP_LICENSE_H
#define KP_LICENSE_H

#include <stdbool.h>

/* include/linux/license.h license_is_gpl_compatible(), all kernels since 2.6.x. */
bool kp_license_is_gpl_compatible(const char *license);

#endif
