// SPDX-License-Identifier: GPL-2.0-or-later
/* Kernel build configuration: values, "is not set", strings, header, errors, .gz. */
#include <string.h>

#include "kernel/kernel-config.h"
#include "../tap.h"

#define DATA "tests/unit/kernel/data/"

static void check_config(struct tap *t, const char *file)
{
	struct kp_kconfig c = { 0 };
	struct kp_err err = { 0 };
	char *path = strdup(tap_srcpath(file));
	int r = kp_kconfig_load(&c, path, &err);

	tap_ok(t, r == 0, "load %s%s%s", file, r ? ": " : "", r ? err.msg : "");
	tap_ok(t, c.known, "%s: known", file);
	tap_is_int(t, c.modules, 1, "MODULES");
	tap_is_int(t, c.modversions, 1, "MODVERSIONS");
	tap_is_int(t, c.module_sig, 1, "MODULE_SIG");
	tap_is_int(t, c.module_sig_force, 0, "MODULE_SIG_FORCE is not set");
	tap_is_int(t, c.module_force_load, 0, "MODULE_FORCE_LOAD is not set");
	tap_is_int(t, c.livepatch, 1, "LIVEPATCH");
	tap_is_int(t, c.strict_module_rwx, 1, "STRICT_MODULE_RWX");
	tap_is_int(t, c.prel32, 1, "HAVE_ARCH_PREL32_RELOCATIONS");
	tap_is_int(t, c.allow_missing_ns, 0, "set twice: the last line (not set) wins");
	tap_is_str(t, c.module_sig_hash, "sha256", "MODULE_SIG_HASH without quotes");
	tap_is_str(t, c.localversion, "", "LOCALVERSION empty string");
	tap_is_str(t, kp_kconfig_get(&c, "CONFIG_CC_VERSION_TEXT"),
		   "gcc (Debian 12.2.0-14) 12.2.0 \"quoted\"", "escaped quotes undone");
	tap_is_str(t, kp_kconfig_get(&c, "EXT4_FS"), "m", "lookup without CONFIG_ prefix");
	tap_is_str(t, kp_kconfig_get(&c, "NR_CPUS"), "8192", "number");
	tap_is_str(t, kp_kconfig_get(&c, "MODULE_SIG_FORCE"), "n", "not set reads as n");
	tap_ok(t, kp_kconfig_get(&c, "NOT_THERE") == NULL, "absent symbol: NULL");
	tap_ok(t, !kp_kconfig_is_y(&c, "EXT4_FS"), "=m is not y");
	tap_is_str(t, c.arch, "x86", "arch from the header");
	tap_is_str(t, c.version, "6.12.118", "version from the header");
	kp_kconfig_release(&c);
	free(path);
}

int main(void)
{
	struct tap t = { 0 };
	struct kp_kconfig c = { 0 };
	struct kp_err err = { 0 };
	static const char bad_string[] = "CONFIG_A=\"unterminated\n";
	char *path;

	check_config(&t, DATA "config");
	check_config(&t, DATA "config.gz");

	path = strdup(tap_srcpath(DATA "config-bad"));
	tap_ok(&t, kp_kconfig_load(&c, path, &err) < 0, "malformed config refused");
	tap_ok(&t, strstr(err.msg, path) && strstr(err.msg, ":2: expected CONFIG_NAME=value"),
	       "error names file and line: %s", err.msg);
	kp_kconfig_release(&c);
	free(path);

	tap_ok(&t, kp_kconfig_load_buffer(&c, "buf", (const unsigned char *)bad_string,
					  sizeof(bad_string) - 1, &err) < 0 &&
		   strstr(err.msg, "buf:1: unterminated string value of CONFIG_A"),
	       "unterminated string: %s", err.msg);
	kp_kconfig_release(&c);
	tap_ok(&t, kp_kconfig_load_buffer(&c, "empty", (const unsigned char *)"# x\n", 4,
					  &err) < 0 &&
		   strstr(err.msg, "not a kernel configuration"), "no CONFIG_ lines: %s", err.msg);
	kp_kconfig_release(&c);
	return tap_done(&t);
}
