// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The running kernel's keys (sig-keys.h): /proc/keys' keyrings, asymmetric keys (their
 * descriptions) and .blacklist hashes.
 */
#include "sig-keys-internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "file/bytes.h"
#include "file/rootopen.h"

/* /proc/keys lists every key the reader may view: a few hundred lines, each under 4 KiB */
#define PROC_KEYS_MAX ((size_t)16 << 20)

/* A "bin:<64 hex>" or "tbs:<64 hex>" description of the .blacklist keyring (certs/blacklist.c). */
static int add_blacklist(struct kp_keyring *kr, const char *desc)
{
	bool bin = !strncmp(desc, "bin:", 4);
	unsigned char h[32];

	if ((!bin && strncmp(desc, "tbs:", 4)) || strspn(desc + 4, "0123456789abcdef") != 64)
		return 0;
	for (size_t i = 0; i < 32; i++)
		h[i] = (unsigned char)(hexval(desc[4 + 2 * i]) << 4 | hexval(desc[5 + 2 * i]));
	if (bin)
		return kp_keyring_add_hash(&kr->arena, &kr->blacklist, &kr->blacklist_mok,
					   &kr->nblacklist, h, false);
	return kp_keyring_add_hash(&kr->arena, &kr->tbs, &kr->tbs_mok, &kr->ntbs, h, false);
}

/*
 * One /proc/keys line (security/keys/proc.c proc_keys_show()): "%08x %c%c%c%c%c%c%c %5d %4s
 * %08x %5d %5d %-9.9s " then the type's describe(): "<description>: <details>".
 */
static int proc_key(struct kp_keyring *kr, char *line, const char *label, int *nkeys)
{
	char *f[8], *save = NULL, *rest, *colon;
	size_t i;

	for (i = 0; i < 8; i++) {
		f[i] = strtok_r(i ? NULL : line, " ", &save);
		if (!f[i])
			return 0;
	}
	rest = save;
	while (rest && *rest == ' ')
		rest++;
	if (!rest)
		return 0;
	rest[strcspn(rest, "\n")] = '\0';
	if (!strcmp(f[7], "keyring") && rest[0] == '.') {
		/* ".builtin_trusted_keys: 3", ".platform: empty" */
		return kp_keyring_add_line(&kr->arena, &kr->keyrings, &kr->nkeyrings,
					   kp_arena_strdup(&kr->arena, rest));
	}
	if (!strcmp(f[7], "blacklist"))
		return add_blacklist(kr, rest);
	if (strcmp(f[7], "asymmetri") && strcmp(f[7], "asymmetric"))
		return 0;
	/* asymmetric_key_describe(): "<subject>: <id hex> X509.rsa <id8> [...]" */
	colon = strstr(rest, ": ");
	if (!colon)
		return 0;
	*colon = '\0';
	{
		struct kp_trusted_key *k = kp_keyring_new_key(kr, KP_KEY_LISTED);
		const char *id = colon + 2;
		size_t idlen = strspn(id, "0123456789abcdef");

		if (!k)
			return -1;
		k->subject = kp_arena_strdup(&kr->arena, rest);
		k->id_hex = kp_arena_strndup(&kr->arena, id, idlen);
		k->source = label;
		if (!k->subject || !k->id_hex)
			return -1;
	}
	(*nkeys)++;
	return 0;
}

/* kp_bytes_lines_in()'s callback: one line of /proc/keys, its length capped as fgets() had it */
struct proc_lines {
	struct kp_keyring *kr;
	const char *label;
	int nkeys;
	bool oom;
};

static int proc_line(const char *line, size_t len, void *arg)
{
	struct proc_lines *pl = arg;
	char buf[4096];

	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	memcpy(buf, line, len);
	buf[len] = '\0';
	pl->oom = proc_key(pl->kr, buf, pl->label, &pl->nkeys) < 0;
	return pl->oom; /* non-zero stops the lines */
}

int kp_keyring_add_proc_keys(struct kp_keyring *kr, const struct kp_root_dir *root,
			     struct kp_err *err)
{
	const char *rp = root ? root->path : NULL;
	struct proc_lines pl = { .kr = kr };
	char path[4096], summary[4800];
	struct kp_err why = { 0 };
	int r;

	snprintf(path, sizeof(path), "%s/proc/keys", rp && strcmp(rp, "/") ? rp : "");
	pl.label = kp_arena_strdup(&kr->arena, path);
	if (!pl.label)
		return kp_err_set(err, "out of memory");
	/* inside the root (kp_open_regular_in()): no link to a host file, no FIFO waited on */
	r = kp_bytes_lines_in(root, path, PROC_KEYS_MAX, proc_line, &pl, &why);
	if (pl.oom || (r < 0 && !strcmp(why.msg, "out of memory")))
		return kp_err_set(err, "out of memory");
	if (r < 0) {
		int e = kp_err_errnum(&why);

		if (e == ENOENT)
			return 0;
		/* say it: the running kernel's keys are then unknown (EINVAL: not a regular file)
		 */
		snprintf(summary, sizeof(summary),
			 "%s: cannot read (%s): the running kernel's keys are unknown", path,
			 e && e != EINVAL ? strerror(e) : why.msg);
		return kp_keyring_add_line(&kr->arena, &kr->sources, &kr->nsources,
					   kp_arena_strdup(&kr->arena, summary)) < 0
			       ? kp_err_set(err, "out of memory")
			       : 0;
	}
	snprintf(summary, sizeof(summary),
		 "%s: %d asymmetric key%s (descriptions only: key ids, no "
		 "certificates), %zu blacklisted module hash%s",
		 path, pl.nkeys, pl.nkeys == 1 ? "" : "s", kr->nblacklist,
		 kr->nblacklist == 1 ? "" : "es");
	if (kp_keyring_add_line(&kr->arena, &kr->sources, &kr->nsources,
				kp_arena_strdup(&kr->arena, summary)) < 0)
		return kp_err_set(err, "out of memory");
	return pl.nkeys;
}
