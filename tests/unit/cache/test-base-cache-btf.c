// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The kernel's vmlinux BTF through the base cache (lib/kernel/vmlinux-btf-cached.c; real
 * input: fixtures/ko/6.12/btf/vmlinux.btf.xz, and the same uncompressed): a miss stores the
 * types index, a hit gives the same index as parsing (compared whole); the hook's
 * kp_vmlinux_btf_load_cached() maps raw BTF where it lies and holds xz BTF as a checked copy;
 * a file whose state is not trusted is parsed, never stored; bytes read from another file
 * than the key's are never stored under it; every damaged entry is refused, never a wrong BTF.
 * Runs as any user: the cache and inputs are the test's own, in a fresh directory of /tmp.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base-cache-fixture.h"
#include "cache/base-cache.h"
#include "kernel/kernel-facts.h"
#include "kernel/vmlinux-btf-cached.h"
#include "kernel/vmlinux-btf.h"
#include "read/btf.h"
#include "tap.h"

/* Facts of the 6.12 fixtures' kernel (its config: DEBUG_INFO_BTF_MODULES), without BTF yet. */
static int btf_facts(struct kp_kernel_facts *f, const char *cfg)
{
	struct kp_facts_opts o;
	struct kp_err err = { 0 };

	kp_facts_opts_init(&o);
	o.config_path = cfg;
	o.release = "6.12.118+deb12-amd64";
	if (kp_facts_build(f, &o, NULL, &err) < 0 || !f->btf_modules) {
		printf("# %s\n", err.msg);
		return -1;
	}
	return 0;
}

static bool same_btf(const struct kp_btf *a, const struct kp_btf *b)
{
	return a && b && a->size == b->size && a->nr_types == b->nr_types && a->swap == b->swap &&
	       a->hdr_len == b->hdr_len && a->type_off == b->type_off &&
	       a->type_len == b->type_len && a->str_off == b->str_off && a->str_len == b->str_len &&
	       a->strings - (const char *)a->data == b->strings - (const char *)b->data &&
	       !memcmp(a->types, b->types, (size_t)a->nr_types * 4);
}

/* Writes @len bytes of @data to @path (0644). */
static int write_bytes(const char *path, const unsigned char *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	int r = f && fwrite(data, 1, len, f) == len ? 0 : -1;

	if (f && fclose(f) != 0)
		r = -1;
	return r < 0 ? -1 : chmod(path, 0644);
}

/*
 * kp_vmlinux_btf_load_cached(): the hook's BTF without reading it. @raw: the same BTF as
 * @xz, uncompressed (mapped where it lies on a hit); @xz: held as a copy in the entry.
 */
static void test_btf_load(struct tap *t, const char *root, const char *cfg, const char *raw,
			  const char *xz, const struct kp_kernel_facts *want)
{
	const char *files[2] = { raw, xz };

	for (int i = 0; i < 2; i++) {
		struct kp_kernel_facts got = { 0 };
		struct kp_vmlinux_btf out = { 0 };
		struct kp_err err = { 0 };
		struct kp_base_counts n;
		struct kp_base_cache *c;
		char entry[512], cmd[600];
		struct stat st;
		int wrong = 0, detected = 0, r;

		snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
		if (system(cmd) != 0)
			return;
		for (int pass = 0; pass < 2; pass++) {
			c = kp_base_cache_new(root);
			btf_facts(&got, cfg);
			r = kp_vmlinux_btf_load_cached(&got, files[i], c, NULL, &out, &err);
			kp_base_cache_counts(c, &n);
			tap_ok(t,
			       r == 0 && same_btf(got.vmlinux_btf, want->vmlinux_btf) &&
				       (pass ? n.hits == 1 && n.misses == 0
					     : n.misses == 1 && n.stored == 1),
			       "%s BTF loaded through the cache, %s: the same BTF as parsing (%d, "
			       "%s; hits %zu, misses %zu, stored %zu, rejected %zu)",
			       i ? "xz" : "raw", pass ? "hit" : "miss, stored", r, err.msg,
			       (size_t)n.hits, (size_t)n.misses, (size_t)n.stored,
			       (size_t)n.rejected);
			if (pass && !i)
				tap_ok(t,
				       out.map && got.vmlinux_btf &&
					       got.vmlinux_btf->data == out.data,
				       "raw BTF, hit: mapped where it lies, not read");
			else if (pass)
				tap_ok(t,
				       !out.data && got.vmlinux_btf &&
					       got.vmlinux_btf->data > got.vmlinux_btf_map.data &&
					       got.vmlinux_btf->data + got.vmlinux_btf->size ==
						       got.vmlinux_btf_map.data +
							       got.vmlinux_btf_map.len,
				       "xz BTF, hit: the entry's checked copy, nothing read");
			else
				tap_ok(t, !out.map && out.data, "... miss: read");
			kp_facts_release(&got);
			kp_vmlinux_btf_release(&out);
			kp_base_cache_free(c);
		}
		if (!only_entry(root, entry, sizeof(entry)) || stat(entry, &st) < 0) {
			tap_ok(t, 0, "one entry");
			continue;
		}
		tap_ok(t, i ? st.st_size > 4000000 : st.st_size < 1000000,
		       "%s BTF: the entry %s the BTF's bytes (%lld bytes)", i ? "xz" : "raw",
		       i ? "holds" : "does not hold", (long long)st.st_size);
		/* damage anywhere (the copy included): refused, parsed again, never a wrong BTF */
		for (off_t off = 0; off < st.st_size; off += off < 512 ? 31 : st.st_size / 23 + 1) {
			if (flip(entry, off) < 0)
				break;
			c = kp_base_cache_new(root);
			btf_facts(&got, cfg);
			r = kp_vmlinux_btf_load_cached(&got, files[i], c, NULL, &out, &err);
			kp_base_cache_counts(c, &n);
			wrong += r != 0 || !same_btf(got.vmlinux_btf, want->vmlinux_btf) ||
				 memcmp(got.vmlinux_btf->data, want->vmlinux_btf->data,
					want->vmlinux_btf->size);
			detected += n.hits == 0;
			kp_facts_release(&got);
			kp_vmlinux_btf_release(&out);
			kp_base_cache_free(c);
			if (n.hits)
				flip(entry, off);
			else if (!only_entry(root, entry, sizeof(entry)))
				break;
		}
		tap_ok(t, wrong == 0, "%s BTF: damaged entries: no wrong BTF used (%d)",
		       i ? "xz" : "raw", wrong);
		tap_ok(t, detected > 10, "... damage detected (%d times)", detected);
	}
}

/*
 * BTF bytes that were not read from the file the key is made from (a directory on the way
 * swapped between the read and the key's open): parsed, never stored under that file's key.
 */
static void test_btf_read_from(struct tap *t, const char *root, const char *cfg, const char *btf,
			       const struct kp_kernel_facts *want)
{
	struct kp_kernel_facts got = { 0 };
	struct kp_vmlinux_btf data = { 0 }, other, fresh;
	struct kp_err err = { 0 };
	struct kp_base_counts n;
	struct kp_base_cache *c;
	char dir[300];

	snprintf(dir, sizeof(dir), "%s-read-from", root);
	if (kp_vmlinux_btf_read(btf, &data, &err) < 0) {
		tap_ok(t, 0, "the 6.12 vmlinux BTF read again (%s)", err.msg);
		return;
	}
	tap_ok(t, data.src.st_mode != 0, "the BTF read says the state of the file it read");
	other = data;
	other.src.st_ino ^= 1;
	for (int pass = 0; pass < 2; pass++) {
		c = kp_base_cache_new(dir);
		btf_facts(&got, cfg);
		kp_facts_vmlinux_btf_cached(&got, pass ? &data : &other, btf, c, NULL);
		kp_base_cache_counts(c, &n);
		tap_ok(t,
		       same_btf(got.vmlinux_btf, want->vmlinux_btf) && n.misses == 1 &&
			       n.stored == (uint64_t)pass,
		       "vmlinux BTF read from %s: parsed, %s",
		       pass ? "the keyed file" : "another file",
		       pass ? "stored" : "not stored under the keyed file's state");
		kp_facts_release(&got);
		kp_base_cache_free(c);
	}
	/*
	 * The same file and state, but read starting half a second after the state's change (a
	 * write in the same tick during the read would have left it): the entry stored above is
	 * not used for these bytes, and nothing is stored (kp_state_settled())
	 */
	fresh = data;
	fresh.read_at = data.src.st_ctim;
	fresh.read_at.tv_nsec += 500000000;
	if (fresh.read_at.tv_nsec >= 1000000000) {
		fresh.read_at.tv_sec++;
		fresh.read_at.tv_nsec -= 1000000000;
	}
	c = kp_base_cache_new(dir);
	btf_facts(&got, cfg);
	kp_facts_vmlinux_btf_cached(&got, &fresh, btf, c, NULL);
	kp_base_cache_counts(c, &n);
	tap_ok(t,
	       same_btf(got.vmlinux_btf, want->vmlinux_btf) && n.hits == 0 && n.misses == 1 &&
		       n.stored == 0,
	       "vmlinux BTF read within a second of its state's change: parsed, entry not used, "
	       "not stored");
	kp_facts_release(&got);
	kp_base_cache_free(c);
	kp_vmlinux_btf_release(&data);
}

static void test_btf(struct tap *t, const char *root, const char *cfg, const char *btf,
		     const char *raw, const char *load_root)
{
	struct kp_kernel_facts want = { 0 }, got = { 0 };
	struct kp_vmlinux_btf data = { 0 };
	struct kp_err err = { 0 };
	struct kp_base_counts n;
	struct kp_base_cache *c;
	char entry[512];
	struct stat st;
	int wrong = 0, detected = 0;

	if (kp_vmlinux_btf_read(btf, &data, &err) < 0 || btf_facts(&want, cfg) < 0 ||
	    kp_facts_vmlinux_btf(&want, data.data, data.len, btf, NULL) < 0 || !want.vmlinux_btf) {
		tap_ok(t, 0, "the 6.12 vmlinux BTF parses (%s)", err.msg);
		return;
	}
	for (int pass = 0; pass < 2; pass++) {
		c = kp_base_cache_new(root);
		btf_facts(&got, cfg);
		kp_facts_vmlinux_btf_cached(&got, &data, btf, c, NULL);
		kp_base_cache_counts(c, &n);
		tap_ok(t,
		       same_btf(got.vmlinux_btf, want.vmlinux_btf) &&
			       (pass ? n.hits == 1 : n.misses == 1 && n.stored == 1),
		       "vmlinux BTF (%u types) through the cache, %s: the same index as parsing",
		       want.vmlinux_btf->nr_types, pass ? "hit" : "miss, stored");
		tap_ok(t, pass == 0 || got.vmlinux_btf->types != want.vmlinux_btf->types, "... %s",
		       pass ? "the index from the entry, not parsed" : "parsed");
		kp_facts_release(&got);
		kp_base_cache_free(c);
	}
	if (only_entry(root, entry, sizeof(entry)) && stat(entry, &st) == 0) {
		for (off_t off = 0; off < st.st_size; off += off < 512 ? 7 : st.st_size / 64 + 1) {
			if (flip(entry, off) < 0)
				break;
			c = kp_base_cache_new(root);
			btf_facts(&got, cfg);
			kp_facts_vmlinux_btf_cached(&got, &data, btf, c, NULL);
			kp_base_cache_counts(c, &n);
			wrong += !same_btf(got.vmlinux_btf, want.vmlinux_btf);
			detected += n.hits == 0;
			kp_facts_release(&got);
			kp_base_cache_free(c);
			if (n.hits)
				flip(entry, off);
			else if (!only_entry(root, entry, sizeof(entry)))
				break;
		}
		tap_is_int(t, wrong, 0, "damaged BTF index entry: wrong indexes");
		tap_ok(t, detected > 10, "damage detected (%d times)", detected);
	}
	/* a BTF file whose state is not trusted: parsed every time, never stored */
	chmod(btf, 0664);
	c = kp_base_cache_new(root);
	btf_facts(&got, cfg);
	kp_facts_vmlinux_btf_cached(&got, &data, btf, c, NULL);
	kp_base_cache_counts(c, &n);
	tap_ok(t, same_btf(got.vmlinux_btf, want.vmlinux_btf) && n.hits == 0 && n.stored == 0,
	       "group-writable BTF file: parsed, not cached");
	kp_facts_release(&got);
	kp_base_cache_free(c);
	chmod(btf, 0644);
	/* the chmod()s moved its change time: trusted again (settled) only a second later */
	sleep(2);
	test_btf_read_from(t, root, cfg, btf, &want);
	if (raw)
		test_btf_load(t, load_root, cfg, raw, btf, &want);
	kp_facts_release(&want);
	kp_vmlinux_btf_release(&data);
}

int main(void)
{
	struct tap t = { 0 };
	char top[64], root[256], root2[256], cfg[256], btf[256], raw[256], cmd[300];
	struct kp_vmlinux_btf rawbtf = { 0 };
	struct kp_err rerr = { 0 };

	snprintf(top, sizeof(top), "/tmp/kp-base-btf-XXXXXX");
	if (!mkdtemp(top) || chmod(top, 0755) < 0)
		return 1;
	snprintf(root, sizeof(root), "%s/cache4", top);
	snprintf(root2, sizeof(root2), "%s/cache5", top);
	snprintf(cfg, sizeof(cfg), "%s/config.gz", top);
	snprintf(btf, sizeof(btf), "%s/vmlinux.btf.xz", top);
	snprintf(raw, sizeof(raw), "%s/vmlinux.btf", top);
	if (copy_file(tap_srcpath("fixtures/ko/6.12/config.gz"), cfg) < 0 ||
	    copy_file(tap_srcpath("fixtures/ko/6.12/btf/vmlinux.btf.xz"), btf) < 0) {
		printf("Bail out! cannot copy the 6.12 fixtures\n");
		return 1;
	}
	if (kp_vmlinux_btf_read(btf, &rawbtf, &rerr) < 0 ||
	    write_bytes(raw, rawbtf.data, rawbtf.len) < 0) {
		printf("Bail out! cannot write the raw BTF: %s\n", rerr.msg);
		return 1;
	}
	kp_vmlinux_btf_release(&rawbtf);
	/* a state is trusted once it is a second old: both files are known by their state */
	sleep(2);
	test_btf(&t, root, cfg, btf, raw, root2);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", top);
	return tap_done(&t);
}
