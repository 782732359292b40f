// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The user cache directory of a run whose environment names another user's (facts-cache.h,
 * kp_facts_cache_dir_own()): a root tool run with a user's HOME neither reads that user's
 * cache nor goes without one, it takes its own.
 */
#include "facts-cache.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trusted-dir.h"

/*
 * The effective user's home directory from the password database into @home (@len bytes):
 * 0, or -1 (no entry, not absolute, too long).
 */
static int own_home(char *home, size_t len)
{
	struct passwd pw, *got = NULL;
	char buf[4096];
	int n;

	if (getpwuid_r(geteuid(), &pw, buf, sizeof(buf), &got) != 0 || !got || !got->pw_dir ||
	    got->pw_dir[0] != '/')
		return -1;
	n = snprintf(home, len, "%s", got->pw_dir);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int kp_facts_cache_dir_own(char *buf, size_t len, char *why, size_t wlen)
{
	const char *env = getenv("KOPOLICY_CACHE_DIR"), *base;
	struct kp_err err = { 0 };
	char root[4096], home[4096], own[4096];
	int r = kp_facts_cache_dir(KP_CACHE_USER, buf, len), fd, n;
	size_t rl;

	if (wlen)
		why[0] = '\0';
	if (r != 0 || (env && *env) || kp_trusted_split(buf, root, sizeof(root), &base) < 0)
		return r;
	fd = kp_trusted_dir_open(root, false, &err);
	if (fd >= 0)
		close(fd);
	/* usable, or absent and to be made under the same test: the environment's own */
	if (fd >= 0 || kp_err_errnum(&err) != EPERM || own_home(home, sizeof(home)) < 0)
		return 0;
	n = snprintf(own, sizeof(own), "%s/.cache/kopolicy/facts-v%d",
		     strcmp(home, "/") ? home : "", KP_FACTS_FORMAT);
	if (n < 0 || (size_t)n >= sizeof(own) || (size_t)n >= len)
		return 0;
	rl = (size_t)n - strlen(base) - 1; /* the cache root: own without "/facts-vN" */
	if (rl == strlen(root) && !strncmp(own, root, rl))
		return 0; /* the same place: refused as it is (the caller says so) */
	snprintf(why, wlen, "cache directory %s not used (%s): %.*s used instead", root, err.msg,
		 (int)rl, own);
	memcpy(buf, own, (size_t)n + 1);
	return 0;
}
