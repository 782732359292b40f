// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * profile.c: kp_profile_for_kernel() over a matrix of versions and distributions (mainline
 * releases, stable backports, Debian deltas), the beyond-newest-modelled case, the named rule
 * profiles and version parsing. The expected flags are written out by hand from the table's
 * sources (loader-rules.md §7.4, §8.4, §13; the kernel trees), not computed.
 */
#include "builder.h"

/*
 * One character per enum kp_feature, in enum order, grouped by five:
 *   inherit_taint, symbol_get_gpl, inherit_msg_symbol, taint_after_dup, no_legacy_tables |
 *   namespaces, module_namespaces, this_module_size, got_exempt, errno_in_unknown |
 *   license_second_msg, test_taint, shndx_check, symstrtab_checks, ext_modversions |
 *   kflagstab, init_eexist_ebusy, taint_fwctl, vermagic_rt_first, missing_version_fatal |
 *   module_hash_blacklist, elf_sechdr_checks, elf_check_msgs, sec0_before_shstrndx,
 *   machine_keyring, module_platform_keyring, mok_trusted_by_default, percpu_relocations,
 *   btf_base_relocate, btf_datasec_printable_names, btf_layout_header, btf_mismatch_warn_once,
 *   mldsa_signatures, ima_decompressed_modules, revocation_all_keyrings, printk_lockless_store
 */
/* the table's distro column, short */
#define UP  KP_DISTRO_UPSTREAM
#define DEB KP_DISTRO_DEBIAN

static const struct row {
	const char *version;
	enum kp_distro distro;
	const char *flags;
	const char *rules;
	bool beyond;
} rows[] = {
	/* clang-format off */
	{ "4.14.232", UP, "00000 00000 00000 00000 00000 00000 00000 0", "pre2020", false },
	{ "4.14.233", UP, "10000 00000 00000 00000 00000 00000 00000 0", "2020", false },
	{ "4.14.326", UP, "11000 00000 00000 00000 00000 00000 00000 0", "2023", false },
	{ "4.19.190", UP, "00000 00000 00000 00000 00000 00000 00000 0", "pre2020", false },
	{ "4.19.191", UP, "10000 00000 00000 00000 00000 00000 00000 0", "2020", false },
	{ "4.19.295", UP, "11000 00000 00000 00000 00000 00000 00000 0", "2023", false },
	{ "5.4.0", UP, "00000 10000 00000 00000 00000 00000 00000 0", "pre2020", false },
	{ "5.4.109", UP, "00000 10000 00000 00000 00000 00000 00000 0", "pre2020", false },
	{ "5.4.110", UP, "00000 10000 00000 00000 01000 00000 00000 0", "pre2020", false },
	{ "5.4.117", UP, "00000 10000 00000 00000 01000 00000 00000 0", "pre2020", false },
	{ "5.4.118", UP, "10000 10000 00000 00000 01000 00000 00000 0", "2020", false },
	{ "5.4.257", UP, "11000 10000 00000 00000 01000 00000 00000 0", "2023", false },
	{ "5.8.18", UP, "00000 10000 00000 00000 00000 00000 00000 0", "pre2020", false },
	{ "5.9.0", UP, "10000 10000 00000 00000 00000 00000 00000 0", "2020", false },
	{ "5.10.0", UP, "10000 10001 00000 00000 00000 00000 00000 0", "2020", false },
	{ "5.10.19", UP, "10000 10001 00000 00000 00000 00000 00000 0", "2020", false },
	{ "5.10.20", UP, "10000 10011 00000 00000 00000 00000 00000 0", "2020", false },
	{ "5.10.27", UP, "10000 10011 00000 00000 00000 00000 00000 0", "2020", false },
	{ "5.10.28", UP, "10000 10011 00000 00000 01000 00000 00000 0", "2020", false },
	{ "5.10.194", UP, "10000 10011 00000 00000 01000 00000 00000 0", "2020", false },
	{ "5.10.195", UP, "11000 10011 00000 00000 01000 00000 00000 0", "2023", false },
	{ "5.10.223", DEB, "11000 10011 00000 00001 11000 11000 00000 0", "2023", false },
	{ "5.11.0", UP, "10000 10001 00000 00000 00000 00000 00000 0", "2020", false },
	{ "5.12.0", UP, "10001 10011 00000 00000 01000 00000 00000 0", "2020", false },
	{ "5.15.130", UP, "10001 10011 00000 00000 01000 00000 00000 1", "2020", false },
	{ "5.15.131", UP, "11001 10011 00000 00000 01000 00000 00000 1", "2023", false },
	{ "5.18.19", UP, "10001 10011 00000 00000 01101 00000 00000 1", "2020", false },
	{ "5.19.0", UP, "10101 10011 00000 00000 01101 00000 00000 1", "2020", false },
	{ "6.0.0", UP, "10101 10011 01000 00000 01101 00000 00000 1", "2020", false },
	{ "6.1.51", UP, "10101 10011 01000 00000 01101 00000 00000 1", "2020", false },
	{ "6.1.52", UP, "11101 10011 01000 00000 01101 00000 00000 1", "2023", false },
	{ "6.1.129", DEB, "11101 10011 01000 00001 11101 11000 00000 1", "2023", false },
	{ "6.1.167", UP, "11101 10011 01000 00000 01101 00000 00000 1", "2023", false },
	{ "6.1.168", UP, "11101 10011 01100 00000 01101 00000 00000 1", "2023", false },
	/* 743f8cae549a (init -EEXIST -> -EBUSY) is not in the 6.1.192 tree nor its changelog */
	{ "6.1.192", UP, "11101 10011 01100 00000 01101 00000 00000 1", "2023", false },
	{ "6.3.13", UP, "10101 10011 01000 00000 01101 00000 00000 1", "2020", false },
	{ "6.4.0", UP, "10111 10111 11000 00000 01101 00000 00000 1", "2020", false },
	{ "6.4.15", UP, "11111 10111 11000 00000 01101 00000 00000 1", "2023", false },
	{ "6.5.1", UP, "10111 10111 11000 00000 01101 00000 00000 1", "2020", false },
	{ "6.5.2", UP, "11111 10111 11000 00000 01101 00000 00000 1", "2023", false },
	{ "6.6.0", UP, "11111 10111 11000 00000 01101 00000 00000 1", "2023", false },
	{ "6.12.36", UP, "11111 10111 11000 00000 01101 00011 01001 1", "2023", false },
	{ "6.12.37", UP, "11111 10111 11000 00000 01101 00011 01001 1", "2023", false },
	{ "6.12.37", DEB, "11111 10111 11000 00001 11101 11011 01001 1", "2023", false },
	{ "6.12.79", UP, "11111 10111 11000 00000 01101 00011 01001 1", "2023", false },
	{ "6.12.80", UP, "11111 10111 11100 00000 01101 00011 01001 1", "2023", false },
	{ "6.12.116", UP, "11111 10111 11100 00000 01101 00011 01001 1", "2023", false },
	{ "6.12.117", DEB, "11111 10111 11100 00001 11111 11011 01001 1", "2023", false },
	/* ... nor in 6.12.118's */
	{ "6.12.118", UP, "11111 10111 11100 00000 01111 00011 01001 1", "2023", false },
	{ "6.13.0", UP, "11111 10111 11010 00010 01111 00011 01001 1", "2023", false },
	{ "6.14.0", UP, "11111 10111 11011 00010 01111 00011 01001 1", "2023", false },
	{ "6.15.0", UP, "11111 10111 11011 00110 01111 00011 01001 1", "2023", false },
	{ "6.16.0", UP, "11111 11111 11011 00110 01111 00011 01001 1", "2023", false },
	{ "6.16.9", DEB, "11111 11111 11011 00111 11111 11011 01001 1", "2023", false },
	{ "6.17.0", DEB, "11111 11111 11011 00111 01111 10011 01001 1", "2023", false },
	/* c200892b46ba (IMA appraises a compressed module after decompressing it): 6.19 */
	{ "6.18.0", UP, "11111 11111 11011 00110 01111 00011 01001 1", "2023", false },
	{ "6.19.0", UP, "11111 11111 11011 00110 01111 00011 01011 1", "2023", false },
	{ "7.0.0", UP, "11111 11111 11111 00110 01111 00111 01111 1", "2023", false },
	{ "7.1.0", UP, "11111 11111 11111 11110 01111 00111 01111 1", "2023", false },
	{ "7.2.13", UP, "11111 11111 11111 11110 01111 00111 11111 1", "2023", false },
	{ "7.2.13", DEB, "11111 11111 11111 11111 01111 10111 11111 1", "2023", false },
	/* Beyond the newest modelled kernel: the 7.2 behaviour, flagged. */
	{ "7.3.0", UP, "11111 11111 11111 11110 01111 00111 11111 1", "2023", true },
	{ "8.0.0", DEB, "11111 11111 11111 11111 01111 10111 11111 1", "2023", true },
	/* clang-format on */
};

static void matrix(struct tap *t)
{
	for (size_t i = 0; i < KP_ARRAY_SIZE(rows); i++) {
		const struct row *r = &rows[i];
		struct kp_profile p;
		struct kp_kver v;
		char got[2 * KP_F_NFEATURES + 1], what[96];
		size_t k = 0;

		if (kp_kver_parse(r->version, &v) < 0)
			abort();
		kp_profile_for_kernel(&p, &v, r->distro);
		for (int f = 0; f < KP_F_NFEATURES; f++) {
			if (f && f % 5 == 0)
				got[k++] = ' ';
			got[k++] = p.has[f] ? '1' : '0';
		}
		got[k] = '\0';
		snprintf(what, sizeof(what), "%s %s: features", r->version,
			 r->distro == KP_DISTRO_DEBIAN ? "Debian" : "upstream");
		tap_is_str(t, got, r->flags, what);
		snprintf(what, sizeof(what), "%s: rules name", r->version);
		tap_is_str(t, p.name, r->rules, what);
		tap_ok(t,
		       p.beyond_modelled == r->beyond && p.version_known &&
			       kp_kver_cmp(&p.version, &v) == 0,
		       "%s: beyond_modelled %d, version kept", r->version, r->beyond);
	}
}

static void named_and_latest(struct tap *t)
{
	struct kp_profile p;
	struct kp_kver v = { 6, 12, 37 };

	kp_profile_for_kernel(&p, &v, KP_DISTRO_UPSTREAM);
	tap_is_int(t, kp_profile_apply_rules(&p, "pre2020"), 0, "apply pre2020");
	tap_ok(t,
	       !p.has[KP_F_INHERIT_TAINT] && !p.has[KP_F_SYMBOL_GET_GPL] && p.has[KP_F_NAMESPACES],
	       "pre2020 clears the two rules only");
	tap_is_str(t, p.name, "pre2020", "name follows");
	kp_profile_apply_rules(&p, "2020");
	tap_is_str(t, p.name, "2020", "2020");
	kp_profile_apply_rules(&p, "2023");
	tap_is_str(t, p.name, "2023", "2023");
	tap_is_int(t, kp_profile_apply_rules(&p, "auto"), 0, "auto: unchanged");
	tap_is_int(t, kp_profile_apply_rules(&p, "2021"), -1, "unknown name");
	p.has[KP_F_INHERIT_TAINT] = false;
	tap_is_str(t, kp_profile_rules_name(&p), "2023-without-2020", "2023 without 2020");

	kp_profile_latest(&p, KP_DISTRO_UPSTREAM);
	tap_ok(t,
	       !p.version_known && p.has[KP_F_KFLAGSTAB] && !p.has[KP_F_MISSING_VERSION_FATAL] &&
		       !p.has[KP_F_MODULE_HASH_BLACKLIST],
	       "latest upstream: every mainline behaviour, no distribution delta");
	kp_profile_latest(&p, KP_DISTRO_DEBIAN);
	tap_ok(t, p.has[KP_F_MISSING_VERSION_FATAL] && !p.has[KP_F_MODULE_HASH_BLACKLIST],
	       "latest Debian: fatal missing version, no hash blacklist (dropped in 6.17)");
	tap_is_str(t, kp_profile_newest_modelled(), "7.2", "newest modelled");
	tap_is_str(t, kp_feature_name(KP_F_GOT_EXEMPT), "got_symbol_exempt", "feature name");
	tap_is_str(t, kp_feature_name(KP_F_MODULE_HASH_BLACKLIST), "module_hash_blacklist",
		   "distribution feature name");
}

static void parse(struct tap *t, const char *s, int r, int major, int minor, int patch)
{
	struct kp_kver v;
	int got = kp_kver_parse(s, &v);

	tap_ok(t, got == r && (r < 0 || (v.major == major && v.minor == minor && v.patch == patch)),
	       "kp_kver_parse(\"%s\") = %d (%d.%d.%d)", s, got, v.major, v.minor, v.patch);
}

int main(void)
{
	struct tap t = { 0 };

	matrix(&t);
	named_and_latest(&t);
	parse(&t, "6.12.118+deb12-amd64", 0, 6, 12, 118);
	parse(&t, "5.10.0-21-amd64", 0, 5, 10, 0);
	parse(&t, "7.2.13+deb14-amd64", 0, 7, 2, 13);
	parse(&t, "6.1", 0, 6, 1, 0);
	parse(&t, "6", -1, 0, 0, 0);
	parse(&t, "1.2.3", -1, 0, 0, 0);
	parse(&t, "abc", -1, 0, 0, 0);
	parse(&t, "6.x", -1, 0, 0, 0);
	tap_ok(&t,
	       kp_release_is_debian("6.12.37+deb13-amd64") &&
		       kp_release_is_debian("6.1.0-57-amd64") && !kp_release_is_debian("6.12.37"),
	       "kp_release_is_debian()");
	{
		static const char *const yes[] = { "6.1.0-57-rt-amd64", "10.20.0-1-arm64" };
		static const char *const no[] = { "6.1.0-57-generic", "6.1.1-57-amd64",
						  "6.1.0-amd64",      "6.1.0-57-",
						  "6.1.0-57-amd64x",  ".1.0-5-amd64" };
		bool all = true;

		for (size_t i = 0; i < KP_ARRAY_SIZE(yes); i++)
			all = all && kp_release_is_debian(yes[i]);
		for (size_t i = 0; i < KP_ARRAY_SIZE(no); i++)
			all = all && !kp_release_is_debian(no[i]);
		tap_ok(&t, all, "kp_release_is_debian(): X.Y.0-N-<Debian flavour> only");
	}
	return tap_done(&t);
}
