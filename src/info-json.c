// SPDX-License-Identifier: GPL-2.0-or-later
/* `kopolicy info --json`: schema_version 1, documented in kopolicy(1). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "read/elf-file.h"
#include "info-output.h"
#include "sim/loader.h"
#include "kernel/sig-keys.h"
#include "json-out.h"

static const char *versions_format_name(enum kp_versions_format f)
{
	switch (f) {
	case KP_VERSIONS_FIXED:
		return "fixed";
	case KP_VERSIONS_UBUNTU:
		return "ubuntu-varlen";
	case KP_VERSIONS_NONE:
		break;
	}
	return NULL;
}

static const char *symget_method_name(enum kp_symget_method m)
{
	switch (m) {
	case KP_SYMGET_EXACT:
		return "exact";
	case KP_SYMGET_DYNAMIC:
		return "dynamic";
	case KP_SYMGET_HEURISTIC:
		break;
	}
	return "heuristic";
}

static struct json_object *string_array(const char *const *v, size_t n)
{
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; i < n; i++)
		json_object_array_add(a, kp_json_string(v[i]));
	return a;
}

static struct json_object *versions_array(const struct kp_version *v, size_t n)
{
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; i < n; i++) {
		struct json_object *o = json_object_new_object();

		kp_json_add(o, "name", kp_json_string(v[i].name));
		kp_json_add(o, "crc", kp_json_crc(true, v[i].crc));
		json_object_array_add(a, o);
	}
	return a;
}

static struct json_object *verification_json(const struct kp_signature *s,
					     const struct kp_keyring *keys)
{
	const struct kp_trusted_key *k;
	const char *state = kp_sig_check(keys, s, &k);
	struct json_object *o = json_object_new_object();

	kp_json_add(o, "result", json_object_new_string(state));
	if (k) {
		kp_json_add(o, "key", kp_json_string(k->subject));
		kp_json_add(o, "key_id", kp_json_string(k->id_hex));
		kp_json_add(o, "key_source", kp_json_string(k->source));
		kp_json_add(o, "keyring", kp_json_string(k->keyring));
	}
	return o;
}

static struct json_object *signature_json(const struct kp_signature *s,
					  const struct kp_keyring *keys)
{
	struct json_object *o;
	char id[300];
	int perr = s->pkcs7_err ? s->pkcs7_err : s->pkcs7_verify_err;

	if (!s->present)
		return NULL;
	o = json_object_new_object();
	kp_json_add(o, "id_type", json_object_new_int(s->id_type));
	kp_json_add(o, "pkcs7", json_object_new_boolean(s->id_type == 2));
	kp_json_add(o, "algo", json_object_new_int(s->algo));
	kp_json_add(o, "hash", json_object_new_int(s->hash));
	kp_json_add(o, "signer_len", json_object_new_int(s->signer_len));
	kp_json_add(o, "key_id_len", json_object_new_int(s->key_id_len));
	kp_json_add(o, "sig_len", json_object_new_int64(s->sig_len));
	kp_json_add(o, "malformed", json_object_new_boolean(s->malformed));
	kp_json_add(o, "pkcs7_wellformed",
		    json_object_new_boolean(!s->malformed && s->id_type == 2 && s->params_zero &&
					    s->pkcs7_der));
	kp_json_add(o, "pkcs7_error", perr ? json_object_new_string(kp_errno_name(perr)) : NULL);
	kp_json_add(o, "pkcs7_note", kp_json_string(s->pkcs7_note));
	kp_json_add(o, "signer", kp_json_string(s->signer));
	kp_sig_key_id(s, id, sizeof(id));
	kp_json_add(o, "key_id", id[0] ? json_object_new_string(id) : NULL);
	kp_json_add(o, "hash_algo", kp_json_string(s->hash_algo));
	kp_json_add(o, "pkey_algo", kp_json_string(s->pkey_algo));
	kp_json_add(o, "verification", verification_json(s, keys));
	return o;
}

struct json_object *kp_info_module_json(const struct kp_module *m, const struct kp_keyring *keys)
{
	struct json_object *o = json_object_new_object(), *a, *elf;

	kp_json_add(o, "path", kp_json_string(m->path));
	kp_json_add(o, "name", kp_json_string(m->name));
	kp_json_add(o, "modinfo_name", kp_json_string(m->modinfo_name));
	kp_json_add(o, "compression", json_object_new_string(kp_compression_name(m->compression)));
	kp_json_add(o, "file_size", json_object_new_int64((int64_t)m->file_size));
	elf = json_object_new_object();
	kp_json_add(elf, "class", json_object_new_int(m->is64 ? 64 : 32));
	kp_json_add(elf, "endian", json_object_new_string(m->big_endian ? "big" : "little"));
	kp_json_add(elf, "machine", json_object_new_string(kp_elf_machine_name(m->machine)));
	kp_json_add(elf, "e_machine", json_object_new_int(m->machine));
	kp_json_add(o, "elf", elf);

	kp_json_add(o, "license", kp_json_string(m->license));
	a = json_object_new_array();
	for (size_t i = 0; i < m->nmodinfo; i++)
		if (!strcmp(m->modinfo[i].key, "license"))
			json_object_array_add(a, kp_json_string(m->modinfo[i].value));
	kp_json_add(o, "licenses", a);
	kp_json_add(o, "license_gpl_compatible",
		    json_object_new_boolean(m->license_gpl_compatible));
	kp_json_add(o, "vermagic", kp_json_string(m->vermagic));
	kp_json_add(o, "srcversion", kp_json_string(m->srcversion));
	kp_json_add(o, "intree", json_object_new_boolean(m->intree));
	kp_json_add(o, "staging", json_object_new_boolean(m->staging));
	kp_json_add(o, "test", json_object_new_boolean(m->test));
	kp_json_add(o, "livepatch", json_object_new_boolean(m->livepatch));
	kp_json_add(o, "retpoline", json_object_new_boolean(m->retpoline));
	kp_json_add(o, "depends", string_array(m->depends, m->ndepends));
	kp_json_add(o, "import_ns", string_array(m->import_ns, m->nimport_ns));
	a = json_object_new_array();
	for (size_t i = 0; i < m->nmodinfo; i++) {
		struct json_object *e = json_object_new_object();

		kp_json_add(e, "key", kp_json_string(m->modinfo[i].key));
		kp_json_add(e, "value", kp_json_string(m->modinfo[i].value));
		json_object_array_add(a, e);
	}
	kp_json_add(o, "modinfo", a);

	kp_json_add(o, "signed", json_object_new_boolean(m->sig.present));
	kp_json_add(o, "signature", signature_json(&m->sig, keys));

	a = json_object_new_array();
	for (size_t i = 0; i < m->nimports; i++) {
		struct json_object *e = json_object_new_object();

		kp_json_add(e, "name", kp_json_string(m->imports[i].name));
		kp_json_add(e, "weak", json_object_new_boolean(m->imports[i].weak));
		json_object_array_add(a, e);
	}
	kp_json_add(o, "imports", a);

	a = json_object_new_array();
	for (size_t i = 0; i < m->nexports; i++) {
		const struct kp_export *x = &m->exports[i];
		struct json_object *e = json_object_new_object();

		kp_json_add(e, "name", kp_json_string(x->name));
		kp_json_add(e, "gpl_only", json_object_new_boolean(x->gpl_only));
		kp_json_add(e, "table", json_object_new_string(kp_export_table_section(x->table)));
		kp_json_add(e, "namespace", kp_json_string(x->ns));
		kp_json_add(e, "crc", kp_json_crc(x->has_crc, x->crc));
		json_object_array_add(a, e);
	}
	kp_json_add(o, "exports", a);

	kp_json_add(o, "versions_format",
		    versions_format_name(m->versions_format)
			    ? json_object_new_string(versions_format_name(m->versions_format))
			    : NULL);
	kp_json_add(o, "versions", versions_array(m->versions, m->nversions));
	kp_json_add(o, "ext_versions",
		    m->has_ext_versions ? versions_array(m->ext_versions, m->next_versions) : NULL);

	a = json_object_new_array();
	for (size_t i = 0; i < m->nsymget; i++) {
		const struct kp_symget *g = &m->symget[i];
		struct json_object *e = json_object_new_object();
		char *site = NULL;

		/* "section+0xOFF": one string users can hand to objdump. */
		if (asprintf(&site, "%s+0x%llx", g->section, (unsigned long long)g->offset) < 0)
			site = NULL;
		kp_json_add(e, "symbol", kp_json_string(g->symbol));
		kp_json_add(e, "site", kp_json_string(site));
		free(site);
		kp_json_add(e, "function", kp_json_string(g->function));
		kp_json_add(e, "method", json_object_new_string(symget_method_name(g->method)));
		kp_json_add(e, "request", json_object_new_boolean(g->request));
		kp_json_add(e, "format", kp_json_string(g->format));
		kp_json_add(e, "when", json_object_new_string(kp_symget_when_name(g->when)));
		kp_json_add(e, "path", kp_json_words(g->path));
		json_object_array_add(a, e);
	}
	kp_json_add(o, "symbol_get", a);
	/* "exact": call sites traced by an architecture backend; "heuristic": none for it */
	kp_json_add(o, "symbol_get_method",
		    !m->imports_symbol_get ? NULL
		    : m->symget_backend	   ? json_object_new_string("exact")
					   : json_object_new_string("heuristic"));
	kp_json_add(o, "symbol_put_sites", json_object_new_int64((int64_t)m->nsymput));
	/* call sites left when the analysis budget ran out: their targets are unknown */
	kp_json_add(o, "symbol_get_unanalysed",
		    json_object_new_int64((int64_t)m->nsymget_unanalysed));
	return o;
}

void kp_info_begin(struct kp_info_writer *w)
{
	w->first = true;
	if (!w->json) {
		for (size_t i = 0; w->keys && i < w->keys->nsources; i++)
			fprintf(w->f, "trusted keys: %s\n", w->keys->sources[i]);
		if (w->keys)
			fputc('\n', w->f);
		return;
	}
	w->errors = json_object_new_array();
	fprintf(w->f, "{\"schema_version\":%d,", KP_INFO_SCHEMA_VERSION);
	if (w->keys) {
		struct json_object *a = json_object_new_array();

		for (size_t i = 0; i < w->keys->nsources; i++)
			json_object_array_add(a, kp_json_string(w->keys->sources[i]));
		fputs("\"key_sources\":", w->f);
		kp_json_emit(w->f, a, false);
		fputc(',', w->f);
	}
	fputs("\"modules\":[", w->f);
}

void kp_info_entry(struct kp_info_writer *w, const struct kp_set_entry *ent)
{
	if (!w->json) {
		if (!ent->mod)
			return;
		if (!w->first)
			fputc('\n', w->f);
		w->first = false;
		kp_info_print_text_module(w->f, ent->mod, w->keys);
		return;
	}
	if (!ent->mod) {
		struct json_object *e = json_object_new_object();

		kp_json_add(e, "path", kp_json_string(ent->path));
		kp_json_add(e, "error", kp_json_string(ent->error));
		json_object_array_add(w->errors, e);
		return;
	}
	if (!w->first)
		fputc(',', w->f);
	w->first = false;
	if (w->pretty)
		fputc('\n', w->f);
	kp_json_emit(w->f, kp_info_module_json(ent->mod, w->keys), w->pretty);
}

void kp_info_end(struct kp_info_writer *w)
{
	if (!w->json)
		return;
	fputs("],\"errors\":", w->f);
	kp_json_emit(w->f, w->errors, w->pretty);
	w->errors = NULL;
	fputs("}\n", w->f);
}
