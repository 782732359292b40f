// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A recorded simulation as bytes and back (sim-store.h). Layout, little-endian; a string is
 * its length (32 bits, 0xffffffff for NULL) and its bytes, no NUL:
 *
 *   magic "KPSIMST2", module count (32), global taint (64), pool length (32)
 *   per module in load order:
 *     node (32), path, name, interface digest (32 bytes)
 *     flags (8: attempted, loads, hangs, holds_module_mutex, left_unformed), err (32),
 *     taints, global_added, global_after (64)
 *     p_reason (8), p_from (32), p_symbol, failed_dep (32), load_seq (32), stalled_by (32)
 *     (an index of 0xffffffff: none)
 *     messages: count (32), strings
 *     findings: count (32), each: id, severity (8), consequence (8), message, symbol,
 *               waived (8)
 *     symbol_get: count (32), each: symbol, flags (8: ok, gpl_only, heuristic, dynamic,
 *                 kernel_logs), reason, owner, when (8), path, function
 *     reads: taint_before, taint_tested, taint_set, taint_late (64), once_before,
 *            once_read, once_set (32), name bits (8: read, live, unformed),
 *            stall_asked (8), stall_before and stall_set: kind (8), by (32),
 *            verdicts, nverdicts, late, nlate, nmessages_load, nfindings_load (32)
 *   pool: the verdict indices (32 each)
 *
 * The magic names the layout: a store of another layout (KPSIMST1 had no stall state) is
 * refused, never read as this one.
 */
#include <string.h>

#include <openssl/evp.h>

#include "sim-store.h"
#include "sim-reads.h"
#include "read/module-iface.h"
#include "util/byte-reader.h"
#include "util/byte-writer.h"

#define MAGIC "KPSIMST2"
#define NONE  KP_BW_NONE

/* An index or SIZE_MAX (none). */
static void put_index(struct kp_byte_writer *w, size_t v)
{
	kp_bw_put32(w, v == SIZE_MAX ? NONE : (uint64_t)v);
}

int kp_sim_iface_digest(const struct kp_module *m, unsigned char out[KP_SIM_IFACE_LEN])
{
	return kp_module_iface_digest(m, NULL, out);
}

static void put_verdict(struct kp_byte_writer *w, const struct kp_verdict *v)
{
	kp_bw_put8(w, (v->attempted ? 1u : 0u) | (v->loads ? 2u : 0u) | (v->hangs ? 4u : 0u) |
			      (v->holds_module_mutex ? 8u : 0u) | (v->left_unformed ? 16u : 0u));
	kp_bw_put32(w, (uint32_t)v->err);
	kp_bw_put64(w, v->taints);
	kp_bw_put64(w, v->global_added);
	kp_bw_put64(w, v->global_after);
	kp_bw_put8(w, (unsigned)v->p_reason);
	put_index(w, v->p_from);
	kp_bw_str(w, v->p_symbol);
	put_index(w, v->failed_dep);
	kp_bw_put32(w, v->load_seq);
	put_index(w, v->stalled_by);
	kp_bw_put32(w, v->nmessages);
	for (size_t i = 0; i < v->nmessages; i++)
		kp_bw_str(w, v->messages[i]);
	kp_bw_put32(w, v->nfindings);
	for (size_t i = 0; i < v->nfindings; i++) {
		const struct kp_finding *f = &v->findings[i];

		kp_bw_str(w, f->id);
		kp_bw_put8(w, (unsigned)f->severity);
		kp_bw_put8(w, (unsigned)f->consequence);
		kp_bw_str(w, f->message);
		kp_bw_str(w, f->symbol);
		kp_bw_put8(w, f->waived);
	}
	kp_bw_put32(w, v->nsymget);
	for (size_t i = 0; i < v->nsymget; i++) {
		const struct kp_symget_result *r = &v->symget[i];

		kp_bw_str(w, r->symbol);
		kp_bw_put8(w, (r->ok ? 1u : 0u) | (r->gpl_only ? 2u : 0u) |
				      (r->method_heuristic ? 4u : 0u) | (r->dynamic ? 8u : 0u) |
				      (r->kernel_logs ? 16u : 0u));
		kp_bw_str(w, r->reason);
		kp_bw_str(w, r->owner);
		kp_bw_put8(w, (unsigned)r->when);
		kp_bw_str(w, r->path);
		kp_bw_str(w, r->function);
	}
}

static void put_stall(struct kp_byte_writer *w, const struct kp_stall *st)
{
	kp_bw_put8(w, (unsigned)st->kind);
	put_index(w, st->by);
}

static void put_reads(struct kp_byte_writer *w, const struct kp_sim_reads *r)
{
	kp_bw_put64(w, r->taint_before);
	kp_bw_put64(w, r->taint_tested);
	kp_bw_put64(w, r->taint_set);
	kp_bw_put64(w, r->taint_late);
	kp_bw_put32(w, r->once_before);
	kp_bw_put32(w, r->once_read);
	kp_bw_put32(w, r->once_set);
	kp_bw_put8(w, (r->name_read ? 1u : 0u) | (r->name_live ? 2u : 0u) |
			      (r->name_unformed ? 4u : 0u));
	kp_bw_put8(w, r->stall_asked);
	put_stall(w, &r->stall_before);
	put_stall(w, &r->stall_set);
	kp_bw_put32(w, r->verdicts);
	kp_bw_put32(w, r->nverdicts);
	kp_bw_put32(w, r->late);
	kp_bw_put32(w, r->nlate);
	kp_bw_put32(w, r->nmessages_load);
	kp_bw_put32(w, r->nfindings_load);
}

int kp_sim_store_encode(const struct kp_graph *g, const struct kp_simulation *sim,
			unsigned char **out, size_t *len,
			unsigned char (*digests)[KP_SIM_IFACE_LEN], struct kp_err *err)
{
	struct kp_byte_writer w = { 0 };
	unsigned char digest[KP_SIM_IFACE_LEN];
	/*
	 * A module read (or its facts decoded) carries its digest; one built otherwise is
	 * hashed here, with SHA-256 fetched once (EVP_sha256() is looked up on every use).
	 */
	EVP_MD *md = NULL;
	const char *bad = NULL;

	*out = NULL;
	*len = 0;
	if (!sim->rec || sim->reads_incomplete || sim->n != g->n)
		bad = "the simulation's reads were not recorded";
	kp_bw_put(&w, MAGIC, 8);
	kp_bw_put32(&w, g->n);
	kp_bw_put64(&w, sim->global_taint);
	kp_bw_put32(&w, sim->nreads);
	for (size_t i = 0; i < g->n && !w.failed && !bad; i++) {
		size_t node = g->order[i];
		const struct kp_node *nd = &g->nodes[node];

		if (!nd->mod->iface_digested && !md)
			md = EVP_MD_fetch(NULL, "SHA256", NULL);
		if (kp_module_iface(nd->mod, md, digest) < 0) {
			bad = "cannot hash a module's interface";
			break;
		}
		kp_bw_put32(&w, node);
		kp_bw_str(&w, nd->path);
		kp_bw_str(&w, nd->mod->name);
		kp_bw_put(&w, digest, sizeof(digest));
		if (digests)
			memcpy(digests[node], digest, sizeof(digest));
		put_verdict(&w, &sim->v[node]);
		put_reads(&w, &sim->rec[node]);
	}
	for (size_t i = 0; i < sim->nreads && !bad; i++)
		kp_bw_put32(&w, sim->reads[i]);
	EVP_MD_free(md);
	if (!bad && w.failed)
		bad = "out of memory, or a count over 32 bits";
	if (bad) {
		free(w.p);
		return kp_err_set(err, "storing the simulation: %s", bad);
	}
	*out = w.p;
	*len = w.len;
	return 0;
}

/* Reading (util/byte-reader.h: bounds-checked), with the arena the decoded data go to. */
struct rbuf {
	struct kp_byte_reader br;
	struct kp_arena *arena;
};

/* A count of items each at least @min bytes long: no more than the bytes left allow. */
static size_t get_count(struct rbuf *r, size_t min, const char *what)
{
	uint32_t n = kp_br_get32(&r->br, what);

	if (!r->br.bad && (size_t)n > (r->br.len - r->br.off) / min) {
		r->br.bad = what;
		return 0;
	}
	return r->br.bad ? 0 : n;
}

/* An index below @n, or SIZE_MAX for none. */
static size_t get_index(struct rbuf *r, size_t n, const char *what)
{
	uint32_t v = kp_br_get32(&r->br, what);

	if (v == NONE)
		return SIZE_MAX;
	if (v >= n && !r->br.bad)
		r->br.bad = what;
	return r->br.bad ? SIZE_MAX : v;
}

/* A string into the arena (NULL for none); no NUL inside. */
static char *get_str(struct rbuf *r, const char *what)
{
	uint32_t n = kp_br_get32(&r->br, what);
	const unsigned char *q;
	char *s;

	if (r->br.bad || n == NONE)
		return NULL;
	q = kp_br_take(&r->br, n, what);
	if (!q)
		return NULL;
	if (memchr(q, '\0', n)) {
		r->br.bad = what;
		return NULL;
	}
	s = kp_arena_strndup(r->arena, (const char *)q, n);
	if (!s)
		r->br.bad = "out of memory";
	return s;
}

static void *get_array(struct rbuf *r, size_t n, size_t size)
{
	void *a;

	if (r->br.bad || !n)
		return NULL;
	a = kp_arena_alloc(r->arena, n * size);
	if (!a)
		r->br.bad = "out of memory";
	else
		memset(a, 0, n * size);
	return a;
}

static void get_verdict(struct rbuf *r, struct kp_verdict *v, size_t n)
{
	unsigned flags = kp_br_get8(&r->br, "verdict flags");

	v->attempted = flags & 1;
	v->loads = flags & 2;
	v->hangs = flags & 4;
	v->holds_module_mutex = flags & 8;
	v->left_unformed = flags & 16;
	if (flags & ~31u)
		r->br.bad = r->br.bad ? r->br.bad : "verdict flags";
	v->err = (int)kp_br_get32(&r->br, "errno");
	v->taints = (unsigned long)kp_br_get64(&r->br, "taints");
	v->global_added = (unsigned long)kp_br_get64(&r->br, "global taint added");
	v->global_after = (unsigned long)kp_br_get64(&r->br, "global taint after");
	v->p_reason = (enum kp_p_reason)kp_br_get8(&r->br, "P reason");
	if (v->p_reason > KP_P_PRELOADED)
		r->br.bad = r->br.bad ? r->br.bad : "P reason";
	v->p_from = get_index(r, n, "P owner");
	v->p_symbol = get_str(r, "P symbol");
	v->failed_dep = get_index(r, n, "failed dependency");
	v->load_seq = kp_br_get32(&r->br, "load sequence");
	v->stalled_by = get_index(r, n, "stalled by");
	/* the verdict of the load that stalled this one: a blocked or not-run load's only */
	if (!r->br.bad &&
	    (v->stalled_by != SIZE_MAX) != (v->err == KP_ERR_BLOCKED || v->err == KP_ERR_NOT_RUN))
		r->br.bad = "stalled by";
	v->nmessages = get_count(r, 4, "messages");
	v->messages = get_array(r, v->nmessages, sizeof(*v->messages));
	for (size_t i = 0; i < v->nmessages && !r->br.bad; i++) {
		v->messages[i] = get_str(r, "message");
		if (!v->messages[i])
			r->br.bad = r->br.bad ? r->br.bad : "message";
	}
	v->nfindings = get_count(r, 15, "findings");
	v->findings = get_array(r, v->nfindings, sizeof(*v->findings));
	for (size_t i = 0; i < v->nfindings && !r->br.bad; i++) {
		struct kp_finding *f = &v->findings[i];
		unsigned waived;

		f->id = get_str(r, "finding id");
		f->severity = (enum kp_severity)kp_br_get8(&r->br, "finding severity");
		f->consequence = (enum kp_consequence)kp_br_get8(&r->br, "finding consequence");
		f->message = get_str(r, "finding message");
		f->symbol = get_str(r, "finding symbol");
		waived = kp_br_get8(&r->br, "finding waived");
		f->waived = waived;
		if (!r->br.bad && (!f->id || f->severity > KP_SEV_ERROR ||
				   f->consequence > KP_CONS_WARN || waived > 1))
			r->br.bad = "finding";
	}
	v->nsymget = get_count(r, 22, "symbol_get results");
	v->symget = get_array(r, v->nsymget, sizeof(*v->symget));
	for (size_t i = 0; i < v->nsymget && !r->br.bad; i++) {
		struct kp_symget_result *s = &v->symget[i];
		unsigned sf;

		s->symbol = get_str(r, "symbol_get symbol");
		sf = kp_br_get8(&r->br, "symbol_get flags");
		s->ok = sf & 1;
		s->gpl_only = sf & 2;
		s->method_heuristic = sf & 4;
		s->dynamic = sf & 8;
		s->kernel_logs = sf & 16;
		s->reason = get_str(r, "symbol_get reason");
		s->owner = get_str(r, "symbol_get owner");
		s->when = (enum kp_symget_when)kp_br_get8(&r->br, "symbol_get when");
		s->path = get_str(r, "symbol_get path");
		s->function = get_str(r, "symbol_get function");
		if (!r->br.bad && ((sf & ~31u) || s->when > KP_SYMGET_WHEN_CALLED))
			r->br.bad = "symbol_get result";
	}
}

/* A stall (what an oops left of the loader): a kind, and the verdict of the load behind it. */
static void get_stall(struct rbuf *r, struct kp_stall *st, size_t n, const char *what)
{
	unsigned kind = kp_br_get8(&r->br, what);

	st->by = get_index(r, n, what);
	st->kind = (enum kp_stall_kind)kind;
	if (!r->br.bad && (kind > KP_STALL_HUNG || (kind != KP_STALL_NONE && st->by == SIZE_MAX)))
		r->br.bad = what;
}

static void get_reads(struct rbuf *r, struct kp_sim_reads *rd, const struct kp_verdict *v, size_t n,
		      size_t npool)
{
	unsigned nb;

	rd->taint_before = (unsigned long)kp_br_get64(&r->br, "taint before");
	rd->taint_tested = (unsigned long)kp_br_get64(&r->br, "taint tested");
	rd->taint_set = (unsigned long)kp_br_get64(&r->br, "taint set");
	rd->taint_late = (unsigned long)kp_br_get64(&r->br, "taint tested late");
	rd->once_before = kp_br_get32(&r->br, "once flags before");
	rd->once_read = kp_br_get32(&r->br, "once flags read");
	rd->once_set = kp_br_get32(&r->br, "once flags set");
	nb = kp_br_get8(&r->br, "name bits");
	rd->name_read = nb & 1;
	rd->name_live = nb & 2;
	rd->name_unformed = nb & 4;
	rd->stall_asked = kp_br_get8(&r->br, "stall kinds asked");
	get_stall(r, &rd->stall_before, n, "stall before");
	get_stall(r, &rd->stall_set, n, "stall set");
	rd->verdicts = kp_br_get32(&r->br, "verdicts read");
	rd->nverdicts = kp_br_get32(&r->br, "verdicts read");
	rd->late = kp_br_get32(&r->br, "verdicts read late");
	rd->nlate = kp_br_get32(&r->br, "verdicts read late");
	rd->nmessages_load = kp_br_get32(&r->br, "load messages");
	rd->nfindings_load = kp_br_get32(&r->br, "load findings");
	if (r->br.bad)
		return;
	if ((nb & ~7u) || ((rd->once_before | rd->once_read | rd->once_set) >> KP_ONCE_N) ||
	    (rd->stall_asked >> (KP_STALL_HUNG + 1)))
		r->br.bad = "read record flags";
	else if (rd->nverdicts > npool || rd->verdicts > npool - rd->nverdicts ||
		 rd->nlate > npool || rd->late > npool - rd->nlate)
		r->br.bad = "read range past the pool";
	else if (rd->nmessages_load > v->nmessages || rd->nfindings_load > v->nfindings)
		r->br.bad = "load messages or findings past the verdict's";
}

int kp_sim_store_decode(const unsigned char *p, size_t len, struct kp_sim_stored *out,
			struct kp_err *err)
{
	struct rbuf r = { .br = { .p = p, .len = len }, .arena = &out->arena };
	struct kp_simulation *sim = &out->sim;
	const unsigned char *magic;
	bool *seen = NULL;
	size_t n;

	memset(out, 0, sizeof(*out));
	magic = kp_br_take(&r.br, 8, "header");
	if (magic && memcmp(magic, MAGIC, 8))
		r.br.bad = "magic";
	/* a module takes at least 180 bytes, a pool entry 4 */
	n = get_count(&r, 180, "module count");
	sim->global_taint = (unsigned long)kp_br_get64(&r.br, "global taint");
	sim->nreads = get_count(&r, 4, "pool length");
	if (!r.br.bad && n) {
		out->order = calloc(n, sizeof(*out->order));
		out->mods = calloc(n, sizeof(*out->mods));
		sim->v = calloc(n, sizeof(*sim->v));
		sim->rec = calloc(n, sizeof(*sim->rec));
		seen = calloc(n, sizeof(*seen));
		if (!out->order || !out->mods || !sim->v || !sim->rec || !seen)
			r.br.bad = "out of memory";
	}
	out->n = sim->n = n;
	for (size_t i = 0; i < n && !r.br.bad; i++) {
		size_t node = get_index(&r, n, "node");
		const unsigned char *d;

		if (r.br.bad || node == SIZE_MAX || seen[node]) {
			r.br.bad = r.br.bad ? r.br.bad : "node twice or none";
			break;
		}
		seen[node] = true;
		out->order[i] = node;
		out->mods[node].path = get_str(&r, "path");
		out->mods[node].name = get_str(&r, "name");
		d = kp_br_take(&r.br, KP_SIM_IFACE_LEN, "interface digest");
		if (d)
			memcpy(out->mods[node].iface, d, KP_SIM_IFACE_LEN);
		if (!r.br.bad && (!out->mods[node].path || !out->mods[node].name))
			r.br.bad = "path or name";
		sim->v[node].node = node;
		get_verdict(&r, &sim->v[node], n);
		get_reads(&r, &sim->rec[node], &sim->v[node], n, sim->nreads);
	}
	if (!r.br.bad && sim->nreads && !(sim->reads = calloc(sim->nreads, sizeof(*sim->reads))))
		r.br.bad = "out of memory";
	sim->creads = sim->nreads;
	for (size_t i = 0; i < sim->nreads && !r.br.bad; i++) {
		sim->reads[i] = kp_br_get32(&r.br, "pool");
		if (!r.br.bad && sim->reads[i] >= n)
			r.br.bad = "pool entry past the modules";
	}
	if (!r.br.bad && r.br.off != len)
		r.br.bad = "bytes after the end";
	free(seen);
	if (r.br.bad) {
		kp_sim_stored_release(out);
		return kp_err_set(err, "stored simulation: %s", r.br.bad);
	}
	return 0;
}

void kp_sim_stored_release(struct kp_sim_stored *s)
{
	free(s->order);
	free(s->mods);
	free(s->sim.v);
	free(s->sim.rec);
	free(s->sim.reads);
	kp_arena_release(&s->arena);
	memset(s, 0, sizeof(*s));
}
