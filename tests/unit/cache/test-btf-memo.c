// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The module BTF verdicts kept beside the facts (cache/btf-memo.h): a verdict stored by one
 * run is found by the next under the same scope only; its errno and reason come back as
 * stored; a damaged file, a file another user owns and a scope that differs give nothing
 * (the modules are checked again); the oldest scopes beyond 8 are removed.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/btf-memo.h"
#include "cache/trusted-dir.h"
#include "read/btf.h"
#include "tap.h"

static char dir[64];

/* The path of the file of @scope. */
static void path_of(const unsigned char *scope, char *out, size_t len)
{
	int at = snprintf(out, len, "%s/sigs/btf-", dir);

	for (int i = 0; i < 32; i++)
		at += snprintf(out + at, len - (size_t)at, "%02x", scope[i]);
	snprintf(out + at, len - (size_t)at, ".memo");
}

static int count_files(void)
{
	char cmd[256];
	int n = -1;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ls %s/sigs/btf-*.memo 2>/dev/null | wc -l", dir);
	p = popen(cmd, "r");
	if (p) {
		if (fscanf(p, "%d", &n) != 1)
			n = -1;
		pclose(p);
	}
	return n;
}

int main(void)
{
	struct tap t = { 0 };
	unsigned char scope[32], other[32], good[32], bad[32], unknown[32];
	struct kp_btf_verdict v = { 0 }, ok = { 0 }, mismatch = { .err = -22 };
	struct kp_btf_memo_counts n;
	struct kp_btf_memo *m;
	char file[200];
	int dfd;

	memset(scope, 0x11, sizeof(scope));
	memset(other, 0x12, sizeof(other));
	memset(good, 0xa1, sizeof(good));
	memset(bad, 0xa2, sizeof(bad));
	memset(unknown, 0xa3, sizeof(unknown));
	snprintf(mismatch.why, sizeof(mismatch.why), "[%u] STRUCT veth_priv Invalid member", 7u);
	snprintf(dir, sizeof(dir), "/tmp/kp-btf-memo-XXXXXX");
	if (!mkdtemp(dir)) {
		printf("1..0 # SKIP no temporary directory\n");
		return 0;
	}
	dfd = kp_trusted_dir_open(dir, false, NULL);
	tap_ok(&t, dfd >= 0, "a trusted directory");
	if (dfd < 0)
		return tap_done(&t);

	m = kp_btf_memo_new(dfd, scope);
	tap_ok(&t, m && kp_btf_memo_get(m, good, &v) < 0, "cold: nothing known");
	kp_btf_memo_put(m, good, &ok);
	kp_btf_memo_put(m, bad, &mismatch);
	v.err = 5;
	tap_ok(&t, kp_btf_memo_get(m, good, &v) == 0 && v.err == 0 && !v.why[0],
	       "this run's verdict: validates");
	kp_btf_memo_counts(m, &n);
	tap_ok(&t, n.checked == 2 && n.hits == 1, "counted: 2 checked, 1 from the memo");
	kp_btf_memo_free(m);
	path_of(scope, file, sizeof(file));
	tap_ok(&t, access(file, F_OK) == 0, "written as sigs/btf-<scope>.memo");

	m = kp_btf_memo_new(dfd, scope);
	memset(&v, 0, sizeof(v));
	tap_ok(&t,
	       kp_btf_memo_get(m, bad, &v) == 0 && v.err == -22 &&
		       !strcmp(v.why, "[7] STRUCT veth_priv Invalid member"),
	       "the next run: the mismatch's errno and reason as stored");
	tap_ok(&t, kp_btf_memo_get(m, good, &v) == 0 && v.err == 0 && !v.why[0],
	       "the next run: the module that validates");
	tap_ok(&t, kp_btf_memo_get(m, unknown, &v) < 0, "another module's BTF: unknown");
	kp_btf_memo_free(m);

	m = kp_btf_memo_new(dfd, other);
	tap_ok(&t, m && kp_btf_memo_get(m, good, &v) < 0 && !kp_btf_memo_has_scope(m, scope),
	       "another kernel BTF or rules (another scope): nothing known");
	kp_btf_memo_free(m);

	/* a damaged file: ignored whole */
	{
		int fd = open(file, O_WRONLY);
		unsigned char x = 0xff;

		tap_ok(&t, fd >= 0 && pwrite(fd, &x, 1, 40) == 1, "a byte of the file changed");
		if (fd >= 0)
			close(fd);
		m = kp_btf_memo_new(dfd, scope);
		tap_ok(&t, kp_btf_memo_get(m, bad, &v) < 0 && kp_btf_memo_get(m, good, &v) < 0,
		       "a file whose CRC does not match is ignored");
		kp_btf_memo_put(m, good, &ok);
		kp_btf_memo_free(m);
		m = kp_btf_memo_new(dfd, scope);
		tap_ok(&t, kp_btf_memo_get(m, good, &v) == 0 && kp_btf_memo_get(m, bad, &v) < 0,
		       "the next run rewrites it with what it checked");
		kp_btf_memo_free(m);
	}

	/* a file someone else owns is not believed (root only: chown) */
	if (geteuid() == 0) {
		tap_ok(&t, chown(file, 65534, 65534) == 0, "the file given to nobody");
		m = kp_btf_memo_new(dfd, scope);
		tap_ok(&t, kp_btf_memo_get(m, good, &v) < 0, "a file another user owns: ignored");
		kp_btf_memo_free(m);
	} else {
		tap_ok(&t, 1, "the file given to nobody # SKIP not root");
		tap_ok(&t, 1, "a file another user owns: ignored # SKIP not root");
	}

	/* more than 8 scopes: the oldest go when one is written */
	for (int i = 0; i < 10; i++) {
		unsigned char s[32];

		memset(s, 0x40 + i, sizeof(s));
		m = kp_btf_memo_new(dfd, s);
		kp_btf_memo_put(m, good, &ok);
		kp_btf_memo_free(m);
		usleep(2000);
	}
	tap_ok(&t, count_files() == 8, "8 scopes kept (%d)", count_files());

	{
		char cmd[200];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		close(dfd);
		if (system(cmd) != 0)
			fprintf(stderr, "# %s failed\n", cmd);
	}
	return tap_done(&t);
}
