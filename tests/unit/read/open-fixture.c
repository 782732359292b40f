// SPDX-License-Identifier: GPL-2.0-or-later
/* open-fixture.c: a committed fixture module read for the reader's tests (open-fixture.h). */
#include "open-fixture.h"

struct kp_module *open_fixture(struct tap *t, const char *rel)
{
	struct kp_module *m = NULL;
	struct kp_err err = { 0 };
	int r = kp_module_open(tap_srcpath(rel), NULL, &m, &err);

	tap_ok(t, r == 0 && m, "open %s%s%s", rel, r ? ": " : "", r ? err.msg : "");
	return r ? NULL : m;
}
