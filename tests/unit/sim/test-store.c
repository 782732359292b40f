// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sim-store.c: a recorded simulation as bytes and back. Every field of every verdict, record
 * and the pool comes back equal (the 6.1 fixtures, a built world with findings, symbol_get()
 * results and P evidence); the decoded records answer kp_sim_reads_hold() as the originals
 * do; every field of the structs stored is listed (a field added fails the count); the
 * interface digest moves with what other loads read (an export's CRC, namespace or class, an
 * import's weak bit) and not with the rest (license, signature);
 * a damaged store (every truncation, every byte of a small store flipped, every 32-bit field
 * of a larger one set to extremes) decodes to an error or to a store whose every index is in
 * bounds, never past its bytes (the sanitizer build checks the latter). Runs where an oops
 * stalls the loads after it: test-store-stall.c.
 * With arguments (a directory of modules and its Module.symvers), the round trip of a whole
 * tree, timed by the caller: `test-store DIR SYMVERS`.
 */
#include <ftw.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "builder.h"
#include "cache/facts-serial.h"
#include "read/module-iface.h"
#include "sim/sim-store.h"
#include "store-check.h"

/*
 * The bytes of a struct no listed field covers: padding, or a field added since the list was
 * made. The lists are the fields sim-store.c stores (node: the store's node index); a field
 * added to the struct and not to its list (and so, likely, not to the store) changes the count.
 */
struct cover {
	unsigned char map[256];
	size_t size;
};
#define COVER(c, type, field) \
	memset((c)->map + offsetof(type, field), 1, sizeof(((type *)NULL)->field))

static size_t uncovered(const struct cover *c)
{
	size_t n = 0;

	for (size_t i = 0; i < c->size; i++)
		n += !c->map[i];
	return n;
}

static void fields(struct tap *t)
{
	struct cover v = { .size = sizeof(struct kp_verdict) };
	struct cover r = { .size = sizeof(struct kp_sim_reads) };
	struct cover f = { .size = sizeof(struct kp_finding) };
	struct cover g = { .size = sizeof(struct kp_symget_result) };
	struct cover st = { .size = sizeof(struct kp_stall) };
	bool lp64 = sizeof(void *) == 8 && sizeof(long) == 8 && sizeof(int) == 4;

	if (v.size > sizeof(v.map) || r.size > sizeof(r.map) || f.size > sizeof(f.map) ||
	    g.size > sizeof(g.map))
		abort();
	COVER(&v, struct kp_verdict, node);
	COVER(&v, struct kp_verdict, attempted);
	COVER(&v, struct kp_verdict, loads);
	COVER(&v, struct kp_verdict, err);
	COVER(&v, struct kp_verdict, taints);
	COVER(&v, struct kp_verdict, global_added);
	COVER(&v, struct kp_verdict, global_after);
	COVER(&v, struct kp_verdict, messages);
	COVER(&v, struct kp_verdict, nmessages);
	COVER(&v, struct kp_verdict, symget);
	COVER(&v, struct kp_verdict, nsymget);
	COVER(&v, struct kp_verdict, findings);
	COVER(&v, struct kp_verdict, nfindings);
	COVER(&v, struct kp_verdict, p_reason);
	COVER(&v, struct kp_verdict, p_from);
	COVER(&v, struct kp_verdict, p_symbol);
	COVER(&v, struct kp_verdict, failed_dep);
	COVER(&v, struct kp_verdict, load_seq);
	COVER(&v, struct kp_verdict, hangs);
	COVER(&v, struct kp_verdict, holds_module_mutex);
	COVER(&v, struct kp_verdict, left_unformed);
	COVER(&v, struct kp_verdict, stalled_by);

	COVER(&r, struct kp_sim_reads, taint_before);
	COVER(&r, struct kp_sim_reads, taint_tested);
	COVER(&r, struct kp_sim_reads, taint_set);
	COVER(&r, struct kp_sim_reads, taint_late);
	COVER(&r, struct kp_sim_reads, once_before);
	COVER(&r, struct kp_sim_reads, once_read);
	COVER(&r, struct kp_sim_reads, once_set);
	COVER(&r, struct kp_sim_reads, name_read);
	COVER(&r, struct kp_sim_reads, name_live);
	COVER(&r, struct kp_sim_reads, name_unformed);
	COVER(&r, struct kp_sim_reads, stall_asked);
	COVER(&r, struct kp_sim_reads, stall_before);
	COVER(&r, struct kp_sim_reads, stall_set);
	COVER(&r, struct kp_sim_reads, verdicts);
	COVER(&r, struct kp_sim_reads, nverdicts);
	COVER(&r, struct kp_sim_reads, late);
	COVER(&r, struct kp_sim_reads, nlate);
	COVER(&r, struct kp_sim_reads, nmessages_load);
	COVER(&r, struct kp_sim_reads, nfindings_load);

	COVER(&st, struct kp_stall, kind);
	COVER(&st, struct kp_stall, by);

	COVER(&f, struct kp_finding, id);
	COVER(&f, struct kp_finding, severity);
	COVER(&f, struct kp_finding, consequence);
	COVER(&f, struct kp_finding, message);
	COVER(&f, struct kp_finding, symbol);
	COVER(&f, struct kp_finding, waived);

	COVER(&g, struct kp_symget_result, symbol);
	COVER(&g, struct kp_symget_result, ok);
	COVER(&g, struct kp_symget_result, reason);
	COVER(&g, struct kp_symget_result, owner);
	COVER(&g, struct kp_symget_result, gpl_only);
	COVER(&g, struct kp_symget_result, method_heuristic);
	COVER(&g, struct kp_symget_result, dynamic);
	COVER(&g, struct kp_symget_result, when);
	COVER(&g, struct kp_symget_result, path);
	COVER(&g, struct kp_symget_result, function);
	COVER(&g, struct kp_symget_result, kernel_logs);

	if (!lp64) {
		for (int i = 0; i < 5; i++)
			tap_ok(t, 1, "fields # SKIP the padding counts are LP64's");
		return;
	}
	/* a failure here: a field was added; store it (sim-store.c), then list it above */
	tap_is_intf(t, (long)uncovered(&v), 11, "struct kp_verdict (%zu bytes): every field stored",
		    v.size);
	tap_is_intf(t, (long)uncovered(&r), 5,
		    "struct kp_sim_reads (%zu bytes): every field stored", r.size);
	tap_is_intf(t, (long)uncovered(&st), 4, "struct kp_stall (%zu bytes): every field stored",
		    st.size);
	tap_is_intf(t, (long)uncovered(&f), 7, "struct kp_finding (%zu bytes): every field stored",
		    f.size);
	tap_is_intf(t, (long)uncovered(&g), 15,
		    "struct kp_symget_result (%zu bytes): every field stored", g.size);
}

/*
 * The store @p (@len bytes) with the first finding of a verdict's body renamed "bridge" (its
 * string's and its body's lengths made right): refused, a body being copied as kept.
 */
static void policy_in_body(struct tap *t, const unsigned char *p, size_t len)
{
	struct kp_sim_stored s;
	struct kp_err err = { 0 };
	size_t node = SIZE_MAX, at, old, body_at, qlen;
	unsigned char *q;

	if (kp_sim_store_decode(p, len, &s, &err) < 0)
		abort();
	for (size_t i = 0; i < s.n && node == SIZE_MAX; i++)
		if (s.sim.v[i].nfindings && !kp_finding_is_policy(&s.sim.v[i].findings[0]))
			node = i;
	tap_ok(t, node != SIZE_MAX, "built: a verdict with a finding in its body");
	if (node == SIZE_MAX) {
		kp_sim_stored_release(&s);
		return;
	}
	/* the decoded strings are the store's bytes: the id's place is its offset in @p */
	at = (size_t)((const unsigned char *)s.sim.v[node].findings[0].id - p) - 4;
	old = strlen(s.sim.v[node].findings[0].id);
	body_at = (size_t)(s.mods[node].body - p) - 4;
	qlen = len - old + 6;
	q = malloc(qlen);
	if (!q)
		abort();
	memcpy(q, p, at);
	kp_store32(q + at, 6);
	memcpy(q + at + 4, "bridge", 7);
	memcpy(q + at + 11, p + at + 4 + old + 1, len - (at + 4 + old + 1));
	kp_store32(q + body_at, (uint32_t)(s.mods[node].bodylen - old + 6));
	kp_sim_stored_release(&s);
	tap_ok(t, kp_sim_store_decode(q, qlen, &s, &err) < 0, "built: a bridge in a body refused");
	tap_is_str(t, err.msg, "stored simulation: a policy finding in a body",
		   "built: a bridge in a body's error");
	free(q);
}

static void built(struct tap *t)
{
	struct tb_world w;
	struct kp_module *m;
	unsigned char *p;
	size_t len;

	tb_init(&w, "6.12.37");
	tb_std_kernel(&w);
	w.facts.module_sig = true;
	w.facts.vermagic = "6.12.0 SMP mod_unload ";
	m = tb_module(&w, "first");
	tb_import(m, "printk");
	m = tb_module(&w, "prov");
	tb_modinfo(m, "license", "Proprietary");
	tb_export(m, "p_fn", KP_KSYMTAB);
	tb_export(m, "p_gpl", KP_KSYMTAB_GPL);
	m = tb_module(&w, "user");
	tb_import(m, "p_fn");
	m = tb_module(&w, "getter");
	tb_symget(m, "p_gpl", KP_SYMGET_EXACT, false);
	tb_symget(m, "p_fn", KP_SYMGET_EXACT, false);
	m = tb_module(&w, "late_fail");
	tb_import(m, "nobody_exports_this");
	run_recorded(&w);
	/* what the store must carry: P evidence, a failed load, symbol_get results, findings */
	tap_is_int(t, tb_v(&w, "user")->p_reason, KP_P_INHERITED, "built: user inherits P");
	tap_is_int(t, tb_v(&w, "late_fail")->err, -2, "built: late_fail fails (ENOENT)");
	tap_is_int(t, (long)tb_v(&w, "getter")->nsymget, 2, "built: getter's two results");
	tap_ok(t, tb_v(&w, "late_fail")->nfindings > 0, "built: late_fail has findings");
	/* as kp_waivers_apply() leaves it */
	if (tb_v(&w, "late_fail")->nfindings)
		w.sim.v[tb_node(&w, "late_fail")].findings[0].waived = true;
	round_trip(t, &w, "built", &p, &len);
	damage(t, p, len, 1, "built");
	copied_again(t, p, len, "built");
	policy_in_body(t, p, len);
	/*
	 * stores of the earlier layouts (KPSIMST1: no stall state; KPSIMST2: one pool of reads,
	 * offsets into it): refused, not read as this one
	 */
	for (int k = 1; k <= 2; k++) {
		struct kp_sim_stored s;
		struct kp_err err = { 0 };
		char what[64];

		memcpy(p, k == 1 ? "KPSIMST1" : "KPSIMST2", 8);
		tap_ok(t, kp_sim_store_decode(p, len, &s, &err) < 0, "built: KPSIMST%d refused", k);
		snprintf(what, sizeof(what), "built: KPSIMST%d's error", k);
		tap_is_str(t, err.msg, "stored simulation: magic", what);
	}
	free(p);
	tb_free(&w);
}

/*
 * A bridge (policy.c: a GPL module using GPL-only symbols exporting to a proprietary one):
 * its finding, added after the simulation, stored apart from the body and back in place.
 */
static void bridged(struct tap *t)
{
	struct tb_world w;
	struct kp_module *m;
	struct kp_sim_stored s;
	struct kp_err err = { 0 };
	const struct kp_verdict *v;
	unsigned char *p;
	size_t len;

	tb_init(&w, "6.12.37");
	tb_std_kernel(&w);
	m = tb_module(&w, "gpl_bridge");
	tb_import(m, "gpl_fn");
	tb_export(m, "bridge_fn", KP_KSYMTAB);
	tb_symget(m, "printk", KP_SYMGET_EXACT, false);
	m = tb_module(&w, "prop");
	tb_modinfo(m, "license", "Proprietary");
	tb_import(m, "bridge_fn");
	run_recorded(&w);
	tap_is_int(t, kp_add_policy_findings(&w.sim, NULL, &err), 0, "bridged: policy findings");
	v = tb_v(&w, "gpl_bridge");
	tap_ok(t, v->nfindings && !strcmp(v->findings[v->nfindings - 1].id, "bridge"),
	       "bridged: gpl_bridge's last finding is its bridge");
	round_trip(t, &w, "bridged", &p, &len);
	copied_again(t, p, len, "bridged");
	if (kp_sim_store_decode(p, len, &s, &err) < 0)
		abort();
	v = &s.sim.v[tb_node(&w, "gpl_bridge")];
	tap_ok(t,
	       v->nfindings && !strcmp(v->findings[v->nfindings - 1].id, "bridge") &&
		       !strcmp(v->findings[v->nfindings - 1].symbol, "bridge_fn"),
	       "bridged: decoded, the bridge is gpl_bridge's last finding again");
	kp_sim_stored_release(&s);
	damage(t, p, len, 1, "bridged");
	free(p);
	tb_free(&w);
}

/* The interface digest of module @m after @edit, against @before. */
static bool digest_moves(struct kp_module *m, const unsigned char *before)
{
	unsigned char d[KP_SIM_IFACE_LEN];

	if (kp_sim_iface_digest(m, d) < 0)
		abort();
	return memcmp(d, before, sizeof(d)) != 0;
}

static void digests(struct tap *t)
{
	struct tb_world w;
	struct kp_module *m;
	unsigned char d0[KP_SIM_IFACE_LEN];

	tb_init(&w, "6.12.37");
	m = tb_module(&w, "m");
	tb_export(m, "m_fn", KP_KSYMTAB);
	tb_export_crc(m, 0x1234);
	tb_import(m, "printk");
	tap_is_int(t, kp_sim_iface_digest(m, d0), 0, "digest");
	tap_ok(t, !digest_moves(m, d0), "digest: the same facts, the same digest");
	tb_modinfo(m, "license", "Proprietary");
	m->license = "Proprietary";
	tap_ok(t, !digest_moves(m, d0), "digest: the license is not the interface");
	m->exports[0].crc = 0x1235;
	tap_ok(t, digest_moves(m, d0), "digest: an export's CRC is");
	m->exports[0].crc = 0x1234;
	m->exports[0].gpl_only = true;
	tap_ok(t, digest_moves(m, d0), "digest: an export's class is");
	m->exports[0].gpl_only = false;
	m->exports[0].ns = "NS";
	tap_ok(t, digest_moves(m, d0), "digest: an export's namespace is");
	m->exports[0].ns = NULL;
	m->imports[0].weak = 1;
	tap_ok(t, digest_moves(m, d0), "digest: an import's weak bit is");
	m->imports[0].weak = 0;
	tap_ok(t, !digest_moves(m, d0), "digest: back to the first facts");
	/* "ab" + "c" and "a" + "bc": the lengths keep the fields apart */
	m->exports[0].name = "m_fnNS";
	tap_ok(t, digest_moves(m, d0), "digest: an export's name is");
	tb_free(&w);
}

/*
 * Every module of @w read from its file carries its interface digest (made by the reader),
 * equal to one computed from its fields now, and the facts cache's encoding gives it back
 * (read/module-iface.h, cache/facts-serial.h): a store writes it without hashing. The
 * modules whose digest did not come back the same, or that lack one.
 */
static size_t facts_digests(const struct tb_world *w)
{
	struct kp_facts_buf b = { 0 };
	size_t bad = 0;

	for (size_t i = 0; i < w->g.n; i++) {
		const struct kp_module *m = w->g.nodes[i].mod;
		unsigned char d[KP_SIM_IFACE_LEN];
		struct kp_module *back = calloc(1, sizeof(*back));

		b.len = 0;
		if (!back || !m->iface_digested || kp_sim_iface_digest(m, d) < 0 ||
		    memcmp(d, m->iface_sha256, sizeof(d)) || kp_facts_encode(m, &b) < 0) {
			bad++;
			free(back);
			continue;
		}
		back->path = m->path;
		if (kp_facts_decode(back, b.data, b.len, NULL) < 0 || !back->iface_digested ||
		    memcmp(back->iface_sha256, d, sizeof(d)))
			bad++;
		kp_module_free(back);
	}
	kp_facts_buf_release(&b);
	return bad;
}

/* CPU time of this thread (a shared machine: wall time would be the load) */
static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static struct tb_world *tree_world;
static int tree_depth; /* the deepest level of modules taken (nftw(): 1 is the directory's) */

static int add_ko(const char *path, const struct stat *st, int type, struct FTW *f)
{
	size_t n = strlen(path);

	(void)st;
	if (type == FTW_F && f->level <= tree_depth && (n > 3 && !strcmp(path + n - 3, ".ko")))
		tb_module_file(tree_world, path);
	return 0;
}

static void world_61(struct tb_world *w, const char *dir, const char *symvers, int depth)
{
	tb_init_distro(w, "6.1.192", KP_DISTRO_DEBIAN);
	w->facts.release = "6.1.0-57-amd64";
	w->facts.modversions = true;
	w->facts.module_sig = true;
	tb_base_file(w, symvers);
	tree_world = w;
	tree_depth = depth;
	if (nftw(dir, add_ko, 32, FTW_PHYS) != 0)
		abort();
	run_recorded(w);
}

int main(int argc, char **argv)
{
	struct tap t = { 0 };
	struct tb_world w;
	unsigned char *p;
	char *dir;
	size_t len;

	if (argc == 3) {
		struct kp_sim_stored s;
		struct kp_err err;
		double t0, t1, t2, enc = 0, dec = 0;

		world_61(&w, argv[1], argv[2], 64);
		tap_is_intf(&t, (long)facts_digests(&w), 0,
			    "%s: %zu digests read = computed = decoded", argv[1], w.g.n);
		round_trip(&t, &w, argv[1], &p, &len);
		free(p);
		/* what a store and a reading cost (printed, not asserted) */
		/* the fastest of 5 (printed, not asserted) */
		for (int k = 0; k < 5; k++) {
			t0 = now_ms();
			if (kp_sim_store_encode(&w.g, &w.sim, &p, &len, NULL, &err) < 0)
				abort();
			t1 = now_ms();
			if (kp_sim_store_decode(p, len, &s, &err) < 0)
				abort();
			t2 = now_ms();
			enc = k && enc < t1 - t0 ? enc : t1 - t0;
			dec = k && dec < t2 - t1 ? dec : t2 - t1;
			kp_sim_stored_release(&s);
			free(p);
		}
		printf("# %zu modules, %zu bytes stored; encoded in %.1f ms, decoded in %.1f ms\n",
		       w.g.n, len, enc, dec);
		/* what the reader's digests cost (the fastest of 5, printed, not asserted) */
		for (int k = 0; k < 5; k++) {
			unsigned char d[KP_SIM_IFACE_LEN];

			t0 = now_ms();
			for (size_t i = 0; i < w.g.n; i++)
				if (kp_module_iface_digest(w.g.nodes[i].mod, NULL, d) < 0)
					abort();
			t1 = now_ms();
			enc = k && enc < t1 - t0 ? enc : t1 - t0;
		}
		printf("# %zu interface digests made in %.1f ms (as the reader makes them)\n",
		       w.g.n, enc);
		tb_free(&w);
		return tap_done(&t);
	}
	fields(&t);
	digests(&t);
	built(&t);
	bridged(&t);
	/* tap_srcpath() gives one buffer: the directory copied first */
	dir = strdup(tap_srcpath("fixtures/ko/6.1"));
	if (!dir)
		abort();
	world_61(&w, dir, tap_srcpath("fixtures/ko/6.1/Module.symvers.gz"), 1);
	free(dir);
	tap_is_intf(&t, (long)w.g.n, 47, "6.1 fixtures: %zu modules", w.g.n);
	tap_is_intf(
		&t, (long)facts_digests(&w), 0,
		"6.1 fixtures: the digests read = computed = through the facts cache's encoding");
	round_trip(&t, &w, "6.1 fixtures", &p, &len);
	copied_again(&t, p, len, "6.1 fixtures");
	damage(&t, p, len, 7, "6.1 fixtures");
	free(p);
	tb_free(&w);
	return tap_done(&t);
}
