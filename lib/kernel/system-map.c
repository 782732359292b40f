// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * System.map and /proc/kallsyms: "ADDRESS TYPE NAME" lines, kallsyms adding
 * "\t[module]" to symbols of modules (skipped: only vmlinux is described).
 *
 * Every export has a label __ksymtab_<sym> at its struct kernel_symbol
 * (include/linux/export.h, export-internal.h; scripts/mksysmap keeps them while
 * dropping __kstrtab_/__crc_). Its table is the one whose linker-script bounds
 * __start___ksymtab<sfx> .. __stop___ksymtab<sfx> contain the label. v5.4
 * named namespaced labels __ksymtab_<ns>.<sym>; later kernels leave the
 * namespace out of the label, so it is unknown here. CRCs are known only where
 * an absolute __crc_<sym> symbol survives (<= 5.18 kallsyms; never System.map).
 * Since v7.1 the GPL-only class is a __kflagstab byte per export: such a map
 * cannot tell it and is refused rather than read as all EXPORT_SYMBOL.
 */
#include <stdio.h>
#include <string.h>

#include "file/bytes.h"
#include "kernel-base-internal.h"
#include "file/rootfs.h"

static const char *const table_suffix[KP_KSYMTAB_NTABLES] = {
	[KP_KSYMTAB] = "",
	[KP_KSYMTAB_GPL] = "_gpl",
	[KP_KSYMTAB_GPL_FUTURE] = "_gpl_future",
	[KP_KSYMTAB_UNUSED] = "_unused",
	[KP_KSYMTAB_UNUSED_GPL] = "_unused_gpl",
};

static const bool table_gpl_only[KP_KSYMTAB_NTABLES] = {
	[KP_KSYMTAB_GPL] = true,
	[KP_KSYMTAB_UNUSED_GPL] = true,
};

struct line {
	uint64_t addr;
	char type;
	const char *name; /* into the buffer, not NUL-terminated */
	size_t name_len;
	bool module; /* kallsyms "\t[module]" */
};

struct label {
	uint64_t addr;
	const char *name;
	size_t name_len;
};

struct crc {
	const char *name; /* after "__crc_" */
	size_t name_len;
	uint32_t crc;
};

struct map {
	const char *label;
	struct kp_err *err;
	bool have_start[KP_KSYMTAB_NTABLES], have_stop[KP_KSYMTAB_NTABLES];
	uint64_t start[KP_KSYMTAB_NTABLES], stop[KP_KSYMTAB_NTABLES];
	struct label *labels;
	size_t nlabels, labels_cap;
	struct crc *crcs;
	size_t ncrcs, crcs_cap;
	size_t nlines, nnonzero, nmodule;
	bool kflagstab; /* __start___kflagstab: v7.1+, GPL-only is a flag byte, not a table */
};

static bool name_is(const struct line *l, const char *s)
{
	size_t n = strlen(s);

	return l->name_len == n && !memcmp(l->name, s, n);
}

static bool name_starts(const struct line *l, const char *s)
{
	size_t n = strlen(s);

	return l->name_len > n && !memcmp(l->name, s, n);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool is_stub(const char *s, size_t len)
{
	static const char marker[] = "The real System.map is in";

	return len >= sizeof(marker) - 1 && memmem(s, len, marker, sizeof(marker) - 1);
}

/* Parses one line; 0 ok, -1 with @m->err set. */
static int parse_line(struct map *m, const char *s, size_t len, size_t lineno, struct line *l)
{
	size_t i = 0, digits = 0;

	memset(l, 0, sizeof(*l));
	for (; i < len && s[i] != ' '; i++, digits++) {
		int d = hexval(s[i]);

		if (d < 0 || digits >= 16)
			goto bad;
		l->addr = l->addr << 4 | (uint64_t)d;
	}
	if (!digits || i + 3 > len || s[i] != ' ' || s[i + 2] != ' ')
		goto bad;
	l->type = s[i + 1];
	if ((unsigned char)l->type <= ' ' || (unsigned char)l->type >= 0x7f)
		goto bad;
	i += 3;
	l->name = s + i;
	while (i < len && s[i] != '\t' && s[i] != ' ')
		i++;
	l->name_len = (size_t)(s + i - l->name);
	if (!l->name_len)
		goto bad;
	if (i == len)
		return 0;
	/* kallsyms: "\t[module]" (possibly followed by nothing else). */
	if (s[i] == '\t' && i + 2 < len && s[i + 1] == '[' && s[len - 1] == ']') {
		l->module = true;
		return 0;
	}
bad:
	if (is_stub(s, len))
		return kp_err_set(m->err,
				  "%s: this is Debian's stub System.map; the real one is in "
				  "the linux-image-<release>-dbg package "
				  "(usr/lib/debug/boot/System.map-<release>, since 7.x "
				  "usr/lib/debug/lib/modules/<release>/System.map)",
				  m->label);
	return kp_err_set(m->err,
			  "%s:%zu: malformed line (expected 'ADDRESS TYPE NAME' as in "
			  "System.map or /proc/kallsyms)",
			  m->label, lineno);
}

static int note_bound(struct map *m, const struct line *l)
{
	static const char start[] = "__start___ksymtab", stop[] = "__stop___ksymtab";
	char buf[64];

	if (name_is(l, "__start___kflagstab")) {
		m->kflagstab = true;
		return 1;
	}
	if (!name_starts(l, "__start___ksymtab") && !name_starts(l, "__stop___ksymtab") &&
	    !name_is(l, start) && !name_is(l, stop))
		return 0;
	for (int t = 0; t < KP_KSYMTAB_NTABLES; t++) {
		snprintf(buf, sizeof(buf), "%s%s", start, table_suffix[t]);
		if (name_is(l, buf)) {
			m->have_start[t] = true;
			m->start[t] = l->addr;
			return 1;
		}
		snprintf(buf, sizeof(buf), "%s%s", stop, table_suffix[t]);
		if (name_is(l, buf)) {
			m->have_stop[t] = true;
			m->stop[t] = l->addr;
			return 1;
		}
	}
	return 0;
}

static int note_line(struct map *m, const struct line *l)
{
	if (l->addr)
		m->nnonzero++;
	if (l->module) {
		m->nmodule++;
		return 0;
	}
	if (note_bound(m, l))
		return 0;
	if (name_starts(l, "__ksymtab_")) {
		if (kp_grow(&m->labels, &m->labels_cap, m->nlabels + 1, sizeof(*m->labels)) < 0)
			return kp_err_set(m->err, "out of memory");
		m->labels[m->nlabels++] = (struct label){ l->addr, l->name + 10, l->name_len - 10 };
		return 0;
	}
	/* <= 4.9 (absolute __crc_ symbols): the value is the CRC. */
	if (name_starts(l, "__crc_") && (l->type == 'A' || l->type == 'a') &&
	    l->addr <= UINT32_MAX) {
		if (kp_grow(&m->crcs, &m->crcs_cap, m->ncrcs + 1, sizeof(*m->crcs)) < 0)
			return kp_err_set(m->err, "out of memory");
		m->crcs[m->ncrcs++] =
			(struct crc){ l->name + 6, l->name_len - 6, (uint32_t)l->addr };
	}
	return 0;
}

static int table_of(const struct map *m, uint64_t addr)
{
	for (int t = 0; t < KP_KSYMTAB_NTABLES; t++)
		if (m->have_start[t] && m->have_stop[t] && addr >= m->start[t] && addr < m->stop[t])
			return t;
	return -1;
}

static int add_labels(struct kp_kernel_base *b, struct map *m, size_t *nexports)
{
	char name[512], ns[512];
	bool any_bounds = false;

	for (int t = 0; t < KP_KSYMTAB_NTABLES; t++)
		any_bounds |= m->have_start[t] && m->have_stop[t];
	/*
	 * v7.1+ (55fcb926b6d8 "module: use kflagstab instead of *_gpl sections"): one
	 * __ksymtab, GPL-only is bit 0 of a __kflagstab byte, which no label shows.
	 */
	if (m->kflagstab && !(m->have_start[KP_KSYMTAB_GPL] && m->have_stop[KP_KSYMTAB_GPL]))
		return kp_err_set(m->err,
				  "%s: a v7.1+ kernel (__kflagstab): which exports are GPL-only "
				  "is not in a System.map or kallsyms; use the kernel's "
				  "Module.symvers (linux-headers) or its vmlinux",
				  m->label);
	if (!any_bounds)
		return kp_err_set(m->err,
				  "%s: no __start___ksymtab/__stop___ksymtab bounds: "
				  "cannot tell which table an export is in",
				  m->label);
	for (size_t i = 0; i < m->nlabels; i++) {
		const struct label *lb = &m->labels[i];
		int t = table_of(m, lb->addr);
		struct kp_ksym k = { 0 };
		size_t len = lb->name_len;
		const char *llvm, *dot;

		if (t < 0)
			continue; /* a __ksymtab_ name outside every table is no export */
		if (len >= sizeof(name))
			return kp_err_set(m->err, "%s: symbol name too long: __ksymtab_%.*s...",
					  m->label, 40, lb->name);
		memcpy(name, lb->name, len);
		name[len] = '\0';
		/* Clang ThinLTO may suffix promoted local labels with .llvm.<hash>. */
		llvm = strstr(name, ".llvm.");
		if (llvm)
			name[llvm - name] = '\0';
		k.name = name;
		dot = strchr(name, '.');
		if (dot) {
			/* v5.4: __ksymtab_<ns>.<sym> */
			snprintf(ns, sizeof(ns), "%.*s", (int)(dot - name), name);
			k.name = dot + 1;
			k.ns = ns;
			k.ns_known = true;
		}
		k.table = (enum kp_export_table)t;
		k.gpl_only = table_gpl_only[t];
		if (kp_base_add(b, &k, m->err) < 0)
			return -1;
		(*nexports)++;
	}
	return 0;
}

static void apply_crcs(struct kp_kernel_base *b, const struct map *m)
{
	char name[512];

	for (size_t i = 0; i < m->ncrcs; i++) {
		struct kp_ksym *k;

		if (m->crcs[i].name_len >= sizeof(name))
			continue;
		memcpy(name, m->crcs[i].name, m->crcs[i].name_len);
		name[m->crcs[i].name_len] = '\0';
		k = kp_base_find_mutable(b, name);
		if (k && !k->has_crc) {
			k->has_crc = true;
			k->crc = m->crcs[i].crc;
		}
	}
}

static int load_map(struct kp_kernel_base *b, struct map *m, const unsigned char *buf, size_t len)
{
	const char *pos = (const char *)buf, *end = pos + len;
	size_t lineno = 0, nexports = 0;

	while (pos < end) {
		const char *nl = memchr(pos, '\n', (size_t)(end - pos));
		size_t l = nl ? (size_t)(nl - pos) : (size_t)(end - pos);
		struct line ln;

		lineno++;
		if (l && pos[l - 1] == '\r')
			l--;
		if (l) {
			if (memchr(pos, '\0', l))
				return kp_err_set(m->err, "%s:%zu: NUL byte: not a text file",
						  m->label, lineno);
			if (parse_line(m, pos, l, lineno, &ln) < 0 || note_line(m, &ln) < 0)
				return -1;
			m->nlines++;
		}
		pos = nl ? nl + 1 : end;
	}
	if (!m->nlines)
		return kp_err_set(m->err, "%s: no symbols", m->label);
	if (!m->nnonzero)
		return kp_err_set(m->err,
				  "%s: every address is 0: kallsyms hides addresses from "
				  "this user (kptr_restrict); read it as root",
				  m->label);
	/* A kallsyms dump is told by its module lines or by the name it was read from. */
	kp_base_begin_load(b, m->nmodule || strstr(m->label, "kallsyms") ? KP_SRC_KALLSYMS
									 : KP_SRC_SYSTEM_MAP);
	if (add_labels(b, m, &nexports) < 0)
		return -1;
	if (!nexports)
		return kp_err_set(m->err,
				  "%s: no __ksymtab_<symbol> labels inside the export "
				  "tables (kallsyms without CONFIG_KALLSYMS_ALL?)",
				  m->label);
	apply_crcs(b, m);
	return 0;
}

int kp_base_load_system_map_buffer(struct kp_kernel_base *b, const char *label,
				   const unsigned char *buf, size_t len, struct kp_err *err)
{
	struct map m = { .label = label, .err = err };
	int r;

	r = load_map(b, &m, buf, len);
	free(m.labels);
	free(m.crcs);
	return r;
}

bool kp_system_map_has_symbols(const char *path)
{
	struct kp_err quiet = { 0 };
	struct map m = { .label = path, .err = &quiet };
	struct kp_bytes bytes;
	const char *pos, *end;
	bool found = false;

	if (kp_read_file(path, KP_BASE_MAX_TEXT, &bytes, NULL) < 0)
		return false;
	pos = (const char *)bytes.data;
	end = pos + bytes.len;
	for (size_t lineno = 1; pos < end && !found; lineno++) {
		const char *nl = memchr(pos, '\n', (size_t)(end - pos));
		size_t l = nl ? (size_t)(nl - pos) : (size_t)(end - pos);
		struct line ln;

		if (l && pos[l - 1] == '\r')
			l--;
		found = l && !memchr(pos, '\0', l) && parse_line(&m, pos, l, lineno, &ln) == 0;
		pos = nl ? nl + 1 : end;
	}
	kp_bytes_release(&bytes);
	return found;
}

int kp_base_load_system_map(struct kp_kernel_base *b, const char *path, struct kp_err *err)
{
	return kp_base_load_system_map_in(b, NULL, path, err);
}

int kp_base_load_system_map_in(struct kp_kernel_base *b, const struct kp_root_dir *root,
			       const char *path, struct kp_err *err)
{
	struct kp_bytes bytes;
	int r;

	/* /proc/kallsyms has no size: read to the end, then decompress by magic. */
	if (kp_read_file_in(root, path, KP_BASE_MAX_TEXT, &bytes, err) < 0)
		return -1;
	r = kp_base_load_system_map_buffer(b, path, bytes.data, bytes.len, err);
	kp_bytes_release(&bytes);
	return r;
}
