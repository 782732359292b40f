// SPDX-License-Identifier: GPL-2.0-or-later
#include "builder.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/license.h"

static void *need(void *p)
{
	if (!p) {
		fprintf(stderr, "builder: out of memory\n");
		abort();
	}
	return p;
}

static void *arena_array(struct kp_module *m, size_t elem)
{
	void *p = need(kp_arena_alloc(&m->arena, TB_MAX * elem));

	memset(p, 0, TB_MAX * elem);
	return p;
}

static void room(size_t n, const char *what)
{
	if (n >= TB_MAX) {
		fprintf(stderr, "builder: more than %d %s\n", TB_MAX, what);
		abort();
	}
}

void tb_init_distro(struct tb_world *w, const char *release, enum kp_distro d)
{
	struct kp_kver v;

	memset(w, 0, sizeof(*w));
	if (kp_kver_parse(release, &v) < 0) {
		fprintf(stderr, "builder: bad release %s\n", release);
		abort();
	}
	w->facts.release = release;
	kp_profile_for_kernel(&w->facts.profile, &v, d);
	w->facts.missing_version_fatal = w->facts.profile.has[KP_F_MISSING_VERSION_FATAL];
}

void tb_init(struct tb_world *w, const char *release)
{
	tb_init_distro(w, release,
		       kp_release_is_debian(release) ? KP_DISTRO_DEBIAN : KP_DISTRO_UPSTREAM);
}

void tb_symvers(struct tb_world *w, const char *text)
{
	struct kp_err err;

	if (!w->base && kp_base_new(&w->base) < 0)
		need(NULL);
	if (kp_base_load_symvers_buffer(w->base, "test.symvers", (const unsigned char *)text,
					strlen(text), &err) < 0) {
		fprintf(stderr, "builder: %s\n", err.msg);
		abort();
	}
}

void tb_base_file(struct tb_world *w, const char *path)
{
	struct kp_err err;

	if (!w->base && kp_base_new(&w->base) < 0)
		need(NULL);
	if (kp_base_load(w->base, path, &err) < 0) {
		fprintf(stderr, "builder: %s\n", err.msg);
		abort();
	}
}

void tb_module_file(struct tb_world *w, const char *path)
{
	if (kp_set_add_path(&w->set, path) < 0)
		need(NULL);
}

void tb_std_kernel(struct tb_world *w)
{
	tb_symvers(w, "0x11111111\tprintk\tvmlinux\tEXPORT_SYMBOL\t\n"
		      "0x22222222\tgpl_fn\tvmlinux\tEXPORT_SYMBOL_GPL\t\n"
		      "0x33333333\tmodule_layout\tvmlinux\tEXPORT_SYMBOL\t\n"
		      "0x44444444\tns_fn\tvmlinux\tEXPORT_SYMBOL_GPL\tMY_NS\n"
		      "0x55555555\tfut_fn\tvmlinux\tEXPORT_SYMBOL_GPL_FUTURE\t\n"
		      "0x66666666\tbase_fn\tdrivers/misc/base-mod\tEXPORT_SYMBOL\t\n"
		      "0x77777777\tbase_gpl\tdrivers/misc/base-mod\tEXPORT_SYMBOL_GPL\t\n");
}

struct kp_module *tb_module(struct tb_world *w, const char *name)
{
	struct kp_module *m = need(calloc(1, sizeof(*m)));
	struct kp_set_entry *e;
	char path[256];

	if (kp_grow(&w->set.entries, &w->set.cap, w->set.n + 1, sizeof(*w->set.entries)) < 0)
		need(NULL);
	snprintf(path, sizeof(path), "%s.ko", name);
	e = &w->set.entries[w->set.n++];
	memset(e, 0, sizeof(*e));
	e->path = need(strdup(path));
	e->mod = m;
	m->path = e->path;
	m->name = name;
	m->is64 = true;
	m->machine = EM_X86_64;
	m->has_symtab = true;
	m->shnum = 40;
	m->raw_shnum = 40;
	m->raw_shstrndx = 39;
	m->nmodinfo_sections = 1;
	m->modinfo = arena_array(m, sizeof(*m->modinfo));
	m->exports = arena_array(m, sizeof(*m->exports));
	m->imports = arena_array(m, sizeof(*m->imports));
	m->special_syms = arena_array(m, sizeof(*m->special_syms));
	m->versions = arena_array(m, sizeof(*m->versions));
	m->ext_versions = arena_array(m, sizeof(*m->ext_versions));
	m->symget = arena_array(m, sizeof(*m->symget));
	m->relocs = arena_array(m, sizeof(*m->relocs));
	m->import_ns = arena_array(m, sizeof(*m->import_ns));
	m->versions_distinct = m->ext_versions_distinct = true;
	/* Defaults without a modinfo tag: a tb_modinfo() of the same key replaces them. */
	m->license = "GPL";
	m->license_gpl_compatible = true;
	m->intree = true;
	m->vermagic = "6.12.0 SMP mod_unload ";
	return m;
}

void tb_modinfo(struct kp_module *m, const char *key, const char *value)
{
	bool first = true;

	for (size_t i = 0; i < m->nmodinfo; i++)
		first = first && strcmp(m->modinfo[i].key, key);
	room(m->nmodinfo, "modinfo tags");
	m->modinfo[m->nmodinfo].key = key;
	m->modinfo[m->nmodinfo++].value = value;
	if (!strcmp(key, "import_ns")) {
		room(m->nimport_ns, "import_ns tags");
		m->import_ns[m->nimport_ns++] = value;
	}
	if (!first)
		return; /* get_modinfo(): the first tag wins */
	/* The shortcuts as the reader fills them. */
	if (!strcmp(key, "license")) {
		m->license = value;
		m->license_gpl_compatible = kp_license_is_gpl_compatible(value);
	} else if (!strcmp(key, "name")) {
		m->modinfo_name = value;
	} else if (!strcmp(key, "vermagic")) {
		m->vermagic = value;
	} else if (!strcmp(key, "staging")) {
		m->staging = true;
	} else if (!strcmp(key, "test")) {
		m->test = true;
	} else if (!strcmp(key, "livepatch")) {
		m->livepatch = true;
	}
}

static struct kp_export *add_export(struct kp_module *m, const char *name,
				    enum kp_export_table table, bool gpl_only)
{
	struct kp_export *x;

	room(m->nexports, "exports");
	x = &m->exports[m->nexports++];
	x->name = name;
	x->hash = kp_hash_string(name);
	x->table = table;
	x->gpl_only = gpl_only;
	return x;
}

void tb_export(struct kp_module *m, const char *name, enum kp_export_table table)
{
	add_export(m, name, table, kp_export_tables[table].gpl_only);
}

void tb_export_flag(struct kp_module *m, const char *name, bool gpl_only)
{
	m->has_kflagstab = true;
	add_export(m, name, KP_KSYMTAB, gpl_only);
}

void tb_export_ns(struct kp_module *m, const char *ns)
{
	m->exports[m->nexports - 1].ns = ns;
}

void tb_export_crc(struct kp_module *m, uint32_t crc)
{
	struct kp_export *x = &m->exports[m->nexports - 1];

	x->has_crc = true;
	x->crc = crc;
	m->has_kcrctab[x->table] = true;
}

static uint32_t next_symidx(const struct kp_module *m)
{
	return (uint32_t)(m->nimports + m->nspecial_syms + 1);
}

static void add_import(struct kp_module *m, const char *name, bool weak)
{
	struct kp_import *imp;

	room(m->nimports, "imports");
	imp = &m->imports[m->nimports];
	imp->name = name;
	imp->hash = kp_hash_string(name);
	imp->symidx = next_symidx(m);
	imp->weak = weak;
	m->nimports++;
}

void tb_import(struct kp_module *m, const char *name)
{
	add_import(m, name, false);
}

void tb_import_weak(struct kp_module *m, const char *name)
{
	add_import(m, name, true);
}

void tb_import_name_past_end(struct kp_module *m, uint64_t image_size, const char *name)
{
	m->image_size = image_size;
	m->symstr_state = KP_SYMSTR_NAME_OOB;
	m->symname_past_end = 1;
	add_import(m, name, false);
	m->import_name_past_end = m->imports[m->nimports - 1].symidx;
}

void tb_import_name_outside(struct kp_module *m, uint64_t image_size, uint64_t off, bool weak)
{
	m->image_size = image_size;
	m->symstr_state = KP_SYMSTR_NAME_OOB;
	m->symname_past_end = 1;
	add_import(m, "", weak);
	m->import_name_outside = m->imports[m->nimports - 1].symidx;
	m->import_name_outside_off = off;
}

void tb_special(struct kp_module *m, const char *name, uint32_t shndx)
{
	struct kp_special_sym *s;

	room(m->nspecial_syms, "special symbols");
	s = &m->special_syms[m->nspecial_syms];
	s->name = name;
	s->symidx = next_symidx(m);
	s->shndx = shndx;
	m->nspecial_syms++;
}

void tb_reloc(struct kp_module *m, uint32_t type, bool rela, const char *section, bool percpu)
{
	struct kp_reloc_use *u;

	room(m->nrelocs, "relocation types");
	u = &m->relocs[m->nrelocs++];
	u->type = type;
	u->rela = rela;
	u->percpu = percpu;
	u->section = section;
	u->index = 0;
	u->count = 1;
}

void tb_version(struct kp_module *m, const char *name, uint32_t crc)
{
	room(m->nversions, "versions");
	m->versions_format = KP_VERSIONS_FIXED;
	m->versions_alloc = true;
	m->versions[m->nversions].name = name;
	m->versions[m->nversions].hash = kp_hash_string(name);
	m->versions[m->nversions++].crc = crc;
}

void tb_ext_version(struct kp_module *m, const char *name, uint32_t crc)
{
	room(m->next_versions, "extended versions");
	m->has_ext_versions = true;
	m->ext_versions_state = KP_EXT_VERSIONS_OK;
	m->ext_versions[m->next_versions].name = name;
	m->ext_versions[m->next_versions].hash = kp_hash_string(name);
	m->ext_versions[m->next_versions++].crc = crc;
}

void tb_symget(struct kp_module *m, const char *sym, enum kp_symget_method how, bool request)
{
	struct kp_symget *s;

	room(m->nsymget, "symbol_get() sites");
	m->imports_symbol_get = true;
	s = &m->symget[m->nsymget++];
	s->symbol = sym;
	s->method = how;
	s->request = request;
	s->section = ".text";
}

void tb_signed(struct kp_module *m, const char *hash, const char *pkey)
{
	struct kp_signature *s = &m->sig;

	s->present = true;
	s->id_type = 2;
	s->params_zero = true;
	s->pkcs7_der = true;
	s->sig_len = 512;
	s->hash_algo = hash;
	s->pkey_algo = pkey;
	s->signer = "Test CA: 01";
	s->nsigners = 1;
}

void tb_signed_authattrs(struct kp_module *m, const char *hash, const char *pkey)
{
	tb_signed(m, hash, pkey);
	m->sig.pkcs7_verify_err = -EKEYREJECTED;
	m->sig.pkcs7_note = KP_SIG_NOTE_AUTHATTRS;
}

void tb_graph(struct tb_world *w)
{
	struct kp_read_opts opts = { .jobs = 1 };
	struct kp_err err;
	bool files = false;

	for (size_t i = 0; i < w->set.n; i++)
		files = files || !w->set.entries[i].mod;
	if (files && kp_set_read(&w->set, &opts)) {
		for (size_t i = 0; i < w->set.n; i++)
			if (w->set.entries[i].error)
				fprintf(stderr, "builder: %s\n", w->set.entries[i].error);
		abort();
	}
	if (kp_graph_build(&w->g, &w->set, w->base, 1, &err) < 0) {
		fprintf(stderr, "builder: graph: %s\n", err.msg);
		abort();
	}
}

void tb_run(struct tb_world *w)
{
	struct kp_err err;

	tb_graph(w);
	if (kp_simulate(&w->g, &w->facts, &w->sim, &err) < 0) {
		fprintf(stderr, "builder: simulate: %s\n", err.msg);
		abort();
	}
	w->ran = true;
}

size_t tb_node(const struct tb_world *w, const char *name)
{
	size_t i = kp_graph_find(&w->g, name);

	if (i == SIZE_MAX) {
		fprintf(stderr, "builder: no module %s\n", name);
		abort();
	}
	return i;
}

const struct kp_verdict *tb_v(const struct tb_world *w, const char *name)
{
	if (!w->ran) {
		fprintf(stderr, "builder: tb_v() before tb_run()\n");
		abort();
	}
	return &w->sim.v[tb_node(w, name)];
}

const char *tb_dmesg(struct tb_world *w, const char *name)
{
	const struct kp_verdict *v = tb_v(w, name);
	size_t k = 0;

	w->dmesg[0] = '\0';
	for (size_t i = 0; i < v->nmessages && k < sizeof(w->dmesg); i++)
		k += (size_t)snprintf(w->dmesg + k, sizeof(w->dmesg) - k, "%s%s", i ? "\n" : "",
				      v->messages[i]);
	return w->dmesg;
}

const char *tb_findings(struct tb_world *w, const char *name)
{
	const struct kp_verdict *v = tb_v(w, name);
	size_t k = 0;

	w->ids[0] = '\0';
	for (size_t i = 0; i < v->nfindings && k < sizeof(w->ids); i++)
		k += (size_t)snprintf(w->ids + k, sizeof(w->ids) - k, "%s%s", i ? "," : "",
				      v->findings[i].id);
	return w->ids;
}

const struct kp_finding *tb_finding(const struct tb_world *w, const char *name, const char *id)
{
	const struct kp_verdict *v = tb_v(w, name);

	for (size_t i = 0; i < v->nfindings; i++)
		if (!strcmp(v->findings[i].id, id))
			return &v->findings[i];
	return NULL;
}

const char *tb_taints(struct tb_world *w, const char *name)
{
	kp_taint_letters(tb_v(w, name)->taints, w->letters, sizeof(w->letters));
	return w->letters;
}

const char *tb_global(struct tb_world *w)
{
	kp_taint_letters(w->sim.global_taint, w->letters, sizeof(w->letters));
	return w->letters;
}

const struct kp_symget_result *tb_symget_result(const struct tb_world *w, const char *name,
						const char *sym)
{
	const struct kp_verdict *v = tb_v(w, name);

	for (size_t i = 0; i < v->nsymget; i++)
		if (!strcmp(v->symget[i].symbol, sym))
			return &v->symget[i];
	return NULL;
}

void tb_free(struct tb_world *w)
{
	if (w->ran)
		kp_simulation_release(&w->sim);
	kp_graph_release(&w->g);
	kp_set_release(&w->set);
	kp_base_free(w->base);
	kp_facts_release(&w->facts); /* what a test put there (kp_facts_vmlinux_btf()) */
	memset(w, 0, sizeof(*w));
}

static void escaped(char *buf, size_t len, const char *s)
{
	size_t k = 0;

	for (; s && *s && k + 3 < len; s++) {
		if (*s == '\n') {
			buf[k++] = '\\';
			buf[k++] = 'n';
		} else {
			buf[k++] = *s;
		}
	}
	buf[k] = '\0';
}

void tb_is_text(struct tap *t, const char *got, const char *want, const char *what)
{
	static char g[8192], x[8192];
	int ok = (!got && !want) || (got && want && !strcmp(got, want));

	escaped(g, sizeof(g), got);
	tap_ok(t, ok, "%s: '%s'", what, got ? g : "(null)");
	if (!ok) {
		escaped(x, sizeof(x), want);
		printf("#   expected '%s'\n", want ? x : "(null)");
	}
}

void tb_expect_taints(struct tap *t, struct tb_world *w, int err, const char *dmesg,
		      const char *findings, const char *taints, const char *what)
{
	char buf[160];

	tb_run(w);
	snprintf(buf, sizeof(buf), "%s: errno", what);
	tap_is_int(t, tb_v(w, "m")->err, err, buf);
	snprintf(buf, sizeof(buf), "%s: dmesg", what);
	tb_is_text(t, tb_dmesg(w, "m"), dmesg, buf);
	snprintf(buf, sizeof(buf), "%s: findings", what);
	tap_is_str(t, tb_findings(w, "m"), findings, buf);
	if (taints) {
		snprintf(buf, sizeof(buf), "%s: taints", what);
		tap_is_str(t, tb_taints(w, "m"), taints, buf);
	}
	tb_free(w);
}

void tb_expect(struct tap *t, struct tb_world *w, int err, const char *dmesg, const char *findings,
	       const char *what)
{
	tb_expect_taints(t, w, err, dmesg, findings, NULL, what);
}
