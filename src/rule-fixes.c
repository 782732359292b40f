// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What to do about a finding: one fix per rule id, with the facts of the finding filled in
 * (the symbol, its provider, the namespace, the target kernel). Output only: the verdicts
 * and findings come from lib/sim; this says how a module's author or packager acts on them.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check-output.h"

/* The edge of @nd that imports @sym, or NULL. */
static const struct kp_edge *edge_of(const struct kp_node *nd, const char *sym)
{
	if (!sym)
		return NULL;
	for (size_t i = 0; i < nd->nedges; i++)
		if (!strcmp(kp_edge_import(nd, &nd->edges[i])->name, sym))
			return &nd->edges[i];
	return NULL;
}

const char *kp_check_stalled_by(const struct kp_ctx *a, const struct kp_verdict *v)
{
	if ((v->err != KP_ERR_BLOCKED && v->err != KP_ERR_NOT_RUN) || v->stalled_by >= a->graph.n)
		return NULL;
	return a->graph.nodes[v->stalled_by].mod->name;
}

const char *kp_edge_provider_name(const struct kp_ctx *a, const struct kp_edge *e)
{
	switch (e->kind) {
	case KP_PROV_MODULE:
		return a->graph.nodes[e->node].mod->name;
	case KP_PROV_VMLINUX:
		return "vmlinux";
	case KP_PROV_BASE_MODULE:
		return "an in-tree module";
	default:
		return NULL;
	}
}

char *kp_finding_fix(const struct kp_ctx *a, const struct kp_verdict *v, const struct kp_finding *f)
{
	const struct kp_node *nd = &a->graph.nodes[v->node];
	const struct kp_edge *e = edge_of(nd, f->symbol);
	const char *sym = f->symbol ? f->symbol : "the symbol";
	const char *prov = e ? kp_edge_provider_name(a, e) : NULL;
	const char *rel = a->facts.release ? a->facts.release : "the target kernel";
	const char *id = f->id;
	char *s = NULL;
	int r = -1;

	/* symbol_get() targets are no imports: their owner is in the call's result */
	for (size_t i = 0; !prov && f->symbol && i < v->nsymget; i++)
		if (!strcmp(v->symget[i].symbol, f->symbol))
			prov = v->symget[i].owner;
	if (!prov)
		prov = "its provider";
	if (!strcmp(id, "gpl-proprietary-mix") || !strcmp(id, "inherit-taint"))
		r = asprintf(&s,
			     "stop importing %s from proprietary module %s (move the code that "
			     "needs it to the proprietary side, or reach it through an interface "
			     "the GPL side owns), or give %s a GPL-compatible MODULE_LICENSE() if "
			     "its authors can",
			     sym, prov, prov);
	else if (!strcmp(id, "gpl-only-symbol"))
		r = asprintf(&s,
			     "%s is EXPORT_SYMBOL_GPL in %s: a proprietary module cannot use it; "
			     "use a non-GPL interface, or a GPL-compatible MODULE_LICENSE()",
			     sym, prov);
	else if (!strcmp(id, "unknown-symbol"))
		r = asprintf(&s,
			     "add the module that exports %s to the modules checked (another "
			     "package's module too), or rebuild against %s's headers if the "
			     "kernel no longer exports it",
			     sym, rel);
	else if (!strcmp(id, "crc-mismatch") || !strcmp(id, "module-layout") ||
		 !strcmp(id, "struct-module-size") || !strcmp(id, "vermagic-mismatch") ||
		 !strcmp(id, "missing-symbol-version") || !strcmp(id, "no-vermagic") ||
		 !strcmp(id, "bad-extended-versions"))
		r = asprintf(&s, "rebuild the module against %s's headers (linux-headers-%s)", rel,
			     rel);
	else if (!strcmp(id, "missing-namespace") || !strcmp(id, "module-namespace-import"))
		r = asprintf(&s, "add MODULE_IMPORT_NS(%s) to the module's source and rebuild",
			     e && kp_edge_ns(e) ? kp_edge_ns(e) : "the namespace");
	else if (!strcmp(id, "signature-required") || !strcmp(id, "signature-untrusted-key") ||
		 !strcmp(id, "lockdown"))
		r = asprintf(&s,
			     "sign it with a key %s trusts (scripts/sign-file sha256 KEY CERT "
			     "%s), or enroll the signing certificate: mokutil --import CERT, then "
			     "reboot and confirm the enrolment",
			     rel, nd->path);
	else if (!strcmp(id, "bad-signature"))
		r = asprintf(&s,
			     "sign the module again from its unsigned build (scripts/sign-file): "
			     "a module changed after signing (strip, objcopy, a rewrite of its "
			     "modinfo) no longer matches its signature");
	else if (!strcmp(id, "duplicate-export"))
		r = asprintf(&s,
			     "only one module may export %s: drop it from one of them, or "
			     "do not load both",
			     sym);
	else if (!strcmp(id, "already-loaded"))
		r = asprintf(&s,
			     "two files are named %s: remove or rename one (modprobe loads "
			     "the one depmod chooses)",
			     nd->mod->name);
	else if (!strcmp(id, "blacklisted"))
		r = asprintf(&s, "remove %s from module_blacklist= on the kernel command line",
			     nd->mod->name);
	else if (!strcmp(id, "dependency-failed") || !strcmp(id, "weak-dependency-failed"))
		r = asprintf(&s, "fix the failing dependency first (kopolicy explain %s)",
			     nd->mod->name);
	else if (!strcmp(id, "symbol-get-non-gpl"))
		r = asprintf(&s,
			     "export %s with EXPORT_SYMBOL_GPL in %s, or call it directly instead "
			     "of through symbol_get() (2023 rule)",
			     sym, prov);
	else if (!strcmp(id, "symbol-get-not-found"))
		r = asprintf(&s,
			     "make sure the module exporting %s loads before the call "
			     "(request_module(), a softdep, or fix its own findings)",
			     sym);
	else if ((!strcmp(id, "loader-blocked") || !strcmp(id, "machine-hung")) &&
		 kp_check_stalled_by(a, v))
		r = asprintf(&s,
			     "fix %s first (its kernel-oops); on a running kernel this load waits "
			     "until the machine is rebooted",
			     kp_check_stalled_by(a, v));
	else if (!strcmp(id, "common-symbol") || !strcmp(id, "invalid-section-index") ||
		 !strcmp(id, "bad-symbol-strtab") || !strcmp(id, "no-export-flags") ||
		 !strcmp(id, "kernel-oops") || !strcmp(id, "kernel-hang"))
		r = asprintf(&s,
			     "rebuild the module with kbuild against %s's headers (it adds "
			     "-fno-common and links the module as the loader expects)",
			     rel);
	return r < 0 ? NULL : s;
}
