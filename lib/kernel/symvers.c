// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Module.symvers, as modpost's write_dump() wrote it over the years
 * (scripts/mod/modpost.c; TAB-separated):
 *   2.6.18 .. 5.3:        0xCRC  symbol  module  export
 *   5.4 .. 5.6-rc:        0xCRC  symbol  namespace  module  export
 *   5.6 (kbuild-fixes) +: 0xCRC  symbol  module  export  namespace   (namespace may be empty)
 * The layout is taken from the first line (for 5 columns: where the EXPORT_*
 * word is) and every other line must follow it. CRC 0 means "no CRC"
 * (modpost writes 0 without MODVERSIONS). RHEL/SUSE ship it compressed as
 * /boot/symvers-<release>.gz: decompression is by magic.
 */
#include <stdio.h>
#include <string.h>

#include "file/bytes.h"
#include "kernel-base-internal.h"
#include "file/rootfs.h"

enum layout {
	LAYOUT_NONE,
	LAYOUT_4,	 /* crc sym module export */
	LAYOUT_NS_THIRD, /* crc sym ns module export */
	LAYOUT_NS_LAST,	 /* crc sym module export ns */
};

static const char *layout_name(enum layout l)
{
	switch (l) {
	case LAYOUT_4:
		return "4-column (<= 5.3)";
	case LAYOUT_NS_THIRD:
		return "5-column, namespace third (5.4 .. 5.6-rc)";
	case LAYOUT_NS_LAST:
		return "5-column, namespace last (5.6+)";
	default:
		return "unknown";
	}
}

static const struct {
	const char *word;
	enum kp_export_table table;
	bool gpl_only;
} export_types[] = {
	{ "EXPORT_SYMBOL", KP_KSYMTAB, false },
	{ "EXPORT_SYMBOL_GPL", KP_KSYMTAB_GPL, true },
	{ "EXPORT_SYMBOL_GPL_FUTURE", KP_KSYMTAB_GPL_FUTURE, false },
	{ "EXPORT_UNUSED_SYMBOL", KP_KSYMTAB_UNUSED, false },
	{ "EXPORT_UNUSED_SYMBOL_GPL", KP_KSYMTAB_UNUSED_GPL, true },
};

static int export_type(const char *s)
{
	for (size_t i = 0; i < KP_ARRAY_SIZE(export_types); i++)
		if (!strcmp(s, export_types[i].word))
			return (int)i;
	return -1;
}

static bool is_export_word(const char *s)
{
	return !strncmp(s, "EXPORT_", 7);
}

/* "0x" and 1..8 hex digits (modpost prints 0x%08x and reads with strtoul base 16). */
static bool parse_crc(const char *s, uint32_t *crc)
{
	uint32_t v = 0;
	size_t n = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; *s; s++, n++) {
		char c = *s;
		unsigned d;

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return false;
		if (n == 8 && v == 0 && d == 0) {
			n--; /* leading zeros beyond 8 digits are harmless */
			continue;
		}
		if (n >= 8)
			return false;
		v = v << 4 | d;
	}
	*crc = v;
	return n > 0;
}

static bool plain_field(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || *s == 0x7f)
			return false;
	return true;
}

#define MAX_COLS 6

/* Splits @line in place on TABs; returns the number of columns (MAX_COLS: too many). */
static size_t split(char *line, char **col)
{
	size_t n = 0;

	col[n++] = line;
	for (char *p = line; *p; p++) {
		if (*p != '\t')
			continue;
		*p = '\0';
		if (n == MAX_COLS)
			return MAX_COLS;
		col[n++] = p + 1;
	}
	return n;
}

static enum layout detect(char **col, size_t ncols)
{
	if (ncols == 4)
		return LAYOUT_4;
	if (ncols != 5)
		return LAYOUT_NONE;
	if (is_export_word(col[3]))
		return LAYOUT_NS_LAST;
	if (is_export_word(col[4]))
		return LAYOUT_NS_THIRD;
	return LAYOUT_NONE;
}

struct parser {
	struct kp_kernel_base *b;
	const char *label;
	size_t lineno;
	enum layout layout;
	struct kp_err *err;
};

static int parse_line(struct parser *p, char *line)
{
	char *col[MAX_COLS];
	const char *sym, *mod, *exp, *ns;
	size_t ncols = split(line, col);
	struct kp_ksym k = { 0 };
	enum layout l;
	int t;

	if (ncols < 4 || ncols > 5)
		return kp_err_set(p->err,
				  "%s:%zu: %s%zu TAB-separated columns, expected 4 or 5 "
				  "(CRC, symbol, module, export type[, namespace])",
				  p->label, p->lineno, ncols == MAX_COLS ? "more than " : "",
				  ncols == MAX_COLS ? MAX_COLS - 1 : ncols);
	l = detect(col, ncols);
	if (l == LAYOUT_NONE)
		return kp_err_set(p->err, "%s:%zu: no EXPORT_* type in column 4 or 5", p->label,
				  p->lineno);
	if (p->layout == LAYOUT_NONE)
		p->layout = l;
	else if (l != p->layout)
		return kp_err_set(p->err,
				  "%s:%zu: line has the %s layout, earlier lines the %s "
				  "layout",
				  p->label, p->lineno, layout_name(l), layout_name(p->layout));

	sym = col[1];
	switch (p->layout) {
	case LAYOUT_NS_THIRD:
		ns = col[2];
		mod = col[3];
		exp = col[4];
		break;
	case LAYOUT_NS_LAST:
		mod = col[2];
		exp = col[3];
		ns = col[4];
		break;
	default:
		mod = col[2];
		exp = col[3];
		ns = NULL;
	}
	if (!parse_crc(col[0], &k.crc))
		return kp_err_set(p->err,
				  "%s:%zu: invalid CRC '%s' (expected 0x and up to 8 hex "
				  "digits)",
				  p->label, p->lineno, col[0]);
	if (!plain_field(sym))
		return kp_err_set(p->err, "%s:%zu: invalid symbol name '%s'", p->label, p->lineno,
				  sym);
	if (!plain_field(mod))
		return kp_err_set(p->err, "%s:%zu: invalid module '%s' for symbol %s", p->label,
				  p->lineno, mod, sym);
	if (ns && *ns && !plain_field(ns))
		return kp_err_set(p->err, "%s:%zu: invalid namespace '%s' for symbol %s", p->label,
				  p->lineno, ns, sym);
	t = export_type(exp);
	if (t < 0)
		return kp_err_set(p->err, "%s:%zu: unknown export type '%s' for symbol %s",
				  p->label, p->lineno, exp, sym);
	k.name = sym;
	k.owner = mod;
	k.ns = ns && *ns ? ns : NULL;
	k.ns_known = true;
	k.table = export_types[t].table;
	k.gpl_only = export_types[t].gpl_only;
	k.has_crc = k.crc != 0;
	return kp_base_add(p->b, &k, p->err);
}

int kp_base_load_symvers_buffer(struct kp_kernel_base *b, const char *label,
				const unsigned char *buf, size_t len, struct kp_err *err)
{
	struct parser p = { .b = b, .label = label, .err = err };
	const unsigned char *pos = buf, *end = buf + len;
	char *line = NULL;
	size_t cap = 0, nlines = 0;
	int r = 0;

	kp_base_begin_load(b, KP_SRC_SYMVERS);
	while (pos < end && r == 0) {
		const unsigned char *nl = memchr(pos, '\n', (size_t)(end - pos));
		size_t l = nl ? (size_t)(nl - pos) : (size_t)(end - pos);

		p.lineno++;
		if (memchr(pos, '\0', l)) {
			r = kp_err_set(err, "%s:%zu: NUL byte: not a text file", label, p.lineno);
			break;
		}
		if (l && pos[l - 1] == '\r')
			l--;
		if (l == 0) {
			pos = nl ? nl + 1 : end;
			continue;
		}
		if (kp_grow(&line, &cap, l + 1, 1) < 0) {
			r = kp_err_set(err, "out of memory");
			break;
		}
		memcpy(line, pos, l);
		line[l] = '\0';
		r = parse_line(&p, line);
		nlines++;
		pos = nl ? nl + 1 : end;
	}
	free(line);
	if (r == 0 && nlines == 0)
		r = kp_err_set(err, "%s: empty Module.symvers", label);
	return r;
}

int kp_base_load_symvers(struct kp_kernel_base *b, const char *path, struct kp_err *err)
{
	return kp_base_load_symvers_in(b, NULL, path, err);
}

int kp_base_load_symvers_in(struct kp_kernel_base *b, const struct kp_root_dir *root,
			    const char *path, struct kp_err *err)
{
	struct kp_bytes bytes;
	int r;

	if (kp_read_file_in(root, path, KP_BASE_MAX_TEXT, &bytes, err) < 0)
		return -1;
	r = kp_base_load_symvers_buffer(b, path, bytes.data, bytes.len, err);
	kp_bytes_release(&bytes);
	return r;
}
