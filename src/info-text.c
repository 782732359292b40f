// SPDX-License-Identifier: GPL-2.0-or-later
/* `kopolicy info` for people: modinfo-like, exports marked GPL-only / namespaced. */
#include "config.h"

#include <string.h>

#include "read/elf-file.h"
#include "info-output.h"
#include "sim/loader.h"
#include "kernel/sig-keys.h"

/* Prints @s escaped (kp_escape_write()), so garbage cannot forge a line or drive a terminal. */
static void put_safe(FILE *f, const char *s)
{
	if (!s) {
		fputs("(none)", f);
		return;
	}
	kp_escape_write(f, s, strlen(s));
}

static void field(FILE *f, const char *key, const char *val)
{
	kp_escaped_fprintf(f, "  %-16s ", key);
	put_safe(f, val);
	fputc('\n', f);
}

/* Signer, key id, hash and whether (and by which key) the signature verifies. */
static void print_signature(FILE *f, const struct kp_module *m, const struct kp_keyring *keys)
{
	const struct kp_signature *s = &m->sig;
	const struct kp_trusted_key *k;
	const char *state = kp_sig_check(keys, s, &k);
	char buf[512], id[300];

	if (s->pkcs7_err || s->pkcs7_verify_err) {
		snprintf(buf, sizeof(buf), "%s: %s",
			 kp_errno_name(s->pkcs7_err ? s->pkcs7_err : s->pkcs7_verify_err),
			 s->pkcs7_note ? s->pkcs7_note : "");
		field(f, "pkcs7 error:", buf);
	}
	if (!s->hash_algo)
		return;
	kp_sig_key_id(s, id, sizeof(id));
	field(f, "signer:", s->signer ? s->signer : "(key identifier only)");
	field(f, "key id:", id);
	snprintf(buf, sizeof(buf), "%s, %s%s", s->hash_algo, s->pkey_algo,
		 s->nsigners > 1 ? " (first of several signers)" : "");
	field(f, "hash:", buf);
	if (!strcmp(state, "malformed"))
		return;
	if (!strcmp(state, "no-key-source"))
		snprintf(buf, sizeof(buf),
			 "not checked: no key source (--trusted-cert, "
			 "--kernel-image)");
	else if (!strcmp(state, "verified"))
		snprintf(buf, sizeof(buf), "yes, against '%s' %s (%s)", k->subject, k->id_hex,
			 k->source);
	else if (!strcmp(state, "no-trusted-key"))
		snprintf(buf, sizeof(buf), "no: no trusted key matches the signer (-ENOKEY)");
	else if (!strcmp(state, "bad-signature"))
		snprintf(buf, sizeof(buf), "no: '%s' (%s) does not verify it (-EKEYREJECTED)",
			 k->subject, k->source);
	else if (!strcmp(state, "revoked")) {
		bool image = false;
		const char *by = kp_keyring_revoked_by(keys, s, &image);

		snprintf(buf, sizeof(buf),
			 "no: the signer is on the revocation list (%s%s) (-EKEYREJECTED)",
			 by ? by : "?", image ? "'s revocation_certificate_list" : "");
	} else if (!strcmp(state, "key-id-only"))
		snprintf(buf, sizeof(buf),
			 "assumed: '%s' %s is listed in %s without its certificate", k->subject,
			 k->id_hex, k->source);
	else
		snprintf(buf, sizeof(buf), "assumed: libcrypto cannot check %s/%s (key '%s')",
			 s->hash_algo, s->pkey_algo, k ? k->subject : "?");
	field(f, "verifies:", buf);
}

/*
 * A malformed symbol string table (elf_validity_cache_strtab(), v6.13+, refuses it): the
 * names below are the ones the loader before 6.13 reads, the file at the table's offset +
 * st_name (setup_load_info()); those no NUL ends in the file are shown up to its end.
 */
static void symstr_text(FILE *f, const struct kp_module *m)
{
	static const char *const what[] = {
		[KP_SYMSTR_EMPTY] = "empty",
		[KP_SYMSTR_NO_LEADING_NUL] = "no leading NUL",
		[KP_SYMSTR_UNTERMINATED] = "not NUL-terminated",
		[KP_SYMSTR_NAME_OOB] = "a name outside it",
	};

	if (m->symstr_state == KP_SYMSTR_OK && !m->symname_past_end)
		return;
	kp_escaped_fprintf(f,
			   "  symbol strtab:   %s: names read as before 6.13, from the file at "
			   "its offset + st_name (6.13+ refuses the module)\n",
			   m->symstr_state < KP_ARRAY_SIZE(what) && what[m->symstr_state]
				   ? what[m->symstr_state]
				   : "malformed");
	if (m->symname_past_end)
		kp_escaped_fprintf(f,
				   "                   %u name%s no NUL ends before the end of "
				   "the file (shown up to it; the kernel reads on)\n",
				   m->symname_past_end, m->symname_past_end == 1 ? "" : "s");
}

void kp_info_print_text_module(FILE *f, const struct kp_module *m, const struct kp_keyring *keys)
{
	char buf[256];

	put_safe(f, m->path);
	fputs(":\n", f);
	field(f, "name:", m->name);
	if (!m->modinfo_name || strcmp(m->modinfo_name, m->name))
		field(f, "modinfo name:", m->modinfo_name);
	snprintf(buf, sizeof(buf), "ELF%d %s-endian %s, %s, %zu bytes%s", m->is64 ? 64 : 32,
		 m->big_endian ? "big" : "little", kp_elf_machine_name(m->machine),
		 m->compression == KP_COMP_NONE ? "uncompressed"
						: kp_compression_name(m->compression),
		 m->file_size, m->compression == KP_COMP_NONE ? "" : " compressed");
	field(f, "file:", buf);
	kp_escaped_fprintf(f, "  %-16s ", "license:");
	if (m->license) {
		put_safe(f, m->license);
		fputs(m->license_gpl_compatible ? " (GPL-compatible)" : " (not GPL-compatible: P)",
		      f);
	} else {
		fputs("(none: the kernel says 'unspecified', not GPL-compatible: P)", f);
	}
	fputc('\n', f);
	for (size_t i = 0, n = 0; i < m->nmodinfo; i++) {
		if (strcmp(m->modinfo[i].key, "license") || n++ == 0)
			continue;
		field(f, "  also license:", m->modinfo[i].value);
	}
	field(f, "vermagic:", m->vermagic);
	field(f, "intree:", m->intree ? "yes" : "no (out-of-tree: O)");
	if (m->staging)
		field(f, "staging:", "yes (C)");
	if (m->test)
		field(f, "test:", "yes (N)");
	if (m->livepatch)
		field(f, "livepatch:", "yes (K)");
	if (m->sig.present) {
		snprintf(buf, sizeof(buf), "%s, %u bytes%s",
			 m->sig.id_type == 2 ? "PKCS#7" : "unknown type", m->sig.sig_len,
			 m->sig.malformed ? " (malformed trailer)"
			 : m->sig.id_type == 2 && !(m->sig.params_zero && m->sig.pkcs7_der)
				 ? " (not a well-formed PKCS#7 message)"
				 : "");
		field(f, "signature:", buf);
		print_signature(f, m, keys);
	} else {
		field(f, "signature:", "none");
	}
	kp_escaped_fprintf(f, "  %-16s ", "depends:");
	for (size_t i = 0; i < m->ndepends; i++) {
		fputs(i ? ", " : "", f);
		put_safe(f, m->depends[i]);
	}
	fputc('\n', f);
	for (size_t i = 0; i < m->nimport_ns; i++)
		field(f, "import_ns:", m->import_ns[i]);

	kp_escaped_fprintf(f, "  exports (%zu):\n", m->nexports);
	for (size_t i = 0; i < m->nexports; i++) {
		const struct kp_export *x = &m->exports[i];

		fputs("    ", f);
		put_safe(f, x->name);
		kp_escaped_fprintf(f, "  %s", x->gpl_only ? "GPL-only" : "plain");
		if (x->table != KP_KSYMTAB && x->table != KP_KSYMTAB_GPL)
			kp_escaped_fprintf(f, " (%s)", kp_export_table_section(x->table));
		if (x->ns) {
			fputs("  namespace ", f);
			put_safe(f, x->ns);
		}
		if (x->has_crc)
			kp_escaped_fprintf(f, "  crc 0x%08x", x->crc);
		fputc('\n', f);
	}
	symstr_text(f, m);
	kp_escaped_fprintf(f, "  imports (%zu, in .symtab order):\n", m->nimports);
	for (size_t i = 0; i < m->nimports; i++) {
		fputs("    ", f);
		put_safe(f, m->imports[i].name);
		fputs(m->imports[i].weak ? "  (weak)\n" : "\n", f);
	}
	if (m->versions_format != KP_VERSIONS_NONE)
		kp_escaped_fprintf(f, "  versions (%zu%s):\n", m->nversions,
				   m->versions_format == KP_VERSIONS_UBUNTU ? ", Ubuntu layout"
									    : "");
	for (size_t i = 0; i < m->nversions; i++) {
		kp_escaped_fprintf(f, "    0x%08x  ", m->versions[i].crc);
		put_safe(f, m->versions[i].name);
		fputc('\n', f);
	}
	if (m->has_ext_versions)
		kp_escaped_fprintf(f, "  extended versions (%zu)\n", m->next_versions);
	if (m->imports_symbol_get) {
		kp_escaped_fprintf(f, "  symbol_get (%zu):\n", m->nsymget);
		if (!m->symget_backend)
			kp_escaped_fprintf(f,
					   "    no exact call-site analysis for %s: one heuristic "
					   "guess per call site\n",
					   kp_elf_machine_name(m->machine));
		if (m->symget_skipped)
			kp_escaped_fprintf(f, "    call sites not traced\n");
		if (m->nsymget_unanalysed)
			kp_escaped_fprintf(f,
					   "    %zu more call site(s) not analysed: the module's "
					   "analysis budget ran out\n",
					   m->nsymget_unanalysed);
		for (size_t i = 0; i < m->nsymget; i++) {
			const struct kp_symget *g = &m->symget[i];
			char *when;

			fputs("    ", f);
			put_safe(f, g->symbol			       ? g->symbol
				    : g->method == KP_SYMGET_HEURISTIC ? "(unknown)"
								       : "(computed at run time)");
			kp_escaped_fprintf(f, "  at %s+0x%llx", g->section,
					   (unsigned long long)g->offset);
			if (g->function) {
				fputs(" in ", f);
				put_safe(f, g->function);
			}
			kp_escaped_fprintf(f, " [%s]",
					   g->method == KP_SYMGET_EXACT	    ? "exact"
					   : g->method == KP_SYMGET_DYNAMIC ? "dynamic"
									    : "heuristic");
			when = kp_symget_when_text(g->when, g->path, g->function);
			if (when) {
				fputs(", runs ", f);
				put_safe(f, when);
			}
			free(when);
			fputc('\n', f);
		}
	}
}
