/* SPDX-License-Identifier: GPL-2.0-or-later */
/* open-fixture.h: a committed fixture module read for test-reader and test-reader-symget. */
#ifndef KP_TEST_OPEN_FIXTURE_H
#define KP_TEST_OPEN_FIXTURE_H

#include "read/module.h"
#include "tap.h"

/* Reads fixture @rel (a path under the source tree) as one TAP line; NULL when it fails. */
struct kp_module *open_fixture(struct tap *t, const char *rel);

#endif
