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

/* Reading: @bad set on the first thing out of bounds; every later read gives zeros. */
struct rbuf {
	const unsigned char *p;
	size_t len, off;
	struct kp_arena *arena;
	const char *bad;
};

static const unsigned char *take(struct rbuf *r, size_t n, const char *what)
{
	const unsigned char *q;

	if (r->bad)
		return NULL;
	if (r->len - r->off < n) {
		r->bad = what;
		return NULL;
	}
	q = r->p + r->off;
	r->off += n;
	return q;
}

static unsigned get8(struct rbuf *r, const char *what)
{
	const unsigned char *q = take(r, 1, what);

	return q ? *q : 0;
}

static uint32_t get32(struct rbuf *r, const char *what)
{
	const unsigned char *q = take(r, 4, what);

	return q ? kp_load32(q, false) : 0;
}

static uint64_t get64(struct rbuf *r, const char *what)
{
	const unsigned char *q = take(r, 8, what);

	return q ? kp_load64(q, false) : 0;
}

/* A count of items each at least @min bytes long: no more than the bytes left allow. */
static size_t get_count(struct rbuf *r, size_t min, const char *what)
{
	uint32_t n = get32(r, what);

	if (!r->bad && (size_t)n > (r->len - r->off) / min) {
		r->bad = what;
		return 0;
	}
	return r->bad ? 0 : n;
}

/* An index below @n, or SIZE_MAX for none. */
static size_t get_index(struct rbuf *r, size_t n, const char *what)
{
	uint32_t v = get32(r, what);

	if (v == NONE)
		return SIZE_MAX;
	if (v >= n && !r->bad)
		r->bad = what;
	return r->bad ? SIZE_MAX : v;
}

/* A string into the arena (NULL for none); no NUL inside. */
static char *get_str(struct rbuf *r, const char *what)
{
	uint32_t n = get32(r, what);
	const unsigned char *q;
	char *s;

	if (r->bad || n == NONE)
		return NULL;
	q = take(r, n, what);
	if (!q)
		return NULL;
	if (memchr(q, '\0', n)) {
		r->bad = what;
		return NULL;
	}
	s = kp_arena_strndup(r->arena, (const char *)q, n);
	if (!s)
		r->bad = "out of memory";
	return s;
}

static void *get_array(struct rbuf *r, size_t n, size_t size)
{
	void *a;

	if (r->bad || !n)
		return NULL;
	a = kp_arena_alloc(r->arena, n * size);
	if (!a)
		r->bad = "out of memory";
	else
		memset(a, 0, n * size);
	return a;
}

static void get_verdict(struct rbuf *r, struct kp_verdict *v, size_t n)
{
	unsigned flags = get8(r, "verdict flags");

	v->attempted = flags & 1;
	v->loads = flags & 2;
	v->hangs = flags & 4;
	v->holds_module_mutex = flags & 8;
	v->left_unformed = flags & 16;
	if (flags & ~31u)
		r->bad = r->bad ? r->bad : "verdict flags";
	v->err = (int)get32(r, "errno");
	v->taints = (unsigned long)get64(r, "taints");
	v->global_added = (unsigned long)get64(r, "global taint added");
	v->global_after = (unsigned long)get64(r, "global taint after");
	v->p_reason = (enum kp_p_reason)get8(r, "P reason");
	if (v->p_reason > KP_P_PRELOADED)
		r->bad = r->bad ? r->bad : "P reason";
	v->p_from = get_index(r, n, "P owner");
	v->p_symbol = get_str(r, "P symbol");
	v->failed_dep = get_index(r, n, "failed dependency");
	v->load_seq = get32(r, "load sequence");
	v->stalled_by = get_index(r, n, "stalled by");
	/* the verdict of the load that stalled this one: a blocked or not-run load's only */
	if (!r->bad &&
	    (v->stalled_by != SIZE_MAX) != (v->err == KP_ERR_BLOCKED || v->err == KP_ERR_NOT_RUN))
		r->bad = "stalled by";
	v->nmessages = get_count(r, 4, "messages");
	v->messages = get_array(r, v->nmessages, sizeof(*v->messages));
	for (size_t i = 0; i < v->nmessages && !r->bad; i++) {
		v->messages[i] = get_str(r, "message");
		if (!v->messages[i])
			r->bad = r->bad ? r->bad : "message";
	}
	v->nfindings = get_count(r, 15, "findings");
	v->findings = get_array(r, v->nfindings, sizeof(*v->findings));
	for (size_t i = 0; i < v->nfindings && !r->bad; i++) {
		struct kp_finding *f = &v->findings[i];
		unsigned waived;

		f->id = get_str(r, "finding id");
		f->severity = (enum kp_severity)get8(r, "finding severity");
		f->consequence = (enum kp_consequence)get8(r, "finding consequence");
		f->message = get_str(r, "finding message");
		f->symbol = get_str(r, "finding symbol");
		waived = get8(r, "finding waived");
		f->waived = waived;
		if (!r->bad && (!f->id || f->severity > KP_SEV_ERROR ||
				f->consequence > KP_CONS_WARN || waived > 1))
			r->bad = "finding";
	}
	v->nsymget = get_count(r, 22, "symbol_get results");
	v->symget = get_array(r, v->nsymget, sizeof(*v->symget));
	for (size_t i = 0; i < v->nsymget && !r->bad; i++) {
		struct kp_symget_result *s = &v->symget[i];
		unsigned sf;

		s->symbol = get_str(r, "symbol_get symbol");
		sf = get8(r, "symbol_get flags");
		s->ok = sf & 1;
		s->gpl_only = sf & 2;
		s->method_heuristic = sf & 4;
		s->dynamic = sf & 8;
		s->kernel_logs = sf & 16;
		s->reason = get_str(r, "symbol_get reason");
		s->owner = get_str(r, "symbol_get owner");
		s->when = (enum kp_symget_when)get8(r, "symbol_get when");
		s->path = get_str(r, "symbol_get path");
		s->function = get_str(r, "symbol_get function");
		if (!r->bad && ((sf & ~31u) || s->when > KP_SYMGET_WHEN_CALLED))
			r->bad = "symbol_get result";
	}
}

/* A stall (what an oops left of the loader): a kind, and the verdict of the load behind it. */
static void get_stall(struct rbuf *r, struct kp_stall *st, size_t n, const char *what)
{
	unsigned kind = get8(r, what);

	st->by = get_index(r, n, what);
	st->kind = (enum kp_stall_kind)kind;
	if (!r->bad && (kind > KP_STALL_HUNG || (kind != KP_STALL_NONE && st->by == SIZE_MAX)))
		r->bad = what;
}

static void get_reads(struct rbuf *r, struct kp_sim_reads *rd, const struct kp_verdict *v, size_t n,
		      size_t npool)
{
	unsigned nb;

	rd->taint_before = (unsigned long)get64(r, "taint before");
	rd->taint_tested = (unsigned long)get64(r, "taint tested");
	rd->taint_set = (unsigned long)get64(r, "taint set");
	rd->taint_late = (unsigned long)get64(r, "taint tested late");
	rd->once_before = get32(r, "once flags before");
	rd->once_read = get32(r, "once flags read");
	rd->once_set = get32(r, "once flags set");
	nb = get8(r, "name bits");
	rd->name_read = nb & 1;
	rd->name_live = nb & 2;
	rd->name_unformed = nb & 4;
	rd->stall_asked = get8(r, "stall kinds asked");
	get_stall(r, &rd->stall_before, n, "stall before");
	get_stall(r, &rd->stall_set, n, "stall set");
	rd->verdicts = get32(r, "verdicts read");
	rd->nverdicts = get32(r, "verdicts read");
	rd->late = get32(r, "verdicts read late");
	rd->nlate = get32(r, "verdicts read late");
	rd->nmessages_load = get32(r, "load messages");
	rd->nfindings_load = get32(r, "load findings");
	if (r->bad)
		return;
	if ((nb & ~7u) || ((rd->once_before | rd->once_read | rd->once_set) >> KP_ONCE_N) ||
	    (rd->stall_asked >> (KP_STALL_HUNG + 1)))
		r->bad = "read record flags";
	else if (rd->nverdicts > npool || rd->verdicts > npool - rd->nverdicts ||
		 rd->nlate > npool || rd->late > npool - rd->nlate)
		r->bad = "read range past the pool";
	else if (rd->nmessages_load > v->nmessages || rd->nfindings_load > v->nfindings)
		r->bad = "load messages or findings past the verdict's";
}

int kp_sim_store_decode(const unsigned char *p, size_t len, struct kp_sim_stored *out,
			struct kp_err *err)
{
	struct rbuf r = { .p = p, .len = len, .arena = &out->arena };
	struct kp_simulation *sim = &out->sim;
	const unsigned char *magic;
	bool *seen = NULL;
	size_t n;

	memset(out, 0, sizeof(*out));
	magic = take(&r, 8, "header");
	if (magic && memcmp(magic, MAGIC, 8))
		r.bad = "magic";
	/* a module takes at least 180 bytes, a pool entry 4 */
	n = get_count(&r, 180, "module count");
	sim->global_taint = (unsigned long)get64(&r, "global taint");
	sim->nreads = get_count(&r, 4, "pool length");
	if (!r.bad && n) {
		out->order = calloc(n, sizeof(*out->order));
		out->mods = calloc(n, sizeof(*out->mods));
		sim->v = calloc(n, sizeof(*sim->v));
		sim->rec = calloc(n, sizeof(*sim->rec));
		seen = calloc(n, sizeof(*seen));
		if (!out->order || !out->mods || !sim->v || !sim->rec || !seen)
			r.bad = "out of memory";
	}
	out->n = sim->n = n;
	for (size_t i = 0; i < n && !r.bad; i++) {
		size_t node = get_index(&r, n, "node");
		const unsigned char *d;

		if (r.bad || node == SIZE_MAX || seen[node]) {
			r.bad = r.bad ? r.bad : "node twice or none";
			break;
		}
		seen[node] = true;
		out->order[i] = node;
		out->mods[node].path = get_str(&r, "path");
		out->mods[node].name = get_str(&r, "name");
		d = take(&r, KP_SIM_IFACE_LEN, "interface digest");
		if (d)
			memcpy(out->mods[node].iface, d, KP_SIM_IFACE_LEN);
		if (!r.bad && (!out->mods[node].path || !out->mods[node].name))
			r.bad = "path or name";
		sim->v[node].node = node;
		get_verdict(&r, &sim->v[node], n);
		get_reads(&r, &sim->rec[node], &sim->v[node], n, sim->nreads);
	}
	if (!r.bad && sim->nreads && !(sim->reads = calloc(sim->nreads, sizeof(*sim->reads))))
		r.bad = "out of memory";
	sim->creads = sim->nreads;
	for (size_t i = 0; i < sim->nreads && !r.bad; i++) {
		sim->reads[i] = get32(&r, "pool");
		if (!r.bad && sim->reads[i] >= n)
			r.bad = "pool entry past the modules";
	}
	if (!r.bad && r.off != len)
		r.bad = "bytes after the end";
	free(seen);
	if (r.bad) {
		kp_sim_stored_release(out);
		return kp_err_set(err, "stored simulation: %s", r.bad);
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
