// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Module names (lib/util/module-name.c): '-' as '_' (KBUILD_MODNAME), where a path's name ends
 * (a Module.symvers owner, a .ko file, depmod's first '.'), cut to the buffer, and names
 * compared with '-' and '_' alike.
 */
#include <stdint.h>
#include <string.h>

#include "tap.h"
#include "util/module-name.h"

static void copies(struct tap *t)
{
	char buf[8], in_place[16] = "snd-hda-intel";
	size_t n;

	n = kp_modname_copy(buf, sizeof(buf), "a-b_c", SIZE_MAX);
	tap_is_str(t, buf, "a_b_c", "'-' as '_', '_' kept");
	tap_is_int(t, n, 5, "the whole name copied");
	n = kp_modname_copy(buf, sizeof(buf), "usb-storage", SIZE_MAX);
	tap_is_str(t, buf, "usb_sto", "cut at the buffer");
	tap_is_int(t, n, 7, "... and the count says so");
	n = kp_modname_copy(buf, sizeof(buf), "snd-hda", 3);
	tap_is_str(t, buf, "snd", "only @len bytes");
	tap_is_int(t, n, 3, "... counted");
	memset(buf, 'x', sizeof(buf));
	n = kp_modname_copy(buf, 0, "abc", SIZE_MAX);
	tap_is_int(t, n, 0, "a buffer of 0 bytes: nothing written");
	tap_ok(t, buf[0] == 'x', "... not even the NUL");
	kp_modname_copy(in_place, sizeof(in_place), in_place, SIZE_MAX);
	tap_is_str(t, in_place, "snd_hda_intel", "in place");
}

static void from_paths(struct tap *t)
{
	char buf[64];

	kp_modname_from_path(buf, sizeof(buf), "drivers/usb/storage/usb-storage", KP_MODNAME_WHOLE);
	tap_is_str(t, buf, "usb_storage", "owner path -> KBUILD_MODNAME");
	kp_modname_from_path(buf, sizeof(buf), "drivers/firmware/thead,th1520-aon",
			     KP_MODNAME_WHOLE);
	tap_is_str(t, buf, "thead_th1520_aon", "owner path: ',' as '_' (kbuild name-fix-token)");
	kp_modname_from_path(buf, sizeof(buf), "kernel/drivers/firmware/thead,th1520-aon.ko.xz",
			     KP_MODNAME_KO);
	tap_is_str(t, buf, "thead,th1520_aon", "file name: ',' kept (kmod's modname)");
	kp_modname_from_path(buf, 4, "snd-hda", KP_MODNAME_WHOLE);
	tap_is_str(t, buf, "snd", "owner: truncated to the buffer");
	kp_modname_from_path(buf, sizeof(buf), "/lib/modules/6.1/kernel/x/snd-hda.ko.xz",
			     KP_MODNAME_KO);
	tap_is_str(t, buf, "snd_hda", ".ko.xz: up to .ko");
	kp_modname_from_path(buf, sizeof(buf), "a.b-c.ko", KP_MODNAME_KO);
	tap_is_str(t, buf, "a.b_c", ".ko: a '.' before it stays");
	kp_modname_from_path(buf, sizeof(buf), "dir/plain-name", KP_MODNAME_KO);
	tap_is_str(t, buf, "plain_name", ".ko rule without .ko: the whole basename");
	kp_modname_from_path(buf, sizeof(buf), "kernel/a.b-c.ko", KP_MODNAME_DOT);
	tap_is_str(t, buf, "a", "depmod: up to the first '.'");
	kp_modname_from_path(buf, sizeof(buf), "x-y.ko.zst", KP_MODNAME_DOT);
	tap_is_str(t, buf, "x_y", "depmod: compressed");
	kp_modname_from_path(buf, 3, "/m/abc-d.ko", KP_MODNAME_KO);
	tap_is_str(t, buf, "ab", ".ko rule: truncated to the buffer");
}

static void equal(struct tap *t)
{
	tap_ok(t, kp_modname_eq("snd-hda_intel", "snd_hda-intel"), "'-' and '_' alike");
	tap_ok(t, kp_modname_eq("", ""), "empty names are equal");
	tap_ok(t, !kp_modname_eq("snd_hda", "snd_hdax"), "a prefix is not equal");
	tap_ok(t, !kp_modname_eq("snd_hdax", "snd_hda"), "... either way");
	tap_ok(t, !kp_modname_eq("a-b", "a.b"), "only '-' and '_' are alike");
}

int main(void)
{
	struct tap t = { 0 };

	copies(&t);
	from_paths(&t);
	equal(&t);
	return tap_done(&t);
}
