// SPDX-License-Identifier: GPL-2.0-or-later
/* Stable rule ids: never renamed, never reused. kopolicy(1) FINDINGS lists the same. */
#include "config.h"

#include "check-output.h"

const struct kp_rule_doc kp_rule_docs[] = {
	{ "unknown-symbol", KP_SEV_ERROR,
	  "an import is exported by nothing loaded: Unknown symbol (err -2)" },
	{ "gpl-only-symbol", KP_SEV_ERROR,
	  "a proprietary (P) module imports an EXPORT_SYMBOL_GPL symbol" },
	{ "gpl-proprietary-mix", KP_SEV_ERROR,
	  "2020 rule: a module using GPL-only symbols imports from a proprietary module" },
	{ "inherit-taint", KP_SEV_WARNING,
	  "2020 rule: importing from a proprietary module makes the importer proprietary (P)" },
	{ "license-taint", KP_SEV_NOTE,
	  "the first license= is not GPL-compatible: the module is proprietary (P)" },
	{ "crc-mismatch", KP_SEV_ERROR,
	  "an import's CRC differs from the kernel's: disagrees about version of symbol" },
	{ "missing-symbol-version", KP_SEV_ERROR,
	  "__versions lacks an import (fatal on Debian kernels)" },
	{ "missing-namespace", KP_SEV_ERROR,
	  "an import's namespace is not imported with MODULE_IMPORT_NS()" },
	{ "vermagic-mismatch", KP_SEV_ERROR, "vermagic differs from the kernel's" },
	{ "no-vermagic", KP_SEV_ERROR, "no vermagic and the kernel cannot force-load" },
	{ "module-layout", KP_SEV_ERROR, "module_layout CRC differs: built for another kernel" },
	{ "struct-module-size", KP_SEV_ERROR,
	  ".gnu.linkonce.this_module size differs from the kernel's struct module" },
	{ "duplicate-export", KP_SEV_ERROR,
	  "the module exports a symbol that is already exported" },
	{ "already-loaded", KP_SEV_ERROR, "a module of the same name is already loaded (EEXIST)" },
	{ "signature-required", KP_SEV_ERROR,
	  "signatures are enforced and the module is unsigned or unverifiable" },
	{ "bad-signature", KP_SEV_ERROR,
	  "the appended signature is malformed or does not verify against its trusted key" },
	{ "signature-untrusted-key", KP_SEV_WARNING,
	  "signed by a key the kernel does not trust: E taint, refused when enforced" },
	{ "signature-assumed", KP_SEV_NOTE,
	  "the signature could not be checked (key listed without certificate, algorithm)" },
	{ "lockdown", KP_SEV_ERROR, "kernel lockdown refuses an unsigned module" },
	{ "dependency-failed", KP_SEV_ERROR, "a module this one depends on fails to load" },
	{ "symbol-get-non-gpl", KP_SEV_WARNING,
	  "2023 rule: symbol_get() of a non-GPL export returns NULL" },
	{ "symbol-get-not-found", KP_SEV_WARNING,
	  "symbol_get() of a symbol nothing exports returns NULL" },
	{ "symbol-get-proprietary-gpl", KP_SEV_NOTE,
	  "symbol_get() reaches a proprietary module's EXPORT_SYMBOL_GPL export" },
	{ "bridge", KP_SEV_NOTE,
	  "a GPL module using GPL-only symbols exports plain symbols a proprietary module uses" },
	{ "latent-breakage", KP_SEV_NOTE,
	  "the module's outcome changes under the 2020/2023 rules this kernel lacks" },
};

const size_t kp_nrule_docs = sizeof(kp_rule_docs) / sizeof(kp_rule_docs[0]);
