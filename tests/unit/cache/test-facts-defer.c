// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The facts cache's deferred stores (lib/cache/facts-defer.c): modules read with
 * defer_store wait until the read phase is over, kept by the cache (not the module); one
 * settled before its turn (kp_facts_cache_settle(), before it is freed) is stored then; the
 * cache's end stores the rest; a compressed module is hashed for its
 * content key only while its file is still in the state that was read.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base-cache-fixture.h"
#include "cache/facts-cache.h"
#include "read/module.h"
#include "same-module.h"
#include "tap.h"

static char dir[] = "/tmp/kp-test-defer-XXXXXX";

static const char *at(const char *name)
{
	static __thread char buf[4][4096];
	static __thread int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

static struct kp_module *open_with(struct tap *t, struct kp_facts_cache *c, const char *name,
				   bool defer)
{
	struct kp_open_opts o = { .defer_store = defer };
	struct kp_module *m = NULL;
	struct kp_err err = { 0 };
	int r = c ? kp_facts_cache_open(c, at(name), &o, NULL, &m, &err)
		  : kp_module_open(at(name), NULL, &m, &err);

	tap_ok(t, r == 0 && m, "open %s%s%s", name, r ? ": " : "", r ? err.msg : "");
	return m;
}

static void counts(struct tap *t, struct kp_facts_cache *c, unsigned long long hits,
		   unsigned long long stat_hits, unsigned long long misses,
		   unsigned long long stored, const char *what)
{
	struct kp_cache_counts n;
	char got[128], want[128];

	kp_facts_cache_counts(c, &n);
	snprintf(got, sizeof(got), "%llu hits (%llu by stat), %llu misses, %llu stored",
		 (unsigned long long)n.hits, (unsigned long long)n.stat_hits,
		 (unsigned long long)n.misses, (unsigned long long)n.stored);
	snprintf(want, sizeof(want), "%llu hits (%llu by stat), %llu misses, %llu stored", hits,
		 stat_hits, misses, stored);
	tap_is_str(t, got, want, what);
}

/* The cached facts are the file's: compared with a read without the cache. */
static void same_as_file(struct tap *t, const struct kp_module *m, const char *name)
{
	struct kp_module *direct = NULL;
	struct kp_err err = { 0 };

	kp_module_open(at(name), NULL, &direct, &err);
	tap_ok(t, m && direct && kp_same_module(m, direct), "%s: the cache's facts are the file's",
	       name);
	kp_module_free(direct);
}

int main(void)
{
	struct tap t = { 0 };
	struct kp_facts_cache *c;
	struct kp_module *a, *b, *x, *z, *m;
	char cdir[4200];
	struct timespec older[2] = { { .tv_sec = 1000000000 }, { .tv_sec = 1000000000 } };

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(cdir, sizeof(cdir), "%s/cache", dir);
	tap_ok(&t,
	       !copy_file(tap_srcpath("fixtures/ko/6.12/kp_gpl_prov.ko"), at("a.ko")) &&
		       !copy_file(tap_srcpath("fixtures/ko/6.12/kp_symget.ko"), at("b.ko")) &&
		       !copy_file(tap_srcpath("fixtures/ko/6.12/kp_gpl_prov.ko.xz"),
				  at("x.ko.xz")) &&
		       !copy_file(tap_srcpath("fixtures/ko/6.12/kp_gpl_prov.ko.zst"),
				  at("z.ko.zst")) &&
		       !copy_file(tap_srcpath("fixtures/ko/6.12/kp_gpl_prov.ko.zst"),
				  at("z2.ko.zst")) &&
		       !copy_file(tap_srcpath("fixtures/ko/6.12/kp_gpl_prov.ko.xz"),
				  at("x2.ko.xz")),
	       "fixtures copied (z2, x2: the copies read later)");
	/* states changed less than a second before they are read are not stored ("racy") */
	nanosleep(&(struct timespec){ .tv_sec = 1, .tv_nsec = 100000000 }, NULL);

	/* a cold run: four misses, nothing stored while reading */
	c = kp_facts_cache_new(cdir);
	a = open_with(&t, c, "a.ko", true);
	b = open_with(&t, c, "b.ko", true);
	x = open_with(&t, c, "x.ko.xz", true);
	z = open_with(&t, c, "z.ko.zst", true);
	counts(&t, c, 0, 0, 4, 0, "read with defer_store: misses, none stored yet");
	tap_ok(&t,
	       a && b && x && z && kp_facts_cache_is_pending(c, a) &&
		       kp_facts_cache_is_pending(c, z),
	       "the modules wait in the cache");
	/* freed before the read phase ends: stored when settled, before kp_module_free() */
	kp_facts_cache_settle(c, b);
	tap_ok(&t, !kp_facts_cache_is_pending(c, b), "a settled module no longer waits");
	kp_facts_cache_settle(c, b); /* twice: nothing more */
	kp_module_free(b);
	counts(&t, c, 0, 0, 4, 1, "a module freed while waiting is stored first");
	/* changed after it was read: stored under the state read, without a content key */
	tap_ok(&t, utimensat(AT_FDCWD, at("x.ko.xz"), older, 0) == 0, "x.ko.xz touched");
	kp_facts_cache_store_pending(c);
	kp_facts_cache_settle(c, a);
	kp_module_free(a);
	kp_facts_cache_settle(c, x);
	kp_module_free(x);
	/* alive when the cache ends: kp_facts_cache_free() stores it (the warm run finds it) */
	kp_facts_cache_free(c);
	kp_module_free(z);

	/* a warm run */
	c = kp_facts_cache_new(cdir);
	m = open_with(&t, c, "a.ko", true);
	same_as_file(&t, m, "a.ko");
	kp_module_free(m);
	m = open_with(&t, c, "b.ko", true);
	same_as_file(&t, m, "b.ko");
	kp_module_free(m);
	m = open_with(&t, c, "z.ko.zst", true);
	same_as_file(&t, m, "z.ko.zst");
	kp_module_free(m);
	counts(&t, c, 3, 3, 0, 0, "unchanged modules: hits by state");
	/* the copy of a module hashed after the read phase: found by its content */
	m = open_with(&t, c, "z2.ko.zst", true);
	same_as_file(&t, m, "z2.ko.zst");
	kp_module_free(m);
	counts(&t, c, 4, 3, 0, 0, "a copy of a module hashed when stored: a hit by content");
	/* the module changed before its hash: no content key, a copy is read again */
	m = open_with(&t, c, "x2.ko.xz", true);
	kp_module_free(m);
	counts(&t, c, 4, 3, 1, 1, "a module changed before it was hashed: no content key");
	kp_facts_cache_free(c);

	/* without defer_store every miss is stored by the reading thread, as before */
	snprintf(cdir, sizeof(cdir), "%s/cache2", dir);
	c = kp_facts_cache_new(cdir);
	m = open_with(&t, c, "b.ko", false);
	tap_ok(&t, m && !kp_facts_cache_is_pending(c, m), "without defer_store: not queued");
	counts(&t, c, 0, 0, 1, 1, "without defer_store: stored at once");
	kp_module_free(m);
	kp_facts_cache_free(c);

	/*
	 * kp_facts_cache_wait_stored() (before the result cache writes its manifest): every
	 * waiting module stored when it returns, with the cache's thread at work or without one
	 */
	for (int thread = 0; thread < 2; thread++) {
		snprintf(cdir, sizeof(cdir), "%s/cache-wait%d", dir, thread);
		c = kp_facts_cache_new(cdir);
		a = open_with(&t, c, "a.ko", true);
		z = open_with(&t, c, "z.ko.zst", true);
		if (thread)
			kp_facts_cache_store_pending(c);
		kp_facts_cache_wait_stored(c);
		tap_ok(&t,
		       a && z && !kp_facts_cache_is_pending(c, a) &&
			       !kp_facts_cache_is_pending(c, z),
		       "wait_stored, %s: nothing waits",
		       thread ? "the thread started" : "no thread");
		counts(&t, c, 0, 0, 2, 2,
		       thread ? "wait_stored with the thread: both stored"
			      : "wait_stored without a thread: both stored");
		kp_facts_cache_wait_stored(c); /* again: nothing to do */
		kp_facts_cache_settle(c, a);
		kp_module_free(a);
		kp_facts_cache_settle(c, z);
		kp_module_free(z);
		kp_facts_cache_free(c);
	}
	kp_facts_cache_wait_stored(NULL);

	if (!getenv("KP_KEEP_TMP")) {
		char cmd[4200];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", dir);
	}
	return tap_done(&t);
}
