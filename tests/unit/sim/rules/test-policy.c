// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * policy.c: findings beyond the kernel's checks. bridge: a GPL module using GPL-only symbols
 * exports a plain symbol a proprietary module imports; latent-breakage: what changes under
 * the 2023 rules (a strict simulation of the same graph, as `kopolicy check` runs it).
 */
#include "builder.h"

/* gpl_bridge uses gpl_fn and exports bridge_fn; prop (Proprietary) imports bridge_fn. */
static void build(struct tb_world *w, const char *release)
{
	struct kp_module *b, *p;

	tb_init(w, release);
	tb_std_kernel(w);
	b = tb_module(w, "gpl_bridge");
	tb_import(b, "gpl_fn");
	tb_export(b, "bridge_fn", KP_KSYMTAB);
	tb_symget(b, "printk", KP_SYMGET_EXACT, false);
	p = tb_module(w, "prop");
	tb_modinfo(p, "license", "Proprietary");
	tb_import(p, "bridge_fn");
	tb_export(p, "prop_fn", KP_KSYMTAB);
}

static void bridge(struct tap *t)
{
	struct tb_world w;
	struct kp_err err;
	const struct kp_finding *f;

	build(&w, "6.12.37");
	tb_run(&w);
	tap_is_int(t, kp_add_policy_findings(&w.sim, NULL, &err), 0, "policy findings");
	f = tb_finding(&w, "gpl_bridge", "bridge");
	tap_ok(t, f && f->severity == KP_SEV_NOTE && f->symbol && !strcmp(f->symbol, "bridge_fn"),
	       "bridge note on the GPL module, naming the symbol");
	tap_ok(t, !tb_finding(&w, "prop", "bridge"), "no bridge note on the P module");
	tb_free(&w);
}

static void latent(struct tap *t)
{
	struct tb_world w;
	struct kp_kernel_facts strict;
	struct kp_simulation s;
	struct kp_err err;
	struct kp_module *u;
	const struct kp_finding *f;

	/* 5.4.117: neither rule. user imports prop_fn then gpl_fn: fails under 2020. */
	build(&w, "5.4.117");
	u = tb_module(&w, "user");
	tb_import(u, "prop_fn");
	tb_import(u, "gpl_fn");
	tb_run(&w);
	strict = w.facts;
	memset(&strict.arena, 0, sizeof(strict.arena));
	kp_profile_apply_rules(&strict.profile, "2023");
	tap_is_str(t, strict.profile.name, "2023", "strict profile");
	tap_ok(t, kp_simulate(&w.g, &strict, &s, &err) == 0, "strict simulation");
	tap_is_int(t, kp_add_policy_findings(&w.sim, &s, &err), 0, "policy findings");
	f = tb_finding(&w, "user", "latent-breakage");
	tap_is_str(t, f ? f->message : NULL,
		   "loads on this kernel but fails (ENOENT) under the 2023 rules",
		   "user: fails under 2023");
	f = tb_finding(&w, "gpl_bridge", "latent-breakage");
	tap_is_str(t, f ? f->message : NULL, "symbol_get(printk) returns NULL under the 2023 rules",
		   "gpl_bridge: symbol_get breaks under 2023");
	tap_ok(t, !tb_finding(&w, "prop", "latent-breakage"), "prop: nothing changes");
	kp_simulation_release(&s);
	tb_free(&w);

	/* A module that only inherits P under 2020. */
	build(&w, "5.4.117");
	u = tb_module(&w, "user");
	tb_import(u, "prop_fn");
	tb_run(&w);
	strict = w.facts;
	memset(&strict.arena, 0, sizeof(strict.arena));
	kp_profile_apply_rules(&strict.profile, "2023");
	kp_simulate(&w.g, &strict, &s, &err);
	kp_add_policy_findings(&w.sim, &s, &err);
	f = tb_finding(&w, "user", "latent-breakage");
	tap_is_str(t, f ? f->message : NULL, "becomes proprietary (P) under the 2023 rules",
		   "user: becomes P under 2023");
	kp_simulation_release(&s);
	tb_free(&w);
}

int main(void)
{
	struct tap t = { 0 };

	bridge(&t);
	latent(&t);
	return tap_done(&t);
}
