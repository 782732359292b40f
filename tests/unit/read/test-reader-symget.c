// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The module reader's symbol_get() call sites (read/symbol-get/): kp_symget.ko of four
 * architectures and a real Debian module of each backend traced exactly, at the sites objdump
 * shows; an architecture without a backend gives heuristic entries; the analysis budget.
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "open-fixture.h"
#include "read/module.h"
#include "tap.h"

static void test_symbol_get(struct tap *t, const char *rel, bool is64, bool big)
{
	static const char *const targets[] = { "kp_gpl_prov_plain",
					       "kp_gpl_prov_gplonly",
					       "kp_prop_plain",
					       "kp_prop_gplonly",
					       "msleep",
					       "ktime_get",
					       "kp_gpl_prov_ns" };
	struct kp_module *m = open_fixture(t, rel);

	if (!m)
		return;
	tap_ok(t, m->is64 == is64 && m->big_endian == big, "%s class and byte order", rel);
	tap_ok(t, m->imports_symbol_get, "imports __symbol_get");
	/* Call sites differ per compiler and arch (arm64 duplicates some); the targets do not. */
	tap_ok(t, m->nsymget >= 8, "symbol_get call sites: %zu", m->nsymget);
	for (size_t i = 0; i < KP_ARRAY_SIZE(targets); i++) {
		bool found = false;

		for (size_t j = 0; j < m->nsymget && !found; j++)
			found = m->symget[j].symbol && !strcmp(m->symget[j].symbol, targets[i]) &&
				m->symget[j].method == KP_SYMGET_EXACT;
		tap_ok(t, found, "symbol_get(%s) traced exactly", targets[i]);
	}
	for (size_t j = 0; j < m->nsymget; j++)
		tap_ok(t, m->symget[j].method == KP_SYMGET_EXACT && m->symget[j].symbol,
		       "site %zu traced exactly", j);
	kp_module_free(m);
}

/*
 * One real Debian trixie module (dvb-usb-umt-010: two symbol_get(dvb_pll_attach) and two
 * symbol_get(mt352_attach) call sites, from dvb_attach()) per architecture: every site
 * traced exactly by the architecture's backend, at the site objdump shows.
 */
static void test_symbol_get_real(struct tap *t, const char *arch, const char *backend,
				 const uint64_t sites[4])
{
	static const char *const targets[] = { "dvb_pll_attach", "dvb_pll_attach", "mt352_attach",
					       "mt352_attach" };
	char rel[128];
	struct kp_module *m;

	snprintf(rel, sizeof(rel), "fixtures/ko/real/dvb-usb-umt-010-%s.ko.xz", arch);
	m = open_fixture(t, rel);
	if (!m)
		return;
	tap_ok(t, m->symget_backend && !strcmp(m->symget_backend, backend), "%s: backend %s", arch,
	       m->symget_backend ? m->symget_backend : "(none)");
	tap_ok(t, m->nsymget == 4, "%s: one entry per call site: %zu", arch, m->nsymget);
	for (size_t i = 0; i < 4 && i < m->nsymget; i++) {
		const struct kp_symget *g = &m->symget[i];

		tap_ok(t,
		       g->method == KP_SYMGET_EXACT && g->symbol && !strcmp(g->symbol, targets[i]),
		       "%s: site %zu symbol_get(%s) exact: %s", arch, i, targets[i],
		       g->symbol ? g->symbol : "(none)");
		tap_ok(t, g->offset == sites[i] && !strcmp(g->section, ".text"),
		       "%s: site %zu at .text+0x%llx (got %s+0x%llx)", arch, i,
		       (unsigned long long)sites[i], g->section, (unsigned long long)g->offset);
	}
	kp_module_free(m);
}

/*
 * fixtures/ko/real/dvb-bt8xx-octeon.ko.xz (bookworm 6.1.0-50-octeon, e_flags octeon): in
 * dvb_bt8xx_probe() __symbol_get is loaded into s0 once and called through it 26 times; the
 * walk back from the two dst_ca_attach calls crosses a cnMIPS `bbit0 v0,5,...` (opcode 0x32,
 * lwc2 elsewhere), which stopped it before the Octeon branches were decoded (24 entries).
 */
static void test_symbol_get_octeon(struct tap *t)
{
	static const uint64_t ca_sites[] = { 0x1768, 0x1cbc };
	struct kp_module *m = open_fixture(t, "fixtures/ko/real/dvb-bt8xx-octeon.ko.xz");
	size_t ca = 0, exact = 0;

	if (!m)
		return;
	tap_ok(t, m->symget_backend && !strcmp(m->symget_backend, "mips64el"), "octeon: backend %s",
	       m->symget_backend ? m->symget_backend : "(none)");
	for (size_t i = 0; i < m->nsymget; i++) {
		const struct kp_symget *g = &m->symget[i];

		exact += g->method == KP_SYMGET_EXACT;
		if (g->symbol && !strcmp(g->symbol, "dst_ca_attach") && ca < 2 &&
		    g->offset == ca_sites[ca] && !strcmp(g->section, ".text"))
			ca++;
	}
	tap_ok(t, m->nsymget == 26 && exact == 26, "octeon: 26 exact entries (%zu, %zu exact)",
	       m->nsymget, exact);
	tap_ok(t, ca == 2, "octeon: symbol_get(dst_ca_attach) at .text+0x1768 and +0x1cbc (%zu)",
	       ca);
	kp_module_free(m);
}

/*
 * fixtures/bad/symget-bomb.ko.xz: 4096 call sites whose walks each cover the sites before
 * them. The module's analysis budget stops the tracing part way: every site is either an
 * entry or counted as not analysed, the same on every read; without tracing, nothing.
 */
static void test_symbol_get_budget(struct tap *t)
{
	static const char *const rel = "fixtures/bad/symget-bomb.ko.xz";
	struct kp_open_opts skip = { .no_symbol_get = true };
	struct kp_module *m = open_fixture(t, rel), *again = open_fixture(t, rel), *s = NULL;
	struct kp_err err = { 0 };

	if (!m || !again)
		goto out;
	tap_ok(t, m->nsymget_unanalysed > 0 && m->nsymget > 100,
	       "budget: %zu sites analysed, %zu not", m->nsymget, m->nsymget_unanalysed);
	tap_is_int(t, (long long)(m->nsymget + m->nsymget_unanalysed), 4096,
		   "every call site is an entry or counted as not analysed");
	tap_ok(t,
	       again->nsymget == m->nsymget && again->nsymget_unanalysed == m->nsymget_unanalysed,
	       "the budget is work, not time: the same split on a second read");
	tap_ok(t,
	       kp_module_open(tap_srcpath(rel), &skip, &s, &err) == 0 && s->symget_skipped &&
		       s->imports_symbol_get && s->nsymget == 0 && s->nsymget_unanalysed == 0,
	       "no_symbol_get: not traced, said so (%s)", err.msg);
out:
	kp_module_free(m);
	kp_module_free(again);
	kp_module_free(s);
}

/*
 * A module of an architecture without a backend (kp_symget.ko with e_machine rewritten
 * to SPARC V9): no backend named, one heuristic entry per call site, never more.
 */
static void test_symbol_get_no_backend(struct tap *t)
{
	static const char *const rel = "fixtures/ko/6.12/kp_symget.ko";
	char tmpl[] = "/tmp/kp-test-sparc-XXXXXX";
	struct kp_module *ref = open_fixture(t, rel), *m = NULL;
	struct kp_err err = { 0 };
	unsigned char *d = NULL;
	size_t n = 0, cap = 0;
	FILE *f = fopen(tap_srcpath(rel), "rb");
	int fd;

	if (!ref || !f)
		goto out;
	for (int c; (c = fgetc(f)) != EOF;) {
		if (n == cap) {
			unsigned char *nd = realloc(d, cap = cap ? cap * 2 : 65536);

			if (!nd)
				goto out;
			d = nd;
		}
		d[n++] = (unsigned char)c;
	}
	if (n < 0x40)
		goto out;
	d[0x12] = EM_SPARCV9; /* e_machine, little-endian */
	d[0x13] = 0;
	fd = mkstemp(tmpl);
	if (fd < 0)
		goto out;
	if (write(fd, d, n) == (ssize_t)n && kp_module_open(tmpl, NULL, &m, &err) == 0) {
		size_t heur = 0;

		tap_ok(t, m->imports_symbol_get && !m->symget_backend,
		       "no backend for SPARC V9: symget_backend is NULL");
		tap_ok(t, m->nsymget == ref->nsymget, "as many entries (%zu) as call sites (%zu)",
		       m->nsymget, ref->nsymget);
		for (size_t i = 0; i < m->nsymget; i++)
			heur += m->symget[i].method == KP_SYMGET_HEURISTIC;
		tap_ok(t, heur == m->nsymget, "every entry is heuristic: %zu of %zu", heur,
		       m->nsymget);
	} else {
		tap_ok(t, false, "open the SPARC V9 copy: %s", err.msg);
	}
	close(fd);
	unlink(tmpl);
out:
	if (f)
		fclose(f);
	free(d);
	kp_module_free(m);
	kp_module_free(ref);
}

int main(void)
{
	struct tap t = { 0 };

	test_symbol_get(&t, "fixtures/ko/6.12/kp_symget.ko", true, false);
	test_symbol_get(&t, "fixtures/ko/6.1-i386/kp_symget.ko", false, false);
	test_symbol_get(&t, "fixtures/ko/6.1-s390x/kp_symget.ko", true, true);
	test_symbol_get(&t, "fixtures/ko/6.12-arm64/kp_symget.ko", true, false);
	test_symbol_get_real(&t, "amd64", "x86_64", (const uint64_t[]){ 0x74, 0xbb, 0x135, 0x195 });
	test_symbol_get_real(&t, "arm64", "arm64", (const uint64_t[]){ 0x90, 0xdc, 0x180, 0x1f0 });
	test_symbol_get_real(&t, "armhf", "arm", (const uint64_t[]){ 0x208, 0x250, 0x2d0, 0x338 });
	test_symbol_get_real(&t, "ppc64el", "ppc64el",
			     (const uint64_t[]){ 0xbc, 0x128, 0x1ec, 0x278 });
	test_symbol_get_real(&t, "riscv64", "riscv64",
			     (const uint64_t[]){ 0x5c, 0xa2, 0x122, 0x17e });
	test_symbol_get_no_backend(&t);
	test_symbol_get_budget(&t);
	/* bookworm 6.1.0-50-5kc-malta: n64 relocations, long calls through a register */
	test_symbol_get_real(&t, "mips64el", "mips64el",
			     (const uint64_t[]){ 0x98, 0xf4, 0x1b4, 0x224 });
	test_symbol_get_octeon(&t);
	/* sid 7.2.13+deb14-loong64: pcalau12i + addi.d %pc_lo12, bl __symbol_get (R_LARCH_B26) */
	test_symbol_get_real(&t, "loong64", "loongarch64",
			     (const uint64_t[]){ 0x74, 0xd4, 0x174, 0x1f4 });
	return tap_done(&t);
}
