// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ima-policy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* default_appraise_rules[]'s dont_appraise file systems (ima_policy.c, 5.10-7.2 trees) */
static const struct {
	int64_t magic;
	const char *name;
} tcb_skip[] = {
	{ 0x9fa0, "PROC_SUPER_MAGIC" },	    { 0x62656572, "SYSFS_MAGIC" },
	{ 0x64626720, "DEBUGFS_MAGIC" },    { 0x01021994, "TMPFS_MAGIC" },
	{ 0x858458f6, "RAMFS_MAGIC" },	    { 0x1cd1, "DEVPTS_SUPER_MAGIC" },
	{ 0x42494e4d, "BINFMTFS_MAGIC" },   { 0x73636673, "SECURITYFS_MAGIC" },
	{ 0xf97cff8c, "SELINUX_MAGIC" },    { 0x43415d53, "SMACK_MAGIC" },
	{ 0x6e736673, "NSFS_MAGIC" },	    { 0xde5e81e4, "EFIVARFS_MAGIC" },
	{ 0x27e0eb, "CGROUP_SUPER_MAGIC" }, { 0x63677270, "CGROUP2_SUPER_MAGIC" },
};

static struct kp_ima_rule *add_rule(struct kp_ima_policy *p, struct kp_arena *a)
{
	struct kp_ima_rule *r = kp_arena_alloc(a, (p->nrules + 1) * sizeof(*r));

	if (!r)
		return NULL;
	if (p->nrules)
		memcpy(r, p->rules, p->nrules * sizeof(*r));
	p->rules = r;
	r = &p->rules[p->nrules++];
	memset(r, 0, sizeof(*r));
	return r;
}

static int builtin(struct kp_ima_policy *p, struct kp_arena *a, bool digsig, bool modsig,
		   const char *text)
{
	struct kp_ima_rule *r = add_rule(p, a);

	if (!r)
		return -1;
	r->appraise = true;
	r->func_module = true;
	r->digsig = digsig;
	r->modsig = modsig;
	r->text = text;
	return 0;
}

/* ima_policy= and ima_appraise_tcb (policy_setup(), default_appraise_policy_setup()) */
struct boot_choice {
	bool secure_boot, appraise_tcb;
	const char *appraise; /* the last ima_appraise= value */
};

static void parse_cmdline(const char *cmdline, struct boot_choice *b, char *copy, size_t size)
{
	char *save = NULL;

	memset(b, 0, sizeof(*b));
	if (!cmdline)
		return;
	snprintf(copy, size, "%s", cmdline);
	for (char *t = strtok_r(copy, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save)) {
		if (!strncmp(t, "ima_policy=", 11)) {
			char *s2 = NULL;

			/* policy_setup(): strsep(" |\n"), every known name sets its flag */
			for (char *n = strtok_r(t + 11, "|", &s2); n;
			     n = strtok_r(NULL, "|", &s2)) {
				if (!strcmp(n, "secure_boot"))
					b->secure_boot = true;
				else if (!strcmp(n, "appraise_tcb"))
					b->appraise_tcb = true;
			}
		} else if (!strcmp(t, "ima_appraise_tcb")) {
			b->appraise_tcb = true;
		} else if (!strncmp(t, "ima_appraise=", 13)) {
			b->appraise = t + 13;
		}
	}
}

/* ima_appraise_parse_cmdline() (CONFIG_IMA_APPRAISE_BOOTPARAM) */
static unsigned appraise_mode(const struct kp_ima_inputs *in, const char *v)
{
	unsigned state = KP_IMA_APPRAISE_ENFORCE;

	if (!v || !in->bootparam)
		return KP_IMA_APPRAISE_ENFORCE;
	if (!strncmp(v, "off", 3))
		state = 0;
	else if (!strncmp(v, "log", 3))
		state = KP_IMA_APPRAISE_LOG;
	else if (!strncmp(v, "fix", 3))
		state = KP_IMA_APPRAISE_FIX;
	/* "Secure boot enabled: ignoring ima_appraise=%s option" */
	if (in->secure_boot == 1)
		return KP_IMA_APPRAISE_ENFORCE;
	return state;
}

static bool parse_num(const char *s, int64_t *out, int base)
{
	char *end;

	errno = 0;
	long long v = strtoll(s, &end, base);

	if (errno || end == s || *end)
		return false;
	*out = v;
	return true;
}

/*
 * One line of a policy (ima_parse_rule()'s syntax, as <securityfs>/ima/policy prints it).
 * Only appraise/dont_appraise rules a module read can match are kept. 0, or -1 with @err.
 */
static int parse_line(struct kp_ima_policy *p, struct kp_arena *a, const char *line,
		      struct kp_err *err)
{
	char *copy = kp_arena_strdup(a, line), *save = NULL, *t;
	struct kp_ima_rule rule = { 0 };
	bool keep;

	if (!copy)
		return kp_err_set(err, "out of memory");
	t = strtok_r(copy, " \t", &save);
	if (!t || t[0] == '#')
		return 0;
	if (!strcmp(t, "appraise"))
		rule.appraise = true;
	else if (strcmp(t, "dont_appraise") && strcmp(t, "measure") && strcmp(t, "dont_measure") &&
		 strcmp(t, "audit") && strcmp(t, "hash") && strcmp(t, "dont_hash"))
		return kp_err_set(err, "unknown action '%s'", t);
	keep = rule.appraise || !strcmp(t, "dont_appraise");
	while ((t = strtok_r(NULL, " \t", &save))) {
		char *eq = strpbrk(t, "=<>");
		char op = eq ? *eq : 0;
		const char *v = eq ? eq + 1 : "";
		size_t klen = eq ? (size_t)(eq - t) : strlen(t);
		int64_t n;

#define KEY(k) (klen == strlen(k) && !strncmp(t, k, klen))
		if (KEY("func")) {
			if (strcmp(v, "MODULE_CHECK"))
				keep = false; /* another hook */
			rule.func_module = true;
		} else if (KEY("mask")) {
			if (strcmp(v, "MAY_READ") && strcmp(v, "^MAY_READ"))
				keep = false; /* a module is read, not executed or written */
		} else if (KEY("fsmagic")) {
			if (!parse_num(v, &n, 16))
				return kp_err_set(err, "bad fsmagic '%s'", v);
			rule.has_fsmagic = true;
			rule.fsmagic = n;
		} else if (KEY("fowner") || KEY("uid") || KEY("euid")) {
			if (!parse_num(v, &n, 10) || n < 0 || n > UINT32_MAX)
				return kp_err_set(err, "bad %.*s '%s'", (int)klen, t, v);
			if (KEY("fowner")) {
				rule.fowner_op = op;
				rule.fowner = (uint32_t)n;
			} else {
				rule.uid_op = op;
				rule.uid = (uint32_t)n;
			}
		} else if (KEY("appraise_type")) {
			/* imasig, imasig|modsig; sigv3 (fs-verity) needs a signature too */
			rule.digsig = true;
			rule.modsig = strstr(v, "modsig") != NULL;
		} else if (KEY("appraise_flag") || KEY("permit_directio") ||
			   KEY("appraise_algos") || KEY("template") || KEY("pcr") ||
			   KEY("keyrings") || KEY("label")) {
			/* no condition on the file (check_blacklist: modsig hashes only) */
		} else {
			/* fsuuid, fsname, gid, egid, fgroup, obj_*, subj_*, digest_type ... */
			rule.unmodelled = kp_arena_strdup(a, t);
			if (!rule.unmodelled)
				return kp_err_set(err, "out of memory");
		}
#undef KEY
	}
	if (!keep)
		return 0;
	rule.text = kp_arena_strdup(a, line);
	struct kp_ima_rule *r = add_rule(p, a);

	if (!r || !rule.text)
		return kp_err_set(err, "out of memory");
	*r = rule;
	return 0;
}

static int parse_active(struct kp_ima_policy *p, struct kp_arena *a, const char *text,
			const char *source, struct kp_err *err)
{
	size_t lineno = 0;
	const char *s = text;

	while (*s) {
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);
		char *line = kp_arena_strndup(a, s, len);

		lineno++;
		if (!line)
			return kp_err_set(err, "out of memory");
		if (parse_line(p, a, line, err) < 0) {
			char why[sizeof(err->msg)];

			snprintf(why, sizeof(why), "%s", err->msg);
			return kp_err_set(err, "%s: line %zu: %s", source, lineno, why);
		}
		s += len + (nl != NULL);
	}
	return 0;
}

/* ima_init_policy()'s order: arch, secure_boot, build-time, appraise_tcb. */
static int builtin_policy(struct kp_ima_policy *p, const struct kp_ima_inputs *in,
			  const struct boot_choice *b, struct kp_arena *a)
{
	/*
	 * arch_get_ima_policy() (x86: ima_efi.c, later arch/x86/kernel/ima_arch.c): under Secure
	 * Boot with IMA_ARCH_POLICY, "appraise func=MODULE_CHECK appraise_type=imasig" only
	 * without MODULE_SIG (with it, module signatures are enforced instead).
	 */
	if (in->secure_boot == 1 && in->arch_policy && !in->module_sig &&
	    builtin(p, a, true, false,
		    "appraise func=MODULE_CHECK appraise_type=imasig (arch policy, Secure Boot)") <
		    0)
		return -1;
	if (b->secure_boot &&
	    builtin(p, a, true, in->decompressed,
		    in->decompressed ? "appraise func=MODULE_CHECK appraise_type=imasig|modsig "
				       "(ima_policy=secure_boot)"
				     : "appraise func=MODULE_CHECK appraise_type=imasig "
				       "(ima_policy=secure_boot)") < 0)
		return -1;
	if (!b->secure_boot && in->require_module_sigs &&
	    builtin(p, a, true, false,
		    "appraise func=MODULE_CHECK appraise_type=imasig "
		    "(IMA_APPRAISE_REQUIRE_MODULE_SIGS)") < 0)
		return -1;
	if (b->appraise_tcb) {
		for (size_t i = 0; i < KP_ARRAY_SIZE(tcb_skip); i++) {
			struct kp_ima_rule *r = add_rule(p, a);
			char text[96];

			if (!r)
				return -1;
			snprintf(text, sizeof(text),
				 "dont_appraise fsmagic=0x%llx (%s, appraise_tcb)",
				 (unsigned long long)tcb_skip[i].magic, tcb_skip[i].name);
			r->has_fsmagic = true;
			r->fsmagic = tcb_skip[i].magic;
			if (!(r->text = kp_arena_strdup(a, text)))
				return -1;
		}
		struct kp_ima_rule *r = add_rule(p, a);

		if (!r)
			return -1;
		r->appraise = true;
		r->fowner_op = '=';
		r->fowner = 0;
		r->digsig = in->signed_init;
		r->text = in->signed_init ? "appraise fowner=0 appraise_type=imasig (appraise_tcb, "
					    "IMA_APPRAISE_SIGNED_INIT)"
					  : "appraise fowner=0 (appraise_tcb)";
	}
	return 0;
}

int kp_ima_policy_build(struct kp_ima_policy *p, const struct kp_ima_inputs *in,
			struct kp_arena *arena, struct kp_err *err)
{
	struct boot_choice b;
	char copy[4096];

	memset(p, 0, sizeof(*p));
	p->appraisal = in->ima_appraise;
	p->modsig = in->modsig;
	p->decompressed = in->decompressed;
	if (!p->appraisal)
		return 0;
	parse_cmdline(in->cmdline, &b, copy, sizeof(copy));
	p->appraise = appraise_mode(in, b.appraise);
	if (in->active) {
		p->source = in->active_source;
		if (parse_active(p, arena, in->active, in->active_source, err) < 0)
			return -1;
	} else {
		p->source = "the boot command line's built-in policy";
		if (builtin_policy(p, in, &b, arena) < 0)
			return kp_err_set(err, "out of memory");
	}
	/* ima_update_policy_flags(): ima_appraise |= the appraise flags of the rules */
	for (size_t i = 0; i < p->nrules; i++)
		if (p->rules[i].appraise && p->rules[i].func_module)
			p->appraise |= KP_IMA_APPRAISE_MODULES;
	return 0;
}

static bool id_matches(char op, uint32_t want, uint32_t have)
{
	switch (op) {
	case '=':
		return have == want;
	case '>':
		return have > want;
	case '<':
		return have < want;
	default:
		return true;
	}
}

const struct kp_ima_rule *kp_ima_policy_match(const struct kp_ima_policy *p,
					      const struct kp_ima_file *file)
{
	if (!p->appraisal)
		return NULL;
	for (size_t i = 0; i < p->nrules; i++) {
		const struct kp_ima_rule *r = &p->rules[i];

		/* a file system that is not known: an ordinary disk file system is assumed */
		if (r->has_fsmagic && (!file->fs_known || file->fs_magic != r->fsmagic))
			continue;
		/* an owner that is not known: root, as a module tree's files are */
		if (r->fowner_op &&
		    !id_matches(r->fowner_op, r->fowner, file->owner_known ? file->uid : 0))
			continue;
		if (r->uid_op && !id_matches(r->uid_op, r->uid, 0))
			continue;
		return r;
	}
	return NULL;
}

bool kp_ima_policy_appraises_modules(const struct kp_ima_policy *p)
{
	for (size_t i = 0; p->appraisal && i < p->nrules; i++)
		if (p->rules[i].appraise)
			return true;
	return false;
}
