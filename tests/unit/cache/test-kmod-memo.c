// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libkmod's answers kept for the hook (cache/kmod-memo.h): an answer stored by one run comes
 * back to the next whole (its code, its strings, a NULL among them) while every input is in
 * the same state; a modprobe.d file written, any file added there, an index appearing,
 * another question, a group-writable memo file, another libkmod (its file's state) give
 * nothing; every byte of the memo file flipped
 * and every truncation is refused or (a flip the format cannot see, none expected) gives the same
 * answer, never another one.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/kmod-memo.h"
#include "cache/memo-file.h"
#include "cache/trusted-dir.h"
#include "tap.h"

static char top[64], moddir[128], conf[128], cache[128], lib[128];

static void write_file(const char *dir, const char *name, const char *text)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* The one memo file of the cache directory, read whole into @buf (at most @size). */
static size_t read_memo(char *path, size_t plen, unsigned char *buf, size_t size)
{
	char cmd[256];
	size_t n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ls %s/sigs/kmod/kmod-*.memo 2>/dev/null | head -1", cache);
	p = popen(cmd, "r");
	path[0] = '\0';
	if (p) {
		if (!fgets(path, (int)plen, p))
			path[0] = '\0';
		pclose(p);
	}
	path[strcspn(path, "\n")] = '\0';
	if (path[0]) {
		FILE *f = fopen(path, "rb");

		if (f) {
			n = fread(buf, 1, size, f);
			fclose(f);
		}
	}
	return n;
}

static void put_file(const char *path, const unsigned char *buf, size_t len)
{
	FILE *f;

	unlink(path);
	f = fopen(path, "wb");
	if (f) {
		fwrite(buf, 1, len, f);
		fclose(f);
	}
	chmod(path, 0644);
}

static void le32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/*
 * @good (@len bytes, a memo file) with one more record, well formed ('S' "big", code 0, @k
 * strings of 100 bytes), its count and CRC made again, as @path. Its length.
 */
static size_t put_with_record(const char *path, const unsigned char *good, size_t len, size_t k)
{
	size_t n = len + 1 + 8 + 4 + 4 + k * 105, off = len;
	unsigned char *buf = malloc(n);
	uint32_t count;

	if (!buf)
		return 0;
	memcpy(buf, good, len);
	buf[off++] = 'S';
	le32(buf + off, 3);
	memcpy(buf + off + 4, "big", 4);
	off += 8;
	le32(buf + off, 0);
	le32(buf + off + 4, (uint32_t)k);
	off += 8;
	for (size_t i = 0; i < k; i++, off += 105) {
		le32(buf + off, 100);
		memset(buf + off + 4, 'x', 100);
		buf[off + 104] = '\0';
	}
	count = (uint32_t)good[8] | (uint32_t)good[9] << 8 | (uint32_t)good[10] << 16 |
		(uint32_t)good[11] << 24;
	le32(buf + 8, count + 1);
	le32(buf + 12, kp_memo_crc(buf + KP_MEMO_HEADER_LEN, n - KP_MEMO_HEADER_LEN));
	put_file(path, buf, n);
	free(buf);
	return n;
}

/* 1: the answer of a fresh run is the one stored; 0: nothing; -1: another answer. */
static int lookup(int dfd, const char *question)
{
	const char *const paths[] = { conf, NULL };
	struct kp_kmod_memo *m = kp_kmod_memo_new(dfd, question);
	struct kp_kmod_answer a;
	int r = 0;

	if (m && kp_kmod_memo_bind(m, moddir, paths) && kp_kmod_memo_get(m, 'R', "uas", &a)) {
		r = a.code == -2 && a.n == 3 && a.s[0] && !strcmp(a.s[0], "usb_storage") &&
				    !a.s[1] && a.s[2] && !strcmp(a.s[2], "")
			    ? 1
			    : -1;
	}
	kp_kmod_memo_free(m);
	return r;
}

int main(void)
{
	const char *const paths[] = { conf, NULL };
	const char *const strs[] = { "usb_storage", NULL, "" };
	static unsigned char good[1 << 16], bad[1 << 16];
	struct tap t = { 0 };
	struct kp_kmod_memo_counts n;
	struct kp_kmod_memo *m;
	struct kp_kmod_answer a;
	bool other = false, flips_ok = true, cuts_ok = true;
	char path[256];
	size_t len, big;
	int dfd;

	snprintf(top, sizeof(top), "/tmp/kp-kmod-memo-XXXXXX");
	if (!mkdtemp(top)) {
		printf("1..0 # SKIP no temporary directory\n");
		return 0;
	}
	snprintf(moddir, sizeof(moddir), "%s/mod", top);
	snprintf(conf, sizeof(conf), "%s/modprobe.d", top);
	snprintf(cache, sizeof(cache), "%s/cache", top);
	snprintf(lib, sizeof(lib), "%s/libkmod.so.2", top);
	mkdir(moddir, 0755);
	mkdir(conf, 0755);
	mkdir(cache, 0755);
	write_file(moddir, "modules.dep.bin", "not read here: only its state");
	write_file(moddir, "modules.alias.bin", "alias");
	write_file(conf, "a.conf", "blacklist pcspkr\n");
	write_file(conf, "ignored.txt", "not a name libkmod reads\n");
	write_file(top, "libkmod.so.2", "the libkmod that answered");
	sleep(2); /* settled (fs-trust.h): changed at least a second before the run */
	dfd = kp_trusted_dir_open(cache, false, NULL);
	tap_ok(&t, dfd >= 0, "a trusted cache directory");
	if (dfd < 0)
		return tap_done(&t);

	m = kp_kmod_memo_new(dfd, "uas");
	tap_ok(&t, m && kp_kmod_memo_bind(m, moddir, paths), "bound: every input trusted, settled");
	tap_ok(&t, !kp_kmod_memo_get(m, 'R', "uas", &a), "cold: nothing known");
	kp_kmod_memo_put(m, 'R', "uas", -2, 3, strs);
	kp_kmod_memo_library(m, lib);
	tap_ok(&t, kp_kmod_memo_get(m, 'R', "uas", &a) && a.code == -2 && a.n == 3,
	       "this run's answer");
	tap_ok(&t, !kp_kmod_memo_get(m, 'S', "uas", &a), "... another type of question: nothing");
	tap_ok(&t, kp_kmod_memo_bind(m, moddir, paths), "bound again with the same directories");
	kp_kmod_memo_free(m); /* stored */
	tap_is_intf(&t, lookup(dfd, "uas"), 1,
		    "the next run: the answer whole (code, a NULL, \"\")");
	tap_is_intf(&t, lookup(dfd, "nfs"), 0, "another question: nothing");

	m = kp_kmod_memo_new(dfd, "uas");
	kp_kmod_memo_bind(m, moddir, paths);
	kp_kmod_memo_counts(m, &n);
	tap_ok(&t, n.refused == 0, "the stored file believed (none refused)");
	{
		const char *const others[] = { moddir, NULL };

		tap_ok(&t,
		       !kp_kmod_memo_bind(m, moddir, others) &&
			       !kp_kmod_memo_get(m, 'R', "uas", &a),
		       "bound with other directories: unbound for good");
	}
	kp_kmod_memo_free(m);

	len = read_memo(path, sizeof(path), good, sizeof(good));
	tap_ok(&t, len > 16 && len < sizeof(good), "one memo file (%zu bytes)", len);
	for (size_t i = 0; i < len; i++) {
		for (unsigned bit = 0; bit < 8; bit += 3) {
			int r;

			memcpy(bad, good, len);
			bad[i] ^= (unsigned char)(1u << bit);
			put_file(path, bad, len);
			r = lookup(dfd, "uas");
			flips_ok &= r >= 0;
			other |= r < 0;
		}
	}
	tap_ok(&t, flips_ok && !other, "every byte flipped: refused, never another answer");
	for (size_t cut = 0; cut < len; cut++) {
		put_file(path, good, cut);
		cuts_ok &= lookup(dfd, "uas") == 0;
	}
	tap_ok(&t, cuts_ok, "every truncation refused");
	put_file(path, good, len);
	tap_is_intf(&t, lookup(dfd, "uas"), 1, "the good file again: believed");
	big = put_with_record(path, good, len, 100);
	tap_is_intf(&t, lookup(dfd, "uas"), 1, "one more record, well formed (%zu bytes): believed",
		    big);
	big = put_with_record(path, good, len, 10000);
	tap_is_intf(&t, lookup(dfd, "uas"), 0,
		    "... with 10,000 strings, over 1 MiB (%zu bytes): not read (a hook's are KiB)",
		    big);
	put_file(path, good, len);
	chmod(path, 0664);
	tap_is_intf(&t, lookup(dfd, "uas"), 0, "group-writable: not believed");
	chmod(path, 0644);

	/* inputs changed: each a miss */
	write_file(conf, "ignored.txt", "a name libkmod does not read, written\n");
	tap_is_intf(&t, lookup(dfd, "uas"), 1,
		    "a file libkmod does not read written: every state the key holds the same");
	write_file(conf, "other.txt", "a name libkmod does not read, added\n");
	tap_is_intf(&t, lookup(dfd, "uas"), 0,
		    "... one added: the directory's state moved (and is not settled): a miss");
	write_file(conf, "a.conf", "blacklist pcspkr\nblacklist uas\n");
	sleep(2);
	tap_is_intf(&t, lookup(dfd, "uas"), 0, "a modprobe.d file written: a miss");
	m = kp_kmod_memo_new(dfd, "uas");
	kp_kmod_memo_bind(m, moddir, paths);
	kp_kmod_memo_put(m, 'R', "uas", -2, 3, strs);
	kp_kmod_memo_library(m, lib);
	kp_kmod_memo_free(m);
	tap_is_intf(&t, lookup(dfd, "uas"), 1, "... stored again");
	write_file(conf, "b.alias", "alias x uas\n");
	sleep(2);
	tap_is_intf(&t, lookup(dfd, "uas"), 0, "a *.alias file added: a miss");
	m = kp_kmod_memo_new(dfd, "uas");
	kp_kmod_memo_bind(m, moddir, paths);
	kp_kmod_memo_put(m, 'R', "uas", -2, 3, strs);
	kp_kmod_memo_library(m, lib);
	kp_kmod_memo_free(m);
	write_file(moddir, "modules.symbols.bin", "new");
	sleep(2);
	tap_is_intf(&t, lookup(dfd, "uas"), 0, "an index that was absent now present: a miss");
	m = kp_kmod_memo_new(dfd, "uas");
	kp_kmod_memo_bind(m, moddir, paths);
	kp_kmod_memo_put(m, 'R', "uas", -2, 3, strs);
	kp_kmod_memo_free(m);
	tap_is_intf(&t, lookup(dfd, "uas"), 0,
		    "answers stored without the libkmod that gave them: none");
	m = kp_kmod_memo_new(dfd, "uas");
	kp_kmod_memo_bind(m, moddir, paths);
	kp_kmod_memo_put(m, 'R', "uas", -2, 3, strs);
	kp_kmod_memo_library(m, lib);
	kp_kmod_memo_free(m);
	tap_is_intf(&t, lookup(dfd, "uas"), 1, "... with it: replayed");
	write_file(top, "libkmod.so.2", "an upgraded libkmod");
	sleep(2);
	tap_is_intf(&t, lookup(dfd, "uas"), 0,
		    "libkmod's file replaced (an upgrade): none replayed");
	{
		char cmd[200];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
		tap_ok(&t, system(cmd) == 0, "cleaned up");
	}
	close(dfd);
	return tap_done(&t);
}
