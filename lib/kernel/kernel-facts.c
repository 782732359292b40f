// SPDX-License-Identifier: LGPL-2.1-or-later
#include "kernel-facts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel-config.h"
#include "read/btf.h"
#include "sig-keys.h"
#include "vermagic.h"

/* @what as the assumption at @at (<= f->nassumptions), those from @at on after it. */
static int assume_at(struct kp_kernel_facts *f, size_t at, const char *what)
{
	const char **p = kp_arena_alloc(&f->arena, (f->nassumptions + 1) * sizeof(*p));
	const char *s = kp_arena_strdup(&f->arena, what);

	if (!p || !s)
		return -1;
	if (f->nassumptions) {
		memcpy(p, f->assumptions, at * sizeof(*p));
		memcpy(p + at + 1, f->assumptions + at, (f->nassumptions - at) * sizeof(*p));
	}
	p[at] = s;
	f->nassumptions++;
	f->assumptions = p;
	return 0;
}

int kp_facts_assume(struct kp_kernel_facts *f, const char *what)
{
	return assume_at(f, f->nassumptions, what);
}

static const char no_key_source[] =
	"no key source (kernel image, /proc/keys, --trusted-cert): signed "
	"modules are assumed to verify against the kernel's keys";

int kp_facts_keys_settled(struct kp_kernel_facts *f)
{
	if (!f->key_source_pending)
		return 0;
	f->key_source_pending = false;
	if (f->keys && kp_keyring_has_kernel_keys(f->keys))
		return 0;
	return assume_at(f, f->key_source_at, no_key_source);
}

/* One or more decimal digits at *@p, skipped. */
static bool skip_digits(const char **p)
{
	const char *s = *p;

	while (**p >= '0' && **p <= '9')
		(*p)++;
	return *p > s;
}

bool kp_release_is_debian(const char *release)
{
	static const char *const flavours[] = {
		"amd64",    "cloud-amd64", "rt-amd64",	 "arm64",   "cloud-arm64", "rt-arm64",
		"686",	    "686-pae",	   "rt-686-pae", "s390x",   "armmp",	   "armmp-lpae",
		"rt-armmp", "powerpc64le", "mips64r2el", "loong64", "riscv64",	   "marvell",
		"rpi",	    "4kc-malta",   "octeon",
	};
	const char *p = release;
	bool deb = false;

	if (!release)
		return false;
	if (strstr(release, "+deb"))
		return true;
	/*
	 * Debian's ABI names: X.Y.0-N-<flavour> (Ubuntu uses X.Y.0-N-generic and friends). Parsed
	 * by hand: the signature rule asks once per module (a regcomp() each time cost a warm
	 * check of the 6.1 tree (4023 modules) a sixth of its CPU).
	 */
	if (!skip_digits(&p) || *p++ != '.' || !skip_digits(&p) || strncmp(p, ".0-", 3))
		return false;
	p += 3;
	if (!skip_digits(&p) || *p++ != '-')
		return false;
	for (size_t i = 0; i < KP_ARRAY_SIZE(flavours) && !deb; i++)
		deb = !strcmp(p, flavours[i]);
	return deb;
}

/* The kernel's vermagic from its release and config (vermagic.c); NULL when not derivable. */
/* btf_parse_vmlinux() of the kernel's BTF (kernel-facts.h). */
int kp_facts_vmlinux_btf(struct kp_kernel_facts *f, const unsigned char *data, size_t len,
			 const char *source, const char *missing)
{
	struct kp_btf_rules rules;
	struct kp_btf_verdict v;
	struct kp_btf *b;
	char msg[600];
	const char *what = f->btf_mismatch_fatal ? "a mismatch fails the load late (\"failed to "
						   "validate module [name] BTF\")"
						 : "a mismatch only drops the module's BTF "
						   "(MODULE_ALLOW_BTF_MISMATCH)";

	if (!f->btf_modules)
		return 0;
	if (!data) {
		snprintf(msg, sizeof(msg),
			 "each module's .BTF is assumed to match the kernel's BTF (%s): %s; give "
			 "--vmlinux-btf",
			 missing ? missing : "no vmlinux BTF", what);
		return kp_facts_assume(f, msg);
	}
	kp_profile_btf_rules(&f->profile, &rules);
	b = kp_arena_alloc(&f->arena, sizeof(*b));
	if (!b)
		return -1;
	if (kp_btf_parse_base(b, data, len, &rules, &v) < 0) {
		if (v.err == -ENOMEM)
			return -1;
		snprintf(msg, sizeof(msg),
			 "each module's .BTF is assumed to match the kernel's BTF: %s does not "
			 "parse as the kernel's BTF (%s, %d); %s",
			 source ? source : "the vmlinux BTF", v.why, v.err, what);
		return kp_facts_assume(f, msg);
	}
	f->vmlinux_btf = b;
	f->vmlinux_btf_source = kp_arena_strdup(&f->arena, source ? source : "the vmlinux BTF");
	return f->vmlinux_btf_source ? 0 : -1;
}

static const char *build_vermagic(struct kp_kernel_facts *f, const struct kp_kconfig *c,
				  const char *release)
{
	char buf[512];

	if (kp_vermagic_build(c, release, f->profile.has[KP_F_VERMAGIC_RT_FIRST], buf,
			      sizeof(buf)) < 0)
		return NULL;
	return kp_arena_strdup(&f->arena, buf);
}

/* The kernel command line parameters the loader reads (last one wins, as the kernel's parser). */
static int apply_cmdline(struct kp_kernel_facts *f, const char *cmdline, struct kp_err *err)
{
	char *copy = kp_arena_strdup(&f->arena, cmdline), *save = NULL;

	if (!copy)
		return kp_err_set(err, "out of memory");
	for (char *t = strtok_r(copy, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save)) {
		if (!strncmp(t, "module.sig_enforce", 18) && (t[18] == '\0' || t[18] == '=')) {
			/*
			 * a bool parameter: bare, 1/y/Y/on set it; it can never be cleared once set
			 */
			const char *v = t[18] ? t + 19 : "1";

			if (strchr("1yY", v[0]) || !strcmp(v, "on"))
				f->sig_enforce = true;
		} else if (!strncmp(t, "module_blacklist=", 17)) {
			char *list = t + 17, *s2 = NULL;
			size_t n = 0;
			const char **bl;

			for (const char *p = list; *p; p++)
				n += *p == ',';
			bl = kp_arena_alloc(&f->arena, (n + 1) * sizeof(*bl));
			if (!bl)
				return kp_err_set(err, "out of memory");
			n = 0;
			for (char *m = strtok_r(list, ",", &s2); m; m = strtok_r(NULL, ",", &s2))
				bl[n++] = m;
			f->blacklist = bl;
			f->nblacklist = n;
		} else if (!strncmp(t, "lockdown=", 9)) {
			f->lockdown =
				!strcmp(t + 9, "integrity") || !strcmp(t + 9, "confidentiality");
		}
	}
	return 0;
}

void kp_facts_opts_init(struct kp_facts_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->sig_enforce = -1;
	o->lockdown = -1;
	o->secure_boot = -1;
	o->mok_trusted = -1;
	o->modversions = -1;
	o->force_load = -1;
	o->allow_missing_ns = -1;
}

static bool pick(int override, bool from_config)
{
	return override >= 0 ? override : from_config;
}

/* A kernel newer than any kopolicy models: said once, in the report and on stderr. */
static void note_beyond_modelled(struct kp_kernel_facts *f, const struct kp_kver *v)
{
	char buf[256];

	snprintf(buf, sizeof(buf),
		 "kernel %d.%d is newer than the newest loader kopolicy models (%s): the %s "
		 "behaviour is assumed",
		 v->major, v->minor, kp_profile_newest_modelled(), kp_profile_newest_modelled());
	if (kp_facts_assume(f, buf) == 0)
		f->beyond_modelled = f->assumptions[f->nassumptions - 1];
}

/*
 * What UEFI Secure Boot switches on (D6.1.192, D6.12): efi_set_secure_boot() locks the
 * kernel down (LOCK_DOWN_IN_EFI_SECURE_BOOT, Debian's patch) and ima_efi.c's
 * arch_get_ima_policy() calls set_module_sig_enforced() (IMA_ARCH_POLICY): unsigned modules
 * are refused with EKEYREJECTED before lockdown's EPERM could apply, and module.sig_enforce=0
 * cannot undo it. And which keyrings check module signatures (struct kp_keyring_model).
 */
static int secure_boot(struct kp_kernel_facts *f, const struct kp_facts_opts *o,
		       const struct kp_kconfig *c)
{
	struct kp_keyring_model *m = &f->keymodel;
	bool cfg = o->config_path != NULL;

	f->secure_boot = o->secure_boot;
	if (f->secure_boot == 1) {
		bool ima = cfg ? kp_kconfig_is_y(c, "CONFIG_IMA_ARCH_POLICY") : true;
		bool ld = cfg ? kp_kconfig_is_y(c, "CONFIG_LOCK_DOWN_IN_EFI_SECURE_BOOT") : true;

		if (ima && f->module_sig && o->sig_enforce < 0 && !f->sig_enforce)
			f->sig_enforce = f->sb_sig_enforce = true;
		if (ld && o->lockdown < 0 && !f->lockdown)
			f->lockdown = f->sb_lockdown = true;
		if (!cfg && kp_facts_assume(f, "no kernel config: under Secure Boot, "
					       "IMA_ARCH_POLICY=y (module signatures enforced) and "
					       "LOCK_DOWN_IN_EFI_SECURE_BOOT=y assumed") < 0)
			return -1;
	}
	/* MOK and MokListXRT are loaded only under Secure Boot (load_uefi_certs()) */
	m->secure_boot = f->secure_boot != 0;
	m->machine_keyring = f->profile.has[KP_F_MACHINE_KEYRING] &&
			     (!cfg || kp_kconfig_is_y(c, "CONFIG_INTEGRITY_MACHINE_KEYRING"));
	m->mok_trusted = f->profile.has[KP_F_MOK_TRUSTED_DEFAULT] || o->mok_trusted == 1;
	/*
	 * Unknown: shim sets MokListTrustedRT unless mokutil --untrust-mok (the Secure Boot
	 * oracle's boots: bookworm's shim 16.1 lists it in the MOK config table untouched).
	 */
	if (!m->mok_trusted && o->mok_trusted < 0 && m->machine_keyring && f->keys &&
	    kp_keyring_has_mok(f->keys)) {
		m->mok_trusted = true;
		if (kp_facts_assume(f, "MokListTrustedRT unknown: taken as set, as shim sets it "
				       "(MOK keys in .machine; --trust-mok no if mokutil "
				       "--untrust-mok was used)") < 0)
			return -1;
	}
	m->platform_keyring = !cfg || kp_kconfig_is_y(c, "CONFIG_INTEGRITY_PLATFORM_KEYRING");
	m->platform_for_modules = f->profile.has[KP_F_MODULE_PLATFORM_KEYRING];
	m->revocation_list = cfg && kp_kconfig_is_y(c, "CONFIG_SYSTEM_REVOCATION_LIST");
	m->revocation_first = f->profile.has[KP_F_REVOCATION_ALL_KEYRINGS];
	return 0;
}

/*
 * IMA appraisal of module reads (ima-policy.h): the configuration's IMA_APPRAISE* options
 * (Debian's when it is unknown: appraisal, the boot parameter and the arch policy, no modsig),
 * the boot command line and Secure Boot; or the active policy the context read.
 */
static int ima_facts(struct kp_kernel_facts *f, const struct kp_facts_opts *o,
		     const struct kp_kconfig *c, struct kp_err *err)
{
	bool cfg = o->config_path != NULL;
	struct kp_ima_inputs in = {
		.cmdline = o->cmdline,
		.config_known = cfg,
		.ima_appraise = !cfg || kp_kconfig_is_y(c, "CONFIG_IMA_APPRAISE"),
		.bootparam = !cfg || kp_kconfig_is_y(c, "CONFIG_IMA_APPRAISE_BOOTPARAM"),
		.arch_policy = !cfg || kp_kconfig_is_y(c, "CONFIG_IMA_ARCH_POLICY"),
		.module_sig = f->module_sig,
		.require_module_sigs =
			cfg && kp_kconfig_is_y(c, "CONFIG_IMA_APPRAISE_REQUIRE_MODULE_SIGS"),
		.signed_init = cfg && kp_kconfig_is_y(c, "CONFIG_IMA_APPRAISE_SIGNED_INIT"),
		.modsig = cfg && kp_kconfig_is_y(c, "CONFIG_IMA_APPRAISE_MODSIG"),
		.decompressed = f->profile.has[KP_F_IMA_DECOMPRESSED_MODULES],
		.secure_boot = f->secure_boot,
		.active = o->ima_policy,
		.active_source = o->ima_policy_source,
	};

	/* kmod 31+ passes a compressed module the kernel can decompress to finit_module() */
	f->module_decompress = !cfg || kp_kconfig_is_y(c, "CONFIG_MODULE_DECOMPRESS");
	if (kp_ima_policy_build(&f->ima, &in, &f->arena, err) < 0)
		return -1;
	if (!kp_ima_policy_appraises_modules(&f->ima))
		return 0;
	if (!o->ima_policy &&
	    kp_facts_assume(f, "IMA: the boot command line's built-in policy is taken as the "
			       "active one (no policy loaded after boot, e.g. from "
			       "/etc/ima/ima-policy; give --ima-policy)") < 0)
		return kp_err_set(err, "out of memory");
	if (!cfg &&
	    kp_facts_assume(f, "IMA: no kernel config: IMA_APPRAISE=y, IMA_APPRAISE_BOOTPARAM=y, "
			       "IMA_ARCH_POLICY=y, no IMA_APPRAISE_MODSIG, MODULE_DECOMPRESS=y "
			       "(Debian's) assumed") < 0)
		return kp_err_set(err, "out of memory");
	return 0;
}

/*
 * The page size a Debian release's flavour names: "-arm64-16k" (CONFIG_ARM64_16K_PAGES,
 * PAGE_SHIFT=14 in 7.2.13+deb14-arm64-16k's config), "-powerpc64le-64k" (PPC_64K_PAGES,
 * PAGE_SHIFT=16 in 7.2.13+deb14-powerpc64le-64k's). Other flavours do not say (ppc64el's
 * plain flavour changed from 64 KiB to 4 KiB): 0.
 */
static unsigned release_page_shift(const char *release)
{
	size_t n = release ? strlen(release) : 0;

	if (!kp_release_is_debian(release) || n < 4)
		return 0;
	if (!strcmp(release + n - 4, "-16k"))
		return 14;
	if (!strcmp(release + n - 4, "-64k"))
		return 16;
	return 0;
}

/*
 * What a System.map or kallsyms cannot say of vmlinux exports it alone names (system-map.c):
 * their CRCs, which check_version() compares (kernel/module/version.c, v5.10 .. v7.2; with
 * none the check passes, so a CRC mismatch or Debian's rejected missing __versions entry
 * goes unseen), and, v5.5+, their namespaces, which verify_namespace_is_imported()
 * checks (kernel/module/main.c, v5.4 .. v7.2). Said as assumptions, never guessed absent.
 */
static int note_label_base(struct kp_kernel_facts *f, const struct kp_kernel_base *base)
{
	const unsigned labels = KP_SRC_SYSTEM_MAP | KP_SRC_KALLSYMS;
	const unsigned known = KP_SRC_SYMVERS | KP_SRC_VMLINUX;
	size_t nocrc = 0, nons = 0, n = base ? kp_base_count(base) : 0;
	char msg[400];

	/* no label source loaded (a Module.symvers or vmlinux base): nothing to scan */
	if (!base || !(kp_base_sources(base) & labels))
		return 0;

	for (size_t i = 0; i < n; i++) {
		const struct kp_ksym *k = kp_base_at(base, i);

		if (!k->vmlinux || !(k->sources & labels) || (k->sources & known))
			continue;
		nocrc += !k->has_crc;
		nons += !k->ns_known;
	}
	if (f->modversions && nocrc) {
		snprintf(msg, sizeof(msg),
			 "%zu vmlinux exports known only from a System.map or kallsyms have no "
			 "CRC: their symbol versions are not checked (a CRC mismatch or a missing "
			 "__versions entry is not predicted; give Module.symvers or the vmlinux)",
			 nocrc);
		if (kp_facts_assume(f, msg) < 0)
			return -1;
	}
	if (f->profile.has[KP_F_NAMESPACES] && nons) {
		snprintf(msg, sizeof(msg),
			 "%zu vmlinux exports known only from a System.map or kallsyms have no "
			 "namespace: a missing MODULE_IMPORT_NS() for them is not predicted (give "
			 "Module.symvers or the vmlinux)",
			 nons);
		if (kp_facts_assume(f, msg) < 0)
			return -1;
	}
	return 0;
}

static int build(struct kp_kernel_facts *f, const struct kp_facts_opts *o,
		 const struct kp_kernel_base *base, const struct kp_kconfig *c, const char *release,
		 const char *version, struct kp_err *err)
{
	enum kp_distro distro;
	struct kp_kver v;
	const char *mldsa;

	if (!release && base)
		release = kp_base_release(base);
	f->release = release ? kp_arena_strdup(&f->arena, release) : NULL;

	if (!o->distro || !strcmp(o->distro, "auto"))
		distro = kp_release_is_debian(release) ? KP_DISTRO_DEBIAN : KP_DISTRO_UPSTREAM;
	else if (!strcmp(o->distro, "debian"))
		distro = KP_DISTRO_DEBIAN;
	else if (!strcmp(o->distro, "upstream"))
		distro = KP_DISTRO_UPSTREAM;
	else
		return kp_err_set(err, "unknown --distro '%s' (auto, debian or upstream)",
				  o->distro);

	/* The upstream version: explicit, else the config header, else the release string. */
	if (!version && c->version)
		version = c->version;
	if (!version)
		version = release;
	if (version && kp_kver_parse(version, &v) == 0) {
		kp_profile_for_kernel(&f->profile, &v, distro);
		if (!o->version && !c->version && release && kp_release_is_debian(release) &&
		    v.patch == 0)
			kp_facts_assume(
				f, "the kernel's stable patch level is unknown (Debian release "
				   "names hide it): give --kernel-config or --kernel-version");
		if (f->profile.beyond_modelled)
			note_beyond_modelled(f, &v);
	} else {
		kp_profile_latest(&f->profile, distro);
		kp_facts_assume(f,
				"kernel version unknown: the newest loader behaviour is assumed");
	}
	if (kp_profile_apply_rules(&f->profile, o->rules) < 0)
		return kp_err_set(err, "unknown rule set '%s' (auto, pre2020, 2020 or 2023)",
				  o->rules);
	f->missing_version_fatal = f->profile.has[KP_F_MISSING_VERSION_FATAL];

	if (o->config_path) {
		f->modversions = pick(o->modversions, kp_kconfig_is_y(c, "CONFIG_MODVERSIONS"));
		f->module_sig = kp_kconfig_is_y(c, "CONFIG_MODULE_SIG");
		f->sig_enforce =
			pick(o->sig_enforce, kp_kconfig_is_y(c, "CONFIG_MODULE_SIG_FORCE"));
		f->force_load = pick(o->force_load, kp_kconfig_is_y(c, "CONFIG_MODULE_FORCE_LOAD"));
		f->allow_missing_ns =
			pick(o->allow_missing_ns,
			     kp_kconfig_is_y(c, "CONFIG_MODULE_ALLOW_MISSING_NAMESPACE_IMPORTS"));
		f->livepatch = kp_kconfig_is_y(c, "CONFIG_LIVEPATCH");
		/*
		 * btf_module_notify(), v5.11+: a .BTF that does not parse fails the load, unless
		 * MODULE_ALLOW_BTF_MISMATCH (v5.18+) makes it a warning.
		 */
		f->btf_modules = kp_kconfig_is_y(c, "CONFIG_DEBUG_INFO_BTF_MODULES");
		f->btf_mismatch_fatal =
			f->btf_modules && !kp_kconfig_is_y(c, "CONFIG_MODULE_ALLOW_BTF_MISMATCH");
		f->mldsa_waive_authattrs =
			kp_kconfig_is_y(c, "CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA");
		mldsa = kp_kconfig_get(c, "CONFIG_CRYPTO_MLDSA");
		f->no_crypto_mldsa = !mldsa || (strcmp(mldsa, "y") && strcmp(mldsa, "m"));
		f->page_shift = kp_kconfig_page_shift(c);

	} else {
		f->modversions = pick(o->modversions, true);
		f->module_sig = true;
		f->sig_enforce = pick(o->sig_enforce, false);
		f->force_load = pick(o->force_load, false);
		f->allow_missing_ns = pick(o->allow_missing_ns, false);
		f->livepatch = true;
		kp_facts_assume(f, "no kernel config: MODVERSIONS=y, MODULE_SIG=y (not enforced), "
				   "MODULE_FORCE_LOAD=n, LIVEPATCH=y assumed");
	}
	if (!f->page_shift)
		f->page_shift = release_page_shift(f->release);
	f->lockdown = o->lockdown > 0;
	f->init_flags = o->init_flags;
	f->signatures_trusted = !o->untrusted_signatures;
	f->keys = o->keys;
	if (secure_boot(f, o, c) < 0)
		return kp_err_set(err, "out of memory");
	if (f->module_sig && f->signatures_trusted &&
	    (!f->keys || !kp_keyring_has_kernel_keys(f->keys))) {
		if (o->keys_pending) {
			/* decided by kp_facts_keys_settled(), the assumption kept in its place */
			f->key_source_pending = true;
			f->key_source_at = f->nassumptions;
		} else {
			kp_facts_assume(f, no_key_source);
		}
	}
	if (o->cmdline && apply_cmdline(f, o->cmdline, err) < 0)
		return -1;
	if (ima_facts(f, o, c, err) < 0)
		return -1;
	if (o->vermagic)
		f->vermagic = kp_arena_strdup(&f->arena, o->vermagic);
	else if (o->config_path)
		f->vermagic = build_vermagic(f, c, release);
	if (!f->vermagic)
		kp_facts_assume(f, "the kernel's vermagic is unknown: vermagic not checked (give "
				   "--kernel-release with --kernel-config, or --vermagic)");
	if (note_label_base(f, base) < 0)
		return kp_err_set(err, "out of memory");
	return 0;
}

int kp_facts_build(struct kp_kernel_facts *f, const struct kp_facts_opts *o,
		   const struct kp_kernel_base *base, struct kp_err *err)
{
	struct kp_kconfig c;
	const char *release = o->release;
	const char *version = o->version;
	int r;

	memset(f, 0, sizeof(*f));
	memset(&c, 0, sizeof(c));
	if (o->config_path &&
	    kp_kconfig_load_cached(&c, o->config_root, o->config_path, o->base_cache, err) < 0) {
		kp_kconfig_release(&c);
		return -1;
	}
	r = build(f, o, base, &c, release, version, err);
	if (c.damaged && *c.damaged) {
		/* a lookup met a damaged base-cache table: everything again from the file */
		kp_facts_release(f);
		if (kp_kconfig_load_in(&c, o->config_root, o->config_path, err) < 0) {
			kp_kconfig_release(&c);
			return -1;
		}
		r = build(f, o, base, &c, release, version, err);
	}
	kp_kconfig_release(&c);
	return r;
}

void kp_facts_release(struct kp_kernel_facts *f)
{
	if (f->vmlinux_btf)
		kp_btf_release(f->vmlinux_btf);
	kp_base_map_release(&f->vmlinux_btf_map);
	kp_arena_release(&f->arena);
	memset(f, 0, sizeof(*f));
}
