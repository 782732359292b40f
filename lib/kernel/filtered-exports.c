// SPDX-License-Identifier: LGPL-2.1-or-later
/* Module.symvers and kallsyms lines kept only for wanted symbols, then parsed as usual. */
#include <stdlib.h>
#include <string.h>

#include "file/bytes.h"
#include "filtered-exports.h"

/* Module.symvers: the symbol is the second TAB-separated field. */
static bool keep_symvers(const struct kp_symset *wanted, const char *s, size_t n)
{
	const char *t1 = memchr(s, '\t', n), *t2;

	if (!t1)
		return true; /* malformed: let the parser say so */
	t2 = memchr(t1 + 1, '\t', n - (size_t)(t1 + 1 - s));
	if (!t2)
		return true;
	return !wanted || kp_symset_has(wanted, t1 + 1, (size_t)(t2 - t1 - 1));
}

/* kallsyms / System.map: "ADDR TYPE NAME[\t[module]]". */
static bool keep_kallsyms(const struct kp_symset *wanted, const char *s, size_t n)
{
	const char *name, *dot;
	size_t nl;

	if (memchr(s, '\t', n))
		return false; /* a module's symbol: only vmlinux is read */
	name = memchr(s, ' ', n);
	name = name ? memchr(name + 1, ' ', n - (size_t)(name + 1 - s)) : NULL;
	if (!name)
		return true;
	name++;
	nl = n - (size_t)(name - s);
	if ((nl >= 17 && !memcmp(name, "__start___ksymtab", 17)) ||
	    (nl >= 16 && !memcmp(name, "__stop___ksymtab", 16)))
		return true;
	if (nl > 6 && !memcmp(name, "__crc_", 6))
		return !wanted || kp_symset_has(wanted, name + 6, nl - 6);
	if (nl <= 10 || memcmp(name, "__ksymtab_", 10))
		return false;
	name += 10;
	nl -= 10;
	dot = memchr(name, '.', nl); /* v5.4: __ksymtab_<ns>.<sym> */
	if (dot) {
		nl -= (size_t)(dot + 1 - name);
		name = dot + 1;
	}
	return !wanted || kp_symset_has(wanted, name, nl);
}

struct keep {
	const struct kp_symset *wanted;
	bool kallsyms;
	char *out;
	size_t len, cap;
	bool oom;
};

static int keep_line(const char *s, size_t n, void *arg)
{
	struct keep *k = arg;

	if (!n || !(k->kallsyms ? keep_kallsyms(k->wanted, s, n) : keep_symvers(k->wanted, s, n)))
		return 0;
	if (kp_grow(&k->out, &k->cap, k->len + n + 1, 1) < 0) {
		k->oom = true;
		return -1;
	}
	memcpy(k->out + k->len, s, n);
	k->len += n;
	k->out[k->len++] = '\n';
	return 0;
}

int kp_base_load_filtered(struct kp_kernel_base *b, const char *path, bool kallsyms,
			  const struct kp_symset *wanted, struct kp_err *err)
{
	return kp_base_load_filtered_in(b, NULL, path, kallsyms, wanted, err);
}

int kp_base_load_filtered_in(struct kp_kernel_base *b, const struct kp_root_dir *root,
			     const char *path, bool kallsyms, const struct kp_symset *wanted,
			     struct kp_err *err)
{
	struct keep k = { .wanted = wanted, .kallsyms = kallsyms };
	int r;

	/* line by line through one buffer: only the lines of wanted symbols are kept */
	r = kp_bytes_lines_in(root, path,
			      kallsyms ? KP_FILTERED_MAX_KALLSYM : KP_FILTERED_MAX_SYMVERS,
			      keep_line, &k, err);
	if (k.oom)
		kp_err_set(err, "out of memory");
	if (r < 0) {
		free(k.out);
		return kp_err_prefix(err, path);
	}
	if (k.len && kallsyms)
		r = kp_base_load_system_map_buffer(b, path, (unsigned char *)k.out, k.len, err);
	else if (k.len)
		r = kp_base_load_symvers_buffer(b, path, (unsigned char *)k.out, k.len, err);
	free(k.out);
	return r < 0 ? -1 : 0;
}
