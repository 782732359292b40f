// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ima.c and kernel/ima-policy.c: IMA's appraisal of a module read (ima_post_read_file() ->
 * process_measurement(MODULE_CHECK), ima_load_data(LOADING_MODULE) for init_module()) under
 * the built-in policies (ima_policy=secure_boot, appraise_tcb, the x86 arch policy), an
 * active policy as securityfs lists it, and ima_appraise=. Expected verdicts are worked out
 * by hand from the 6.1.192 and 6.12.118 trees (ima_policy.c, ima_appraise.c, ima_main.c,
 * ima_efi.c) and c200892b46ba for 6.19+.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "builder.h"

#define TMPFS 0x01021994
#define EXT4  0xef53

#define AUDIT(cause)                                                                      \
	"audit: type=1800 audit(<time>:<serial>): pid=<pid> uid=0 auid=<auid> ses=<ses> " \
	"op=appraise_data cause=" cause " comm=<comm> name=\"m.ko\" dev=<dev> ino=<ino> " \
	"res=0 errno=0"

struct cfg {
	const char *cmdline;
	const char *active; /* an active policy text */
	bool no_appraise;   /* CONFIG_IMA_APPRAISE off */
	bool modsig;	    /* CONFIG_IMA_APPRAISE_MODSIG */
	bool module_sig;    /* CONFIG_MODULE_SIG (the arch policy then adds no rule) */
	int secure_boot;
	bool no_decompress; /* MODULE_DECOMPRESS off: kmod uses init_module() */
	bool sig_enforce;
	bool require_module_sigs; /* CONFIG_IMA_APPRAISE_REQUIRE_MODULE_SIGS */
	bool signed_init;	  /* CONFIG_IMA_APPRAISE_SIGNED_INIT */
};

static void policy(struct tb_world *w, const struct cfg *c)
{
	struct kp_ima_inputs in = {
		.cmdline = c->cmdline,
		.config_known = true,
		.ima_appraise = !c->no_appraise,
		.bootparam = true,
		.arch_policy = true,
		.module_sig = c->module_sig,
		.require_module_sigs = c->require_module_sigs,
		.signed_init = c->signed_init,
		.modsig = c->modsig,
		.decompressed = w->facts.profile.has[KP_F_IMA_DECOMPRESSED_MODULES],
		.secure_boot = c->secure_boot,
		.active = c->active,
		.active_source = c->active ? "policy.txt" : NULL,
	};
	struct kp_err err = { 0 };

	if (kp_ima_policy_build(&w->facts.ima, &in, &w->facts.arena, &err) < 0) {
		fprintf(stderr, "policy: %s\n", err.msg);
		abort();
	}
	w->facts.module_decompress = !c->no_decompress;
	w->facts.sig_enforce = c->sig_enforce;
}

/* Module "m" with @state and the other file facts given. */
static struct kp_module *file(struct tb_world *w, enum kp_ima_xattr_state state, int64_t fs,
			      uint32_t uid, int digest_match)
{
	struct kp_module *m = tb_module(w, "m");

	m->ima.state = state;
	m->ima.hash_algo = state == KP_IMA_X_DIGEST ? 4 : -1;
	m->ima.digest_match = digest_match;
	m->ima.fs_known = fs != 0;
	m->ima.fs_magic = fs;
	m->ima.owner_known = true;
	m->ima.uid = uid;
	return m;
}

static void builtin_policies(struct tap *t)
{
	const struct cfg sb = { .cmdline = "quiet ima_policy=secure_boot", .secure_boot = 0 };
	const struct cfg tcb = { .cmdline = "ima_policy=appraise_tcb" };
	const struct cfg none = { .cmdline = "quiet" };
	struct tb_world w;

	/* secure_boot_rules[0]: appraise func=MODULE_CHECK, IMA_DIGSIG_REQUIRED */
	tb_init(&w, "6.12.118+deb12-amd64");
	policy(&w, &sb);
	file(&w, KP_IMA_X_NONE, EXT4, 0, -1);
	tb_expect(t, &w, -EACCES, AUDIT("IMA-signature-required"), "ima-appraisal",
		  "secure_boot, no security.ima");
	/* ... no fsmagic exclusion: a module in the initramfs (tmpfs) is refused too */
	tb_init(&w, "6.12.118+deb12-amd64");
	policy(&w, &sb);
	file(&w, KP_IMA_X_NONE, TMPFS, 0, -1);
	tb_expect(t, &w, -EACCES, AUDIT("IMA-signature-required"), "ima-appraisal",
		  "secure_boot, tmpfs");
	tb_init(&w, "6.12.118+deb12-amd64");
	policy(&w, &sb);
	file(&w, KP_IMA_X_DIGSIG, EXT4, 0, -1);
	tb_expect(t, &w, 0, "", "ima-signature-assumed", "secure_boot, an IMA signature");
	/* xattr_verify(): a digest where a signature is required */
	tb_init(&w, "6.12.118+deb12-amd64");
	policy(&w, &sb);
	file(&w, KP_IMA_X_DIGEST, EXT4, 0, 1);
	tb_expect(t, &w, -EACCES, AUDIT("IMA-signature-required"), "ima-appraisal",
		  "secure_boot, a digest");
	/* INTEGRITY_UNKNOWN: no audit record, still -EACCES */
	tb_init(&w, "6.12.118+deb12-amd64");
	policy(&w, &sb);
	file(&w, KP_IMA_X_NO_SUPPORT, 0x4d44, 0, -1);
	tb_expect(t, &w, -EACCES, "", "ima-appraisal", "secure_boot, vfat");

	/* appraise_tcb: dont_appraise tmpfs/ramfs..., then appraise fowner=0 (hash is enough) */
	tb_init(&w, "6.1.192");
	policy(&w, &tcb);
	file(&w, KP_IMA_X_NONE, TMPFS, 0, -1);
	tb_expect(t, &w, 0, "", "", "appraise_tcb, tmpfs");
	tb_init(&w, "6.1.192");
	policy(&w, &tcb);
	file(&w, KP_IMA_X_NONE, EXT4, 0, -1);
	tb_expect(t, &w, -EACCES, AUDIT("missing-hash"), "ima-appraisal",
		  "appraise_tcb, ext4, no security.ima");
	tb_init(&w, "6.1.192");
	policy(&w, &tcb);
	file(&w, KP_IMA_X_DIGEST, EXT4, 0, 1);
	tb_expect(t, &w, 0, "", "", "appraise_tcb, matching digest");
	tb_init(&w, "6.1.192");
	policy(&w, &tcb);
	file(&w, KP_IMA_X_DIGEST, EXT4, 0, 0);
	tb_expect(t, &w, -EACCES, AUDIT("invalid-hash"), "ima-appraisal",
		  "appraise_tcb, other digest");
	tb_init(&w, "6.1.192");
	policy(&w, &tcb);
	file(&w, KP_IMA_X_NONE, EXT4, 1000, -1);
	tb_expect(t, &w, 0, "", "", "appraise_tcb, not owned by root");

	/* build-time rules: IMA_APPRAISE_REQUIRE_MODULE_SIGS without any ima_policy= */
	tb_init(&w, "6.12.118+deb12-amd64");
	policy(&w, &(struct cfg){ .cmdline = "", .require_module_sigs = true });
	file(&w, KP_IMA_X_DIGEST, EXT4, 0, 1);
	tb_expect(t, &w, -EACCES, AUDIT("IMA-signature-required"), "ima-appraisal",
		  "IMA_APPRAISE_REQUIRE_MODULE_SIGS");
	/* appraise_tcb with IMA_APPRAISE_SIGNED_INIT: root's files need a signature */
	tb_init(&w, "6.1.192");
	policy(&w, &(struct cfg){ .cmdline = "ima_appraise_tcb", .signed_init = true });
	file(&w, KP_IMA_X_DIGEST, EXT4, 0, 1);
	tb_expect(t, &w, -EACCES, AUDIT("IMA-signature-required"), "ima-appraisal",
		  "ima_appraise_tcb, IMA_APPRAISE_SIGNED_INIT");

	/* no ima_policy=: nothing appraises modules */
	tb_init(&w, "6.12.118+deb12-amd64");
	policy(&w, &none);
	file(&w, KP_IMA_X_NONE, EXT4, 0, -1);
	tb_expect(t, &w, 0, "", "", "no policy");
	/* CONFIG_IMA_APPRAISE off (Debian 5.10 has no IMA at all) */
	tb_init(&w, "5.10.262");
	policy(&w, &(struct cfg){ .cmdline = "ima_policy=secure_boot", .no_appraise = true });
	file(&w, KP_IMA_X_NONE, EXT4, 0, -1);
	tb_expect(t, &w, 0, "", "", "IMA_APPRAISE off");
}

static void appraise_mode(struct tap *t)
{
	struct tb_world w;

	/* ima_appraise=log: the record, no refusal */
	tb_init(&w, "6.12.118+deb12-amd64");
	policy(&w, &(struct cfg){ .cmdline = "ima_policy=secure_boot ima_appraise=log" });
	file(&w, KP_IMA_X_NONE, EXT4, 0, -1);
	tb_expect(t, &w, 0, AUDIT("IMA-signature-required"), "ima-appraisal", "ima_appraise=log");
	/*
	 * Under Secure Boot ima_appraise=log is ignored; IMA refuses before module_sig_check()'s
	 * enforcement (set by the arch policy) would
	 */
	tb_init(&w, "6.12.118+deb12-amd64");
	policy(&w, &(struct cfg){ .cmdline = "ima_policy=secure_boot ima_appraise=log",
				  .secure_boot = 1,
				  .module_sig = true,
				  .sig_enforce = true });
	file(&w, KP_IMA_X_NONE, EXT4, 0, -1);
	tb_expect(t, &w, -EACCES, AUDIT("IMA-signature-required"), "ima-appraisal",
		  "Secure Boot ignores ima_appraise=log");
	/* the x86 arch policy appraises modules only without MODULE_SIG */
	tb_init(&w, "6.12.118+deb12-amd64");
	policy(&w, &(struct cfg){ .cmdline = "", .secure_boot = 1 });
	file(&w, KP_IMA_X_NONE, EXT4, 0, -1);
	tb_expect(t, &w, -EACCES, AUDIT("IMA-signature-required"), "ima-appraisal",
		  "arch policy without MODULE_SIG");
	tb_init(&w, "6.12.118+deb12-amd64");
	policy(&w, &(struct cfg){ .cmdline = "", .secure_boot = 1, .module_sig = true });
	file(&w, KP_IMA_X_NONE, EXT4, 0, -1);
	tb_expect(t, &w, 0, "", "", "arch policy with MODULE_SIG: no appraise rule");
}

static void compressed(struct tap *t)
{
	const struct cfg modsig = {
		.active = "measure func=MODULE_CHECK\n"
			  "appraise func=MODULE_CHECK appraise_type=imasig|modsig\n",
		.modsig = true
	};
	struct tb_world w;
	struct kp_module *m;

	/* init_module() (kmod decompressed it): ima_load_data() */
	tb_init(&w, "6.12.118+deb12-amd64");
	policy(&w, &(struct cfg){ .cmdline = "ima_policy=secure_boot", .no_decompress = true });
	m = file(&w, KP_IMA_X_DIGSIG, EXT4, 0, -1);
	m->compression = KP_COMP_XZ;
	tb_expect(t, &w, -EACCES,
		  "ima: impossible to appraise a module without a file descriptor. sig_enforce "
		  "kernel parameter might help",
		  "ima-appraisal", "init_module()");
	/* ... unless module signatures are enforced */
	tb_init(&w, "6.12.118+deb12-amd64");
	policy(&w, &(struct cfg){ .cmdline = "ima_policy=secure_boot",
				  .no_decompress = true,
				  .sig_enforce = true });
	m = file(&w, KP_IMA_X_NONE, EXT4, 0, -1);
	m->compression = KP_COMP_XZ;
	tb_run(&w);
	tap_ok(t, !tb_finding(&w, "m", "ima-appraisal"), "init_module() with sig_enforce");
	tb_free(&w);

	/* modsig, uncompressed: the appended signature is appraised */
	tb_init(&w, "6.12.118+deb12-amd64");
	policy(&w, &modsig);
	m = file(&w, KP_IMA_X_NONE, EXT4, 0, -1);
	tb_signed(m, "sha512", "rsa");
	tb_expect(t, &w, 0, "", "ima-signature-assumed", "modsig, uncompressed");
	/* compressed, before c200892b46ba: IMA sees the compressed file, no modsig at its end */
	tb_init(&w, "6.12.118+deb12-amd64");
	policy(&w, &modsig);
	m = file(&w, KP_IMA_X_NONE, EXT4, 0, -1);
	tb_signed(m, "sha512", "rsa");
	m->compression = KP_COMP_XZ;
	tb_expect(t, &w, -EACCES, AUDIT("IMA-signature-required"), "ima-appraisal",
		  "modsig, compressed, 6.12");
	/* 6.19+: appraised after module_decompress() */
	tb_init(&w, "6.19.0");
	policy(&w, &modsig);
	m = file(&w, KP_IMA_X_NONE, EXT4, 0, -1);
	tb_signed(m, "sha512", "rsa");
	m->compression = KP_COMP_XZ;
	tb_expect(t, &w, 0, "", "ima-signature-assumed", "modsig, compressed, 6.19");
	/* 6.19+'s secure_boot rule allows modsig, but only with CONFIG_IMA_APPRAISE_MODSIG */
	tb_init(&w, "7.2.13+deb14-amd64");
	policy(&w, &(struct cfg){ .cmdline = "ima_policy=secure_boot", .modsig = false });
	m = file(&w, KP_IMA_X_NONE, EXT4, 0, -1);
	tb_signed(m, "sha512", "rsa");
	m->compression = KP_COMP_XZ;
	tb_expect(t, &w, -EACCES, AUDIT("IMA-signature-required"), "ima-appraisal",
		  "7.2 secure_boot without IMA_APPRAISE_MODSIG");
	tb_init(&w, "7.2.13+deb14-amd64");
	policy(&w, &(struct cfg){ .cmdline = "ima_policy=secure_boot", .modsig = true });
	m = file(&w, KP_IMA_X_NONE, EXT4, 0, -1);
	tb_signed(m, "sha512", "rsa");
	m->compression = KP_COMP_XZ;
	tb_expect(t, &w, 0, "", "ima-signature-assumed", "7.2 secure_boot with modsig");
}

static void active_policy(struct tap *t)
{
	struct kp_ima_policy p;
	struct kp_arena a = { 0 };
	struct kp_err err = { 0 };
	struct kp_ima_file f = { .state = KP_IMA_X_NONE,
				 .fs_known = true,
				 .fs_magic = EXT4,
				 .owner_known = true,
				 .uid = 0 };
	struct kp_ima_inputs in = {
		.ima_appraise = true,
		.active = "dont_measure fsmagic=0x9fa0\n"
			  "dont_appraise fsmagic=0xef53 fowner>1000\n"
			  "appraise func=FIRMWARE_CHECK appraise_type=imasig\n"
			  "appraise func=MODULE_CHECK mask=MAY_EXEC\n"
			  "# a comment\n"
			  "\n"
			  "appraise func=MODULE_CHECK uid=0 subj_type=kmod_t appraise_type=imasig\n"
			  "appraise fowner=0\n",
		.active_source = "/sys/kernel/security/ima/policy",
	};
	const struct kp_ima_rule *r;

	tap_is_int(t, kp_ima_policy_build(&p, &in, &a, &err), 0, "active policy parses");
	tap_is_int(t, (int)p.nrules, 3, "three rules can match a module read");
	tap_ok(t, p.appraise == (KP_IMA_APPRAISE_ENFORCE | KP_IMA_APPRAISE_MODULES),
	       "enforcing, IMA_APPRAISE_MODULES");
	r = kp_ima_policy_match(&p, &f);
	tap_ok(t, r && r->appraise && r->digsig && r->unmodelled, "the MODULE_CHECK rule first");
	tap_is_str(t, r ? r->unmodelled : "", "subj_type=kmod_t", "its LSM condition noted");
	f.uid = 2000;
	r = kp_ima_policy_match(&p, &f);
	tap_ok(t, r && !r->appraise, "fowner>1000 on ext4: dont_appraise");
	kp_arena_release(&a);

	memset(&a, 0, sizeof(a));
	in.active = "appraise func=MODULE_CHECK\napprase func=MODULE_CHECK\n";
	tap_is_int(t, kp_ima_policy_build(&p, &in, &a, &err), -1, "a bad line is an error");
	tap_is_str(t, err.msg, "/sys/kernel/security/ima/policy: line 2: unknown action 'apprase'",
		   "naming the line");
	kp_arena_release(&a);
}

int main(void)
{
	struct tap t = { 0 };

	builtin_policies(&t);
	appraise_mode(&t);
	compressed(&t);
	active_policy(&t);
	tap_is_str(&t, kp_errno_name(-EACCES), "EACCES", "the JSON's errno name of a refusal");
	return tap_done(&t);
}
