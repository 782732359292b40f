// SPDX-License-Identifier: GPL-2.0-or-later
/* modinfo.c: setup_modinfo() v6.16+ refuses MODULE_IMPORT_NS("module:...") with -EPERM. */
#include <errno.h>

#include "builder.h"

static void run(struct tap *t, const char *release, const char *ns, int err, const char *dmesg)
{
	struct tb_world w;
	struct kp_module *m;
	char what[128];

	tb_init(&w, release);
	m = tb_module(&w, "m");
	tb_modinfo(m, "import_ns", "USB_STORAGE");
	tb_modinfo(m, "import_ns", ns);
	tb_run(&w);
	snprintf(what, sizeof(what), "%s import_ns=%s: errno", release, ns);
	tap_is_int(t, tb_v(&w, "m")->err, err, what);
	tb_is_text(t, tb_dmesg(&w, "m"), dmesg, "dmesg");
	tap_is_str(t, tb_findings(&w, "m"), err ? "module-namespace-import" : "", "findings");
	tb_free(&w);
}

int main(void)
{
	struct tap t = { 0 };

	run(&t, "6.16.0", "module:kvm", -EPERM,
	    "m: module tries to import module namespace: module:kvm");
	run(&t, "7.2.13+deb14-amd64", "module:kvm", -EPERM,
	    "m: module tries to import module namespace: module:kvm");
	run(&t, "6.15.0", "module:kvm", 0, "");
	run(&t, "6.12.37", "module:kvm", 0, "");
	run(&t, "6.16.0", "modulex", 0, "");
	return tap_done(&t);
}
