// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The base cache (lib/cache/base-cache.c, base-symtab.c, base-kvtab.c) and the kernel base
 * and config read through it (lib/kernel/kernel-base-cached.c, kp_kconfig_load_cached()):
 * a miss stores, a hit answers exactly what parsing answers (every export, whole or filtered
 * to a set of names; every config symbol), a changed input misses, an input whose state is
 * not trusted is known by its bytes (a rewrite that keeps size and times misses), and a
 * damaged or foreign entry never changes an answer: every byte of the entries is flipped in
 * turn. A base that took a whole table as it lies answers what a parsed one does after
 * further loads too (vmlinux, System.map, another Module.symvers: merges, conflicts, chains
 * of one name from the table into the base's own entries), and a table whose index is
 * forged (its CRCs made to match) is refused. Real inputs: fixtures/ko/6.12's Module.symvers.gz
 * (26,772 exports) and config.gz; the kernel's vmlinux BTF through the cache:
 * test-base-cache-btf.c. Runs as any user: the cache and inputs are the test's own, in a fresh
 * directory of /tmp.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base-cache-fixture.h"
#include "cache/base-cache.h"
#include "cache/base-symtab.h"
#include "kernel/kernel-base-cached.h"
#include "kernel/kernel-config.h"
#include "tap.h"
#include "util/crc32.h"
#include "util/util.h"

static char top[64];

static void at(char *p, size_t len, const char *rel)
{
	snprintf(p, len, "%s/%s", top, rel);
}

/* Two bases hold the same exports in the same order, and the same duplicate count. */
static bool same_base(const struct kp_kernel_base *a, const struct kp_kernel_base *b, char *why,
		      size_t len)
{
	struct kp_base_stats sa, sb;

	kp_base_stats(a, &sa);
	kp_base_stats(b, &sb);
	if (kp_base_count(a) != kp_base_count(b) || sa.nduplicates != sb.nduplicates ||
	    sa.sources != sb.sources) {
		snprintf(why, len, "%zu/%zu entries, %zu/%zu duplicates", kp_base_count(a),
			 kp_base_count(b), sa.nduplicates, sb.nduplicates);
		return false;
	}
	for (size_t i = 0; i < kp_base_count(a); i++) {
		const struct kp_ksym *x = kp_base_at(a, i), *y = kp_base_at(b, i);

		if (strcmp(x->name, y->name) || strcmp(x->owner, y->owner) ||
		    (x->ns == NULL) != (y->ns == NULL) || (x->ns && strcmp(x->ns, y->ns)) ||
		    x->table != y->table || x->gpl_only != y->gpl_only ||
		    x->vmlinux != y->vmlinux || x->ns_known != y->ns_known ||
		    x->has_crc != y->has_crc || x->crc != y->crc || x->sources != y->sources) {
			snprintf(why, len, "entry %zu: %s (%s) differs", i, x->name, x->owner);
			return false;
		}
		/* found by its name (the index built from a cached table's stored hashes) */
		if (kp_base_lookup_owner(a, x->name, x->owner) != x) {
			snprintf(why, len, "entry %zu: %s (%s) not found by its name", i, x->name,
				 x->owner);
			return false;
		}
	}
	return true;
}

/* The base of @path parsed (@wanted NULL: whole; else as the hook filters it). */
static struct kp_kernel_base *plain(const char *path, const struct kp_symset *wanted)
{
	struct kp_kernel_base *b = NULL;
	struct kp_err err = { 0 };

	if (kp_base_new(&b) < 0)
		return NULL;
	if ((wanted ? kp_base_load_filtered(b, path, false, wanted, &err)
		    : kp_base_load_symvers(b, path, &err)) < 0) {
		printf("# %s\n", err.msg);
		kp_base_free(b);
		return NULL;
	}
	return b;
}

/* Through a new cache over @root: the base, and the cache's counts into @n. */
static struct kp_kernel_base *cached(const char *root, const char *path,
				     const struct kp_symset *wanted, struct kp_base_counts *n)
{
	struct kp_base_cache *c = kp_base_cache_new(root);
	struct kp_kernel_base *b = NULL;
	struct kp_err err = { 0 };

	if (!c || kp_base_new(&b) < 0 ||
	    kp_base_load_symvers_cached(b, NULL, path, c, wanted, &err) < 0) {
		printf("# %s\n", err.msg);
		kp_base_free(b);
		b = NULL;
	}
	kp_base_cache_counts(c, n);
	kp_base_cache_free(c);
	return b;
}

/* The loads after the first one, the same into either base: 0, or -1. */
static int more_loads(struct kp_kernel_base *b)
{
	static const char map[] = "ffffffff82000000 R __start___ksymtab\n"
				  "ffffffff82000000 r __ksymtab_msleep\n"
				  "ffffffff8200000c r __ksymtab_kp_only_in_map\n"
				  "ffffffff82000018 r __ksymtab_usb_register_driver\n"
				  "ffffffff82000024 R __stop___ksymtab\n";
	static const char sv2[] = "0x12345678\tmsleep\tvmlinux\tEXPORT_SYMBOL\t\n"
				  "0x1\tusb_register_driver\tdrivers/x/y\tEXPORT_SYMBOL_GPL\t\n"
				  "0x1\tusb_register_driver\tdrivers/x/y\tEXPORT_SYMBOL_GPL\t\n"
				  "0x2\tkp_new_sym\tdrivers/x/y\tEXPORT_SYMBOL\tNS_Q\n"
				  "0x3\tkp_only_in_map\tvmlinux\tEXPORT_SYMBOL_GPL\tNS_Q\n";
	struct kp_err err = { 0 };

	if (kp_base_load_vmlinux(b, tap_srcpath("tests/unit/kernel/data/fake-vmlinux-prel32"),
				 &err) < 0 ||
	    kp_base_load_system_map_buffer(b, "System.map", (const unsigned char *)map,
					   sizeof(map) - 1, &err) < 0 ||
	    kp_base_load_symvers_buffer(b, "second.symvers", (const unsigned char *)sv2,
					sizeof(sv2) - 1, &err) < 0) {
		printf("# %s\n", err.msg);
		return -1;
	}
	return 0;
}

/* The same answers from both bases: every name's chain, lookups, interning, counts. */
static bool same_answers(const struct kp_kernel_base *a, const struct kp_kernel_base *b, char *why,
			 size_t len)
{
	static const char *const absent[] = { "no_such_symbol_anywhere", "msleep_", "" };
	struct kp_base_stats sa, sb;

	kp_base_stats(a, &sa);
	kp_base_stats(b, &sb);
	if (sa.nsyms != sb.nsyms || sa.nvmlinux != sb.nvmlinux || sa.ngpl_only != sb.ngpl_only ||
	    sa.nnamespaced != sb.nnamespaced || sa.ncrc != sb.ncrc || sa.nmodule != sb.nmodule ||
	    sa.nconflicts != sb.nconflicts || !sa.first_conflict != !sb.first_conflict ||
	    (sa.first_conflict && strcmp(sa.first_conflict, sb.first_conflict))) {
		snprintf(why, len, "stats differ (%zu/%zu conflicts: %s / %s)", sa.nconflicts,
			 sb.nconflicts, sa.first_conflict ? sa.first_conflict : "-",
			 sb.first_conflict ? sb.first_conflict : "-");
		return false;
	}
	for (size_t i = 0; i < kp_base_count(a); i++) {
		const char *name = kp_base_at(a, i)->name;
		const struct kp_ksym *x = kp_base_lookup_owner(a, name, NULL);
		const struct kp_ksym *y = kp_base_lookup_owner(b, name, NULL);
		const struct kp_ksym *vx = kp_base_lookup(a, name), *vy = kp_base_lookup(b, name);
		const char *ia = kp_base_intern(a, name, strlen(name));

		for (; x && y; x = kp_base_next_same_name(a, x), y = kp_base_next_same_name(b, y))
			if (strcmp(x->owner, y->owner) || x->crc != y->crc ||
			    x->sources != y->sources)
				break;
		if (x || y || !vx != !vy ||
		    (vx && (vx->crc != vy->crc || vx->table != vy->table ||
			    vx->sources != vy->sources)) ||
		    !ia || strcmp(ia, name) || !kp_base_intern(b, name, strlen(name))) {
			snprintf(why, len, "%s: another chain, lookup or interning", name);
			return false;
		}
	}
	for (size_t i = 0; i < KP_ARRAY_SIZE(absent); i++)
		if (kp_base_lookup(b, absent[i]) ||
		    kp_base_intern(b, absent[i], strlen(absent[i]))) {
			snprintf(why, len, "'%s' found", absent[i]);
			return false;
		}
	if (!kp_base_module_owner(b, "usbcore") ||
	    strcmp(kp_base_module_owner(b, "usbcore"), kp_base_module_owner(a, "usbcore"))) {
		snprintf(why, len, "usbcore's owner differs");
		return false;
	}
	return true;
}

/*
 * A whole table taken as it lies (the cached base's first load), then more loads: what the
 * parsed base with the same loads answers, entry by entry and lookup by lookup.
 */
static void test_mixed(struct tap *t, const char *root, const char *sv)
{
	struct kp_kernel_base *want = plain(sv, NULL), *got;
	struct kp_base_counts n;
	char why[256] = "";
	const struct kp_ksym *k;

	got = cached(root, sv, NULL, &n);
	tap_ok(t, got && n.hits == 1, "mixed: the table from the cache (a hit)");
	tap_ok(t, want && got && more_loads(want) == 0 && more_loads(got) == 0,
	       "mixed: vmlinux, System.map and another Module.symvers loaded after it");
	tap_ok(t, want && got && same_base(got, want, why, sizeof(why)),
	       "mixed: the same entries in the same order as parsing (%s)", why);
	tap_ok(t, want && got && same_answers(want, got, why, sizeof(why)),
	       "mixed: the same chains, lookups, interning and counts (%s)", why);
	k = got ? kp_base_lookup(got, "msleep") : NULL;
	tap_ok(t, k && k->crc == 0xf9a482f9 && k->sources == (KP_SRC_SYMVERS | KP_SRC_SYSTEM_MAP),
	       "mixed: msleep keeps the table's CRC 0xf9a482f9, merged with System.map's label");
	k = got ? kp_base_lookup_owner(got, "usb_register_driver", NULL) : NULL;
	tap_ok(t,
	       k && !strcmp(k->owner, "drivers/usb/core/usbcore") &&
		       (k = kp_base_next_same_name(got, k)) && k->vmlinux &&
		       (k = kp_base_next_same_name(got, k)) && !strcmp(k->owner, "drivers/x/y") &&
		       !kp_base_next_same_name(got, k),
	       "mixed: usb_register_driver's chain: usbcore (the table), vmlinux (System.map), "
	       "drivers/x/y");
	k = got ? kp_base_lookup(got, "usb_register_driver") : NULL;
	tap_ok(t, k && k->vmlinux && k->sources == KP_SRC_SYSTEM_MAP,
	       "mixed: usb_register_driver's vmlinux entry is System.map's, after the table's");
	if (got && want) {
		struct kp_base_stats sw, sg;

		kp_base_stats(want, &sw);
		kp_base_stats(got, &sg);
		tap_ok(t, sg.nduplicates == sw.nduplicates && sg.nduplicates >= 1,
		       "mixed: %zu duplicates, as parsing", sg.nduplicates);
	}
	kp_base_free(want);
	kp_base_free(got);
}

/* An encoded table: its records (T_REC bytes each) after the header, then its slots. */
#define T_HEAD 28
#define T_REC  36

/* Stores the table's CRCs anew (slots, then records and strings): damage made to pass. */
static void fix_crcs(unsigned char *tab, size_t len)
{
	uint32_t nrec = kp_load32(tab + 8, false), nslots = kp_load32(tab + 12, false);
	size_t slots = T_HEAD + (size_t)nrec * T_REC, str = slots + (size_t)nslots * 4;

	kp_store32(tab + 20, kp_crc32(0, tab + slots, (size_t)nslots * 4));
	kp_store32(tab + 24,
		   kp_crc32(kp_crc32(0, tab + T_HEAD, (size_t)nrec * T_REC), tab + str, len - str));
}

/* Opens @tab (CRCs made to match) and checks its index: 0, or -1 refused. */
static int check_forged(unsigned char *tab, size_t len, uint64_t *repeats)
{
	struct kp_bsymtab bt;

	fix_crcs(tab, len);
	if (kp_bsymtab_open(&bt, tab, len) < 0 || kp_bsymtab_check_all(&bt) < 0)
		return -1;
	return kp_bsymtab_check_index(&bt, 4, repeats);
}

/* The slot (index) holding record @rec (index + 1), or -1. */
static long slot_of(const unsigned char *tab, uint32_t rec)
{
	uint32_t nrec = kp_load32(tab + 8, false), nslots = kp_load32(tab + 12, false);
	const unsigned char *s = tab + T_HEAD + (size_t)nrec * T_REC;

	for (uint32_t j = 0; j < nslots; j++)
		if (kp_load32(s + 4 * j, false) == rec)
			return j;
	return -1;
}

/*
 * The index of a table, forged with its CRCs made to match: a slot past the records, one
 * moved where its hash does not lead, two slots for one record, a record no slot or chain
 * reaches, a chain going back, a record's hash leading past its slot, a string offset past the
 * strings, an empty namespace, a name's records in two chains, a chain into another name:
 * each refused by kp_bsymtab_check_index(), which a whole load
 * runs before answering from the table.
 */
static void test_forged_index(struct tap *t)
{
	static const struct kp_bsym recs[] = {
		{ .name = "a_sym", .owner = "vmlinux", .vmlinux = true, .repeats = 2 },
		{ .name = "b_sym", .owner = "drivers/b/b", .ns = "NS_B", .ns_known = true },
		{ .name = "a_sym", .owner = "drivers/c/c", .table = 1, .gpl_only = true },
		{ .name = "d_sym", .owner = "vmlinux", .vmlinux = true, .repeats = 1 },
	};
	struct {
		const char *what;
		int kind;
	} forged[] = {
		{ "a slot past the records", 0 },
		{ "a slot moved after an empty slot its hash does not pass", 1 },
		{ "two slots for one record", 2 },
		{ "a record no slot reaches", 3 },
		{ "a chain going back (a loop)", 4 },
		{ "a record's hash leading past its slot", 5 },
		{ "a name's offset past the strings", 6 },
		{ "an empty namespace", 7 },
		{ "an unknown flag", 8 },
		{ "a name's chain split in two, both found from one hash", 9 },
		{ "a chain into another name", 10 },
	};
	unsigned char *tab = NULL, *copy;
	size_t len = 0;
	uint64_t repeats = 0;

	if (kp_bsymtab_encode(recs, KP_ARRAY_SIZE(recs), &tab, &len) < 0 || !(copy = malloc(len))) {
		tap_ok(t, 0, "forged: a table encoded");
		free(tab);
		return;
	}
	memcpy(copy, tab, len);
	tap_ok(t, check_forged(copy, len, &repeats) == 0 && repeats == 3,
	       "forged: the table as encoded passes, 3 repeats in all");
	for (size_t f = 0; f < KP_ARRAY_SIZE(forged); f++) {
		uint32_t nrec = kp_load32(tab + 8, false), nslots = kp_load32(tab + 12, false);
		unsigned char *r = copy + T_HEAD, *s = r + (size_t)nrec * T_REC;
		long a = slot_of(tab, 1), d = slot_of(tab, 4);
		uint32_t j;

		memcpy(copy, tab, len);
		switch (forged[f].kind) {
		case 0:
			kp_store32(s + 4 * a, nrec + 1);
			break;
		case 1: /* to the empty slot after the next empty one: a gap between */
			for (j = (uint32_t)(a + 1) % nslots; kp_load32(s + 4 * j, false);)
				j = (j + 1) % nslots;
			for (j = (j + 1) % nslots; kp_load32(s + 4 * j, false);)
				j = (j + 1) % nslots;
			memcpy(s + 4 * j, s + 4 * a, 4);
			memset(s + 4 * a, 0, 4);
			break;
		case 2:
			for (j = 0; kp_load32(s + 4 * j, false);)
				j++;
			memcpy(s + 4 * j, s + 4 * d, 4);
			break;
		case 3:
			memset(s + 4 * d, 0, 4);
			break;
		case 4: /* record 3 (a_sym's second) chained back to record 1 */
			kp_store32(r + 2 * T_REC + 16, 1);
			break;
		case 5: /* d_sym's hash now leads to the slot after its own */
			kp_store32(r + 3 * T_REC + 28,
				   (kp_load32(r + 3 * T_REC + 28, false) & ~(nslots - 1)) |
					   ((uint32_t)(d + 1) & (nslots - 1)));
			break;
		case 6:
			kp_store32(r + T_REC, kp_load32(tab + 16, false));
			break;
		case 7: /* b_sym's namespace at the strings' last byte, a NUL */
			kp_store32(r + T_REC + 8, kp_load32(tab + 16, false) - 1);
			break;
		case 8:
			r[25] |= 0x10;
			break;
		case 9: /* a_sym's second record (3) a first one too, in the slot after a_sym's */
			kp_store32(r + 16, 0);
			for (j = (uint32_t)(a + 1) % nslots; kp_load32(s + 4 * j, false);)
				j = (j + 1) % nslots;
			kp_store32(s + 4 * j, 3);
			break;
		case 10: /* a_sym's chain to d_sym (record 4), whose slot is emptied */
			kp_store32(r + 16, 4);
			kp_store32(r + 2 * T_REC + 16, 0);
			memset(s + 4 * d, 0, 4);
			break;
		}
		tap_ok(t, a >= 0 && d >= 0 && check_forged(copy, len, &repeats) < 0,
		       "forged index: %s: refused", forged[f].what);
	}
	free(copy);
	free(tab);
}

static void test_symvers(struct tap *t, const char *root, const char *sv)
{
	struct kp_kernel_base *want = plain(sv, NULL), *got;
	struct kp_symset wanted = { 0 };
	struct kp_kernel_base *want_f;
	struct kp_base_counts n;
	char why[256], entry[512];
	struct stat st;
	int wrong = 0, detected = 0, undetected = 0, flips = 0;

	tap_ok(t, want && kp_base_count(want) == 26772, "Module.symvers parses: 26772 exports");
	/* a filtered load as the hook makes it: names with several owners, one absent */
	kp_symset_add(&wanted, "module_layout");
	kp_symset_add(&wanted, "usb_register_driver");
	kp_symset_add(&wanted, "scsi_add_host_with_dma");
	kp_symset_add(&wanted, "no_such_symbol_anywhere");
	for (size_t i = 0; want && i < kp_base_count(want); i += 997)
		kp_symset_add(&wanted, kp_base_at(want, i)->name);
	want_f = plain(sv, &wanted);

	got = cached(root, sv, NULL, &n);
	tap_ok(t, got && want && same_base(got, want, why, sizeof(why)),
	       "miss: the same base as parsing%s%s", got ? "" : " (failed)", "");
	tap_ok(t, n.misses == 1 && n.stored == 1 && n.hits == 0, "miss: 1 miss, 1 stored");
	kp_base_free(got);
	tap_ok(t,
	       only_entry(root, entry, sizeof(entry)) && stat(entry, &st) == 0 &&
		       (st.st_mode & 0777) == 0644,
	       "one entry, mode 0644");

	got = cached(root, sv, NULL, &n);
	tap_ok(t, got && want && same_base(got, want, why, sizeof(why)),
	       "hit: the same base as parsing");
	tap_ok(t, n.hits == 1 && n.misses == 0 && n.stored == 0, "hit: 1 hit, nothing stored");
	kp_base_free(got);
	got = cached(root, sv, &wanted, &n);
	tap_ok(t, got && want_f && same_base(got, want_f, why, sizeof(why)),
	       "hit, filtered to %zu names: the same base as the hook's filtered parse (%zu "
	       "exports)",
	       wanted.n, want_f ? kp_base_count(want_f) : 0);
	tap_ok(t, n.hits == 1, "filtered: a hit");
	kp_base_free(got);

	/*
	 * a whole load (check, graph) checks the table by its one CRC of the records and strings
	 * (kp_bsymtab_check_all()) and the slots by theirs: every byte flipped anywhere in the
	 * entry (the header densely, then 64 spread over the tables) is a miss, never an answer
	 */
	for (off_t off = 0; off < st.st_size; off += off < 512 ? 7 : st.st_size / 64 + 1) {
		struct kp_base_counts m;

		if (flip(entry, off) < 0)
			break;
		got = cached(root, sv, NULL, &m);
		if (!got || !want || !same_base(got, want, why, sizeof(why))) {
			if (wrong++ < 3)
				printf("# byte %lld flipped: %s\n", (long long)off,
				       got ? why : "failed");
		}
		kp_base_free(got);
		flips++;
		if (m.hits) {
			if (undetected++ < 3)
				printf("# byte %lld flipped: a hit\n", (long long)off);
			flip(entry, off);
		} else if (!only_entry(root, entry, sizeof(entry))) {
			break;
		}
	}
	tap_is_int(t, wrong, 0, "whole loads of a damaged entry: wrong answers");
	tap_ok(t, undetected == 0 && flips > 100, "whole loads: every flipped byte detected (%d)",
	       flips);
	wrong = 0;

	/* bytes of the entry flipped one at a time (the header densely, then 64 spread over the
	 * tables): never a wrong answer */
	for (off_t off = 0; off < st.st_size; off += off < 512 ? 7 : st.st_size / 64 + 1) {
		struct kp_base_counts m;

		if (flip(entry, off) < 0)
			break;
		got = cached(root, sv, &wanted, &m);
		if (!got || !want_f || !same_base(got, want_f, why, sizeof(why))) {
			if (wrong++ < 3)
				printf("# byte %lld flipped: %s\n", (long long)off,
				       got ? why : "failed");
		}
		detected += m.hits == 0;
		kp_base_free(got);
		/* a detected one was removed and stored again: flip back only what is there */
		if (m.hits)
			flip(entry, off);
		else if (!only_entry(root, entry, sizeof(entry)))
			break;
	}
	tap_is_int(t, wrong, 0, "damaged entry (bytes flipped one at a time): wrong answers");
	tap_ok(t, detected > 10,
	       "damage in what the load reads is detected (%d times: parsed and stored again)",
	       detected);

	/* truncated: a miss, parsed, stored again */
	if (truncate(entry, st.st_size / 2) == 0) {
		got = cached(root, sv, NULL, &n);
		tap_ok(t,
		       got && same_base(got, want, why, sizeof(why)) && n.hits == 0 &&
			       n.rejected == 1,
		       "truncated entry: refused, the same base");
		kp_base_free(got);
	}
	/* an entry others may write is never believed (the trust rules of the facts cache) */
	unlink(entry);
	kp_base_free(cached(root, sv, NULL, &n));
	if (only_entry(root, entry, sizeof(entry)) && chmod(entry, 0664) == 0) {
		got = cached(root, sv, NULL, &n);
		tap_ok(t,
		       got && n.hits == 0 && n.rejected == 1 &&
			       same_base(got, want, why, sizeof(why)),
		       "group-writable entry: refused");
		kp_base_free(got);
		chmod(entry, 0644);
	}
	kp_base_free(want);
	kp_base_free(want_f);
	kp_symset_release(&wanted);
}

/* Rewrites @path with @data; its state changes (a new ctime). */
static int write_file(const char *path, const char *data)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(data, f);
	return fclose(f);
}

/*
 * A name exported by 20 owners in the table (more than the base walks before it builds its
 * (name, owner) index), then a load naming it again for old and new owners: the same entries,
 * duplicates and chain as parsing, from the miss's table and from the mapped one.
 */
static void test_many_owners(struct tap *t, const char *root)
{
	static const char more[] = "0x5\tshared\tdrivers/m/m7\tEXPORT_SYMBOL\t\n"
				   "0x6\tshared\tdrivers/n/new\tEXPORT_SYMBOL\t\n"
				   "0x7\tshared\tvmlinux\tEXPORT_SYMBOL\t\n"
				   "0x7\tshared\tvmlinux\tEXPORT_SYMBOL\t\n";
	char sv[256], why[256] = "", *text = NULL;
	size_t len = 0;
	FILE *f;

	at(sv, sizeof(sv), "many.symvers");
	f = open_memstream(&text, &len);
	if (!f)
		return;
	for (int i = 0; i < 20; i++)
		fprintf(f, "0x%x\tshared\tdrivers/m/m%d\tEXPORT_SYMBOL\t\n", i + 1, i);
	fprintf(f, "0x99\tother\tvmlinux\tEXPORT_SYMBOL_GPL\t\n");
	fclose(f);
	write_file(sv, text);
	free(text);
	for (int pass = 0; pass < 2; pass++) {
		struct kp_kernel_base *want = plain(sv, NULL), *got;
		struct kp_base_counts n;
		struct kp_err err = { 0 };
		const struct kp_ksym *x, *y;
		bool same = true;

		got = cached(root, sv, NULL, &n);
		if (got && want)
			same = kp_base_load_symvers_buffer(want, "more",
							   (const unsigned char *)more,
							   sizeof(more) - 1, &err) == 0 &&
			       kp_base_load_symvers_buffer(got, "more", (const unsigned char *)more,
							   sizeof(more) - 1, &err) == 0 &&
			       same_base(got, want, why, sizeof(why));
		x = want ? kp_base_lookup_owner(want, "shared", NULL) : NULL;
		y = got ? kp_base_lookup_owner(got, "shared", NULL) : NULL;
		for (; same && x && y;
		     x = kp_base_next_same_name(want, x), y = kp_base_next_same_name(got, y))
			same = !strcmp(x->owner, y->owner) && x->crc == y->crc;
		same = same && !x && !y && kp_base_lookup(got, "shared") &&
		       kp_base_lookup(got, "shared")->crc == 7 &&
		       kp_base_lookup_owner(got, "shared", "drivers/m/m7")->crc == 8;
		tap_ok(t, got && want && same && (pass ? n.hits == 1 : n.stored == 1),
		       "20 owners of one name, then more (%s): as parsing (%s)",
		       pass ? "mapped" : "the miss's table", why);
		kp_base_free(want);
		kp_base_free(got);
	}
}

static void test_inputs(struct tap *t, const char *root)
{
	char sv[256], why[256];
	struct kp_kernel_base *got, *want;
	struct kp_base_counts n;
	struct timespec ts[2];
	struct stat st;

	at(sv, sizeof(sv), "small.symvers");
	write_file(sv, "0x11111111\tfoo\tvmlinux\tEXPORT_SYMBOL\t\n"
		       "0x22222222\tbar\tdrivers/x/x\tEXPORT_SYMBOL_GPL\tNS_X\n");
	/* changed less than a second ago: known by its bytes, stored by them */
	got = cached(root, sv, NULL, &n);
	tap_ok(t, got && n.misses == 1 && n.stored == 1, "a file just written: parsed, stored");
	kp_base_free(got);
	got = cached(root, sv, NULL, &n);
	tap_ok(t, got && n.hits == 1, "the same bytes: a hit");
	kp_base_free(got);

	/* same size and times, other bytes, group-writable: known by content, a miss */
	stat(sv, &st);
	write_file(sv, "0x33333333\tfoo\tvmlinux\tEXPORT_SYMBOL\t\n"
		       "0x22222222\tbar\tdrivers/x/x\tEXPORT_SYMBOL_GPL\tNS_X\n");
	chmod(sv, 0664);
	ts[0] = st.st_atim;
	ts[1] = st.st_mtim;
	utimensat(AT_FDCWD, sv, ts, 0);
	want = plain(sv, NULL);
	got = cached(root, sv, NULL, &n);
	tap_ok(t, got && want && same_base(got, want, why, sizeof(why)) && n.hits == 0,
	       "untrusted input rewritten (same size and mtime): a miss, the new CRC");
	tap_ok(t,
	       got && kp_base_lookup(got, "foo") && kp_base_lookup(got, "foo")->crc == 0x33333333,
	       "foo's CRC is 0x33333333");
	kp_base_free(got);
	kp_base_free(want);

	/* a file that does not parse whole: the plain loader's message */
	write_file(sv, "0x11111111\tfoo\tvmlinux\tEXPORT_SYMBOL\t\nnot a line\n");
	{
		struct kp_base_cache *c = kp_base_cache_new(root);
		struct kp_kernel_base *b = NULL;
		struct kp_err err = { 0 };
		int r;

		kp_base_new(&b);
		r = kp_base_load_symvers_cached(b, NULL, sv, c, NULL, &err);
		tap_ok(t, r < 0 && strstr(err.msg, "small.symvers:2: 1 TAB-separated columns"),
		       "malformed: the parser's message (%s)", err.msg);
		kp_base_cache_counts(c, &n);
		tap_ok(t, n.stored == 0, "malformed: nothing stored");
		kp_base_free(b);
		kp_base_cache_free(c);
	}
	/* a line of 256 KiB or more: the hook's line reader refuses it, so does the cached load */
	{
		struct kp_base_cache *c = kp_base_cache_new(root);
		struct kp_kernel_base *b = NULL, *p = NULL;
		struct kp_err e1 = { 0 }, e2 = { 0 };
		struct kp_symset w = { 0 };
		size_t big = (size_t)300 << 10;
		char *line = malloc(big + 64);
		int r1 = -1, r2 = 0;

		if (line) {
			memset(line, 'a', big);
			snprintf(line + big, 64, "\tvmlinux\tEXPORT_SYMBOL\t\n");
			memcpy(line, "0x1\t", 4);
			write_file(sv, line);
			kp_symset_add(&w, "foo");
			kp_base_new(&b);
			kp_base_new(&p);
			r1 = kp_base_load_filtered(p, sv, false, &w, &e1);
			r2 = kp_base_load_symvers_cached(b, NULL, sv, c, &w, &e2);
		}
		tap_ok(t, r1 < 0 && r2 < 0 && !strcmp(e1.msg, e2.msg),
		       "a 300 KiB line: the same refusal with and without the cache (%s)", e2.msg);
		free(line);
		kp_symset_release(&w);
		kp_base_free(b);
		kp_base_free(p);
		kp_base_cache_free(c);
	}
	/* missing: the plain loader's ENOENT */
	at(sv, sizeof(sv), "absent.symvers");
	{
		struct kp_base_cache *c = kp_base_cache_new(root);
		struct kp_kernel_base *b = NULL;
		struct kp_err err = { 0 };

		kp_base_new(&b);
		tap_ok(t,
		       kp_base_load_symvers_cached(b, NULL, sv, c, NULL, &err) < 0 &&
			       kp_err_errnum(&err) == ENOENT,
		       "missing: ENOENT (%s)", err.msg);
		kp_base_free(b);
		kp_base_cache_free(c);
	}
}

/* Every symbol of @want has the same value in @got (or @got says it is damaged). */
static int config_diffs(const struct kp_kconfig *want, const struct kp_kconfig *got, bool *dmg)
{
	int d = 0;

	for (size_t i = 0; i < want->nentries; i++) {
		const char *a = kp_kconfig_get(want, want->entries[i].name);
		const char *b = kp_kconfig_get(got, want->entries[i].name);

		if (got->damaged && *got->damaged) {
			*dmg = true;
			return 0;
		}
		if ((a == NULL) != (b == NULL) || (a && strcmp(a, b)))
			d++;
	}
	if (kp_kconfig_get(got, "CONFIG_NOT_IN_ANY_KERNEL") ||
	    got->modversions != want->modversions || got->module_sig != want->module_sig ||
	    (got->version == NULL) != (want->version == NULL) ||
	    (got->version && strcmp(got->version, want->version)) ||
	    (got->arch && strcmp(got->arch, want->arch)))
		d++;
	return d;
}

static void test_kconfig(struct tap *t, const char *root, const char *cfg)
{
	struct kp_kconfig want = { 0 }, got = { 0 };
	struct kp_base_cache *c;
	struct kp_base_counts n;
	struct kp_err err = { 0 };
	char entry[512];
	struct stat st;
	int wrong = 0, detected = 0;
	bool dmg = false;

	kp_kconfig_load(&want, cfg, &err);
	tap_ok(t, want.known && want.nentries > 5000, "config parses (%zu symbols set)",
	       want.nentries);
	for (int pass = 0; pass < 2; pass++) {
		c = kp_base_cache_new(root);
		tap_ok(t, kp_kconfig_load_cached(&got, NULL, cfg, c, &err) == 0,
		       "config through the cache (%s)", pass ? "hit" : "miss");
		kp_base_cache_counts(c, &n);
		tap_ok(t, pass ? n.hits == 1 : n.misses == 1 && n.stored == 1, "%s counted",
		       pass ? "hit" : "miss, stored,");
		tap_is_int(t, config_diffs(&want, &got, &dmg), 0, "symbols with another value");
		tap_ok(t, got.known && !strcmp(got.path, cfg), "known, path kept");
		kp_kconfig_release(&got);
		kp_base_cache_free(c);
	}
	if (!only_entry(root, entry, sizeof(entry)) || stat(entry, &st) < 0) {
		tap_ok(t, 0, "config entry found");
		return;
	}
	for (off_t off = 0; off < st.st_size; off += off < 512 ? 7 : st.st_size / 64 + 1) {
		if (flip(entry, off) < 0)
			break;
		c = kp_base_cache_new(root);
		dmg = false;
		if (kp_kconfig_load_cached(&got, NULL, cfg, c, &err) < 0)
			wrong++;
		else if (config_diffs(&want, &got, &dmg))
			wrong++;
		kp_base_cache_counts(c, &n);
		detected += dmg || n.hits == 0;
		kp_kconfig_release(&got); /* a damaged entry found by a lookup is removed here */
		kp_base_cache_free(c);
		if (!only_entry(root, entry, sizeof(entry))) {
			/* removed: the next load stores it again */
			c = kp_base_cache_new(root);
			kp_kconfig_load_cached(&got, NULL, cfg, c, &err);
			kp_kconfig_release(&got);
			kp_base_cache_free(c);
			if (!only_entry(root, entry, sizeof(entry)))
				break;
		} else if (n.hits && !dmg) {
			flip(entry, off);
		}
	}
	tap_is_int(t, wrong, 0, "damaged config entry: symbols answered wrong without saying so");
	tap_ok(t, detected > 10, "damage detected (%d times)", detected);
	kp_kconfig_release(&want);
}

int main(void)
{
	struct tap t = { 0 };
	char root[256], root2[256], root3[256], sv[256], cfg[256];

	snprintf(top, sizeof(top), "/tmp/kp-base-XXXXXX");
	if (!mkdtemp(top) || chmod(top, 0755) < 0)
		return 1;
	at(root, sizeof(root), "cache");
	at(root2, sizeof(root2), "cache2");
	at(root3, sizeof(root3), "cache3");
	at(sv, sizeof(sv), "Module.symvers.gz");
	at(cfg, sizeof(cfg), "config.gz");
	if (copy_file(tap_srcpath("fixtures/ko/6.12/Module.symvers.gz"), sv) < 0 ||
	    copy_file(tap_srcpath("fixtures/ko/6.12/config.gz"), cfg) < 0) {
		printf("Bail out! cannot copy the 6.12 fixtures\n");
		return 1;
	}
	/* a state is trusted once it is a second old: both files are known by their state */
	sleep(2);
	test_symvers(&t, root, sv);
	test_mixed(&t, root, sv);
	test_forged_index(&t);
	test_kconfig(&t, root2, cfg);
	test_many_owners(&t, root3);
	test_inputs(&t, root3);
	{
		uint64_t removed = 0;
		struct kp_err err = { 0 };
		char cmd[300];

		int r = kp_base_cache_clear(root3, &removed, &err);
		struct stat st;

		tap_ok(&t,
		       r == 0 && removed >= 2 && stat(root3, &st) == 0 &&
			       stat(strcat(root3, "/" KP_BASE_CACHE_DIR), &st) < 0,
		       "clear removes the entries (%llu) and their directory",
		       (unsigned long long)removed);
		snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", top);
	}
	return tap_done(&t);
}
