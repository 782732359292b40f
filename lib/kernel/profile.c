// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The behaviour table. Sources: ../shared/docs/loader-rules.md §7.4, §8.4, §13
 * (mainline commits and the stable review/push mails cited there).
 */
#include "profile.h"

#include <stdio.h>

#include "read/btf.h"
#include <stdlib.h>
#include <string.h>

#define MAX_BACKPORTS 8

/* clang-format off */
static const struct feature_row {
	enum kp_feature f;
	const char *name;
	struct kp_kver mainline;
	struct kp_kver backports[MAX_BACKPORTS]; /* first stable release of a series that has it */
} rows[] = {
	{ KP_F_INHERIT_TAINT, "inherit_taint", { 5, 9, 0 },
	  { { 4, 4, 269 }, { 4, 9, 269 }, { 4, 14, 233 }, { 4, 19, 191 }, { 5, 4, 118 } } },
	{ KP_F_SYMBOL_GET_GPL, "symbol_get_gpl_only", { 6, 6, 0 },
	  { { 4, 14, 326 }, { 4, 19, 295 }, { 5, 4, 257 }, { 5, 10, 195 }, { 5, 15, 131 },
	    { 6, 1, 52 }, { 6, 4, 15 }, { 6, 5, 2 } } },
	{ KP_F_INHERIT_MSG_SYMBOL, "inherit_taint_names_symbol", { 5, 19, 0 }, { { 0 } } },
	{ KP_F_TAINT_AFTER_DUP, "taints_after_duplicate_check", { 6, 4, 0 }, { { 0 } } },
	{ KP_F_NO_LEGACY_TABLES, "no_gpl_future_unused_tables", { 5, 12, 0 }, { { 0 } } },
	{ KP_F_NAMESPACES, "symbol_namespaces", { 5, 4, 0 }, { { 0 } } },
	/* 520b1a147d91, 754f8733fc09, 0267cbf297bf; 6.12.37 took only the export macro */
	{ KP_F_MODULE_NAMESPACES, "module_namespaces", { 6, 16, 0 }, { { 0 } } },
	{ KP_F_THIS_MODULE_SIZE, "this_module_size_check", { 6, 4, 0 }, { { 0 } } },
	/*
	 * ebfac7b778fa "module: Ignore _GLOBAL_OFFSET_TABLE_ when warning for undefined symbols":
	 * in stable 5.10.20 (Debian's changelog, linux 5.10.24-1; the 5.10.223 tree has it);
	 * other stable series unverified.
	 */
	{ KP_F_GOT_EXEMPT, "got_symbol_exempt", { 5, 12, 0 }, { { 5, 10, 20 } } },
	{ KP_F_ERRNO_IN_UNKNOWN, "unknown_symbol_reports_enoent", { 5, 10, 0 }, { { 0 } } },
	{ KP_F_LICENSE_SECOND_MSG, "license_taint_second_message", { 6, 4, 0 }, { { 0 } } },
	{ KP_F_TEST_TAINT, "test_taint", { 6, 0, 0 }, { { 0 } } },
	/*
	 * "module: Fix kernel panic when a symbol st_shndx is out of bounds": in the 7.2 tree;
	 * Debian's changelogs date the backports (6.1.168, 6.12.80); other series unverified.
	 */
	{ KP_F_SHNDX_CHECK, "invalid_section_index_check", { 7, 0, 0 },
	  { { 6, 1, 168 }, { 6, 12, 80 } } },
	{ KP_F_SYMSTRTAB_CHECKS, "symbol_strtab_checks", { 6, 13, 0 }, { { 0 } } },
	{ KP_F_EXT_MODVERSIONS, "extended_modversions", { 6, 14, 0 }, { { 0 } } },
	{ KP_F_KFLAGSTAB, "kflagstab", { 7, 1, 0 }, { { 0 } } },
	/*
	 * 743f8cae549a "module: Override -EEXIST module return" (modules-next for 7.1; the 7.2.13
	 * tree has it). AUTOSEL offered it to 5.15-7.0 on 2026-04-20, but no stable release is
	 * known to carry it: Debian's changelogs, which list every stable commit, do not name it up
	 * to 6.1.192 and 6.12.118, and neither tree has it; 5.15.y, 6.6.y, 6.18.y and 7.0.y are
	 * unverified (no backport rows until one is found).
	 */
	{ KP_F_INIT_EEXIST_EBUSY, "init_eexist_becomes_ebusy", { 7, 1, 0 }, { { 0 } } },
	{ KP_F_TAINT_FWCTL, "taint_fwctl", { 6, 15, 0 }, { { 0 } } },
	/*
	 * "preempt: Move PREEMPT_RT before PREEMPT in vermagic." (6.13-rc5), after 35772d627b55
	 * let PREEMPT_RT and PREEMPT_DYNAMIC (so PREEMPT_BUILD) be set together. Not in 6.12.y:
	 * Debian's 6.12 rt-amd64 carries the RT/DYNAMIC backport and its modules say "preempt ".
	 */
	{ KP_F_VERMAGIC_RT_FIRST, "vermagic_preempt_rt_first", { 6, 13, 0 }, { { 0 } } },
	/*
	 * ec2a29593c83 "module: harden ELF info handling" (modules-next for 5.12): the raw
	 * e_shstrndx against the raw e_shnum, section 0 all-null. Queued for 5.4/5.10/5.11 on
	 * 2021-03-25 (stable queue push); in 5.4.110's shortlog; the 5.10.262 tree has it. The
	 * 5.10.28/5.11.12 releases of the same day are assumed; other series unverified.
	 */
	{ KP_F_ELF_SECHDR_CHECKS, "elf_section_header_checks", { 5, 12, 0 },
	  { { 5, 4, 110 }, { 5, 10, 28 }, { 5, 11, 12 } } },
	/* 7fd982f394c4: pr_err() per check (silent -ENOEXEC in the 5.10.262 tree, lines in 6.1) */
	{ KP_F_ELF_CHECK_MSGS, "elf_validity_messages", { 5, 17, 0 }, { { 0 } } },
	/*
	 * The v6.13 split of elf_validity_check() (the series of d979e3dffa93): section 0 is
	 * checked before the name index. Backported with "module: validate string table section
	 * types" (Debian's 6.12.117 changelog; the 6.12.118 tree has the split, the 6.1.192 tree
	 * not).
	 */
	{ KP_F_SEC0_BEFORE_SHSTRNDX, "section0_checked_first", { 6, 13, 0 }, { { 6, 12, 117 } } },
	/*
	 * Module BTF (kernel/bpf/btf.c, btf_parse_module()). The distilled base: "libbpf,bpf:
	 * share BTF relocate-related code with kernel" and "module, bpf: store BTF base pointer
	 * in struct module" (v6.11; the 6.12 tree has them, 6.1's not). The next two are dated
	 * only by the trees read: printable DATASEC names are in 6.12's btf_name_valid_section()
	 * and not 6.1's; the layout header (layout_off/layout_len, BTF_INFO_KIND 7 bits, vlen 24
	 * bits, btf_check_modifier_chain_length() instead of btf_check_type_tags()) is in 7.2's
	 * and not 6.12's, so the versions between are given the older behaviour.
	 */
	{ KP_F_BTF_BASE_RELOCATE, "btf_base_relocate", { 6, 11, 0 }, { { 0 } } },
	{ KP_F_BTF_DATASEC_PRINTABLE, "btf_datasec_printable_names", { 6, 12, 0 }, { { 0 } } },
	{ KP_F_BTF_LAYOUT, "btf_layout_header", { 7, 2, 0 }, { { 0 } } },
	/*
	 * btf_module_notify() with MODULE_ALLOW_BTF_MISMATCH: 6.1 prints "failed to validate
	 * module [%s] BTF: %ld" for every such module, 6.12 and 7.2 one pr_warn_once() (dated by
	 * the trees read, as above).
	 */
	{ KP_F_BTF_MISMATCH_QUIET, "btf_mismatch_warn_once", { 6, 12, 0 }, { { 0 } } },
	/*
	 * ML-DSA module signatures (v7.0; read in the 7.2.13 tree, 7.0 and 7.1 taken as 7.2):
	 * pkcs7_sig_note_pkey_algo() maps the FIPS 204 OIDs to mldsa44/65/87,
	 * pkcs7_check_authattrs() makes signed attributes waivable for an ML-DSA signer under
	 * CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA, software_key_determine_akcipher()
	 * accepts only "none" (no signed attributes) or "sha512" as an ML-DSA digest.
	 */
	{ KP_F_MLDSA_SIGNATURES, "mldsa_signatures", { 7, 0, 0 }, { { 0 } } },
	/*
	 * c200892b46ba (Coiby Xu, committed 2025-11-19 for the 6.19 merge window: the release is
	 * dated from the commit, not from a tag): READING_MODULE_COMPRESSED defers IMA's
	 * appraisal of a compressed finit_module() to a second security_kernel_post_read_file()
	 * on the decompressed image, and secure_boot_rules[] allows modsig. The 7.2.13 headers
	 * have READING_MODULE_COMPRESSED, the 6.12.118 ones not. No stable backport known.
	 */
	{ KP_F_IMA_DECOMPRESSED_MODULES, "ima_decompressed_modules", { 6, 19, 0 }, { { 0 } } },
	/*
	 * Eric Snowberg's "certs: Reference revocation list for all keyrings" (v2 posted
	 * 2023-08-17, so not before the 6.7 merge window): verify_pkcs7_message_sig() checks
	 * is_key_on_revocation_list() before choosing the keyring. Absent in the 6.1.192 tree
	 * (only in the VERIFY_USE_PLATFORM_KEYRING branch), present in 6.12.118 and 7.2.13;
	 * 6.7 taken as its release (not read).
	 */
	{ KP_F_REVOCATION_ALL_KEYRINGS, "revocation_all_keyrings", { 6, 7, 0 }, { { 0 } } },
	/*
	 * John Ogness's "printk: remove logbuf_lock writer-protection of ringbuffer" (v5.13):
	 * 5.10's vprintk_emit() formats the line (vprintk_store() -> vscnprintf()) inside
	 * logbuf_lock_irqsave(); the 6.1.192 tree has no logbuf_lock. The oracle's 5.10.262
	 * boots of strtab_page show the difference (tests/oracle/README.md, "Hangs").
	 */
	{ KP_F_PRINTK_LOCKLESS, "printk_lockless_store", { 5, 13, 0 }, { { 0 } } },
	/* Distribution deltas: never upstream (mainline 0.0.0 = no), see distro_rows[]. */
	{ KP_F_MISSING_VERSION_FATAL, "missing_version_fatal", { 0 }, { { 0 } } },
	{ KP_F_MODULE_HASH_BLACKLIST, "module_hash_blacklist", { 0 }, { { 0 } } },
	/* "integrity: Introduce a Linux keyring called machine" (v5.18) */
	{ KP_F_MACHINE_KEYRING, "machine_keyring", { 5, 18, 0 }, { { 0 } } },
	{ KP_F_MODULE_PLATFORM_KEYRING, "module_platform_keyring", { 0 }, { { 0 } } },
	{ KP_F_MOK_TRUSTED_DEFAULT, "mok_trusted_by_default", { 0 }, { { 0 } } },
	/*
	 * apply_relocations() relocates .data..percpu although layout_and_allocate() cleared its
	 * SHF_ALLOC: in the 7.2.13 tree, not in 6.12.117; the mainline release in between is not
	 * pinned (taken as 7.0).
	 */
	{ KP_F_PERCPU_RELOCS, "percpu_relocations_applied", { 7, 0, 0 }, { { 0 } } },
};

/*
 * What a distribution's patches add to or remove from the upstream behaviour, for the
 * kernels of that distribution in [from, until) (until 0.0.0: still carried).
 */
static const struct distro_row {
	enum kp_feature f;
	enum kp_distro distro;
	bool value;
	struct kp_kver from, until;
} distro_rows[] = {
	/* check_version(): pr_warn + return 0 (5.10, 6.1, 6.12 and 7.2 trees) */
	{ KP_F_MISSING_VERSION_FATAL, KP_DISTRO_DEBIAN, true, { 0 }, { 0 } },
	/* mod_verify_sig() SHA-256 blacklist; dropped in 6.17.2-1~exp1 */
	{ KP_F_MODULE_HASH_BLACKLIST, KP_DISTRO_DEBIAN, true, { 0 }, { 6, 17, 0 } },
	/*
	 * "KEYS: Make use of platform keyring for module signature verify": the -ENOKEY retry
	 * with VERIFY_USE_PLATFORM_KEYRING in kernel/module/signing.c of D6.1.192, D6.12.118
	 * and D7.2.13 (still carried). The patched trust_moklist() (D6.1.192 machine_keyring.c:
	 * trust_mok = true; D6.12.118: return true) is gone in D7.2.13 (MokListTrustedRT decides,
	 * as upstream: the 6.17.2-1~exp1 changelog's "Only trust Machine Owner Key (MOK) if
	 * enabled"); untrusted MOK keys land in .platform, which the retry still searches.
	 */
	{ KP_F_MODULE_PLATFORM_KEYRING, KP_DISTRO_DEBIAN, true, { 0 }, { 0 } },
	{ KP_F_MOK_TRUSTED_DEFAULT, KP_DISTRO_DEBIAN, true, { 0 }, { 6, 17, 0 } },
};
/* clang-format on */

int kp_kver_cmp(const struct kp_kver *a, const struct kp_kver *b)
{
	if (a->major != b->major)
		return a->major < b->major ? -1 : 1;
	if (a->minor != b->minor)
		return a->minor < b->minor ? -1 : 1;
	if (a->patch != b->patch)
		return a->patch < b->patch ? -1 : 1;
	return 0;
}

int kp_kver_parse(const char *s, struct kp_kver *v)
{
	char *end;
	long x;

	memset(v, 0, sizeof(*v));
	x = strtol(s, &end, 10);
	if (end == s || *end != '.' || x < 2 || x > 99)
		return -1;
	v->major = (int)x;
	s = end + 1;
	x = strtol(s, &end, 10);
	if (end == s || x < 0 || x > 999)
		return -1;
	v->minor = (int)x;
	if (*end == '.') {
		s = end + 1;
		x = strtol(s, &end, 10);
		if (end == s || x < 0 || x > 99999)
			return -1;
		v->patch = (int)x;
	}
	return 0;
}

static bool has_feature(const struct feature_row *r, const struct kp_kver *v)
{
	if (r->mainline.major && kp_kver_cmp(v, &r->mainline) >= 0)
		return true;
	for (size_t i = 0; i < MAX_BACKPORTS && r->backports[i].major; i++) {
		const struct kp_kver *b = &r->backports[i];

		if (v->major == b->major && v->minor == b->minor && v->patch >= b->patch)
			return true;
	}
	return false;
}

static void apply_distro(struct kp_profile *p, const struct kp_kver *v, enum kp_distro d)
{
	for (size_t i = 0; i < KP_ARRAY_SIZE(distro_rows); i++) {
		const struct distro_row *r = &distro_rows[i];

		if (r->distro != d || (v && kp_kver_cmp(v, &r->from) < 0))
			continue;
		if (r->until.major && (!v || kp_kver_cmp(v, &r->until) >= 0))
			continue;
		p->has[r->f] = r->value;
	}
}

static bool beyond_modelled(const struct kp_kver *v)
{
	return v->major > KP_NEWEST_MODELLED_MAJOR ||
	       (v->major == KP_NEWEST_MODELLED_MAJOR && v->minor > KP_NEWEST_MODELLED_MINOR);
}

void kp_profile_for_kernel(struct kp_profile *p, const struct kp_kver *v, enum kp_distro distro)
{
	memset(p, 0, sizeof(*p));
	p->version = *v;
	p->version_known = true;
	p->distro = distro;
	p->beyond_modelled = beyond_modelled(v);
	for (size_t i = 0; i < KP_ARRAY_SIZE(rows); i++)
		p->has[rows[i].f] = has_feature(&rows[i], v);
	apply_distro(p, v, distro);
	p->name = kp_profile_rules_name(p);
}

void kp_profile_for_version(struct kp_profile *p, const struct kp_kver *v)
{
	kp_profile_for_kernel(p, v, KP_DISTRO_UPSTREAM);
}

void kp_profile_latest(struct kp_profile *p, enum kp_distro distro)
{
	memset(p, 0, sizeof(*p));
	p->distro = distro;
	for (size_t i = 0; i < KP_ARRAY_SIZE(rows); i++)
		p->has[rows[i].f] = rows[i].mainline.major != 0;
	apply_distro(p, NULL, distro);
	p->name = kp_profile_rules_name(p);
}

const char *kp_profile_newest_modelled(void)
{
#define KP_STR2(x) #x
#define KP_STR(x)  KP_STR2(x)
	return KP_STR(KP_NEWEST_MODELLED_MAJOR) "." KP_STR(KP_NEWEST_MODELLED_MINOR);
#undef KP_STR
#undef KP_STR2
}

int kp_profile_apply_rules(struct kp_profile *p, const char *rules)
{
	if (!rules || !strcmp(rules, "auto"))
		return 0;
	if (!strcmp(rules, "pre2020")) {
		p->has[KP_F_INHERIT_TAINT] = false;
		p->has[KP_F_SYMBOL_GET_GPL] = false;
	} else if (!strcmp(rules, "2020")) {
		p->has[KP_F_INHERIT_TAINT] = true;
		p->has[KP_F_SYMBOL_GET_GPL] = false;
	} else if (!strcmp(rules, "2023")) {
		p->has[KP_F_INHERIT_TAINT] = true;
		p->has[KP_F_SYMBOL_GET_GPL] = true;
	} else {
		return -1;
	}
	p->name = kp_profile_rules_name(p);
	return 0;
}

const char *kp_feature_name(enum kp_feature f)
{
	for (size_t i = 0; i < KP_ARRAY_SIZE(rows); i++)
		if (rows[i].f == f)
			return rows[i].name;
	return "?";
}

const char *kp_profile_rules_name(const struct kp_profile *p)
{
	if (p->has[KP_F_SYMBOL_GET_GPL])
		return p->has[KP_F_INHERIT_TAINT] ? "2023" : "2023-without-2020";
	return p->has[KP_F_INHERIT_TAINT] ? "2020" : "pre2020";
}

void kp_profile_btf_rules(const struct kp_profile *p, struct kp_btf_rules *r)
{
	r->layout_header = p->has[KP_F_BTF_LAYOUT];
	r->relocate = p->has[KP_F_BTF_BASE_RELOCATE];
	r->datasec_printable = p->has[KP_F_BTF_DATASEC_PRINTABLE];
}
