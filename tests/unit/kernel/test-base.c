// SPDX-License-Identifier: GPL-2.0-or-later
/* Kernel export base: Module.symvers layouts, System.map/kallsyms, vmlinux, merging. */
#include <stdio.h>
#include <string.h>

#include "kernel/kernel-base.h"
#include "kernel/kernel-base-prefix.h"
#include "../tap.h"

#define DATA "tests/unit/kernel/data/"

static char *data_path(const char *name)
{
	return strdup(tap_srcpath(name));
}

static struct kp_kernel_base *load(struct tap *t, const char *file, struct kp_err *err)
{
	struct kp_kernel_base *b;
	char *path = data_path(file);
	int r;

	if (kp_base_new(&b) < 0)
		abort();
	r = kp_base_load(b, path, err);
	tap_ok(t, r == 0, "load %s%s%s", file, r ? ": " : "", r ? err->msg : "");
	free(path);
	return b;
}

static void check_sym(struct tap *t, const struct kp_ksym *k, const char *name, const char *owner,
		      enum kp_export_table table, bool gpl, const char *ns, bool has_crc,
		      uint32_t crc)
{
	char what[128];

	tap_ok(t, k != NULL, "%s found", name);
	if (!k)
		return;
	snprintf(what, sizeof(what), "%s owner", name);
	tap_is_str(t, k->owner, owner, what);
	snprintf(what, sizeof(what), "%s table", name);
	tap_is_str(t, kp_export_table_section(k->table), kp_export_table_section(table), what);
	snprintf(what, sizeof(what), "%s gpl_only", name);
	tap_is_int(t, k->gpl_only, gpl, what);
	snprintf(what, sizeof(what), "%s namespace", name);
	tap_is_str(t, k->ns, ns, what);
	snprintf(what, sizeof(what), "%s has_crc", name);
	tap_is_int(t, k->has_crc, has_crc, what);
	if (has_crc) {
		snprintf(what, sizeof(what), "%s crc", name);
		tap_is_int(t, k->crc, crc, what);
	}
}

static void test_symvers_4col(struct tap *t)
{
	struct kp_err err = { 0 };
	struct kp_kernel_base *b = load(t, DATA "symvers-4col", &err);
	struct kp_base_stats st;

	check_sym(t, kp_base_lookup(b, "printk"), "printk", "vmlinux", KP_KSYMTAB, false, NULL,
		  true, 0x1a2b3c4d);
	check_sym(t, kp_base_lookup(b, "gpl_func"), "gpl_func", "vmlinux", KP_KSYMTAB_GPL, true,
		  NULL, true, 0x0badf00d);
	check_sym(t, kp_base_lookup(b, "future_func"), "future_func", "vmlinux",
		  KP_KSYMTAB_GPL_FUTURE, false, NULL, true, 1);
	check_sym(t, kp_base_lookup(b, "unused_func"), "unused_func", "vmlinux", KP_KSYMTAB_UNUSED,
		  false, NULL, true, 2);
	check_sym(t, kp_base_lookup(b, "unused_gpl_func"), "unused_gpl_func", "vmlinux",
		  KP_KSYMTAB_UNUSED_GPL, true, NULL, true, 3);
	check_sym(t, kp_base_lookup(b, "no_crc_func"), "no_crc_func", "vmlinux", KP_KSYMTAB, false,
		  NULL, false, 0);
	/* Module exports are kept, but not returned by the vmlinux lookup. */
	tap_ok(t, kp_base_lookup(b, "usb_stor_probe1") == NULL,
	       "module export not found by kp_base_lookup");
	check_sym(t, kp_base_lookup_owner(b, "usb_stor_probe1", NULL), "usb_stor_probe1",
		  "drivers/usb/storage/usb-storage", KP_KSYMTAB_GPL, true, NULL, true, 0xdeadbeef);
	tap_ok(t,
	       kp_base_lookup_owner(b, "usb_stor_probe1", "drivers/usb/storage/usb-storage") !=
		       NULL,
	       "lookup by owner");
	tap_ok(t, kp_base_lookup(b, "nonexistent") == NULL, "unknown symbol: NULL");
	kp_base_stats(b, &st);
	tap_is_int(t, st.nsyms, 7, "4-column: entries");
	tap_is_int(t, st.nvmlinux, 6, "4-column: vmlinux entries");
	tap_is_int(t, st.nmodule, 1, "4-column: module entries");
	tap_is_int(t, st.ngpl_only, 2, "4-column: GPL-only vmlinux entries");
	tap_is_int(t, st.sources, KP_SRC_SYMVERS, "4-column: source mask");
	tap_ok(t, kp_base_release(b) == NULL, "no release from Module.symvers");
	kp_base_free(b);
}

static void test_symvers_ns(struct tap *t, const char *file)
{
	struct kp_err err = { 0 };
	struct kp_kernel_base *b = load(t, file, &err);
	const struct kp_ksym *k;

	check_sym(t, kp_base_lookup(b, "printk"), "printk", "vmlinux", KP_KSYMTAB, false, NULL,
		  true, 0x1a2b3c4d);
	check_sym(t, kp_base_lookup(b, "dma_buf_get"), "dma_buf_get", "vmlinux", KP_KSYMTAB_GPL,
		  true, "DMA_BUF", true, 0x12345678);
	k = kp_base_lookup_owner(b, "usb_stor_probe1", "drivers/usb/storage/usb-storage");
	check_sym(t, k, "usb_stor_probe1", "drivers/usb/storage/usb-storage", KP_KSYMTAB_GPL, true,
		  "USB_STORAGE", true, 0xdeadbeef);
	tap_ok(t, k && k->ns_known && !k->vmlinux, "%s: module entry, namespace known", file);
	kp_base_free(b);
}

static void test_symvers_gz(struct tap *t)
{
	struct kp_err err = { 0 };
	struct kp_kernel_base *b = load(t, DATA "symvers-rhel.gz", &err);
	char *path = data_path(DATA "symvers-rhel.gz");

	check_sym(t, kp_base_lookup(b, "suse_only"), "suse_only", "vmlinux", KP_KSYMTAB_GPL, true,
		  NULL, true, 0xabcd);
	tap_is_int(t, kp_base_count(b), 5, ".gz: entries");
	kp_base_free(b);
	/* The explicit loader decompresses too. */
	if (kp_base_new(&b) < 0)
		abort();
	tap_ok(t, kp_base_load_symvers(b, path, &err) == 0, "kp_base_load_symvers on .gz");
	tap_ok(t, kp_base_lookup(b, "kfree") != NULL, ".gz: kfree");
	kp_base_free(b);
	free(path);
}

static void expect_error(struct tap *t, const char *file, const char *want)
{
	struct kp_kernel_base *b;
	struct kp_err err = { 0 };
	char *path = data_path(file);
	int r;

	if (kp_base_new(&b) < 0)
		abort();
	r = kp_base_load(b, path, &err);
	tap_ok(t, r < 0, "%s refused", file);
	tap_ok(t, strstr(err.msg, path) != NULL, "message names the file: %s", err.msg);
	tap_ok(t, strstr(err.msg, want) != NULL, "message contains '%s'", want);
	kp_base_free(b);
	free(path);
}

static void expect_buffer_error(struct tap *t, const char *what, const char *text, const char *want)
{
	struct kp_kernel_base *b;
	struct kp_err err = { 0 };
	int r;

	if (kp_base_new(&b) < 0)
		abort();
	r = kp_base_load_symvers_buffer(b, "test.symvers", (const unsigned char *)text,
					strlen(text), &err);
	tap_ok(t, r < 0 && strstr(err.msg, want), "%s refused: %s", what, err.msg);
	kp_base_free(b);
}

static void test_symvers_errors(struct tap *t)
{
	expect_error(t, DATA "symvers-bad-columns", ":2: 3 TAB-separated columns");
	expect_error(t, DATA "symvers-bad-type",
		     ":2: unknown export type 'EXPORT_SYMBOL_GPL_ONLY'");
	expect_buffer_error(t, "bad CRC", "0xzz\tfoo\tvmlinux\tEXPORT_SYMBOL\n",
			    "test.symvers:1: invalid CRC '0xzz'");
	expect_buffer_error(t, "4 columns after 5",
			    "0x1\tfoo\tvmlinux\tEXPORT_SYMBOL\t\n"
			    "0x2\tbar\tvmlinux\tEXPORT_SYMBOL\n",
			    "test.symvers:2: line has the 4-column");
	expect_buffer_error(t, "mixed 5-column layouts",
			    "0x1\tfoo\tvmlinux\tEXPORT_SYMBOL\t\n"
			    "0x2\tbar\tNS\tvmlinux\tEXPORT_SYMBOL\n",
			    "test.symvers:2: line has the 5-column, namespace third");
	expect_buffer_error(t, "empty symbol", "0x1\t\tvmlinux\tEXPORT_SYMBOL\n",
			    ":1: invalid symbol name ''");
	expect_buffer_error(t, "9-digit CRC", "0x123456789\tfoo\tvmlinux\tEXPORT_SYMBOL\n",
			    ":1: invalid CRC");
	expect_buffer_error(t, "unknown export type", "0x1\tfoo\tvmlinux\tNOT_AN_EXPORT\n",
			    ":1: unknown export type 'NOT_AN_EXPORT'");
	expect_buffer_error(t, "5 columns without EXPORT_*", "0x1\tfoo\tvmlinux\tX\tY\n",
			    ":1: no EXPORT_* type in column 4 or 5");
	expect_buffer_error(t, "6 columns", "0x1\tfoo\tvmlinux\tEXPORT_SYMBOL\tNS\tZ\n",
			    ":1: more than 5 TAB-separated columns");
	expect_buffer_error(t, "blank lines only", "\n\n", "empty Module.symvers");
}

static void test_duplicates(struct tap *t)
{
	static const char text[] = "0x1\tfoo\tvmlinux\tEXPORT_SYMBOL\n"
				   "0x1\tfoo\tvmlinux\tEXPORT_SYMBOL\n"
				   "0x2\tfoo\tdrivers/a/a\tEXPORT_SYMBOL_GPL\n";
	struct kp_kernel_base *b;
	struct kp_err err = { 0 };
	struct kp_base_stats st;
	const struct kp_ksym *k;

	if (kp_base_new(&b) < 0)
		abort();
	tap_ok(t,
	       kp_base_load_symvers_buffer(b, "dup", (const unsigned char *)text, sizeof(text) - 1,
					   &err) == 0,
	       "duplicates load");
	kp_base_stats(b, &st);
	tap_is_int(t, st.nduplicates, 1, "same name and owner twice: one duplicate");
	tap_is_int(t, st.nsyms, 2, "two owners: two entries");
	k = kp_base_lookup_owner(b, "foo", NULL);
	tap_ok(t, k && k->vmlinux, "first entry of the name is vmlinux's");
	k = k ? kp_base_next_same_name(b, k) : NULL;
	tap_ok(t, k && !strcmp(k->owner, "drivers/a/a") && k->gpl_only, "next same-name entry");
	tap_ok(t, k && !kp_base_next_same_name(b, k), "end of the same-name chain");
	kp_base_free(b);
}

static void test_system_map(struct tap *t)
{
	struct kp_err err = { 0 };
	struct kp_kernel_base *b = load(t, DATA "System.map", &err);
	struct kp_base_stats st;
	const struct kp_ksym *k;

	k = kp_base_lookup(b, "printk");
	check_sym(t, k, "printk", "vmlinux", KP_KSYMTAB, false, NULL, true, 0xa1b2c3d4);
	tap_ok(t, k && !k->ns_known && k->sources == KP_SRC_SYSTEM_MAP,
	       "System.map: namespace unknown, source System.map");
	check_sym(t, kp_base_lookup(b, "jiffies"), "jiffies", "vmlinux", KP_KSYMTAB, false, NULL,
		  false, 0);
	/* Between __start___ksymtab_gpl and __stop___ksymtab_gpl. */
	check_sym(t, kp_base_lookup(b, "gpl_func"), "gpl_func", "vmlinux", KP_KSYMTAB_GPL, true,
		  NULL, false, 0);
	check_sym(t, kp_base_lookup(b, "lto_func"), "lto_func", "vmlinux", KP_KSYMTAB_GPL, true,
		  NULL, false, 0);
	/* v5.4 label __ksymtab_<ns>.<sym> */
	k = kp_base_lookup(b, "dma_buf_get");
	check_sym(t, k, "dma_buf_get", "vmlinux", KP_KSYMTAB_GPL, true, "DMA_BUF", false, 0);
	tap_ok(t, k && k->ns_known, "5.4 label: namespace known");
	tap_ok(t, kp_base_lookup(b, "not_an_export") == NULL,
	       "label at __stop___ksymtab_gpl: no export");
	kp_base_stats(b, &st);
	tap_is_int(t, st.nvmlinux, 5, "System.map: exports");
	kp_base_free(b);
	/* v7.1+: GPL-only is a __kflagstab byte, not in the map: refused, not all plain */
	expect_error(t, DATA "System.map-kflagstab", "which exports are GPL-only is not in");
	tap_ok(t, kp_system_map_has_symbols(tap_srcpath(DATA "System.map-kflagstab")),
	       "a 7.1+ System.map still has symbol lines");
	tap_ok(t, !kp_system_map_has_symbols(tap_srcpath(DATA "System.map-stub")),
	       "the stub has no symbol line");
	tap_ok(t, !kp_system_map_has_symbols(tap_srcpath(DATA "config")),
	       "a config has no symbol line");
}

static void test_kallsyms(struct tap *t)
{
	struct kp_err err = { 0 };
	struct kp_kernel_base *b = load(t, DATA "kallsyms", &err);
	const struct kp_ksym *k = kp_base_lookup(b, "gpl_func");

	tap_ok(t, k && k->gpl_only && k->sources == KP_SRC_KALLSYMS, "kallsyms: gpl_func GPL-only");
	tap_ok(t, !kp_base_lookup_owner(b, "nvidia_export", NULL),
	       "kallsyms: module lines skipped");
	tap_is_int(t, kp_base_count(b), 2, "kallsyms: exports");
	kp_base_free(b);
	expect_error(t, DATA "kallsyms-hidden", "every address is 0");
	expect_error(t, DATA "System.map-stub", "Debian's stub System.map");
	expect_error(t, DATA "System.map-bad", ":2: malformed line");
}

static void test_vmlinux(struct tap *t, const char *file)
{
	struct kp_err err = { 0 };
	struct kp_kernel_base *b = load(t, file, &err);
	struct kp_base_stats st;

	tap_is_str(t, kp_base_release(b), "6.99.0-test", "vmlinux release from linux_banner");
	check_sym(t, kp_base_lookup(b, "jiffies"), "jiffies", "vmlinux", KP_KSYMTAB, false, NULL,
		  true, 0x11111111);
	check_sym(t, kp_base_lookup(b, "printk"), "printk", "vmlinux", KP_KSYMTAB, false, NULL,
		  true, 0x33333333);
	check_sym(t, kp_base_lookup(b, "dma_buf_get"), "dma_buf_get", "vmlinux", KP_KSYMTAB_GPL,
		  true, "DMA_BUF", true, 0x44444444);
	check_sym(t, kp_base_lookup(b, "gpl_func"), "gpl_func", "vmlinux", KP_KSYMTAB_GPL, true,
		  NULL, true, 0x55555555);
	kp_base_stats(b, &st);
	tap_is_int(t, st.nvmlinux, 5, "vmlinux: exports");
	tap_is_int(t, st.sources, KP_SRC_VMLINUX, "vmlinux: source");
	kp_base_free(b);
}

/* Two sources for the same symbols: facts merge, disagreements are counted. */
static void test_merge(struct tap *t)
{
	static const char symvers[] = "0x33333333\tprintk\tvmlinux\tEXPORT_SYMBOL\t\n"
				      "0x99999999\tgpl_func\tvmlinux\tEXPORT_SYMBOL\t\n";
	struct kp_kernel_base *b;
	struct kp_err err = { 0 };
	struct kp_base_stats st;
	const struct kp_ksym *k;
	char *path = data_path(DATA "fake-vmlinux-prel32");

	if (kp_base_new(&b) < 0)
		abort();
	tap_ok(t,
	       kp_base_load_symvers_buffer(b, "Module.symvers", (const unsigned char *)symvers,
					   sizeof(symvers) - 1, &err) == 0,
	       "merge: symvers");
	tap_ok(t, kp_base_load_vmlinux(b, path, &err) == 0, "merge: vmlinux");
	kp_base_stats(b, &st);
	tap_is_int(t, st.nvmlinux, 5, "merge: 5 distinct exports");
	tap_is_int(t, st.nconflicts, 2, "merge: gpl_func class and CRC disagree");
	tap_ok(t,
	       st.first_conflict && strstr(st.first_conflict, "gpl_func") &&
		       strstr(st.first_conflict, "Module.symvers says table __ksymtab"),
	       "merge: conflict message: %s", st.first_conflict ? st.first_conflict : "(none)");
	k = kp_base_lookup(b, "printk");
	tap_ok(t, k && k->sources == (KP_SRC_SYMVERS | KP_SRC_VMLINUX), "merge: printk sources");
	tap_ok(t, kp_base_set_kernel_release(b, "6.99.0-test", &err) == 0, "same release accepted");
	tap_ok(t,
	       kp_base_set_kernel_release(b, "6.1.0", &err) < 0 && strstr(err.msg, "6.99.0-test"),
	       "other release refused: %s", err.msg);
	kp_base_free(b);
	free(path);
}

/* kp_base_find_prefix(): the names a comparison reading only a name's first bytes matches */
static void test_prefix(struct tap *t)
{
	static const char text[] = "0x1\tmsleep_interruptible\tvmlinux\tEXPORT_SYMBOL\n"
				   "0x2\tmsl\tvmlinux\tEXPORT_SYMBOL\n"
				   "0x3\tmsleep\tdrivers/a/a\tEXPORT_SYMBOL_GPL\n"
				   "0x4\tmsleep\tvmlinux\tEXPORT_SYMBOL\n";
	struct kp_kernel_base *b;
	struct kp_err err = { 0 };
	const struct kp_ksym *k;
	size_t at = 99;

	if (kp_base_new(&b) < 0)
		abort();
	tap_ok(t,
	       kp_base_load_symvers_buffer(b, "prefix", (const unsigned char *)text,
					   sizeof(text) - 1, &err) == 0,
	       "prefix base loads");
	k = kp_base_find_prefix(b, "msle", 4, 0, &at);
	tap_is_str(t, k ? k->name : NULL, "msleep_interruptible", "msle: the first in load order");
	tap_is_int(t, at, 0, "its index");
	k = kp_base_find_prefix(b, "msle", 4, at + 1, &at);
	tap_ok(t, k && !strcmp(k->name, "msleep") && !k->vmlinux,
	       "msle: then drivers/a/a's msleep");
	tap_is_int(t, at, 2, "its index");
	k = kp_base_find_prefix(b, "msle", 4, at + 1, &at);
	tap_ok(t, k && !strcmp(k->name, "msleep") && k->vmlinux, "msle: then vmlinux's msleep");
	tap_ok(t, !kp_base_find_prefix(b, "msle", 4, at + 1, NULL), "msle: no more");
	k = kp_base_find_prefix(b, "msl", 3, 1, &at);
	tap_is_str(t, k ? k->name : NULL, "msl", "msl from index 1: the name itself counts too");
	tap_ok(t, !kp_base_find_prefix(b, "msleepy", 7, 0, NULL), "msleepy: longer than msleep");
	tap_ok(t, !kp_base_find_prefix(b, "msl\0x", 5, 0, NULL), "a NUL inside the bytes");
	tap_ok(t, !kp_base_find_prefix(NULL, "m", 1, 0, NULL), "no base");
	kp_base_free(b);
}

static void test_owner_matches(struct tap *t)
{
	tap_ok(t,
	       kp_base_owner_matches("drivers/usb/storage/usb-storage",
				     "/lib/modules/6.1/kernel/drivers/usb/storage/"
				     "usb-storage.ko.xz"),
	       "owner matches a tree path");
	tap_ok(t,
	       kp_base_owner_matches("drivers/usb/storage/usb-storage",
				     "drivers/usb/storage/usb-storage.ko"),
	       "owner matches the same relative path");
	tap_ok(t,
	       !kp_base_owner_matches("storage/usb-storage",
				      "/x/drivers/usb/foostorage/usb-storage.ko"),
	       "owner must match whole path components");
	tap_ok(t,
	       !kp_base_owner_matches("drivers/usb/storage/usb-storage",
				      "/x/drivers/usb/storage/usb-storage.txt"),
	       "not a module file");
}

int main(void)
{
	struct tap t = { 0 };

	test_symvers_4col(&t);
	test_symvers_ns(&t, DATA "symvers-ns-third");
	test_symvers_ns(&t, DATA "symvers-ns-last");
	test_symvers_gz(&t);
	test_symvers_errors(&t);
	test_duplicates(&t);
	test_system_map(&t);
	test_kallsyms(&t);
	test_vmlinux(&t, DATA "fake-vmlinux-prel32");
	test_vmlinux(&t, DATA "fake-vmlinux-abs");
	test_merge(&t);
	test_owner_matches(&t);
	test_prefix(&t);
	return tap_done(&t);
}
